//! Alerts to the root user (issue P12 item 13): a channel the health rules auto-disabled, and a
//! storage fault that stops paid requests (and its end), go to root by root's notification
//! setting (signed webhook, else email), like the quota reminder.
//!
//! - Channels: the channel pool tells [`RootAlerts`] (a [`ChannelWatch`]) when it stores an
//!   auto-disable; the alert is sent from a task of its own.
//! - Storage: a watcher looks at the shared storage health every [`STORAGE_POLL`] and alerts on
//!   each change between healthy and faulted. While storage is faulted, root's contact cannot be
//!   read from the database: the watcher keeps the one it read last.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tollgate_actors::channel_pool::ChannelWatch;
use tollgate_actors::options::Options;
use tollgate_actors::storage_health::StorageHealth;
use tollgate_storage::users::{self, ROLE_ROOT, User};
use tollgate_storage::{ChannelId, StorageError, Store};

use super::deliver;
use super::webhook::Notice;
use crate::clock::now_unix;
use crate::outbound::GuardedClient;

/// How often the storage watcher looks at the storage health.
pub const STORAGE_POLL: Duration = Duration::from_secs(2);

/// Root's contact is read again every this many polls (a minute) while storage is healthy.
const ROOT_REFRESH: u64 = 30;

/// Sends root's alerts. Cheap to clone.
#[derive(Clone)]
pub struct RootAlerts {
    inner: Arc<Inner>,
}

struct Inner {
    store: Store,
    options: Options,
    /// For webhooks: guarded, no redirects.
    http: GuardedClient,
    /// Root as last read (the contact used while storage cannot be read).
    root: Mutex<Option<User>>,
}

impl RootAlerts {
    /// Alerts over these handles, posting webhooks with `http`.
    pub fn new(store: Store, options: Options, http: GuardedClient) -> RootAlerts {
        RootAlerts {
            inner: Arc::new(Inner {
                store,
                options,
                http,
                root: Mutex::new(None),
            }),
        }
    }

    /// Watches `health` until the runtime stops, alerting on every change.
    pub fn watch_storage(&self, health: StorageHealth) -> tokio::task::JoinHandle<()> {
        let alerts = self.clone();
        tokio::spawn(async move {
            let mut faulted = false;
            let mut tick = tokio::time::interval(STORAGE_POLL);
            for n in 0u64.. {
                tick.tick().await;
                let fault = health.fault();
                if fault.is_some() == faulted {
                    if !faulted && n % ROOT_REFRESH == 0 {
                        // Keep root's contact fresh while it can be read.
                        alerts.root().await;
                    }
                    continue;
                }
                faulted = fault.is_some();
                let notice = match fault {
                    Some(fault) => notice(
                        "storage_fault",
                        "Billing stopped: the database cannot be written",
                        "Paid requests are refused until the database can be written again: {{value}}",
                        vec![fault.message],
                    ),
                    None => notice(
                        "storage_recovered",
                        "Billing resumed: the database is written again",
                        "The database is written again; paid requests are served.",
                        Vec::new(),
                    ),
                };
                alerts.send(notice).await;
            }
        })
    }

    /// Root's user record (read now when storage allows, else the last one read).
    async fn root(&self) -> Option<User> {
        let read = self
            .inner
            .store
            .read(|rtx| {
                let (all, _) = users::list(rtx, 0, 1_000)?;
                Ok::<_, StorageError>(all.into_iter().find(|u| u.role >= ROLE_ROOT))
            })
            .await;
        let mut last = self
            .inner
            .root
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Ok(Some(root)) = read {
            *last = Some(root);
        }
        last.clone()
    }

    async fn send(&self, notice: Notice) {
        let Some(root) = self.root().await else {
            tracing::warn!(kind = notice.kind, "no root user to alert");
            return;
        };
        let options = self.inner.options.current();
        match deliver(&self.inner.http, &options, &root, &notice).await {
            Ok(Some(via)) => tracing::info!(kind = notice.kind, via, "root alerted"),
            Ok(None) => tracing::info!(
                kind = notice.kind,
                "root has no webhook, email address or SMTP server: alert not sent"
            ),
            Err(e) => tracing::warn!(kind = notice.kind, error = %e, "alerting root failed"),
        }
    }
}

impl ChannelWatch for RootAlerts {
    fn auto_disabled(&self, id: ChannelId, name: &str, reason: &str) {
        let notice = notice(
            "channel_disabled",
            "A channel was disabled automatically",
            "Channel {{value}} (#{{value}}) was disabled automatically: {{value}}",
            vec![name.to_owned(), id.0.to_string(), reason.to_owned()],
        );
        let alerts = self.clone();
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move { alerts.send(notice).await });
        }
    }
}

fn notice(kind: &'static str, title: &str, content: &str, values: Vec<String>) -> Notice {
    Notice {
        kind,
        title: title.to_owned(),
        content: content.to_owned(),
        values,
        timestamp: now_unix(),
    }
}
