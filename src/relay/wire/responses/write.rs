//! The Responses API's shapes as the converters write them: the request for a Responses
//! upstream, and the response object, output items, usage and stream events for a Responses
//! client. Fields are declared in the order of their names, so an object serialises with the
//! same bytes a `serde_json::Value` of it would (the encoder's events are byte-identical to
//! what the untyped encoder wrote).

use std::borrow::Cow;

use serde::Serialize;

use crate::relay::measure::price::Usage;
use crate::relay::wire::hub::JsonSchema;
use crate::relay::wire::typed::{Str, Verbatim};

/// A request for a Responses upstream, as the converter writes it.
#[derive(Debug, Serialize)]
pub struct RequestOut<'a> {
    /// The upstream's model.
    pub model: &'a str,
    /// The conversation as input items.
    pub input: Vec<InputOut<'a>>,
    /// Never stored at OpenAI.
    pub store: bool,
    /// Whether to stream.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stream: Option<bool>,
    /// The output limit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<i64>,
    /// Sampling temperature.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<&'a Verbatim<'a>>,
    /// Nucleus sampling.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_p: Option<&'a Verbatim<'a>>,
    /// Parallel tool calls.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parallel_tool_calls: Option<&'a Verbatim<'a>>,
    /// The end user's id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user: Option<&'a Verbatim<'a>>,
    /// `{"effort"}`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<ReasoningOut<'a>>,
    /// Function tools.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<ToolOut<'a>>>,
    /// A mode or one function.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<ToolChoiceOut<'a>>,
    /// `{"format"}`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<TextOut<'a>>,
}

/// `reasoning` written.
#[derive(Debug, Serialize)]
pub struct ReasoningOut<'a> {
    /// The effort.
    pub effort: &'a str,
}

/// An input item written.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum InputOut<'a> {
    /// A message (untyped, with its role).
    Message {
        /// `system`, `developer`, `user` or `assistant`.
        role: &'a str,
        /// Text or input parts.
        content: InputContent<'a>,
    },
    /// A function call or its output.
    Typed(TypedItemOut<'a>),
}

/// A message's content written.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum InputContent<'a> {
    /// Text.
    Text(Cow<'a, str>),
    /// Parts.
    Parts(Vec<InputPartOut<'a>>),
}

/// A typed input item written.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum TypedItemOut<'a> {
    /// A tool's answer.
    FunctionCallOutput {
        /// The call it answers.
        call_id: Str<'a>,
        /// Its text.
        output: Cow<'a, str>,
    },
    /// An assistant's call.
    FunctionCall {
        /// The call's id.
        call_id: Str<'a>,
        /// The function's name.
        name: Str<'a>,
        /// Its arguments (JSON text).
        arguments: Cow<'a, str>,
    },
}

/// An input content part written.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum InputPartOut<'a> {
    /// Text (verbatim).
    InputText {
        /// The text.
        text: Option<&'a Verbatim<'a>>,
    },
    /// An image by URL.
    InputImage {
        /// The URL.
        image_url: &'a str,
        /// The detail level.
        #[serde(skip_serializing_if = "Option::is_none")]
        detail: Option<&'a str>,
    },
    /// A file (its fields verbatim).
    InputFile {
        /// Base64 data.
        #[serde(skip_serializing_if = "Option::is_none")]
        file_data: Option<&'a Verbatim<'a>>,
        /// A file stored at OpenAI.
        #[serde(skip_serializing_if = "Option::is_none")]
        file_id: Option<&'a Verbatim<'a>>,
        /// A URL.
        #[serde(skip_serializing_if = "Option::is_none")]
        file_url: Option<&'a Verbatim<'a>>,
        /// The file's name.
        #[serde(skip_serializing_if = "Option::is_none")]
        filename: Option<&'a Verbatim<'a>>,
    },
}

/// A function tool written.
#[derive(Debug, Serialize)]
pub struct ToolOut<'a> {
    /// Always `function`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// Its name.
    pub name: Str<'a>,
    /// What it does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<&'a Verbatim<'a>>,
    /// Its arguments' schema.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parameters: Option<&'a Verbatim<'a>>,
    /// Strict schema adherence.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub strict: Option<&'a Verbatim<'a>>,
}

/// `tool_choice` written.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum ToolChoiceOut<'a> {
    /// `auto`, `none` or `required`.
    Mode(&'a str),
    /// One function.
    Function {
        /// Always `function`.
        #[serde(rename = "type")]
        kind: &'static str,
        /// Its name.
        name: Option<&'a str>,
    },
}

