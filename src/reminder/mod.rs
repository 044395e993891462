//! The low-balance reminder (issue P4 item 8): when a settled request leaves a user's balance
//! below their `quota_warning_threshold` (user setting; 0 or unset: the QuotaRemindThreshold
//! option), the user is told by email or by their signed webhook (`notify_type`), at most once
//! per [`WINDOW_SECS`].
//!
//! - Trigger: the quota book calls [`QuotaReminder::settled`] after every charging settlement.
//!   That runs on the request's task, so it only compares numbers it already holds in memory
//!   (the user directory's facts, the options snapshot, the last reminder time) and hands a due
//!   reminder to a spawned task; the relay never waits for mail or webhooks.
//! - At most once per window, across restarts: the sending task first claims the reminder in
//!   storage ([`tollgate_storage::reminders::claim`]: the last-sent time is checked and
//!   replaced in one write transaction), so a restart, or two requests settling at once, cannot
//!   send a second reminder inside the window. The in-memory map only spares that write for the
//!   requests that follow. A failed send keeps its claim: a broken webhook is retried after the
//!   window, not on every request.

pub mod root_alerts;
pub mod webhook;

use std::sync::Arc;

use dashmap::DashMap;
use tollgate_actors::options::{Options, OptionsSnapshot};
use tollgate_actors::quota::SettleWatch;
use tollgate_actors::user_directory::UserDirectory;
use tollgate_storage::{StorageError, Store, UserId, reminders, users};

use crate::clock::now_unix;
use crate::console::service::personal::UserSetting;
use crate::console::service::redemptions::format_quota;
use crate::mail;
use crate::outbound::GuardedClient;
use webhook::Notice;

/// At most one low-balance reminder per user in this many seconds.
pub const WINDOW_SECS: i64 = 2 * 60 * 60;

/// The reminder kind in storage and the webhook `type`.
const KIND: &str = "quota_exceed";

/// Watches settlements and sends low-balance reminders. Cheap to clone.
#[derive(Clone)]
pub struct QuotaReminder {
    inner: Arc<Inner>,
}

struct Inner {
    store: Store,
    options: Options,
    users: UserDirectory,
    /// user → when a reminder was last claimed (or found claimed) by this process.
    recent: DashMap<UserId, i64>,
    /// For webhooks: guarded, no redirects.
    http: GuardedClient,
}

/// A reminder that is due, as handed to the sending task.
struct Due {
    user: UserId,
    balance: i64,
    threshold: i64,
}

impl QuotaReminder {
    /// A reminder over these handles, posting webhooks with `http`.
    pub fn new(
        store: Store,
        options: Options,
        users: UserDirectory,
        http: GuardedClient,
    ) -> QuotaReminder {
        QuotaReminder {
            inner: Arc::new(Inner {
                store,
                options,
                users,
                recent: DashMap::new(),
                http,
            }),
        }
    }

    /// The threshold of `user` (their own, else the site's), if their facts are loaded.
    fn threshold(&self, user: UserId, options: &OptionsSnapshot) -> Option<i64> {
        let facts = self.inner.users.peek(user)?;
        Some(match facts.quota_warning_threshold {
            0 => options.int("QuotaRemindThreshold"),
            own => own,
        })
    }

    /// Claims and sends one due reminder.
    async fn send(self, due: Due) {
        let inner = &self.inner;
        let now = now_unix();
        let user = due.user;
        let claimed = inner
            .store
            .write(move |wtx| {
                if !reminders::claim(wtx, user, KIND, now, WINDOW_SECS)? {
                    return Ok::<_, StorageError>(None);
                }
                users::get_rw(wtx, user)
            })
            .await;
        let stored = match claimed {
            Ok(Some(stored)) => stored,
            Ok(None) => {
                // Sent before (e.g. before a restart): remember when, to skip storage until then.
                let at = inner
                    .store
                    .read(move |rtx| reminders::last_sent(rtx, user, KIND))
                    .await
                    .ok()
                    .flatten()
                    .unwrap_or(now);
                inner.recent.insert(user, at);
                return;
            }
            Err(e) => {
                tracing::warn!(user = %user, error = %e, "claiming the quota reminder failed");
                return;
            }
        };
        let options = inner.options.current();
        let notice = notice(&options, due.balance, due.threshold, now);
        match deliver(&inner.http, &options, &stored, &notice).await {
            Ok(Some(via)) => tracing::info!(user = %user, via, "quota reminder sent"),
            // Nothing to send with: not a failure worth a warning.
            Ok(None) => {
                tracing::debug!(user = %user, "no email address or no SMTP; quota reminder skipped")
            }
            Err(e) => {
                tracing::warn!(user = %user, error = %e, "the quota reminder could not be sent")
            }
        }
    }
}

/// Sends `notice` to `user` the way their settings say: their signed webhook, else email (their
/// notification address, else their account's) when an address and SMTP are set. `Ok(None)`:
/// nothing to send with; `Ok(Some(how))` once sent.
pub async fn deliver(
    http: &GuardedClient,
    options: &OptionsSnapshot,
    user: &users::User,
    notice: &Notice,
) -> Result<Option<&'static str>, String> {
    let setting: UserSetting = serde_json::from_str(&user.setting).unwrap_or_default();
    if setting.notify_type == "webhook" {
        webhook::post(http, &setting.webhook_url, &setting.webhook_secret, notice).await?;
        return Ok(Some("webhook"));
    }
    let to = match setting.notification_email.trim() {
        "" => user.email.trim(),
        own => own,
    };
    if to.is_empty() || options.text("SMTPServer").is_empty() {
        return Ok(None);
    }
    let html = format!("<p>{}</p>", notice.rendered());
    let subject = format!("{}: {}", options.text("SystemName"), notice.title);
    mail::send(options, to, &subject, html)
        .await
        .map_err(|e| e.to_string())?;
    Ok(Some("email"))
}

impl SettleWatch for QuotaReminder {
    fn settled(&self, user: UserId, balance: i64) {
        let options = self.inner.options.current();
        let Some(threshold) = self.threshold(user, &options) else {
            return;
        };
        if balance >= threshold {
            return;
        }
        let now = now_unix();
        {
            // Check and mark under the map's entry lock, so concurrent settlements of one user
            // hand over one reminder.
            let mut last = self.inner.recent.entry(user).or_insert(i64::MIN);
            if now.saturating_sub(*last) < WINDOW_SECS {
                return;
            }
            *last = now;
        }
        let due = Due {
            user,
            balance,
            threshold,
        };
        // Settlements run on the runtime; without one (never in practice) there is no sender.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(self.clone().send(due));
        }
    }
}

/// The low-balance notice.
fn notice(options: &OptionsSnapshot, balance: i64, threshold: i64, now: i64) -> Notice {
    let per_unit = options.int("QuotaPerUnit");
    let currency = options.flag("DisplayInCurrencyEnabled");
    Notice {
        kind: KIND,
        title: "Your quota is running low".into(),
        content: "Your remaining quota is {{value}}, below your reminder threshold of {{value}}. \
                  Top up to keep your API keys working: {{value}}"
            .into(),
        values: vec![
            format_quota(balance, per_unit, currency),
            format_quota(threshold, per_unit, currency),
            format!("{}/topup", options.text("ServerAddress")),
        ],
        timestamp: now,
    }
}
