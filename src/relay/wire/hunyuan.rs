//! Tencent Hunyuan's `ChatCompletions` (API 3.0, version 2023-09-01) ⇄ the hub (OpenAI chat
//! completions): requests, whole answers, usage, the SSE stream and the error codes. Hunyuan is
//! an upstream only: no client speaks it to Tollgate.
//!
//! Learnt from the API's reference as the official SDK carries it
//! (<https://github.com/TencentCloud/tencentcloud-sdk-go>, `tencentcloud/hunyuan/v20230901/`:
//! `models.go` for the fields, `errors.go` for the product's error codes) and TencentCloud API
//! 3.0's common response and error format:
//!
//! - the request's fields are PascalCase (`Model`, `Messages[].Role/Content/Contents/ToolCallId/
//!   ToolCalls`, `Stream`, `Temperature`, `TopP`, `Tools`, `ToolChoice` none/auto/custom with
//!   `CustomTool`); there is no output-limit field, so an answer is bounded only by the
//!   mid-stream ceiling;
//! - a whole answer is `{"Response": {Id, Created, Choices[].Message, Usage, Note, RequestId}}`,
//!   an error `{"Response": {"Error": {"Code", "Message"}, "RequestId"}}` (HTTP 200, as every
//!   TencentCloud API 3.0 error);
//! - a stream is SSE whose `data:` is the response parameters of one chunk (`Choices[].Delta`,
//!   the usage so far in every chunk); the chunk whose `FinishReason` is set (`stop`,
//!   `sensitive`, `tool_calls`) ends the answer; a failure mid-stream is an `ErrorMsg`
//!   (`Code` 4000 internal, 4001 timeout).

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::hub::{self, ContentOut, MessageOut, ToolCallOut};
use super::now;
use super::typed::{Int, List, Obj, Shape, Str, Verbatim};
use crate::relay::measure::price::Usage;

/// The API version every request names (`X-TC-Version`).
pub const VERSION: &str = "2023-09-01";

/// The action of a chat (`X-TC-Action`).
pub const ACTION: &str = "ChatCompletions";

/// A Hunyuan `ChatCompletions` request.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct Request<'a> {
    /// The model.
    pub model: &'a str,
    /// The conversation.
    pub messages: Vec<Message<'a>>,
    /// Streamed answer (SSE).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub stream: bool,
    /// Sampling temperature, verbatim.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<&'a Verbatim<'a>>,
    /// Nucleus sampling, verbatim.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_p: Option<&'a Verbatim<'a>>,
    /// Function tools.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<Tool<'a>>,
    /// `none`, `auto` or `custom` (with [`Request::custom_tool`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<&'static str>,
    /// The tool a `custom` choice forces.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub custom_tool: Option<Tool<'a>>,
}

/// A message of a Hunyuan request.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct Message<'a> {
    /// `system`, `user`, `assistant` or `tool`.
    pub role: &'static str,
    /// Text content.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<Cow<'a, str>>,
    /// Text and image parts (vision models).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub contents: Option<Vec<Content<'a>>>,
    /// The call a `tool` message answers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<&'a str>,
    /// An assistant message's tool calls.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<Vec<ToolCall<'a>>>,
}

/// A content part (`text` or `image_url`).
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct Content<'a> {
    /// `text` or `image_url`.
    #[serde(rename = "Type")]
    pub kind: &'static str,
    /// A text part's text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<Cow<'a, str>>,
    /// An image part's image (a URL or a `data:` URL).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image_url: Option<ImageUrl<'a>>,
}

/// An image part's image.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct ImageUrl<'a> {
    /// The URL.
    pub url: &'a str,
}

/// A function tool.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct Tool<'a> {
    /// Always `function`.
    #[serde(rename = "Type")]
    pub kind: &'static str,
    /// The function.
    pub function: ToolFunction<'a>,
}

