//! Every table of the database, in one place. A table's name carries the version of its record
//! layout (`users.v2`); changing a layout means a new name and a step in [`crate::migrate`].

use redb::TableDefinition;

/// Metadata: schema version, id counters, setup state, generated secrets. Values are postcard.
pub const META: TableDefinition<&str, &[u8]> = TableDefinition::new("meta");

/// Runtime options: key → value text, exactly as the console sends them, sealed when a secret
/// key is configured ([`crate::sealing`]).
pub const OPTIONS: TableDefinition<&str, &[u8]> = TableDefinition::new("options.v2");

/// Users by id; the value is a postcard [`crate::users::User`].
pub const USERS: TableDefinition<i64, &[u8]> = TableDefinition::new("users.v2");

/// Per user: all quota ever credited to the balance (initial quota, rewards, top-ups, redemptions,
/// transfers, admin increases, less admin decreases). Kept with the user's balance and used
/// quota in every transaction so that `quota + used_quota == credited` always holds.
pub const USER_CREDITED: TableDefinition<i64, i64> = TableDefinition::new("user_credited.v1");

/// Per user: the session generation. A console session cookie carries the generation it was
/// issued under and is honoured only while it is still the user's; logout, a password change
/// or reset, a ban, a deletion and a role change raise it, ending every session at once.
/// Users without a row are at generation 0.
pub const USER_SESSIONS: TableDefinition<i64, u64> = TableDefinition::new("user_sessions.v1");

/// Per user: the two-factor (TOTP) state, a postcard [`crate::two_factor::TwoFactor`] whose
/// secret is sealed when a secret key is configured.
pub const USER_TWO_FACTOR: TableDefinition<i64, &[u8]> = TableDefinition::new("user_two_factor.v1");

/// Unique index: lower-cased username → user id.
pub const USER_BY_USERNAME: TableDefinition<&str, i64> =
    TableDefinition::new("user_by_username.v1");

/// Unique index: lower-cased email → user id (only for users with an email).
pub const USER_BY_EMAIL: TableDefinition<&str, i64> = TableDefinition::new("user_by_email.v1");

/// Unique index: SHA-256 (hex) of a user's system access token → user id.
pub const USER_BY_ACCESS_TOKEN: TableDefinition<&str, i64> =
    TableDefinition::new("user_by_access_token.v1");

/// Backup-only tokens by id; the value is a postcard [`crate::backup_tokens::BackupToken`].
pub const BACKUP_TOKENS: TableDefinition<i64, &[u8]> = TableDefinition::new("backup_tokens.v1");

/// Unique index: SHA-256 (hex) of a backup token → its id.
pub const BACKUP_TOKEN_BY_HASH: TableDefinition<&str, i64> =
    TableDefinition::new("backup_token_by_hash.v1");

/// Unique index: invite (aff) code → user id.
pub const USER_BY_AFF_CODE: TableDefinition<&str, i64> =
    TableDefinition::new("user_by_aff_code.v1");

/// Unique index: third-party identity → user id. The key is `<provider>:<external id>`, e.g.
/// `github:583231` or `oidc:https://id.example.com 248289761001` (issuer and subject); the
/// external id is kept as the provider sends it (case matters).
pub const USER_BY_IDENTITY: TableDefinition<&str, i64> =
    TableDefinition::new("user_by_identity.v1");

/// One-time codes (email verification, password reset): "purpose:email" → postcard
/// [`crate::codes::OneTimeCode`].
pub const ONE_TIME_CODES: TableDefinition<&str, &[u8]> = TableDefinition::new("one_time_codes.v1");

/// API tokens by id; the value is a postcard [`crate::tokens::Token`].
pub const TOKENS: TableDefinition<i64, &[u8]> = TableDefinition::new("tokens.v1");

/// Unique index: token key (without `sk-`) → token id; keyed by the key's HMAC when a secret
/// key is configured ([`crate::sealing::Keyring::index_key`]).
pub const TOKEN_BY_KEY: TableDefinition<&str, i64> = TableDefinition::new("token_by_key.v1");

/// Index: (user id, token id) → (), a user's tokens in id order.
pub const TOKENS_BY_USER: TableDefinition<(i64, i64), ()> =
    TableDefinition::new("tokens_by_user.v1");

