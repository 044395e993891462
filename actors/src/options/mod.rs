//! Runtime options: the catalog of keys ([`catalog`]), the published [`OptionsSnapshot`], and
//! the [`Options`] publisher that validates, persists and republishes on every save.

pub mod catalog;
pub mod component_prices;
pub mod home_blocks;
pub mod limit_rules;
pub mod pricing;
pub mod rate_limit;
pub mod relay;
pub mod sensitive;
mod snapshot;

use std::collections::BTreeMap;
use std::sync::Arc;

use tollgate_storage::Store;
use tollgate_storage::audit::AuditEntry;

pub use snapshot::OptionsSnapshot;

use crate::ActorError;
use crate::snapshot::Published;

/// What stands for a secret option's value in an audit row.
pub const REDACTED: &str = "[redacted]";

/// Why an option value was refused. Messages are shown to the admin as they are.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum OptionError {
    /// The key is not in the catalog.
    #[error("unknown option key: {0}")]
    UnknownKey(String),
    /// A `…Enabled` key got something other than true/false.
    #[error("{0} must be true or false")]
    NotBool(&'static str),
    /// An integer key got something else.
    #[error("{0} must be an integer")]
    NotInteger(&'static str),
    /// A numeric key got something else.
    #[error("{0} must be a number")]
    NotNumber(&'static str),
    /// A number below the key's minimum.
    #[error("{key} must be at least {min}")]
    TooSmall {
        /// The key.
        key: &'static str,
        /// Its minimum.
        min: String,
    },
    /// A number above the key's maximum.
    #[error("{key} must be at most {max}")]
    TooLarge {
        /// The key.
        key: &'static str,
        /// Its maximum.
        max: String,
    },
    /// A time zone key got a name the time zone database does not know.
    #[error("{0} must be an IANA time zone name, such as UTC or Asia/Shanghai")]
    NotZone(&'static str),
    /// A JSON key got text that does not parse.
    #[error("{0} is not a valid JSON string")]
    NotJson(&'static str),
    /// A URL key that must be http(s).
    #[error("{0} must start with http:// or https://")]
    NotHttpUrl(&'static str),
    /// An address with a scheme a browser would run or read locally.
    #[error("{key} may not use the {scheme} scheme")]
    RefusedScheme {
        /// The key.
        key: &'static str,
        /// The refused scheme (with its colon).
        scheme: &'static str,
    },
    /// RateLimitRules that do not validate.
    #[error("{0}")]
    LimitRule(#[from] limit_rules::RuleError),
    /// A home page block that parses but is not the shape the console renders.
    #[error("{key} does not have the expected shape: {reason}")]
    BadShape {
        /// The key.
        key: &'static str,
        /// Where and why (`[1]: missing field `title``).
        reason: String,
    },
}

/// Publisher of the options snapshot. Cheap to clone.
#[derive(Clone)]
pub struct Options {
    /// Where saved options live.
    store: Store,
    /// The snapshot every reader uses.
    published: Published<OptionsSnapshot>,
    /// Serialises save → republish so two concurrent saves cannot publish out of order.
    save: Arc<tokio::sync::Mutex<()>>,
}

impl Options {
    /// Loads the stored options and publishes the first snapshot. Blocking (startup).
    pub fn load(store: Store) -> Result<Options, ActorError> {
        let stored = store.read_blocking(tollgate_storage::options::load_all)?;
        Ok(Options {
            store,
            published: Published::new(OptionsSnapshot::from_stored(stored)),
            save: Arc::new(tokio::sync::Mutex::new(())),
        })
    }

    /// The published snapshot (lock-free to read).
    pub fn published(&self) -> &Published<OptionsSnapshot> {
        &self.published
    }

    /// An owned handle on the current snapshot.
    pub fn current(&self) -> Arc<OptionsSnapshot> {
        self.published.load_full()
    }

    /// Validates, stores and publishes one option.
    pub async fn update(&self, key: &str, value: &str) -> Result<(), ActorError> {
        let normalized = catalog::normalize(key, value)?;
        let _order = self.save.lock().await;
        let key_owned = key.to_owned();
        self.store
            .write(move |wtx| tollgate_storage::options::put(wtx, &key_owned, &normalized))
            .await?;
        self.republish().await
    }

    /// [`Options::update`] with an audit row: `entry` (its action, actor and address set by
    /// the caller) gets the value before and after — `[redacted]` for a secret key, whose
    /// values never enter the row — and is appended in the option's own transaction.
    pub async fn update_audited(
        &self,
        key: &str,
        value: &str,
        mut entry: AuditEntry,
    ) -> Result<(), ActorError> {
        let normalized = catalog::normalize(key, value)?;
        let _order = self.save.lock().await;
        // Under the save order the published value is the stored one.
        let before = self.current().text(key).to_owned();
        let secret = catalog::find(key).is_some_and(|def| def.secret);
        let shown = |v: &str| {
            if secret {
                serde_json::json!({ key: if v.is_empty() { "" } else { REDACTED } })
            } else {
                serde_json::json!({ key: v })
            }
        };
        entry.before = shown(&before).to_string();
        entry.after = shown(&normalized).to_string();
        let key_owned = key.to_owned();
        self.store
            .write(move |wtx| {
                tollgate_storage::options::put(wtx, &key_owned, &normalized)?;
                tollgate_storage::audit::append(wtx, entry).map(|_| ())
            })
            .await?;
        self.republish().await
    }

    /// Validates, stores (in one transaction) and publishes (once) several options: one logical
    /// change, such as restoring the default price tables. `entry` is its audit row, written in
    /// the same transaction with every value before and after (secrets redacted).
    pub async fn update_many(
        &self,
        entries: &[(&str, &str)],
        mut entry: AuditEntry,
    ) -> Result<(), ActorError> {
        let normalized = entries
            .iter()
            .map(|(k, v)| Ok(((*k).to_owned(), catalog::normalize(k, v)?)))
            .collect::<Result<Vec<(String, String)>, OptionError>>()?;
        let _order = self.save.lock().await;
        // Under the save order the published values are the stored ones.
        let current = self.current();
        let shown = |key: &str, v: &str| {
            let secret = catalog::find(key).is_some_and(|def| def.secret);
            let v = if secret && !v.is_empty() { REDACTED } else { v };
            (key.to_owned(), serde_json::Value::String(v.to_owned()))
        };
        let before: serde_json::Map<String, serde_json::Value> = normalized
            .iter()
            .map(|(k, _)| shown(k, current.text(k)))
            .collect();
        let after: serde_json::Map<String, serde_json::Value> =
            normalized.iter().map(|(k, v)| shown(k, v)).collect();
        entry.before = serde_json::Value::Object(before).to_string();
        entry.after = serde_json::Value::Object(after).to_string();
        self.store
            .write(move |wtx| {
                for (key, value) in &normalized {
                    tollgate_storage::options::put(wtx, key, value)?;
                }
                tollgate_storage::audit::append(wtx, entry).map(|_| ())
            })
            .await?;
        self.republish().await
    }

    /// Re-reads the stored options and publishes them (after another component, e.g. setup,
    /// wrote options inside its own transaction).
    pub async fn reload(&self) -> Result<(), ActorError> {
        let _order = self.save.lock().await;
        self.republish().await
    }

    async fn republish(&self) -> Result<(), ActorError> {
        let stored: BTreeMap<String, String> =
            self.store.read(tollgate_storage::options::load_all).await?;
        self.published.publish(OptionsSnapshot::from_stored(stored));
        Ok(())
    }
}
