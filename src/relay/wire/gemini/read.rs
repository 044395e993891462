//! The shapes the Gemini converters read, every field lenient (a field of an unexpected type
//! reads as absent, see [`crate::relay::wire::typed`]) and strings borrowed from the body read:
//! a `generateContent` request (camelCase and snake_case names both read, as
//! [`super::stream::either`] picks them; the hub request is read as
//! [`crate::relay::wire::hub::Request`]). A whole answer is read as the stream reads a chunk
//! ([`super::stream::Answer`]).

use serde::Deserialize;
use serde::de::IgnoredAny;

use crate::relay::wire::typed::{List, Present, Shape, Str, Verbatim};

/// `a`, else `b`, as [`super::stream::either`] picks a field (a present camelCase field, even
/// `null`, hides the snake_case one), for fields copied verbatim: `None` when absent or `null`.
pub fn either_value<'s, 'a>(
    a: &'s Present<Verbatim<'a>>,
    b: &'s Present<Verbatim<'a>>,
) -> Option<&'s Verbatim<'a>> {
    if a.0.is_none() { b } else { a }.value()
}

/// A `generateContent` request.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Request<'a> {
    /// The system instruction (a content).
    #[serde(borrow, rename = "systemInstruction")]
    pub system_camel: Shape<'a, Content<'a>>,
    /// The same, snake_case.
    #[serde(borrow, rename = "system_instruction")]
    pub system_snake: Shape<'a, Content<'a>>,
    /// The conversation.
    #[serde(borrow)]
    pub contents: List<Content<'a>>,
    /// Sampling and output settings.
    #[serde(borrow, rename = "generationConfig")]
    pub config_camel: Shape<'a, Config<'a>>,
    /// The same, snake_case.
    #[serde(borrow, rename = "generation_config")]
    pub config_snake: Shape<'a, Config<'a>>,
    /// Tools.
    #[serde(borrow)]
    pub tools: List<Tool<'a>>,
}

/// A content: a role and parts.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Content<'a> {
    /// `user` or `model`.
    #[serde(borrow)]
    pub role: Str<'a>,
    /// Its parts.
    #[serde(borrow)]
    pub parts: List<Part<'a>>,
}

/// A part of a request's content.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Part<'a> {
    /// Text.
    #[serde(borrow)]
    pub text: Str<'a>,
    /// `true` for a thought.
    #[serde(borrow)]
    pub thought: Shape<'a, IgnoredAny>,
    /// Inline bytes.
    #[serde(borrow, rename = "inlineData")]
    pub inline_camel: Shape<'a, Blob<'a>>,
    /// The same, snake_case.
    #[serde(borrow, rename = "inline_data")]
    pub inline_snake: Shape<'a, Blob<'a>>,
    /// A file by URI.
    #[serde(borrow, rename = "fileData")]
    pub file_camel: Shape<'a, FileData<'a>>,
    /// The same, snake_case.
    #[serde(borrow, rename = "file_data")]
    pub file_snake: Shape<'a, FileData<'a>>,
    /// A function call.
    #[serde(borrow, rename = "functionCall")]
    pub call_camel: Shape<'a, Call<'a>>,
    /// The same, snake_case.
    #[serde(borrow, rename = "function_call")]
    pub call_snake: Shape<'a, Call<'a>>,
    /// A function's result.
    #[serde(borrow, rename = "functionResponse")]
    pub response_camel: Shape<'a, FunctionResponse<'a>>,
    /// The same, snake_case.
    #[serde(borrow, rename = "function_response")]
    pub response_snake: Shape<'a, FunctionResponse<'a>>,
    /// A function call's thought signature.
    #[serde(borrow, rename = "thoughtSignature")]
    pub signature_camel: Shape<'a, IgnoredAny>,
    /// The same, snake_case.
    #[serde(borrow, rename = "thought_signature")]
    pub signature_snake: Shape<'a, IgnoredAny>,
}