/// `text` written.
#[derive(Debug, Serialize)]
pub struct TextOut<'a> {
    /// The output format.
    pub format: FormatOut<'a>,
}

/// `text.format` written.
#[derive(Debug, Serialize)]
pub struct FormatOut<'a> {
    /// `json_object` or `json_schema`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// The schema's fields (`json_schema`).
    #[serde(flatten)]
    pub schema: Option<&'a JsonSchema<'a>>,
}

/// A Responses `usage` object written (fields in name order).
#[derive(Debug, Serialize)]
pub struct UsageOut {
    /// Prompt tokens.
    pub input_tokens: i64,
    /// `{"cached_tokens"}`.
    pub input_tokens_details: CachedOut,
    /// Completion tokens.
    pub output_tokens: i64,
    /// `{"reasoning_tokens"}`.
    pub output_tokens_details: ReasoningTokensOut,
    /// Their sum.
    pub total_tokens: i64,
}

/// `input_tokens_details`.
#[derive(Debug, Serialize)]
pub struct CachedOut {
    /// Cached prompt tokens.
    pub cached_tokens: i64,
}

/// `output_tokens_details`.
#[derive(Debug, Serialize)]
pub struct ReasoningTokensOut {
    /// Reasoning tokens.
    pub reasoning_tokens: i64,
}

impl From<&Usage> for UsageOut {
    fn from(usage: &Usage) -> UsageOut {
        UsageOut {
            input_tokens: usage.prompt_tokens,
            input_tokens_details: CachedOut {
                cached_tokens: usage.cached_tokens,
            },
            output_tokens: usage.completion_tokens,
            output_tokens_details: ReasoningTokensOut {
                reasoning_tokens: usage.reasoning_tokens,
            },
            total_tokens: usage.prompt_tokens.saturating_add(usage.completion_tokens),
        }
    }
}

/// `incomplete_details` written.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct IncompleteOut {
    /// `max_output_tokens` or `content_filter`.
    pub reason: &'static str,
}

/// The response object written (a whole answer, and in the stream's events; fields in name
/// order, Tollgate's fixed settings as OpenAI reports its defaults).
#[derive(Debug, Serialize)]
pub struct ResponseOut<'a> {
    /// Seconds since the epoch.
    pub created_at: i64,
    /// Always `null`.
    pub error: (),
    /// The response's id.
    pub id: &'a str,
    /// Why it is incomplete.
    pub incomplete_details: Option<IncompleteOut>,
    /// Always `null`.
    pub instructions: (),
    /// Always `null`.
    pub max_output_tokens: (),
    /// Always `{}`.
    pub metadata: Empty,
    /// The model the client asked for.
    pub model: &'a str,
    /// Always `response`.
    pub object: &'static str,
    /// The output items.
    pub output: Vec<ItemOut<'a>>,
    /// Always `true`.
    pub parallel_tool_calls: bool,
    /// Always `null`.
    pub previous_response_id: (),
    /// `in_progress`, `completed` or `incomplete`.
    pub status: &'static str,
    /// Always `false`.
    pub store: bool,
    /// Always `null`.
    pub temperature: (),
    /// Always `{"format": {"type": "text"}}`.
    pub text: TextFormatText,
    /// Always `auto`.
    pub tool_choice: &'static str,
    /// Always `[]`.
    pub tools: [(); 0],
    /// Always `null`.
    pub top_p: (),
    /// Always `disabled`.
    pub truncation: &'static str,
    /// Usage (`null` until known).
    pub usage: Option<UsageOut>,
}

impl<'a> ResponseOut<'a> {
    /// A response object around `output`.
    pub fn new(
        id: &'a str,
        created_at: i64,
        model: &'a str,
        (status, incomplete_details): (&'static str, Option<IncompleteOut>),
        output: Vec<ItemOut<'a>>,
        usage: Option<UsageOut>,
    ) -> ResponseOut<'a> {
        ResponseOut {
            created_at,
            error: (),
            id,
            incomplete_details,
            instructions: (),
            max_output_tokens: (),
            metadata: Empty {},
            model,
            object: "response",
            output,
            parallel_tool_calls: true,
            previous_response_id: (),
            status,
            store: false,
            temperature: (),
            text: TextFormatText {
                format: KindOnly { kind: "text" },
            },
            tool_choice: "auto",
            tools: [],
            top_p: (),
            truncation: "disabled",
            usage,
        }
    }
}

/// `{}`.
#[derive(Debug, Serialize)]
pub struct Empty {}

