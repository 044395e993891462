//! The hub request and answer as every converter reads them: one lenient view (each field as
//! [`crate::relay::wire::typed`] reads it: a field of another JSON type reads as absent), the
//! union of what the hub → upstream converters (Anthropic, Converse, Cohere, Gemini, Responses,
//! Baidu, Hunyuan, Spark, Dify, Coze) and the hub answer's readers take. Strings borrow from the
//! value read. Ids and names are [`Present`]`<`[`Verbatim`]`>`: a converter that copies them
//! copies a value that is not a string as it came, one that wants a string reads it as a
//! [`Str`] would (`get`, `or_empty`, `non_empty`). A schema is a `Present` too: Converse keeps a
//! tool whose `parameters` is `null`. Fields no converter reads are skipped.

use std::borrow::Cow;

use serde::Deserialize;
use serde::de::IgnoredAny;

use crate::relay::wire::typed::{List, Obj, Present, Shape, Str, Verbatim};

/// A hub request, as the upstream-side converters read it.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Request<'a> {
    /// The conversation.
    #[serde(borrow)]
    pub messages: List<Message<'a>>,
    /// `max_completion_tokens` (OpenAI's newer name), verbatim (Gemini copies it; the others
    /// read it with [`int`]).
    #[serde(borrow)]
    pub max_completion_tokens: Option<Verbatim<'a>>,
    /// `max_tokens`, verbatim.
    #[serde(borrow)]
    pub max_tokens: Option<Verbatim<'a>>,
    /// Sampling temperature, verbatim.
    #[serde(borrow)]
    pub temperature: Option<Verbatim<'a>>,
    /// Nucleus sampling, verbatim.
    #[serde(borrow)]
    pub top_p: Option<Verbatim<'a>>,
    /// The sampling seed, verbatim.
    #[serde(borrow)]
    pub seed: Option<Verbatim<'a>>,
    /// Frequency penalty, verbatim.
    #[serde(borrow)]
    pub frequency_penalty: Option<Verbatim<'a>>,
    /// Presence penalty, verbatim.
    #[serde(borrow)]
    pub presence_penalty: Option<Verbatim<'a>>,
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
    /// How many answers, verbatim.
    #[serde(borrow)]
    pub n: Option<Verbatim<'a>>,
    /// Stop sequences: a string or a list, verbatim.
    #[serde(borrow)]
    pub stop: Option<Verbatim<'a>>,
}

impl<'a> Request<'a> {
    /// A request read straight from a body's bytes (a native type reads the client's OpenAI
    /// body so). A body that repeats a field the view reads is read from its parsed value,
    /// which keeps the last (as the OpenAI path reads it), not refused; a body that is not
    /// JSON is the first read's error.
    pub fn from_bytes(bytes: &'a [u8]) -> Result<Self, serde_json::Error> {
        serde_json::from_slice(bytes).or_else(|e| {
            let value = serde_json::from_slice::<serde_json::Value>(bytes).map_err(|_| e)?;
            Request::deserialize(value)
        })
    }

    /// The output limit: `max_completion_tokens`, else `max_tokens` (integers only).
    pub fn max_output(&self) -> Option<i64> {
        int(&self.max_completion_tokens).or(int(&self.max_tokens))
    }
}

/// A number field as an integer: `None` when absent or not an integer in i64's range (what
/// `as_i64` of a value gave).
pub fn int(field: &Option<Verbatim<'_>>) -> Option<i64> {
    match field {
        Some(Verbatim::Num(n)) => n.as_i64(),
        _ => None,
    }
}

/// A hub message (of a request, or a hub answer's).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Message<'a> {
    /// `system`, `developer`, `user`, `assistant`, `tool` (or the older `function`).
    #[serde(borrow)]
    pub role: Str<'a>,
    /// A string, or content parts.
    #[serde(borrow)]
    pub content: Shape<'a, Part<'a>>,
    /// The tool call a `tool` message answers, verbatim.
    #[serde(borrow)]
    pub tool_call_id: Present<Verbatim<'a>>,
    /// An assistant message's tool calls.
    #[serde(borrow)]
    pub tool_calls: List<ToolCall<'a>>,
    /// An assistant message's reasoning text.
    #[serde(borrow)]
    pub reasoning_content: Str<'a>,
    /// An assistant message's thinking blocks (see [`crate::relay::wire`]).
    #[serde(borrow)]
    pub thinking_blocks: List<Thinking<'a>>,
    /// An assistant message's refusal.
    #[serde(borrow)]
    pub refusal: Str<'a>,
}

