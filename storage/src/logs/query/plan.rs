//! The planner: which index range a filter scans (the smallest candidate by its hour
//! counters) and which filters are left to check per row.

use super::filter::{LogFilter, TYPE};
use super::tables::Tables;
use crate::Result;
use crate::logs::{LOG_CONSUME, keys};

/// The index range a query scans.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// Filter key, or `None` for the time index.
    pub key: Option<String>,
    /// The range holds exactly the matching rows (no row checks needed).
    pub covers_all: bool,
    /// Rows in the overlapping hours (an upper bound of the range).
    pub estimate: u64,
    /// Keys of the filters the range does not cover, checked per candidate (most selective
    /// first).
    pub others: Vec<String>,
    /// The range covers every filter but "type consume": its consume rows are counted exactly
    /// as the range minus its typed ranges.
    pub consume_by_subtraction: bool,
}

impl Tables {
    pub(super) fn plan(&self, f: &LogFilter) -> Result<Plan> {
        let lo = f.start.map_or(i64::MIN, keys::hour);
        let hi = f
            .end
            .map_or(i64::MAX, |e| keys::hour(e).saturating_add(keys::HOUR));
        let dims = f.dims();
        let mut sized = Vec::new();
        for (key, covers) in f.candidates() {
            let n = u64::try_from(self.counters(&key, lo, hi)?.rows).unwrap_or(0);
            sized.push((key, covers, n));
        }
        let best = sized
            .iter()
            .min_by_key(|(_, covers, n)| (*n, u8::BITS - covers.count_ones()));
        Ok(match best {
            Some((key, covers, estimate)) => {
                let mut others: Vec<&(String, u8, u64)> = sized
                    .iter()
                    .filter(|(_, bits, _)| bits.count_ones() == 1 && bits & covers == 0)
                    .collect();
                others.sort_by_key(|(_, _, n)| *n);
                Plan {
                    key: Some(key.clone()),
                    covers_all: *covers == dims,
                    estimate: *estimate,
                    others: others.into_iter().map(|(k, _, _)| k.clone()).collect(),
                    consume_by_subtraction: f.log_type() == Some(LOG_CONSUME)
                        && *covers == dims & !TYPE,
                }
            }
            None => Plan {
                key: None,
                covers_all: true,
                estimate: u64::try_from(self.counters(keys::ALL, lo, hi)?.rows).unwrap_or(0),
                others: Vec::new(),
                consume_by_subtraction: false,
            },
        })
    }
}
