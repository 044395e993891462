//! The per-user model request rate limit (ModelRequestRateLimit* options), parsed once per
//! options snapshot: a window, a limit on every request and a limit on successful requests,
//! with per-group overrides (`ModelRequestRateLimitGroup`: `{"group": [total, success]}`).

use std::collections::HashMap;
use std::time::Duration;

/// The limits that apply to one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimit {
    /// The sliding window.
    pub window: Duration,
    /// At most this many requests per window (0 = no limit).
    pub total: u32,
    /// At most this many successful requests per window (0 = no limit).
    pub success: u32,
}

/// The parsed rate-limit options.
#[derive(Debug, Clone, Default)]
pub struct RateLimits {
    /// `None` when ModelRequestRateLimitEnabled is off (or the window is 0 minutes).
    base: Option<RateLimit>,
    /// Per-group `(total, success)` overrides.
    groups: HashMap<String, (u32, u32)>,
}

impl RateLimits {
    /// Parses the options; an unparsable group map is ignored (the catalog validated it as
    /// JSON; entries that are not two non-negative integers are skipped).
    pub fn new(enabled: bool, minutes: i64, total: i64, success: i64, groups: &str) -> RateLimits {
        let minutes = u64::try_from(minutes).unwrap_or(0);
        if !enabled || minutes == 0 {
            return RateLimits::default();
        }
        let clamp = |n: i64| u32::try_from(n.max(0)).unwrap_or(u32::MAX);
        let groups = serde_json::from_str::<HashMap<String, serde_json::Value>>(groups)
            .unwrap_or_default()
            .into_iter()
            .filter_map(|(group, v)| {
                let pair = v.as_array()?;
                let n = |i: usize| pair.get(i).and_then(serde_json::Value::as_i64).map(clamp);
                Some((group, (n(0)?, n(1)?)))
            })
            .collect();
        RateLimits {
            base: Some(RateLimit {
                window: Duration::from_secs(minutes.saturating_mul(60)),
                total: clamp(total),
                success: clamp(success),
            }),
            groups,
        }
    }

    /// The limits for a request billed to `group`, `None` when there are none.
    pub fn for_group(&self, group: &str) -> Option<RateLimit> {
        let base = self.base?;
        let limit = match self.groups.get(group) {
            Some(&(total, success)) => RateLimit {
                total,
                success,
                ..base
            },
            None => base,
        };
        (limit.total > 0 || limit.success > 0).then_some(limit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn off_unless_enabled_with_a_window() {
        assert_eq!(RateLimits::new(false, 1, 5, 5, "{}").for_group("x"), None);
        assert_eq!(RateLimits::new(true, 0, 5, 5, "{}").for_group("x"), None);
    }

    #[test]
    fn group_overrides_replace_both_counts() {
        let limits = RateLimits::new(true, 2, 10, 1000, r#"{"vip":[0,5],"bad":"x"}"#);
        let base = limits.for_group("default");
        assert_eq!(
            base,
            Some(RateLimit {
                window: Duration::from_secs(120),
                total: 10,
                success: 1000
            })
        );
        assert_eq!(
            limits.for_group("vip").map(|l| (l.total, l.success)),
            Some((0, 5))
        );
        assert_eq!(limits.for_group("bad"), base);
        let none = RateLimits::new(true, 1, 0, 1, r#"{"free":[0,0]}"#);
        assert_eq!(none.for_group("free"), None);
    }
}