/// Usage logs by id; the value is a postcard [`crate::logs::LogEntry`].
pub const LOGS: TableDefinition<i64, &[u8]> = TableDefinition::new("logs.v1");

/// Index: (created_at, log id) → (), logs in time order (range delete by time).
pub const LOG_BY_TIME: TableDefinition<(i64, i64), ()> = TableDefinition::new("log_by_time.v1");

/// An hour counter: (rows, consume rows, consume quota, consume prompt tokens, consume
/// completion tokens).
pub type HourCount = (u64, u64, i64, i64, i64);

/// A dashboard aggregate: (requests, quota, prompt tokens, completion tokens).
pub type DashAggregate = (u64, i64, i64, i64);

/// Filter index as postings: (hour start, filter key or `*`, first log id) → a postcard
/// [`crate::logs::postings::Posting`]: up to 256 rows of that key and hour as (id, created_at)
/// offsets, after their share of the hour counter. A filter key is one dimension of a log and
/// its value, e.g. `u:17` (user), `m:gpt-4o` (model), `um:17:gpt-4o` (user and model); see
/// [`crate::logs::keys`]. Rows are added with their batch and removed with their row.
pub const LOG_POSTINGS: TableDefinition<(i64, &str, i64), &[u8]> =
    TableDefinition::new("log_postings.v1");

/// Log marks by name; `sealed_before` is the hour start below which the hour counters are
/// in [`LOG_COUNTS`] (the postings' shares of those hours are no longer read).
pub const LOG_MARKS: TableDefinition<&str, i64> = TableDefinition::new("log_marks.v1");

/// Counters per filter key and hour: (filter key or `*`, hour start) → (rows, consume rows,
/// consume quota, consume prompt tokens, consume completion tokens) of the hours before the
/// `sealed_before` mark ([`LOG_MARKS`]); a newer hour's counter is the sum of its postings'
/// shares ([`LOG_POSTINGS`]). Kept exact on insert and delete, so page totals and stat sums
/// read a few counters instead of scanning rows.
pub const LOG_COUNTS: TableDefinition<(&str, i64), HourCount> =
    TableDefinition::new("log_counts.v1");

/// Dashboard aggregates by hour and model (consume logs): (hour start, model) → (requests,
/// quota, prompt tokens, completion tokens). Maintained by the log writer; kept when logs are
/// deleted (history survives retention).
pub const DASH_BY_MODEL: TableDefinition<(i64, &str), DashAggregate> =
    TableDefinition::new("dash_by_model.v1");

/// Dashboard aggregates by user, hour and model: (user id, hour start, model) → as
/// [`DASH_BY_MODEL`].
pub const DASH_BY_USER_MODEL: TableDefinition<(i64, i64, &str), DashAggregate> =
    TableDefinition::new("dash_by_user_model.v1");

/// Dashboard aggregates by hour and user: (hour start, user id) → as [`DASH_BY_MODEL`].
pub const DASH_BY_USER: TableDefinition<(i64, i64), DashAggregate> =
    TableDefinition::new("dash_by_user.v1");

/// Channels by id; the value is a postcard [`crate::channels::Channel`].
pub const CHANNELS: TableDefinition<i64, &[u8]> = TableDefinition::new("channels.v1");

/// The ability index: (group, model, channel id) → postcard [`crate::channels::Ability`].
/// Derived from each channel's groups × models, written in the channel's own transaction.
pub const ABILITIES: TableDefinition<(&str, &str, i64), &[u8]> =
    TableDefinition::new("abilities.v1");

/// Secondary index: (tag, channel id) for channels with a non-empty tag.
pub const CHANNEL_BY_TAG: TableDefinition<(&str, i64), ()> =
    TableDefinition::new("channel_by_tag.v1");

/// Quota used through each channel: channel id → units, the sum of the consume rows that name
/// the channel (refunds, as negative rows, move it back). Written by the log writer in the
/// transaction that inserts those rows, one write per channel per batch
/// ([`crate::channel_usage`]); kept apart from [`CHANNELS`] so that settling never rewrites the
/// channel record. Created by its first write.
pub const CHANNEL_USED: TableDefinition<i64, i64> = TableDefinition::new("channel_used.v1");

