//! The hub format (OpenAI chat completions) typed: a read view of a hub request and a hub
//! answer ([`Request`], [`Answer`]; strings borrowed from the value they are read from, every
//! field lenient as [`super::typed`] says), and the hub messages and answers the converters
//! write ([`MessageOut`], [`AnswerOut`]). Fields a converter copies verbatim (JSON schemas,
//! sampling numbers) are [`Verbatim`]s borrowed from the request, copied once, when written.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::typed::{Int, List, Obj, Shape, Str, Verbatim};

/// A hub request, as the upstream-side converters read it.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Request<'a> {
    /// The conversation.
    #[serde(borrow)]
    pub messages: List<Message<'a>>,
    /// `max_completion_tokens` (OpenAI's newer name).
    pub max_completion_tokens: Int,
    /// `max_tokens`.
    pub max_tokens: Int,
    /// Sampling temperature, verbatim.
    #[serde(borrow)]
    pub temperature: Option<Verbatim<'a>>,
    /// Nucleus sampling, verbatim.
    #[serde(borrow)]
    pub top_p: Option<Verbatim<'a>>,
    /// Whether tool calls may run in parallel, verbatim.
    #[serde(borrow)]
    pub parallel_tool_calls: Option<Verbatim<'a>>,
    /// The end user's id, verbatim.
    #[serde(borrow)]
    pub user: Option<Verbatim<'a>>,
    /// `reasoning_effort`.
    #[serde(borrow)]
    pub reasoning_effort: Str<'a>,
    /// Function tools.
    #[serde(borrow)]
    pub tools: List<Tool<'a>>,
    /// `tool_choice`: a mode string or `{"type": "function", "function": {"name"}}`.
    #[serde(borrow)]
    pub tool_choice: Shape<'a, ToolChoice<'a>>,
    /// `response_format`.
    #[serde(borrow)]
    pub response_format: Obj<ResponseFormat<'a>>,
    /// How many answers.
    pub n: Int,
    /// Stop sequences: a string or a list.
    #[serde(borrow)]
    pub stop: Shape<'a, serde::de::IgnoredAny>,
}

/// A hub message.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Message<'a> {
    /// `system`, `developer`, `user`, `assistant`, `tool` (or the older `function`).
    #[serde(borrow)]
    pub role: Str<'a>,
    /// A string, or content parts.
    #[serde(borrow)]
    pub content: Shape<'a, Part<'a>>,
    /// The tool call a `tool` message answers.
    #[serde(borrow)]
    pub tool_call_id: Str<'a>,
    /// An assistant message's tool calls.
    #[serde(borrow)]
    pub tool_calls: List<ToolCall<'a>>,
    /// An assistant message's reasoning text.
    #[serde(borrow)]
    pub reasoning_content: Str<'a>,
    /// An assistant message's refusal.
    #[serde(borrow)]
    pub refusal: Str<'a>,
}

/// A hub content part (`text`, `image_url`, `file`, …).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Part<'a> {
    /// The part's type.
    #[serde(borrow, rename = "type")]
    pub kind: Str<'a>,
    /// A text part's text, verbatim.
    #[serde(borrow)]
    pub text: Option<Verbatim<'a>>,
    /// An image part's image: `{"url", "detail"}` (or, leniently, the URL alone).
    #[serde(borrow)]
    pub image_url: Shape<'a, ImageUrl<'a>>,
    /// A file part's file (`file_data`, `file_id`, `file_url`, `filename`), verbatim.
    #[serde(borrow)]
    pub file: Option<Verbatim<'a>>,
}

/// A hub image part's `image_url` object.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct ImageUrl<'a> {
    /// The image's URL (`data:` or remote).
    #[serde(borrow)]
    pub url: Str<'a>,
    /// `low`, `high` or `auto`.
    #[serde(borrow)]
    pub detail: Str<'a>,
}

/// A tool call of an assistant message.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct ToolCall<'a> {
    /// The call's id.
    #[serde(borrow)]
    pub id: Str<'a>,
    /// The function called.
    #[serde(borrow)]
    pub function: Obj<Function<'a>>,
}

/// The function of a tool call.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Function<'a> {
    /// Its name.
    #[serde(borrow)]
    pub name: Str<'a>,
    /// Its arguments: JSON text (a value that is not a string is written out as JSON).
    #[serde(borrow)]
    pub arguments: Option<Verbatim<'a>>,
}

