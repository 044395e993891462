use super::keys::{AwsKey, normalize, parse_aws};
use super::serve::{Need, Serve, mask};
use super::*;

/// The type ids of spec 02 §3, in the spec's order.
const SPEC_IDS: [i32; 38] = [
    1, 2, 3, 4, 5, 8, 11, 14, 15, 46, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 31, 33, 34, 35,
    36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 47, 48, 49,
];

#[test]
fn ids_are_unique_and_exactly_the_spec_types() {
    let mut ids: Vec<i32> = CHANNEL_TYPES.iter().map(|t| t.id).collect();
    ids.sort_unstable();
    let before = ids.len();
    ids.dedup();
    assert_eq!(ids.len(), before, "duplicate type id");
    let mut spec = SPEC_IDS.to_vec();
    spec.sort_unstable();
    assert_eq!(ids, spec, "the table lists exactly the spec's 38 types");
    assert!(by_id(6).is_none() && by_id(99).is_none());
}

#[test]
fn rows_are_consistent() {
    for row in CHANNEL_TYPES {
        let id = row.id;
        if !row.capabilities().has(Caps::CHAT) && row.caps != Caps::NONE {
            // A relayed type without chat is an embeddings (and rerank) service, tested with an
            // embedding.
            assert!(row.caps.has(Caps::EMBEDDINGS), "type {id}");
            assert_eq!(row.test, TestRequest::Embeddings, "type {id}");
        }
        if row.caps != Caps::NONE {
            assert!(
                row.family.is_some(),
                "type {id} has capabilities but no adaptor"
            );
            assert_ne!(
                row.test,
                TestRequest::None,
                "type {id} is relayed but untestable"
            );
        }
        if row.base_url_required {
            assert!(row.default_base_url.is_empty(), "type {id}");
        }
        if row.balance.is_some() {
            assert!(row.capabilities().has(Caps::BALANCE), "type {id}");
            assert_eq!(
                row.family,
                Some(Family::OpenAi),
                "type {id}: balance keys are bearer"
            );
        }
        for field in row.fields {
            assert!(field.label.starts_with("typeField."), "type {id}");
            assert_eq!(
                field.target == Target::Other,
                field.key.is_empty(),
                "type {id}"
            );
            assert_eq!(
                field.kind == FieldKind::Select,
                !field.options.is_empty(),
                "type {id}"
            );
        }
        assert!(
            row.fields
                .iter()
                .filter(|f| f.target == Target::Other)
                .count()
                <= 1,
            "type {id}: one field at most lives in `other`"
        );
    }
}

#[test]
fn the_relayed_types_are_those_the_relay_serves_today() {
    let relayed: Vec<i32> = CHANNEL_TYPES
        .iter()
        .filter(|t| t.caps.has(Caps::CHAT))
        .map(|t| t.id)
        .collect();
    assert_eq!(
        relayed,
        [
            1, 3, 4, 8, 11, 14, 15, 16, 17, 18, 19, 20, 22, 23, 24, 25, 26, 31, 33, 34, 35, 37, 39,
            40, 41, 42, 43, 45, 46, 47, 48, 49
        ]
    );
    let embeddings_only: Vec<i32> = CHANNEL_TYPES
        .iter()
        .filter(|t| t.caps != Caps::NONE && !t.caps.has(Caps::CHAT))
        .map(|t| t.id)
        .collect();
    assert_eq!(embeddings_only, [38, 44], "Jina and M3E");
    assert_eq!(
        by_id(21).map(|t| t.caps),
        Some(Caps::NONE),
        "AI Proxy Library: refused"
    );
    assert!(refused(21).is_some() && refused(1).is_none());
}

