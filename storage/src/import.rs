//! Records carried over from another gateway (`tollgate import new-api`): stored under the ids
//! they had there, so that every reference between them (a token's owner, an inviter, a
//! redeemer, a log row's user and channel) stays true without a translation table, with the
//! same index entries the ordinary inserts write and the id sequences raised past them.
//!
//! [`write`] stores everything but the usage logs in one write transaction into a data file that
//! holds nothing yet ([`target_is_empty`]), refusing a duplicate key or name rather than
//! overwriting; [`write_logs`] then adds the incumbent's log rows a batch per transaction,
//! each with the source id it reached ([`log_cursor`]), so `--resume` continues from there.
//! [`read_back`] reads the records through the same functions the console's lists use.
//! Drawing and task records are the exception to the kept ids: they go in through
//! [`crate::tasks::insert`] under new ones (nothing refers to them by id; lists and clients find
//! them by their upstream id).

use redb::{
    ReadTransaction, ReadableTable, ReadableTableMetadata, TableDefinition, WriteTransaction,
};

use crate::audit::{self, AuditEntry};
use crate::channels::{self, Channel};
use crate::logs::{self, LogEntry};
use crate::redemptions::Redemption;
use crate::tables::{
    CHANNELS, LOGS, REDEMPTION_BY_KEY, REDEMPTIONS, TOKEN_BY_KEY, TOKENS, TOKENS_BY_USER,
    TOPUP_BY_TRADE_NO, TOPUPS, TOPUPS_BY_USER, USER_CREDITED, USERS,
};
use crate::tasks::{self, Task};
use crate::tokens::Token;
use crate::topups::TopUp;
use crate::two_factor::{self, TwoFactor};
use crate::users::{self, User};
use crate::{
    ChannelId, Result, StorageError, Store, TokenId, UserId, codec, meta, options, sealing, tokens,
};

/// The prefix of a GitHub binding the incumbent stored as a login (not GitHub's numeric id):
/// `github_id = "login:<login>"` waits for [`claim_github_login`].
pub const PENDING_LOGIN: &str = "login:";

/// Binds the GitHub account `external_id` (numeric) to the imported user whose pending binding is
/// `login`, if the account was created (`account_created_at`, unix seconds) before the import
/// (setup time) and no user is bound to it yet: a login can be renamed and registered again by
/// someone else after the import, so a later account with the same login is not that user.
/// Returns whether it bound. Blocking.
pub fn claim_github_login(
    store: &Store,
    login: &str,
    external_id: &str,
    account_created_at: i64,
) -> Result<bool> {
    store.write_blocking(|wtx| {
        let github = users::Provider::GitHub;
        if login.is_empty() || users::find_by_identity_rw(wtx, github, external_id)?.is_some() {
            return Ok(false);
        }
        let pending = format!("{PENDING_LOGIN}{login}");
        let Some(mut user) = users::find_by_identity_rw(wtx, github, &pending)? else {
            return Ok(false);
        };
        let setup = meta::setup_state_rw(wtx)?;
        if !setup.done || account_created_at >= setup.at {
            return Ok(false);
        }
        user.github_id = external_id.to_owned();
        users::update(wtx, &user)?;
        Ok(true)
    })
}

/// The meta sequence that holds the last source log id imported (`--resume` starts after it).
const LOG_CURSOR: &str = "import_log_cursor";

/// Everything an import stores in its one transaction.
#[derive(Debug, Default)]
pub struct Records {
    /// Users with the quota ever credited to each.
    pub users: Vec<(User, i64)>,
    /// Two-factor records.
    pub two_factor: Vec<TwoFactor>,
    /// API tokens.
    pub tokens: Vec<Token>,
    /// Channels.
    pub channels: Vec<Channel>,
    /// Options, already validated by the option catalog.
    pub options: Vec<(String, String)>,
    /// Redemption codes.
    pub redemptions: Vec<Redemption>,
    /// Top-up orders.
    pub topups: Vec<TopUp>,
    /// One opening log row per user.
    pub openings: Vec<LogEntry>,
    /// Drawing, music and video tasks (ids are given anew by the task sequence).
    pub tasks: Vec<Task>,
    /// The audit row of the import.
    pub audit: AuditEntry,
}

/// Whether the data file of `store` is empty ([`target_is_empty`]). Blocking.
pub fn store_is_empty(store: &Store) -> Result<bool> {
    store.read_blocking(target_is_empty)
}

