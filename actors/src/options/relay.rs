//! `RelayOptions`: the options every relayed request reads, typed once when the snapshot is
//! built, so the request path reads fields instead of looking keys up in the string map and
//! parsing their text (about seventeen lookups a request; issue P17 item 1's profile).

/// The relay's options as typed values (each read exactly as [`super::OptionsSnapshot::flag`],
/// [`super::OptionsSnapshot::int`] and [`super::OptionsSnapshot::number`] read its key).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RelayOptions {
    /// StopOnSensitiveEnabled.
    pub stop_on_sensitive: bool,
    /// SelfUseModeEnabled.
    pub self_use_mode: bool,
    /// DefaultModelRatio.
    pub default_model_ratio: f64,
    /// QuotaPerUnit.
    pub quota_per_unit: i64,
    /// DefaultOutputReserve.
    pub default_output_reserve: i64,
    /// DefaultOutputCap.
    pub default_output_cap: i64,
    /// PreConsumedQuota.
    pub pre_consumed_quota: i64,
    /// DebtAllowance.
    pub debt_allowance: i64,
    /// global.pass_through_request_enabled.
    pub pass_through: bool,
    /// LogConsumeEnabled.
    pub log_consume: bool,
    /// ErrorLogEnabled.
    pub error_log: bool,
    /// RetryTimes.
    pub retry_times: i64,
    /// general_setting.ping_interval_enabled.
    pub ping_enabled: bool,
    /// general_setting.ping_interval_seconds.
    pub ping_seconds: i64,
    /// StickyRoutingMaxEntries.
    pub sticky_max_entries: i64,
    /// StickyRoutingTtlSeconds.
    pub sticky_ttl_seconds: i64,
    /// RelayBodyBudgetMB.
    pub body_budget_mb: i64,
    /// RelayBodyBudgetPerKeyMB.
    pub body_budget_per_key_mb: i64,
}

impl RelayOptions {
    /// Reads the relay's options through `text` (a key's effective value).
    pub fn new<'a>(text: impl Fn(&str) -> &'a str) -> RelayOptions {
        let flag = |k: &str| text(k) == "true";
        let int = |k: &str| text(k).parse::<i64>().unwrap_or(0);
        let number = |k: &str| text(k).parse::<f64>().unwrap_or(0.0);
        RelayOptions {
            stop_on_sensitive: flag("StopOnSensitiveEnabled"),
            self_use_mode: flag("SelfUseModeEnabled"),
            default_model_ratio: number("DefaultModelRatio"),
            quota_per_unit: int("QuotaPerUnit"),
            default_output_reserve: int("DefaultOutputReserve"),
            default_output_cap: int("DefaultOutputCap"),
            pre_consumed_quota: int("PreConsumedQuota"),
            debt_allowance: int("DebtAllowance"),
            pass_through: flag("global.pass_through_request_enabled"),
            log_consume: flag("LogConsumeEnabled"),
            error_log: flag("ErrorLogEnabled"),
            retry_times: int("RetryTimes"),
            ping_enabled: flag("general_setting.ping_interval_enabled"),
            ping_seconds: int("general_setting.ping_interval_seconds"),
            sticky_max_entries: int("StickyRoutingMaxEntries"),
            sticky_ttl_seconds: int("StickyRoutingTtlSeconds"),
            body_budget_mb: int("RelayBodyBudgetMB"),
            body_budget_per_key_mb: int("RelayBodyBudgetPerKeyMB"),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::RelayOptions;
    use crate::options::OptionsSnapshot;

    /// Each field reads its own key: every key stored with a value other than its default
    /// changes exactly the field named for it.
    #[test]
    fn each_field_reads_its_key() {
        let defaults = OptionsSnapshot::defaults();
        assert_eq!(defaults.relay().quota_per_unit, 500_000);
        assert_eq!(defaults.relay().default_output_cap, 32_768);
        assert!(defaults.relay().stop_on_sensitive && defaults.relay().log_consume);
        assert!(!defaults.relay().pass_through && !defaults.relay().ping_enabled);
        let stored: BTreeMap<String, String> = [
            ("StopOnSensitiveEnabled", "false"),
            ("SelfUseModeEnabled", "true"),
            ("DefaultModelRatio", "2.5"),
            ("QuotaPerUnit", "1000"),
            ("DefaultOutputReserve", "11"),
            ("DefaultOutputCap", "12"),
            ("PreConsumedQuota", "13"),
            ("DebtAllowance", "14"),
            ("global.pass_through_request_enabled", "true"),
            ("LogConsumeEnabled", "false"),
            ("ErrorLogEnabled", "false"),
            ("RetryTimes", "3"),
            ("general_setting.ping_interval_enabled", "true"),
            ("general_setting.ping_interval_seconds", "15"),
            ("StickyRoutingMaxEntries", "16"),
            ("StickyRoutingTtlSeconds", "17"),
            ("RelayBodyBudgetMB", "18"),
            ("RelayBodyBudgetPerKeyMB", "19"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
        let relay = OptionsSnapshot::from_stored(stored).relay().clone();
        let expected = RelayOptions {
            stop_on_sensitive: false,
            self_use_mode: true,
            default_model_ratio: 2.5,
            quota_per_unit: 1000,
            default_output_reserve: 11,
            default_output_cap: 12,
            pre_consumed_quota: 13,
            debt_allowance: 14,
            pass_through: true,
            log_consume: false,
            error_log: false,
            retry_times: 3,
            ping_enabled: true,
            ping_seconds: 15,
            sticky_max_entries: 16,
            sticky_ttl_seconds: 17,
            body_budget_mb: 18,
            body_budget_per_key_mb: 19,
        };
        assert_eq!(relay, expected);
    }
}
