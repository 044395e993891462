//! The shapes the Anthropic converters read, every field lenient (a field of an unexpected type
//! reads as absent, see [`crate::relay::wire::typed`]) and strings borrowed from the value
//! read: an Anthropic Messages request and whole answer (their content blocks; the hub request
//! and answer are read as [`crate::relay::wire::hub::Request`] and
//! [`crate::relay::wire::hub::Answer`]). Fields the converters do not read are skipped, not
//! kept: nothing passes from one format to the other unconverted.

use serde::Deserialize;

use super::usage::UsageIn;
use crate::relay::wire::typed::{List, Obj, Present, Shape, Str, Verbatim};

/// An Anthropic Messages request.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Request<'a> {
    /// The model, verbatim.
    #[serde(borrow)]
    pub model: Option<Verbatim<'a>>,
    /// A string or text blocks.
    #[serde(borrow)]
    pub system: Shape<'a, Block<'a>>,
    /// The conversation.
    #[serde(borrow)]
    pub messages: List<Message<'a>>,
    /// The output limit, verbatim.
    #[serde(borrow)]
    pub max_tokens: Option<Verbatim<'a>>,
    /// Sampling temperature, verbatim.
    #[serde(borrow)]
    pub temperature: Option<Verbatim<'a>>,
    /// Nucleus sampling, verbatim.
    #[serde(borrow)]
    pub top_p: Option<Verbatim<'a>>,
    /// Stop sequences, verbatim.
    #[serde(borrow)]
    pub stop_sequences: Option<Verbatim<'a>>,
    /// Streaming, verbatim.
    #[serde(borrow)]
    pub stream: Option<Verbatim<'a>>,
    /// Tools.
    #[serde(borrow)]
    pub tools: List<Tool<'a>>,
    /// `{"type": "auto" | "any" | "none" | "tool", "name"}`.
    #[serde(borrow)]
    pub tool_choice: Shape<'a, ToolChoice<'a>>,
    /// `{"user_id"}`.
    #[serde(borrow)]
    pub metadata: Obj<Metadata<'a>>,
}

/// A message of a request.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Message<'a> {
    /// `user` or `assistant`.
    #[serde(borrow)]
    pub role: Str<'a>,
    /// A string or content blocks.
    #[serde(borrow)]
    pub content: Shape<'a, Block<'a>>,
}

/// A content block (of a message, an answer, a tool result or a custom document).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Block<'a> {
    /// `text`, `image`, `document`, `thinking`, `redacted_thinking`, `tool_use`,
    /// `tool_result`, …
    #[serde(borrow, rename = "type")]
    pub kind: Str<'a>,
    /// A text block's text, verbatim.
    #[serde(borrow)]
    pub text: Option<Verbatim<'a>>,
    /// An image's or a document's source.
    #[serde(borrow)]
    pub source: Obj<Source<'a>>,
    /// A document's title.
    #[serde(borrow)]
    pub title: Str<'a>,
    /// A thinking block's text.
    #[serde(borrow)]
    pub thinking: Str<'a>,
    /// A thinking block's signature.
    #[serde(borrow)]
    pub signature: Str<'a>,
    /// A redacted thinking block's data.
    #[serde(borrow)]
    pub data: Str<'a>,
    /// A tool use's id, verbatim.
    #[serde(borrow)]
    pub id: Option<Verbatim<'a>>,
    /// A tool use's name, verbatim.
    #[serde(borrow)]
    pub name: Option<Verbatim<'a>>,
    /// A tool use's input, verbatim.
    #[serde(borrow)]
    pub input: Option<Verbatim<'a>>,
    /// The tool use a tool result answers, verbatim.
    #[serde(borrow)]
    pub tool_use_id: Option<Verbatim<'a>>,
    /// A tool result's content: a string or blocks.
    #[serde(borrow)]
    pub content: Shape<'a, Box<Block<'a>>>,
}

/// An image's or a document's `source`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Source<'a> {
    /// `base64`, `url`, `text`, `content` or `file`.
    #[serde(borrow, rename = "type")]
    pub kind: Str<'a>,
    /// The MIME type of base64 data.
    #[serde(borrow)]
    pub media_type: Str<'a>,
    /// Base64 data (or, for a text source, the text, verbatim).
    #[serde(borrow)]
    pub data: Option<Verbatim<'a>>,
    /// A URL, verbatim.
    #[serde(borrow)]
    pub url: Option<Verbatim<'a>>,
    /// A Files API id.
    #[serde(borrow)]
    pub file_id: Str<'a>,
    /// A custom document's content: a string or blocks.
    #[serde(borrow)]
    pub content: Shape<'a, Box<Block<'a>>>,
}

impl Source<'_> {
    /// The base64 data as a string (`""` when it is none).
    pub fn data_str(&self) -> &str {
        self.data
            .as_ref()
            .and_then(Verbatim::as_str)
            .unwrap_or_default()
    }
}

/// A tool of a request.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Tool<'a> {
    /// Its name, verbatim.
    #[serde(borrow)]
    pub name: Option<Verbatim<'a>>,
    /// What it does.
    #[serde(borrow)]
    pub description: Str<'a>,
    /// Its input's JSON schema (a client tool has one; server tools have none).
    #[serde(borrow)]
    pub input_schema: Present<Verbatim<'a>>,
}

/// A `tool_choice` object.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct ToolChoice<'a> {
    /// `auto`, `any`, `none` or `tool`.
    #[serde(borrow, rename = "type")]
    pub kind: Str<'a>,
    /// The tool of `tool`, verbatim.
    #[serde(borrow)]
    pub name: Option<Verbatim<'a>>,
}

/// `metadata`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Metadata<'a> {
    /// The end user's id.
    #[serde(borrow)]
    pub user_id: Str<'a>,
}

/// A whole Anthropic answer.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Answer<'a> {
    /// The message id.
    #[serde(borrow)]
    pub id: Str<'a>,
    /// The model that answered, verbatim.
    #[serde(borrow)]
    pub model: Option<Verbatim<'a>>,
    /// The content blocks.
    #[serde(borrow)]
    pub content: List<Block<'a>>,
    /// Why it stopped.
    #[serde(borrow)]
    pub stop_reason: Str<'a>,
    /// Its usage (present even when not an object, which reads as no figures).
    pub usage: Present<Obj<UsageIn>>,
}
