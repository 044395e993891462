//! Wire formats and the conversions between them. OpenAI chat completions is the hub: every
//! conversion goes through it (Anthropic ⇄ OpenAI, Gemini ⇄ OpenAI, and Anthropic ⇄ Gemini by
//! chaining the two; the Responses API both ways; Cohere is an upstream only: hub → Cohere
//! requests, Cohere → hub answers), so each format knows only itself and the hub.
//!
//! - Requests and whole answers convert as JSON values ([`to_hub_request`] / [`from_hub_request`],
//!   [`to_hub_answer`] / [`from_hub_answer`]); an upstream's whole answer is read from its bytes
//!   ([`read_answer`]).
//! - Streams convert event by event: a format's [`Decode`] turns its upstream SSE events into
//!   [`Piece`]s, another format's [`Encode`] turns pieces into the client's SSE bytes.
//!
//! Thinking signatures ride the hub in two fields of its own, so that a client can send them
//! back in the next turn to an upstream that checks them:
//! - an assistant message's `thinking_blocks`: Anthropic-shaped `{"type": "thinking",
//!   "thinking", "signature"}` and `{"type": "redacted_thinking", "data"}` blocks (the shape
//!   LiteLLM gives OpenAI-format clients), beside `reasoning_content` (their text). Anthropic
//!   and Bedrock Converse read and write them.
//! - a tool call's `extra_content.google.thought_signature`: Gemini's `thoughtSignature` of a
//!   function call, in the field Gemini's own OpenAI-compatible API uses
//!   (https://ai.google.dev/gemini-api/docs/thought-signatures).

pub mod anthropic;
pub mod baidu;
pub mod cohere;
pub mod converse;
pub mod coze;
pub mod dify;
pub mod gemini;
pub mod hub;
pub mod hunyuan;
pub mod limit;
pub mod openai;
pub mod parts;
pub mod responses;
pub mod spark;
pub mod typed;

use serde_json::Value;

use tollgate_actors::channel_pool::routing_table::RoutedChannel;

use crate::channel_types::Family;
use crate::relay::measure::price::Usage;

/// A wire format, for the client side or the upstream side of a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wire {
    /// OpenAI chat completions (`/v1/chat/completions`).
    OpenAi,
    /// Anthropic Messages (`/v1/messages`).
    Anthropic,
    /// Gemini `generateContent` / `streamGenerateContent`.
    Gemini,
    /// AWS Bedrock Converse / ConverseStream (an upstream format only: no client speaks it).
    Converse,
    /// Cohere Chat API v2 (`/v2/chat`): an upstream only, no client speaks it.
    Cohere,
    /// OpenAI Responses API (`/v1/responses`): Responses clients, and OpenAI-compatible
    /// channels set to `setting.upstream_api: "responses"` (or OpenAI's own, for Responses
    /// clients).
    Responses,
}

impl Wire {
    /// The wire a channel type is spoken with (its family in the channel type table), `None`
    /// when the relay cannot speak it.
    pub fn of_channel(channel_type: i32) -> Option<Wire> {
        match crate::channel_types::family(channel_type)? {
            Family::OpenAi | Family::Zhipu | Family::Cloudflare | Family::QianfanV2 => {
                Some(Wire::OpenAi)
            }
            Family::Anthropic => Some(Wire::Anthropic),
            Family::Gemini => Some(Wire::Gemini),
            Family::Cohere => Some(Wire::Cohere),
            // Reached as OpenAI-compatible upstreams (`relay::adaptor::native`).
            Family::Hunyuan | Family::Spark | Family::Baidu | Family::Dify | Family::Coze => {
                Some(Wire::OpenAi)
            }
            Family::Azure | Family::Bedrock | Family::Vertex => None,
        }
    }

    /// The wire a channel whose body format is `self` (its transport's, see
    /// [`crate::relay::adaptor::wire`]) is spoken with for a `client` request: the same, except
    /// that an OpenAI-compatible channel answers through the Responses API when its
    /// `setting.upstream_api` says so, and OpenAI's and Azure's channels (which have both APIs)
    /// do for Responses clients.
    #[must_use]
    pub fn upstream(self, channel: &RoutedChannel, client: Wire) -> Wire {
        let native = client == Wire::Responses
            && crate::channel_types::by_id(channel.channel.channel_type)
                .is_some_and(|row| row.native_responses);
        if self == Wire::OpenAi && (channel.json.upstream_responses() || native) {
            Wire::Responses
        } else {
            self
        }
    }
}

/// Why a body could not be converted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ConvertError(pub String);

