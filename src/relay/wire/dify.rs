//! Dify's chat app API (`POST /v1/chat-messages`) ⇄ the hub (OpenAI chat completions):
//! requests, whole answers, usage, the SSE events and the errors. Dify is an upstream only.
//!
//! Learnt from Dify's own API reference (the "Chat App API" page each app shows,
//! `web/app/components/develop/template/template_chat.en.mdx` in langgenius/dify):
//!
//! - the request is `{inputs, query, response_mode: streaming|blocking, conversation_id, user}`;
//!   the app keeps a conversation's history under its `conversation_id`, and `user` (required)
//!   names the end user;
//! - a blocking answer is `{event: "message", message_id, conversation_id, answer, metadata:
//!   {usage: {prompt_tokens, completion_tokens, total_tokens, …}}}`;
//! - a stream is SSE whose `data:` objects carry an `event`: `message` and `agent_message` (a
//!   piece of the answer in `answer`), `message_end` (the end, with `metadata.usage`), `error`
//!   (`status`, `code`, `message`; it ends the stream), and others (`agent_thought`,
//!   `message_file`, `tts_message`, `ping`, workflow events) that carry no answer text;
//! - errors before the answer are HTTP statuses with `{code, message, status}` (`invalid_param`,
//!   `app_unavailable`, `provider_not_initialize`, `provider_quota_exceeded`, …).
//!
//! A chat app takes one query: without a `conversation_id` the request's whole conversation is
//! sent as one transcript (`SYSTEM:` / `USER:` / `ASSISTANT:` turns, as the incumbent sends
//! it); with one (the client's `conversation_id` body field), only the last user message, the
//! app holding the rest. Images, files and tools are refused with a 400 naming them.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::hub::{self, ContentOut, MessageOut};
use super::typed::{Int, Obj, Shape, Str, Verbatim};
use super::{Decode, Piece, now, typed};
use crate::relay::measure::price::Usage;

/// The `user` sent when the client names none (Dify requires one).
pub const DEFAULT_USER: &str = "tollgate";

/// A chat-messages request.
#[derive(Debug, Serialize)]
pub struct Request<'a> {
    /// The app's input variables (none).
    pub inputs: serde_json::Map<String, Value>,
    /// The user's query.
    pub query: String,
    /// `streaming` or `blocking`.
    pub response_mode: &'static str,
    /// The conversation continued (empty: a new one).
    pub conversation_id: &'a str,
    /// The end user.
    pub user: &'a str,
}

/// Why `hub` cannot go to a Dify app: tools, or a content part other than text.
pub fn check(hub: &hub::Request<'_>) -> Result<(), super::ConvertError> {
    if hub.tools.iter().next().is_some() {
        return Err(super::ConvertError(
            "tools cannot be sent to a Dify app: its tools are the app's own".into(),
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
                "a {kind} part cannot be sent to a Dify app: its chat messages take only text"
            )));
        }
    }
    Ok(())
}

/// The query of `hub`: the whole conversation as a transcript, or (continuing
/// `conversation_id`) the last user message.
fn query_of(hub: &hub::Request<'_>, continued: bool) -> String {
    if continued {
        return hub
            .messages
            .iter()
            .rev()
            .find(|m| !matches!(m.role.or_empty(), "assistant" | "system" | "developer"))
            .map(|m| hub::content_text(&m.content).into_owned())
            .unwrap_or_default();
    }
    let mut out = String::new();
    for m in hub.messages.iter() {
        let label = match m.role.or_empty() {
            "system" | "developer" => "SYSTEM",
            "assistant" => "ASSISTANT",
            _ => "USER",
        };
        out.push_str(label);
        out.push_str(": \n");
        out.push_str(&hub::content_text(&m.content));
        out.push('\n');
    }
    out
}

/// A hub request as a chat-messages request (see [`check`] first).
pub fn request_from_hub<'a>(
    hub: &'a hub::Request<'a>,
    conversation_id: &'a str,
    stream: bool,
) -> Request<'a> {
    Request {
        inputs: serde_json::Map::new(),
        query: query_of(hub, !conversation_id.is_empty()),
        response_mode: if stream { "streaming" } else { "blocking" },
        conversation_id,
        user: hub
            .user
            .as_ref()
            .and_then(Verbatim::as_str)
            .filter(|u| !u.is_empty())
            .unwrap_or(DEFAULT_USER),
    }
}

/// Dify's usage (with prices, which are not read).
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

/// A message's metadata.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Metadata {
    /// The app's model usage.
    pub usage: Option<Obj<UsageIn>>,
}

/// A blocking answer or one stream event.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Event<'a> {
    /// `message`, `agent_message`, `message_end`, `error`, …
    #[serde(borrow)]
    pub event: Str<'a>,
    /// The message's id.
    #[serde(borrow)]
    pub message_id: Str<'a>,
    /// The conversation's id.
    #[serde(borrow)]
    pub conversation_id: Str<'a>,
    /// The answer (a piece of it, in a stream).
    #[serde(borrow)]
    pub answer: Str<'a>,
    /// Usage and citations.
    pub metadata: Obj<Metadata>,
    /// An error's code.
    #[serde(borrow)]
    pub code: Str<'a>,
    /// An error's message.
    #[serde(borrow)]
    pub message: Str<'a>,
}

/// A blocking answer as a hub `chat.completion`, with Dify's `conversation_id` beside it so a
/// client can continue the conversation.
pub fn answer_to_hub(answer: &Event<'_>) -> Value {
    let message = MessageOut::new(
        "assistant",
        Some(ContentOut::Text(Cow::Borrowed(answer.answer.or_empty()))),
    );
    let out = hub::AnswerOut {
        id: format!("chatcmpl-{}", answer.message_id.get().unwrap_or("tollgate")),
        object: "chat.completion",
        created: now(),
        model: Str::default(),
        choices: [hub::ChoiceOut {
            index: 0,
            message,
            finish_reason: "stop",
        }],
        usage: answer
            .metadata
            .usage
            .as_ref()
            .map(|u| super::openai::usage_json(&u.usage())),
    };
    let mut value = hub::to_value(&out);
    if let Some(id) = answer.conversation_id.non_empty() {
        value["conversation_id"] = Value::String(id.to_owned());
    }
    value
}

/// Decodes Dify's stream events.
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
        let event: Event<'_> = typed::view(&value);
        let mut pieces = Vec::new();
        let kind = event.event.or_empty();
        if kind == "error" {
            pieces.push(Piece::Error(format!(
                "{}: {}",
                event.code.or_empty(),
                event.message.or_empty()
            )));
            return pieces;
        }
        if !matches!(kind, "message" | "agent_message" | "message_end") {
            return pieces;
        }
        if !self.started {
            self.started = true;
            pieces.push(Piece::Start {
                id: event.message_id.or_empty().to_owned(),
                model: String::new(),
            });
        }
        if let Some(text) = event.answer.non_empty()
            && kind != "message_end"
        {
            pieces.push(Piece::Text(text.to_owned()));
        }
        if kind == "message_end" {
            if let Some(usage) = &event.metadata.usage {
                pieces.push(Piece::Usage(usage.usage()));
            }
            pieces.push(Piece::Stop("stop".to_owned()));
            self.done = true;
        }
        pieces
    }

    fn done(&self) -> bool {
        self.done
    }
}

#[cfg(test)]
#[path = "dify_tests.rs"]
mod tests;
