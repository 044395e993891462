//! `ErrorCode`: the one table from an error's code to its HTTP status and wire strings.

use axum::http::StatusCode;

/// Every error code Tollgate answers with. The console's i18n keys on [`ErrorCode::as_str`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorCode {
    /// Malformed or invalid input.
    InvalidRequest,
    /// No session, or the session is not valid any more.
    NotLoggedIn,
    /// The `New-Api-User` header is missing, malformed or not the session's user.
    UserHeaderMismatch,
    /// Logged in, but the role is not high enough.
    Forbidden,
    /// The user is banned.
    UserDisabled,
    /// Wrong username or password.
    BadCredentials,
    /// Password login is switched off.
    PasswordLoginDisabled,
    /// A feature (registration, a login method…) is switched off.
    FeatureDisabled,
    /// Too many requests from one address.
    TooManyRequests,
    /// The bot check failed.
    TurnstileFailed,
    /// A verification code or reset link is wrong, used or expired.
    CodeInvalid,
    /// Sending mail failed.
    MailFailed,
    /// The action needs two-factor authentication turned on first.
    TwoFactorNotEnabled,
    /// The action needs a recent two-factor verification (POST /api/verify).
    TwoFactorRequired,
    /// Too many wrong second-factor codes: the account's second factor is locked for a while.
    TwoFactorLocked,
    /// Several wrong second-factor codes in a row: wait before the next one.
    TwoFactorWait,
    /// The action needs the password, a two-factor code or a fresh third-party sign-in.
    ReauthRequired,
    /// Setup was already completed.
    AlreadyInitialized,
    /// A redemption code is unknown or disabled.
    RedemptionInvalid,
    /// A redemption code was used already.
    RedemptionUsed,
    /// The record does not exist.
    NotFound,
    /// A unique value is taken.
    Conflict,
    /// The route exists in OpenAI's API but Tollgate does not implement it.
    NotImplemented,
    /// An upstream provider or proxy failed.
    UpstreamFailed,
    /// The API key is missing, unknown or not usable.
    InvalidApiKey,
    /// The gateway is at its memory budget for request bodies.
    Busy,
    /// The user's balance is at or below zero (a debt), or does not cover the request.
    InsufficientUserQuota,
    /// The API key's remaining quota is at or below zero, or does not cover the request.
    InsufficientTokenQuota,
    /// The prompt contains a configured sensitive word.
    SensitiveWords,
    /// The user's model request rate limit was reached.
    RateLimited,
    /// The request body is larger than the configured limit.
    BodyTooLarge,
    /// The request body did not arrive within its read deadline.
    BodyTimeout,
    /// The API key's request bodies in flight are at its share of the memory budget.
    BodyShare,
    /// No enabled channel serves the model.
    NoChannel,
    /// The upstream answered an error.
    UpstreamError,
    /// The upstream did not answer.
    UpstreamUnreachable,
    /// Something failed on our side; details are in the server log.
    Internal,
    /// Settlements cannot be saved (a full disk, an I/O error): paid requests wait until they can.
    StorageUnavailable,
}

impl ErrorCode {
    /// HTTP status of the response.
    pub fn status(self) -> StatusCode {
        match self {
            ErrorCode::InvalidRequest
            | ErrorCode::BadCredentials
            | ErrorCode::PasswordLoginDisabled
            | ErrorCode::FeatureDisabled
            | ErrorCode::TurnstileFailed
            | ErrorCode::CodeInvalid
            | ErrorCode::ReauthRequired
            | ErrorCode::RedemptionInvalid
            | ErrorCode::RedemptionUsed => StatusCode::BAD_REQUEST,
            ErrorCode::TooManyRequests | ErrorCode::TwoFactorLocked | ErrorCode::TwoFactorWait => {
                StatusCode::TOO_MANY_REQUESTS
            }
            ErrorCode::MailFailed => StatusCode::BAD_GATEWAY,
            ErrorCode::NotLoggedIn | ErrorCode::UserHeaderMismatch => StatusCode::UNAUTHORIZED,
            ErrorCode::Forbidden
            | ErrorCode::UserDisabled
            | ErrorCode::TwoFactorNotEnabled
            | ErrorCode::TwoFactorRequired => StatusCode::FORBIDDEN,
            ErrorCode::NotFound => StatusCode::NOT_FOUND,
            ErrorCode::AlreadyInitialized | ErrorCode::Conflict => StatusCode::CONFLICT,
            ErrorCode::NotImplemented => StatusCode::NOT_IMPLEMENTED,
            ErrorCode::UpstreamFailed => StatusCode::BAD_GATEWAY,
            ErrorCode::InvalidApiKey => StatusCode::UNAUTHORIZED,
            ErrorCode::InsufficientUserQuota | ErrorCode::InsufficientTokenQuota => {
                StatusCode::FORBIDDEN
            }
            ErrorCode::SensitiveWords => StatusCode::BAD_REQUEST,
            ErrorCode::RateLimited => StatusCode::TOO_MANY_REQUESTS,
            ErrorCode::BodyTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            ErrorCode::BodyTimeout => StatusCode::REQUEST_TIMEOUT,
            ErrorCode::BodyShare => StatusCode::TOO_MANY_REQUESTS,
            ErrorCode::NoChannel | ErrorCode::Busy => StatusCode::SERVICE_UNAVAILABLE,
            ErrorCode::UpstreamError | ErrorCode::UpstreamUnreachable => StatusCode::BAD_GATEWAY,
            ErrorCode::Internal => StatusCode::INTERNAL_SERVER_ERROR,
            ErrorCode::StorageUnavailable => StatusCode::SERVICE_UNAVAILABLE,
        }
    }

