//! A key's range read newest first: the time index, or the key's postings an hour at a time
//! ([`HourWalk`]: the hour's postings read and ordered by (created_at, id) together).

use super::tables::Tables;
use crate::Result;
use crate::logs::keys;
use crate::logs::postings::View;

pub(super) type Ids<'a> = Box<dyn Iterator<Item = Result<(i64, i64)>> + 'a>;

/// The rows of one key's postings, newest first, an hour at a time.
struct HourWalk<'a> {
    t: &'a Tables,
    key: String,
    start: i64,
    end: i64,
    /// The next hour to read (descending), until `low`.
    hour: i64,
    low: i64,
    /// The hour read, ascending (popped from the end).
    buf: Vec<(i64, i64)>,
    done: bool,
}

impl Iterator for HourWalk<'_> {
    type Item = Result<(i64, i64)>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(x) = self.buf.pop() {
                return Some(Ok(x));
            }
            if self.done || self.hour < self.low {
                return None;
            }
            let hour = self.hour;
            match self.hour.checked_sub(keys::HOUR) {
                Some(h) => self.hour = h,
                None => self.done = true,
            }
            if let Err(e) = self.load(hour) {
                self.done = true;
                return Some(Err(e));
            }
        }
    }
}

impl HourWalk<'_> {
    fn load(&mut self, hour: i64) -> Result<()> {
        let key = self.key.as_str();
        for r in self
            .t
            .postings
            .range((hour, key, i64::MIN)..=(hour, key, i64::MAX))?
        {
            let (k, v) = r?;
            let first = k.value().2;
            let p = View::of(v.value())?;
            self.buf.extend(
                p.entries(hour, first)
                    .filter(|(ts, _)| *ts >= self.start && *ts <= self.end),
            );
        }
        self.buf.sort_unstable();
        Ok(())
    }
}

impl Tables {
    /// (created_at, id) of the range, newest first.
    pub(super) fn ids_desc(
        &self,
        key: Option<&str>,
        start: Option<i64>,
        end: Option<i64>,
    ) -> Result<Ids<'_>> {
        let (s, e) = (start.unwrap_or(i64::MIN), end.unwrap_or(i64::MAX));
        if s > e {
            return Ok(Box::new(std::iter::empty()));
        }
        Ok(match key {
            None => Box::new(
                self.by_time
                    .range((s, i64::MIN)..=(e, i64::MAX))?
                    .rev()
                    .map(|r| Ok(r?.0.value())),
            ),
            Some(key) => {
                let Some((oldest, newest)) = self.span else {
                    return Ok(Box::new(std::iter::empty()));
                };
                let (s, e) = (s.max(oldest), e.min(newest));
                if s > e {
                    return Ok(Box::new(std::iter::empty()));
                }
                Box::new(HourWalk {
                    t: self,
                    key: key.to_owned(),
                    start: s,
                    end: e,
                    hour: keys::hour(e),
                    low: keys::hour(s),
                    buf: Vec::new(),
                    done: false,
                })
            }
        })
    }
}
