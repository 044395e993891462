//! The shapes the Converse conversions write: a Converse request body (messages, system,
//! inferenceConfig, toolConfig) and the hub `chat.completion` of a Converse answer. Fields read
//! verbatim (ids, names, schemas, sampling numbers) are written by reference to the view they
//! were read into, so each is copied once, into the body written.

use std::borrow::Cow;

use serde::Serialize;
use serde_json::Value;

use crate::relay::wire::typed::Verbatim;

/// A Converse request body (the model is in the URL).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Body<'a> {
    /// The conversation, user and assistant turns alternating.
    pub messages: Vec<MessageOut<'a>>,
    /// System prompts.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub system: Vec<BlockOut<'a>>,
    /// InferenceConfiguration.
    #[serde(skip_serializing_if = "Config::is_empty")]
    pub inference_config: Config<'a>,
    /// ToolConfiguration.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_config: Option<ToolConfig<'a>>,
}

/// A Converse message.
#[derive(Debug, Serialize)]
pub struct MessageOut<'a> {
    /// `user` or `assistant`.
    pub role: &'static str,
    /// Its content blocks.
    pub content: Vec<BlockOut<'a>>,
}

/// A Converse ContentBlock.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum BlockOut<'a> {
    /// `{"text": …}`.
    Text(Cow<'a, str>),
    /// An ImageBlock.
    Image(Media<'a>),
    /// A DocumentBlock.
    Document(Document<'a>),
    /// A ReasoningContentBlock.
    ReasoningContent(ReasoningOut<'a>),
    /// A ToolUseBlock.
    ToolUse(ToolUseOut<'a>),
    /// A ToolResultBlock.
    ToolResult(ToolResultOut<'a>),
}

/// An ImageBlock: its format and bytes (base64).
#[derive(Debug, Serialize)]
pub struct Media<'a> {
    /// `png`, `jpeg`, `gif` or `webp`.
    pub format: &'static str,
    /// `{"bytes": …}`.
    pub source: Bytes<'a>,
}

/// A DocumentBlock.
#[derive(Debug, Serialize)]
pub struct Document<'a> {
    /// Its format (`pdf`, `csv`, …).
    pub format: &'static str,
    /// Its name, distinct within the request.
    pub name: String,
    /// `{"bytes": …}`.
    pub source: Bytes<'a>,
}

/// A block's `source`: base64 bytes.
#[derive(Debug, Serialize)]
pub struct Bytes<'a> {
    /// Base64.
    pub bytes: &'a str,
}

/// A ReasoningContentBlock.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum ReasoningOut<'a> {
    /// Signed reasoning.
    ReasoningText {
        /// The reasoning.
        text: &'a str,
        /// Its signature.
        signature: &'a str,
    },
    /// Redacted reasoning (base64).
    RedactedContent(&'a str),
}

/// A ToolUseBlock.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolUseOut<'a> {
    /// The call's id, verbatim (`null` when absent).
    pub tool_use_id: Option<&'a Verbatim<'a>>,
    /// The tool's name, verbatim.
    pub name: Option<&'a Verbatim<'a>>,
    /// The arguments, parsed.
    pub input: Value,
}

/// A ToolResultBlock.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResultOut<'a> {
    /// The call answered, verbatim.
    pub tool_use_id: Option<&'a Verbatim<'a>>,
    /// The result.
    pub content: Vec<BlockOut<'a>>,
}

/// InferenceConfiguration.
#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Config<'a> {
    /// The most tokens to generate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<i64>,
    /// Sampling temperature, verbatim.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<&'a Verbatim<'a>>,
    /// Nucleus sampling, verbatim.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_p: Option<&'a Verbatim<'a>>,
    /// Stop sequences.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop_sequences: Option<Stop<'a>>,
}

impl Config<'_> {
    /// Whether no field is set.
    fn is_empty(&self) -> bool {
        self.max_tokens.is_none()
            && self.temperature.is_none()
            && self.top_p.is_none()
            && self.stop_sequences.is_none()
    }
}

