//! The console's model-list request (`GET` of the upstream's models) for a channel type whose
//! row names a [`ModelsApi`]: OpenAI and the compatible providers `GET {base}/v1/models` (or the
//! row's prefix), Claude `GET {base}/v1/models` with the `anthropic-version` header, Gemini
//! `GET {base}/v1beta/models?pageSize=1000` (at most 1000 per page,
//! <https://ai.google.dev/api/rest/v1beta/models/list>). Authenticated by the adaptor's
//! [`super::Adaptor::authenticate`], as the relay's requests are.

use crate::channel_types::{self, ModelsApi};
use crate::error::RelayError;
use crate::relay::wire::Wire;

/// The list's array and each item's id field in the answer of `api` (Gemini's ids start with
/// `models/`).
pub fn answer_fields(api: ModelsApi) -> (&'static str, &'static str) {
    match api {
        ModelsApi::Gemini => ("models", "name"),
        ModelsApi::OpenAi | ModelsApi::Anthropic => ("data", "id"),
    }
}

/// The model-list request of a channel of `channel_type` at `base` (its effective base URL) with
/// the key line `key`, sent through `client` (the channel's proxy).
pub fn models_request(
    client: &reqwest::Client,
    channel_type: i32,
    base: &str,
    key: &str,
    api: ModelsApi,
) -> Result<reqwest::RequestBuilder, RelayError> {
    let (url, wire) = match api {
        ModelsApi::OpenAi => (
            channel_types::openai_url(channel_type, base, "/v1/models"),
            Wire::OpenAi,
        ),
        ModelsApi::Anthropic => (format!("{base}/v1/models"), Wire::Anthropic),
        ModelsApi::Gemini => (format!("{base}/v1beta/models?pageSize=1000"), Wire::Gemini),
    };
    let mut req = super::get(client, channel_type, "", wire, &url, key)?;
    if wire == Wire::Anthropic {
        for (name, value) in super::anthropic_headers(channel_type, None) {
            req = req.header(name, value);
        }
    }
    Ok(req)
}
