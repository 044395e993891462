//! The two error types at the HTTP boundary and their one mapping each to a wire shape:
//! [`ConsoleError`] → `{success:false, message, code, detail?, args?}` (`code` the general code,
//! `detail` and `args` the refusal's specific code and its arguments, see [`ErrorCode`]) and
//! [`RelayError`] → `{"error":{"message","type","code"}}` (OpenAI's shape).
//!
//! Internal errors answer a generic message; the cause is logged once, here, at `error` level.
//! Client mistakes (4xx) are logged at `debug`.

pub mod codes;

use axum::Json;
use axum::response::{IntoResponse, Response};
use serde_json::json;
use tollgate_actors::ActorError;
use tollgate_actors::options::OptionError;
use tollgate_actors::options::limit_rules::{self, RuleError};
use tollgate_storage::StorageError;
use tollgate_storage::limits::LimitsError;

pub use codes::ErrorCode;

/// A failure of a console (`/api/*`) request.
#[derive(Debug, thiserror::Error)]
pub enum ConsoleError {
    /// A refusal with its own specific code; the message is the code's English text with
    /// `args` in its places.
    #[error("{}", code.render(args))]
    Coded {
        /// The specific code (its general code decides the status).
        code: ErrorCode,
        /// What stands in the text's `{}` places, in order.
        args: Vec<String>,
    },
    /// Not logged in, or the session is no longer valid.
    #[error("not logged in or the session has expired, please log in again")]
    NotLoggedIn,
    /// The user's role is too low for this action.
    #[error("insufficient privileges")]
    Forbidden,
    /// Too many requests from this address.
    #[error("too many requests, please try again later")]
    TooManyRequests,
    /// The bot check failed.
    #[error("Turnstile verification failed, please refresh and try again")]
    TurnstileFailed,
    /// The third-party identity is bound to another account already.
    #[error("{}", ErrorCode::IdentityBoundElsewhere.render(&[.0.to_string()]))]
    AlreadyBound(&'static str),
    /// Too many wrong second-factor codes for this account within an hour: every code is
    /// refused for a while.
    #[error("{}", ErrorCode::TwoFactorLockedFor.render(&[minutes.to_string()]))]
    TwoFactorLocked {
        /// Minutes until the lock ends (rounded up).
        minutes: i64,
    },
    /// Several wrong second-factor codes in a row: the next one must wait.
    #[error("{}", ErrorCode::TwoFactorWaitFor.render(&[seconds.to_string()]))]
    TwoFactorWait {
        /// Seconds to wait.
        seconds: i64,
    },
    /// The system access token is unknown.
    #[error("invalid access token")]
    InvalidAccessToken,
    /// The user is banned.
    #[error("this user has been banned")]
    UserDisabled,
    /// Wrong username or password (never says which).
    #[error("wrong username or password, or the user has been banned")]
    BadCredentials,
    /// Password login is switched off by the admin.
    #[error("the administrator has turned off password login")]
    PasswordLoginDisabled,
    /// Setup ran already.
    #[error("the system is already initialized")]
    AlreadyInitialized,
    /// The redemption code does not exist or is disabled (not told apart).
    #[error("invalid redemption code")]
    RedemptionInvalid,
    /// The redemption code was redeemed already.
    #[error("this redemption code has already been used")]
    RedemptionUsed,
    /// No such record.
    #[error("{0} not found")]
    NotFound(&'static str),
    /// A unique value is taken.
    #[error("{0} already exists")]
    Conflict(&'static str),
    /// An upstream provider (or proxy) failed; the message says how (never with a key; text
    /// from the HTTP client).
    #[error("{0}")]
    Upstream(String),
    /// Storage failed (internal).
    #[error("internal storage error")]
    Storage(#[source] StorageError),
    /// Anything else on our side (internal).
    #[error("internal error")]
    Internal(String),
}

impl ConsoleError {
    /// A refusal with a specific code whose text has no arguments.
    pub const fn of(code: ErrorCode) -> ConsoleError {
        ConsoleError::Coded {
            code,
            args: Vec::new(),
        }
    }

    /// A refusal with a specific code and the arguments of its text.
    pub fn with_args<const N: usize>(code: ErrorCode, args: [String; N]) -> ConsoleError {
        ConsoleError::Coded {
            code,
            args: args.into(),
        }
    }

    /// The specific code of this error and its text's arguments, when it has one.
    pub fn detail(&self) -> Option<(ErrorCode, Vec<String>)> {
        match self {
            ConsoleError::Coded { code, args } => Some((*code, args.clone())),
            ConsoleError::TwoFactorLocked { minutes } => {
                Some((ErrorCode::TwoFactorLockedFor, vec![minutes.to_string()]))
            }
            ConsoleError::TwoFactorWait { seconds } => {
                Some((ErrorCode::TwoFactorWaitFor, vec![seconds.to_string()]))
            }
            ConsoleError::AlreadyBound(provider) => Some((
                ErrorCode::IdentityBoundElsewhere,
                vec![(*provider).to_owned()],
            )),
            ConsoleError::NotFound(what) => not_found_code(what).map(|c| (c, Vec::new())),
            ConsoleError::Conflict(what) => taken_code(what).map(|c| (c, Vec::new())),
            _ => None,
        }
    }

    /// The general code of this error in the [`ErrorCode`] table (it decides the status).
    pub fn code(&self) -> ErrorCode {
        match self {
            ConsoleError::Coded { code, .. } => code.general(),
            ConsoleError::NotLoggedIn => ErrorCode::NotLoggedIn,
            ConsoleError::Forbidden => ErrorCode::Forbidden,
            ConsoleError::TooManyRequests => ErrorCode::TooManyRequests,
            ConsoleError::TurnstileFailed => ErrorCode::TurnstileFailed,
            ConsoleError::AlreadyBound(_) => ErrorCode::Conflict,
            ConsoleError::TwoFactorLocked { .. } => ErrorCode::TwoFactorLocked,
            ConsoleError::TwoFactorWait { .. } => ErrorCode::TwoFactorWait,
            ConsoleError::InvalidAccessToken => ErrorCode::NotLoggedIn,
            ConsoleError::UserDisabled => ErrorCode::UserDisabled,
            ConsoleError::BadCredentials => ErrorCode::BadCredentials,
            ConsoleError::PasswordLoginDisabled => ErrorCode::PasswordLoginDisabled,
            ConsoleError::AlreadyInitialized => ErrorCode::AlreadyInitialized,
            ConsoleError::RedemptionInvalid => ErrorCode::RedemptionInvalid,
            ConsoleError::RedemptionUsed => ErrorCode::RedemptionUsed,
            ConsoleError::NotFound(_) => ErrorCode::NotFound,
            ConsoleError::Conflict(_) => ErrorCode::Conflict,
            ConsoleError::Upstream(_) => ErrorCode::UpstreamFailed,
            ConsoleError::Storage(_) | ConsoleError::Internal(_) => ErrorCode::Internal,
        }
    }
}

impl From<StorageError> for ConsoleError {
    fn from(e: StorageError) -> Self {
        match e {
            StorageError::Duplicate { what } => ConsoleError::Conflict(what),
            StorageError::NotFound { what } => ConsoleError::NotFound(what),
            other => ConsoleError::Storage(other),
        }
    }
}

/// The specific code of "{what} not found", for the records the console names.
fn not_found_code(what: &str) -> Option<ErrorCode> {
    Some(match what {
        "channel" => ErrorCode::ChannelNotFound,
        "user" => ErrorCode::UserNotFound,
        "redemption code" => ErrorCode::RedemptionNotFound,
        "token" => ErrorCode::TokenNotFound,
        "sign-in provider" => ErrorCode::ProviderNotFound,
        "route" => ErrorCode::RouteNotFound,
        "order" => ErrorCode::OrderNotFound,
        "log" => ErrorCode::LogNotFound,
        "task" => ErrorCode::TaskNotFound,
        "backup token" => ErrorCode::BackupTokenNotFound,
        _ => return None,
    })
}

/// The specific code of "{what} already exists", for the values the console names.
fn taken_code(what: &str) -> Option<ErrorCode> {
    Some(match what {
        "username" => ErrorCode::UsernameTaken,
        "email" => ErrorCode::EmailTaken,
        "token key" => ErrorCode::TokenKeyTaken,
        "identity" => ErrorCode::IdentityTaken,
        _ => return None,
    })
}

impl From<OptionError> for ConsoleError {
    fn from(e: OptionError) -> Self {
        let key = |k: &str| k.to_owned();
        match e {
            OptionError::UnknownKey(k) => ConsoleError::with_args(ErrorCode::OptionUnknown, [k]),
            OptionError::NotBool(k) => ConsoleError::with_args(ErrorCode::OptionNotBool, [key(k)]),
            OptionError::NotInteger(k) => {
                ConsoleError::with_args(ErrorCode::NotAnInteger, [key(k)])
            }
            OptionError::NotNumber(k) => {
                ConsoleError::with_args(ErrorCode::OptionNotNumber, [key(k)])
            }
            OptionError::TooSmall { key: k, min } => {
                ConsoleError::with_args(ErrorCode::OptionTooSmall, [key(k), min])
            }
            OptionError::TooLarge { key: k, max } => {
                ConsoleError::with_args(ErrorCode::OptionTooLarge, [key(k), max])
            }
            OptionError::NotJson(k) => ConsoleError::with_args(ErrorCode::OptionNotJson, [key(k)]),
            OptionError::NotZone(k) => ConsoleError::with_args(ErrorCode::OptionNotZone, [key(k)]),
            OptionError::NotHttpUrl(k) => {
                ConsoleError::with_args(ErrorCode::OptionNotHttp, [key(k)])
            }
            OptionError::RefusedScheme { key: k, scheme } => {
                ConsoleError::with_args(ErrorCode::OptionRefusedScheme, [key(k), key(scheme)])
            }
            OptionError::BadShape { key: k, reason } => {
                ConsoleError::with_args(ErrorCode::OptionBadShape, [key(k), reason])
            }
            OptionError::LimitRule(e) => e.into(),
        }
    }
}

impl From<RuleError> for ConsoleError {
    fn from(e: RuleError) -> Self {
        let n = |i: usize| i.to_string();
        match e {
            RuleError::Shape(reason) => {
                ConsoleError::with_args(ErrorCode::LimitRuleShape, [reason])
            }
            RuleError::TooMany => {
                ConsoleError::with_args(ErrorCode::LimitRuleTooMany, [n(limit_rules::MAX_RULES)])
            }
            RuleError::NoTarget(i) => ConsoleError::with_args(ErrorCode::LimitRuleNoTarget, [n(i)]),
            RuleError::NoLimit(i) => ConsoleError::with_args(ErrorCode::LimitRuleNoLimit, [n(i)]),
            RuleError::Duplicate(i, j) => {
                ConsoleError::with_args(ErrorCode::LimitRuleDuplicate, [n(i), n(j)])
            }
            RuleError::Queue(i) => ConsoleError::with_args(
                ErrorCode::LimitRuleQueue,
                [
                    n(i),
                    limit_rules::MAX_QUEUE.to_string(),
                    limit_rules::MAX_QUEUE_WAIT_MS.to_string(),
                ],
            ),
        }
    }
}

impl From<LimitsError> for ConsoleError {
    fn from(e: LimitsError) -> Self {
        match e {
            LimitsError::KeyLimitsNotChannel => ConsoleError::of(ErrorCode::LimitKeyNotChannel),
            LimitsError::KeyTwice(i) => {
                ConsoleError::with_args(ErrorCode::LimitKeyTwice, [i.to_string()])
            }
            LimitsError::TooManyKeys => ConsoleError::with_args(
                ErrorCode::LimitKeyTooMany,
                [tollgate_storage::limits::MAX_KEY_LIMITS.to_string()],
            ),
        }
    }
}

impl From<ActorError> for ConsoleError {
    fn from(e: ActorError) -> Self {
        match e {
            ActorError::Storage(s) => s.into(),
            ActorError::Option(o) => o.into(),
            ActorError::Rpc(m) | ActorError::Spawn(m) => ConsoleError::Internal(m),
        }
    }
}

impl IntoResponse for ConsoleError {
    fn into_response(self) -> Response {
        let general = self.code();
        if general == ErrorCode::Internal {
            tracing::error!(error = ?self, "console request failed");
        } else {
            tracing::debug!(error = %self, "console request refused");
        }
        let mut body =
            json!({ "success": false, "message": self.to_string(), "code": general.as_str() });
        // The refusal's specific code, so that the console can say it in the reader's language;
        // internal errors keep their generic message and code.
        if let Some((detail, args)) = self.detail().filter(|_| general != ErrorCode::Internal) {
            body["detail"] = json!(detail.as_str());
            if !args.is_empty() {
                body["args"] = json!(args);
            }
        }
        (general.status(), Json(body)).into_response()
    }
}

/// A failure of a relay (`/v1/*`) request, answered in OpenAI's error shape.
#[derive(Debug, thiserror::Error)]
pub enum RelayError {
    /// No route at this path.
    #[error("Invalid URL ({method} {path})")]
    UnknownRoute {
        /// Request method.
        method: String,
        /// Request path.
        path: String,
    },
    /// An OpenAI route Tollgate does not implement.
    #[error("{0} is not supported by this gateway")]
    NotImplemented(String),
    /// The body is not valid or lacks what the route needs.
    #[error("{0}")]
    BadRequest(String),
    /// No API key was sent.
    #[error("no API key provided; send it as `Authorization: Bearer sk-...`")]
    MissingKey,
    /// The key is unknown, disabled, expired or exhausted; the message says which.
    #[error("{0}")]
    InvalidKey(&'static str),
    /// The key's owner, IP list, model list or group forbids the request.
    #[error("{0}")]
    Forbidden(String),
    /// The user's balance is in debt or does not cover the request; says how much is needed.
    #[error("{0}")]
    InsufficientUserQuota(String),
    /// The API key's remaining quota is in debt or does not cover the request.
    #[error("{0}")]
    InsufficientTokenQuota(String),
    /// The prompt contains sensitive words (CheckSensitiveOnPromptEnabled); names them.
    #[error("the prompt contains sensitive words: {0}")]
    SensitiveWords(String),
    /// The user's model request rate limit was reached.
    #[error("{0}")]
    RateLimited(String),
    /// A budget window of the user or the key is spent: the message names the window and when
    /// it resets; `retry_after` is the seconds until then (the `Retry-After` header).
    #[error("{message}")]
    BudgetReached {
        /// What was reached and when it resets.
        message: String,
        /// Seconds until the window resets.
        retry_after: i64,
    },
    /// A rate limit (P15) of the user, the key or a RateLimitRules rule has no room: the
    /// message names the rule; `retry_after` is the seconds until it would fit.
    #[error("{message}")]
    Limited {
        /// Which rule, its limit and when to retry.
        message: String,
        /// Seconds until the request would fit (the `Retry-After` header).
        retry_after: u64,
        /// The rule that refused (the error row's `other.limit`:
        /// [`crate::rate_limit::log_limit`]).
        refusal: Box<tollgate_actors::limiter::Refusal>,
    },
    /// The request bodies in flight would pass the memory budget (RelayBodyBudgetMB).
    #[error("{0}")]
    Busy(String),
    /// The body is larger than `--max-request-body-mb`.
    #[error("the request body is larger than this gateway accepts ({0} MiB)")]
    BodyTooLarge(u64),
    /// The body did not arrive within its deadline (`--body-read-timeout-secs`).
    #[error("{0}")]
    BodyTimeout(String),
    /// The key's request bodies in flight would pass its share (RelayBodyBudgetPerKeyMB).
    #[error("{0}")]
    BodyShare(String),
    /// The model has no price and the user does not accept unpriced models.
    #[error(
        "model price not configured: {0} has no ratio or price; ask the administrator to set one"
    )]
    ModelUnpriced(String),
    /// No enabled channel serves the model in the group.
    #[error("no available channel for model {model} in group {group}")]
    NoChannel {
        /// Requested model.
        model: String,
        /// Billing group.
        group: String,
    },
    /// The upstream answered an error (passed on with its status).
    #[error("{message}")]
    Upstream {
        /// Upstream HTTP status (after the channel's status code mapping).
        status: u16,
        /// Upstream error message, secrets masked.
        message: String,
    },
    /// No answer from the upstream (connect error or timeout).
    #[error("the upstream did not answer: {0}")]
    Unreachable(String),
    /// Something failed on our side.
    #[error("internal error")]
    Internal(String),
    /// Settlements cannot be saved right now (a full disk, an I/O error), so no paid request
    /// is served; the reason is in the server log and `/api/status`.
    #[error(
        "the gateway cannot record charges right now (its storage is failing); paid requests are refused until it recovers, please retry later"
    )]
    StorageUnavailable,
}

impl RelayError {
    /// The code of this error in the [`ErrorCode`] table.
    pub fn code(&self) -> ErrorCode {
        match self {
            RelayError::UnknownRoute { .. } => ErrorCode::NotFound,
            RelayError::NotImplemented(_) => ErrorCode::NotImplemented,
            RelayError::BadRequest(_) | RelayError::ModelUnpriced(_) => ErrorCode::InvalidRequest,
            RelayError::MissingKey | RelayError::InvalidKey(_) => ErrorCode::InvalidApiKey,
            RelayError::Forbidden(_) => ErrorCode::Forbidden,
            RelayError::InsufficientUserQuota(_) => ErrorCode::InsufficientUserQuota,
            RelayError::InsufficientTokenQuota(_) => ErrorCode::InsufficientTokenQuota,
            RelayError::SensitiveWords(_) => ErrorCode::SensitiveWords,
            RelayError::RateLimited(_) | RelayError::Limited { .. } => ErrorCode::RateLimited,
            RelayError::BudgetReached { .. } => ErrorCode::BudgetExceeded,
            RelayError::BodyTooLarge(_) => ErrorCode::BodyTooLarge,
            RelayError::BodyTimeout(_) => ErrorCode::BodyTimeout,
            RelayError::BodyShare(_) => ErrorCode::BodyShare,
            RelayError::Busy(_) => ErrorCode::Busy,
            RelayError::NoChannel { .. } => ErrorCode::NoChannel,
            RelayError::Upstream { .. } => ErrorCode::UpstreamError,
            RelayError::Unreachable(_) => ErrorCode::UpstreamUnreachable,
            RelayError::Internal(_) => ErrorCode::Internal,
            RelayError::StorageUnavailable => ErrorCode::StorageUnavailable,
        }
    }
}

impl IntoResponse for RelayError {
    fn into_response(self) -> Response {
        let code = self.code();
        let status = match &self {
            // An upstream's redirect (not followed, see `crate::upstream`) or other non-error
            // status is a bad gateway to the client: a 3xx without its Location means nothing.
            RelayError::Upstream { status, .. } => axum::http::StatusCode::from_u16(*status)
                .ok()
                .filter(|s| s.is_client_error() || s.is_server_error())
                .unwrap_or(code.status()),
            _ => code.status(),
        };
        if code == ErrorCode::Internal {
            tracing::error!(error = ?self, "relay request failed");
        } else {
            tracing::debug!(error = %self, "relay request refused");
        }
        let body = json!({
            "error": { "message": self.to_string(), "type": code.error_type(), "code": code.as_str() }
        });
        let mut response = (status, Json(body)).into_response();
        let retry_after = match &self {
            RelayError::BudgetReached { retry_after, .. } => {
                Some((*retry_after).max(1).to_string())
            }
            RelayError::Limited { retry_after, .. } => Some((*retry_after).max(1).to_string()),
            _ => None,
        };
        if let Some(seconds) = retry_after
            && let Ok(value) = axum::http::HeaderValue::from_str(&seconds)
        {
            response
                .headers_mut()
                .insert(axum::http::header::RETRY_AFTER, value);
        }
        // For the error counter of `/metrics` (see `crate::http::router`).
        response.extensions_mut().insert(code);
        response
    }
}
