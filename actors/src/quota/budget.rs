//! Budget windows in a ledger (pure): an owner's (a user's or a key's) budgets and what it spent
//! per quarter hour, loaded from storage with the ledger ([`tollgate_storage::budgets`]) and
//! kept up to date by every settlement, so admission decides a window without touching the
//! database. Calendar windows begin at midnight, on Monday and on the first of the month in the
//! `BudgetTimeZone`; rolling windows are the last 24 hours, 7 days or 30 days, counted in
//! quarter hours.

use std::collections::BTreeMap;

use jiff::tz::TimeZone;
use jiff::{Timestamp, ToSpan, civil::Date};
use tollgate_storage::budgets::{BUCKET_SECS, Budgets, KEEP_SECS, Period, Window, bucket_of};

/// What a window stands at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WindowState {
    /// The window.
    pub window: Window,
    /// Its first second (Unix).
    pub start: i64,
    /// When it begins again (calendar) or when its oldest spend leaves it (rolling), Unix
    /// seconds.
    pub resets_at: i64,
    /// Units charged in it so far (running reservations not included).
    pub spent: i64,
}

impl WindowState {
    /// The window's name in messages: `daily`, `weekly`, `monthly`, or `rolling 24-hour`,
    /// `rolling 7-day`, `rolling 30-day`.
    pub fn name(&self) -> &'static str {
        match (self.window.period, self.window.rolling) {
            (Period::Day, false) => "daily",
            (Period::Week, false) => "weekly",
            (Period::Month, false) => "monthly",
            (Period::Day, true) => "rolling 24-hour",
            (Period::Week, true) => "rolling 7-day",
            (Period::Month, true) => "rolling 30-day",
        }
    }

    /// When it resets, as RFC 3339 text in UTC.
    pub fn resets_at_text(&self) -> String {
        Timestamp::from_second(self.resets_at)
            .map_or_else(|_| self.resets_at.to_string(), |t| t.to_string())
    }

    /// What may still be spent in it, less `reserved` (may be negative after an overshoot).
    pub fn left(&self, reserved: i64) -> i64 {
        self.window
            .limit
            .saturating_sub(self.spent)
            .saturating_sub(reserved)
    }
}

/// An owner's budgets and spend.
#[derive(Debug, Clone, Default)]
pub struct BudgetBook {
    budgets: Budgets,
    /// Quarter hour's first second → units charged in it.
    spend: BTreeMap<i64, i64>,
}

/// Seconds a rolling window covers.
fn rolling_secs(period: Period) -> i64 {
    match period {
        Period::Day => 86_400,
        Period::Week => 7 * 86_400,
        Period::Month => 30 * 86_400,
    }
}

/// The first second of `date` in `zone` (its first moment when midnight is skipped).
fn day_start(date: Date, zone: &TimeZone) -> Option<i64> {
    let zoned = date.to_zoned(zone.clone()).ok()?;
    Some(zoned.start_of_day().ok()?.timestamp().as_second())
}

/// The calendar window of `period` holding `now` in `zone`: (start, next start).
fn calendar_bounds(period: Period, now: i64, zone: &TimeZone) -> Option<(i64, i64)> {
    let today = Timestamp::from_second(now)
        .ok()?
        .to_zoned(zone.clone())
        .date();
    let (first, next) = match period {
        Period::Day => (today, today.checked_add(1.day()).ok()?),
        Period::Week => {
            let back = i64::from(today.weekday().to_monday_zero_offset());
            let monday = today.checked_sub(back.days()).ok()?;
            (monday, monday.checked_add(7.days()).ok()?)
        }
        Period::Month => {
            let first = today.first_of_month();
            (first, first.checked_add(1.month()).ok()?)
        }
    };
    Some((day_start(first, zone)?, day_start(next, zone)?))
}

impl BudgetBook {
    /// A book of `budgets` with the stored quarter hours `spend`.
    pub fn new(budgets: Budgets, spend: impl IntoIterator<Item = (i64, i64)>) -> BudgetBook {
        BudgetBook {
            budgets,
            spend: spend.into_iter().collect(),
        }
    }

    /// The budgets.
    pub fn budgets(&self) -> &Budgets {
        &self.budgets
    }

    /// Replaces the budgets (the spend stays).
    pub fn set_budgets(&mut self, budgets: Budgets) {
        self.budgets = budgets;
    }

    /// Counts `charged` units at `at`, and forgets quarter hours older than any window.
    pub fn add(&mut self, at: i64, charged: i64) {
        if charged == 0 {
            return;
        }
        let bucket = bucket_of(at);
        let sum = self.spend.entry(bucket).or_default();
        *sum = sum.saturating_add(charged);
        let cutoff = bucket.saturating_sub(KEEP_SECS);
        if self
            .spend
            .first_key_value()
            .is_some_and(|(k, _)| *k < cutoff)
        {
            self.spend = self.spend.split_off(&cutoff);
        }
    }

    /// Takes a refunded charge of `amount` made at `at` back out of its quarter hour (never
    /// below zero; a quarter hour already forgotten is left alone).
    pub fn remove(&mut self, at: i64, amount: i64) {
        if let Some(sum) = self.spend.get_mut(&bucket_of(at)) {
            *sum = sum.saturating_sub(amount.max(0)).max(0);
        }
    }