#[test]
fn masks_follow_capabilities_and_families() {
    let has = |id: i32, s: Serve| mask(id) & s.bit() != 0;
    assert!(has(1, Serve::Embeddings) && has(1, Serve::GeminiEmbeddings));
    assert!(has(1, Serve::ChatStream) && has(1, Serve::Audio) && has(1, Serve::Rerank));
    assert!(has(14, Serve::Chat) && has(14, Serve::ChatStream));
    assert!(!has(14, Serve::Embeddings) && !has(14, Serve::Responses));
    assert!(has(24, Serve::GeminiEmbeddings) && !has(24, Serve::Embeddings));
    assert!(!has(24, Serve::Completions) && !has(24, Serve::Images));
    // Legacy completions only where the provider documents them.
    assert!(
        has(1, Serve::Completions) && has(3, Serve::Completions) && has(43, Serve::Completions)
    );
    assert!(!has(35, Serve::Completions) && !has(25, Serve::Completions));
    assert!(!has(16, Serve::Completions) && !has(23, Serve::Completions));
    assert!(has(3, Serve::Embeddings) && has(3, Serve::Audio) && has(3, Serve::Responses));
    assert!(!has(3, Serve::Rerank));
    assert!(has(33, Serve::ChatStream) && has(33, Serve::Embeddings));
    assert!(has(41, Serve::Embeddings) && has(41, Serve::GeminiEmbeddings));
    assert!(!has(33, Serve::GeminiEmbeddings));
    assert!(has(34, Serve::Embeddings) && has(34, Serve::Rerank) && !has(34, Serve::Images));
    assert_eq!(mask(21), 0, "AI Proxy Library has no adaptor");
    assert!(has(38, Serve::Embeddings) && has(38, Serve::Rerank) && !has(38, Serve::Chat));
    assert!(has(44, Serve::Embeddings) && !has(44, Serve::Rerank) && !has(44, Serve::Chat));
    assert!(
        has(11, Serve::ChatStream) && has(11, Serve::GeminiEmbeddings),
        "PaLM2 is Gemini"
    );
    assert_eq!(mask(999), 0, "unknown type");
    let stream = Need::chat(true, "/v1/chat/completions");
    assert_eq!(stream.bits, Serve::Chat.bit() | Serve::ChatStream.bit());
    assert_eq!(
        Need::openai_route("/v1/embeddings", false).bits,
        Serve::Embeddings.bit()
    );
}

#[test]
fn base_url_and_other_fall_back_to_the_type_default() {
    assert_eq!(effective_base_url(1, ""), "https://api.openai.com");
    assert_eq!(effective_base_url(1, "http://x/ "), "http://x");
    assert_eq!(effective_base_url(3, ""), "");
    assert_eq!(effective_other(3, ""), "2024-10-21");
    assert_eq!(effective_other(3, " v1 "), "v1");
    assert_eq!(effective_other(41, ""), "global");
    assert_eq!(effective_other(1, ""), "");
}

