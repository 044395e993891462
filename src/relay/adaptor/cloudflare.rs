//! Cloudflare Workers AI (39): OpenAI's chat completions and embeddings under the account's
//! path, `{base}/client/v4/accounts/{account_id}/ai/v1/…`, with an API token as the bearer key
//! (<https://developers.cloudflare.com/workers-ai/configuration/open-ai-compatibility/>). The
//! account id is the channel's `other` (as the incumbent keeps it, reference §4.7).

use tollgate_actors::channel_pool::routing_table::RoutedChannel;

use super::{Adaptor, Credential, segment};
use crate::channel_types::effective_base_url;
use crate::relay::wire::Wire;

/// The URL of OpenAI route `path` (`/v1/chat/completions`, `/v1/embeddings`) for the account
/// `account` at `base`; `None` when the account id is missing or the path is not under `/v1`.
pub fn url(base: &str, account: &str, path: &str) -> Option<String> {
    let account = account.trim();
    if account.is_empty() {
        return None;
    }
    let rest = path.strip_prefix("/v1")?;
    Some(format!(
        "{base}/client/v4/accounts/{}/ai/v1{rest}",
        segment(account)
    ))
}

/// The Workers AI adaptor: the direct transport with the account's URLs.
pub struct Cloudflare;

impl Adaptor for Cloudflare {
    fn name(&self) -> &'static str {
        "cloudflare"
    }

    fn openai_url(
        &self,
        channel: &RoutedChannel,
        base: &str,
        path: &str,
        _model: &str,
    ) -> Option<String> {
        url(base, &channel.channel.other, path)
    }

    fn generate_url(
        &self,
        channel: &RoutedChannel,
        _credential: &Credential<'_>,
        wire: Wire,
        _model: &str,
        _stream: bool,
    ) -> Option<String> {
        let c = &channel.channel;
        let base = effective_base_url(c.channel_type, &c.base_url);
        (wire == Wire::OpenAi)
            .then(|| url(&base, &c.other, "/v1/chat/completions"))
            .flatten()
    }

    fn gemini_url(&self, _channel: &RoutedChannel, _model: &str, _action: &str) -> Option<String> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_live_under_the_accounts_ai_path() {
        assert_eq!(
            url(
                "https://api.cloudflare.com",
                "023e105f4ecef8ad9ca31a8372d0c353",
                "/v1/chat/completions"
            )
            .as_deref(),
            Some(
                "https://api.cloudflare.com/client/v4/accounts/023e105f4ecef8ad9ca31a8372d0c353/ai/v1/chat/completions"
            )
        );
        assert_eq!(
            url("http://127.0.0.1:9", " acc ", "/v1/embeddings").as_deref(),
            Some("http://127.0.0.1:9/client/v4/accounts/acc/ai/v1/embeddings")
        );
        // An account id cannot change the path.
        assert_eq!(
            url("http://h", "a/../b", "/v1/embeddings").as_deref(),
            Some("http://h/client/v4/accounts/a%2F..%2Fb/ai/v1/embeddings")
        );
        assert_eq!(url("http://h", "", "/v1/embeddings"), None);
    }
}
