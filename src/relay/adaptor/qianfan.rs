//! Baidu Qianfan v2 (46): OpenAI's chat completions under `{base}/v2`, authenticated with the
//! Qianfan API key as the bearer token and, optionally, the application's id in the `appid`
//! header (<https://cloud.baidu.com/doc/qianfan-api/s/ym9chdsy5>). A key line is `APIKey` or
//! `APIKey|AppID`.

use super::{Adaptor, Credential, Direct};
use crate::error::RelayError;
use crate::relay::wire::Wire;

/// The Qianfan v2 adaptor: the direct transport with the key line split into the bearer key
/// and the `appid` header.
pub struct QianfanV2;

impl Adaptor for QianfanV2 {
    fn name(&self) -> &'static str {
        "qianfan_v2"
    }

    fn authenticate(
        &self,
        req: reqwest::RequestBuilder,
        organization: &str,
        wire: Wire,
        credential: &Credential<'_>,
    ) -> Result<reqwest::RequestBuilder, RelayError> {
        match credential {
            Credential::Key(line) => {
                let (key, app) = split(line);
                let req = req.bearer_auth(key);
                Ok(match app {
                    Some(app) => req.header("appid", app),
                    None => req,
                })
            }
            other => Direct.authenticate(req, organization, wire, other),
        }
    }

    fn gemini_url(
        &self,
        _channel: &tollgate_actors::channel_pool::routing_table::RoutedChannel,
        _model: &str,
        _action: &str,
    ) -> Option<String> {
        None
    }
}

/// The bearer key and the app id of a key line.
pub fn split(key: &str) -> (&str, Option<&str>) {
    match key.split_once('|') {
        Some((key, app)) if !app.trim().is_empty() => (key.trim(), Some(app.trim())),
        Some((key, _)) => (key.trim(), None),
        None => (key.trim(), None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_line_is_the_api_key_and_an_optional_app_id() {
        assert_eq!(split("bce-v3/ALTAK-x/y"), ("bce-v3/ALTAK-x/y", None));
        assert_eq!(
            split("bce-v3/ALTAK-x/y|app-42"),
            ("bce-v3/ALTAK-x/y", Some("app-42"))
        );
        assert_eq!(split("k| "), ("k", None));
    }
}