impl Function<'_> {
    /// The arguments as JSON text.
    pub fn arguments_text(&self) -> Cow<'_, str> {
        match &self.arguments {
            Some(Verbatim::Str(s)) => Cow::Borrowed(s),
            Some(other) => Cow::Owned(other.to_json()),
            None => Cow::Borrowed("null"),
        }
    }
}

/// A tool the model may call.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Tool<'a> {
    /// The function.
    #[serde(borrow)]
    pub function: Obj<FunctionDef<'a>>,
}

/// A function tool's definition.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct FunctionDef<'a> {
    /// Its name.
    #[serde(borrow)]
    pub name: Str<'a>,
    /// What it does, verbatim.
    #[serde(borrow)]
    pub description: Option<Verbatim<'a>>,
    /// Its arguments' JSON schema, verbatim.
    #[serde(borrow)]
    pub parameters: Option<Verbatim<'a>>,
    /// Strict schema adherence, verbatim.
    #[serde(borrow)]
    pub strict: Option<Verbatim<'a>>,
}

/// `tool_choice` naming one function.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct ToolChoice<'a> {
    /// The function.
    #[serde(borrow)]
    pub function: Shape<'a, ToolChoiceFunction<'a>>,
}

/// The function `tool_choice` names.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct ToolChoiceFunction<'a> {
    /// Its name.
    #[serde(borrow)]
    pub name: Str<'a>,
}

/// `response_format`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct ResponseFormat<'a> {
    /// `text`, `json_object` or `json_schema`.
    #[serde(borrow, rename = "type")]
    pub kind: Str<'a>,
    /// The schema of `json_schema`.
    #[serde(borrow)]
    pub json_schema: Obj<JsonSchema<'a>>,
}

/// The named schema of a `json_schema` response format (its fields verbatim), as read and as
/// written (by reference: the schema is copied once, into the body written).
#[derive(Debug, Default, Clone, Deserialize, Serialize)]
#[serde(default)]
pub struct JsonSchema<'a> {
    /// The schema's name.
    #[serde(borrow, skip_serializing_if = "Option::is_none")]
    pub name: Option<Verbatim<'a>>,
    /// What it is for.
    #[serde(borrow, skip_serializing_if = "Option::is_none")]
    pub description: Option<Verbatim<'a>>,
    /// The JSON schema.
    #[serde(borrow, skip_serializing_if = "Option::is_none")]
    pub schema: Option<Verbatim<'a>>,
    /// Strict adherence.
    #[serde(borrow, skip_serializing_if = "Option::is_none")]
    pub strict: Option<Verbatim<'a>>,
}

/// A hub answer (`chat.completion`), as the client-side converters read it: its message read
/// as `M` (a converter that reads more of a message than [`Message`] names its own).
#[derive(Debug, Default, Deserialize)]
#[serde(default, bound(deserialize = "M: Deserialize<'de> + Default"))]
pub struct Answer<'a, M = Message<'a>> {
    /// The completion's id.
    #[serde(borrow)]
    pub id: Str<'a>,
    /// The answers (converters read the first).
    #[serde(borrow)]
    pub choices: List<Choice<'a, M>>,
}

/// One answer of a hub answer.
#[derive(Debug, Default, Deserialize)]
#[serde(default, bound(deserialize = "M: Deserialize<'de> + Default"))]
pub struct Choice<'a, M = Message<'a>> {
    /// The assistant's message.
    pub message: Obj<M>,
    /// Why it stopped.
    #[serde(borrow)]
    pub finish_reason: Str<'a>,
}

/// Text of a message's content: a string, or its parts' texts joined (what
/// [`super::content_text`] reads from a value).
pub fn content_text<'s, T: PartText>(content: &'s Shape<'_, T>) -> Cow<'s, str> {
    match content {
        Shape::Str(s) => Cow::Borrowed(s),
        Shape::List(parts) => Cow::Owned(parts.iter().filter_map(PartText::text).collect()),
        _ => Cow::Borrowed(""),
    }
}

/// A content part with text.
pub trait PartText {
    /// The part's text, if it is a string.
    fn text(&self) -> Option<&str>;
}

impl PartText for Part<'_> {
    fn text(&self) -> Option<&str> {
        self.text.as_ref().and_then(Verbatim::as_str)
    }
}

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
