//! The shapes the Cohere conversions write: a `/v2/chat` request body and the hub
//! `chat.completion` of a Cohere answer. Fields read verbatim (ids, names, schemas, sampling
//! numbers) are written by reference to the view they were read into, so each is copied once,
//! into the body written.

use std::borrow::Cow;

use serde::Serialize;
use serde_json::Value;

use crate::relay::wire::typed::Verbatim;

/// A Cohere `/v2/chat` request body.
#[derive(Debug, Serialize)]
pub struct Body<'a> {
    /// The model.
    pub model: &'a str,
    /// The conversation.
    pub messages: Vec<MessageOut<'a>>,
    /// `true` for a streamed answer (absent otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stream: Option<bool>,
    /// The most tokens to generate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<i64>,
    /// Sampling temperature, verbatim.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<&'a Verbatim<'a>>,
    /// Nucleus sampling (the hub's `top_p`), verbatim.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p: Option<&'a Verbatim<'a>>,
    /// The sampling seed, verbatim.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seed: Option<&'a Verbatim<'a>>,
    /// Frequency penalty, verbatim.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frequency_penalty: Option<&'a Verbatim<'a>>,
    /// Presence penalty, verbatim.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub presence_penalty: Option<&'a Verbatim<'a>>,
    /// Stop sequences.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop_sequences: Option<Stop<'a>>,
    /// `REQUIRED` or `NONE`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<&'static str>,
    /// Function tools.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<ToolOut<'a>>,
    /// `{"type": "json_object"}`, with the hub's schema when it gave one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response_format: Option<FormatOut<'a>>,
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

/// A Cohere message.
#[derive(Debug, Serialize)]
pub struct MessageOut<'a> {
    /// `system`, `user`, `assistant` or `tool`.
    pub role: &'static str,
    /// The tool call a `tool` message answers, verbatim (`null` when the hub gave none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<Option<&'a Verbatim<'a>>>,
    /// Text, or a user message's content blocks (absent for an assistant message without
    /// text).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<Content<'a>>,
    /// An assistant message's tool calls.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<CallOut<'a>>,
}

impl<'a> MessageOut<'a> {
    /// A message of `role` with `content`.
    pub fn new(role: &'static str, content: Option<Content<'a>>) -> MessageOut<'a> {
        MessageOut {
            role,
            tool_call_id: None,
            content,
            tool_calls: Vec::new(),
        }
    }
}

/// A message's content.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum Content<'a> {
    /// Text.
    Text(Cow<'a, str>),
    /// A user message's content blocks.
    Blocks(Vec<UserBlock<'a>>),
}

/// A user content block: text or an image.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum UserBlock<'a> {
    /// Text, verbatim (`null` when the hub part had none).
    Text {
        /// The text.
        text: Option<&'a Verbatim<'a>>,
    },
    /// An image by URL.
    ImageUrl {
        /// The image.
        image_url: ImageOut<'a>,
    },
}

/// An image block's `image_url`.
#[derive(Debug, Serialize)]
pub struct ImageOut<'a> {
    /// The URL.
    pub url: &'a str,
    /// The detail level.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<&'a str>,
}

/// A tool call, in a Cohere request or in the hub answer.
#[derive(Debug, Serialize)]
pub struct CallOut<'a> {
    /// The call's id, verbatim.
    pub id: Option<&'a Verbatim<'a>>,
    /// Always `function`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// The function called.
    pub function: CallFunction<'a>,
}

/// The function of a tool call.
#[derive(Debug, Serialize)]
pub struct CallFunction<'a> {
    /// Its name, verbatim.
    pub name: Option<&'a Verbatim<'a>>,
    /// Its arguments (JSON text).
    pub arguments: Cow<'a, str>,
}

/// A Cohere tool.
#[derive(Debug, Serialize)]
pub struct ToolOut<'a> {
    /// Always `function`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// The function.
    pub function: ToolFunction<'a>,
}

/// A Cohere tool's function.
#[derive(Debug, Serialize)]
pub struct ToolFunction<'a> {
    /// Its name, verbatim.
    pub name: Option<&'a Verbatim<'a>>,
    /// Its JSON schema.
    pub parameters: Schema<'a>,
    /// What it does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<&'a str>,
}

/// A tool's JSON schema.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum Schema<'a> {
    /// The hub's `parameters` (an object).
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

/// A Cohere `response_format`.
#[derive(Debug, Serialize)]
pub struct FormatOut<'a> {
    /// Always `json_object`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// The schema, when the hub gave an object.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub json_schema: Option<&'a Verbatim<'a>>,
}

/// The hub `chat.completion` of a Cohere answer.
#[derive(Debug, Serialize)]
pub struct HubAnswer<'a> {
    /// `chatcmpl-` and Cohere's id.
    pub id: String,
    /// Always `chat.completion`.
    pub object: &'static str,
    /// Seconds since the epoch.
    pub created: i64,
    /// Cohere's answer names no model: `null`.
    pub model: Option<&'static str>,
    /// The one answer.
    pub choices: [HubChoice<'a>; 1],
    /// Usage, when the answer has a `usage` object.
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
    pub tool_calls: Vec<CallOut<'a>>,
    /// Reasoning text (thinking blocks and the tool plan).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub reasoning_content: String,
}
