//! The hub format (OpenAI chat completions) typed: the one read view of a hub request and a hub
//! answer ([`Request`], [`Answer`], in [`read`]: strings borrowed from the value they are read
//! from, every field lenient as [`super::typed`] says), and the hub messages and answers the
//! converters write ([`MessageOut`], [`AnswerOut`]). Fields a converter copies verbatim (JSON
//! schemas, sampling numbers) are [`Verbatim`]s borrowed from the request, copied once, when
//! written.

use std::borrow::Cow;

use serde::Serialize;
use serde_json::Value;

use super::typed::Str;
#[cfg(doc)]
use super::typed::Verbatim;

pub mod read;

pub use read::{
    Answer, Audio, Choice, Extra, Function, FunctionDef, Google, ImageUrl, JsonSchema, Message,
    Part, PartText, Request, ResponseFormat, Thinking, Tool, ToolCall, ToolChoice,
    ToolChoiceFunction, content_text, int,
};

/// A hub message a converter writes.
#[derive(Debug, Serialize)]
pub struct MessageOut<'a> {
    /// The role.
    pub role: &'static str,
    /// Its content (`null` for an assistant message of tool calls only).
    pub content: Option<ContentOut<'a>>,
    /// The tool call a `tool` message answers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<Str<'a>>,
    /// An assistant message's tool calls.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<Vec<ToolCallOut<'a>>>,
    /// An assistant message's reasoning text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning_content: Option<String>,
    /// An assistant message's refusal.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refusal: Option<String>,
}

impl<'a> MessageOut<'a> {
    /// A message of `role` with `content`.
    pub fn new(role: &'static str, content: Option<ContentOut<'a>>) -> MessageOut<'a> {
        MessageOut {
            role,
            content,
            tool_call_id: None,
            tool_calls: None,
            reasoning_content: None,
            refusal: None,
        }
    }
}

/// A hub message's content.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum ContentOut<'a> {
    /// Text.
    Text(Cow<'a, str>),
    /// Content parts.
    Parts(Vec<PartOut<'a>>),
}

/// A hub content part a converter writes.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum PartOut<'a> {
    /// Text (verbatim: `null` when the source part had none).
    Text {
        /// The text.
        text: Str<'a>,
    },
    /// An image by URL.
    ImageUrl {
        /// The image.
        image_url: ImageUrlOut<'a>,
    },
    /// A file.
    File {
        /// The file's fields.
        file: FileOut<'a>,
    },
}

impl PartText for PartOut<'_> {
    fn text(&self) -> Option<&str> {
        match self {
            PartOut::Text { text } => text.get(),
            _ => None,
        }
    }
}

/// An image part's `image_url`.
#[derive(Debug, Serialize)]
pub struct ImageUrlOut<'a> {
    /// The URL.
    pub url: Cow<'a, str>,
    /// The detail level.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<Cow<'a, str>>,
}

/// A file part's `file`.
#[derive(Debug, Serialize)]
pub struct FileOut<'a> {
    /// Base64 data (a `data:` URL).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file_data: Option<Cow<'a, str>>,
    /// A URL the relay reads before converting.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file_url: Option<Cow<'a, str>>,
    /// The file's name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub filename: Option<Cow<'a, str>>,
}

/// A tool call a converter writes.
#[derive(Debug, Serialize)]
pub struct ToolCallOut<'a> {
    /// The call's id.
    pub id: Str<'a>,
    /// Always `function`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// The function called.
    pub function: FunctionOut<'a>,
}

/// The function of a tool call a converter writes.
#[derive(Debug, Serialize)]
pub struct FunctionOut<'a> {
    /// Its name.
    pub name: Str<'a>,
    /// Its arguments (JSON text).
    pub arguments: Cow<'a, str>,
}

impl<'a> ToolCallOut<'a> {
    /// A function call.
    pub fn function(id: Str<'a>, name: Str<'a>, arguments: Cow<'a, str>) -> ToolCallOut<'a> {
        ToolCallOut {
            id,
            kind: "function",
            function: FunctionOut { name, arguments },
        }
    }
}

/// A hub answer (`chat.completion`) a converter writes (usage added by the caller).
#[derive(Debug, Serialize)]
pub struct AnswerOut<'a> {
    /// The completion's id.
    pub id: String,
    /// Always `chat.completion`.
    pub object: &'static str,
    /// Seconds since the epoch.
    pub created: i64,
    /// The model as the upstream named it.
    pub model: Str<'a>,
    /// The one answer.
    pub choices: [ChoiceOut<'a>; 1],
    /// Usage, when the upstream reported it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<Value>,
}

/// The answer of a hub answer a converter writes.
#[derive(Debug, Serialize)]
pub struct ChoiceOut<'a> {
    /// Always 0.
    pub index: u32,
    /// The assistant's message.
    pub message: MessageOut<'a>,
    /// Why it stopped.
    pub finish_reason: &'static str,
}

/// `value` serialised as a JSON value (these types always serialise).
pub fn to_value<T: Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or_default()
}