    fn spent_since(&self, start: i64) -> i64 {
        self.spend
            .range(start..)
            .fold(0i64, |a, (_, v)| a.saturating_add(*v))
    }

    /// Every window in force at `now`, with its bounds and spend.
    pub fn windows(&self, now: i64, zone: &TimeZone) -> Vec<WindowState> {
        self.budgets
            .active(now)
            .iter()
            .filter_map(|w| self.state(*w, now, zone))
            .collect()
    }

    fn state(&self, window: Window, now: i64, zone: &TimeZone) -> Option<WindowState> {
        if window.rolling {
            let len = rolling_secs(window.period);
            let start = bucket_of(now)
                .saturating_add(BUCKET_SECS)
                .saturating_sub(len);
            let oldest = self
                .spend
                .range(start..)
                .find(|(_, v)| **v != 0)
                .map_or(now, |(k, _)| k.saturating_add(len));
            Some(WindowState {
                window,
                start,
                resets_at: oldest,
                spent: self.spent_since(start),
            })
        } else {
            let (start, resets_at) = calendar_bounds(window.period, now, zone)?;
            Some(WindowState {
                window,
                start,
                resets_at,
                spent: self.spent_since(start),
            })
        }
    }

    /// The first window with less than `needed` left once `reserved` is held (or nothing left
    /// at all), if any.
    pub fn refusing(
        &self,
        now: i64,
        zone: &TimeZone,
        reserved: i64,
        needed: i64,
    ) -> Option<WindowState> {
        self.windows(now, zone).into_iter().find(|w| {
            let left = w.left(reserved);
            left <= 0 || left < needed
        })
    }

    /// The least left in any window at `now` once `reserved` is held (`None`: no window).
    pub fn least_left(&self, now: i64, zone: &TimeZone, reserved: i64) -> Option<i64> {
        self.windows(now, zone)
            .iter()
            .map(|w| w.left(reserved))
            .min()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tollgate_storage::budgets::Override;

    // 2026-11-28T10:00:00Z, a Saturday.
    const NOW: i64 = 1_795_860_000;

    fn window(period: Period, rolling: bool, limit: i64) -> Window {
        Window {
            period,
            rolling,
            limit,
        }
    }

    fn book(windows: Vec<Window>) -> BudgetBook {
        BudgetBook::new(
            Budgets {
                windows,
                override_: None,
            },
            [],
        )
    }

    #[test]
    fn calendar_windows_begin_at_midnight_monday_and_the_first_in_the_zone() {
        let utc = TimeZone::UTC;
        let day = calendar_bounds(Period::Day, NOW, &utc);
        assert_eq!(day, Some((NOW - 10 * 3600, NOW + 14 * 3600)));
        let week = calendar_bounds(Period::Week, NOW, &utc).map(|b| b.0);
        assert_eq!(week, Some(NOW - 10 * 3600 - 5 * 86_400));
        let month = calendar_bounds(Period::Month, NOW, &utc);
        assert_eq!(
            month,
            Some((NOW - 10 * 3600 - 27 * 86_400, NOW + 14 * 3600 + 2 * 86_400))
        );
        // Shanghai is UTC+8: its day began at 16:00Z the day before.
        let shanghai = TimeZone::get("Asia/Shanghai").expect("zone");
        let day = calendar_bounds(Period::Day, NOW, &shanghai);
        assert_eq!(day, Some((NOW - 18 * 3600, NOW + 6 * 3600)));
    }

    #[test]
    fn a_window_refuses_once_spend_and_holds_reach_its_limit() {
        let mut b = book(vec![window(Period::Day, false, 100)]);
        b.add(NOW - 11 * 3600, 1_000); // yesterday
        b.add(NOW - 3600, 60);
        assert_eq!(b.refusing(NOW, &TimeZone::UTC, 0, 40), None);
        let refused = b.refusing(NOW, &TimeZone::UTC, 30, 20);
        assert_eq!(
            refused.map(|w| (w.spent, w.resets_at)),
            Some((60, NOW + 14 * 3600))
        );
        // The next day, the window is empty again.
        assert_eq!(b.refusing(NOW + 14 * 3600, &TimeZone::UTC, 0, 100), None);
    }

    #[test]
    fn a_rolling_window_frees_its_oldest_spend_after_its_length() {
        let mut b = book(vec![window(Period::Day, true, 100)]);
        b.add(NOW - 20 * 3600, 100);
        let refused = b.refusing(NOW, &TimeZone::UTC, 0, 1);
        assert_eq!(refused.map(|w| w.resets_at), Some(NOW + 4 * 3600));
        assert_eq!(b.refusing(NOW + 4 * 3600, &TimeZone::UTC, 0, 1), None);
    }

    #[test]
    fn an_override_applies_until_its_expiry() {
        let mut b = BudgetBook::new(
            Budgets {
                windows: vec![window(Period::Day, false, 10)],
                override_: Some(Override {
                    windows: vec![window(Period::Day, false, 1_000)],
                    until: NOW + 60,
                }),
            },
            [],
        );
        b.add(NOW - 60, 500);
        assert_eq!(b.least_left(NOW, &TimeZone::UTC, 0), Some(500));
        assert!(b.refusing(NOW + 60, &TimeZone::UTC, 0, 1).is_some());
    }
}
