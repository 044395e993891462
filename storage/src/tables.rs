//! Every table of the database, in one place. A table's name carries the version of its record
//! layout (`users.v2`); changing a layout means a new name and a step in [`crate::migrate`].

use redb::TableDefinition;

/// Metadata: schema version, id counters, setup state, generated secrets. Values are postcard.
pub const META: TableDefinition<&str, &[u8]> = TableDefinition::new("meta");

/// Runtime options: key → value text, exactly as the console sends them.
pub const OPTIONS: TableDefinition<&str, &str> = TableDefinition::new("options.v1");

/// Users by id; the value is a postcard [`crate::users::User`].
pub const USERS: TableDefinition<i64, &[u8]> = TableDefinition::new("users.v2");

/// Unique index: lower-cased username → user id.
pub const USER_BY_USERNAME: TableDefinition<&str, i64> =
    TableDefinition::new("user_by_username.v1");

/// Unique index: lower-cased email → user id (only for users with an email).
pub const USER_BY_EMAIL: TableDefinition<&str, i64> = TableDefinition::new("user_by_email.v1");

/// Channels by id; the value is a postcard [`crate::channels::Channel`].
pub const CHANNELS: TableDefinition<i64, &[u8]> = TableDefinition::new("channels.v1");

/// The ability index: (group, model, channel id) → postcard [`crate::channels::Ability`].
/// Derived from each channel's groups × models, written in the channel's own transaction.
pub const ABILITIES: TableDefinition<(&str, &str, i64), &[u8]> =
    TableDefinition::new("abilities.v1");

/// Secondary index: (tag, channel id) for channels with a non-empty tag.
pub const CHANNEL_BY_TAG: TableDefinition<(&str, i64), ()> =
    TableDefinition::new("channel_by_tag.v1");
