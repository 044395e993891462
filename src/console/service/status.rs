//! The system status object (spec 01 §3), derived from the options snapshot and setup state.
//! It is public: a storage fault is reported as a fixed sentence and its start time, never the
//! error's own text (an OS error, a file path), which is in the server log.

use serde::Serialize;
use serde_json::Value;
use tollgate_actors::options::OptionsSnapshot;

use super::setup::read_state;
use crate::clock::now_unix;
use crate::error::ConsoleError;
use crate::state::AppState;

/// GET /api/status data: every field of spec 01 §3 plus what the shell and wallet read.
#[derive(Debug, Serialize)]
pub struct Status {
    /// SystemName.
    pub system_name: String,
    /// Logo URL.
    pub logo: String,
    /// Custom footer HTML.
    pub footer_html: String,
    /// Quota units per US$1.
    pub quota_per_unit: i64,
    /// Show amounts in currency rather than quota units.
    pub display_in_currency: bool,
    /// Drawing (Midjourney) pages enabled.
    pub enable_drawing: bool,
    /// Task (Suno) pages enabled.
    pub enable_task: bool,
    /// Dashboard data enabled.
    pub enable_data_export: bool,
    /// Chat client deep-link templates (parsed Chats option).
    pub chats: Value,
    /// Default dashboard granularity.
    pub data_export_default_time: String,
    /// Side menu collapsed by default.
    pub default_collapse_sidebar: bool,
    /// Midjourney callback notifications.
    pub mj_notify_enabled: bool,
    /// Legacy chat link (always empty; chats replaced it).
    pub chat_link: String,
    /// Legacy chat link 2 (always empty).
    pub chat_link2: String,
    /// Documentation link for the top bar.
    pub docs_link: String,
    /// Registration requires an email code.
    pub email_verification: bool,
    /// Turnstile bot check on.
    pub turnstile_check: bool,
    /// Turnstile site key (public).
    pub turnstile_site_key: String,
    /// GitHub login on.
    pub github_oauth: bool,
    /// GitHub client id (public).
    pub github_client_id: String,
    /// OIDC login on.
    pub oidc_enabled: bool,
    /// OIDC client id.
    pub oidc_client_id: String,
    /// OIDC authorization endpoint.
    pub oidc_authorization_endpoint: String,
    /// WeChat login on.
    pub wechat_login: bool,
    /// WeChat QR code image.
    pub wechat_qrcode: String,
    /// Telegram login on.
    pub telegram_oauth: bool,
    /// Telegram bot name.
    pub telegram_bot_name: String,
    /// LinuxDO login on.
    pub linuxdo_oauth: bool,
    /// LinuxDO client id.
    pub linuxdo_client_id: String,
    /// Top-up price (currency per US$1).
    pub price: f64,
    /// Self-use mode.
    pub self_use_mode_enabled: bool,
    /// Demo-site mode.
    pub demo_site_enabled: bool,
    /// Always "redb".
    pub database_type: &'static str,
    /// Public server address.
    pub server_address: String,
    /// External top-up link.
    pub top_up_link: String,
    /// Minimum online top-up amount.
    pub min_topup: i64,
    /// Online payment configured.
    pub enable_online_topup: bool,
    /// Registration open.
    pub register_enabled: bool,
    /// Password login allowed.
    pub password_login_enabled: bool,
    /// Password registration allowed.
    pub password_register_enabled: bool,
    /// Token statistics shown.
    pub display_token_stat_enabled: bool,
    /// Tollgate version.
    pub version: &'static str,
    /// Setup completed.
    pub setup: bool,
    /// Root user exists.
    pub root_init: bool,
    /// Unix seconds this process started.
    pub start_time: i64,
    /// Set while settlements cannot be saved (a full disk, an I/O error): since when. Paid
    /// relay requests are refused (503) meanwhile; `null` when healthy.
    pub storage_fault: Option<PublicFault>,
}

/// A storage fault as the public status shows it.
#[derive(Debug, Clone, Serialize)]
pub struct PublicFault {
    /// What fails, in a fixed sentence (the error itself is in the server log).
    pub message: &'static str,
    /// Unix seconds of the first failure of this fault.
    pub since: i64,
}

/// The status's sentence for a fault of the log writer's commits or of the journal.
const SETTLEMENTS_FAILING: &str = "settlements cannot be saved (the server log says why)";
/// The status's sentence for a database that cannot be read.
const DATABASE_UNREADABLE: &str = "the database cannot be read (the server log says why)";