/// One step of a streamed answer, whatever its wire format.
#[derive(Debug, Clone, PartialEq)]
pub enum Piece {
    /// The answer began: the upstream's message id and model.
    Start {
        /// Message id.
        id: String,
        /// Model name as the upstream reports it.
        model: String,
    },
    /// Answer text.
    Text(String),
    /// Reasoning ("thinking") text.
    Thinking(String),
    /// The signature of the thinking just streamed (Anthropic's `signature_delta`, Converse's
    /// `reasoningContent.signature`): the upstream checks it when the thinking comes back in
    /// the next turn.
    ThinkingSignature(String),
    /// A redacted (encrypted) thinking block's data (Anthropic's `redacted_thinking.data`,
    /// Converse's `reasoningContent.redactedContent`, base64).
    RedactedThinking(String),
    /// Gemini's `thoughtSignature` of a tool call (`index` as in [`Piece::ToolStart`]).
    ToolSignature {
        /// Tool call index.
        index: usize,
        /// The signature.
        signature: String,
    },
    /// A tool call begins (`index` counts tool calls from 0).
    ToolStart {
        /// Tool call index.
        index: usize,
        /// Tool call id.
        id: String,
        /// Function name.
        name: String,
    },
    /// More JSON text of a tool call's arguments.
    ToolArgs {
        /// Tool call index.
        index: usize,
        /// The JSON fragment.
        json: String,
    },
    /// Why the answer stopped, as an OpenAI `finish_reason` (stop, length, tool_calls,
    /// content_filter).
    Stop(String),
    /// Usage so far (each report replaces the previous one).
    Usage(Usage),
    /// The upstream reported an error inside the stream.
    Error(String),
}

/// Turns one upstream format's SSE events into pieces.
pub trait Decode: Send {
    /// One SSE event (`event` is the `event:` field, empty when absent). Returns the pieces it
    /// carries; [`Decode::done`] turns true at the format's end-of-stream marker.
    fn event(&mut self, event: &str, data: &str) -> Vec<Piece>;
    /// Whether the end-of-stream marker was seen.
    fn done(&self) -> bool;
}

/// Turns pieces into one client format's SSE bytes.
pub trait Encode: Send {
    /// Appends the bytes of `piece` to `out`.
    fn piece(&mut self, piece: &Piece, out: &mut Vec<u8>);
    /// Appends the closing events to `out` (the upstream's answer was complete).
    fn end(&mut self, out: &mut Vec<u8>);
    /// Appends the client format's error event to `out`: the upstream's answer was cut short
    /// (no end marker follows; the client must not take the answer for complete).
    fn cut(&mut self, message: &str, out: &mut Vec<u8>) {
        self.piece(&Piece::Error(message.to_owned()), out);
    }
}

/// A decoder for the upstream format `wire`.
pub fn decoder(wire: Wire) -> Box<dyn Decode> {
    match wire {
        Wire::OpenAi => Box::new(openai::Decoder::default()),
        Wire::Anthropic => Box::new(anthropic::Decoder::default()),
        Wire::Gemini => Box::new(gemini::Decoder::default()),
        Wire::Converse => Box::new(converse::Decoder::default()),
        Wire::Cohere => Box::new(cohere::Decoder::default()),
        Wire::Responses => Box::new(responses::Decoder::default()),
    }
}

/// What an encoder needs to know about the request.
#[derive(Debug, Clone)]
pub struct EncodeCtx {
    /// The model the client asked for (shown in the answer).
    pub model: String,
    /// Prompt tokens by Tollgate's estimate (Anthropic's `message_start` needs a number before
    /// the upstream reports one).
    pub prompt_estimate: i64,
    /// OpenAI clients only: whether the client asked for the usage chunk.
    pub include_usage: bool,
}

/// An encoder for the client format `wire` (Converse and Cohere have no clients: OpenAI's).
pub fn encoder(wire: Wire, ctx: EncodeCtx) -> Box<dyn Encode> {
    match wire {
        Wire::OpenAi | Wire::Converse | Wire::Cohere => Box::new(openai::Encoder::new(ctx)),
        Wire::Anthropic => Box::new(anthropic::Encoder::new(ctx)),
        Wire::Gemini => Box::new(gemini::Encoder::new(ctx)),
        Wire::Responses => Box::new(responses::Encoder::new(ctx)),
    }
}

/// A request in format `wire` as an OpenAI chat completions request.
pub fn to_hub_request(wire: Wire, body: &Value) -> Result<Value, ConvertError> {
    match wire {
        Wire::OpenAi => Ok(body.clone()),
        Wire::Anthropic => anthropic::request_to_hub(body),
        Wire::Gemini => gemini::request_to_hub(body),
        Wire::Converse => Err(ConvertError(
            "Bedrock Converse is not a client format".into(),
        )),
        Wire::Cohere => Err(ConvertError(
            "Cohere requests are not accepted from clients".into(),
        )),
        Wire::Responses => responses::request_to_hub(body),
    }
}

