//! GitHub (OAuth app, authorization-code flow with PKCE). The identity is the numeric account
//! id (a login name can be renamed and then taken by someone else). The email is the primary
//! one when GitHub marks it verified.

use serde::Deserialize;
use tollgate_storage::users::Provider;

use super::fetch;
use super::link::Identity;
use super::state::Pending;
use crate::error::{ConsoleError, ErrorCode};
use crate::state::AppState;

/// Name used in messages.
const NAME: &str = "GitHub";

/// The configured GitHub OAuth app.
#[derive(Debug, Clone)]
pub struct GitHub {
    client_id: String,
    client_secret: String,
    /// `https://github.com` (authorization and token).
    web: String,
    /// `https://api.github.com` (the user).
    api: String,
}

/// Reads the options and the configured base URLs.
pub fn provider(state: &AppState) -> Result<GitHub, ConsoleError> {
    let options = state.options.current();
    if !options.flag("GitHubOAuthEnabled") {
        return Err(ConsoleError::of(ErrorCode::GithubDisabled));
    }
    if options.text("GitHubClientId").is_empty() {
        return Err(ConsoleError::of(ErrorCode::GithubNotConfigured));
    }
    Ok(GitHub {
        client_id: options.text("GitHubClientId").to_owned(),
        client_secret: options.text("GitHubClientSecret").to_owned(),
        web: state.config.github_url.trim_end_matches('/').to_owned(),
        api: state.config.github_api_url.trim_end_matches('/').to_owned(),
    })
}

#[derive(Deserialize)]
struct TokenAnswer {
    #[serde(default)]
    access_token: String,
    #[serde(default)]
    error: String,
}

#[derive(Deserialize)]
struct UserAnswer {
    id: i64,
    #[serde(default)]
    login: String,
    #[serde(default)]
    name: Option<String>,
    /// When the account was made (`2011-01-25T18:44:36Z`).
    #[serde(default)]
    created_at: Option<String>,
}

#[derive(Deserialize)]
struct EmailAnswer {
    email: String,
    #[serde(default)]
    primary: bool,
    #[serde(default)]
    verified: bool,
}

impl GitHub {
    /// Where the browser is sent to sign in.
    pub fn authorize_url(&self, pending: &Pending) -> Result<String, ConsoleError> {
        let mut url = reqwest::Url::parse(&format!("{}/login/oauth/authorize", self.web))
            .map_err(|_| ConsoleError::Internal("the GitHub base URL is not valid".into()))?;
        url.query_pairs_mut()
            .append_pair("client_id", &self.client_id)
            .append_pair("redirect_uri", &pending.redirect_uri)
            .append_pair("scope", "read:user user:email")
            .append_pair("state", &pending.state)
            .append_pair("code_challenge", &pending.code_challenge())
            .append_pair("code_challenge_method", "S256");
        Ok(url.into())
    }

    /// Exchanges `code` and reads the account.
    pub async fn identity(
        &self,
        state: &AppState,
        pending: &Pending,
        code: &str,
    ) -> Result<Identity, ConsoleError> {
        let http = state.http.direct();
        let form = [
            ("client_id", self.client_id.as_str()),
            ("client_secret", self.client_secret.as_str()),
            ("code", code),
            ("redirect_uri", pending.redirect_uri.as_str()),
            ("code_verifier", pending.verifier.as_str()),
        ];
        let token: TokenAnswer = fetch::json(
            http.post(format!("{}/login/oauth/access_token", self.web))
                .form(&form),
            NAME,
            "token request",
        )
        .await?;
        // GitHub answers a bad code with 200 and an `error` field.
        if token.access_token.is_empty() {
            return Err(ConsoleError::with_args(
                ErrorCode::GithubRefused,
                [if token.error.is_empty() {
                    "no access token"
                } else {
                    token.error.as_str()
                }
                .to_string()],
            ));
        }
        let user: UserAnswer = fetch::json(
            http.get(format!("{}/user", self.api))
                .bearer_auth(&token.access_token)
                .header("X-GitHub-Api-Version", "2022-11-28"),
            NAME,
            "user request",
        )
        .await?;
        // Without the email scope this fails: the account is then made without an email.
        let emails: Vec<EmailAnswer> = fetch::json(
            http.get(format!("{}/user/emails", self.api))
                .bearer_auth(&token.access_token)
                .header("X-GitHub-Api-Version", "2022-11-28"),
            NAME,
            "email request",
        )
        .await
        .unwrap_or_default();
        claim_imported_login(state, &user).await?;
        Ok(Identity {
            provider: Provider::GitHub,
            external_id: user.id.to_string(),
            username: user.login,
            display_name: user.name.unwrap_or_default(),
            verified_email: emails
                .into_iter()
                .find(|e| e.primary && e.verified)
                .map(|e| e.email),
        })
    }
}

/// An installation imported from new-api may hold a GitHub login instead of the numeric id for
/// a user ([`tollgate_storage::import::claim_github_login`]): this account takes that binding
/// when its login matches and GitHub made it before the import.
async fn claim_imported_login(state: &AppState, user: &UserAnswer) -> Result<(), ConsoleError> {
    let Some(created) = user.created_at.as_deref().and_then(unix_seconds) else {
        return Ok(());
    };
    let (store, login, id) = (state.store.clone(), user.login.clone(), user.id.to_string());
    let claimed = tokio::task::spawn_blocking(move || {
        tollgate_storage::import::claim_github_login(&store, &login, &id, created)
    })
    .await
    .map_err(|e| ConsoleError::Internal(e.to_string()))??;
    if claimed {
        tracing::info!(
            github_id = user.id,
            "an imported GitHub login binding was claimed"
        );
    }
    Ok(())
}

/// Unix seconds of an RFC 3339 UTC time as GitHub writes it (`2011-01-25T18:44:36Z`).
fn unix_seconds(text: &str) -> Option<i64> {
    let b = text.as_bytes();
    if b.len() != 20 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || b[19] != b'Z' {
        return None;
    }
    let num = |range: std::ops::Range<usize>| text.get(range)?.parse::<i64>().ok();
    let (y, m, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hh, mm, ss) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) || hh > 23 || mm > 59 || ss > 60 {
        return None;
    }
    // Days from the civil date (Howard Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(days * 86_400 + hh * 3600 + mm * 60 + ss)
}

#[cfg(test)]
mod tests {
    #[test]
    fn github_times_read_as_unix_seconds() {
        assert_eq!(super::unix_seconds("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(
            super::unix_seconds("2011-01-25T18:44:36Z"),
            Some(1_295_981_076)
        );
        assert_eq!(super::unix_seconds("2011-01-25 18:44:36"), None);
    }
}
