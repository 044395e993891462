//! The content parts of a hub request (OpenAI chat content parts: `text`, `image_url`,
//! `input_audio`, `file`) and which of them each upstream wire can take. A part an upstream
//! cannot take is refused before the request is converted — a 400 naming the part — rather than
//! dropped on the way (the model would answer without having seen it).
//!
//! What each wire takes, by its documentation:
//! - OpenAI chat: all four (https://platform.openai.com/docs/api-reference/chat/create, user
//!   message content parts); a file by `file_data` or `file_id`, PDFs only
//!   (https://developers.openai.com/api/docs/guides/file-inputs).
//! - Responses: text, images and files (`input_file`: more types than PDFs, by data, id or
//!   URL), no audio (https://platform.openai.com/docs/api-reference/responses/create).
//! - Anthropic Messages: text, images, and `document` blocks of a base64 PDF or plain text
//!   (https://docs.anthropic.com/en/docs/build-with-claude/pdf-support); no audio.
//! - Gemini: text and any medium as `inlineData` bytes with its MIME type
//!   (https://ai.google.dev/api/caching#Blob), audio included.
//! - Bedrock Converse: text, images, and `document` blocks of the formats DocumentBlock lists
//!   (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_DocumentBlock.html).
//! - Cohere chat v2: text and `image_url` only; its `documents` field takes text documents
//!   (strings or objects) for citations, not files (https://docs.cohere.com/v2/reference/chat).
//!
//! The hub also carries one part of its own: [`UNSUPPORTED`], for a client part no hub part can
//! hold (e.g. an Anthropic document given by Files API id). The hub is built for every request,
//! Claude's pass-through included, so such a part is marked there and refused here, only when
//! the request really is converted.

use serde_json::Value;

use super::{ConvertError, Wire};

/// The type of the hub part standing for a client part no hub part can hold; its `detail` says
/// what it was.
pub const UNSUPPORTED: &str = "x-tollgate-unsupported";

/// A hub part for a client part no hub part can hold, `detail` naming it (e.g. `a document
/// given by Files API id`).
pub fn unsupported(detail: String) -> Value {
    serde_json::json!({"type": UNSUPPORTED, "detail": detail})
}

/// The MIME type and base64 data of a `data:` URL.
pub fn data_url(url: &str) -> Option<(&str, &str)> {
    url.strip_prefix("data:")?.split_once(";base64,")
}

/// The MIME type and base64 data of a hub `file` part given by its bytes.
pub fn file_bytes(part: &Value) -> Option<(&str, &str)> {
    data_url(part["file"]["file_data"].as_str()?)
}

/// The name a hub `file` part gives its file, if any.
pub fn file_name(part: &Value) -> Option<&str> {
    part["file"]["filename"].as_str().filter(|n| !n.is_empty())
}

/// The part at `messages[m].content[p]`, described for a message: its kind and what names it.
pub fn describe(part: &Value) -> String {
    match part["type"].as_str().unwrap_or_default() {
        "file" => {
            let file = &part["file"];
            let mut what = String::from("a file part");
            let mut said = Vec::new();
            if let Some(name) = file_name(part) {
                said.push(format!("{name:?}"));
            }
            if let Some((mime, _)) = file_bytes(part) {
                said.push(mime.to_owned());
            } else if let Some(id) = file["file_id"].as_str() {
                said.push(format!("file_id {id}"));
            } else if let Some(url) = file["file_url"].as_str() {
                said.push(format!("URL {}", shown(url)));
            }
            if !said.is_empty() {
                what.push_str(&format!(" ({})", said.join(", ")));
            }
            what
        }
        "input_audio" => {
            let format = part["input_audio"]["format"].as_str().unwrap_or("audio");
            format!("an input_audio part ({format})")
        }
        "image_url" => "an image_url part".to_owned(),
        UNSUPPORTED => part["detail"].as_str().unwrap_or("a part").to_owned(),
        other => format!("a {other} part"),
    }
}

/// `url` shortened for a message.
fn shown(url: &str) -> String {
    const MAX: usize = 80;
    match url.char_indices().nth(MAX) {
        Some((at, _)) => format!("{}…", &url[..at]),
        None => url.to_owned(),
    }
}

/// The name of an upstream wire in a refusal.
fn upstream_name(wire: Wire) -> &'static str {
    match wire {
        Wire::OpenAi => "an OpenAI chat model",
        Wire::Responses => "a model behind the Responses API",
        Wire::Anthropic => "a Claude model",
        Wire::Gemini => "a Gemini model",
        Wire::Converse => "a Bedrock Converse model",
        Wire::Cohere => "a Cohere model",
    }
}

