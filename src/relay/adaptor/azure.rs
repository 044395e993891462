//! Azure OpenAI (type 3): OpenAI's bodies at the resource's deployment URLs, the key in the
//! `api-key` header.
//!
//! - Dated API versions (the channel's `other`, default [`DEFAULT_API_VERSION`]):
//!   `{base}/openai/deployments/{deployment}/{operation}?api-version={version}` for chat
//!   completions, completions, embeddings, image generations and audio, where the deployment is
//!   the upstream model name (the channel's model mapping turns a model into a deployment); the
//!   Responses API at `{base}/openai/responses?api-version={version}` with the deployment as the
//!   body's `model` (Azure OpenAI REST reference, inference 2024-10-21:
//!   https://learn.microsoft.com/azure/ai-foundry/openai/reference).
//! - `other` = `v1`: the v1 API, `{base}/openai/v1/{operation}` with the deployment as the body's
//!   `model` and no api-version (https://learn.microsoft.com/azure/ai-foundry/openai/api-version-lifecycle).

use tollgate_actors::channel_pool::routing_table::RoutedChannel;

use super::Credential;
use crate::error::RelayError;
use crate::relay::wire::Wire;

/// The api-version of a channel whose `other` is empty: the GA inference version.
pub const DEFAULT_API_VERSION: &str = "2024-10-21";

/// Operations Azure serves under a deployment (the OpenAI path without `/v1`).
const DEPLOYMENT_OPERATIONS: &[&str] = &[
    "/chat/completions",
    "/completions",
    "/embeddings",
    "/images/generations",
    "/audio/speech",
    "/audio/transcriptions",
    "/audio/translations",
];

/// The Azure URL of OpenAI route `path` (`/v1/...`) for `deployment` on the resource at `base`,
/// with the channel's `other` choosing the API version; `None` when Azure has no such operation.
pub fn url(base: &str, other: &str, path: &str, deployment: &str) -> Option<String> {
    let operation = path.strip_prefix("/v1")?;
    let version = match other.trim() {
        "" => DEFAULT_API_VERSION,
        v => v,
    };
    if version.eq_ignore_ascii_case("v1") {
        let served = DEPLOYMENT_OPERATIONS.contains(&operation) || operation == "/responses";
        return served.then(|| format!("{base}/openai/v1{operation}"));
    }
    let version = super::segment(version);
    if operation == "/responses" {
        return Some(format!("{base}/openai/responses?api-version={version}"));
    }
    DEPLOYMENT_OPERATIONS.contains(&operation).then(|| {
        format!(
            "{base}/openai/deployments/{}{operation}?api-version={version}",
            super::segment(deployment)
        )
    })
}

/// The Azure OpenAI adaptor.
pub struct Azure;

impl super::Adaptor for Azure {
    fn name(&self) -> &'static str {
        "azure"
    }

    fn wire(&self, _channel_type: i32, _model: &str) -> Option<Wire> {
        Some(Wire::OpenAi)
    }

    fn openai_url(
        &self,
        channel: &RoutedChannel,
        base: &str,
        path: &str,
        model: &str,
    ) -> Option<String> {
        url(base, &channel.channel.other, path, model)
    }

    fn generate_url(
        &self,
        channel: &RoutedChannel,
        _credential: &Credential<'_>,
        wire: Wire,
        model: &str,
        _stream: bool,
    ) -> Option<String> {
        let path = if wire == Wire::Responses {
            "/v1/responses"
        } else {
            "/v1/chat/completions"
        };
        super::openai_url(channel, path, model)
    }

    fn gemini_url(&self, _channel: &RoutedChannel, _model: &str, _action: &str) -> Option<String> {
        None
    }

    fn authenticate(
        &self,
        req: reqwest::RequestBuilder,
        _organization: &str,
        _wire: Wire,
        credential: &Credential<'_>,
    ) -> Result<reqwest::RequestBuilder, RelayError> {
        Ok(req.header("api-key", credential.text()))
    }

    fn needs_base_url(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = "https://res.openai.azure.com";

    #[test]
    fn dated_versions_use_deployment_urls() {
        assert_eq!(
            url(BASE, "", "/v1/chat/completions", "gpt4o-prod").as_deref(),
            Some(
                "https://res.openai.azure.com/openai/deployments/gpt4o-prod/chat/completions?api-version=2024-10-21"
            )
        );
        assert_eq!(
            url(BASE, " 2025-04-01-preview ", "/v1/embeddings", "emb").as_deref(),
            Some(
                "https://res.openai.azure.com/openai/deployments/emb/embeddings?api-version=2025-04-01-preview"
            )
        );
        assert_eq!(
            url(BASE, "", "/v1/audio/transcriptions", "whisper").as_deref(),
            Some(
                "https://res.openai.azure.com/openai/deployments/whisper/audio/transcriptions?api-version=2024-10-21"
            )
        );
        assert_eq!(
            url(BASE, "2025-03-01-preview", "/v1/responses", "gpt4o").as_deref(),
            Some("https://res.openai.azure.com/openai/responses?api-version=2025-03-01-preview")
        );
        assert_eq!(url(BASE, "", "/v1/rerank", "x"), None);
        assert_eq!(url(BASE, "", "/v1/moderations", "x"), None);
    }

    #[test]
    fn v1_uses_the_openai_style_paths() {
        assert_eq!(
            url(BASE, "v1", "/v1/chat/completions", "dep").as_deref(),
            Some("https://res.openai.azure.com/openai/v1/chat/completions")
        );
        assert_eq!(
            url(BASE, "V1", "/v1/responses", "dep").as_deref(),
            Some("https://res.openai.azure.com/openai/v1/responses")
        );
        assert_eq!(url(BASE, "v1", "/v1/rerank", "dep"), None);
    }
}
