//! The relay's intake: what a request must pass before and while its body is read.
//!
//! 1. **Before any body byte is read**, the caller is authenticated from the in-memory token
//!    index and user directory (the [`Caller`] extractor's checks: unknown, disabled or expired
//!    key, banned owner, IP list, pinned channel, group), and a caller with nothing available
//!    is refused with 403 (the quota book's read of the ledger, no reservation: a balance, or a
//!    limited key's remaining quota, at or below zero or all held by running requests). The
//!    free token counts are exempt from that last check. The playground is checked through its
//!    session instead. The caller is handed on to the handler (it is not looked up twice).
//! 2. **While it is read** ([`crate::relay::pipeline::body_read`]): every chunk is charged as it arrives to the
//!    bodies' shared memory budget (option `RelayBodyBudgetMB`, default 1024 MiB: 503 past it)
//!    and to the key's share of it (option `RelayBodyBudgetPerKeyMB`, default 128 MiB: 429
//!    past it); a body passing `--max-request-body-mb` (default 128 MiB, like new-api's
//!    MAX_REQUEST_BODY_MB) gets 413, at once when its Content-Length says so; a body slower
//!    than its deadline (`--body-read-timeout-secs`, default 60 s, and 64 KiB/s on average
//!    after the first 10 s) gets 408. The charge is given back when the request is answered,
//!    or at once when its read is cut.
//!
//! JSON bodies are read whole here and handed on as bytes; multipart uploads (the audio
//! routes) are streamed on through the same reader, and a fault of theirs replaces whatever
//! the handler answered. Errors are in the route's shape (Anthropic's on `/v1/messages`,
//! Gemini's on `/v1beta`, OpenAI's elsewhere).

use std::collections::HashMap;
use std::sync::Arc;

use axum::Router;
use axum::extract::{DefaultBodyLimit, FromRequestParts, MatchedPath, Request, State};
use axum::http::request::Parts;
use axum::http::{Method, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use tollgate_actors::quota::{QuotaError, Refusal};

use crate::error::RelayError;
use crate::http::api::{self, Access, Endpoint};
use crate::http::extract::Session;
use crate::relay::pipeline::auth::Caller;
use crate::relay::pipeline::body_budget::{Limits, Over, ShareKey};
use crate::relay::pipeline::body_read::{BodyFault, Metered};
use crate::state::AppState;

/// How a route's body is taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Intake {
    /// An API key's body, read whole.
    Whole,
    /// An API key's upload, streamed on.
    Stream,
    /// The playground's body (a console session), read whole.
    Session,
}

/// The relay's POST routes by matched path.
#[derive(Debug, Clone)]
struct Routes(Arc<HashMap<String, Intake>>);

/// Applies the intake to `routes` (the relay's, declared as `endpoints`).
pub fn apply(
    routes: Router<AppState>,
    state: &AppState,
    endpoints: &[Endpoint],
) -> Router<AppState> {
    let table: HashMap<String, Intake> = endpoints
        .iter()
        .filter(|e| e.method == api::Method::Post)
        .filter_map(|e| {
            let intake = match (e.access, e.body) {
                (Access::ApiKey, api::Body::Multipart) => Intake::Stream,
                (Access::ApiKey, _) => Intake::Whole,
                (Access::User, _) => Intake::Session,
                _ => return None,
            };
            Some((e.path.clone(), intake))
        })
        .collect();
    let routes_table = Routes(Arc::new(table));
    routes
        .route_layer(middleware::from_fn_with_state(
            (state.clone(), routes_table),
            check,
        ))
        .layer(DefaultBodyLimit::max(state.config.max_request_body()))
}

async fn check(
    State((state, routes)): State<(AppState, Routes)>,
    req: Request,
    next: Next,
) -> Response {
    let path = req.uri().path().to_owned();
    let intake = req
        .extensions()
        .get::<MatchedPath>()
        .and_then(|m| routes.0.get(m.as_str()).copied());
    let Some(intake) = intake.filter(|_| req.method() == Method::POST) else {
        // GETs (the model list) and the routes answered without a body.
        return next.run(req).await;
    };
    let (mut parts, body) = req.into_parts();
    let key = match gate(&mut parts, &state, intake).await {
        Ok(key) => key,
        Err(refused) => return refused,
    };
    let options = state.options.current();
    let mib = |value: i64| u64::try_from(value).unwrap_or(0).saturating_mul(1 << 20);
    let limits = Limits {
        global: mib(options.relay().body_budget_mb),
        per_key: mib(options.relay().body_budget_per_key_mb),
    };
    drop(options);
    let max = u64::try_from(state.config.max_request_body()).unwrap_or(u64::MAX);
    let announced = parts
        .headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if let Some(announced) = announced {
        let refused = if announced > max {
            Some(BodyFault::TooLarge)
        } else {
            limits.admits(announced).err().map(BodyFault::Over)
        };
        if let Some(fault) = refused {
            return shaped(&path, fault_error(fault, &state));
        }
    }
    let charge = state.body_budget.charge(key, limits);
    let reader = Metered::new(body, charge, max, state.config.body_read_limits());
    match intake {
        Intake::Whole | Intake::Session => match reader.read_all().await {
            Ok((bytes, charge)) => {
                let response = next
                    .run(Request::from_parts(parts, axum::body::Body::from(bytes)))
                    .await;
                // The body's share is held until the handler has answered.
                drop(charge);
                response
            }
            Err(fault) => shaped(&path, fault_error(fault, &state)),
        },
        Intake::Stream => {
            let cell = reader.fault_cell();
            let response = next
                .run(Request::from_parts(
                    parts,
                    axum::body::Body::from_stream(reader),
                ))
                .await;
            match cell.get() {
                Some(fault) => shaped(&path, fault_error(*fault, &state)),
                None => response,
            }
        }
    }
}

