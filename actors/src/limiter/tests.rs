use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use tollgate_storage::limits::{KeyLimit, Limits, Owner, OwnerLimits};
use tollgate_storage::{ChannelId, TokenId, UserId};

use super::*;
use crate::options::limit_rules;
use crate::options::rate_limit::RateLimit;

/// A limiter whose clock is the returned cell (Unix ms).
fn limiter() -> (Limiter, Arc<AtomicI64>) {
    let now = Arc::new(AtomicI64::new(1_000_000));
    let clock = Arc::clone(&now);
    (
        Limiter::new(Arc::new(move || clock.load(Ordering::SeqCst))),
        now,
    )
}

fn limits(concurrency: u32, rpm: u32, tpm: u32, rpd: u32) -> OwnerLimits {
    OwnerLimits {
        limits: Limits {
            concurrency_limit: concurrency,
            rpm_limit: rpm,
            tpm_limit: tpm,
            rpd_limit: rpd,
        },
        key_limits: Vec::new(),
    }
}

fn ask(tokens: u64) -> Ask<'static> {
    Ask {
        user: UserId(1),
        token: Some(TokenId(7)),
        group: "default",
        model: "gpt-4o",
        tokens,
    }
}

#[test]
fn a_keys_rpm_holds_exactly_and_resets_a_minute_later() {
    let (l, now) = limiter();
    l.set(Owner::Token(TokenId(7)), limits(0, 3, 0, 0));
    let held: Vec<_> = (0..3).map(|_| l.admit(&ask(10), &[]).unwrap()).collect();
    assert_eq!(held[2].requests().unwrap().remaining, 0);
    let refused = l.admit(&ask(10), &[]).unwrap_err();
    assert_eq!(refused.scope, Scope::Token(TokenId(7)));
    assert_eq!(refused.kind, Kind::Rpm);
    assert_eq!(refused.limit, 3);
    assert_eq!(refused.retry_after_secs(), 60);
    assert!(refused.to_string().contains("API key 7"), "{refused}");
    now.fetch_add(59_999, Ordering::SeqCst);
    assert!(
        l.admit(&ask(10), &[]).is_err(),
        "not before the minute is over"
    );
    now.fetch_add(1, Ordering::SeqCst);
    assert!(l.admit(&ask(10), &[]).is_ok());
    assert_eq!(l.stats().refused("token", Kind::Rpm), 2);
}

#[test]
fn concurrency_is_given_back_when_the_admission_drops() {
    let (l, _) = limiter();
    l.set(Owner::User(UserId(1)), limits(2, 0, 0, 0));
    let a = l.admit(&ask(0), &[]).unwrap();
    let _b = l.admit(&ask(0), &[]).unwrap();
    let refused = l.admit(&ask(0), &[]).unwrap_err();
    assert_eq!(
        (refused.scope, refused.kind),
        (Scope::User(UserId(1)), Kind::Concurrency)
    );
    drop(a);
    assert!(l.admit(&ask(0), &[]).is_ok());
}

#[test]
fn tokens_are_reserved_from_the_estimate_and_corrected_at_settlement() {
    let (l, now) = limiter();
    l.set(Owner::Token(TokenId(7)), limits(0, 0, 1_000, 0));
    let mut first = l.admit(&ask(800), &[]).unwrap();
    assert_eq!(first.tokens().unwrap().remaining, 200);
    assert_eq!(l.admit(&ask(300), &[]).unwrap_err().kind, Kind::Tpm);
    now.fetch_add(2_000, Ordering::SeqCst);
    first.settle(100);
    let second = l.admit(&ask(300), &[]).unwrap();
    assert_eq!(second.tokens().unwrap().remaining, 600);
    let too_big = l.admit(&ask(5_000), &[]).unwrap_err();
    assert_eq!(too_big.kind, Kind::Tpm);
}

#[test]
fn the_strictest_rule_wins_and_a_refusal_takes_nothing() {
    let (l, _) = limiter();
    l.set(Owner::User(UserId(1)), limits(0, 10, 0, 0));
    let rules = limit_rules::parse(
        r#"[{"group":"default","rpm_limit":100},{"model":"gpt-4o","rpm_limit":2}]"#,
    )
    .unwrap();
    let a = l.admit(&ask(0), &rules).unwrap();
    assert_eq!(
        a.requests().unwrap().remaining,
        1,
        "the model rule is the strictest"
    );
    let headers = a.headers();
    assert!(
        headers.contains(&("x-ratelimit-limit-requests", "2".into())),
        "{headers:?}"
    );
    assert!(headers.contains(&("x-ratelimit-remaining-requests", "1".into())));
    let _b = l.admit(&ask(0), &rules).unwrap();
    let refused = l.admit(&ask(0), &rules).unwrap_err();
    assert_eq!(
        refused.scope,
        Scope::Rule {
            group: None,
            model: Some("gpt-4o".into())
        }
    );
    // Another model is not covered by the model rule; the user's limit took only 2 so far
    // (the refused request counted nowhere).
    let other = Ask {
        model: "gpt-4o-mini",
        ..ask(0)
    };
    let c = l.admit(&other, &rules).unwrap();
    assert_eq!(c.requests().unwrap().remaining, 7, "user: 10 - 3");
}

