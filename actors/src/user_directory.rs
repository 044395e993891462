//! The user directory: what the relay must know about a key's owner (status, group, pricing
//! preference) without reading storage per request.
//!
//! Filled on first sight (one storage read per user per process) and patched by every console
//! change to an existing user, so a ban or deletion stops the user's keys on the next request.

use std::sync::Arc;

use dashmap::DashMap;
use tollgate_storage::users::{STATUS_ENABLED, User};
use tollgate_storage::{StorageError, Store, UserId, users};

/// The owner facts the relay checks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserFacts {
    /// Id.
    pub id: UserId,
    /// Login name (for logs).
    pub username: String,
    /// Billing group.
    pub group: String,
    /// Role (admins may pin a channel with `sk-<key>-<channel>`).
    pub role: i32,
    /// Enabled and not deregistered.
    pub active: bool,
    /// Accepts models without a price (billed at zero).
    pub accept_unset_price: bool,
    /// The user's low-balance reminder threshold in quota units (0: the site default).
    pub quota_warning_threshold: i64,
}

impl UserFacts {
    /// The facts of a stored user.
    pub fn from_user(user: &User) -> UserFacts {
        let setting: serde_json::Value = serde_json::from_str(&user.setting).unwrap_or_default();
        UserFacts {
            id: user.id,
            username: user.username.clone(),
            group: user.group.clone(),
            role: user.role,
            active: user.status == STATUS_ENABLED && user.deleted_at.is_none(),
            accept_unset_price: setting["accept_unset_model_ratio_model"].as_bool() == Some(true),
            quota_warning_threshold: setting["quota_warning_threshold"]
                .as_f64()
                .filter(|t| t.is_finite() && *t > 0.0)
                .map_or(0, |t| t.round() as i64),
        }
    }
}

/// Shared handle. Cheap to clone.
#[derive(Clone)]
pub struct UserDirectory {
    /// Where misses are loaded from.
    store: Store,
    /// id → facts. Writers: misses (load) and console user changes (`upsert`).
    map: Arc<DashMap<UserId, Arc<UserFacts>>>,
}

impl UserDirectory {
    /// An empty directory over `store`.
    pub fn new(store: Store) -> UserDirectory {
        UserDirectory {
            store,
            map: Arc::new(DashMap::new()),
        }
    }

    /// The facts of `id`, loading them on first sight; `None` for an unknown user.
    pub async fn get(&self, id: UserId) -> Result<Option<Arc<UserFacts>>, StorageError> {
        if let Some(facts) = self.map.get(&id) {
            return Ok(Some(Arc::clone(facts.value())));
        }
        let Some(user) = self.store.read(move |rtx| users::get(rtx, id)).await? else {
            return Ok(None);
        };
        let facts = Arc::new(UserFacts::from_user(&user));
        // A concurrent upsert may have landed meanwhile; it is newer, keep it.
        let kept = self.map.entry(id).or_insert(facts);
        Ok(Some(Arc::clone(kept.value())))
    }

    /// The facts of `id` if already loaded (no storage read).
    pub fn peek(&self, id: UserId) -> Option<Arc<UserFacts>> {
        self.map.get(&id).map(|f| Arc::clone(f.value()))
    }

    /// Records the current state of a changed user.
    pub fn upsert(&self, user: &User) {
        self.map
            .insert(user.id, Arc::new(UserFacts::from_user(user)));
    }
}
