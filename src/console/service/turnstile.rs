//! The Turnstile bot check: when `TurnstileCheckEnabled`, the `?turnstile=` token is verified
//! server-side against the verify endpoint (`--turnstile-verify-url`).

use std::net::IpAddr;

use serde::Deserialize;

use crate::error::{ConsoleError, ErrorCode};
use crate::state::AppState;

/// The `?turnstile=` query parameter.
#[derive(Debug, Default, Deserialize)]
pub struct TurnstileQuery {
    /// Token produced by the widget in the browser.
    #[serde(default)]
    pub turnstile: String,
}

#[derive(Deserialize)]
struct VerifyAnswer {
    success: bool,
}

/// Passes when the check is off or the token verifies.
pub async fn check(state: &AppState, token: &str, ip: IpAddr) -> Result<(), ConsoleError> {
    let options = state.options.current();
    if !options.flag("TurnstileCheckEnabled") {
        return Ok(());
    }
    if token.is_empty() {
        return Err(ConsoleError::of(ErrorCode::TurnstileRunning));
    }
    let form = [
        ("secret", options.text("TurnstileSecretKey")),
        ("response", token),
        ("remoteip", &ip.to_string()),
    ];
    let answer = state
        .http
        .direct()
        .post(&state.config.turnstile_verify_url)
        .form(&form)
        .timeout(std::time::Duration::from_secs(10))
        .send()
        .await
        .and_then(reqwest::Response::error_for_status);
    let verified = match answer {
        Ok(resp) => resp.json::<VerifyAnswer>().await.is_ok_and(|a| a.success),
        Err(e) => {
            tracing::warn!(error = %e, "Turnstile verification request failed");
            false
        }
    };
    if verified {
        Ok(())
    } else {
        Err(ConsoleError::TurnstileFailed)
    }
}