/// Builds GET /api/status's data.
pub async fn build(state: &AppState) -> Result<Status, ConsoleError> {
    let mut fault = state.quota.storage_health().fault().map(|f| PublicFault {
        message: SETTLEMENTS_FAILING,
        since: f.since,
    });
    let (setup, root_init) = match read_state(state).await {
        Ok(read) => read,
        // A database that cannot be read (a fault the writer may not have met yet, or the
        // file being reopened) is itself the news: the status still answers and says so.
        Err(e) => {
            tracing::warn!(error = %e, "status: the database cannot be read");
            fault = fault.or(Some(PublicFault {
                message: DATABASE_UNREADABLE,
                since: now_unix(),
            }));
            (true, true)
        }
    };
    let mut status = from_options(&state.options.current(), setup, root_init, state.started_at);
    status.storage_fault = fault;
    Ok(status)
}

/// The status object from an options snapshot (pure).
pub fn from_options(o: &OptionsSnapshot, setup: bool, root_init: bool, start_time: i64) -> Status {
    let online_topup = !o.text("PayAddress").is_empty()
        && !o.text("EpayId").is_empty()
        && !o.text("EpayKey").is_empty();
    Status {
        system_name: o.text("SystemName").to_owned(),
        logo: o.text("Logo").to_owned(),
        footer_html: o.text("Footer").to_owned(),
        quota_per_unit: o.int("QuotaPerUnit"),
        display_in_currency: o.flag("DisplayInCurrencyEnabled"),
        enable_drawing: o.flag("DrawingEnabled"),
        enable_task: o.flag("TaskEnabled"),
        enable_data_export: o.flag("DataExportEnabled"),
        chats: serde_json::from_str(o.text("Chats")).unwrap_or_else(|_| Value::Array(Vec::new())),
        data_export_default_time: o.text("DataExportDefaultTime").to_owned(),
        default_collapse_sidebar: o.flag("DefaultCollapseSidebar"),
        mj_notify_enabled: o.flag("MjNotifyEnabled"),
        chat_link: String::new(),
        chat_link2: String::new(),
        docs_link: o.text("general_setting.docs_link").to_owned(),
        email_verification: o.flag("EmailVerificationEnabled"),
        turnstile_check: o.flag("TurnstileCheckEnabled"),
        turnstile_site_key: o.text("TurnstileSiteKey").to_owned(),
        github_oauth: o.flag("GitHubOAuthEnabled"),
        github_client_id: o.text("GitHubClientId").to_owned(),
        oidc_enabled: o.flag("oidc.enabled"),
        oidc_client_id: o.text("oidc.client_id").to_owned(),
        oidc_authorization_endpoint: o.text("oidc.authorization_endpoint").to_owned(),
        wechat_login: o.flag("WeChatAuthEnabled"),
        wechat_qrcode: o.text("WeChatAccountQRCodeImageURL").to_owned(),
        telegram_oauth: o.flag("TelegramOAuthEnabled"),
        telegram_bot_name: o.text("TelegramBotName").to_owned(),
        linuxdo_oauth: o.flag("LinuxDOOAuthEnabled"),
        linuxdo_client_id: o.text("LinuxDOClientId").to_owned(),
        price: o.number("Price"),
        self_use_mode_enabled: o.flag("SelfUseModeEnabled"),
        demo_site_enabled: o.flag("DemoSiteEnabled"),
        database_type: "redb",
        server_address: o.text("ServerAddress").to_owned(),
        top_up_link: o.text("TopUpLink").to_owned(),
        min_topup: o.int("MinTopUp"),
        enable_online_topup: online_topup,
        register_enabled: o.flag("RegisterEnabled"),
        password_login_enabled: o.flag("PasswordLoginEnabled"),
        password_register_enabled: o.flag("PasswordRegisterEnabled"),
        display_token_stat_enabled: o.flag("DisplayTokenStatEnabled"),
        version: env!("CARGO_PKG_VERSION"),
        setup,
        root_init,
        start_time,
        storage_fault: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_follow_the_spec() {
        let s = from_options(&OptionsSnapshot::defaults(), false, false, 0);
        assert_eq!(s.quota_per_unit, 500_000);
        assert_eq!(s.price, 7.3);
        assert_eq!(s.min_topup, 1);
        assert_eq!(s.database_type, "redb");
        assert!(!s.self_use_mode_enabled);
        assert!(!s.enable_online_topup);
        assert!(s.chats.is_array());
    }

    #[test]
    fn status_never_leaks_secrets() {
        let stored = std::collections::BTreeMap::from([
            ("SMTPToken".to_owned(), "smtp-secret-value".to_owned()),
            ("EpayKey".to_owned(), "epay-secret-value".to_owned()),
            (
                "TurnstileSecretKey".to_owned(),
                "ts-secret-value".to_owned(),
            ),
        ]);
        let status = from_options(&OptionsSnapshot::from_stored(stored), true, true, 0);
        let text = serde_json::to_string(&status).expect("serialize");
        assert!(!text.contains("secret-value"), "{text}");
    }
}