/// A function tool's definition: its parameters' schema as JSON text.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct ToolFunction<'a> {
    /// Its name.
    pub name: &'a str,
    /// Its arguments' JSON schema, as JSON text.
    pub parameters: String,
    /// What it does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<&'a Verbatim<'a>>,
}

/// A tool call of an assistant message.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct ToolCall<'a> {
    /// The call's id.
    pub id: &'a str,
    /// Always `function`.
    #[serde(rename = "Type")]
    pub kind: &'static str,
    /// The function called.
    pub function: ToolCallFunction<'a>,
}

/// The function of a tool call.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct ToolCallFunction<'a> {
    /// Its name.
    pub name: &'a str,
    /// Its arguments (JSON text).
    pub arguments: Cow<'a, str>,
}

/// The hub role of a message as Hunyuan's (`developer` is a system prompt, the older
/// `function` a tool's answer).
fn role_of(role: &str) -> &'static str {
    match role {
        "system" | "developer" => "system",
        "assistant" => "assistant",
        "tool" | "function" => "tool",
        _ => "user",
    }
}

/// A hub message's content: text, or text and image parts when it holds an image (Hunyuan's
/// `Contents`, which only its vision models read).
fn content_of<'a>(
    content: &'a Shape<'a, hub::Part<'a>>,
) -> (Option<Cow<'a, str>>, Option<Vec<Content<'a>>>) {
    let Shape::List(parts) = content else {
        return (Some(hub::content_text(content)), None);
    };
    let has_image = parts.iter().any(|p| p.kind.get() == Some("image_url"));
    if !has_image {
        return (Some(hub::content_text(content)), None);
    }
    let contents = parts
        .iter()
        .filter_map(|p| match p.kind.get()? {
            "text" => Some(Content {
                kind: "text",
                text: Some(Cow::Borrowed(p.text.as_ref()?.as_str()?)),
                image_url: None,
            }),
            "image_url" => {
                let url = match &p.image_url {
                    Shape::Obj(image) => image.url.get()?,
                    Shape::Str(url) => url,
                    _ => return None,
                };
                Some(Content {
                    kind: "image_url",
                    text: None,
                    image_url: Some(ImageUrl { url }),
                })
            }
            _ => None,
        })
        .collect();
    (None, Some(contents))
}

/// A hub tool as Hunyuan's (its schema as JSON text; an object schema when it has none).
fn tool_of<'a>(tool: &'a hub::Tool<'a>) -> Option<Tool<'a>> {
    let f = &tool.function;
    let parameters = match f.parameters.value() {
        Some(schema @ Verbatim::Obj(_)) => schema.to_json(),
        _ => r#"{"type":"object","properties":{}}"#.to_owned(),
    };
    Some(Tool {
        kind: "function",
        function: ToolFunction {
            name: f.name.non_empty()?,
            parameters,
            description: f.description.value(),
        },
    })
}

/// Why `hub` cannot go to Hunyuan: a content part other than text and images (Hunyuan's
/// `Contents` take only those), named, so that nothing is dropped silently.
pub fn check(hub: &hub::Request<'_>) -> Result<(), super::ConvertError> {
    for message in hub.messages.iter() {
        if let Shape::List(parts) = &message.content
            && let Some(kind) = parts
                .iter()
                .map(|p| p.kind.or_empty())
                .find(|k| !matches!(*k, "text" | "image_url"))
        {
            return Err(super::ConvertError(format!(
                "a {kind} part cannot be sent to a Hunyuan model: its chat takes only text and images"
            )));
        }
    }
    Ok(())
}