/// Authenticates the request and refuses a caller with nothing available, before the body is
/// read; returns whose share the body is charged to.
async fn gate(parts: &mut Parts, state: &AppState, intake: Intake) -> Result<ShareKey, Response> {
    let path = parts.uri.path().to_owned();
    if intake == Intake::Session {
        let session = Session::from_request_parts(parts, state)
            .await
            .map_err(IntoResponse::into_response)?;
        let user = session.user.id;
        available(state, user, None)
            .await
            .map_err(|e| shaped(&path, e))?;
        return Ok(ShareKey::User(user));
    }
    let caller = if path.starts_with("/v1beta/") {
        crate::relay::routes::gemini::GeminiCaller::from_request_parts(parts, state)
            .await
            .map_or_else(|never| match never {}, |c| c.0)
    } else {
        Caller::from_request_parts(parts, state).await
    };
    let caller = caller.map_err(|e| shaped(&path, e))?;
    if !is_free_count(&path) {
        available(state, caller.user.id, Some(caller.token.id))
            .await
            .map_err(|e| shaped(&path, e))?;
    }
    let key = ShareKey::Token(caller.token.id);
    parts.extensions.insert(caller);
    Ok(key)
}

/// The free token counts (`count_tokens`, `:countTokens`): no balance needed.
fn is_free_count(path: &str) -> bool {
    path == "/v1/messages/count_tokens" || path.ends_with(":countTokens")
}

/// Refuses a user (or a limited key) with nothing available now.
async fn available(
    state: &AppState,
    user: tollgate_storage::UserId,
    token: Option<tollgate_storage::TokenId>,
) -> Result<(), RelayError> {
    match state.quota.check_available(user, token).await {
        Ok(()) => Ok(()),
        Err(QuotaError::Refused(Refusal::TokenQuota { available, .. })) => {
            Err(RelayError::InsufficientTokenQuota(format!(
                "insufficient token quota: {available} available on this API key"
            )))
        }
        Err(QuotaError::Refused(Refusal::Budget {
            key,
            state,
            reserved,
            retry_after,
        })) => Err(crate::relay::pipeline::budget::reached(
            key,
            &state,
            reserved,
            retry_after,
        )),
        Err(QuotaError::Refused(refusal)) => {
            let available = match refusal {
                Refusal::UserQuota { available, .. } => available,
                _ => 0,
            };
            Err(RelayError::InsufficientUserQuota(format!(
                "insufficient user quota: {available} available"
            )))
        }
        // Never: this check runs no rate limit.
        Err(QuotaError::Limited(refusal)) => Err(crate::rate_limit::refused(&refusal)),
        Err(QuotaError::Storage(e)) => Err(RelayError::Internal(format!(
            "loading the caller's balance: {e}"
        ))),
    }
}

/// The error a cut read is answered with.
fn fault_error(fault: BodyFault, state: &AppState) -> RelayError {
    match fault {
        BodyFault::TooLarge => RelayError::BodyTooLarge(state.config.max_request_body_mb),
        BodyFault::Timeout => RelayError::BodyTimeout(format!(
            "the request body did not arrive in time (within {:.1} s, and at least 64 KiB/s after \
             the first 10 s)",
            state.config.body_read_limits().total.as_secs_f64()
        )),
        BodyFault::Over(Over::Global) => RelayError::Busy(
            "the gateway is handling too many large requests right now; retry shortly".into(),
        ),
        BodyFault::Over(Over::Key) => RelayError::BodyShare(
            "this API key is sending more request bodies at once than its share \
             (RelayBodyBudgetPerKeyMB); retry when they are done"
                .into(),
        ),
        BodyFault::Client => RelayError::BadRequest("the request body could not be read".into()),
    }
}

/// `error` in the shape of the route at `path`.
fn shaped(path: &str, error: RelayError) -> Response {
    if path.starts_with("/v1/messages") {
        crate::relay::routes::messages::error_response(error)
    } else if path.starts_with("/v1beta/") {
        crate::relay::routes::gemini::error_response(error)
    } else {
        error.into_response()
    }
}