/// `inlineData`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Blob<'a> {
    /// The MIME type.
    #[serde(borrow, rename = "mimeType")]
    pub mime_camel: Shape<'a, IgnoredAny>,
    /// The same, snake_case.
    #[serde(borrow, rename = "mime_type")]
    pub mime_snake: Shape<'a, IgnoredAny>,
    /// Base64 data.
    #[serde(borrow)]
    pub data: Str<'a>,
}

/// `fileData`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct FileData<'a> {
    /// The file's URI.
    #[serde(borrow, rename = "fileUri")]
    pub uri_camel: Shape<'a, IgnoredAny>,
    /// The same, snake_case.
    #[serde(borrow, rename = "file_uri")]
    pub uri_snake: Shape<'a, IgnoredAny>,
    /// The MIME type.
    #[serde(borrow, rename = "mimeType")]
    pub mime_camel: Shape<'a, IgnoredAny>,
    /// The same, snake_case.
    #[serde(borrow, rename = "mime_type")]
    pub mime_snake: Shape<'a, IgnoredAny>,
}

/// A request's `functionCall`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Call<'a> {
    /// The function's name.
    #[serde(borrow)]
    pub name: Str<'a>,
    /// Its arguments, verbatim (`null` told from absent).
    #[serde(borrow)]
    pub args: Present<Verbatim<'a>>,
}

/// `functionResponse`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct FunctionResponse<'a> {
    /// The function's name.
    #[serde(borrow)]
    pub name: Str<'a>,
    /// Its result, verbatim.
    #[serde(borrow)]
    pub response: Present<Verbatim<'a>>,
}

/// `generationConfig`: the fields the hub has, verbatim.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Config<'a> {
    /// Sampling temperature.
    #[serde(borrow)]
    pub temperature: Present<Verbatim<'a>>,
    /// `topP`.
    #[serde(borrow, rename = "topP")]
    pub top_p_camel: Present<Verbatim<'a>>,
    /// `top_p`.
    #[serde(borrow, rename = "top_p")]
    pub top_p_snake: Present<Verbatim<'a>>,
    /// `maxOutputTokens`.
    #[serde(borrow, rename = "maxOutputTokens")]
    pub max_camel: Present<Verbatim<'a>>,
    /// `max_output_tokens`.
    #[serde(borrow, rename = "max_output_tokens")]
    pub max_snake: Present<Verbatim<'a>>,
    /// `stopSequences`.
    #[serde(borrow, rename = "stopSequences")]
    pub stop_camel: Present<Verbatim<'a>>,
    /// `stop_sequences`.
    #[serde(borrow, rename = "stop_sequences")]
    pub stop_snake: Present<Verbatim<'a>>,
    /// `candidateCount`.
    #[serde(borrow, rename = "candidateCount")]
    pub n_camel: Present<Verbatim<'a>>,
    /// `candidate_count`.
    #[serde(borrow, rename = "candidate_count")]
    pub n_snake: Present<Verbatim<'a>>,
    /// The seed.
    #[serde(borrow)]
    pub seed: Present<Verbatim<'a>>,
}

/// A tool: its function declarations.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Tool<'a> {
    /// `functionDeclarations`.
    #[serde(borrow, rename = "functionDeclarations")]
    pub declarations_camel: Shape<'a, Declaration<'a>>,
    /// `function_declarations`.
    #[serde(borrow, rename = "function_declarations")]
    pub declarations_snake: Shape<'a, Declaration<'a>>,
}

/// A function declaration.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Declaration<'a> {
    /// Its name, verbatim.
    #[serde(borrow)]
    pub name: Option<Verbatim<'a>>,
    /// What it does.
    #[serde(borrow)]
    pub description: Str<'a>,
    /// Its parameters' JSON schema, verbatim.
    #[serde(borrow)]
    pub parameters: Option<Verbatim<'a>>,
}
