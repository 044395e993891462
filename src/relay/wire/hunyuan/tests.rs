//! Tests of the Hunyuan conversions: requests from the hub, answers, usage (golden), stream
//! chunks and error codes.

use serde_json::json;

use super::*;
use crate::relay::wire::{Decode, Piece};

fn request(hub: &Value, stream: bool) -> Value {
    let view: hub::Request<'_> = super::super::typed::view(hub);
    serde_json::to_value(request_from_hub(&view, "hunyuan-turbo", stream)).expect("serialises")
}

#[test]
fn request_maps_roles_parts_tools_and_sampling() {
    let hub = json!({"model": "x", "temperature": 0.5, "top_p": 0.9, "max_tokens": 9,
        "messages": [
            {"role": "developer", "content": "be brief"},
            {"role": "user", "content": [{"type": "text", "text": "look"},
                {"type": "image_url", "image_url": {"url": "https://x/1.png"}}]},
            {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function",
                "function": {"name": "f", "arguments": "{\"a\":1}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "{\"ok\":true}"},
            {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}],
        "tools": [{"type": "function", "function": {"name": "f", "description": "d",
            "parameters": {"type": "object", "properties": {"a": {"type": "integer"}}}}}],
        "tool_choice": {"type": "function", "function": {"name": "f"}}});
    let body = request(&hub, true);
    assert_eq!(
        body,
        json!({"Model": "hunyuan-turbo", "Stream": true, "Temperature": 0.5, "TopP": 0.9,
            "Messages": [
                {"Role": "system", "Content": "be brief"},
                {"Role": "user", "Contents": [{"Type": "text", "Text": "look"},
                    {"Type": "image_url", "ImageUrl": {"Url": "https://x/1.png"}}]},
                {"Role": "assistant", "Content": "", "ToolCalls": [{"Id": "c1", "Type": "function",
                    "Function": {"Name": "f", "Arguments": "{\"a\":1}"}}]},
                {"Role": "tool", "Content": "{\"ok\":true}", "ToolCallId": "c1"},
                {"Role": "user", "Content": "ab"}],
            "Tools": [{"Type": "function", "Function": {"Name": "f", "Description": "d",
                "Parameters": "{\"properties\":{\"a\":{\"type\":\"integer\"}},\"type\":\"object\"}"}}],
            "ToolChoice": "custom",
            "CustomTool": {"Type": "function", "Function": {"Name": "f", "Description": "d",
                "Parameters": "{\"properties\":{\"a\":{\"type\":\"integer\"}},\"type\":\"object\"}"}}})
    );
    // No stream flag, no tool choice without tools.
    let plain = request(
        &json!({"messages": [{"role": "user", "content": "hi"}], "tool_choice": "none"}),
        false,
    );
    assert_eq!(
        plain,
        json!({"Model": "hunyuan-turbo", "Messages": [{"Role": "user", "Content": "hi"}]})
    );
}

/// Golden: the non-streamed answer's shape of the reference, usage as reported.
#[test]
fn a_whole_answer_becomes_a_hub_answer_with_its_usage() {
    let answer = json!({"Response": {"RequestId": "e3e1d1c3", "Note": "以上内容为AI生成，不代表开发者立场",
        "Choices": [{"FinishReason": "stop", "Message": {"Role": "assistant", "Content": "你好！"}}],
        "Created": 1_715_000_000, "Id": "e3e1d1c3",
        "Usage": {"PromptTokens": 3, "CompletionTokens": 4, "TotalTokens": 7}}});
    let envelope: Envelope<'_> = super::super::typed::view(&answer);
    let hub = answer_to_hub(&envelope.response);
    assert_eq!(hub["id"], "chatcmpl-e3e1d1c3");
    assert_eq!(hub["choices"][0]["message"]["content"], "你好！");
    assert_eq!(hub["choices"][0]["finish_reason"], "stop");
    assert_eq!(hub["usage"]["prompt_tokens"], 3);
    assert_eq!(hub["usage"]["completion_tokens"], 4);
    assert_eq!(hub["usage"]["total_tokens"], 7);
}

#[test]
fn a_tool_call_answer_has_null_content() {
    let answer = json!({"Response": {"Id": "x", "Choices": [{"FinishReason": "tool_calls",
        "Message": {"Role": "assistant", "Content": "", "ToolCalls": [{"Id": "call_1",
            "Type": "function", "Function": {"Name": "get_weather", "Arguments": "{\"city\":\"深圳\"}"}}]}}]}});
    let envelope: Envelope<'_> = super::super::typed::view(&answer);
    let hub = answer_to_hub(&envelope.response);
    let choice = &hub["choices"][0];
    assert_eq!(choice["finish_reason"], "tool_calls");
    assert_eq!(choice["message"]["content"], Value::Null);
    assert_eq!(
        choice["message"]["tool_calls"][0],
        json!({"id": "call_1", "type": "function",
            "function": {"name": "get_weather", "arguments": "{\"city\":\"深圳\"}"}})
    );
    assert!(hub.get("usage").is_none());
}

/// The stream of the reference: every chunk carries the usage so far; the chunk with a
/// `FinishReason` ends the answer.
#[test]
fn stream_chunks_become_pieces() {
    let mut d = Decoder::default();
    let p = d.event(
        "",
        r#"{"Note":"以上内容为AI生成","Choices":[{"Delta":{"Role":"assistant","Content":"你好"},"FinishReason":""}],"Created":1715000000,"Id":"a1","Usage":{"PromptTokens":3,"CompletionTokens":1,"TotalTokens":4}}"#,
    );
    assert_eq!(
        p,
        vec![
            Piece::Start {
                id: "a1".into(),
                model: String::new()
            },
            Piece::Text("你好".into()),
            Piece::Usage(Usage {
                prompt_tokens: 3,
                completion_tokens: 1,
                cache_in_prompt: true,
                ..Usage::default()
            })
        ]
    );
    assert!(!d.done());
    let p = d.event(
        "",
        r#"{"Choices":[{"Delta":{"Role":"assistant","Content":"","ToolCalls":[{"Id":"call_1","Type":"function","Function":{"Name":"f","Arguments":"{\"a\""}}]},"FinishReason":""}],"Id":"a1"}"#,
    );
    assert_eq!(
        p,
        vec![
            Piece::ToolStart {
                index: 0,
                id: "call_1".into(),
                name: "f".into()
            },
            Piece::ToolArgs {
                index: 0,
                json: "{\"a\"".into()
            }
        ]
    );
    let p = d.event(
        "",
        r#"{"Choices":[{"Delta":{"ToolCalls":[{"Id":"call_1","Function":{"Arguments":":1}"}}]},"FinishReason":"tool_calls"}],"Id":"a1","Usage":{"PromptTokens":3,"CompletionTokens":9,"TotalTokens":12}}"#,
    );
    assert_eq!(p.len(), 3, "{p:?}");
    assert_eq!(
        p[0],
        Piece::ToolArgs {
            index: 0,
            json: ":1}".into()
        }
    );
    assert_eq!(p[2], Piece::Stop("tool_calls".into()));
    assert!(d.done());
}

#[test]
fn a_failure_mid_stream_is_an_error_piece() {
    let mut d = Decoder::default();
    let p = d.event(
        "",
        r#"{"Choices":[],"ErrorMsg":{"Msg":"请求模型超时","Code":4001},"Id":"a1"}"#,
    );
    assert_eq!(p[0], Piece::Error("请求模型超时 (4001)".into()));
    assert!(!d.done());
}

#[test]
fn undocumented_codes_fall_back_by_family() {
    assert_eq!(error_status("AuthFailure.MFAFailure"), 401);
    assert_eq!(
        error_status("InvalidParameterValue.ParameterValueError"),
        400
    );
    assert_eq!(error_status("OperationDenied.ImageIllegalDetected"), 400);
    assert_eq!(error_status("FailedOperation.EngineRequestTimeout"), 504);
    assert_eq!(error_status("InternalError"), 500);
    assert_eq!(error_status("FailedOperation.EngineServerError"), 500);
}

#[test]
fn parts_hunyuan_cannot_take_are_refused_by_name() {
    let hub = json!({"messages": [{"role": "user", "content": [{"type": "text", "text": "read"},
        {"type": "file", "file": {"file_data": "data:application/pdf;base64,JVBERi0="}}]}]});
    let view: hub::Request<'_> = super::super::typed::view(&hub);
    let e = check(&view).err().map(|e| e.0).unwrap_or_default();
    assert_eq!(
        e,
        "a file part cannot be sent to a Hunyuan model: its chat takes only text and images"
    );
    let ok = json!({"messages": [{"role": "user", "content": "hi"}]});
    assert!(check(&super::super::typed::view(&ok)).is_ok());
}
