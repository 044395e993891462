//! `ErrorCode`: the one table of Tollgate's error codes, from each code to its HTTP status and
//! wire strings.
//!
//! Two kinds of codes share the enum: the *general* codes (`invalid_request`, `forbidden`, …),
//! which decide the HTTP status and stand for a whole class of failures, and the *specific*
//! codes (`cannot_manage_peer`, `token_name_required`, …), each under its general code and with
//! its English text (`{}` stands for an argument). A handler refuses with a specific code and its
//! arguments (`ConsoleError::of` / `ConsoleError::with_args`); the answer carries the general
//! code (`code`), the specific one (`detail`), its arguments (`args`) and the English text
//! (`message`), so that the console can say it in the reader's language. The list of every code
//! is written for the web console's tests (`web/src/api/error-codes.json`, checked by a test
//! here).

use axum::http::StatusCode;

/// Declares [`ErrorCode`]: general codes, then specific codes each with its general code and
/// its English message (`{}` stands for an argument).
macro_rules! error_codes {
    (
        general { $( $(#[doc = $gdoc:literal])* $gv:ident = $gs:literal, )* }
        specific { $( $sv:ident = $ss:literal in $sp:ident : $st:literal, )* }
    ) => {
        /// Every error code Tollgate answers with. The console's i18n keys on
        /// [`ErrorCode::as_str`].
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum ErrorCode {
            $( $(#[doc = $gdoc])* $gv, )*
            $( #[doc = $st] $sv, )*
        }

        impl ErrorCode {
            /// Every code, general ones first.
            pub const ALL: &'static [ErrorCode] = &[ $(ErrorCode::$gv,)* $(ErrorCode::$sv,)* ];

            /// The English text of a specific code (`{}`: an argument), or `None` for a
            /// general code.
            pub fn template(self) -> Option<&'static str> {
                match self {
                    $( ErrorCode::$sv => Some($st), )*
                    _ => None,
                }
            }

            /// Stable machine-readable code (snake_case).
            pub fn as_str(self) -> &'static str {
                match self {
                    $( ErrorCode::$gv => $gs, )*
                    $( ErrorCode::$sv => $ss, )*
                }
            }

            /// The general code this one belongs to (itself for a general code): it decides
            /// the HTTP status and the OpenAI-style type.
            pub fn general(self) -> ErrorCode {
                match self {
                    $( ErrorCode::$gv => ErrorCode::$gv, )*
                    $( ErrorCode::$sv => ErrorCode::$sp, )*
                }
            }
        }
    };
}

error_codes! {
    general {
        /// Malformed or invalid input.
        InvalidRequest = "invalid_request",
        /// No session, or the session is not valid any more.
        NotLoggedIn = "not_logged_in",
        /// The `New-Api-User` header is missing, malformed or not the session's user.
        UserHeaderMismatch = "user_header_mismatch",
        /// Logged in, but the role is not high enough.
        Forbidden = "forbidden",
        /// The user is banned.
        UserDisabled = "user_disabled",
        /// Wrong username or password.
        BadCredentials = "bad_credentials",
        /// Password login is switched off.
        PasswordLoginDisabled = "password_login_disabled",
        /// A feature (registration, a login method…) is switched off.
        FeatureDisabled = "feature_disabled",
        /// Too many requests from one address.
        TooManyRequests = "too_many_requests",
        /// The bot check failed.
        TurnstileFailed = "turnstile_failed",
        /// A verification code or reset link is wrong, used or expired.
        CodeInvalid = "code_invalid",
        /// Sending mail failed.
        MailFailed = "mail_failed",
        /// The action needs two-factor authentication turned on first.
        TwoFactorNotEnabled = "two_factor_not_enabled",
        /// The action needs a recent two-factor verification (POST /api/verify).
        TwoFactorRequired = "two_factor_required",
        /// Too many wrong second-factor codes: the account's second factor is locked for a while.
        TwoFactorLocked = "two_factor_locked",
        /// Several wrong second-factor codes in a row: wait before the next one.
        TwoFactorWait = "two_factor_wait",
        /// The action needs the password, a two-factor code or a fresh third-party sign-in.
        ReauthRequired = "reauth_required",
        /// Setup was already completed.
        AlreadyInitialized = "already_initialized",
        /// A redemption code is unknown or disabled.
        RedemptionInvalid = "redemption_invalid",
        /// A redemption code was used already.
        RedemptionUsed = "redemption_used",
        /// The record does not exist.
        NotFound = "not_found",
        /// A unique value is taken.
        Conflict = "conflict",
        /// The route exists in OpenAI's API but Tollgate does not implement it.
        NotImplemented = "not_implemented",
        /// An upstream provider or proxy failed.
        UpstreamFailed = "upstream_error",
        /// The API key is missing, unknown or not usable.
        InvalidApiKey = "invalid_api_key",
        /// The gateway is at its memory budget for request bodies.
        Busy = "server_busy",
        /// The user's balance is at or below zero (a debt), or does not cover the request.
        InsufficientUserQuota = "insufficient_user_quota",
        /// The API key's remaining quota is at or below zero, or does not cover the request.
        InsufficientTokenQuota = "insufficient_token_quota",
        /// The prompt contains a configured sensitive word.
        SensitiveWords = "sensitive_words_detected",
        /// The user's model request rate limit was reached.
        RateLimited = "rate_limit_exceeded",
        /// A budget window of the user or of the API key is spent.
        BudgetExceeded = "budget_exceeded",
        /// The request body is larger than the configured limit.
        BodyTooLarge = "request_body_too_large",
        /// The request body did not arrive within its read deadline.
        BodyTimeout = "request_body_timeout",
        /// The API key's request bodies in flight are at its share of the memory budget.
        BodyShare = "request_body_share_exceeded",
        /// No enabled channel serves the model.
        NoChannel = "model_not_available",
        /// The upstream answered an error.
        UpstreamError = "upstream_error",
        /// The upstream did not answer.
        UpstreamUnreachable = "upstream_unreachable",
        /// Something failed on our side; details are in the server log.
        Internal = "internal_error",
        /// Settlements cannot be saved (a full disk, an I/O error): paid requests wait until they can.
        StorageUnavailable = "storage_unavailable",
    }
    specific {
        ChannelNameRequired = "channel_name_required" in InvalidRequest: "the channel name is required",
        ChannelKeyRequired = "channel_key_required" in InvalidRequest: "the channel key is required",
        ChannelModelsRequired = "channel_models_required" in InvalidRequest: "at least one model is required",
        BaseUrlNotHttp = "base_url_not_http" in InvalidRequest: "base_url must start with http:// or https://",
        WeightNegative = "weight_negative" in InvalidRequest: "weight must be at least 0",
        MaxInputTokensNegative = "max_input_tokens_negative" in InvalidRequest: "max_input_tokens must be at least 0",
        AutoBanInvalid = "auto_ban_invalid" in InvalidRequest: "auto_ban must be 0 or 1",
        ChannelStatusInvalid = "channel_status_invalid" in InvalidRequest: "status must be 1 (enabled), 2 (disabled) or 3 (auto-disabled)",
        ProxyNotUrl = "proxy_not_url" in InvalidRequest: "the proxy address is not a valid URL: {}",
        ProxyScheme = "proxy_scheme" in InvalidRequest: "unsupported proxy scheme {}:// (use http, https, socks5 or socks5h)",
        ProxyNoHost = "proxy_no_host" in InvalidRequest: "the proxy address has no host",
        BodyInvalid = "body_invalid" in InvalidRequest: "the request body is not valid: {}",
        QueryInvalid = "query_invalid" in InvalidRequest: "the query parameters are not valid: {}",
        ProxyUnusable = "proxy_unusable" in InvalidRequest: "the channel's proxy cannot be used: {}",
        BudgetInvalid = "budget_invalid" in InvalidRequest: "the budget is not valid: {}",
        LimitRuleShape = "limit_rule_shape" in InvalidRequest: "RateLimitRules must be a list of rules: {}",
        LimitRuleTooMany = "limit_rule_too_many" in InvalidRequest: "RateLimitRules holds at most {} rules",
        LimitRuleNoTarget = "limit_rule_no_target" in InvalidRequest: "rate limit rule {} names neither a group nor a model",
        LimitRuleNoLimit = "limit_rule_no_limit" in InvalidRequest: "rate limit rule {} sets no limit",
        LimitRuleDuplicate = "limit_rule_duplicate" in InvalidRequest: "rate limit rule {} covers the same group and model as rule {}",
        LimitRuleQueue = "limit_rule_queue" in InvalidRequest: "rate limit rule {}: a queue holds 1 to {} requests, each waiting 1 to {} ms",
        LimitKeyNotChannel = "limit_key_not_channel" in InvalidRequest: "only a channel has per-key limits",
        LimitKeyTwice = "limit_key_twice" in InvalidRequest: "key {} is given twice in key_limits",
        LimitKeyTooMany = "limit_key_too_many" in InvalidRequest: "at most {} per-key limits",
        TwoFactorLockedFor = "two_factor_locked_for" in TwoFactorLocked: "too many wrong two-factor codes: this account's two-factor check is locked for {} more minutes (a password reset by mail, or an administrator resetting two-factor, still works)",
        TwoFactorWaitFor = "two_factor_wait_for" in TwoFactorWait: "too many wrong two-factor codes; wait {} s before entering the next one",
        TaskNotFound = "task_not_found" in NotFound: "task not found",
        BackupTokenNotFound = "backup_token_not_found" in NotFound: "backup token not found",
        TopupOwnOrder = "topup_own_order" in Forbidden: "you cannot complete a top-up order of your own",
        BackupNeedsVerify = "backup_needs_verify" in TwoFactorRequired: "a backup with a system access token needs POST /api/verify with a two-factor code through that token within the last 5 minutes; or use a backup token (personal settings)",
        BackupTokenNeedsTwoFactor = "backup_token_needs_two_factor" in TwoFactorNotEnabled: "a backup token needs two-factor authentication: turn it on in your personal settings first",
        ReauthPasswordWrong = "reauth_password_wrong" in ReauthRequired: "the password is wrong; enter your current password to confirm",
        ReauthSignInAgain = "reauth_sign_in_again" in ReauthRequired: "this account has no password: sign in again with your third-party account, then retry within 5 minutes",
        ReauthPasswordOrCode = "reauth_password_or_code" in ReauthRequired: "enter your password or a two-factor code to confirm",
        ReauthPassword = "reauth_password" in ReauthRequired: "enter your password to confirm",
        BackupTokenIdInvalid = "backup_token_id_invalid" in InvalidRequest: "bad backup token id",
        BackupTokenNameTooLong = "backup_token_name_too_long" in InvalidRequest: "the name is longer than {} characters",
        TelegramReplayed = "telegram_replayed" in InvalidRequest: "Telegram sign-in refused: this authorization was used already; sign in with Telegram again",
        ProofInvalid = "proof_invalid" in InvalidRequest: "the body is not a valid proof: {}",
        TaskRefundedAlready = "task_refunded_already" in InvalidRequest: "this task was refunded already",
        TaskCostNothing = "task_cost_nothing" in InvalidRequest: "this task cost nothing",
        RootOnlyChannelAddress = "root_only_channel_address" in Forbidden: "only root may change the base URL, proxy or type of a channel with a stored key; enter the key again to change them",
        PromoteNeedsRoot = "promote_needs_root" in Forbidden: "only the super admin can promote users to admin",
        SetupTokenRequired = "setup_token_required" in Forbidden: "setup needs the one-time token printed in the server log",
        BoundAccountDeleted = "bound_account_deleted" in Forbidden: "the account bound to this identity has been deleted",
        RootCannotBeDeleted = "root_cannot_be_deleted" in Forbidden: "the super admin cannot be deleted",
        RootCannotBeDemoted = "root_cannot_be_demoted" in Forbidden: "the super admin cannot be demoted",
        RootCannotBeDisabled = "root_cannot_be_disabled" in Forbidden: "the super admin cannot be disabled",
        LinuxdoAccountInactive = "linuxdo_account_inactive" in Forbidden: "this LinuxDO account is not active or is silenced",
        CannotChangePeer = "cannot_change_peer" in Forbidden: "you cannot change a user whose level is equal to or higher than yours",
        CannotCreatePeer = "cannot_create_peer" in Forbidden: "you cannot create a user with permission equal to or higher than yours",
        CannotManagePeer = "cannot_manage_peer" in Forbidden: "you cannot manage a user whose level is equal to or higher than yours",
        CannotReadPeer = "cannot_read_peer" in Forbidden: "you cannot read a user whose level is equal to or higher than yours",
        CannotUpdatePeer = "cannot_update_peer" in Forbidden: "you cannot update a user whose level is equal to or higher than yours",
        GithubNotConfigured = "github_not_configured" in FeatureDisabled: "GitHub sign-in is not configured (client id)",
        LinuxdoNotConfigured = "linuxdo_not_configured" in FeatureDisabled: "LinuxDO sign-in is not configured (client id)",
        OidcNotConfigured = "oidc_not_configured" in FeatureDisabled: "OIDC sign-in is not configured (client id and well-known URL)",
        TelegramNotConfigured = "telegram_not_configured" in FeatureDisabled: "Telegram sign-in is not configured (bot token)",
        WechatNotConfigured = "wechat_not_configured" in FeatureDisabled: "WeChat sign-in is not configured (server address)",
        RegisterSelfUse = "register_self_use" in FeatureDisabled: "registration is not available in self-use mode",
        RegisterDisabled = "register_disabled" in FeatureDisabled: "the administrator has closed new registrations",
        GithubDisabled = "github_disabled" in FeatureDisabled: "the administrator has not enabled GitHub sign-in",
        LinuxdoDisabled = "linuxdo_disabled" in FeatureDisabled: "the administrator has not enabled LinuxDO sign-in",
        OidcDisabled = "oidc_disabled" in FeatureDisabled: "the administrator has not enabled OIDC sign-in",
        TelegramDisabled = "telegram_disabled" in FeatureDisabled: "the administrator has not enabled Telegram sign-in",
        WechatDisabled = "wechat_disabled" in FeatureDisabled: "the administrator has not enabled WeChat sign-in",
        OnlineTopupDisabled = "online_topup_disabled" in FeatureDisabled: "the administrator has not enabled online top-up",
        PasswordRegisterDisabled = "password_register_disabled" in FeatureDisabled: "the administrator has turned off registration with a password",
        TwoFactorSigninMissing = "two_factor_signin_missing" in CodeInvalid: "no sign-in is waiting for a two-factor code in this browser (it was completed or has expired); sign in again",
        AccountChangedDuringSignin = "account_changed_during_signin" in CodeInvalid: "the account changed since the password was entered; sign in again",
        ResetLinkInvalid = "reset_link_invalid" in CodeInvalid: "the reset link is invalid or has expired",
        TwoFactorSigninExpired = "two_factor_signin_expired" in CodeInvalid: "the sign-in waited too long for its two-factor code; sign in again",
        VerificationCodeInvalid = "verification_code_invalid" in CodeInvalid: "the verification code is wrong or has expired",
        TwoFactorTooManyAttempts = "two_factor_too_many_attempts" in CodeInvalid: "too many wrong two-factor codes; sign in again",
        TwoFactorCodeWrong = "two_factor_code_wrong" in CodeInvalid: "wrong two-factor code (or a code or recovery code already used); enter the current code from your authenticator app",
        OauthStateMissing = "oauth_state_missing" in CodeInvalid: "no sign-in was started in this browser (the state cookie is missing), please start again",
        OauthStateExpired = "oauth_state_expired" in CodeInvalid: "the sign-in took too long and its state has expired, please start again",
        OauthStateOtherProvider = "oauth_state_other_provider" in CodeInvalid: "the sign-in was started for another provider, please start again",
        OauthStateMismatch = "oauth_state_mismatch" in CodeInvalid: "the state does not match the sign-in started in this browser, please start again",
        OauthStateUsed = "oauth_state_used" in CodeInvalid: "this sign-in state was already used, please start again",
        KeyRevealNeedsTwoFactor = "key_reveal_needs_two_factor" in TwoFactorNotEnabled: "revealing a channel key needs two-factor authentication: turn it on in your personal settings first",
        TwoFactorOff = "two_factor_off" in TwoFactorNotEnabled: "two-factor authentication is not on for this account; turn it on in your personal settings first",
        KeyRevealNeedsCode = "key_reveal_needs_code" in TwoFactorRequired: "enter a two-factor code to reveal the key (POST /api/verify; a verification lasts 5 minutes)",
        UserHeaderTokenMismatch = "user_header_token_mismatch" in UserHeaderMismatch: "New-Api-User header does not match the access token",
        UserHeaderSessionMismatch = "user_header_session_mismatch" in UserHeaderMismatch: "New-Api-User header does not match the session",
        UserHeaderBadFormat = "user_header_bad_format" in UserHeaderMismatch: "New-Api-User header has a bad format",
        UserHeaderMissing = "user_header_missing" in UserHeaderMismatch: "New-Api-User header not provided",
        ChannelNotFound = "channel_not_found" in NotFound: "channel not found",
        UserNotFound = "user_not_found" in NotFound: "user not found",
        RedemptionNotFound = "redemption_not_found" in NotFound: "redemption code not found",
        TokenNotFound = "token_not_found" in NotFound: "token not found",
        ProviderNotFound = "provider_not_found" in NotFound: "sign-in provider not found",
        RouteNotFound = "route_not_found" in NotFound: "route not found",
        OrderNotFound = "order_not_found" in NotFound: "order not found",
        LogNotFound = "log_not_found" in NotFound: "log not found",
        UsernameTaken = "username_taken" in Conflict: "username already exists",
        EmailTaken = "email_taken" in Conflict: "email already exists",
        TokenKeyTaken = "token_key_taken" in Conflict: "token key already exists",
        IdentityTaken = "identity_taken" in Conflict: "identity already exists",
        IdentityBoundElsewhere = "identity_bound_elsewhere" in Conflict: "this {} account is already bound to another user",
        SmtpFromInvalid = "smtp_from_invalid" in MailFailed: "SMTPFrom is not a valid address",
        ServerAddressInvalid = "server_address_invalid" in MailFailed: "ServerAddress is not a valid URL",
        MailSendFailed = "mail_send_failed" in MailFailed: "sending the mail failed; ask the administrator to check SMTP",
        SmtpNotConfigured = "smtp_not_configured" in MailFailed: "the administrator has not configured SMTP, so no mail can be sent",
        SmtpTlsFailed = "smtp_tls_failed" in MailFailed: "SMTP TLS setup failed: {}",
        MailBuildFailed = "mail_build_failed" in MailFailed: "cannot build the mail: {}",
        BalanceMultiKey = "balance_multi_key" in NotImplemented: "balance query is not supported for multi-key channels",
        BalanceUnsupported = "balance_unsupported" in NotImplemented: "balance query is not supported for this channel type",
        FetchModelsUnsupported = "fetch_models_unsupported" in NotImplemented: "fetching models is not supported for {} channels",
        TestUnsupported = "test_unsupported" in NotImplemented: "testing {} channels is not supported: the relay cannot serve this type yet",
        BalanceBadAnswer = "balance_bad_answer" in UpstreamFailed: "balance query failed: the upstream's answer has an unexpected shape",
        BalanceFailed = "balance_failed" in UpstreamFailed: "balance query failed: {}",
        FetchModelsFailed = "fetch_models_failed" in UpstreamFailed: "failed to fetch the model list: {}",
        ProxyTestStatus = "proxy_test_status" in UpstreamFailed: "proxy connection test failed: status {}",
        ProxyTestFailed = "proxy_test_failed" in UpstreamFailed: "proxy connection test failed: {}",
        ModelListNotJson = "model_list_not_json" in UpstreamFailed: "the model list is not JSON",
        OidcNoIdToken = "oidc_no_id_token" in UpstreamFailed: "{}: the token answer has no ID token",
        ProviderUnexpectedAnswer = "provider_unexpected_answer" in UpstreamFailed: "{}: the {} answer is not what was expected",
        ProviderAnswerCut = "provider_answer_cut" in UpstreamFailed: "{}: the {} answer was cut off or too large",
        ProviderHttpError = "provider_http_error" in UpstreamFailed: "{}: the {} answered HTTP {}",
        ProviderTimeout = "provider_timeout" in UpstreamFailed: "{}: the {} timed out",
        ProviderUnreachable = "provider_unreachable" in UpstreamFailed: "{}: the {} could not be reached",
        ProviderFailed = "provider_failed" in UpstreamFailed: "{}: the {} {}",
        GithubRefused = "github_refused" in InvalidRequest: "GitHub refused the sign-in ({}), please start again",
        LinuxdoRefused = "linuxdo_refused" in InvalidRequest: "LinuxDO refused the sign-in (no access token), please start again",
        PasswordTooShort = "password_too_short" in InvalidRequest: "Password must be at least 8 characters long",
        TelegramRefused = "telegram_refused" in InvalidRequest: "Telegram sign-in refused: {}",
        FetchModelsNeedsKey = "fetch_models_needs_key" in InvalidRequest: "a key is required to fetch models",
        LogDeletionRunning = "log_deletion_running" in InvalidRequest: "a log deletion is already running; wait for it to finish",
        ProxyRequired = "proxy_required" in InvalidRequest: "a proxy address is required",
        TooManyTokens = "too_many_tokens" in InvalidRequest: "a user may own at most {} tokens",
        ChannelNeedsBaseUrl = "channel_needs_base_url" in InvalidRequest: "a {} channel needs a base_url",
        ChannelNeedsField = "channel_needs_field" in InvalidRequest: "a {} channel needs its {} ({})",
        BadUserId = "bad_user_id" in InvalidRequest: "bad user id",
        UsageModesExclusive = "usage_modes_exclusive" in InvalidRequest: "choose one usage mode: self-use and demo site exclude each other",
        RedemptionCountRange = "redemption_count_range" in InvalidRequest: "count must be between 1 and {}",
        EmailAliasRefused = "email_alias_refused" in InvalidRequest: "email aliases (plus-addressing or dotted Gmail addresses) are not allowed",
        ResetNeedsEmailAndToken = "reset_needs_email_and_token" in InvalidRequest: "email and token are required",
        RegisterNeedsEmailCode = "register_needs_email_code" in InvalidRequest: "email and verification code are required",
        TwoFactorCodeRequired = "two_factor_code_required" in InvalidRequest: "enter the code from your authenticator app",
        TokenExpiryInvalid = "token_expiry_invalid" in InvalidRequest: "expired_time must be -1 (never) or a Unix time in seconds",
        GroupUnknown = "group_unknown" in InvalidRequest: "group {} does not exist in GroupRatio",
        IdRequired = "id_required" in InvalidRequest: "id is required",
        ChannelIdInvalid = "channel_id_invalid" in InvalidRequest: "invalid channel id {}",
        ChannelKeyInvalid = "channel_key_invalid" in InvalidRequest: "invalid {} key: {}",
        EmailInvalid = "email_invalid" in InvalidRequest: "not a valid email address",
        AffQuotaInsufficient = "aff_quota_insufficient" in InvalidRequest: "not enough invite earnings",
        NotifyTypeInvalid = "notify_type_invalid" in InvalidRequest: "notify_type must be email or webhook",
        RedemptionEditUnusedOnly = "redemption_edit_unused_only" in InvalidRequest: "only an unused redemption code can be edited",
        PaymentMethodInvalid = "payment_method_invalid" in InvalidRequest: "payment_method must be zfb or wx",
        RedemptionCodeRequired = "redemption_code_required" in InvalidRequest: "please enter the redemption code",
        SelectChannelsToDelete = "select_channels_to_delete" in InvalidRequest: "please select channels to delete",
        SelectChannelsToTag = "select_channels_to_tag" in InvalidRequest: "please select channels to tag",
        PriorityTooLow = "priority_too_low" in InvalidRequest: "priority must be at least {}",
        QuotaNegative = "quota_negative" in InvalidRequest: "quota cannot be negative",
        QuotaOutOfRange = "quota_out_of_range" in InvalidRequest: "quota is out of range",
        QuotaNotPositive = "quota_not_positive" in InvalidRequest: "quota must be a positive integer",
        RemainQuotaNegative = "remain_quota_negative" in InvalidRequest: "remain_quota cannot be negative",
        RemainQuotaOutOfRange = "remain_quota_out_of_range" in InvalidRequest: "remain_quota is out of range",
        RoleInvalid = "role_invalid" in InvalidRequest: "role must be 1, 10 or 100",
        TwoFactorSetupFirst = "two_factor_setup_first" in InvalidRequest: "start the two-factor setup first (scan the QR code), then enter a code",
        TimeRangeReversed = "time_range_reversed" in InvalidRequest: "start_timestamp must not be after end_timestamp",
        StatusRequired = "status_required" in InvalidRequest: "status is required",
        RedemptionStatusInvalid = "redemption_status_invalid" in InvalidRequest: "status must be 1 (enable) or 2 (disable)",
        TagEmpty = "tag_empty" in InvalidRequest: "tag cannot be empty",
        LogDeleteTimeRequired = "log_delete_time_required" in InvalidRequest: "target_timestamp is required (unix seconds)",
        LogDeleteTimeInvalid = "log_delete_time_invalid" in InvalidRequest: "target_timestamp must be a positive unix time in seconds",
        OidcIdTokenRefused = "oidc_id_token_refused" in InvalidRequest: "the OIDC ID token was refused: {}",
        OidcAuthorizationEndpointInvalid = "oidc_authorization_endpoint_invalid" in InvalidRequest: "the OIDC authorization endpoint is not a valid URL",
        OidcSubjectMismatch = "oidc_subject_mismatch" in InvalidRequest: "the OIDC userinfo answer is for another subject than the ID token",
        WechatServerInvalid = "wechat_server_invalid" in InvalidRequest: "the WeChat server address is not valid",
        WellKnownNotHttp = "well_known_not_http" in InvalidRequest: "the Well-Known URL must start with http:// or https://",
        AdminUsernameRequired = "admin_username_required" in InvalidRequest: "the admin username is required",
        EmailDomainNotAllowed = "email_domain_not_allowed" in InvalidRequest: "the administrator only allows registration with whitelisted email domains",
        AmountPayableTooSmall = "amount_payable_too_small" in InvalidRequest: "the amount payable is less than 0.01",
        AmountPayableOutOfRange = "amount_payable_out_of_range" in InvalidRequest: "the amount payable is out of range",
        TurnstileRunning = "turnstile_running" in InvalidRequest: "the bot check is still running, please retry in a few seconds",
        ChannelNoBaseUrl = "channel_no_base_url" in InvalidRequest: "the channel has no base_url",
        ChannelNoKey = "channel_no_key" in InvalidRequest: "the channel has no key",
        DisplayNameTooLong = "display_name_too_long" in InvalidRequest: "the display name must be at most 20 characters",
        EmailRequired = "email_required" in InvalidRequest: "the email is required",
        TransferBelowMinimum = "transfer_below_minimum" in InvalidRequest: "the minimum transfer is {}",
        RedemptionNameLength = "redemption_name_length" in InvalidRequest: "the name must be 1 to {} characters",
        NewPasswordSame = "new_password_same" in InvalidRequest: "the new password must differ from the original one",
        OrderNotPending = "order_not_pending" in InvalidRequest: "the order is not pending any more",
        OriginalPasswordRequired = "original_password_required" in InvalidRequest: "the original password is required",
        OriginalPasswordWrong = "original_password_wrong" in InvalidRequest: "the original password is wrong",
        PasswordTooLong = "password_too_long" in InvalidRequest: "the password must be at most {} characters",
        PasswordLength = "password_length" in InvalidRequest: "the password must be {} to {} characters long",
        OauthNoCode = "oauth_no_code" in InvalidRequest: "the provider sent no authorization code",
        ServerAddressNotHttp = "server_address_not_http" in InvalidRequest: "the server address must be an http:// or https:// address",
        TagUpdateEmpty = "tag_update_empty" in InvalidRequest: "the tag update needs at least one change",
        TimeSpanTooLong = "time_span_too_long" in InvalidRequest: "the time span cannot exceed one month",
        TokenExpiredCannotEnable = "token_expired_cannot_enable" in InvalidRequest: "the token has expired and cannot be enabled; change its expiry time or set it to never expire",
        TokenNameRequired = "token_name_required" in InvalidRequest: "the token name is required",
        TokenNameTooLong = "token_name_too_long" in InvalidRequest: "the token name must be at most {} characters",
        TokenExhaustedCannotEnable = "token_exhausted_cannot_enable" in InvalidRequest: "the token's quota is used up and it cannot be enabled; raise its remaining quota or make it unlimited",
        TopupBelowMinimum = "topup_below_minimum" in InvalidRequest: "the top-up amount cannot be less than {}",
        TopupAboveMaximum = "topup_above_maximum" in InvalidRequest: "the top-up amount cannot be more than {}",
        TopupOutOfRange = "topup_out_of_range" in InvalidRequest: "the top-up amount is out of range",
        PasswordsDiffer = "passwords_differ" in InvalidRequest: "the two passwords do not match",
        UsernameHasSpaces = "username_has_spaces" in InvalidRequest: "the username cannot contain spaces",
        UsernameRequired = "username_required" in InvalidRequest: "the username is required",
        UsernameTooLong = "username_too_long" in InvalidRequest: "the username must be at most {} characters",
        VerificationCodeRequired = "verification_code_required" in InvalidRequest: "the verification code is required",
        WarningThresholdInvalid = "warning_threshold_invalid" in InvalidRequest: "the warning threshold must be a number ≥ 0",
        WebhookNotHttps = "webhook_not_https" in InvalidRequest: "the webhook URL must start with https://",
        RedemptionUsedUnchangeable = "redemption_used_unchangeable" in InvalidRequest: "this redemption code has been used and cannot be changed",
        LinuxdoTrustLevel = "linuxdo_trust_level" in InvalidRequest: "this site requires LinuxDO trust level {} or above (yours is {})",
        AlreadyAdmin = "already_admin" in InvalidRequest: "this user is already an admin",
        AlreadyCommon = "already_common" in InvalidRequest: "this user is already an ordinary user",
        TwoFactorNotOnForUser = "two_factor_not_on_for_user" in InvalidRequest: "two-factor authentication is not on for this user",
        TwoFactorAlreadyOn = "two_factor_already_on" in InvalidRequest: "two-factor authentication is on already",
        TwoFactorAlreadyOnSetup = "two_factor_already_on_setup" in InvalidRequest: "two-factor authentication is on already; turn it off first to set up another authenticator",
        LogTypeOutOfRange = "log_type_out_of_range" in InvalidRequest: "type is out of range",
        ChannelTypeUnknown = "channel_type_unknown" in InvalidRequest: "unknown channel type {}",
        ChannelTypeRefused = "channel_type_refused" in InvalidRequest: "channel type {} ({}) cannot be created: {}",
        ChannelModeUnknown = "channel_mode_unknown" in InvalidRequest: "unknown mode {}",
        LoginFieldsRequired = "login_fields_required" in InvalidRequest: "username and password are required",
        UserFieldsRequired = "user_fields_required" in InvalidRequest: "username and password must not be empty",
        GroupNotUsable = "group_not_usable" in InvalidRequest: "you cannot use the group {}",
        IpInvalid = "ip_invalid" in InvalidRequest: "{} is not an IP address or CIDR range",
        ChannelFieldNotJson = "channel_field_not_json" in InvalidRequest: "{} is not a valid JSON string (a JSON object is expected)",
        FieldOutOfRange = "field_out_of_range" in InvalidRequest: "{} is out of range",
        ChannelFieldChoice = "channel_field_choice" in InvalidRequest: "{} of a {} channel must be one of {}",
        NotAnInteger = "not_an_integer" in InvalidRequest: "{} must be an integer",
        OptionUnknown = "option_unknown" in InvalidRequest: "unknown option key: {}",
        OptionNotBool = "option_not_bool" in InvalidRequest: "{} must be true or false",
        OptionNotNumber = "option_not_number" in InvalidRequest: "{} must be a number",
        OptionTooSmall = "option_too_small" in InvalidRequest: "{} must be at least {}",
        OptionTooLarge = "option_too_large" in InvalidRequest: "{} must be at most {}",
        OptionNotJson = "option_not_json" in InvalidRequest: "{} is not a valid JSON string",
        OptionNotZone = "option_not_zone" in InvalidRequest: "{} must be an IANA time zone name, such as UTC or Asia/Shanghai",
        OptionNotHttp = "option_not_http" in InvalidRequest: "{} must start with http:// or https://",
        OptionRefusedScheme = "option_refused_scheme" in InvalidRequest: "{} may not use the {} scheme",
        OptionBadShape = "option_bad_shape" in InvalidRequest: "{} does not have the expected shape: {}",
    }
}

impl ErrorCode {
    /// HTTP status of the response (its general code's).
    pub fn status(self) -> StatusCode {
        match self.general() {
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
            ErrorCode::RateLimited | ErrorCode::BudgetExceeded => StatusCode::TOO_MANY_REQUESTS,
            ErrorCode::BodyTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            ErrorCode::BodyTimeout => StatusCode::REQUEST_TIMEOUT,
            ErrorCode::BodyShare => StatusCode::TOO_MANY_REQUESTS,
            ErrorCode::NoChannel | ErrorCode::Busy => StatusCode::SERVICE_UNAVAILABLE,
            ErrorCode::UpstreamError | ErrorCode::UpstreamUnreachable => StatusCode::BAD_GATEWAY,
            ErrorCode::Internal => StatusCode::INTERNAL_SERVER_ERROR,
            ErrorCode::StorageUnavailable => StatusCode::SERVICE_UNAVAILABLE,
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// OpenAI-style `error.type` for relay responses (its general code's).
    pub fn error_type(self) -> &'static str {
        match self.general() {
            ErrorCode::Internal | ErrorCode::StorageUnavailable | ErrorCode::Busy => "server_error",
            ErrorCode::NotLoggedIn
            | ErrorCode::UserHeaderMismatch
            | ErrorCode::BadCredentials
            | ErrorCode::InvalidApiKey => "authentication_error",
            ErrorCode::InsufficientUserQuota | ErrorCode::InsufficientTokenQuota => {
                "insufficient_quota"
            }
            ErrorCode::RateLimited | ErrorCode::BodyShare | ErrorCode::BudgetExceeded => {
                "rate_limit_error"
            }
            ErrorCode::UpstreamError | ErrorCode::UpstreamUnreachable => "upstream_error",
            ErrorCode::Forbidden | ErrorCode::UserDisabled => "permission_error",
            _ => "invalid_request_error",
        }
    }

    /// The English text of a specific code with `args` in its `{}` places, in order (a missing
    /// argument stays empty); a general code says its own name.
    pub fn render(self, args: &[String]) -> String {
        let Some(template) = self.template() else {
            return self.as_str().replace('_', " ");
        };
        let mut out = String::with_capacity(template.len());
        let mut args = args.iter();
        let mut parts = template.split("{}");
        out.push_str(parts.next().unwrap_or_default());
        for part in parts {
            out.push_str(args.next().map_or("", String::as_str));
            out.push_str(part);
        }
        out
    }

    /// Every distinct code string, sorted: the list the web console keeps a text for.
    pub fn names() -> Vec<&'static str> {
        let mut names: Vec<&'static str> = Self::ALL.iter().map(|c| c.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        names
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Where the web console's tests read the list of codes.
    const WEB_LIST: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/web/src/api/error-codes.json");

    #[test]
    fn codes_are_snake_case_and_specific_ones_unique() {
        let mut seen = std::collections::BTreeSet::new();
        for code in ErrorCode::ALL {
            let name = code.as_str();
            assert!(
                name.chars().all(|c| c.is_ascii_lowercase() || c == '_'),
                "{name}"
            );
            if code.general() != *code {
                assert!(seen.insert(name), "{name} is used twice");
            }
        }
    }

    #[test]
    fn texts_take_their_arguments_in_order() {
        assert_eq!(
            ErrorCode::OptionRefusedScheme.render(&["Logo".into(), "data:".into()]),
            "Logo may not use the data: scheme"
        );
        assert_eq!(
            ErrorCode::CannotManagePeer.render(&[]),
            "you cannot manage a user whose level is equal to or higher than yours"
        );
        assert_eq!(ErrorCode::NotFound.render(&[]), "not found");
        for code in ErrorCode::ALL {
            assert_eq!(
                code.template().is_some(),
                code.general() != *code,
                "{code:?}"
            );
        }
    }

    /// The web console keeps a zh and an en text for every code in this list; its i18n test
    /// fails when one lacks a text. Regenerate with `TOLLGATE_WRITE_ERROR_CODES=1 cargo test
    /// --lib error::codes`.
    #[test]
    fn the_web_console_has_the_list_of_every_code() {
        let list = serde_json::to_string_pretty(&ErrorCode::names()).unwrap_or_default() + "\n";
        if std::env::var_os("TOLLGATE_WRITE_ERROR_CODES").is_some() {
            assert!(
                std::fs::write(WEB_LIST, &list).is_ok(),
                "writing {WEB_LIST}"
            );
        }
        let written = std::fs::read_to_string(WEB_LIST).unwrap_or_default();
        assert!(
            written == list,
            "{WEB_LIST} is not the server's list of error codes; run with \
             TOLLGATE_WRITE_ERROR_CODES=1 to rewrite it"
        );
    }
}
