//! LinuxDO Connect (OAuth 2 authorization-code flow: `/oauth2/authorize`, `/oauth2/token`,
//! `/api/user`). Accounts below `LinuxDOMinimumTrustLevel`, inactive or silenced are refused.
//! LinuxDO gives no email.

use serde::Deserialize;
use tollgate_storage::users::Provider;

use super::fetch;
use super::link::Identity;
use super::state::Pending;
use crate::error::{ConsoleError, ErrorCode};
use crate::state::AppState;

/// Name used in messages.
const NAME: &str = "LinuxDO";

/// The configured LinuxDO application.
#[derive(Debug, Clone)]
pub struct LinuxDo {
    client_id: String,
    client_secret: String,
    base: String,
    min_trust_level: i64,
}

/// Reads the options and the configured base URL.
pub fn provider(state: &AppState) -> Result<LinuxDo, ConsoleError> {
    let options = state.options.current();
    if !options.flag("LinuxDOOAuthEnabled") {
        return Err(ConsoleError::of(ErrorCode::LinuxdoDisabled));
    }
    if options.text("LinuxDOClientId").is_empty() {
        return Err(ConsoleError::of(ErrorCode::LinuxdoNotConfigured));
    }
    Ok(LinuxDo {
        client_id: options.text("LinuxDOClientId").to_owned(),
        client_secret: options.text("LinuxDOClientSecret").to_owned(),
        base: state.config.linuxdo_url.trim_end_matches('/').to_owned(),
        min_trust_level: options.int("LinuxDOMinimumTrustLevel"),
    })
}

#[derive(Deserialize)]
struct TokenAnswer {
    #[serde(default)]
    access_token: String,
}

#[derive(Deserialize)]
struct UserAnswer {
    id: i64,
    #[serde(default)]
    username: String,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    trust_level: i64,
    #[serde(default = "yes")]
    active: bool,
    #[serde(default)]
    silenced: bool,
}

fn yes() -> bool {
    true
}

impl LinuxDo {
    /// Where the browser is sent to sign in.
    pub fn authorize_url(&self, pending: &Pending) -> Result<String, ConsoleError> {
        let mut url = reqwest::Url::parse(&format!("{}/oauth2/authorize", self.base))
            .map_err(|_| ConsoleError::Internal("the LinuxDO base URL is not valid".into()))?;
        url.query_pairs_mut()
            .append_pair("response_type", "code")
            .append_pair("client_id", &self.client_id)
            .append_pair("redirect_uri", &pending.redirect_uri)
            .append_pair("scope", "user")
            .append_pair("state", &pending.state);
        Ok(url.into())
    }

    /// Exchanges `code`, reads the account and applies the trust level rule.
    pub async fn identity(
        &self,
        state: &AppState,
        pending: &Pending,
        code: &str,
    ) -> Result<Identity, ConsoleError> {
        let http = state.http.direct();
        let form = [
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", pending.redirect_uri.as_str()),
        ];
        let token: TokenAnswer = fetch::json(
            http.post(format!("{}/oauth2/token", self.base))
                .basic_auth(&self.client_id, Some(&self.client_secret))
                .form(&form),
            NAME,
            "token request",
        )
        .await?;
        if token.access_token.is_empty() {
            return Err(ConsoleError::of(ErrorCode::LinuxdoRefused));
        }
        let user: UserAnswer = fetch::json(
            http.get(format!("{}/api/user", self.base))
                .bearer_auth(&token.access_token),
            NAME,
            "user request",
        )
        .await?;
        if !user.active || user.silenced {
            return Err(ConsoleError::of(ErrorCode::LinuxdoAccountInactive));
        }
        if user.trust_level < self.min_trust_level {
            return Err(ConsoleError::with_args(
                ErrorCode::LinuxdoTrustLevel,
                [
                    self.min_trust_level.to_string(),
                    user.trust_level.to_string(),
                ],
            ));
        }
        Ok(Identity {
            provider: Provider::LinuxDo,
            external_id: user.id.to_string(),
            username: user.username,
            display_name: user.name.unwrap_or_default(),
            verified_email: None,
        })
    }
}
