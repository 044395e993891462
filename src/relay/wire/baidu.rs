//! Baidu Qianfan v1 (ERNIE, `wenxinworkshop/chat/{endpoint}`) ⇄ the hub (OpenAI chat
//! completions): requests, whole answers, usage, the SSE stream and the error answers. Baidu is
//! an upstream only: no client speaks it to Tollgate.
//!
//! Learnt from Qianfan's ERNIE chat reference (cloud.baidu.com, WENXINWORKSHOP "ERNIE-4.0-8K" /
//! "ERNIE-3.5-8K" pages: `POST /rpc/2.0/ai_custom/v1/wenxinworkshop/chat/{endpoint}?access_token=…`)
//! and the public error-code table of Baidu's AI platform:
//!
//! - the request is `{messages: [{role: user|assistant, content}], system, temperature, top_p,
//!   stream, max_output_tokens, user_id}`: the system prompt is a field of its own, not a
//!   message, and the conversation alternates user and assistant turns;
//! - a whole answer is `{id, object, created, result, is_truncated, need_clear_history,
//!   finish_reason, usage: {prompt_tokens, completion_tokens, total_tokens}}`;
//! - a stream is SSE whose `data:` is such an object per sentence (`sentence_id`, `result` the
//!   sentence's text, the usage so far) and whose last has `is_end: true`;
//! - an error is `{error_code, error_msg}` in an HTTP 200 answer (`110` / `111` the access
//!   token invalid or expired, `17` / `18` / `19` the daily, per-second and total request
//!   limits, `336000`… the model service's own).
//!
//! Tool calls (ERNIE's older `functions`) are not converted: a request with tools, images or
//! files is refused with a 400 naming them, so that nothing is dropped silently.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::hub::{self, ContentOut, MessageOut};
use super::typed::{Int, Obj, Shape, Str, Verbatim};
use super::{Decode, Piece, now, typed};
use crate::relay::measure::price::Usage;

/// A Qianfan v1 chat request.
#[derive(Debug, Serialize)]
pub struct Request<'a> {
    /// The conversation: user and assistant turns, alternating, a user turn last.
    pub messages: Vec<Message<'a>>,
    /// The system prompt.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system: Option<String>,
    /// Streamed answer (SSE).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub stream: bool,
    /// Sampling temperature, verbatim.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<&'a Verbatim<'a>>,
    /// Nucleus sampling, verbatim.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_p: Option<&'a Verbatim<'a>>,
    /// The output limit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<i64>,
    /// The end user's id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user_id: Option<&'a str>,
}

/// A turn of a Qianfan v1 conversation.
#[derive(Debug, Serialize, PartialEq)]
pub struct Message<'a> {
    /// `user` or `assistant`.
    pub role: &'static str,
    /// The text.
    pub content: Cow<'a, str>,
}

/// Why `hub` cannot go to a Qianfan v1 model: tools, or a content part other than text.
pub fn check(hub: &hub::Request<'_>) -> Result<(), super::ConvertError> {
    if hub.tools.iter().next().is_some() {
        return Err(super::ConvertError(
            "tools cannot be sent to a Baidu Qianfan v1 model: use a Qianfan v2 channel (46)"
                .into(),
        ));
    }
    for message in hub.messages.iter() {
        if let Shape::List(parts) = &message.content
            && let Some(kind) = parts
                .iter()
                .map(|p| p.kind.or_empty())
                .find(|k| *k != "text")
        {
            return Err(super::ConvertError(format!(
                "a {kind} part cannot be sent to a Baidu Qianfan v1 model: its chat takes only text"
            )));
        }
    }
    Ok(())
}

/// A hub request as a Qianfan v1 request (see [`check`] first): system and developer messages
/// joined into `system`; tool answers as user turns; consecutive turns of one role joined,
/// since the API takes only alternating turns.
pub fn request_from_hub<'a>(hub: &'a hub::Request<'a>, stream: bool) -> Request<'a> {
    let mut system: Vec<Cow<'a, str>> = Vec::new();
    let mut messages: Vec<Message<'a>> = Vec::new();
    for m in hub.messages.iter() {
        let text = hub::content_text(&m.content);
        let role = match m.role.or_empty() {
            "system" | "developer" => {
                system.push(text);
                continue;
            }
            "assistant" => "assistant",
            _ => "user",
        };
        match messages.last_mut() {
            Some(last) if last.role == role => {
                let joined = format!("{}\n{}", last.content, text);
                last.content = Cow::Owned(joined);
            }
            _ => messages.push(Message {
                role,
                content: text,
            }),
        }
    }
    let limit = hub.max_output();
    Request {
        messages,
        system: (!system.is_empty()).then(|| system.join("\n")),
        stream,
        temperature: hub.temperature.as_ref().filter(|v| !v.is_null()),
        top_p: hub.top_p.as_ref().filter(|v| !v.is_null()),
        max_output_tokens: limit.filter(|n| *n > 0),
        user_id: hub.user.as_ref().and_then(Verbatim::as_str),
    }
}