/// A hub thinking block: `{"type": "thinking", "thinking", "signature"}` or
/// `{"type": "redacted_thinking", "data"}`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Thinking<'a> {
    /// `thinking` or `redacted_thinking`.
    #[serde(borrow, rename = "type")]
    pub kind: Str<'a>,
    /// The thinking text.
    #[serde(borrow)]
    pub thinking: Str<'a>,
    /// Its signature.
    #[serde(borrow)]
    pub signature: Str<'a>,
    /// A redacted block's data.
    #[serde(borrow)]
    pub data: Str<'a>,
}

/// A hub content part (`text`, `image_url`, `input_audio`, `file`, …).
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
    /// An audio part's `{"data", "format"}`.
    #[serde(borrow)]
    pub input_audio: Obj<Audio<'a>>,
    /// A file part's file (`file_data`, `file_id`, `file_url`, `filename`), verbatim.
    #[serde(borrow)]
    pub file: Option<Verbatim<'a>>,
}

impl Part<'_> {
    /// The URL of an image part whose `image_url` is an object.
    pub fn image_object_url(&self) -> Option<&str> {
        match &self.image_url {
            Shape::Obj(image) => image.url.get(),
            _ => None,
        }
    }

    /// A field of a file part's `file` object, if it is a string.
    pub fn file_str(&self, field: &str) -> Option<&str> {
        self.file.as_ref()?.get(field)?.as_str()
    }
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

/// An audio part's `input_audio`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Audio<'a> {
    /// Base64 data, verbatim.
    #[serde(borrow)]
    pub data: Option<Verbatim<'a>>,
    /// `wav` or `mp3`.
    #[serde(borrow)]
    pub format: Str<'a>,
}

/// A tool call of an assistant message.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct ToolCall<'a> {
    /// The call's id, verbatim.
    #[serde(borrow)]
    pub id: Present<Verbatim<'a>>,
    /// The function called.
    #[serde(borrow)]
    pub function: Obj<Function<'a>>,
    /// `{"google": {"thought_signature"}}` (Gemini's signature of the call).
    #[serde(borrow)]
    pub extra_content: Obj<Extra<'a>>,
}

impl ToolCall<'_> {
    /// The Gemini signature the call carries, if any.
    pub fn signature(&self) -> Option<&str> {
        self.extra_content.google.thought_signature.non_empty()
    }
}

/// A hub tool call's `extra_content`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Extra<'a> {
    /// Google's.
    #[serde(borrow)]
    pub google: Obj<Google<'a>>,
}

/// `extra_content.google`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Google<'a> {
    /// Gemini's `thoughtSignature` of the call.
    #[serde(borrow)]
    pub thought_signature: Str<'a>,
}

/// The function of a tool call.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Function<'a> {
    /// Its name, verbatim.
    #[serde(borrow)]
    pub name: Present<Verbatim<'a>>,
    /// Its arguments: JSON text (a value that is not a string is written out as JSON by
    /// [`Function::arguments_text`]).
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

    /// The arguments when they are a string.
    pub fn arguments_str(&self) -> Option<&str> {
        self.arguments.as_ref().and_then(Verbatim::as_str)
    }
}

/// A tool the model may call.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Tool<'a> {
    /// `function` (Cohere keeps a tool whose type is absent; `null` or another type is not one).
    #[serde(borrow, rename = "type")]
    pub kind: Shape<'a, IgnoredAny>,
    /// The function.
    #[serde(borrow)]
    pub function: Obj<FunctionDef<'a>>,
}

/// A function tool's definition.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct FunctionDef<'a> {
    /// Its name, verbatim.
    #[serde(borrow)]
    pub name: Present<Verbatim<'a>>,
    /// What it does, verbatim.
    #[serde(borrow)]
    pub description: Present<Verbatim<'a>>,
    /// Its arguments' JSON schema, verbatim (`null` told from absent).
    #[serde(borrow)]
    pub parameters: Present<Verbatim<'a>>,
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

impl ToolChoice<'_> {
    /// The name of the function, when `function` is an object and names one (not `null`).
    pub fn name(&self) -> Option<&Verbatim<'_>> {
        match &self.function {
            Shape::Obj(f) => f.name.value(),
            _ => None,
        }
    }
}

/// The function `tool_choice` names.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct ToolChoiceFunction<'a> {
    /// Its name, verbatim.
    #[serde(borrow)]
    pub name: Present<Verbatim<'a>>,
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
#[derive(Debug, Default, Clone, Deserialize, serde::Serialize)]
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

/// Text of a message's content: a string, or its parts' texts joined.
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
