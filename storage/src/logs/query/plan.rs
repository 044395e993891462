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
    /// Keys checked per candidate for the filters the range does not cover, with their rows in
    /// the range's hours (or a lower bound, the rows of its sealed hours, for a key too big to
    /// be chosen), most selective first; together they cover every dimension the range leaves
    /// out.
    pub others: Vec<(String, u64)>,
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
        // Each key's rows in the sealed hours first (one range of the key-major counters). A
        // key whose sealed rows alone exceed the smallest complete size so far cannot be chosen:
        // its open hours' postings are not summed, and that lower bound only orders the checks.
        let mut sized = Vec::new();
        for (key, covers) in f.candidates() {
            let n = u64::try_from(self.sealed_rows(&key, lo, hi)?).unwrap_or(0);
            sized.push((key, covers, n));
        }
        let mut order: Vec<usize> = (0..sized.len()).collect();
        order.sort_by_key(|&i| sized[i].2);
        let mut smallest = u64::MAX;
        for i in order {
            if sized[i].2 > smallest {
                continue;
            }
            let n = u64::try_from(self.counters(&sized[i].0, lo, hi)?.rows).unwrap_or(0);
            sized[i].2 = n;
            smallest = smallest.min(n);
        }
        let best = sized
            .iter()
            .min_by_key(|(_, covers, n)| (*n, u8::BITS - covers.count_ones()));
        Ok(match best {
            Some((key, covers, estimate)) => {
                let others = check_keys(&sized, *covers, dims);
                Plan {
                    key: Some(key.clone()),
                    covers_all: *covers == dims,
                    estimate: *estimate,
                    others,
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

/// The keys that check the dimensions `covers` leaves out of `dims`: for each such dimension
/// the smallest candidate key holding it (a composite key too: a row in the chosen range
/// already matches the dimensions it covers, so being posted under a key means matching every
/// dimension of the key), each key once, most selective first.
fn check_keys(sized: &[(String, u8, u64)], covers: u8, dims: u8) -> Vec<(String, u64)> {
    let mut picked: Vec<&(String, u8, u64)> = Vec::new();
    let mut left = dims & !covers;
    while left != 0 {
        let bit = left & left.wrapping_neg();
        let Some(best) = sized
            .iter()
            .filter(|(_, bits, _)| bits & bit != 0)
            .min_by_key(|(_, bits, n)| (*n, bits.count_ones()))
        else {
            break;
        };
        left &= !best.1;
        if !picked.iter().any(|p| p.0 == best.0) {
            picked.push(best);
        }
    }
    picked.sort_by_key(|(_, _, n)| *n);
    picked
        .into_iter()
        .map(|(k, _, n)| (k.clone(), *n))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::check_keys;
    use crate::logs::query::filter::{CHANNEL, GROUP, MODEL, TOKEN, USER};

    fn sized(keys: &[(&str, u8, u64)]) -> Vec<(String, u8, u64)> {
        keys.iter()
            .map(|(k, b, n)| ((*k).to_owned(), *b, *n))
            .collect()
    }

    #[test]
    fn the_smallest_key_holding_each_left_dimension_checks_it() {
        // A user's model + token + group, scanned on user + model: token and group are
        // checked on the user's composite keys, far smaller than the single ones.
        let keys = sized(&[
            ("u:3", USER, 500),
            ("um:3:m", USER | MODEL, 40),
            ("uk:3:k", USER | TOKEN, 160),
            ("ug:3:g", USER | GROUP, 400),
            ("m:m", MODEL, 700),
            ("k:k", TOKEN, 3_000),
            ("g:g", GROUP, 8_000),
        ]);
        let dims = USER | MODEL | TOKEN | GROUP;
        let want = vec![("uk:3:k".to_owned(), 160), ("ug:3:g".to_owned(), 400)];
        assert_eq!(check_keys(&keys, USER | MODEL, dims), want);
        // Nothing left: nothing to check.
        assert!(check_keys(&keys, dims, dims).is_empty());
    }

    #[test]
    fn a_composite_key_checks_both_its_dimensions_once() {
        // Scanned on the user: model + channel is one composite key, smaller than either.
        let keys = sized(&[
            ("u:3", USER, 10),
            ("m:m", MODEL, 700),
            ("c:7", CHANNEL, 500),
            ("mc:7:m", MODEL | CHANNEL, 30),
        ]);
        let dims = USER | MODEL | CHANNEL;
        assert_eq!(
            check_keys(&keys, USER, dims),
            vec![("mc:7:m".to_owned(), 30)]
        );
        // A smaller single key for one dimension still leaves the composite for the other.
        let keys = sized(&[
            ("u:3", USER, 10),
            ("m:m", MODEL, 20),
            ("c:7", CHANNEL, 500),
            ("mc:7:m", MODEL | CHANNEL, 30),
        ]);
        assert_eq!(
            check_keys(&keys, USER, dims),
            vec![("m:m".to_owned(), 20), ("mc:7:m".to_owned(), 30)]
        );
    }
}
