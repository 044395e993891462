//! Budgets on the prepaid wallet (P15 item 2): per user and per API key, daily, weekly and
//! monthly windows, each calendar-aligned (in the option `BudgetTimeZone`) or rolling, several
//! at once, and a temporary override that replaces them until it expires ([`Budgets`], stored in
//! [`BUDGETS`]).
//!
//! What was spent is counted per quarter hour ([`BUDGET_SPEND`]) by the log writer, in the
//! transaction that applies the charges ([`add_spend`]), for every user and key whether or not
//! a budget is set yet (a budget set at noon sees the morning's spend). A window's spend is the
//! sum of the quarter hours it covers ([`spend_since`]), read when a ledger is loaded, so a
//! restart never resets a window. Quarter hours older than [`KEEP_SECS`] are removed by the
//! first write of each owner's next quarter hour.

use std::collections::BTreeMap;

use redb::{ReadTransaction, ReadableTable, WriteTransaction};
use serde::{Deserialize, Serialize};

use crate::balance_change::BalanceChange;
use crate::tables::{BUDGET_SPEND, BUDGETS};
use crate::{Result, StorageError, TokenId, UserId, codec};

/// Seconds in one spend bucket (a quarter hour).
pub const BUCKET_SECS: i64 = 15 * 60;

/// How long spend buckets are kept: the longest window (a month, or 31 rolling days) and a
/// margin for time-zone offsets.
pub const KEEP_SECS: i64 = 33 * 24 * 3600;

/// Whose budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Owner {
    /// A user's whole wallet (every key of theirs).
    User(UserId),
    /// One API key.
    Token(TokenId),
}

impl Owner {
    fn key(self) -> (u8, i64) {
        match self {
            Owner::User(u) => (0, u.0),
            Owner::Token(t) => (1, t.0),
        }
    }
}

/// The length of a window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Period {
    /// A day.
    Day,
    /// A week (calendar weeks start on Monday).
    Week,
    /// A month (rolling: 30 days).
    Month,
}

/// One budget window: at most `limit` units spent per `period`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Window {
    /// Its length.
    pub period: Period,
    /// `false`: calendar-aligned (today, this week, this month in `BudgetTimeZone`); `true`:
    /// the last 24 hours, 7 days or 30 days, moving in quarter-hour steps.
    #[serde(default)]
    pub rolling: bool,
    /// Units that may be spent in the window (> 0).
    pub limit: i64,
}

/// Windows that replace the ordinary ones until `until`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Override {
    /// The windows in force meanwhile (none: no budget meanwhile).
    pub windows: Vec<Window>,
    /// Unix seconds at which the override ends.
    pub until: i64,
}

/// A user's or key's budgets.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Budgets {
    /// The windows, each checked on its own.
    #[serde(default)]
    pub windows: Vec<Window>,
    /// A temporary override.
    #[serde(default, rename = "override")]
    pub override_: Option<Override>,
}

/// The most windows one owner may have.
pub const MAX_WINDOWS: usize = 6;

impl Budgets {
    /// Whether nothing is set.
    pub fn is_empty(&self) -> bool {
        self.windows.is_empty() && self.override_.is_none()
    }

    /// The windows in force at `now` (the override's while it lasts).
    pub fn active(&self, now: i64) -> &[Window] {
        match &self.override_ {
            Some(o) if o.until > now => &o.windows,
            _ => &self.windows,
        }
    }

    /// Checks the limits: every window's limit above zero, no more than [`MAX_WINDOWS`] and no
    /// two windows of the same kind in one list. The message names what is wrong.
    pub fn validate(&self) -> std::result::Result<(), String> {
        let check = |windows: &[Window], what: &str| {
            if windows.len() > MAX_WINDOWS {
                return Err(format!("{what}: at most {MAX_WINDOWS} windows"));
            }
            for (i, w) in windows.iter().enumerate() {
                if w.limit <= 0 {
                    return Err(format!("{what}: a window's limit must be above 0"));
                }
                if windows[..i]
                    .iter()
                    .any(|o| o.period == w.period && o.rolling == w.rolling)
                {
                    return Err(format!("{what}: the same window is given twice"));
                }
            }
            Ok(())
        };
        check(&self.windows, "budget")?;
        if let Some(o) = &self.override_ {
            check(&o.windows, "budget override")?;
            if o.until <= 0 {
                return Err("budget override: its expiry is missing".into());
            }
        }
        Ok(())
    }
}

