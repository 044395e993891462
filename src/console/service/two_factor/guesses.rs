//! The per-account limit on second-factor guesses. A 6-digit code is a million guesses; the
//! per-IP limiter alone lets an attacker who holds the password spread them over many
//! addresses. So every code checked for an account — the sign-in's second step, POST
//! /api/verify, turning two-factor off, new recovery codes, a backup token — goes through one
//! counter per account:
//!
//! - an attempt counts as wrong the moment it is admitted (so concurrent guesses cannot slip
//!   in before the first is counted), and a right code clears the account's record;
//! - after [`FREE_WRONG`] consecutive wrong codes the next attempt must wait, 1 s after the
//!   fifth, doubling with each further wrong code up to [`MAX_DELAY_SECS`]; an attempt made
//!   during the wait is refused unchecked and still counts toward the hour;
//! - [`LOCK_AFTER`] wrong attempts within an hour lock the account's second factor for
//!   [`LOCK_SECS`]: every code is refused, the right one too.
//!
//! It does not lock what is not a code check: a password reset by mail and an admin's reset
//! of the user's two-factor still work. The records live in memory only: a restart resets
//! them (the README says so). Times come from the server's [`Clock`], which tests move.

use std::collections::VecDeque;
use std::sync::Arc;

use dashmap::DashMap;
use tollgate_storage::UserId;

use crate::clock::Clock;
use crate::error::ConsoleError;

/// Consecutive wrong codes allowed before the next attempt has to wait.
pub const FREE_WRONG: u32 = 5;
/// The longest wait between attempts, in seconds (15 minutes).
pub const MAX_DELAY_SECS: i64 = 900;
/// Wrong attempts within [`WINDOW_SECS`] that lock the account's second factor.
pub const LOCK_AFTER: usize = 20;
/// The window those attempts are counted in, in seconds.
pub const WINDOW_SECS: i64 = 3_600;
/// How long a lock lasts, in seconds.
pub const LOCK_SECS: i64 = 3_600;
/// Records are pruned of idle ones once the map holds this many.
const PRUNE_AT: usize = 1_024;

/// One account's recent wrong attempts.
#[derive(Debug, Default, Clone)]
struct Record {
    /// Unix seconds of the wrong attempts of the last [`WINDOW_SECS`], oldest first.
    wrong: VecDeque<i64>,
    /// Wrong codes since the last right one (attempts refused during a wait not included).
    consecutive: u32,
    /// No code is checked before this (unix seconds).
    next_at: i64,
    /// Every code is refused before this (unix seconds; 0 when not locked).
    locked_until: i64,
}

impl Record {
    fn forget_before(&mut self, now: i64) {
        while self
            .wrong
            .front()
            .is_some_and(|t| *t <= now.saturating_sub(WINDOW_SECS))
        {
            self.wrong.pop_front();
        }
    }

    /// Counts one wrong attempt at `now`; locks at the [`LOCK_AFTER`]th of the hour.
    fn count(&mut self, now: i64) {
        self.forget_before(now);
        self.wrong.push_back(now);
        if self.wrong.len() >= LOCK_AFTER {
            self.locked_until = now.saturating_add(LOCK_SECS);
            self.wrong.clear();
        }
    }

    fn idle(&self, now: i64) -> bool {
        self.locked_until <= now
            && self.next_at <= now
            && self
                .wrong
                .back()
                .is_none_or(|t| *t <= now.saturating_sub(WINDOW_SECS))
    }
}

/// The wait after `consecutive` wrong codes, in seconds (0 before [`FREE_WRONG`]).
pub fn delay_after(consecutive: u32) -> i64 {
    let Some(doublings) = consecutive.checked_sub(FREE_WRONG) else {
        return 0;
    };
    1_i64
        .checked_shl(doublings)
        .filter(|d| *d > 0)
        .map_or(MAX_DELAY_SECS, |d| d.min(MAX_DELAY_SECS))
}

/// The refusal of an attempt on a locked account.
fn locked(until: i64, now: i64) -> ConsoleError {
    ConsoleError::TwoFactorLocked {
        minutes: until.saturating_sub(now).saturating_add(59) / 60,
    }
}

