//! Unit tests of the health rules.

use std::time::Duration;

use tollgate_storage::channels::{Channel, STATUS_MANUALLY_DISABLED};
use tollgate_storage::secret::Secret;
use tollgate_storage::{ChannelId, Quota};

use super::*;

fn channel(status: i32, auto_ban: i32) -> Channel {
    Channel {
        id: ChannelId(1),
        name: "c".into(),
        channel_type: 1,
        key: Secret::new("k"),
        openai_organization: String::new(),
        max_input_tokens: 0,
        base_url: String::new(),
        other: String::new(),
        model_mapping: String::new(),
        status_code_mapping: String::new(),
        models: "m".into(),
        group: "default".into(),
        auto_ban,
        test_model: String::new(),
        proxy: String::new(),
        priority: 0,
        weight: 0,
        tag: String::new(),
        setting: String::new(),
        param_override: String::new(),
        used_quota: Quota::ZERO,
        balance: 0.0,
        response_time: 0,
        status,
        other_info: String::new(),
        created_time: 0,
        test_time: 0,
        balance_updated_time: 0,
    }
}

fn policy(auto_disable: bool, auto_enable: bool) -> HealthPolicy {
    HealthPolicy {
        auto_disable,
        auto_enable,
        keywords: vec!["you exceeded your current quota".into()],
        slow_test: Some(Duration::from_secs(5)),
    }
}

fn outcome(status: Option<u16>, error: Option<&str>) -> Outcome {
    Outcome {
        channel: ChannelId(1),
        status,
        latency: Duration::from_millis(10),
        error: error.map(str::to_owned),
        source: OutcomeSource::Relay,
        key: None,
    }
}

#[test]
fn a_401_disables_at_once_only_when_the_option_and_auto_ban_allow() {
    let bad_key = outcome(Some(401), Some("Incorrect API key provided"));
    let mut counters = Counters::default();
    let verdict = judge(
        &policy(true, false),
        &channel(1, 1),
        &bad_key,
        &mut counters,
    );
    assert!(
        matches!(verdict, Verdict::Disable(ref r) if r.contains("401")),
        "{verdict:?}"
    );
    assert_eq!(
        judge(
            &policy(false, false),
            &channel(1, 1),
            &bad_key,
            &mut counters
        ),
        Verdict::Keep
    );
    assert_eq!(
        judge(
            &policy(true, false),
            &channel(1, 0),
            &bad_key,
            &mut counters
        ),
        Verdict::Keep
    );
    let manual = channel(STATUS_MANUALLY_DISABLED, 1);
    assert_eq!(
        judge(&policy(true, false), &manual, &bad_key, &mut counters),
        Verdict::Keep
    );
}

#[test]
fn keywords_match_case_insensitively() {
    let quota = outcome(
        Some(429),
        Some("You EXCEEDED your current quota, check billing"),
    );
    let verdict = judge(
        &policy(true, false),
        &channel(1, 1),
        &quota,
        &mut Counters::default(),
    );
    assert!(matches!(verdict, Verdict::Disable(_)), "{verdict:?}");
    let other = outcome(Some(429), Some("rate limited"));
    assert_eq!(classify(&policy(true, false), &other), Class::Neutral);
}

#[test]
fn keywords_never_act_on_a_client_error_that_may_echo_the_prompt() {
    // A 400 whose text repeats the client's prompt must not let a client disable a channel.
    let echo = outcome(
        Some(400),
        Some("invalid message: 'you exceeded your current quota' is not allowed"),
    );
    assert_eq!(classify(&policy(true, false), &echo), Class::Neutral);
    let server = outcome(Some(503), Some("You exceeded your current quota"));
    assert!(matches!(
        classify(&policy(true, false), &server),
        Class::Fatal(_)
    ));
    let silent = outcome(None, Some("you exceeded your current quota"));
    assert!(matches!(
        classify(&policy(true, false), &silent),
        Class::Fatal(_)
    ));
}

