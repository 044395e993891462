//! Who may read which runtime option. Root reads and writes every option (secrets stay
//! write-only); an admin who is not root reads only [`ADMIN_READABLE`], the operation settings
//! a channel or user admin works with, and writes none (new-api keeps `/api/option/` root-only;
//! spec 01 shows the settings menu to any admin, so it shows them this subset, read-only).
//!
//! Left out on purpose: login and OAuth settings, SMTP, the server, worker and payment
//! addresses, and page content (notice, logo, footer, about, home page, chat and nav links):
//! whoever changes or reads those can reroute root's mail, payments or sign-ins, or put
//! script in root's console.

use tollgate_actors::options::OptionsSnapshot;

/// The options an admin who is not root may read (never write).
pub const ADMIN_READABLE: &[&str] = &[
    "QuotaPerUnit",
    "RetryTimes",
    "DisplayInCurrencyEnabled",
    "DisplayTokenStatEnabled",
    "DefaultCollapseSidebar",
    "DemoSiteEnabled",
    "SelfUseModeEnabled",
    "DrawingEnabled",
    "TaskEnabled",
    "MjNotifyEnabled",
    "MjAccountFilterEnabled",
    "MjForwardUrlEnabled",
    "MjModeClearEnabled",
    "MjActionCheckSuccessEnabled",
    "TaskTimeoutMinutes",
    "CheckSensitiveEnabled",
    "CheckSensitiveOnPromptEnabled",
    "StopOnSensitiveEnabled",
    "SensitiveWords",
    "LogConsumeEnabled",
    "ErrorLogEnabled",
    "DataExportEnabled",
    "DataExportInterval",
    "DataExportDefaultTime",
    "LogRetentionDays",
    "ChannelDisableThreshold",
    "QuotaRemindThreshold",
    "AutomaticDisableChannelEnabled",
    "AutomaticEnableChannelEnabled",
    "AutomaticDisableKeywords",
    "QuotaForNewUser",
    "PreConsumedQuota",
    "QuotaForInviter",
    "QuotaForInvitee",
    "StreamCacheQueueLength",
    "GroupRatio",
    "UserUsableGroups",
    "ModelPrice",
    "ModelRatio",
    "CacheRatio",
    "CompletionRatio",
    "ModelMaxOutput",
    "AudioRatio",
    "AudioCompletionRatio",
    "ToolCallPrice",
    "ModelPriceTiers",
    "DefaultModelRatio",
    "DefaultOutputReserve",
    "DefaultOutputCap",
    "DebtAllowance",
    "BudgetTimeZone",
    "CountTokensRateLimit",
    "RelayBodyBudgetMB",
    "RelayBodyBudgetPerKeyMB",
    "ModelRequestRateLimitEnabled",
    "ModelRequestRateLimitCount",
    "ModelRequestRateLimitSuccessCount",
    "ModelRequestRateLimitDurationMinutes",
    "ModelRequestRateLimitGroup",
    "gemini.safety_settings",
    "gemini.version_settings",
    "gemini.supported_imagine_models",
    "gemini.thinking_adapter_enabled",
    "gemini.thinking_adapter_budget_tokens_percentage",
    "claude.model_headers_settings",
    "claude.thinking_adapter_enabled",
    "claude.default_max_tokens",
    "claude.thinking_adapter_budget_tokens_percentage",
    "global.pass_through_request_enabled",
    "general_setting.ping_interval_enabled",
    "general_setting.ping_interval_seconds",
];

/// The options `root` (or an admin who is not root) may read, with their values; secrets never.
pub fn readable(snapshot: &OptionsSnapshot, root: bool) -> Vec<(&'static str, &str)> {
    snapshot
        .public_entries()
        .filter(|(key, _)| root || ADMIN_READABLE.contains(key))
        .collect()
}

#[cfg(test)]
mod tests {
    use tollgate_actors::options::catalog;

    use super::*;

    #[test]
    fn every_admin_readable_key_exists_and_none_is_a_secret() {
        for key in ADMIN_READABLE {
            let def = catalog::find(key);
            assert!(def.is_some_and(|d| !d.secret), "{key}");
        }
    }

    #[test]
    fn no_mail_sign_in_payment_address_or_page_content_key_is_admin_readable() {
        let forbidden = |key: &str| {
            key.starts_with("SMTP")
                || key.starts_with("oidc.")
                || key.contains("OAuth")
                || key.contains("Client")
                || key.contains("WeChat")
                || key.contains("Telegram")
                || key.contains("Turnstile")
                || key.contains("LinuxDO")
                || key.contains("Email")
                || key.contains("Address")
                || key.contains("Epay")
                || key.contains("Pay")
                || key.contains("TopUp")
                || key.contains("Topup")
                || key.starts_with("Worker")
                || key.starts_with("Password")
                || key == "RegisterEnabled"
                || key == "Price"
                || [
                    "Notice",
                    "SystemName",
                    "Logo",
                    "Footer",
                    "About",
                    "HomePageContent",
                    "Providers",
                    "CustemNavLinks",
                    "TypingList",
                    "Advantages",
                    "ModelDescriptions",
                    "ImageReadProxy",
                    "Chats",
                    "general_setting.docs_link",
                ]
                .contains(&key)
        };
        for key in ADMIN_READABLE {
            assert!(!forbidden(key), "{key} must be root-only");
        }
        let snap = OptionsSnapshot::defaults();
        let admin = readable(&snap, false);
        assert_eq!(admin.len(), ADMIN_READABLE.len());
        assert!(readable(&snap, true).len() > admin.len());
    }
}