/// Per-account second-factor attempts (cheap to clone; one per server).
#[derive(Clone, Default)]
pub struct GuessLimiter {
    /// Account → its recent wrong attempts; written by [`GuessLimiter::admit`] and
    /// [`GuessLimiter::passed`] only.
    accounts: Arc<DashMap<UserId, Record>>,
    /// The clock the waits and the lock are measured by.
    clock: Clock,
}

impl GuessLimiter {
    /// A limiter measuring time by `clock`.
    pub fn new(clock: Clock) -> GuessLimiter {
        GuessLimiter {
            accounts: Arc::default(),
            clock,
        }
    }

    /// Admits one code check for `user`, counting it as wrong until [`GuessLimiter::passed`]
    /// says otherwise; refuses it (counted) while the account waits or is locked.
    pub fn admit(&self, user: UserId) -> Result<(), ConsoleError> {
        let now = self.clock.now_unix();
        if self.accounts.len() >= PRUNE_AT {
            self.accounts.retain(|_, r| !r.idle(now));
        }
        let mut record = self.accounts.entry(user).or_default();
        if record.locked_until > now {
            return Err(locked(record.locked_until, now));
        }
        if record.locked_until != 0 {
            *record = Record::default();
        }
        if record.next_at > now {
            record.count(now);
            if record.locked_until > now {
                return Err(locked(record.locked_until, now));
            }
            return Err(ConsoleError::TwoFactorWait {
                seconds: record.next_at.saturating_sub(now),
            });
        }
        record.count(now);
        record.consecutive = record.consecutive.saturating_add(1);
        record.next_at = now.saturating_add(delay_after(record.consecutive));
        Ok(())
    }

    /// The admitted code was right: the account's record is cleared.
    pub fn passed(&self, user: UserId) {
        self.accounts.remove(&user);
    }

    /// Whether `user`'s second factor is locked now (for the answer to a wrong code).
    pub fn lock_of(&self, user: UserId) -> Option<ConsoleError> {
        let now = self.clock.now_unix();
        let record = self.accounts.get(&user)?;
        (record.locked_until > now).then(|| locked(record.locked_until, now))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wait_doubles_after_five_wrong_codes_up_to_fifteen_minutes() {
        assert_eq!(delay_after(4), 0);
        assert_eq!(delay_after(5), 1);
        assert_eq!(delay_after(6), 2);
        assert_eq!(delay_after(14), 512);
        assert_eq!(delay_after(15), MAX_DELAY_SECS);
        assert_eq!(delay_after(200), MAX_DELAY_SECS);
    }

    #[test]
    fn wrong_codes_make_the_next_wait_and_twenty_lock_for_an_hour() {
        let clock = Clock::stopped();
        let limiter = GuessLimiter::new(clock.clone());
        let user = UserId(3);
        for _ in 0..FREE_WRONG {
            assert!(limiter.admit(user).is_ok());
        }
        assert!(matches!(
            limiter.admit(user),
            Err(ConsoleError::TwoFactorWait { seconds: 1 })
        ));
        clock.advance(2);
        assert!(limiter.admit(user).is_ok(), "the wait is over");
        let mut refused = 0;
        for _ in 0..20 {
            if limiter.admit(user).is_err() {
                refused += 1;
            }
        }
        assert_eq!(refused, 20);
        assert!(matches!(
            limiter.admit(user),
            Err(ConsoleError::TwoFactorLocked { minutes: 60 })
        ));
        assert!(limiter.lock_of(user).is_some());
        assert!(limiter.admit(UserId(4)).is_ok(), "another account");
        clock.advance(LOCK_SECS);
        assert!(limiter.admit(user).is_ok(), "the lock is over");
        limiter.passed(user);
        assert!(limiter.lock_of(user).is_none());
    }

    #[test]
    fn a_right_code_clears_the_count() {
        let limiter = GuessLimiter::default();
        for _ in 0..FREE_WRONG - 1 {
            assert!(limiter.admit(UserId(1)).is_ok());
        }
        limiter.passed(UserId(1));
        for _ in 0..FREE_WRONG {
            assert!(limiter.admit(UserId(1)).is_ok());
        }
    }
}
