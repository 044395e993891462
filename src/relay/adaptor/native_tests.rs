//! Tests of the native facade: answers, in-body errors and streams come out as OpenAI's.

use std::time::Duration;

use super::*;

fn upstream(content_type: &str, body: &'static str) -> reqwest::Response {
    let resp = axum::http::Response::builder()
        .status(200)
        .header(header::CONTENT_TYPE, content_type)
        .body(reqwest::Body::from(body))
        .expect("response");
    reqwest::Response::from(resp)
}

async fn converted(resp: reqwest::Response) -> (u16, Option<String>, String) {
    let out = Native::Hunyuan
        .answer(resp, "hunyuan-lite", Duration::from_secs(5))
        .await;
    let status = out.status().as_u16();
    let text = out.text().await.expect("body");
    let code = serde_json::from_str::<serde_json::Value>(&text)
        .ok()
        .and_then(|v| v["error"]["code"].as_str().map(str::to_owned))
        .filter(|c| !c.is_empty());
    (status, code, text)
}

#[tokio::test]
async fn a_whole_answer_becomes_a_chat_completion() {
    let (status, code, text) = converted(upstream(
        "application/json",
        r#"{"Response":{"Id":"r1","Choices":[{"FinishReason":"stop","Message":{"Role":"assistant","Content":"hi"}}],"Usage":{"PromptTokens":2,"CompletionTokens":1,"TotalTokens":3},"RequestId":"r1"}}"#,
    ))
    .await;
    assert_eq!((status, code), (200, None));
    let v: serde_json::Value = serde_json::from_str(&text).expect("json");
    assert_eq!(v["object"], "chat.completion");
    assert_eq!(v["model"], "hunyuan-lite");
    assert_eq!(v["choices"][0]["message"]["content"], "hi");
    assert_eq!(v["usage"]["total_tokens"], 3);
}

#[tokio::test]
async fn an_error_in_a_200_body_gets_its_status_and_code() {
    let (status, code, text) = converted(upstream(
        "application/json",
        r#"{"Response":{"Error":{"Code":"ResourceUnavailable.LowBalance","Message":"余额不足"},"RequestId":"r2"}}"#,
    ))
    .await;
    assert_eq!(status, 403);
    assert_eq!(code.as_deref(), Some("ResourceUnavailable.LowBalance"));
    let v: serde_json::Value = serde_json::from_str(&text).expect("json");
    assert_eq!(
        v["error"]["message"],
        "Hunyuan: ResourceUnavailable.LowBalance: 余额不足"
    );
    // The attempt loop reads the code as any provider's: a spent balance condemns the key.
    let judged = crate::channel_types::errors::judge(23, status, &text).expect("documented");
    assert_eq!((judged.health, judged.retry), (401, true));
    let (status, _, _) = converted(upstream(
        "application/json",
        r#"{"Response":{"Error":{"Code":"LimitExceeded","Message":"超过配额限制"}}}"#,
    ))
    .await;
    assert_eq!(status, 429);
}

#[tokio::test]
async fn a_stream_becomes_chunks_ending_with_usage_and_done() {
    let (status, _, text) = converted(upstream(
        "text/event-stream",
        "data: {\"Choices\":[{\"Delta\":{\"Role\":\"assistant\",\"Content\":\"你\"},\"FinishReason\":\"\"}],\"Id\":\"s1\",\"Usage\":{\"PromptTokens\":3,\"CompletionTokens\":1,\"TotalTokens\":4}}\n\n\
         data: {\"Choices\":[{\"Delta\":{\"Role\":\"assistant\",\"Content\":\"好\"},\"FinishReason\":\"stop\"}],\"Id\":\"s1\",\"Usage\":{\"PromptTokens\":3,\"CompletionTokens\":2,\"TotalTokens\":5}}\n\n",
    ))
    .await;
    assert_eq!(status, 200);
    assert!(text.contains(r#""content":"你""#), "{text}");
    assert!(text.contains(r#""finish_reason":"stop""#), "{text}");
    assert!(
        text.contains(r#""prompt_tokens":3,"completion_tokens":2"#)
            || text.contains(r#""completion_tokens":2"#),
        "{text}"
    );
    assert!(text.ends_with("data: [DONE]\n\n"), "{text}");
}

#[tokio::test]
async fn a_cut_stream_has_no_done() {
    let (_, _, text) = converted(upstream(
        "text/event-stream",
        "data: {\"Choices\":[{\"Delta\":{\"Content\":\"你\"},\"FinishReason\":\"\"}],\"Id\":\"s1\"}\n\n",
    ))
    .await;
    assert!(text.contains(r#""content":"你""#), "{text}");
    assert!(!text.contains("[DONE]"), "{text}");
}
