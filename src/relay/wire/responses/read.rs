//! The Responses API's shapes as the converters read them: the request, the response object
//! and the stream events, every field lenient (a field of an unexpected type reads as absent,
//! see [`crate::relay::wire::typed`]) and strings borrowed from the value or event text.
//! Fields the converters do not read are skipped, not kept: nothing of a Responses body passes
//! to another format unconverted.

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::Value;

use crate::relay::wire::hub::{FunctionDef, JsonSchema};
use crate::relay::wire::typed::{Int, List, Obj, Shape, Str, Tagged, Verbatim};

/// A Responses request, as the hub converter reads it.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Request<'a> {
    /// Server-kept state: refused.
    pub previous_response_id: Shape<'a, IgnoredAny>,
    /// Server-kept state: refused.
    pub conversation: Shape<'a, IgnoredAny>,
    /// A stored prompt: refused.
    pub prompt: Shape<'a, IgnoredAny>,
    /// A background response: refused when `true`.
    pub background: Shape<'a, IgnoredAny>,
    /// The model, verbatim.
    #[serde(borrow)]
    pub model: Option<Verbatim<'a>>,
    /// A system text, or (leniently) items.
    #[serde(borrow)]
    pub instructions: Shape<'a, Item<'a>>,
    /// A user text, or items.
    #[serde(borrow)]
    pub input: Shape<'a, Item<'a>>,
    /// The output limit, verbatim.
    #[serde(borrow)]
    pub max_output_tokens: Option<Verbatim<'a>>,
    /// Sampling temperature, verbatim.
    #[serde(borrow)]
    pub temperature: Option<Verbatim<'a>>,
    /// Nucleus sampling, verbatim.
    #[serde(borrow)]
    pub top_p: Option<Verbatim<'a>>,
    /// Parallel tool calls, verbatim.
    #[serde(borrow)]
    pub parallel_tool_calls: Option<Verbatim<'a>>,
    /// The end user's id, verbatim.
    #[serde(borrow)]
    pub user: Option<Verbatim<'a>>,
    /// Streaming, verbatim.
    #[serde(borrow)]
    pub stream: Option<Verbatim<'a>>,
    /// `{"effort"}`.
    #[serde(borrow)]
    pub reasoning: Obj<Reasoning<'a>>,
    /// Tools (function tools convert; built-in ones are refused).
    #[serde(borrow)]
    pub tools: List<Tool<'a>>,
    /// A mode string or `{"type": "function", "name"}`.
    #[serde(borrow)]
    pub tool_choice: Shape<'a, ToolChoice<'a>>,
    /// `{"format"}`.
    #[serde(borrow)]
    pub text: Obj<TextConfig<'a>>,
}

/// `reasoning`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Reasoning<'a> {
    /// `minimal`, `low`, `medium` or `high`.
    #[serde(borrow)]
    pub effort: Str<'a>,
}

/// An input item: a message (typed `message`, or untyped with a `role`), a function call and
/// its output, reasoning, an item reference, or a built-in tool's call.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Item<'a> {
    /// The item's type.
    #[serde(borrow, rename = "type")]
    pub kind: Str<'a>,
    /// A message's role (present, even `null`, makes an untyped item a message).
    #[serde(borrow)]
    pub role: Shape<'a, IgnoredAny>,
    /// A message's content: a string or parts.
    #[serde(borrow)]
    pub content: Shape<'a, InputPart<'a>>,
    /// A function call's id (and its output's).
    #[serde(borrow)]
    pub call_id: Str<'a>,
    /// A function call's name.
    #[serde(borrow)]
    pub name: Str<'a>,
    /// A function call's arguments (JSON text).
    #[serde(borrow)]
    pub arguments: Str<'a>,
    /// A function call output's output: a string or parts.
    #[serde(borrow)]
    pub output: Shape<'a, InputPart<'a>>,
    /// A reasoning item's encrypted content.
    #[serde(borrow)]
    pub encrypted_content: Str<'a>,
}

/// A content part of an input message.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct InputPart<'a> {
    /// `input_text`, `output_text`, `input_image`, `input_file`, `refusal`, …
    #[serde(borrow, rename = "type")]
    pub kind: Str<'a>,
    /// Text.
    #[serde(borrow)]
    pub text: Str<'a>,
    /// A refusal's text.
    #[serde(borrow)]
    pub refusal: Str<'a>,
    /// An image's URL.
    #[serde(borrow)]
    pub image_url: Str<'a>,
    /// An image's detail level.
    #[serde(borrow)]
    pub detail: Str<'a>,
    /// A file's base64 data.
    #[serde(borrow)]
    pub file_data: Str<'a>,
    /// A file's URL.
    #[serde(borrow)]
    pub file_url: Str<'a>,
    /// A file's name.
    #[serde(borrow)]
    pub filename: Str<'a>,
}

