//! Calls to a provider: a time limit, JSON answers, and errors that name the step but never a
//! secret (no URLs with codes or tokens, no bodies).

use std::time::Duration;

use serde::de::DeserializeOwned;

use crate::error::{ConsoleError, ErrorCode};

/// How long one call to a provider may take.
pub const PROVIDER_TIMEOUT: Duration = Duration::from_secs(10);

/// Largest provider answer read, in bytes (discovery documents and key sets are small).
const MAX_ANSWER: usize = 256 * 1024;

/// Sends `req` and decodes a successful JSON answer; `step` names the call in errors.
pub async fn json<T: DeserializeOwned>(
    req: reqwest::RequestBuilder,
    provider: &str,
    step: &str,
) -> Result<T, ConsoleError> {
    let resp = req
        .timeout(PROVIDER_TIMEOUT)
        .header(reqwest::header::ACCEPT, "application/json")
        .send()
        .await
        .map_err(|e| {
            let why = if e.is_timeout() {
                "timed out"
            } else {
                "could not be reached"
            };
            ConsoleError::with_args(
                ErrorCode::ProviderFailed,
                [provider.to_string(), step.to_string(), why.to_string()],
            )
        })?;
    let status = resp.status();
    if !status.is_success() {
        return Err(ConsoleError::with_args(
            ErrorCode::ProviderHttpError,
            [
                provider.to_string(),
                step.to_string(),
                status.as_u16().to_string(),
            ],
        ));
    }
    let body = read_limited(resp).await.map_err(|()| {
        ConsoleError::with_args(
            ErrorCode::ProviderAnswerCut,
            [provider.to_string(), step.to_string()],
        )
    })?;
    // serde's message could quote a token from the answer: only the step is named.
    serde_json::from_slice(&body).map_err(|_| {
        ConsoleError::with_args(
            ErrorCode::ProviderUnexpectedAnswer,
            [provider.to_string(), step.to_string()],
        )
    })
}

async fn read_limited(mut resp: reqwest::Response) -> Result<Vec<u8>, ()> {
    let mut body = Vec::new();
    while let Some(chunk) = resp.chunk().await.map_err(|_| ())? {
        if body.len().saturating_add(chunk.len()) > MAX_ANSWER {
            return Err(());
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}