/// A hub request as a Hunyuan `ChatCompletions` request for `model` (see [`check`] first).
pub fn request_from_hub<'a>(
    hub: &'a hub::Request<'a>,
    model: &'a str,
    stream: bool,
) -> Request<'a> {
    let messages = hub
        .messages
        .iter()
        .map(|m| {
            let role = role_of(m.role.or_empty());
            let (content, contents) = content_of(&m.content);
            let tool_calls: Vec<ToolCall<'a>> = m
                .tool_calls
                .iter()
                .map(|call| ToolCall {
                    id: call.id.or_empty(),
                    kind: "function",
                    function: ToolCallFunction {
                        name: call.function.name.or_empty(),
                        arguments: call.function.arguments_text(),
                    },
                })
                .collect();
            Message {
                role,
                content,
                contents,
                tool_call_id: m.tool_call_id.get().filter(|_| role == "tool"),
                tool_calls: Some(tool_calls).filter(|c| !c.is_empty() && role == "assistant"),
            }
        })
        .collect();
    let tools: Vec<Tool<'a>> = hub.tools.iter().filter_map(tool_of).collect();
    let (tool_choice, custom_tool) = match &hub.tool_choice {
        _ if tools.is_empty() => (None, None),
        Shape::Str(mode) if mode == "none" => (Some("none"), None),
        Shape::Str(mode) if mode == "auto" || mode == "required" => (Some("auto"), None),
        Shape::Obj(choice) => {
            let name = match &choice.function {
                Shape::Obj(f) => f.name.get(),
                _ => None,
            };
            // One named function: `custom`, with that function as `CustomTool`.
            match tools.iter().find(|t| Some(t.function.name) == name) {
                Some(forced) => (
                    Some("custom"),
                    Some(Tool {
                        kind: "function",
                        function: ToolFunction {
                            name: forced.function.name,
                            parameters: forced.function.parameters.clone(),
                            description: forced.function.description,
                        },
                    }),
                ),
                None => (None, None),
            }
        }
        _ => (None, None),
    };
    Request {
        model,
        messages,
        stream,
        temperature: hub.temperature.as_ref().filter(|v| !v.is_null()),
        top_p: hub.top_p.as_ref().filter(|v| !v.is_null()),
        tools,
        tool_choice,
        custom_tool,
    }
}

/// Hunyuan's token counts.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "PascalCase")]
pub struct UsageIn {
    /// Input tokens.
    pub prompt_tokens: Int,
    /// Output tokens.
    pub completion_tokens: Int,
}

impl UsageIn {
    /// As [`Usage`].
    pub fn usage(&self) -> Usage {
        Usage {
            prompt_tokens: self.prompt_tokens.0.unwrap_or(0).max(0),
            completion_tokens: self.completion_tokens.0.unwrap_or(0).max(0),
            cache_in_prompt: true,
            ..Usage::default()
        }
    }
}

/// The response parameters of a whole answer or of one stream chunk.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "PascalCase")]
pub struct Params<'a> {
    /// The answer's id.
    #[serde(borrow)]
    pub id: Str<'a>,
    /// The answers.
    #[serde(borrow)]
    pub choices: List<ChoiceIn<'a>>,
    /// Token counts (so far, in a stream).
    pub usage: Option<Obj<UsageIn>>,
    /// The API's error (HTTP 200).
    #[serde(borrow)]
    pub error: Option<Obj<ErrorIn<'a>>>,
    /// A failure in the middle of a stream.
    #[serde(borrow)]
    pub error_msg: Option<Obj<ErrorMsg<'a>>>,
}

/// An API 3.0 error.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "PascalCase")]
pub struct ErrorIn<'a> {
    /// The error code (`AuthFailure.SignatureFailure`, `LimitExceeded`, …).
    #[serde(borrow)]
    pub code: Str<'a>,
    /// What went wrong.
    #[serde(borrow)]
    pub message: Str<'a>,
}

/// A stream's in-band failure.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "PascalCase")]
pub struct ErrorMsg<'a> {
    /// What went wrong.
    #[serde(borrow)]
    pub msg: Str<'a>,
    /// 4000 (internal) or 4001 (timeout).
    pub code: Int,
}

/// One answer of a response.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "PascalCase")]
pub struct ChoiceIn<'a> {
    /// `stop`, `sensitive`, `tool_calls` (empty while a stream goes on).
    #[serde(borrow)]
    pub finish_reason: Str<'a>,
    /// A stream chunk's increment.
    #[serde(borrow)]
    pub delta: Obj<MessageIn<'a>>,
    /// A whole answer's message.
    #[serde(borrow)]
    pub message: Obj<MessageIn<'a>>,
}