#[test]
fn a_day_limit_counts_the_last_24_hours() {
    let (l, now) = limiter();
    l.set(Owner::User(UserId(1)), limits(0, 0, 0, 2));
    drop(l.admit(&ask(0), &[]).unwrap());
    now.fetch_add(3_600_000, Ordering::SeqCst);
    drop(l.admit(&ask(0), &[]).unwrap());
    let refused = l.admit(&ask(0), &[]).unwrap_err();
    assert_eq!(refused.kind, Kind::Rpd);
    let wait = refused.retry_after_secs();
    assert!((23 * 3600 - 60..=23 * 3600).contains(&wait), "{wait}");
    now.fetch_add(23 * 3_600_000, Ordering::SeqCst);
    assert!(l.admit(&ask(0), &[]).is_ok());
}

#[test]
fn a_channel_and_its_key_are_limited_apart() {
    let (l, _) = limiter();
    let mut channel = limits(0, 5, 0, 0);
    channel.key_limits.push(KeyLimit {
        index: 1,
        limits: Limits {
            concurrency_limit: 1,
            ..Limits::default()
        },
    });
    l.set(Owner::Channel(ChannelId(3)), channel);
    let k1 = l.admit_channel(ChannelId(3), Some(1), 0).unwrap();
    let refused = l.admit_channel(ChannelId(3), Some(1), 0).unwrap_err();
    assert_eq!(refused.scope, Scope::ChannelKey(ChannelId(3), 1));
    let _k0 = l.admit_channel(ChannelId(3), Some(0), 0).unwrap();
    drop(k1);
    assert!(l.admit_channel(ChannelId(3), Some(1), 0).is_ok());
    assert!(
        l.admit_channel(ChannelId(4), Some(1), 0)
            .unwrap()
            .is_empty()
    );
    // Three taken on the channel so far (the refused one counted nowhere): two more fit.
    drop(l.admit_channel(ChannelId(3), Some(2), 0).unwrap());
    drop(l.admit_channel(ChannelId(3), Some(2), 0).unwrap());
    let refused = l.admit_channel(ChannelId(3), Some(2), 0).unwrap_err();
    assert_eq!(
        (refused.scope, refused.kind),
        (Scope::Channel(ChannelId(3)), Kind::Rpm)
    );
}

#[tokio::test]
async fn a_queued_request_gets_in_when_a_place_frees_and_gives_up_at_its_wait() {
    let (l, _) = limiter();
    let rules = limit_rules::parse(
        r#"[{"model":"gpt-4o","concurrency_limit":1,"queue":1,"queue_timeout_ms":500}]"#,
    )
    .unwrap();
    let first = l.admit(&ask(0), &rules).unwrap();
    let waiter = {
        let (l, rules) = (l.clone(), rules.clone());
        tokio::spawn(async move { l.admit_queued(&ask(0), &rules).await.map(|_| ()) })
    };
    tokio::time::sleep(Duration::from_millis(50)).await;
    // The queue holds one: a second waiter is refused at once.
    let full = l.admit_queued(&ask(0), &rules).await.unwrap_err();
    assert_eq!(full.kind, Kind::Concurrency);
    drop(first);
    assert!(
        waiter.await.unwrap().is_ok(),
        "the waiter got the freed place"
    );
    assert_eq!(l.stats().queued("rule", Kind::Concurrency), 1);

    let _held = l.admit(&ask(0), &rules).unwrap();
    let started = tokio::time::Instant::now();
    assert!(l.admit_queued(&ask(0), &rules).await.is_err());
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_millis(450) && waited < Duration::from_millis(1_000),
        "{waited:?}"
    );
}

#[test]
fn durations_read_as_openai_writes_them() {
    assert_eq!(duration_text(20), "20ms");
    assert_eq!(duration_text(1_000), "1s");
    assert_eq!(duration_text(360_000), "6m0s");
    assert_eq!(duration_text(86_400_000), "24h0m0s");
}

