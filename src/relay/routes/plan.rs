//! Which route family serves a JSON relay request ([`plan_for`]), decided from ONE walk of the
//! model's candidates — the pinned channel, else every channel of the caller's route — before
//! any channel is picked. It replaces the three scans each family kept of its own (OpenAI chat
//! for channels of another wire, Responses for channels without the API, embeddings and rerank
//! for Cohere and cloud channels); the question asked of each candidate depends on the route,
//! so a request still looks at each candidate once and reads its body's model name once.
//!
//! | client route | a candidate that … | family |
//! |---|---|---|
//! | `/v1/chat/completions` | speaks another wire than OpenAI chat for the model | [`Family::Adaptor`] |
//! | `/v1/responses` | lacks the Responses API (`native`: another has it) | [`Family::Responses`] |
//! | `/v1/embeddings` | is Cohere, Vertex AI or Bedrock | [`Family::Cohere`] |
//! | `/v1/rerank` | is Cohere | [`Family::Cohere`] |
//! | anything else, or no such candidate | — | [`Family::OpenAi`] |

use std::borrow::Cow;

use tollgate_actors::channel_pool::routing_table::RoutedChannel;

use crate::relay::adaptor;
use crate::relay::adaptor::cloud_embed;
use crate::relay::pipeline::auth::Caller;
use crate::relay::wire::Wire;
use crate::state::AppState;

/// The route family that serves a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// The OpenAI path ([`crate::relay::routes::chat`]): the body as received, the upstream path the client's.
    OpenAi,
    /// An OpenAI chat request converted for channels of another wire ([`crate::relay::routes::convert`]).
    Adaptor,
    /// A Responses request converted for channels without the API ([`crate::relay::routes::responses`]);
    /// `native`: some candidate has the API (a request the hub cannot carry goes to it).
    Responses {
        /// Some candidate speaks the Responses API.
        native: bool,
    },
    /// Embeddings or rerank for Cohere (and, for embeddings, Vertex AI and Bedrock) channels
    /// ([`crate::relay::routes::cohere`]).
    Cohere,
}

/// The `model` of a request body, borrowed when it has no escapes ("" when absent).
#[derive(serde::Deserialize)]
struct ModelName<'a> {
    #[serde(borrow, default)]
    model: Cow<'a, str>,
}

/// A body that has a `model` field, whatever its value.
#[derive(serde::Deserialize)]
struct HasModel {
    #[serde(rename = "model")]
    _model: serde::de::IgnoredAny,
}

/// The family that serves a request of `caller` on `path` with `body`. A body that is not JSON
/// goes to the OpenAI path, which answers it; so does a chat request without a model (the other
/// routes walk the candidates of the empty name, which only a pinned channel has).
pub fn plan_for(state: &AppState, caller: &Caller, path: &str, body: &[u8]) -> Family {
    let ask = match path {
        "/v1/chat/completions" => Ask::ForeignChat,
        "/v1/responses" => Ask::Responses,
        "/v1/embeddings" => Ask::Embed,
        "/v1/rerank" => Ask::Rerank,
        _ => return Family::OpenAi,
    };
    let Ok(head) = serde_json::from_slice::<ModelName<'_>>(body) else {
        return Family::OpenAi;
    };
    // A chat request without a model is the OpenAI path's to answer (checked only for the
    // empty name, so the common path parses the model once).
    if ask == Ask::ForeignChat
        && head.model.is_empty()
        && serde_json::from_slice::<HasModel>(body).is_err()
    {
        return Family::OpenAi;
    }
    let seen = walk(state, caller, &head.model, ask);
    match ask {
        Ask::ForeignChat if seen.other => Family::Adaptor,
        Ask::Responses if seen.other => Family::Responses { native: seen.own },
        Ask::Embed | Ask::Rerank if seen.other => Family::Cohere,
        _ => Family::OpenAi,
    }
}

/// What [`walk`] asks of each candidate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ask {
    /// Does it take another body than OpenAI chat for the model?
    ForeignChat,
    /// Does it speak the Responses API for the model (own) or not (other)?
    Responses,
    /// Is it a Cohere, Vertex AI or Bedrock channel?
    Embed,
    /// Is it a Cohere channel?
    Rerank,
}

/// What the walk saw: some candidate answered `ask` with "other" (needs another family), some
/// with "own" (the OpenAI path's).
#[derive(Debug, Clone, Copy, Default)]
struct Seen {
    own: bool,
    other: bool,
}

/// The one walk of `model`'s candidates for `caller`. It stops early once the answer cannot
/// change (every question but the Responses one needs only an "other").
fn walk(state: &AppState, caller: &Caller, model: &str, ask: Ask) -> Seen {
    let table = state.channel_pool.table().load();
    let mut seen = Seen::default();
    let mut look = |c: &RoutedChannel| {
        match judge(c, model, ask) {
            Some(true) => seen.other = true,
            Some(false) => seen.own = true,
            None => {}
        }
        seen.other && (ask != Ask::Responses || seen.own)
    };
    if let Some(id) = caller.pinned {
        if let Some(c) = table.channel(id) {
            look(c);
        }
        return seen;
    }
    if let Some(route) = table.route(&caller.group, model) {
        for c in route.tiers.iter().flat_map(|t| t.channels.iter()) {
            if look(c) {
                break;
            }
        }
    }
    seen
}

/// Whether candidate `c` needs another family than the OpenAI path for `ask` (`Some(true)`),
/// is served by it (`Some(false)`), or cannot serve the model at all (`None`).
fn judge(c: &RoutedChannel, model: &str, ask: Ask) -> Option<bool> {
    let channel_type = c.channel.channel_type;
    match ask {
        Ask::ForeignChat => {
            let wire = adaptor::wire(channel_type, c.json.mapped_model(model))?;
            Some(wire.upstream(c, Wire::OpenAi) != Wire::OpenAi)
        }
        Ask::Responses => {
            let wire = adaptor::wire(channel_type, c.json.mapped_model(model))?;
            Some(wire.upstream(c, Wire::Responses) != Wire::Responses)
        }
        Ask::Embed => Some(
            Wire::of_channel(channel_type) == Some(Wire::Cohere)
                || cloud_embed::is_cloud(channel_type),
        ),
        Ask::Rerank => Some(Wire::of_channel(channel_type) == Some(Wire::Cohere)),
    }
}
