//! iFlytek Spark's chat frames (the WebSocket API, <https://xfyun.cn/doc/spark/Web.html>): the
//! one request frame sent after the handshake — `header.app_id`, `parameter.chat` (`domain`,
//! `temperature`, `max_tokens`) and `payload.message.text` (the conversation as role/content
//! pairs) — and the answer frames read until `header.status` is 2: `header.code` (0, else an
//! error code of <https://xfyun.cn/doc/spark/接口说明.html>, the connection then closes),
//! `payload.choices.text[].content` (the answer's next piece) and, in the last frame,
//! `payload.usage.text` (`prompt_tokens` the whole prompt, history included; `question_tokens`
//! the last question alone, a part of it; `completion_tokens`).
//!
//! The request comes from the hub (OpenAI chat) request: Spark's chat takes text only, so a
//! part of another kind (an image, a file, audio) and function tools are refused with a 400
//! naming them; the answer frames decode into the hub's pieces ([`Decoder`]).

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use super::typed::{Int, List, Obj, Str, Verbatim};
use super::{ConvertError, Piece, hub};
use crate::relay::measure::price::Usage;

/// The request frame.
#[derive(Debug, Serialize)]
pub struct Request<'a> {
    /// The platform part.
    pub header: Header<'a>,
    /// The service's parameters.
    pub parameter: Parameter<'a>,
    /// The conversation.
    pub payload: Payload<'a>,
}

/// `header`: the application.
#[derive(Debug, Serialize)]
pub struct Header<'a> {
    /// The APPID of the key.
    pub app_id: &'a str,
}

/// `parameter`.
#[derive(Debug, Serialize)]
pub struct Parameter<'a> {
    /// `parameter.chat`.
    pub chat: Chat<'a>,
}

/// `parameter.chat`.
#[derive(Debug, Serialize)]
pub struct Chat<'a> {
    /// The model's domain (`lite`, `generalv3.5`, `4.0Ultra`, …).
    pub domain: &'a str,
    /// Sampling temperature, verbatim.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<&'a Verbatim<'a>>,
    /// The answer's token limit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<i64>,
}

/// `payload`.
#[derive(Debug, Serialize)]
pub struct Payload<'a> {
    /// `payload.message`.
    pub message: MessageList<'a>,
}

/// `payload.message`.
#[derive(Debug, Serialize)]
pub struct MessageList<'a> {
    /// The conversation, oldest first.
    pub text: Vec<Message<'a>>,
}

/// One message.
#[derive(Debug, Serialize)]
pub struct Message<'a> {
    /// `system`, `user` or `assistant`.
    pub role: &'static str,
    /// Its text.
    pub content: Cow<'a, str>,
}

/// Refuses what Spark's chat cannot take: parts other than text, function tools, tool turns.
pub fn check(hub: &hub::Request<'_>) -> Result<(), ConvertError> {
    if hub.tools.iter().next().is_some() {
        return Err(ConvertError(
            "tools cannot be sent to a Spark model through Tollgate".into(),
        ));
    }
    for message in hub.messages.iter() {
        if let super::typed::Shape::List(parts) = &message.content
            && let Some(kind) = parts
                .iter()
                .map(|p| p.kind.or_empty())
                .find(|k| *k != "text")
        {
            return Err(ConvertError(format!(
                "a part of type {kind} cannot be sent to a Spark model: its chat takes only text"
            )));
        }
        if matches!(message.role.or_empty(), "tool" | "function")
            || message.tool_calls.iter().next().is_some()
        {
            return Err(ConvertError(
                "tool calls cannot be sent to a Spark model through Tollgate".into(),
            ));
        }
    }
    Ok(())
}

/// A hub request as Spark's request frame for `app_id` and `domain` (see [`check`] first).
pub fn request_from_hub<'a>(
    hub: &'a hub::Request<'a>,
    app_id: &'a str,
    domain: &'a str,
) -> Request<'a> {
    let text = hub
        .messages
        .iter()
        .map(|m| Message {
            role: match m.role.or_empty() {
                "system" | "developer" => "system",
                "assistant" => "assistant",
                _ => "user",
            },
            content: hub::content_text(&m.content),
        })
        .collect();
    Request {
        header: Header { app_id },
        parameter: Parameter {
            chat: Chat {
                domain,
                temperature: hub.temperature.as_ref(),
                max_tokens: hub.max_output(),
            },
        },
        payload: Payload {
            message: MessageList { text },
        },
    }
}

