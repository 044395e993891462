//! Coze's chat API v3 (`POST /v3/chat`) ⇄ the hub (OpenAI chat completions): requests, the
//! SSE events, usage and errors. Coze is an upstream only.
//!
//! Learnt from Coze's own documentation ("发起对话", https://www.coze.cn/open/docs/developer_guides/chat_v3;
//! its types in the official coze-py SDK, `cozepy/chat/__init__.py`; the error codes at
//! https://www.coze.cn/open/docs/developer_guides/coze_error_codes):
//!
//! - the request is `{bot_id, user_id, stream, additional_messages: [{role: user|assistant,
//!   type: question|answer, content, content_type: text}]}`; the last of `additional_messages`
//!   is the query, the others its context; a conversation is continued with the
//!   `conversation_id` query parameter;
//! - a message with images is multimodal: `content_type: object_string`, its `content` a JSON
//!   array (as a string) of `{type: text, text}` and `{type: image, file_url}` objects (or
//!   `file_id` for a file uploaded to Coze; the docs' 多模态内容 object_string, coze-py's
//!   `MessageObjectString`); an image must be a publicly reachable URL, so an inline (`data:`)
//!   image is refused;
//! - a non-streamed chat answers at once with the chat's id only (the answer must then be polled
//!   through `/v3/chat/retrieve` and `/v3/chat/message/list`), so the relay always asks for a
//!   stream and gathers it when its client did not stream (`relay::adaptor::coze`);
//! - the stream is SSE with `event:` names: `conversation.chat.created` / `.in_progress` (a Chat
//!   object), `conversation.message.delta` (a Message object whose `content` is the next piece;
//!   `type: answer` is the answer), `conversation.message.completed` (the whole message again, and
//!   the `verbose`, `follow_up`, `function_call`, `tool_output` and `knowledge` messages, which
//!   are not the answer), `conversation.chat.completed` (the Chat object with `usage:
//!   {token_count, output_count, input_count}`), `conversation.chat.failed` (its `last_error:
//!   {code, msg}`), `conversation.chat.requires_action` (the bot waits for a local plugin's
//!   output), `error` (`{code, msg}`) and `done`;
//! - errors before the stream are a JSON body `{code, msg}` with a non-zero `code`.
//!
//! Coze has no system role (a bot's persona is its own): a system or developer message goes as
//! a user message. Images by URL go; inline images, files, audio and tools are refused with a
//! 400 naming them.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::hub;
use super::typed::{Int, Obj, Shape, Str, Verbatim};
use super::{Decode, Piece, typed};
use crate::relay::measure::price::Usage;

/// The `user_id` sent when the client names no `user` (Coze requires one).
pub const DEFAULT_USER: &str = "tollgate";

/// One of `additional_messages`.
#[derive(Debug, Serialize, PartialEq, Eq)]
pub struct EnterMessage {
    /// `user` or `assistant`.
    pub role: &'static str,
    /// `question` (a user's) or `answer` (the bot's).
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// The text, or the JSON text of an `object_string` message's objects.
    pub content: String,
    /// `text`, or `object_string` for a message with images.
    pub content_type: &'static str,
}

/// One object of a multimodal (`object_string`) message.
#[derive(Debug, Serialize)]
struct ObjectItem<'a> {
    /// `text` or `image`.
    #[serde(rename = "type")]
    kind: &'static str,
    /// A text object's text.
    #[serde(skip_serializing_if = "Option::is_none")]
    text: Option<&'a str>,
    /// An image object's URL.
    #[serde(skip_serializing_if = "Option::is_none")]
    file_url: Option<&'a str>,
}

/// A `/v3/chat` request.
#[derive(Debug, Serialize)]
pub struct Request<'a> {
    /// The bot asked.
    pub bot_id: &'a str,
    /// The end user.
    pub user_id: &'a str,
    /// Always true (see the module header).
    pub stream: bool,
    /// The conversation: context, then the query.
    pub additional_messages: Vec<EnterMessage>,
}

