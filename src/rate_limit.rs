//! The relay's use of the rate-limit engine ([`tollgate_actors::limiter`], P15 item 1): before
//! the quota reservation, a request counts on its user's, its key's and every covering
//! `RateLimitRules` rule's counters, waiting in a rule's queue when it has one, or is refused
//! with a 429 naming the rule ([`RelayError::Limited`], `Retry-After`). The admission is held
//! until the forward is done; its `x-ratelimit-*` values go on the answer.
//!
//! Not yet: channels' and channel keys' limits at the pick (the engine has
//! [`Limiter::admit_channel`](tollgate_actors::limiter::Limiter::admit_channel)), the token
//! correction at settlement and holding a stream's place until its last byte.

use axum::http::{HeaderName, HeaderValue};
use axum::response::Response;
use tollgate_actors::limiter::{self, Admission};

use crate::error::RelayError;
use crate::relay::pipeline::admission::Ask;
use crate::relay::pipeline::auth::Caller;
use crate::state::AppState;

/// Admits `ask` of `caller` under the rate limits, or refuses it naming the rule.
pub async fn admit(
    state: &AppState,
    caller: &Caller,
    ask: &Ask<'_>,
) -> Result<Admission, RelayError> {
    let output = ask
        .max_tokens
        .unwrap_or(0)
        .max(0)
        .saturating_mul(ask.answers.max(1));
    let tokens = u64::try_from(ask.prompt_estimate.max(0).saturating_add(output)).unwrap_or(0);
    let options = state.options.current();
    let limits = limiter::Ask {
        user: caller.user.id,
        token: (!caller.playground).then_some(caller.token.id),
        group: &caller.group,
        model: ask.model,
        tokens,
    };
    state
        .limits
        .admit_queued(&limits, options.limit_rules())
        .await
        .map_err(|refusal| RelayError::Limited {
            message: refusal.to_string(),
            retry_after: refusal.retry_after_secs(),
            kind: refusal.kind.as_str(),
        })
}

/// Puts the strictest rules' `x-ratelimit-*` values on `response`.
pub fn add_headers(response: &mut Response, headers: &[(&'static str, String)]) {
    for (name, value) in headers {
        if let Ok(value) = HeaderValue::from_str(value) {
            response
                .headers_mut()
                .insert(HeaderName::from_static(name), value);
        }
    }
}