#[test]
fn the_model_request_limit_is_a_user_rule_counting_requests_and_successes() {
    let (l, now) = limiter();
    let model = RateLimit {
        window: Duration::from_secs(120),
        total: 2,
        success: 1,
    };
    let first = l.admit_caller(&ask(0), Some(model)).unwrap();
    assert_eq!(first.requests().unwrap().remaining, 1);
    assert_eq!(first.requests().unwrap().limit, 2);
    first.succeeded();
    let refused = l.admit_caller(&ask(0), Some(model)).unwrap_err();
    assert_eq!(refused.scope, Scope::User(UserId(1)));
    assert_eq!(refused.kind, Kind::ModelSuccesses { minutes: 2 });
    assert_eq!(refused.retry_after_secs(), 120);
    assert!(
        refused
            .to_string()
            .contains("at most 1 successful requests per 2 minute(s)"),
        "{refused}"
    );
    now.fetch_add(120_000, Ordering::SeqCst);
    let a = l.admit_caller(&ask(0), Some(model)).unwrap();
    let b = l.admit_caller(&ask(0), Some(model)).unwrap();
    let refused = l.admit_caller(&ask(0), Some(model)).unwrap_err();
    assert_eq!(refused.kind, Kind::ModelRequests { minutes: 2 });
    assert_eq!(refused.limit, 2);
    assert_eq!(l.stats().refused("user", refused.kind), 1);
    // A request refused after all (by its balance) gives its place back.
    b.undo();
    drop(a);
    assert!(l.admit_caller(&ask(0), Some(model)).is_ok());
    assert!(l.admit_caller(&ask(0), Some(model)).is_err());
    assert!(
        l.admit_caller(&ask(0), None).is_ok(),
        "no limit when the option is off"
    );
}

#[test]
fn a_refused_request_undone_uses_nothing_of_any_window() {
    let (l, _) = limiter();
    l.set(Owner::Token(TokenId(7)), limits(1, 1, 100, 1));
    l.admit_caller(&ask(50), None).unwrap().undo();
    let again = l.admit_caller(&ask(100), None).unwrap();
    assert_eq!(again.tokens().unwrap().remaining, 0);
}

#[test]
fn idle_counters_are_swept_and_busy_ones_kept() {
    let (l, now) = limiter();
    let model = RateLimit {
        window: Duration::from_secs(60),
        total: 1,
        success: 0,
    };
    let caller = |user: i64| Ask {
        user: UserId(user),
        token: None,
        ..ask(0)
    };
    for user in 0..1_000 {
        drop(l.admit_caller(&caller(user), Some(model)).unwrap());
    }
    assert_eq!(l.counters(), 1_000);
    // User 5000 holds a place in flight; user 6000 has a request in its window.
    l.set(Owner::User(UserId(5_000)), limits(1, 0, 0, 0));
    let held = l.admit_caller(&caller(5_000), None).unwrap();
    now.fetch_add(50_000, Ordering::SeqCst);
    drop(l.admit_caller(&caller(6_000), Some(model)).unwrap());
    now.fetch_add(SWEEP_MS - 40_000, Ordering::SeqCst);
    // A new scope's first request sweeps: the 1,000 callers' windows are empty.
    drop(l.admit_caller(&caller(7_000), Some(model)).unwrap());
    assert_eq!(
        l.counters(),
        3,
        "5000 (in flight), 6000 (in its window), 7000"
    );
    assert!(
        l.admit_caller(&caller(6_000), Some(model)).is_err(),
        "a kept counter still holds its limit"
    );
    assert!(l.admit_caller(&caller(5_000), None).is_err());
    drop(held);
    assert!(
        l.admit_caller(&caller(3), Some(model)).is_ok(),
        "a swept caller starts afresh"
    );
}

#[test]
fn a_rules_refusals_write_one_row_per_second_counting_the_rest() {
    let (l, now) = limiter();
    l.set(Owner::Token(TokenId(7)), limits(0, 1, 0, 0));
    let _first = l.admit(&ask(0), &[]).unwrap();
    let rows: Vec<_> = (0..5)
        .map(|_| l.admit(&ask(0), &[]).unwrap_err().row)
        .collect();
    assert_eq!(rows, [Some(0), None, None, None, None]);
    now.fetch_add(1_000, Ordering::SeqCst);
    assert_eq!(l.admit(&ask(0), &[]).unwrap_err().row, Some(4));
    assert_eq!(l.admit(&ask(0), &[]).unwrap_err().row, None);
    assert_eq!(l.stats().refused("token", Kind::Rpm), 7, "each is counted");
}