/// An image part's URL (`image_url` as `{url}` or, leniently, the URL alone).
fn image_url<'s>(part: &'s hub::Part<'_>) -> &'s str {
    match &part.image_url {
        Shape::Obj(image) => image.url.or_empty(),
        Shape::Str(url) => url,
        _ => "",
    }
}

/// Whether `url` is one Coze can fetch (a web address, not inline data).
fn fetchable(url: &str) -> bool {
    let scheme = url.split_once(':').map_or("", |(scheme, _)| scheme);
    scheme.eq_ignore_ascii_case("https") || scheme.eq_ignore_ascii_case("http")
}

/// Why `hub` cannot go to a Coze bot: tools, an image not given by URL, or a content part
/// other than text and image.
pub fn check(hub: &hub::Request<'_>) -> Result<(), super::ConvertError> {
    if hub.tools.iter().next().is_some() {
        return Err(super::ConvertError(
            "tools cannot be sent to a Coze bot: its plugins and workflows are the bot's own"
                .into(),
        ));
    }
    for message in hub.messages.iter() {
        let Shape::List(parts) = &message.content else {
            continue;
        };
        for part in parts {
            match part.kind.or_empty() {
                "text" => {}
                "image_url" if fetchable(image_url(part)) => {}
                "image_url" => {
                    return Err(super::ConvertError(
                        "an image_url part cannot be sent to a Coze bot as inline data: Coze \
                         takes images by URL"
                            .into(),
                    ));
                }
                kind => {
                    return Err(super::ConvertError(format!(
                        "a {kind} part cannot be sent to a Coze bot: only text and image URLs \
                         are relayed to it"
                    )));
                }
            }
        }
    }
    Ok(())
}

/// A message's `(content, content_type)`: its text, or its text and image objects as an
/// `object_string` when it has an image.
fn content(message: &hub::Message<'_>) -> (String, &'static str) {
    if let Shape::List(parts) = &message.content
        && parts.iter().any(|p| p.kind.or_empty() == "image_url")
    {
        let objects: Vec<ObjectItem<'_>> = parts
            .iter()
            .filter_map(|part| match part.kind.or_empty() {
                "text" => hub::PartText::text(part).map(|text| ObjectItem {
                    kind: "text",
                    text: Some(text),
                    file_url: None,
                }),
                "image_url" => Some(ObjectItem {
                    kind: "image",
                    text: None,
                    file_url: Some(image_url(part)),
                }),
                _ => None,
            })
            .collect();
        // Strings and optional strings always serialise.
        let text = serde_json::to_string(&objects).unwrap_or_default();
        return (text, "object_string");
    }
    (hub::content_text(&message.content).into_owned(), "text")
}

/// A hub request as a `/v3/chat` request to `bot_id` (see [`check`] first); always streamed.
pub fn request_from_hub<'a>(hub: &'a hub::Request<'a>, bot_id: &'a str) -> Request<'a> {
    let additional_messages = hub
        .messages
        .iter()
        .map(|m| {
            let (role, kind) = match m.role.or_empty() {
                "assistant" => ("assistant", "answer"),
                _ => ("user", "question"),
            };
            let (content, content_type) = content(m);
            EnterMessage {
                role,
                kind,
                content,
                content_type,
            }
        })
        .collect();
    Request {
        bot_id,
        user_id: hub
            .user
            .as_ref()
            .and_then(Verbatim::as_str)
            .filter(|u| !u.is_empty())
            .unwrap_or(DEFAULT_USER),
        stream: true,
        additional_messages,
    }
}

/// A chat's usage.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct UsageIn {
    /// Input and output tokens.
    pub token_count: Int,
    /// Output tokens.
    pub output_count: Int,
    /// Input tokens.
    pub input_count: Int,
}

impl UsageIn {
    /// As [`Usage`]; a total without its input part counts the rest as input.
    pub fn usage(&self) -> Usage {
        let output = self.output_count.0.unwrap_or(0).max(0);
        let input = match self.input_count.0 {
            Some(input) => input,
            None => self.token_count.0.unwrap_or(0).saturating_sub(output),
        };
        Usage {
            prompt_tokens: input.max(0),
            completion_tokens: output,
            cache_in_prompt: true,
            ..Usage::default()
        }
    }
}

