//! Group and model rate-limit rules (P15 item 1), the option `RateLimitRules`: a JSON list, each
//! rule naming a group, a model or both and the limits every request of that group, model or
//! pair shares (`concurrency_limit`, `rpm_limit`, `tpm_limit`, `rpd_limit`, 0 = none), with an
//! optional queue (`queue`: at most so many requests wait, each at most `queue_timeout_ms`).
//! Parsed once per options snapshot; a refused list names its rule and what is wrong
//! ([`RuleError`]), so the console can say it in the admin's language.
//!
//! ```json
//! [{"group": "free", "rpm_limit": 60},
//!  {"model": "gpt-4o", "concurrency_limit": 20, "queue": 50, "queue_timeout_ms": 5000},
//!  {"group": "vip", "model": "gpt-4o", "tpm_limit": 200000}]
//! ```

use serde::Deserialize;
use tollgate_storage::limits::Limits;

/// The most rules the option may hold.
pub const MAX_RULES: usize = 1000;
/// The most requests one rule's queue may hold.
pub const MAX_QUEUE: u32 = 10_000;
/// The longest a queued request may wait, in milliseconds.
pub const MAX_QUEUE_WAIT_MS: u32 = 600_000;

/// One rule as the admin writes it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    /// The group whose requests it covers (absent: every group).
    #[serde(default)]
    pub group: Option<String>,
    /// The model whose requests it covers (absent: every model).
    #[serde(default)]
    pub model: Option<String>,
    /// Requests in flight at once.
    #[serde(default)]
    pub concurrency_limit: u32,
    /// Requests per minute.
    #[serde(default)]
    pub rpm_limit: u32,
    /// Tokens per minute.
    #[serde(default)]
    pub tpm_limit: u32,
    /// Requests per day.
    #[serde(default)]
    pub rpd_limit: u32,
    /// Requests that may wait for this rule (0: none wait, they are refused).
    #[serde(default)]
    pub queue: u32,
    /// How long a request may wait in the queue, in milliseconds.
    #[serde(default)]
    pub queue_timeout_ms: u32,
}

impl Rule {
    /// Its four limits.
    pub fn limits(&self) -> Limits {
        Limits {
            concurrency_limit: self.concurrency_limit,
            rpm_limit: self.rpm_limit,
            tpm_limit: self.tpm_limit,
            rpd_limit: self.rpd_limit,
        }
    }

    /// Whether it covers a request of `group` for `model`.
    pub fn covers(&self, group: &str, model: &str) -> bool {
        self.group.as_deref().is_none_or(|g| g == group)
            && self.model.as_deref().is_none_or(|m| m == model)
    }
}

/// Why `RateLimitRules` was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RuleError {
    /// Not a list of rule objects (the parser's reason).
    #[error("RateLimitRules must be a list of rules: {0}")]
    Shape(String),
    /// More than [`MAX_RULES`] rules.
    #[error("RateLimitRules holds at most {MAX_RULES} rules")]
    TooMany,
    /// A rule with neither group nor model (rule numbers count from 1).
    #[error("rate limit rule {0} names neither a group nor a model")]
    NoTarget(usize),
    /// A rule with no limit.
    #[error("rate limit rule {0} sets no limit")]
    NoLimit(usize),
    /// A rule covering what an earlier one covers.
    #[error("rate limit rule {0} covers the same group and model as rule {1}")]
    Duplicate(usize, usize),
    /// A queue without a wait, or above the bounds.
    #[error(
        "rate limit rule {0}: a queue holds 1 to {MAX_QUEUE} requests, each waiting 1 to {MAX_QUEUE_WAIT_MS} ms"
    )]
    Queue(usize),
}

/// Parses and checks the option's text.
pub fn parse(text: &str) -> Result<Vec<Rule>, RuleError> {
    let rules: Vec<Rule> = serde_json::from_str(if text.trim().is_empty() { "[]" } else { text })
        .map_err(|e| RuleError::Shape(e.to_string()))?;
    if rules.len() > MAX_RULES {
        return Err(RuleError::TooMany);
    }
    for (i, rule) in rules.iter().enumerate() {
        let n = i + 1;
        let named = |v: &Option<String>| v.as_deref().is_some_and(|s| !s.trim().is_empty());
        if !named(&rule.group) && !named(&rule.model) {
            return Err(RuleError::NoTarget(n));
        }
        if rule.limits().is_none() {
            return Err(RuleError::NoLimit(n));
        }
        let queue_ok = (rule.queue == 0 && rule.queue_timeout_ms == 0)
            || (rule.queue > 0
                && rule.queue <= MAX_QUEUE
                && rule.queue_timeout_ms > 0
                && rule.queue_timeout_ms <= MAX_QUEUE_WAIT_MS);
        if !queue_ok {
            return Err(RuleError::Queue(n));
        }
        if let Some(j) = rules[..i]
            .iter()
            .position(|o| o.group == rule.group && o.model == rule.model)
        {
            return Err(RuleError::Duplicate(n, j + 1));
        }
    }
    Ok(rules)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_parse_and_cover_their_group_and_model() {
        let rules = parse(
            r#"[{"group":"free","rpm_limit":60},
                {"model":"gpt-4o","concurrency_limit":2,"queue":5,"queue_timeout_ms":1000},
                {"group":"vip","model":"gpt-4o","tpm_limit":1000}]"#,
        )
        .unwrap();
        assert_eq!(rules.len(), 3);
        assert!(rules[0].covers("free", "anything"));
        assert!(!rules[0].covers("vip", "anything"));
        assert!(rules[1].covers("vip", "gpt-4o"));
        assert!(rules[2].covers("vip", "gpt-4o"));
        assert!(!rules[2].covers("free", "gpt-4o"));
        assert_eq!(parse("").unwrap(), Vec::new());
    }

    #[test]
    fn a_refusal_names_the_rule_and_what_is_wrong() {
        assert!(matches!(parse("{}"), Err(RuleError::Shape(_))));
        assert!(matches!(
            parse(r#"[{"group":"a","rpm":1}]"#),
            Err(RuleError::Shape(_))
        ));
        assert_eq!(parse(r#"[{"rpm_limit":1}]"#), Err(RuleError::NoTarget(1)));
        assert_eq!(
            parse(r#"[{"group":"a","rpm_limit":1},{"group":"b"}]"#),
            Err(RuleError::NoLimit(2))
        );
        assert_eq!(
            parse(r#"[{"group":"a","rpm_limit":1},{"group":"a","tpm_limit":1}]"#),
            Err(RuleError::Duplicate(2, 1))
        );
        assert_eq!(
            parse(r#"[{"model":"m","rpm_limit":1,"queue":3}]"#),
            Err(RuleError::Queue(1))
        );
        assert_eq!(
            parse(r#"[{"model":"m","rpm_limit":1,"queue_timeout_ms":3}]"#),
            Err(RuleError::Queue(1))
        );
    }
}