/// The budgets of `owner` (empty when none are set).
pub fn get(rtx: &ReadTransaction, owner: Owner) -> Result<Budgets> {
    let table = match rtx.open_table(BUDGETS) {
        Ok(table) => table,
        Err(redb::TableError::TableDoesNotExist(_)) => return Ok(Budgets::default()),
        Err(e) => return Err(e.into()),
    };
    match table.get(owner.key())? {
        Some(bytes) => codec::decode(bytes.value()),
        None => Ok(Budgets::default()),
    }
}

/// The budgets of `owner`, inside a write transaction.
pub fn get_rw(wtx: &WriteTransaction, owner: Owner) -> Result<Budgets> {
    let table = wtx.open_table(BUDGETS)?;
    let found = table.get(owner.key())?;
    match found {
        Some(bytes) => codec::decode(bytes.value()),
        None => Ok(Budgets::default()),
    }
}

/// Stores the budgets of `owner` (empty ones remove the row).
pub fn set(wtx: &WriteTransaction, owner: Owner, budgets: &Budgets) -> Result<()> {
    let mut table = wtx.open_table(BUDGETS)?;
    if budgets.is_empty() {
        table.remove(owner.key())?;
    } else {
        table.insert(owner.key(), codec::encode(budgets)?.as_slice())?;
    }
    Ok(())
}

/// Stores `budgets` for `owner` and appends the audit row `row` makes of the budgets it
/// replaces, in `wtx`; returns those.
pub fn replace(
    wtx: &WriteTransaction,
    owner: Owner,
    budgets: &Budgets,
    row: impl FnOnce(&Budgets) -> crate::audit::AuditEntry,
) -> Result<Budgets> {
    let before = get_rw(wtx, owner)?;
    set(wtx, owner, budgets)?;
    crate::audit::append(wtx, row(&before))?;
    Ok(before)
}

/// Forgets a deleted owner's budgets and spend.
pub fn remove(wtx: &WriteTransaction, owner: Owner) -> Result<()> {
    wtx.open_table(BUDGETS)?.remove(owner.key())?;
    let (kind, id) = owner.key();
    wtx.open_table(BUDGET_SPEND)?
        .retain_in((kind, id, i64::MIN)..=(kind, id, i64::MAX), |_, _| false)?;
    Ok(())
}

/// The first second of the quarter hour holding `at`.
pub fn bucket_of(at: i64) -> i64 {
    at.div_euclid(BUCKET_SECS).saturating_mul(BUCKET_SECS)
}

/// The per-owner, per-quarter-hour sums of `changes`' request charges.
fn sums(changes: &[BalanceChange]) -> Result<BTreeMap<(u8, i64, i64), i64>> {
    let mut out: BTreeMap<(u8, i64, i64), i64> = BTreeMap::new();
    for change in changes {
        if !change.is_request || change.charged == 0 {
            continue;
        }
        let bucket = bucket_of(change.at);
        let mut owners = vec![Owner::User(change.user_id)];
        owners.extend(change.token_id.map(Owner::Token));
        for owner in owners {
            let (kind, id) = owner.key();
            let sum = out.entry((kind, id, bucket)).or_default();
            *sum = sum
                .checked_add(change.charged)
                .ok_or(StorageError::Overflow)?;
        }
    }
    Ok(out)
}

/// Adds the request charges of `changes` to their users' and keys' quarter-hour spend: one read
/// and one write per owner and quarter hour. An owner's first write in a quarter hour also
/// removes its buckets older than [`KEEP_SECS`].
pub fn add_spend(wtx: &WriteTransaction, changes: &[BalanceChange]) -> Result<()> {
    let sums = sums(changes)?;
    if sums.is_empty() {
        return Ok(());
    }
    let mut table = wtx.open_table(BUDGET_SPEND)?;
    for ((kind, id, bucket), delta) in sums {
        let old = table.get((kind, id, bucket))?.map(|g| g.value());
        let next = old
            .unwrap_or(0)
            .checked_add(delta)
            .ok_or(StorageError::Overflow)?;
        table.insert((kind, id, bucket), next)?;
        if old.is_none() {
            let cutoff = bucket.saturating_sub(KEEP_SECS);
            table.retain_in((kind, id, i64::MIN)..(kind, id, cutoff), |_, _| false)?;
        }
    }
    Ok(())
}