/// The Converse document `format` of a MIME type (DocumentBlock's valid values).
pub fn converse_document_format(mime: &str) -> Option<&'static str> {
    match mime {
        "application/pdf" => Some("pdf"),
        "text/csv" => Some("csv"),
        "application/msword" => Some("doc"),
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document" => Some("docx"),
        "application/vnd.ms-excel" => Some("xls"),
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet" => Some("xlsx"),
        "text/html" => Some("html"),
        "text/plain" => Some("txt"),
        "text/markdown" => Some("md"),
        _ => None,
    }
}

/// Why `wire` cannot take `part` (`None`: it can).
fn refusal(wire: Wire, part: &Value) -> Option<&'static str> {
    let kind = part["type"].as_str().unwrap_or_default();
    let file = &part["file"];
    let by_id = file["file_id"].is_string();
    let bytes = file_bytes(part);
    match (kind, wire) {
        (UNSUPPORTED, _) => Some("no part of the converted request can hold it"),
        ("text" | "image_url", _) => None,
        ("input_audio", Wire::OpenAi | Wire::Gemini) => None,
        ("input_audio", _) => Some("it takes no audio input"),
        // Chat completions take PDFs only, by bytes or id; the Responses API more types, and
        // URLs (https://developers.openai.com/api/docs/guides/file-inputs).
        ("file", Wire::OpenAi) if by_id => None,
        ("file", Wire::OpenAi) => match bytes {
            Some(("application/pdf", _)) => None,
            Some(_) => Some("OpenAI's chat completions take PDF files only"),
            None => Some(
                "files must be sent as bytes (a data: URL in file_data, or an http(s) URL Tollgate reads)",
            ),
        },
        ("file", Wire::Responses) if by_id || bytes.is_some() || file["file_url"].is_string() => {
            None
        }
        ("file", Wire::Cohere) => Some(
            "Cohere's chat takes only text and images (its documents field takes text, not files)",
        ),
        ("file", _) if by_id => {
            Some("a file_id names a file stored at OpenAI; send the file's bytes")
        }
        ("file", _) if bytes.is_none() => Some(
            "files must be sent as bytes (a data: URL in file_data, or an http(s) URL Tollgate reads)",
        ),
        ("file", Wire::Anthropic) => match bytes {
            Some(("application/pdf", _)) => None,
            // A plain-text document goes as text: its bytes must decode.
            Some(("text/plain", data)) => {
                use base64::Engine;
                match base64::engine::general_purpose::STANDARD.decode(data) {
                    Ok(_) => None,
                    Err(_) => Some("its file_data is not valid base64"),
                }
            }
            _ => Some("Claude takes PDF and plain-text documents only"),
        },
        ("file", Wire::Converse) => {
            match bytes.and_then(|(mime, _)| converse_document_format(mime)) {
                Some(_) => None,
                None => Some(
                    "Converse takes documents of type pdf, csv, doc, docx, xls, xlsx, html, txt or md only",
                ),
            }
        }
        ("file", _) => None,
        _ => None,
    }
}

/// Why a tool result (a hub `tool` message) cannot carry `part` to `wire` (`None`: it can).
/// Claude's `tool_result` and Converse's `toolResult` take images and documents; OpenAI's tool
/// messages, the Responses API's `function_call_output`, Gemini's `functionResponse` and
/// Cohere's tool messages are text here.
fn tool_refusal(wire: Wire, part: &Value) -> Option<&'static str> {
    match (part["type"].as_str().unwrap_or_default(), wire) {
        ("text", _) | (_, Wire::Anthropic | Wire::Converse) => None,
        _ => Some("its tool results take text only"),
    }
}

/// Checks that `wire` can take every content part of the hub request `hub`: the first one it
/// cannot is refused, named by its place in the request and what it is.
pub fn check(wire: Wire, hub: &Value) -> Result<(), ConvertError> {
    for (i, message) in hub["messages"].as_array().into_iter().flatten().enumerate() {
        let tool = message["role"] == "tool";
        for (j, part) in message["content"]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
        {
            let why =
                refusal(wire, part).or_else(|| tool.then(|| tool_refusal(wire, part)).flatten());
            if let Some(why) = why {
                let place = if tool { " in a tool result" } else { "" };
                return Err(ConvertError(format!(
                    "messages[{i}].content[{j}]: {}{place} cannot be sent to {}: {why}",
                    describe(part),
                    upstream_name(wire)
                )));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