/// An OpenAI chat completions request in format `wire`, for `model`. A request `wire` cannot
/// carry is refused: a content part it cannot take ([`parts::check`]), or what Converse or the
/// Responses API have no field for.
pub fn from_hub_request(
    wire: Wire,
    hub: &Value,
    model: &str,
    stream: bool,
) -> Result<Value, ConvertError> {
    parts::check(wire, hub)?;
    match wire {
        Wire::OpenAi => Ok(openai::request_from_hub(hub, model, stream)),
        Wire::Anthropic => Ok(anthropic::request_from_hub(hub, model, stream)),
        Wire::Gemini => Ok(gemini::request_from_hub(hub)),
        Wire::Converse => converse::request_from_hub(hub),
        Wire::Cohere => Ok(cohere::request_from_hub(hub, model, stream)),
        Wire::Responses => {
            responses::check_hub(hub)?;
            Ok(responses::request_from_hub(hub, model, stream))
        }
    }
}

/// A whole answer in format `wire` as an OpenAI `chat.completion`.
pub fn to_hub_answer(wire: Wire, answer: &Value) -> Value {
    match wire {
        Wire::OpenAi => answer.clone(),
        Wire::Anthropic => anthropic::answer_to_hub(answer),
        Wire::Gemini => gemini::answer_to_hub(answer),
        Wire::Converse => converse::answer_to_hub(answer),
        Wire::Cohere => cohere::answer_to_hub(answer),
        Wire::Responses => responses::answer_to_hub(answer),
    }
}

/// An OpenAI `chat.completion` in format `wire`, naming `model` (Converse and Cohere have no
/// clients: OpenAI's).
pub fn from_hub_answer(wire: Wire, hub: &Value, model: &str) -> Value {
    match wire {
        Wire::OpenAi | Wire::Converse | Wire::Cohere => openai::answer_for_client(hub, model),
        Wire::Anthropic => anthropic::answer_from_hub(hub, model),
        Wire::Gemini => gemini::answer_from_hub(hub, model),
        Wire::Responses => responses::answer_from_hub(hub, model),
    }
}

/// A whole upstream answer in format `wire` read from its bytes: as a hub `chat.completion`
/// ([`to_hub_answer`]) and the usage it reports ([`answer_usage`]). The typed formats read the
/// bytes straight into their structs; the others, and a body those refuse (a field repeated),
/// are parsed as a value first. `None` when the bytes are not JSON.
pub fn read_answer(wire: Wire, bytes: &[u8]) -> Option<(Value, Option<Usage>)> {
    let typed = match wire {
        Wire::Anthropic => anthropic::answer_from_bytes(bytes),
        Wire::Responses => responses::answer_from_bytes(bytes),
        Wire::Gemini => gemini::answer_from_bytes(bytes),
        Wire::Converse => converse::answer_from_bytes(bytes),
        Wire::Cohere => cohere::answer_from_bytes(bytes),
        Wire::OpenAi => None,
    };
    if typed.is_some() {
        return typed;
    }
    let answer = serde_json::from_slice::<Value>(bytes).ok()?;
    Some((to_hub_answer(wire, &answer), answer_usage(wire, &answer)))
}

/// The usage a whole answer in format `wire` reports, if any.
pub fn answer_usage(wire: Wire, answer: &Value) -> Option<Usage> {
    match wire {
        Wire::OpenAi => answer.get("usage").map(openai::usage_of),
        Wire::Responses => responses::answer_usage(answer),
        Wire::Anthropic => answer.get("usage").map(anthropic::usage_of),
        Wire::Gemini => gemini::answer_usage(answer),
        Wire::Converse => answer.get("usage").map(converse::usage_of),
        Wire::Cohere => answer
            .get("usage")
            .filter(|u| u.is_object())
            .map(cohere::usage_of),
    }
}

/// An upstream error status in HTTP's usual meaning, so failover and the channel's health rules
/// read every wire alike: Cohere's 498 (an invalid API key) is a 401.
pub fn error_status(wire: Wire, status: u16) -> u16 {
    match (wire, status) {
        (Wire::Cohere, 498) => 401,
        _ => status,
    }
}

/// The answer text of a hub answer (for counting completion tokens): content, reasoning and
/// tool call arguments of every choice.
pub fn hub_answer_text(hub: &Value) -> String {
    let mut text = String::new();
    for choice in hub["choices"].as_array().into_iter().flatten() {
        let m = &choice["message"];
        for part in [&m["reasoning_content"], &m["content"]] {
            text.push_str(part.as_str().unwrap_or_default());
        }
        for call in m["tool_calls"].as_array().into_iter().flatten() {
            text.push_str(call["function"]["arguments"].as_str().unwrap_or_default());
        }
    }
    text
}

/// Seconds since the epoch, for `created` fields.
pub(crate) fn now() -> i64 {
    crate::clock::now_unix()
}

/// Appends one SSE event (`event:` line only when `name` is not empty).
pub(crate) fn sse(out: &mut Vec<u8>, name: &str, data: &Value) {
    if !name.is_empty() {
        out.extend_from_slice(b"event: ");
        out.extend_from_slice(name.as_bytes());
        out.push(b'\n');
    }
    out.extend_from_slice(b"data: ");
    out.extend_from_slice(data.to_string().as_bytes());
    out.extend_from_slice(b"\n\n");
}