/// Takes a refunded charge of `amount` made at `at` back out of the quarter-hour spend of `user`
/// and of `token` (the key it was made with), so a refund frees the budget windows it had used.
/// A quarter hour already forgotten (older than every window) is left alone, and spend never
/// goes below zero.
pub fn remove_spend(
    wtx: &WriteTransaction,
    user: UserId,
    token: Option<TokenId>,
    at: i64,
    amount: i64,
) -> Result<()> {
    if amount <= 0 {
        return Ok(());
    }
    let bucket = bucket_of(at);
    let mut table = wtx.open_table(BUDGET_SPEND)?;
    let mut owners = vec![Owner::User(user)];
    owners.extend(token.map(Owner::Token));
    for owner in owners {
        let (kind, id) = owner.key();
        let Some(old) = table.get((kind, id, bucket))?.map(|g| g.value()) else {
            continue;
        };
        table.insert((kind, id, bucket), old.saturating_sub(amount).max(0))?;
    }
    Ok(())
}

/// The quarter hours of `owner` from `since` on, oldest first: (first second, units).
pub fn spend_since(rtx: &ReadTransaction, owner: Owner, since: i64) -> Result<Vec<(i64, i64)>> {
    let table = match rtx.open_table(BUDGET_SPEND) {
        Ok(table) => table,
        Err(redb::TableError::TableDoesNotExist(_)) => return Ok(Vec::new()),
        Err(e) => return Err(e.into()),
    };
    let (kind, id) = owner.key();
    let mut out = Vec::new();
    for entry in table.range((kind, id, since)..=(kind, id, i64::MAX))? {
        let (k, v) = entry?;
        out.push((k.value().2, v.value()));
    }
    Ok(out)
}

/// An owner's budgets with its quarter hours (first second, units), oldest first.
pub type Loaded = (Budgets, Vec<(i64, i64)>);

/// What a ledger needs of `owner`: its budgets and their quarter hours from `since` on; `None`
/// when it has no budget.
pub fn load(rtx: &ReadTransaction, owner: Owner, since: i64) -> Result<Option<Loaded>> {
    let budgets = get(rtx, owner)?;
    if budgets.is_empty() {
        return Ok(None);
    }
    Ok(Some((budgets, spend_since(rtx, owner, since)?)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(user: i64, token: Option<i64>, charged: i64, at: i64) -> BalanceChange {
        BalanceChange {
            user_id: UserId(user),
            token_id: token.map(TokenId),
            charged,
            is_request: true,
            at,
        }
    }

    #[test]
    fn sums_per_owner_and_quarter_hour() {
        let changes = [
            change(1, Some(7), 10, 900),
            change(1, Some(7), 5, 1799),
            change(1, None, 3, 1800),
            BalanceChange {
                is_request: false,
                ..change(1, None, -100, 900)
            },
        ];
        let got = sums(&changes).ok();
        let want = BTreeMap::from([((0, 1, 900), 15), ((0, 1, 1800), 3), ((1, 7, 900), 15)]);
        assert_eq!(got, Some(want));
    }

    #[test]
    fn the_override_replaces_the_windows_until_it_expires() {
        let day = Window {
            period: Period::Day,
            rolling: false,
            limit: 10,
        };
        let budgets = Budgets {
            windows: vec![day],
            override_: Some(Override {
                windows: vec![Window { limit: 50, ..day }],
                until: 100,
            }),
        };
        assert_eq!(budgets.active(99)[0].limit, 50);
        assert_eq!(budgets.active(100)[0].limit, 10);
        assert!(budgets.validate().is_ok());
        let twice = Budgets {
            windows: vec![day, day],
            override_: None,
        };
        assert!(twice.validate().is_err());
    }
}