#[test]
fn transient_failures_need_n_in_a_row_and_a_success_resets() {
    let p = policy(true, false);
    let ch = channel(1, 1);
    let mut counters = Counters::default();
    let boom = outcome(Some(502), Some("bad gateway"));
    let timeout = outcome(None, Some("timed out"));
    for _ in 1..TRANSIENT_FAILURES_TO_DISABLE {
        assert_eq!(judge(&p, &ch, &boom, &mut counters), Verdict::Keep);
    }
    assert_eq!(
        judge(&p, &ch, &outcome(Some(200), None), &mut counters),
        Verdict::Keep
    );
    assert_eq!(counters.get(ch.id), 0, "success resets");
    assert_eq!(
        judge(
            &p,
            &ch,
            &outcome(Some(400), Some("bad request")),
            &mut counters
        ),
        Verdict::Keep
    );
    for _ in 1..TRANSIENT_FAILURES_TO_DISABLE {
        assert_eq!(judge(&p, &ch, &timeout, &mut counters), Verdict::Keep);
    }
    let verdict = judge(&p, &ch, &timeout, &mut counters);
    assert!(
        matches!(verdict, Verdict::Disable(ref r) if r.contains("consecutive")),
        "{verdict:?}"
    );
}

#[test]
fn success_re_enables_only_auto_disabled_channels_when_allowed() {
    let ok = outcome(Some(200), None);
    let mut counters = Counters::default();
    assert_eq!(
        judge(&policy(false, true), &channel(3, 1), &ok, &mut counters),
        Verdict::Enable
    );
    assert_eq!(
        judge(&policy(false, false), &channel(3, 1), &ok, &mut counters),
        Verdict::Keep
    );
    assert_eq!(
        judge(&policy(false, true), &channel(2, 1), &ok, &mut counters),
        Verdict::Keep
    );
    assert_eq!(
        judge(&policy(false, true), &channel(1, 1), &ok, &mut counters),
        Verdict::Keep
    );
}

#[test]
fn a_slow_test_disables_but_a_slow_relay_does_not() {
    let mut slow = outcome(Some(200), None);
    slow.latency = Duration::from_secs(6);
    assert_eq!(classify(&policy(true, false), &slow), Class::Success);
    slow.source = OutcomeSource::Test;
    assert!(matches!(
        classify(&policy(true, false), &slow),
        Class::Fatal(_)
    ));
}

#[test]
fn the_policy_reads_the_options() {
    let p = HealthPolicy::from_options(&OptionsSnapshot::defaults());
    assert!(!p.auto_disable && !p.auto_enable, "both off by default");
    assert!(p.keywords.iter().any(|k| k == "permission denied"));
    assert_eq!(p.slow_test, Some(Duration::from_secs(5)));
}

#[test]
fn a_condemned_key_of_a_multi_key_channel_is_disabled_alone_until_the_last() {
    let p = policy(true, false);
    let mut counters = Counters::default();
    let mut c = channel(STATUS_ENABLED, 1);
    c.key = Secret::new("k0\nk1\nk2");
    let on_key = |index: usize| Outcome {
        key: Some(index),
        ..outcome(Some(401), Some("invalid key"))
    };
    assert_eq!(
        judge(&p, &c, &on_key(1), &mut counters),
        Verdict::DisableKey {
            index: 1,
            reason: "status 401: invalid key".into()
        }
    );
    for (i, k) in [(0, "k0"), (1, "k1")] {
        c.other_info = other_info::with_disabled_key(
            &c.other_info,
            other_info::DisabledKey {
                index: i,
                fingerprint: other_info::fingerprint(k),
                reason: "x".into(),
                time: 1,
            },
        );
    }
    match judge(&p, &c, &on_key(2), &mut counters) {
        Verdict::Disable(reason) => {
            assert!(reason.starts_with("all keys are disabled"), "{reason}")
        }
        other => panic!("expected the channel to go: {other:?}"),
    }
    assert_eq!(
        judge(&p, &c, &outcome(Some(401), Some("x")), &mut counters),
        Verdict::Disable("status 401: x".into()),
        "an outcome without a key disables the channel"
    );
    let mut single = channel(STATUS_ENABLED, 1);
    single.key = Secret::new("only");
    assert!(matches!(
        judge(&p, &single, &on_key(0), &mut counters),
        Verdict::Disable(_)
    ));
    assert_eq!(
        judge(&policy(false, false), &c, &on_key(2), &mut counters),
        Verdict::Keep
    );
}