    /// Stable machine-readable code (snake_case).
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InvalidRequest => "invalid_request",
            ErrorCode::NotLoggedIn => "not_logged_in",
            ErrorCode::UserHeaderMismatch => "user_header_mismatch",
            ErrorCode::Forbidden => "forbidden",
            ErrorCode::UserDisabled => "user_disabled",
            ErrorCode::BadCredentials => "bad_credentials",
            ErrorCode::PasswordLoginDisabled => "password_login_disabled",
            ErrorCode::FeatureDisabled => "feature_disabled",
            ErrorCode::TooManyRequests => "too_many_requests",
            ErrorCode::TurnstileFailed => "turnstile_failed",
            ErrorCode::CodeInvalid => "code_invalid",
            ErrorCode::MailFailed => "mail_failed",
            ErrorCode::TwoFactorNotEnabled => "two_factor_not_enabled",
            ErrorCode::TwoFactorRequired => "two_factor_required",
            ErrorCode::TwoFactorLocked => "two_factor_locked",
            ErrorCode::TwoFactorWait => "two_factor_wait",
            ErrorCode::ReauthRequired => "reauth_required",
            ErrorCode::AlreadyInitialized => "already_initialized",
            ErrorCode::RedemptionInvalid => "redemption_invalid",
            ErrorCode::RedemptionUsed => "redemption_used",
            ErrorCode::NotFound => "not_found",
            ErrorCode::Conflict => "conflict",
            ErrorCode::NotImplemented => "not_implemented",
            ErrorCode::UpstreamFailed => "upstream_error",
            ErrorCode::InvalidApiKey => "invalid_api_key",
            ErrorCode::InsufficientUserQuota => "insufficient_user_quota",
            ErrorCode::InsufficientTokenQuota => "insufficient_token_quota",
            ErrorCode::Busy => "server_busy",
            ErrorCode::SensitiveWords => "sensitive_words_detected",
            ErrorCode::RateLimited => "rate_limit_exceeded",
            ErrorCode::BodyTooLarge => "request_body_too_large",
            ErrorCode::BodyTimeout => "request_body_timeout",
            ErrorCode::BodyShare => "request_body_share_exceeded",
            ErrorCode::NoChannel => "model_not_available",
            ErrorCode::UpstreamError => "upstream_error",
            ErrorCode::UpstreamUnreachable => "upstream_unreachable",
            ErrorCode::Internal => "internal_error",
            ErrorCode::StorageUnavailable => "storage_unavailable",
        }
    }

    /// OpenAI-style `error.type` for relay responses.
    pub fn error_type(self) -> &'static str {
        match self {
            ErrorCode::Internal | ErrorCode::StorageUnavailable | ErrorCode::Busy => "server_error",
            ErrorCode::NotLoggedIn
            | ErrorCode::UserHeaderMismatch
            | ErrorCode::BadCredentials
            | ErrorCode::InvalidApiKey => "authentication_error",
            ErrorCode::InsufficientUserQuota | ErrorCode::InsufficientTokenQuota => {
                "insufficient_quota"
            }
            ErrorCode::RateLimited | ErrorCode::BodyShare => "rate_limit_error",
            ErrorCode::UpstreamError | ErrorCode::UpstreamUnreachable => "upstream_error",
            ErrorCode::Forbidden | ErrorCode::UserDisabled => "permission_error",
            _ => "invalid_request_error",
        }
    }
}