/// Stores `records` in one write transaction and marks setup done at `now`: all or nothing.
/// Blocking.
pub fn write(store: &Store, records: &Records, now: i64) -> Result<()> {
    store.write_blocking(|wtx| {
        if !target_is_empty_rw(wtx)? {
            return Err(StorageError::Duplicate {
                what: "data (the target is not empty)",
            });
        }
        for (user, credited) in &records.users {
            put_user(wtx, user, *credited)?;
        }
        for record in &records.two_factor {
            two_factor::put(wtx, record)?;
        }
        for token in &records.tokens {
            put_token(wtx, token)?;
        }
        for channel in &records.channels {
            put_channel(wtx, channel)?;
        }
        for (key, value) in &records.options {
            options::put(wtx, key, value)?;
        }
        for code in &records.redemptions {
            put_redemption(wtx, code)?;
        }
        for order in &records.topups {
            put_topup(wtx, order)?;
        }
        logs::insert_batch(wtx, records.openings.iter().cloned(), true)?;
        for task in &records.tasks {
            tasks::insert(wtx, task.clone())?;
        }
        audit::append(wtx, records.audit.clone())?;
        finish(wtx, now)
    })
}

/// [`target_is_empty`] inside the import's own transaction (nothing may have been written
/// between the check and the write).
fn target_is_empty_rw(wtx: &WriteTransaction) -> Result<bool> {
    if meta::setup_state_rw(wtx)?.done {
        return Ok(false);
    }
    Ok(users::count_rw(wtx)? == 0 && channels::list_all_rw(wtx)?.is_empty())
}

/// The last source log id imported (0: none yet). Blocking.
pub fn log_cursor(store: &Store) -> Result<i64> {
    store.write_blocking(|wtx| {
        // The sequence's next value is one past the last id recorded.
        let next = meta::reserve_ids(wtx, LOG_CURSOR, 0)?;
        Ok(next.saturating_sub(1))
    })
}

/// Appends a batch of the incumbent's log rows and records `last_source_id` as reached, in one
/// transaction. Blocking.
pub fn write_logs(store: &Store, rows: Vec<LogEntry>, last_source_id: i64) -> Result<()> {
    store.write_blocking(|wtx| {
        logs::insert_batch(wtx, rows, true)?;
        meta::raise_next_id(wtx, LOG_CURSOR, next_after(last_source_id)?)
    })
}

/// What Tollgate reads back for the imported ids, in their order (`None`: not found).
#[derive(Debug, Default)]
pub struct ReadBack {
    /// Each user with the quota credited to it.
    pub users: Vec<Option<(User, i64)>>,
    /// Each token.
    pub tokens: Vec<Option<Token>>,
    /// Each channel.
    pub channels: Vec<Option<Channel>>,
}

/// Reads the imported users (with their credited quota), tokens and channels through the
/// functions the console's lists use. Blocking.
pub fn read_back(
    store: &Store,
    user_ids: &[UserId],
    token_ids: &[TokenId],
    channel_ids: &[ChannelId],
) -> Result<ReadBack> {
    store.read_blocking(|rtx| {
        let mut back = ReadBack::default();
        for id in user_ids {
            back.users.push(match users::get(rtx, *id)? {
                Some(user) => Some((user, users::credited(rtx, *id)?)),
                None => None,
            });
        }
        for id in token_ids {
            back.tokens.push(tokens::get(rtx, *id)?);
        }
        for id in channel_ids {
            back.channels.push(channels::get(rtx, *id)?);
        }
        Ok(back)
    })
}

/// Rows in `def` (0 when the table was never created).
fn rows(rtx: &ReadTransaction, def: TableDefinition<i64, &[u8]>) -> Result<u64> {
    match rtx.open_table(def) {
        Ok(table) => Ok(table.len()?),
        Err(redb::TableError::TableDoesNotExist(_)) => Ok(0),
        Err(e) => Err(e.into()),
    }
}