/// Stop sequences: the hub's one string as a list, or its list verbatim.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum Stop<'a> {
    /// One sequence.
    One([&'a str; 1]),
    /// The hub's list.
    List(&'a [Verbatim<'a>]),
}

/// ToolConfiguration.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolConfig<'a> {
    /// The tools.
    pub tools: Vec<ToolOut<'a>>,
    /// ToolChoice.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<ChoiceOut<'a>>,
}

/// A Tool: `{"toolSpec": …}`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolOut<'a> {
    /// The ToolSpecification.
    pub tool_spec: ToolSpec<'a>,
}

/// A ToolSpecification.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolSpec<'a> {
    /// The tool's name, verbatim.
    pub name: Option<&'a Verbatim<'a>>,
    /// `{"json": schema}`.
    pub input_schema: InputSchema<'a>,
    /// What it does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<&'a str>,
}

/// A ToolInputSchema.
#[derive(Debug, Serialize)]
pub struct InputSchema<'a> {
    /// The hub's `parameters` verbatim, else an empty object schema.
    pub json: Schema<'a>,
}

/// A tool's JSON schema.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum Schema<'a> {
    /// The hub's `parameters`.
    Given(&'a Verbatim<'a>),
    /// `{"type": "object", "properties": {}}`.
    Empty {
        /// `object`.
        #[serde(rename = "type")]
        kind: &'static str,
        /// No properties.
        properties: Nothing,
    },
}

/// `{}`.
#[derive(Debug, Serialize)]
pub struct Nothing {}

/// A ToolChoice.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum ChoiceOut<'a> {
    /// Any tool.
    Any(Nothing),
    /// The model decides.
    Auto(Nothing),
    /// One tool.
    Tool {
        /// Its name.
        name: &'a str,
    },
}

/// The hub `chat.completion` of a Converse answer.
#[derive(Debug, Serialize)]
pub struct HubAnswer<'a> {
    /// Always `chatcmpl-bedrock`.
    pub id: &'static str,
    /// Always `chat.completion`.
    pub object: &'static str,
    /// Seconds since the epoch.
    pub created: i64,
    /// Converse names no model: empty.
    pub model: &'static str,
    /// The one answer.
    pub choices: [HubChoice<'a>; 1],
    /// Usage, when the answer has a `usage` field.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<Value>,
}

/// The answer of a hub answer.
#[derive(Debug, Serialize)]
pub struct HubChoice<'a> {
    /// Always 0.
    pub index: u32,
    /// The assistant's message.
    pub message: HubMessageOut<'a>,
    /// Why it stopped.
    pub finish_reason: &'static str,
}

/// The assistant's message of a hub answer.
#[derive(Debug, Serialize)]
pub struct HubMessageOut<'a> {
    /// Always `assistant`.
    pub role: &'static str,
    /// The text (`null` for tool calls without text).
    pub content: Option<String>,
    /// Tool calls.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<HubCallOut<'a>>,
    /// Reasoning text.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub reasoning_content: String,
    /// Thinking blocks with their signatures (see [`crate::relay::wire`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub thinking_blocks: Vec<ThinkingOut<'a>>,
}

/// A hub tool call.
#[derive(Debug, Serialize)]
pub struct HubCallOut<'a> {
    /// The call's id, verbatim.
    pub id: Option<&'a Verbatim<'a>>,
    /// Always `function`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// The function called.
    pub function: HubFunctionOut<'a>,
}

/// The function of a hub tool call.
#[derive(Debug, Serialize)]
pub struct HubFunctionOut<'a> {
    /// Its name, verbatim.
    pub name: Option<&'a Verbatim<'a>>,
    /// Its arguments (JSON text).
    pub arguments: String,
}

/// A hub thinking block.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ThinkingOut<'a> {
    /// Signed thinking.
    Thinking {
        /// The text.
        thinking: &'a str,
        /// Its signature (`""` when none).
        signature: &'a str,
    },
    /// Redacted thinking.
    RedactedThinking {
        /// Its data (base64).
        data: &'a str,
    },
}
