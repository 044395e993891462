//! The two error types at the HTTP boundary and their one mapping each to a wire shape:
//! [`ConsoleError`] → `{success:false, message, code}` and [`RelayError`] →
//! `{"error":{"message","type","code"}}` (OpenAI's shape).
//!
//! Internal errors answer a generic message; the cause is logged once, here, at `error` level.
//! Client mistakes (4xx) are logged at `debug`.

pub mod codes;

use axum::Json;
use axum::response::{IntoResponse, Response};
use serde_json::json;
use tollgate_actors::ActorError;
use tollgate_actors::options::OptionError;
use tollgate_storage::StorageError;

pub use codes::ErrorCode;

/// A failure of a console (`/api/*`) request.
#[derive(Debug, thiserror::Error)]
pub enum ConsoleError {
    /// Input failed validation; the message says what to fix.
    #[error("{0}")]
    Invalid(String),
    /// Not logged in, or the session is no longer valid.
    #[error("not logged in or the session has expired, please log in again")]
    NotLoggedIn,
    /// The `New-Api-User` header does not match the session.
    #[error("{0}")]
    UserHeader(&'static str),
    /// The user's role is too low for this action.
    #[error("insufficient privileges")]
    Forbidden,
    /// A permission rule refused the action; the message names the rule.
    #[error("{0}")]
    Denied(&'static str),
    /// The feature is switched off by the admin; the message says which.
    #[error("{0}")]
    Disabled(&'static str),
    /// Too many requests from this address.
    #[error("too many requests, please try again later")]
    TooManyRequests,
    /// The bot check failed.
    #[error("Turnstile verification failed, please refresh and try again")]
    TurnstileFailed,
    /// A verification code or reset link is wrong, used or expired.
    #[error("{0}")]
    CodeInvalid(&'static str),
    /// A third-party sign-in's state is missing, foreign, expired or used; says which.
    #[error("{0}")]
    OAuthState(&'static str),
    /// The third-party identity is bound to another account already.
    #[error("this {0} account is already bound to another user")]
    AlreadyBound(&'static str),
    /// The action needs two-factor authentication, which is not on for this account.
    #[error("{0}")]
    TwoFactorNotEnabled(&'static str),
    /// The action needs a recent two-factor verification of this session.
    #[error("{0}")]
    TwoFactorRequired(&'static str),
    /// Too many wrong second-factor codes for this account within an hour: every code is
    /// refused for a while.
    #[error(
        "too many wrong two-factor codes: this account's two-factor check is locked for {minutes} \
         more minutes (a password reset by mail, or an administrator resetting two-factor, still \
         works)"
    )]
    TwoFactorLocked {
        /// Minutes until the lock ends (rounded up).
        minutes: i64,
    },
    /// Several wrong second-factor codes in a row: the next one must wait.
    #[error("too many wrong two-factor codes; wait {seconds} s before entering the next one")]
    TwoFactorWait {
        /// Seconds to wait.
        seconds: i64,
    },
    /// The action needs the caller to prove again who they are (password, two-factor code, or
    /// a fresh third-party sign-in); the message says which.
    #[error("{0}")]
    ReauthRequired(&'static str),
    /// The system access token is unknown.
    #[error("invalid access token")]
    InvalidAccessToken,
    /// Sending mail failed (SMTP not configured or unreachable).
    #[error("{0}")]
    Mail(String),
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
    /// The feature is not available for this input (e.g. a channel type without a balance API).
    #[error("{0}")]
    NotSupported(String),
    /// An upstream provider (or proxy) failed; the message says how (never with a key).
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
    /// The code of this error in the [`ErrorCode`] table.
    pub fn code(&self) -> ErrorCode {
        match self {
            ConsoleError::Invalid(_) => ErrorCode::InvalidRequest,
            ConsoleError::NotLoggedIn => ErrorCode::NotLoggedIn,
            ConsoleError::UserHeader(_) => ErrorCode::UserHeaderMismatch,
            ConsoleError::Forbidden | ConsoleError::Denied(_) => ErrorCode::Forbidden,
            ConsoleError::Disabled(_) => ErrorCode::FeatureDisabled,
            ConsoleError::TooManyRequests => ErrorCode::TooManyRequests,
            ConsoleError::TurnstileFailed => ErrorCode::TurnstileFailed,
            ConsoleError::CodeInvalid(_) | ConsoleError::OAuthState(_) => ErrorCode::CodeInvalid,
            ConsoleError::AlreadyBound(_) => ErrorCode::Conflict,
            ConsoleError::TwoFactorNotEnabled(_) => ErrorCode::TwoFactorNotEnabled,
            ConsoleError::TwoFactorRequired(_) => ErrorCode::TwoFactorRequired,
            ConsoleError::TwoFactorLocked { .. } => ErrorCode::TwoFactorLocked,
            ConsoleError::TwoFactorWait { .. } => ErrorCode::TwoFactorWait,
            ConsoleError::ReauthRequired(_) => ErrorCode::ReauthRequired,
            ConsoleError::InvalidAccessToken => ErrorCode::NotLoggedIn,
            ConsoleError::Mail(_) => ErrorCode::MailFailed,
            ConsoleError::UserDisabled => ErrorCode::UserDisabled,
            ConsoleError::BadCredentials => ErrorCode::BadCredentials,
            ConsoleError::PasswordLoginDisabled => ErrorCode::PasswordLoginDisabled,
            ConsoleError::AlreadyInitialized => ErrorCode::AlreadyInitialized,
            ConsoleError::RedemptionInvalid => ErrorCode::RedemptionInvalid,
            ConsoleError::RedemptionUsed => ErrorCode::RedemptionUsed,
            ConsoleError::NotFound(_) => ErrorCode::NotFound,
            ConsoleError::Conflict(_) => ErrorCode::Conflict,
            ConsoleError::NotSupported(_) => ErrorCode::NotImplemented,
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

impl From<OptionError> for ConsoleError {
    fn from(e: OptionError) -> Self {
        ConsoleError::Invalid(e.to_string())
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
        let code = self.code();
        if code == ErrorCode::Internal {
            tracing::error!(error = ?self, "console request failed");
        } else {
            tracing::debug!(error = %self, "console request refused");
        }
        let body = json!({ "success": false, "message": self.to_string(), "code": code.as_str() });
        (code.status(), Json(body)).into_response()
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
            RelayError::RateLimited(_) => ErrorCode::RateLimited,
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
        // For the error counter of `/metrics` (see `crate::http::router`).
        response.extensions_mut().insert(code);
        response
    }
}
