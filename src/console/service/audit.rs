//! The audit log's writing side for the console: who acted ([`Auditor`]: the admin and the
//! client address, or the system for a payment gateway's notification) and the row each
//! audited action appends ([`Auditor::entry`]). Rows are appended in the same write transaction as the
//! change they record wherever the change is one transaction, so a row exists exactly when its
//! change was committed. Secret values never enter a row: callers pass what they redact
//! ([`REDACTED`]) or leave out.

use std::net::IpAddr;

use serde_json::Value;
use tollgate_storage::audit::AuditEntry;
use tollgate_storage::channels::Channel;
use tollgate_storage::users::User;

use crate::clock::now_unix;

/// What stands for a secret value in a row: that it was set or changed, never the value.
pub use tollgate_actors::options::REDACTED;

/// Who performs an audited action.
#[derive(Debug, Clone, Default)]
pub struct Auditor {
    /// The acting user's id (0: the system).
    pub id: i64,
    /// Their username.
    pub name: String,
    /// The client's address.
    pub ip: Option<IpAddr>,
}

impl Auditor {
    /// `user`, acting from `ip`.
    pub fn user(user: &User, ip: Option<IpAddr>) -> Auditor {
        Auditor {
            id: user.id.0,
            name: user.username.clone(),
            ip,
        }
    }

    /// The system (e.g. a payment gateway's notification), from `ip`.
    pub fn system(ip: Option<IpAddr>) -> Auditor {
        Auditor {
            id: 0,
            name: String::new(),
            ip,
        }
    }

    /// The row of `action` on `target`, with the values `before` and `after` (`Value::Null`:
    /// none; give secrets as [`REDACTED`]).
    pub fn entry(&self, action: &str, target: String, before: &Value, after: &Value) -> AuditEntry {
        let text = |v: &Value| {
            if v.is_null() {
                String::new()
            } else {
                v.to_string()
            }
        };
        AuditEntry {
            id: 0,
            created_at: now_unix(),
            actor_id: self.id,
            actor_name: self.name.clone(),
            action: action.to_owned(),
            target,
            before: text(before),
            after: text(after),
            ip: self.ip.map(|ip| ip.to_string()).unwrap_or_default(),
        }
    }
}

/// The client's address for an audit row (`None` when the connection has none, as with the
/// in-process router of tests); never refuses a request.
#[derive(Debug, Clone, Copy)]
pub struct AuditIp(pub Option<IpAddr>);

impl axum::extract::FromRequestParts<crate::state::AppState> for AuditIp {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        state: &crate::state::AppState,
    ) -> Result<Self, Self::Rejection> {
        Ok(AuditIp(crate::http::client_ip::ClientIp::of(parts, state)))
    }
}

impl Auditor {
    /// The row of a channel update that changes where its key goes or the key itself (base
    /// URL, proxy, type, key), if it does: the base URL and type in clear, the key and the
    /// proxy (which may hold credentials) as [`REDACTED`] when they changed.
    pub fn channel_change(&self, before: &Channel, after: &Channel) -> Option<AuditEntry> {
        let key = before.key.expose() != after.key.expose();
        let proxy = before.proxy != after.proxy;
        let url = before.base_url != after.base_url;
        let kind = before.channel_type != after.channel_type;
        if !(key || proxy || url || kind) {
            return None;
        }
        let side = |c: &Channel| {
            let mut side = serde_json::Map::new();
            if url {
                side.insert("base_url".into(), Value::String(c.base_url.clone()));
            }
            if kind {
                side.insert("type".into(), Value::from(c.channel_type));
            }
            if proxy {
                side.insert("proxy".into(), Value::String(REDACTED.into()));
            }
            if key {
                side.insert("key".into(), Value::String(REDACTED.into()));
            }
            Value::Object(side)
        };
        Some(self.entry(
            "channel.update",
            format!("channel:{}", after.id.0),
            &side(before),
            &side(after),
        ))
    }

    /// The row of a channel deleted: what it was (name, type, base URL; whether it held a key,
    /// as [`REDACTED`]).
    pub fn channel_deleted(&self, channel: &Channel) -> AuditEntry {
        let mut before = serde_json::Map::new();
        before.insert("name".into(), Value::String(channel.name.clone()));
        before.insert("type".into(), Value::from(channel.channel_type));
        before.insert("base_url".into(), Value::String(channel.base_url.clone()));
        if !channel.key.is_empty() {
            before.insert("key".into(), Value::String(REDACTED.into()));
        }
        self.entry(
            "channel.delete",
            format!("channel:{}", channel.id.0),
            &Value::Object(before),
            &Value::Null,
        )
    }

    /// The row of a channel created (by the console's create or copy): where its key goes
    /// (base URL and type in clear) and whether it holds a key and a proxy, as [`REDACTED`]
    /// (absent when empty); `copied_from` names the channel a copy was made from.
    pub fn channel_created(&self, channel: &Channel, copied_from: Option<i64>) -> AuditEntry {
        let mut after = serde_json::Map::new();
        after.insert("name".into(), Value::String(channel.name.clone()));
        after.insert("type".into(), Value::from(channel.channel_type));
        after.insert("base_url".into(), Value::String(channel.base_url.clone()));
        if !channel.key.is_empty() {
            after.insert("key".into(), Value::String(REDACTED.into()));
        }
        if !channel.proxy.is_empty() {
            after.insert("proxy".into(), Value::String(REDACTED.into()));
        }
        if let Some(from) = copied_from {
            after.insert("copied_from".into(), Value::from(from));
        }
        self.entry(
            "channel.create",
            format!("channel:{}", channel.id.0),
            &Value::Null,
            &Value::Object(after),
        )
    }
}
