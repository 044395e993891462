//! Capability routing: which relay routes a channel type can serve, as a bit mask computed once
//! per channel when the routing table is built ([`mask`]), and what a request needs ([`Need`]).
//! The pick then costs one AND per candidate, and nothing at all on routes whose channels can
//! all serve the request (the routing table keeps the intersection per tier).
//!
//! A route is served when the type has the capability, and the relay's handler for that inbound
//! format can talk to the type's family: OpenAI-format routes other than chat are forwarded
//! as they are, so only the families that take OpenAI's bodies (OpenAI, Azure) serve them (a
//! new family that converts them adds itself in `Serve::served_by`).

use super::kinds::{Caps, ChannelType, Family};

/// A relay route kind: what a request asks of a channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Serve {
    /// Chat in any inbound format (OpenAI chat, Anthropic Messages, Gemini generateContent).
    Chat,
    /// Streamed chat.
    ChatStream,
    /// Legacy OpenAI completions (`/v1/completions`).
    Completions,
    /// The OpenAI Responses API.
    Responses,
    /// OpenAI-format embeddings (`/v1/embeddings`).
    Embeddings,
    /// Gemini-format embeddings (`:embedContent`, `:batchEmbedContents`).
    GeminiEmbeddings,
    /// OpenAI image generation.
    Images,
    /// OpenAI audio (speech, transcriptions, translations).
    Audio,
    /// Rerank.
    Rerank,
    /// OpenAI moderations.
    Moderation,
    /// Midjourney-proxy task submits (`/mj/submit/…`).
    Midjourney,
    /// Suno task submits (`/suno/submit/…`).
    Suno,
    /// OpenAI's video API (`/v1/videos`).
    Video,
}

impl Serve {
    /// Every route kind.
    pub const ALL: [Serve; 13] = [
        Serve::Chat,
        Serve::ChatStream,
        Serve::Completions,
        Serve::Responses,
        Serve::Embeddings,
        Serve::GeminiEmbeddings,
        Serve::Images,
        Serve::Audio,
        Serve::Rerank,
        Serve::Moderation,
        Serve::Midjourney,
        Serve::Suno,
        Serve::Video,
    ];

    /// The route kind's bit.
    pub const fn bit(self) -> u32 {
        1 << self as u32
    }

    /// Whether `row` can serve this route kind.
    fn served_by(self, row: &ChannelType) -> bool {
        let caps = row.capabilities();
        // Families whose bodies are OpenAI's (the OpenAI-format routes reach them as they are).
        let openai = row.family.is_some_and(Family::openai_bodies);
        // Cohere's adaptor (`relay::routes::cohere`) converts OpenAI embeddings and rerank requests.
        let cohere = row.family == Some(Family::Cohere);
        match self {
            Serve::Chat => caps.has(Caps::CHAT),
            Serve::ChatStream => caps.has(Caps::CHAT.with(Caps::STREAM)),
            // Only where the provider documents `/v1/completions` (`Caps::COMPLETIONS`).
            Serve::Completions => caps.has(Caps::COMPLETIONS) && openai,
            Serve::Responses => caps.has(Caps::RESPONSES) && openai,
            // Vertex AI and Bedrock embed through `relay::adaptor::cloud_embed`.
            Serve::Embeddings => {
                caps.has(Caps::EMBEDDINGS)
                    && (openai
                        || cohere
                        || matches!(row.family, Some(Family::Vertex | Family::Bedrock)))
            }
            // Vertex AI through `:predict` (`relay::routes::embed`).
            Serve::GeminiEmbeddings => {
                caps.has(Caps::EMBEDDINGS)
                    && (openai || matches!(row.family, Some(Family::Gemini | Family::Vertex)))
            }
            Serve::Images => caps.has(Caps::IMAGES) && openai,
            Serve::Audio => caps.has(Caps::AUDIO) && openai,
            Serve::Rerank => caps.has(Caps::RERANK) && (openai || cohere),
            Serve::Moderation => caps.has(Caps::MODERATION) && openai,
            // The task relays (`crate::task_relay`): Midjourney Proxy (2) and Midjourney Proxy
            // Plus (5), Suno (36); videos on OpenAI's own channels (1: Azure's documentation
            // does not show `/v1/videos`).
            Serve::Midjourney => matches!(row.id, 2 | 5),
            Serve::Suno => row.id == 36,
            Serve::Video => row.id == 1,
        }
    }
}

/// The route kinds a channel of `channel_type` can serve, as bits ([`Serve::bit`]); 0 for an
/// unknown type.
pub fn mask(channel_type: i32) -> u32 {
    let Some(row) = super::by_id(channel_type) else {
        return 0;
    };
    Serve::ALL
        .iter()
        .filter(|s| s.served_by(row))
        .fold(0, |m, s| m | s.bit())
}

/// What one request needs of its channel: the route kind bits, and the route's name for the
/// client's error when no channel of the model can serve it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Need {
    /// Bits every candidate's [`mask`] must contain.
    pub bits: u32,
    /// The route as the client called it (e.g. `/v1/embeddings`).
    pub route: &'static str,
}

impl Need {
    /// The need of `serve` on `route`.
    pub const fn new(serve: Serve, route: &'static str) -> Need {
        Need {
            bits: serve.bit(),
            route,
        }
    }

    /// A chat request on `route`, streamed or not.
    pub const fn chat(stream: bool, route: &'static str) -> Need {
        let bits = if stream {
            Serve::Chat.bit() | Serve::ChatStream.bit()
        } else {
            Serve::Chat.bit()
        };
        Need { bits, route }
    }

    /// The need of an OpenAI-format JSON route (`relay::routes::chat`), by its path.
    pub fn openai_route(path: &str, stream: bool) -> Need {
        match path {
            "/v1/chat/completions" => Need::chat(stream, "/v1/chat/completions"),
            "/v1/completions" => Need::new(Serve::Completions, "/v1/completions"),
            "/v1/responses" => Need::new(Serve::Responses, "/v1/responses"),
            "/v1/embeddings" => Need::new(Serve::Embeddings, "/v1/embeddings"),
            "/v1/images/generations" => Need::new(Serve::Images, "/v1/images/generations"),
            "/v1/rerank" => Need::new(Serve::Rerank, "/v1/rerank"),
            "/v1/moderations" => Need::new(Serve::Moderation, "/v1/moderations"),
            // Every JSON route is listed above; an unknown one needs chat, the strictest
            // common ground.
            _ => Need::chat(stream, "/v1/chat/completions"),
        }
    }
}