/// A message (or a stream increment) of an answer.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "PascalCase")]
pub struct MessageIn<'a> {
    /// The text.
    #[serde(borrow)]
    pub content: Str<'a>,
    /// Tool calls (merged by id across a stream's chunks).
    #[serde(borrow)]
    pub tool_calls: List<ToolCallIn<'a>>,
}

/// A tool call of an answer.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "PascalCase")]
pub struct ToolCallIn<'a> {
    /// The call's id.
    #[serde(borrow)]
    pub id: Str<'a>,
    /// The function called.
    #[serde(borrow)]
    pub function: Obj<ToolCallFunctionIn<'a>>,
}

/// The function of an answer's tool call.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "PascalCase")]
pub struct ToolCallFunctionIn<'a> {
    /// Its name.
    #[serde(borrow)]
    pub name: Str<'a>,
    /// Its arguments (JSON text).
    #[serde(borrow)]
    pub arguments: Str<'a>,
}

/// A whole answer: its parameters under `Response`.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "PascalCase")]
pub struct Envelope<'a> {
    /// The response parameters.
    #[serde(borrow)]
    pub response: Obj<Params<'a>>,
}

/// Hunyuan's finish reason as OpenAI's.
pub fn finish_of(reason: &str) -> &'static str {
    match reason {
        "sensitive" => "content_filter",
        "tool_calls" => "tool_calls",
        "length" => "length",
        _ => "stop",
    }
}

/// A whole answer's parameters as a hub `chat.completion` (usage included when reported).
pub fn answer_to_hub(params: &Params<'_>) -> Value {
    let choice = params.choices.iter().next();
    let message = choice.map(|c| &*c.message);
    let text = message.map_or("", |m| m.content.or_empty());
    let calls: Vec<ToolCallOut<'_>> = message
        .into_iter()
        .flat_map(|m| m.tool_calls.iter())
        .map(|call| {
            ToolCallOut::function(
                call.id.clone(),
                call.function.name.clone(),
                Cow::Borrowed(call.function.arguments.get().unwrap_or("{}")),
            )
        })
        .collect();
    let content = if text.is_empty() && !calls.is_empty() {
        None
    } else {
        Some(ContentOut::Text(Cow::Borrowed(text)))
    };
    let mut out = MessageOut::new("assistant", content);
    if !calls.is_empty() {
        out.tool_calls = Some(calls);
    }
    let finish = finish_of(choice.map_or("", |c| c.finish_reason.or_empty()));
    let answer = hub::AnswerOut {
        id: format!("chatcmpl-{}", params.id.get().unwrap_or("tollgate")),
        object: "chat.completion",
        created: now(),
        model: Str::default(),
        choices: [hub::ChoiceOut {
            index: 0,
            message: out,
            finish_reason: finish,
        }],
        usage: params
            .usage
            .as_ref()
            .map(|u| super::openai::usage_json(&u.usage())),
    };
    hub::to_value(&answer)
}

/// The HTTP status of an API error whose code the channel type table does not list
/// (`crate::channel_types::errors` has the documented balance, key, rate-limit and client
/// codes): any other `AuthFailure.*` → 401; other parameter and content refusals
/// (`InvalidParameter*`, `MissingParameter*`, `OperationDenied.*`, `UnsupportedOperation*`) →
/// 400; the engine's timeout → 504; anything else → 500.
pub fn error_status(code: &str) -> u16 {
    let family = code.split('.').next().unwrap_or(code);
    match family {
        _ if code == "FailedOperation.EngineRequestTimeout" => 504,
        "AuthFailure" => 401,
        "InvalidParameter"
        | "InvalidParameterValue"
        | "MissingParameter"
        | "OperationDenied"
        | "UnsupportedOperation" => 400,
        _ => 500,
    }
}

mod stream;

pub use stream::Decoder;

#[cfg(test)]
mod tests;