/// An error: `{code, msg}` (a body before the stream, an `error` event, a chat's `last_error`).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct ErrorIn<'a> {
    /// 0: none.
    pub code: Int,
    /// What went wrong.
    #[serde(borrow)]
    pub msg: Str<'a>,
}

impl ErrorIn<'_> {
    /// `(code, msg)` when this is an error (a non-zero code).
    pub fn error(&self) -> Option<(i64, &str)> {
        self.code
            .0
            .filter(|c| *c != 0)
            .map(|c| (c, self.msg.or_empty()))
    }
}

/// The data of a stream event: a Chat object or a Message object (their fields together).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct EventData<'a> {
    /// The chat's or the message's id.
    #[serde(borrow)]
    pub id: Str<'a>,
    /// A message's role.
    #[serde(borrow)]
    pub role: Str<'a>,
    /// A message's type (`answer`, `verbose`, `follow_up`, …).
    #[serde(borrow, rename = "type")]
    pub kind: Str<'a>,
    /// A message's content (a piece of it in a delta).
    #[serde(borrow)]
    pub content: Str<'a>,
    /// A chat's usage.
    pub usage: Option<Obj<UsageIn>>,
    /// A failed chat's error.
    #[serde(borrow)]
    pub last_error: Obj<ErrorIn<'a>>,
}

/// A piece that ends the answer with `code` and `message` ("code: message", as every native
/// type's error piece reads).
fn failure(code: impl std::fmt::Display, message: &str) -> Piece {
    Piece::Error(format!("{code}: {message}"))
}

/// Decodes Coze's stream events.
#[derive(Debug, Default)]
pub struct Decoder {
    started: bool,
    /// Answer messages whose deltas were read (their `completed` event repeats them).
    streamed: HashSet<String>,
    done: bool,
}

impl Decode for Decoder {
    fn event(&mut self, event: &str, data: &str) -> Vec<Piece> {
        let Ok(value) = serde_json::from_str::<Value>(data) else {
            return Vec::new();
        };
        let body: EventData<'_> = typed::view(&value);
        let mut pieces = Vec::new();
        if !self.started && event != "done" {
            self.started = true;
            pieces.push(Piece::Start {
                id: body.id.or_empty().to_owned(),
                model: String::new(),
            });
        }
        let answer = body.kind.or_empty() == "answer" && body.role.or_empty() != "user";
        match event {
            "conversation.message.delta" if answer => {
                self.streamed.insert(body.id.or_empty().to_owned());
                if let Some(text) = body.content.non_empty() {
                    pieces.push(Piece::Text(text.to_owned()));
                }
            }
            // A whole answer message none of whose deltas came (a card, say).
            "conversation.message.completed"
                if answer && !self.streamed.contains(body.id.or_empty()) =>
            {
                if let Some(text) = body.content.non_empty() {
                    pieces.push(Piece::Text(text.to_owned()));
                }
            }
            "conversation.chat.completed" => {
                if let Some(usage) = &body.usage {
                    pieces.push(Piece::Usage(usage.usage()));
                }
                pieces.push(Piece::Stop("stop".to_owned()));
                self.done = true;
            }
            "conversation.chat.failed" => {
                let (code, message) = body.last_error.0.error().unwrap_or((0, "the chat failed"));
                pieces.push(failure(code, message));
            }
            "conversation.chat.requires_action" => pieces.push(failure(
                "requires_action",
                "the bot waits for a local plugin's output, which the relay cannot give",
            )),
            "error" => {
                let error: ErrorIn<'_> = typed::view(&value);
                let (code, message) = error.error().unwrap_or((0, "the stream failed"));
                pieces.push(failure(code, message));
            }
            _ => {}
        }
        pieces
    }

    fn done(&self) -> bool {
        self.done
    }
}

/// The status of a Coze error code the rule set does not name
/// ([`crate::channel_types::errors`]): its internal error 500, others 502 (the bot's model or
/// configuration: another channel may serve).
pub fn error_status(code: &str) -> u16 {
    if code == "5000" { 500 } else { 502 }
}

#[cfg(test)]
#[path = "coze_tests.rs"]
mod tests;