/// `{"format": {"type": "text"}}`.
#[derive(Debug, Serialize)]
pub struct TextFormatText {
    /// The format.
    pub format: KindOnly,
}

/// `{"type"}`.
#[derive(Debug, Serialize)]
pub struct KindOnly {
    /// The type.
    #[serde(rename = "type")]
    pub kind: &'static str,
}

/// An output item written (fields in name order).
#[derive(Debug, Serialize)]
pub struct ItemOut<'a> {
    /// A function call's arguments.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arguments: Option<&'a str>,
    /// A function call's id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub call_id: Option<&'a str>,
    /// A message's parts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<Vec<PartOut<'a>>>,
    /// The item's id.
    pub id: &'a str,
    /// A function call's name (`null` when the hub's call had none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<Option<&'a str>>,
    /// A message's role.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role: Option<&'static str>,
    /// A message's or function call's status.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<&'static str>,
    /// A reasoning item's summary.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary: Option<Vec<PartOut<'a>>>,
    /// `message`, `reasoning` or `function_call`.
    #[serde(rename = "type")]
    pub kind: &'static str,
}

impl<'a> ItemOut<'a> {
    /// An assistant message item.
    pub fn message(id: &'a str, status: &'static str, content: Vec<PartOut<'a>>) -> Self {
        ItemOut {
            arguments: None,
            call_id: None,
            content: Some(content),
            id,
            name: None,
            role: Some("assistant"),
            status: Some(status),
            summary: None,
            kind: "message",
        }
    }

    /// A reasoning item.
    pub fn reasoning(id: &'a str, summary: Vec<PartOut<'a>>) -> Self {
        ItemOut {
            arguments: None,
            call_id: None,
            content: None,
            id,
            name: None,
            role: None,
            status: None,
            summary: Some(summary),
            kind: "reasoning",
        }
    }

    /// A function call item.
    pub fn call(
        id: &'a str,
        status: &'static str,
        call_id: &'a str,
        name: Option<&'a str>,
        arguments: &'a str,
    ) -> Self {
        ItemOut {
            arguments: Some(arguments),
            call_id: Some(call_id),
            content: None,
            id,
            name: Some(name),
            role: None,
            status: Some(status),
            summary: None,
            kind: "function_call",
        }
    }
}

/// A part of an output item written (fields in name order).
#[derive(Debug, Serialize)]
pub struct PartOut<'a> {
    /// An output text's annotations (always none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub annotations: Option<[(); 0]>,
    /// A refusal's text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refusal: Option<&'a str>,
    /// Text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<&'a str>,
    /// `output_text`, `refusal` or `summary_text`.
    #[serde(rename = "type")]
    pub kind: &'static str,
}

impl<'a> PartOut<'a> {
    /// An `output_text` part.
    pub fn output_text(text: &'a str) -> Self {
        PartOut {
            annotations: Some([]),
            refusal: None,
            text: Some(text),
            kind: "output_text",
        }
    }

    /// A `summary_text` part.
    pub fn summary_text(text: &'a str) -> Self {
        PartOut {
            annotations: None,
            refusal: None,
            text: Some(text),
            kind: "summary_text",
        }
    }

    /// A `refusal` part.
    pub fn refusal(refusal: &'a str) -> Self {
        PartOut {
            annotations: None,
            refusal: Some(refusal),
            text: None,
            kind: "refusal",
        }
    }
}

/// A stream event written (the fields of every event the encoder sends, in name order; those
/// an event lacks are left out).
#[derive(Debug, Default, Serialize)]
pub struct EventOut<'a> {
    /// A function call's arguments.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arguments: Option<&'a str>,
    /// An error's code.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<&'static str>,
    /// The content part's index.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content_index: Option<u32>,
    /// A delta.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delta: Option<&'a str>,
    /// An item.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub item: Option<ItemOut<'a>>,
    /// The item's id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub item_id: Option<&'a str>,
    /// Always `[]`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub logprobs: Option<[(); 0]>,
    /// An error's message.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<&'a str>,
    /// A function call's name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<&'a str>,
    /// The item's output index.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_index: Option<usize>,
    /// An error's parameter (always `null`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub param: Option<()>,
    /// A content or summary part.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub part: Option<PartOut<'a>>,
    /// The response object.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response: Option<ResponseOut<'a>>,
    /// The event's number in the stream.
    pub sequence_number: u64,
    /// The summary part's index.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary_index: Option<u32>,
    /// A finished text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<&'a str>,
    /// The event's type.
    #[serde(rename = "type")]
    pub kind: &'a str,
}