/// Whether the data file is one an import may fill: setup not done, and no user, token,
/// channel, redemption code, top-up order or log row in it.
pub fn target_is_empty(rtx: &ReadTransaction) -> Result<bool> {
    if meta::setup_state(rtx)?.done {
        return Ok(false);
    }
    for def in [USERS, TOKENS, CHANNELS, REDEMPTIONS, TOPUPS, LOGS] {
        if rows(rtx, def)? > 0 {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Stores `user` under its own id with its index entries (username, email, invite code, access
/// token, third-party identities; a duplicate is [`StorageError::Duplicate`]) and `credited`
/// as the quota ever credited to it.
pub fn put_user(wtx: &WriteTransaction, user: &User, credited: i64) -> Result<()> {
    if users::get_rw(wtx, user.id)?.is_some() {
        return Err(StorageError::Duplicate { what: "user id" });
    }
    // A record without the indexed values first; the update then adds each index entry,
    // with the uniqueness checks every other route has.
    let mut bare = user.clone();
    bare.username.clear();
    bare.email.clear();
    bare.aff_code.clear();
    bare.access_token_hash = None;
    for provider in users::Provider::ALL {
        provider.bound_mut(&mut bare).clear();
    }
    wtx.open_table(USERS)?
        .insert(user.id.0, codec::encode(&bare)?.as_slice())?;
    users::update(wtx, user)?;
    wtx.open_table(USER_CREDITED)?.insert(user.id.0, credited)?;
    meta::raise_next_id(wtx, "users", next_after(user.id.0)?)
}

/// Stores `token` under its own id with its key and owner index entries.
pub fn put_token(wtx: &WriteTransaction, token: &Token) -> Result<()> {
    let mut by_key = wtx.open_table(TOKEN_BY_KEY)?;
    let indexed = sealing::current()?.index_key(&token.key);
    if by_key.get(indexed.as_str())?.is_some() {
        return Err(StorageError::Duplicate { what: "token key" });
    }
    let mut table = wtx.open_table(TOKENS)?;
    if table.get(token.id.0)?.is_some() {
        return Err(StorageError::Duplicate { what: "token id" });
    }
    by_key.insert(indexed.as_str(), token.id.0)?;
    wtx.open_table(TOKENS_BY_USER)?
        .insert((token.user_id.0, token.id.0), ())?;
    table.insert(token.id.0, codec::encode(token)?.as_slice())?;
    meta::raise_next_id(wtx, "tokens", next_after(token.id.0)?)
}

/// Stores `channel` under its own id with its ability and tag index entries.
pub fn put_channel(wtx: &WriteTransaction, channel: &Channel) -> Result<()> {
    if channels::get_rw(wtx, channel.id)?.is_some() {
        return Err(StorageError::Duplicate { what: "channel id" });
    }
    channels::write(wtx, None, channel)?;
    meta::raise_next_id(wtx, "channels", next_after(channel.id.0)?)
}

/// Stores a redemption code under its own id with its key index entry.
pub fn put_redemption(wtx: &WriteTransaction, code: &Redemption) -> Result<()> {
    let mut by_key = wtx.open_table(REDEMPTION_BY_KEY)?;
    let indexed = sealing::current()?.index_key(&code.key);
    if by_key.get(indexed.as_str())?.is_some() {
        return Err(StorageError::Duplicate {
            what: "redemption code",
        });
    }
    let mut table = wtx.open_table(REDEMPTIONS)?;
    if table.get(code.id.0)?.is_some() {
        return Err(StorageError::Duplicate {
            what: "redemption id",
        });
    }
    by_key.insert(indexed.as_str(), code.id.0)?;
    table.insert(code.id.0, codec::encode(code)?.as_slice())?;
    meta::raise_next_id(wtx, "redemptions", next_after(code.id.0)?)
}

/// Stores a top-up order under its own id with its trade number and owner index entries.
pub fn put_topup(wtx: &WriteTransaction, order: &TopUp) -> Result<()> {
    let mut by_trade = wtx.open_table(TOPUP_BY_TRADE_NO)?;
    if by_trade.get(order.trade_no.as_str())?.is_some() {
        return Err(StorageError::Duplicate {
            what: "trade number",
        });
    }
    let mut table = wtx.open_table(TOPUPS)?;
    if table.get(order.id.0)?.is_some() {
        return Err(StorageError::Duplicate { what: "top-up id" });
    }
    by_trade.insert(order.trade_no.as_str(), order.id.0)?;
    wtx.open_table(TOPUPS_BY_USER)?
        .insert((order.user_id.0, order.id.0), ())?;
    table.insert(order.id.0, codec::encode(order)?.as_slice())?;
    meta::raise_next_id(wtx, "topups", next_after(order.id.0)?)
}

/// Marks first-run setup as done at `now`: the imported root is the installation's root.
fn finish(wtx: &WriteTransaction, now: i64) -> Result<()> {
    meta::set_setup_state(
        wtx,
        meta::SetupState {
            done: true,
            at: now,
        },
    )
}

fn next_after(id: i64) -> Result<i64> {
    id.checked_add(1).ok_or(StorageError::Overflow)
}
