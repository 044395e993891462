//! Unit tests of channel input validation.

use serde_json::json;

use super::*;

fn parse(v: serde_json::Value) -> ChannelInput {
    serde_json::from_value(v).expect("input parses")
}

fn create(v: serde_json::Value) -> Result<(Channel, Vec<String>), ConsoleError> {
    apply(parse(v), new_channel(7), true)
}

fn refused(v: serde_json::Value) -> String {
    create(v).expect_err("refused").to_string()
}

#[test]
fn defaults_and_normalisation() {
    let (c, notices) = create(json!({
        "name": " a ", "key": "k1，k2", "models": "m1, m2,m1,", "base_url": "https://x.io//"
    }))
    .expect("valid");
    assert_eq!((c.name.as_str(), c.channel_type, c.auto_ban), ("a", 1, 1));
    assert_eq!(
        (c.group.as_str(), c.priority, c.weight, c.status),
        ("default", 0, 0, 1)
    );
    assert_eq!(c.models, "m1,m2");
    assert_eq!(c.base_url, "https://x.io");
    assert_eq!(c.key.expose(), "k1,k2");
    assert_eq!(notices.len(), 1, "comma notice");
    assert_eq!(c.created_time, 7);
    let (c, _) = create(
        json!({"name": "s", "key": "app|secret|key", "models": ["m"], "type": "18",
        "groups": ["vip", "default"], "priority": "-5", "model_mapping": {"a": "b"}}),
    )
    .expect("valid");
    assert_eq!(
        (c.other.as_str(), c.group.as_str(), c.priority),
        ("v2.1", "vip,default", -5)
    );
    assert_eq!(c.model_mapping, r#"{"a":"b"}"#);
}

#[test]
fn rules_of_spec_02_section_5() {
    let base = json!({"name": "n", "key": "k", "models": "m"});
    let with = |k: &str, v: serde_json::Value| {
        let mut b = base.clone();
        b[k] = v;
        b
    };
    assert!(refused(with("name", json!(""))).contains("name is required"));
    assert!(refused(with("key", json!("  "))).contains("key is required"));
    assert!(refused(with("models", json!(" , "))).contains("at least one model"));
    assert!(
        refused(with("model_mapping", json!("{oops")))
            .contains("model_mapping is not a valid JSON")
    );
    assert!(refused(with("setting", json!("[1]"))).contains("setting"));
    assert!(refused(with("type", json!(99))).contains("unknown channel type"));
    // AI Proxy Library (21): no provider documentation, no adaptor — refused with the reason.
    let why = refused(with("type", json!(21)));
    assert!(
        why.contains("channel type 21 (AI Proxy Library) cannot be created")
            && why.contains("no documentation"),
        "{why}"
    );
    assert!(refused(with("priority", json!(-1000))).contains("-999"));
    assert!(refused(with("weight", json!(-1))).contains("weight"));
    assert!(refused(with("base_url", json!("ftp://x"))).contains("http"));
    assert!(refused(with("type", json!(3))).contains("base_url"));
    assert!(refused(with("proxy", json!("socks4://p:1"))).contains("unsupported proxy scheme"));
    assert!(create(with("proxy", json!("socks5h://u:p@proxy:1080"))).is_ok());
    assert!(serde_json::from_value::<ChannelInput>(with("priority", json!("high"))).is_err());
}

#[test]
fn updates_keep_absent_fields_and_an_empty_key_keeps_the_key() {
    let (c, _) =
        create(json!({"name": "n", "key": "secret", "models": "m", "tag": "t"})).expect("valid");
    let (u, _) = apply(
        parse(json!({"id": 1, "status": 2, "weight": 9, "key": ""})),
        c,
        false,
    )
    .expect("partial update");
    assert_eq!((u.status, u.weight, u.tag.as_str()), (2, 9, "t"));
    assert_eq!(u.key.expose(), "secret");
    assert!(
        !format!("{:?}", parse(json!({"key": "sk-zzz"}))).contains("sk-zzz"),
        "Debug hides keys"
    );
}
