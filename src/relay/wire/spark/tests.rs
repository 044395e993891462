use super::*;

fn hub_of(body: &str) -> serde_json::Value {
    serde_json::from_str(body).expect("json")
}

#[test]
fn a_hub_request_becomes_the_documented_frame() {
    let body = hub_of(
        r#"{"model":"SparkDesk-v3.5","messages":[{"role":"system","content":"be brief"},
        {"role":"user","content":[{"type":"text","text":"hi"}]},{"role":"assistant","content":"hello"},
        {"role":"user","content":"again"}],"temperature":0.5,"max_tokens":64}"#,
    );
    let hub: hub::Request<'_> = super::super::typed::view(&body);
    check(&hub).expect("text only");
    let frame = serde_json::to_value(request_from_hub(&hub, "app", "generalv3.5")).expect("json");
    assert_eq!(
        frame,
        serde_json::json!({
            "header": {"app_id": "app"},
            "parameter": {"chat": {"domain": "generalv3.5", "temperature": 0.5, "max_tokens": 64}},
            "payload": {"message": {"text": [
                {"role": "system", "content": "be brief"},
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": "hello"},
                {"role": "user", "content": "again"}
            ]}}
        })
    );
}

#[test]
fn images_and_tools_are_refused_by_name() {
    let image = hub_of(
        r#"{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"x"}}]}]}"#,
    );
    let e = check(&super::super::typed::view(&image)).expect_err("image");
    assert!(e.0.contains("image_url"), "{}", e.0);
    let tools = hub_of(
        r#"{"messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f"}}]}"#,
    );
    let e = check(&super::super::typed::view(&tools)).expect_err("tools");
    assert!(e.0.contains("tools"), "{}", e.0);
}

/// The documented answer frames (https://xfyun.cn/doc/spark/Web.html): the usage of the last
/// frame is billed as `prompt_tokens` (history included) and `completion_tokens`.
#[test]
fn frames_decode_into_pieces_and_the_usage_is_golden() {
    let mut decoder = Decoder::default();
    let first = r#"{"header":{"code":0,"message":"Success","sid":"cht000cb087@dx18793cd421fb894542","status":0},"payload":{"choices":{"status":0,"seq":0,"text":[{"content":"你好","role":"assistant","index":0}]}}}"#;
    let pieces = decoder.frame(first);
    assert!(
        matches!(&pieces[0], Piece::Start { id, .. } if id == "cht000cb087@dx18793cd421fb894542")
    );
    assert!(matches!(&pieces[1], Piece::Text(t) if t == "你好"));
    assert!(!decoder.done());
    let last = r#"{"header":{"code":0,"message":"Success","sid":"cht000cb087@dx18793cd421fb894542","status":2},"payload":{"choices":{"status":2,"seq":1,"text":[{"content":"！","role":"assistant","index":0}]},"usage":{"text":{"question_tokens":4,"prompt_tokens":5,"completion_tokens":9,"total_tokens":14}}}}"#;
    let pieces = decoder.frame(last);
    assert!(decoder.done());
    let usage = pieces
        .iter()
        .find_map(|p| match p {
            Piece::Usage(u) => Some(*u),
            _ => None,
        })
        .expect("usage");
    assert_eq!((usage.prompt_tokens, usage.completion_tokens), (5, 9));
    assert!(matches!(pieces.last(), Some(Piece::Stop(r)) if r == "stop"));
    // Only a total: the prompt is what the answer leaves of it.
    let only_total: UsageIn =
        serde_json::from_str(r#"{"completion_tokens":9,"total_tokens":14}"#).expect("usage");
    assert_eq!(only_total.usage().prompt_tokens, 5);
}

#[test]
fn an_error_frame_is_an_error_piece() {
    let mut decoder = Decoder::default();
    let pieces = decoder.frame(
        r#"{"header":{"code":10013,"message":"input content audit failed","sid":"s","status":2}}"#,
    );
    assert!(
        matches!(&pieces[..], [Piece::Error(m)] if m == "Spark: 10013: input content audit failed")
    );
}