/// The audit log by id (append-only; see [`crate::audit`]); the value is a postcard
/// [`crate::audit::AuditEntry`]. Created by its first row.
pub const AUDIT: TableDefinition<i64, &[u8]> = TableDefinition::new("audit.v1");

/// Redemption codes by id; the value is a postcard [`crate::redemptions::Redemption`].
pub const REDEMPTIONS: TableDefinition<i64, &[u8]> = TableDefinition::new("redemptions.v1");

/// Unique index: redemption code key → redemption id.
pub const REDEMPTION_BY_KEY: TableDefinition<&str, i64> =
    TableDefinition::new("redemption_by_key.v1");

/// Online top-up orders by id; the value is a postcard [`crate::topups::TopUp`].
pub const TOPUPS: TableDefinition<i64, &[u8]> = TableDefinition::new("topups.v1");

/// Unique index: trade number → top-up id.
pub const TOPUP_BY_TRADE_NO: TableDefinition<&str, i64> =
    TableDefinition::new("topup_by_trade_no.v1");

/// Index: (user id, top-up id) → (), a user's orders in id order.
pub const TOPUPS_BY_USER: TableDefinition<(i64, i64), ()> =
    TableDefinition::new("topups_by_user.v1");

/// When a user was last sent each kind of reminder: (user id, kind) → unix seconds. Kept so a
/// restart does not repeat a reminder within its window.
pub const REMINDERS: TableDefinition<(i64, &str), i64> = TableDefinition::new("reminders.v1");

/// Asynchronous tasks (Midjourney drawings, Suno songs, videos) by id; the value is a postcard
/// [`crate::tasks::Task`].
pub const TASKS: TableDefinition<i64, &[u8]> = TableDefinition::new("tasks.v1");

/// Task filter index: (filter key, created_at, task id) → (); see [`crate::tasks::keys`]. A
/// task's keys never change after insert (owner, channel, upstream id and time are fixed).
pub const TASK_BY_KEY: TableDefinition<(&str, i64, i64), ()> =
    TableDefinition::new("task_by_key.v1");

/// Unfinished tasks (the poller's work list): task id → ().
pub const TASK_OPEN: TableDefinition<i64, ()> = TableDefinition::new("task_open.v1");

/// Tasks per (list, status): `("mj", "SUCCESS")` → count; kept with every status change
/// (`/metrics` reads it).
pub const TASK_COUNTS: TableDefinition<(&str, &str), u64> = TableDefinition::new("task_counts.v1");

/// Budgets on the prepaid wallet: (owner kind, owner id) → a postcard
/// [`crate::budgets::Budgets`] (the windows and a temporary override). Owner kind 0 is a user,
/// 1 an API key ([`crate::budgets::Owner`]). Created by its first write.
pub const BUDGETS: TableDefinition<(u8, i64), &[u8]> = TableDefinition::new("budgets.v1");

/// Rate limits: (owner kind, owner id) → postcard [`crate::limits::OwnerLimits`]. Owner kind 0
/// is a user, 1 an API key, 2 a channel ([`crate::limits::Owner`]). Created by its first write.
pub const RATE_LIMITS: TableDefinition<(u8, i64), &[u8]> = TableDefinition::new("rate_limits.v1");

/// Spend per quarter hour: (owner kind, owner id, the quarter hour's first Unix second) → units
/// charged by requests in it. Written by the log writer in the transaction that applies the
/// charges, one write per owner and quarter hour per batch ([`crate::budgets::add_spend`]); a
/// budget window's spend is the sum of the quarter hours inside it, so a restart never resets
/// it. Quarter hours because every time zone's offset is a whole number of them. Created by its
/// first write.
pub const BUDGET_SPEND: TableDefinition<(u8, i64, i64), i64> =
    TableDefinition::new("budget_spend.v1");

/// Prompt-cache use per channel and hour: (channel id, the hour's first Unix second) → (prompt
/// tokens, cached prompt tokens) of the consume rows that channel answered in that hour. Written
/// by the log writer in the transaction that inserts those rows, one write per channel and hour
/// per batch ([`crate::prompt_cache`]); kept when old rows are deleted (history, as the
/// dashboard aggregates). Created by its first write.
pub const PROMPT_CACHE_HOURS: TableDefinition<(i64, i64), (i64, i64)> =
    TableDefinition::new("prompt_cache_hours.v1");