impl crate::relay::wire::hub::PartText for InputPart<'_> {
    /// Text, else a refusal's text.
    fn text(&self) -> Option<&str> {
        self.text.get().or_else(|| self.refusal.get())
    }
}

/// A tool of a Responses request: `function` (a hub function definition's fields — name,
/// description, parameters, strict — beside its `type`), or a built-in tool's type.
pub type Tool<'a> = Tagged<'a, FunctionDef<'a>>;

/// A `tool_choice` object.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct ToolChoice<'a> {
    /// `function` (others cannot be converted).
    #[serde(borrow, rename = "type")]
    pub kind: Str<'a>,
    /// The function's name, verbatim.
    #[serde(borrow)]
    pub name: Option<Verbatim<'a>>,
}

/// `text`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct TextConfig<'a> {
    /// The output format.
    #[serde(borrow)]
    pub format: Obj<Format<'a>>,
}

/// `text.format`: `text`, `json_object`, or `json_schema` with its fields — a hub
/// `response_format`'s schema (name, description, schema, strict) beside its `type`.
pub type Format<'a> = Tagged<'a, JsonSchema<'a>>;

/// A response object (a whole answer, or the one a stream's first and last events carry).
/// The usage is read as `U`: a `Value` from an event's text, skipped (`IgnoredAny`) where the
/// whole answer is a `Value` the usage is read from in place.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Response<'a, U = Option<Value>> {
    /// The response's id.
    #[serde(borrow)]
    pub id: Str<'a>,
    /// The model that answered.
    #[serde(borrow)]
    pub model: Str<'a>,
    /// The output items.
    #[serde(borrow)]
    pub output: List<OutputItem<'a>>,
    /// Why it is incomplete.
    #[serde(borrow)]
    pub incomplete_details: Obj<Incomplete<'a>>,
    /// Why it failed.
    #[serde(borrow)]
    pub error: Obj<ErrorBody<'a>>,
    /// Usage (read by the one OpenAI usage reader).
    pub usage: U,
}

/// `incomplete_details`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Incomplete<'a> {
    /// `max_output_tokens` or `content_filter`.
    #[serde(borrow)]
    pub reason: Str<'a>,
}

/// An error object.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct ErrorBody<'a> {
    /// What went wrong.
    #[serde(borrow)]
    pub message: Str<'a>,
}

/// An output item of a response.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct OutputItem<'a> {
    /// `message`, `reasoning`, `function_call`, `web_search_call`, …
    #[serde(borrow, rename = "type")]
    pub kind: Str<'a>,
    /// Its id.
    #[serde(borrow)]
    pub id: Str<'a>,
    /// A message's parts (and a reasoning item's full text).
    #[serde(borrow)]
    pub content: List<OutputPart<'a>>,
    /// A reasoning item's summary parts.
    #[serde(borrow)]
    pub summary: List<OutputPart<'a>>,
    /// A function call's id.
    #[serde(borrow)]
    pub call_id: Str<'a>,
    /// A function call's name.
    #[serde(borrow)]
    pub name: Str<'a>,
    /// A function call's arguments (JSON text).
    #[serde(borrow)]
    pub arguments: Str<'a>,
}

/// A part of an output item.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct OutputPart<'a> {
    /// `output_text`, `refusal`, `summary_text`, `reasoning_text`.
    #[serde(borrow, rename = "type")]
    pub kind: Str<'a>,
    /// Text.
    #[serde(borrow)]
    pub text: Str<'a>,
    /// A refusal's text.
    #[serde(borrow)]
    pub refusal: Str<'a>,
}

/// A stream event, as the decoder reads it (the type is in the data, else the `event:` line).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Event<'a> {
    /// The event's type.
    #[serde(borrow, rename = "type")]
    pub kind: Str<'a>,
    /// A text or arguments delta.
    #[serde(borrow)]
    pub delta: Str<'a>,
    /// The item a delta belongs to.
    #[serde(borrow)]
    pub item_id: Str<'a>,
    /// The output index of the item a delta belongs to.
    pub output_index: Int,
    /// An added item.
    #[serde(borrow)]
    pub item: Obj<OutputItem<'a>>,
    /// The response of `response.created` and the final events.
    #[serde(borrow)]
    pub response: Obj<Response<'a>>,
    /// An `error` event's message.
    #[serde(borrow)]
    pub message: Str<'a>,
}
