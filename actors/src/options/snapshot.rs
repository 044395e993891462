//! `OptionsSnapshot`: every option with its effective value (stored, else default).

use std::collections::BTreeMap;
use std::sync::Arc;

use super::catalog::{self, CATALOG};
use super::component_prices::ComponentTable;
use super::limit_rules::{self, Rule};
use super::pricing::PriceTable;
use super::rate_limit::RateLimits;
use super::relay::RelayOptions;
use super::sensitive::SensitiveWords;

/// An immutable view of all options, built whole on every save.
#[derive(Debug, Clone)]
pub struct OptionsSnapshot {
    /// Effective value of every catalog key.
    values: BTreeMap<&'static str, String>,
    /// The price options, parsed once here so the relay never parses JSON per request.
    prices: PriceTable,
    /// The prompt sensitive-word matcher.
    sensitive: SensitiveWords,
    /// The per-user model request rate limits.
    rate_limits: RateLimits,
    /// UserUsableGroups parsed: the groups any user may pick for a key, with descriptions.
    usable_groups: BTreeMap<String, String>,
    /// BudgetTimeZone parsed: where calendar budget windows begin.
    budget_zone: jiff::tz::TimeZone,
    /// RateLimitRules parsed: the group and model rules of the rate-limit engine.
    limit_rules: Arc<[Rule]>,
    /// The options every relayed request reads, typed.
    relay: RelayOptions,
}

impl OptionsSnapshot {
    /// Overlays the stored values on the catalog defaults. Stored keys that left the catalog
    /// (or values that no longer validate) are ignored in favour of the default.
    pub fn from_stored(stored: BTreeMap<String, String>) -> Self {
        let values = CATALOG
            .iter()
            .map(|d| {
                let value = stored
                    .get(d.key)
                    .and_then(|v| catalog::normalize(d.key, v).ok())
                    .unwrap_or_else(|| d.default.to_owned());
                (d.key, value)
            })
            .collect::<BTreeMap<&'static str, String>>();
        let text = |k: &str| values.get(k).map_or("", String::as_str);
        let prices = PriceTable::new(
            text("ModelRatio"),
            text("CompletionRatio"),
            text("CacheRatio"),
            text("ModelPrice"),
            text("GroupRatio"),
        )
        .with_max_output(text("ModelMaxOutput"))
        .with_components(ComponentTable::new(
            text("AudioRatio"),
            text("AudioCompletionRatio"),
            text("ToolCallPrice"),
            text("ModelPriceTiers"),
        ));
        let flag = |k: &str| text(k) == "true";
        let int = |k: &str| text(k).parse::<i64>().unwrap_or(0);
        let sensitive = SensitiveWords::new(
            flag("CheckSensitiveEnabled") && flag("CheckSensitiveOnPromptEnabled"),
            text("SensitiveWords"),
        );
        let rate_limits = RateLimits::new(
            flag("ModelRequestRateLimitEnabled"),
            int("ModelRequestRateLimitDurationMinutes"),
            int("ModelRequestRateLimitCount"),
            int("ModelRequestRateLimitSuccessCount"),
            text("ModelRequestRateLimitGroup"),
        );
        let usable_groups = serde_json::from_str(text("UserUsableGroups")).unwrap_or_default();
        let budget_zone =
            jiff::tz::TimeZone::get(text("BudgetTimeZone")).unwrap_or(jiff::tz::TimeZone::UTC);
        let limit_rules = limit_rules::parse(text("RateLimitRules"))
            .unwrap_or_default()
            .into();
        let relay = RelayOptions::new(text);
        OptionsSnapshot {
            relay,
            values,
            prices,
            sensitive,
            rate_limits,
            usable_groups,
            budget_zone,
            limit_rules,
        }
    }

    /// The options every relayed request reads, typed once here.
    pub fn relay(&self) -> &RelayOptions {
        &self.relay
    }

    /// The group and model rate-limit rules (RateLimitRules).
    pub fn limit_rules(&self) -> &Arc<[Rule]> {
        &self.limit_rules
    }

    /// The prompt sensitive-word matcher.
    pub fn sensitive_words(&self) -> &SensitiveWords {
        &self.sensitive
    }

    /// The per-user model request rate limits.
    pub fn rate_limits(&self) -> &RateLimits {
        &self.rate_limits
    }

    /// Whether a user whose own group is `own` may use `group` (their own, or one of
    /// UserUsableGroups).
    pub fn group_usable(&self, own: &str, group: &str) -> bool {
        group == own || self.usable_groups.contains_key(group)
    }

    /// The time zone of calendar budget windows (BudgetTimeZone).
    pub fn budget_zone(&self) -> &jiff::tz::TimeZone {
        &self.budget_zone
    }

    /// The parsed price table.
    pub fn prices(&self) -> &PriceTable {
        &self.prices
    }

    /// The defaults alone.
    pub fn defaults() -> Self {
        Self::from_stored(BTreeMap::new())
    }

    /// The text of `key` ("" for a key outside the catalog).
    pub fn text(&self, key: &str) -> &str {
        self.values.get(key).map_or("", String::as_str)
    }

    /// `key` read as a boolean.
    pub fn flag(&self, key: &str) -> bool {
        self.text(key) == "true"
    }

    /// `key` read as an integer (0 when it is not one).
    pub fn int(&self, key: &str) -> i64 {
        self.text(key).parse().unwrap_or(0)
    }

    /// `key` read as a number (0 when it is not one).
    pub fn number(&self, key: &str) -> f64 {
        self.text(key).parse().unwrap_or(0.0)
    }

    /// Every key that may be shown to an admin (secrets left out), with its value.
    pub fn public_entries(&self) -> impl Iterator<Item = (&'static str, &str)> {
        CATALOG
            .iter()
            .filter(|d| !d.secret)
            .map(|d| (d.key, self.text(d.key)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_values_override_defaults_and_invalid_ones_fall_back() {
        let stored = BTreeMap::from([
            ("Price".to_owned(), "8".to_owned()),
            ("RetryTimes".to_owned(), "-4".to_owned()),
        ]);
        let snap = OptionsSnapshot::from_stored(stored);
        assert_eq!(snap.number("Price"), 8.0);
        assert_eq!(
            snap.int("RetryTimes"),
            0,
            "an invalid stored value falls back"
        );
        assert_eq!(snap.int("QuotaPerUnit"), 500_000);
        assert!(snap.flag("PasswordLoginEnabled"));
    }

    #[test]
    fn public_entries_never_include_secrets() {
        let snap = OptionsSnapshot::defaults();
        assert!(
            snap.public_entries()
                .all(|(k, _)| k != "SMTPToken" && k != "EpayKey")
        );
        assert!(snap.public_entries().any(|(k, _)| k == "SMTPServer"));
    }
}