/// Qianfan's token counts.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
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

/// A whole answer, one stream chunk, or an error.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Answer<'a> {
    /// The answer's id.
    #[serde(borrow)]
    pub id: Str<'a>,
    /// The text (a stream chunk's sentence).
    #[serde(borrow)]
    pub result: Str<'a>,
    /// `normal`, `stop`, `length`, `content_filter`, `function_call`.
    #[serde(borrow)]
    pub finish_reason: Str<'a>,
    /// The last chunk of a stream.
    pub is_end: bool,
    /// Token counts (so far, in a stream).
    pub usage: Option<Obj<UsageIn>>,
    /// The error's code (an error answer; a number).
    pub error_code: Int,
    /// The error's message.
    #[serde(borrow)]
    pub error_msg: Str<'a>,
}

impl Answer<'_> {
    /// The error's code and message, when this is an error answer.
    pub fn error(&self) -> Option<(i64, &str)> {
        self.error_code
            .0
            .filter(|c| *c != 0)
            .map(|c| (c, self.error_msg.or_empty()))
    }
}

/// Qianfan's finish reason as OpenAI's.
pub fn finish_of(reason: &str) -> &'static str {
    match reason {
        "length" => "length",
        "content_filter" => "content_filter",
        _ => "stop",
    }
}

/// A whole answer as a hub `chat.completion` (usage included when reported).
pub fn answer_to_hub(answer: &Answer<'_>) -> Value {
    let message = MessageOut::new(
        "assistant",
        Some(ContentOut::Text(Cow::Borrowed(answer.result.or_empty()))),
    );
    let out = hub::AnswerOut {
        id: format!("chatcmpl-{}", answer.id.get().unwrap_or("tollgate")),
        object: "chat.completion",
        created: now(),
        model: Str::default(),
        choices: [hub::ChoiceOut {
            index: 0,
            message,
            finish_reason: finish_of(answer.finish_reason.or_empty()),
        }],
        usage: answer
            .usage
            .as_ref()
            .map(|u| super::openai::usage_json(&u.usage())),
    };
    hub::to_value(&out)
}

/// The HTTP status of an error code the channel type table does not list
/// (`crate::channel_types::errors` has the documented limit, key and parameter codes): the
/// platform's unknown and unavailable errors (1, 2), the model service's internal ones
/// (`336000`, `336100`) and an access token refused (110, 111: the adaptor exchanges the key
/// again) → 503 (another channel may serve), anything else → 500.
pub fn error_status(code: &str) -> u16 {
    match code {
        "1" | "2" | "110" | "111" | "336000" | "336100" => 503,
        _ => 500,
    }
}

/// Decodes Qianfan v1's stream chunks.
#[derive(Debug, Default)]
pub struct Decoder {
    started: bool,
    done: bool,
}

impl Decode for Decoder {
    fn event(&mut self, _event: &str, data: &str) -> Vec<Piece> {
        let Ok(value) = serde_json::from_str::<Value>(data) else {
            return Vec::new();
        };
        let chunk: Answer<'_> = typed::view(&value);
        let mut pieces = Vec::new();
        if let Some((code, message)) = chunk.error() {
            pieces.push(Piece::Error(format!("{code}: {message}")));
            return pieces;
        }
        if !self.started {
            self.started = true;
            pieces.push(Piece::Start {
                id: chunk.id.or_empty().to_owned(),
                model: String::new(),
            });
        }
        if let Some(text) = chunk.result.non_empty() {
            pieces.push(Piece::Text(text.to_owned()));
        }
        if let Some(usage) = &chunk.usage {
            pieces.push(Piece::Usage(usage.usage()));
        }
        if chunk.is_end {
            pieces.push(Piece::Stop(
                finish_of(chunk.finish_reason.or_empty()).to_owned(),
            ));
            self.done = true;
        }
        pieces
    }

    fn done(&self) -> bool {
        self.done
    }
}

#[cfg(test)]
#[path = "baidu_tests.rs"]
mod tests;