#[test]
fn line_keys_are_one_per_line() {
    let keys = normalize(KeyFormat::Lines, " sk-a \n\n sk-b\n").unwrap();
    assert_eq!(keys, ["sk-a", "sk-b"]);
    let err = normalize(KeyFormat::Lines, r#"{"private_key": "secret-x"}"#).unwrap_err();
    assert!(err.0.contains("not JSON"), "{err}");
    assert!(!err.0.contains("secret-x"));
}

#[test]
fn part_keys_need_every_part() {
    let baidu = KeyFormat::Parts(&["APIKey", "SecretKey"]);
    assert_eq!(normalize(baidu, "a|b\nc|d").unwrap(), ["a|b", "c|d"]);
    let err = normalize(baidu, "a|b\nsecret-c").unwrap_err();
    assert_eq!(
        err.0,
        "key line 2: expected APIKey|SecretKey (2 parts separated by |)"
    );
    let err = normalize(baidu, "a|").unwrap_err();
    assert!(err.0.starts_with("expected APIKey|SecretKey"), "{err}");
}

#[test]
fn aws_keys_are_access_keys_or_api_keys_with_a_region() {
    assert_eq!(
        parse_aws("AKIA1|s3cr3t|us-east-1").unwrap(),
        AwsKey::AccessKey {
            access_key: "AKIA1",
            secret_key: "s3cr3t",
            region: "us-east-1",
            session_token: None
        }
    );
    assert_eq!(
        parse_aws("AKIA1|s3cr3t|us-gov-west-1|tok").unwrap(),
        AwsKey::AccessKey {
            access_key: "AKIA1",
            secret_key: "s3cr3t",
            region: "us-gov-west-1",
            session_token: Some("tok")
        }
    );
    assert_eq!(
        parse_aws("ABSKkey|eu-central-1").unwrap(),
        AwsKey::ApiKey {
            key: "ABSKkey",
            region: "eu-central-1"
        }
    );
    for bad in [
        "AKIA1|s3cr3t",
        "AKIA1|s3cr3t|Mars",
        "a|b|c|d|e",
        "AKIA1||us-east-1",
    ] {
        let err = normalize(KeyFormat::Aws, bad).unwrap_err();
        assert!(
            !err.0.contains("AKIA1") && !err.0.contains("s3cr3t"),
            "{err}"
        );
    }
    let err = normalize(KeyFormat::Aws, "AKIA1|s3cr3t|us-east-1\nAKIA2|s3cr3t").unwrap_err();
    assert!(err.0.starts_with("key line 2: the region part"), "{err}");
}

fn account(email: &str) -> String {
    serde_json::json!({
        "type": "service_account",
        "project_id": "p",
        "private_key": "-----BEGIN PRIVATE KEY-----\nMIIsecret\n-----END PRIVATE KEY-----\n",
        "client_email": email,
    })
    .to_string()
}

#[test]
fn service_account_keys_are_never_split_by_lines() {
    let json = KeyFormat::ServiceAccountJson;
    // A pretty-printed key file spans many lines and is one key.
    let pretty = serde_json::to_string_pretty(
        &serde_json::from_str::<serde_json::Value>(&account("a@p")).unwrap(),
    )
    .unwrap();
    let one = normalize(json, &pretty).unwrap();
    assert_eq!(one.len(), 1);
    assert!(!one[0].contains('\n'), "stored as one line");
    let back: serde_json::Value = serde_json::from_str(&one[0]).unwrap();
    assert!(
        back["private_key"]
            .as_str()
            .unwrap()
            .contains("\nMIIsecret\n")
    );
    // An array, or objects one after another, are several keys.
    let array = format!("[{}, {}]", account("a@p"), account("b@p"));
    assert_eq!(normalize(json, &array).unwrap().len(), 2);
    let stored = normalize(json, &array).unwrap().join("\n");
    assert_eq!(
        normalize(json, &stored).unwrap().len(),
        2,
        "the stored form reads back"
    );
    // Refusals say what is wrong, never what the key holds.
    let err = normalize(json, r#"{"private_key": "MIIsecret", "project_id": "p"}"#).unwrap_err();
    assert_eq!(
        err.0,
        "the service-account key lacks client_email (paste the whole JSON key file of a \
         service account)"
    );
    let err = normalize(json, r#"{"private_key": "MIIsecret"#).unwrap_err();
    assert!(
        err.0.starts_with("the key is not valid JSON (line 1"),
        "{err}"
    );
    assert!(!err.0.contains("MIIsecret"));
    let err = normalize(json, &format!("[{}, 7]", account("a@p"))).unwrap_err();
    assert!(
        err.0
            .starts_with("service-account key 2 is not a JSON object"),
        "{err}"
    );
    assert!(normalize(json, "").is_err());
    // An API key pasted with the default key type says how to use it.
    let err = normalize(json, "AQ.Ab8RN6Lsecret").unwrap_err();
    assert!(err.0.contains("set the key type"), "{err}");
    assert!(!err.0.contains("Ab8RN6Lsecret"));
}

#[test]
fn vertex_takes_api_keys_when_its_setting_says_so() {
    let vertex = by_id(41).unwrap();
    assert_eq!(key_format(vertex, ""), KeyFormat::ServiceAccountJson);
    assert_eq!(
        key_format(vertex, r#"{"vertex_key_type": "api_key"}"#),
        KeyFormat::Lines
    );
    assert_eq!(
        key_format(by_id(1).unwrap(), r#"{"vertex_key_type": "api_key"}"#),
        KeyFormat::Lines
    );
}

#[test]
fn the_types_serialise_for_the_console() {
    let v = serde_json::to_value(by_id(41).unwrap()).unwrap();
    assert_eq!(v["family"], "vertex");
    assert_eq!(v["key_format"]["kind"], "service_account_json");
    assert_eq!(v["fields"][0]["target"], "other");
    assert_eq!(v["fields"][0]["default"], "global");
    assert_eq!(v["fields"][1]["key"], "vertex_key_type");
    assert_eq!(
        v["fields"][1]["options"],
        serde_json::json!(["json", "api_key"])
    );
    let v = serde_json::to_value(by_id(15).unwrap()).unwrap();
    assert_eq!(
        v["key_format"]["parts"],
        serde_json::json!(["APIKey", "SecretKey"])
    );
    let caps = serde_json::to_value(by_id(1).unwrap().capabilities()).unwrap();
    assert_eq!(
        caps,
        serde_json::json!([
            "chat",
            "stream",
            "completions",
            "responses",
            "embeddings",
            "images",
            "audio",
            "rerank",
            "moderation",
            "balance"
        ])
    );
}

#[test]
fn openai_routes_live_under_the_row_prefix() {
    assert_eq!(
        openai_url(1, "https://api.openai.com", "/v1/chat/completions"),
        "https://api.openai.com/v1/chat/completions"
    );
    assert_eq!(
        openai_url(17, "https://dashscope.aliyuncs.com", "/v1/chat/completions"),
        "https://dashscope.aliyuncs.com/compatible-mode/v1/chat/completions"
    );
    assert_eq!(
        openai_url(45, "https://ark.cn-beijing.volces.com", "/v1/embeddings"),
        "https://ark.cn-beijing.volces.com/api/v3/embeddings"
    );
    assert_eq!(
        openai_url(45, "http://127.0.0.1:9", "/v1/models"),
        "http://127.0.0.1:9/api/v3/models"
    );
    // Zhipu's v4 API and Qianfan's v2.
    assert_eq!(
        openai_url(16, "https://open.bigmodel.cn", "/v1/chat/completions"),
        "https://open.bigmodel.cn/api/paas/v4/chat/completions"
    );
    assert_eq!(
        openai_url(46, "https://qianfan.baidubce.com", "/v1/chat/completions"),
        "https://qianfan.baidubce.com/v2/chat/completions"
    );
    // Only a whole `/v1` segment is replaced.
    assert_eq!(openai_url(17, "http://h", "/v1beta/x"), "http://h/v1beta/x");
    assert_eq!(openai_url(999, "http://h", "/v1/x"), "http://h/v1/x");
    // A route the provider serves elsewhere: DeepSeek's FIM completions on its beta path; its
    // other routes keep the prefix.
    assert_eq!(
        openai_url(43, "https://api.deepseek.com", "/v1/completions"),
        "https://api.deepseek.com/beta/completions"
    );
    assert_eq!(
        openai_url(43, "https://api.deepseek.com", "/v1/chat/completions"),
        "https://api.deepseek.com/v1/chat/completions"
    );
}

#[test]
fn rows_serve_what_their_providers_document() {
    use super::serve::{Serve, mask};
    let serves = |id: i32, serve: Serve| mask(id) & serve.bit() != 0;
    // Trimmed rows keep chat; the classes they lack are gone.
    for id in [4, 17, 20, 22, 25, 31, 40, 42, 43, 45, 47, 48] {
        assert!(serves(id, Serve::ChatStream), "type {id}");
        assert!(!serves(id, Serve::Moderation) || id == 42, "type {id}");
    }
    assert!(!serves(48, Serve::Embeddings) && serves(48, Serve::Images));
    assert!(serves(42, Serve::Moderation) && !serves(42, Serve::Images));
    assert!(serves(40, Serve::Rerank) && !serves(20, Serve::Rerank));
    // Every OpenAI-family row keeps legacy completions (DeepSeek's on its beta path).
    assert!(serves(43, Serve::Completions));
    // 360 lists chat only of OpenAI's routes (https://ai.360.com/docs/437061603e0).
    assert!(serves(19, Serve::ChatStream) && !serves(19, Serve::Embeddings));
    // The rows whose reference could not be read keep every route.
    for id in [1, 8] {
        assert!(
            serves(id, Serve::Moderation) && serves(id, Serve::Rerank),
            "type {id}"
        );
    }
}