/// One answer frame, as read.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Frame<'a> {
    /// `header`.
    #[serde(borrow)]
    pub header: Obj<FrameHeader<'a>>,
    /// `payload`.
    #[serde(borrow)]
    pub payload: Obj<FramePayload<'a>>,
}

/// `header` of an answer frame.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct FrameHeader<'a> {
    /// 0, or the error code.
    pub code: Int,
    /// The error's text (`Success` otherwise).
    #[serde(borrow)]
    pub message: Str<'a>,
    /// The session id.
    #[serde(borrow)]
    pub sid: Str<'a>,
    /// 0 first, 1 in between, 2 last.
    pub status: Int,
}

/// `payload` of an answer frame.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct FramePayload<'a> {
    /// `payload.choices`.
    #[serde(borrow)]
    pub choices: Obj<Choices<'a>>,
    /// `payload.usage` (the last frame).
    pub usage: Option<Obj<UsageOuter>>,
}

/// `payload.choices`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Choices<'a> {
    /// 2 on the last frame.
    pub status: Int,
    /// The pieces of text.
    #[serde(borrow)]
    pub text: List<Text<'a>>,
}

/// One piece of the answer.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Text<'a> {
    /// Its text.
    #[serde(borrow)]
    pub content: Str<'a>,
}

/// `payload.usage`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct UsageOuter {
    /// `payload.usage.text`.
    pub text: Obj<UsageIn>,
}

/// `payload.usage.text`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct UsageIn {
    /// The whole prompt's tokens (history included).
    pub prompt_tokens: Int,
    /// The last question's tokens (a part of `prompt_tokens`).
    pub question_tokens: Int,
    /// The answer's tokens.
    pub completion_tokens: Int,
    /// Their sum.
    pub total_tokens: Int,
}

impl UsageIn {
    /// As [`Usage`]: the prompt is `prompt_tokens` (`question_tokens` is inside it).
    pub fn usage(&self) -> Usage {
        let completion = self.completion_tokens.0.unwrap_or(0).max(0);
        let prompt = match self.prompt_tokens.0 {
            Some(p) => p.max(0),
            None => self
                .total_tokens
                .0
                .map_or(0, |t| t.saturating_sub(completion).max(0)),
        };
        Usage {
            prompt_tokens: prompt,
            completion_tokens: completion,
            cache_in_prompt: true,
            ..Usage::default()
        }
    }
}

/// An error a frame reports: its code and text.
pub fn frame_error(frame: &Frame<'_>) -> Option<(i64, String)> {
    match frame.header.code.0 {
        Some(0) | None => None,
        Some(code) => Some((code, frame.header.message.or_empty().to_owned())),
    }
}

/// Decodes Spark's answer frames (one WebSocket text message each) into the hub's pieces.
#[derive(Debug, Default)]
pub struct Decoder {
    started: bool,
    done: bool,
}

impl Decoder {
    /// The pieces of one frame; an error frame gives [`Piece::Error`].
    pub fn frame(&mut self, text: &str) -> Vec<Piece> {
        let Ok(frame) = serde_json::from_str::<Frame<'_>>(text) else {
            return vec![Piece::Error(
                "Spark sent a frame that is not its JSON".into(),
            )];
        };
        let mut pieces = Vec::new();
        if let Some((code, message)) = frame_error(&frame) {
            pieces.push(Piece::Error(format!("Spark: {code}: {message}")));
            return pieces;
        }
        if !self.started {
            self.started = true;
            pieces.push(Piece::Start {
                id: frame.header.sid.or_empty().to_owned(),
                model: String::new(),
            });
        }
        for text in frame.payload.choices.text.iter() {
            if let Some(content) = text.content.non_empty() {
                pieces.push(Piece::Text(content.to_owned()));
            }
        }
        if let Some(usage) = &frame.payload.usage {
            pieces.push(Piece::Usage(usage.text.usage()));
        }
        if frame.header.status.0 == Some(2) || frame.payload.choices.status.0 == Some(2) {
            pieces.push(Piece::Stop("stop".into()));
            self.done = true;
        }
        pieces
    }

    /// Whether the last frame was read.
    pub fn done(&self) -> bool {
        self.done
    }
}

#[cfg(test)]
#[path = "spark/tests.rs"]
mod tests;
