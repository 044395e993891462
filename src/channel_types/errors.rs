//! Providers' documented error codes, where an upstream's HTTP status alone does not say what
//! an error means: Zhipu answers an account in arrears with 429 and code 1113, as it answers a
//! rate limit; Workers AI answers a used-up daily allocation with 429 and code 3036. Each rule
//! set cites the provider's error-code page; the README's provider table lists them per type.
//!
//! The relay's attempt loop asks [`judge`] about every upstream error answer and takes, in
//! place of the status's own meaning:
//! - [`ErrorKind::Balance`] and [`ErrorKind::Auth`]: the channel's account or key is unusable —
//!   reported to the channel pool as a 401 (auto-ban disables the key, or the channel with its
//!   last key) and the next channel is tried;
//! - [`ErrorKind::RateLimit`]: a 429 — the next channel is tried, the channel's health is not
//!   touched;
//! - [`ErrorKind::Client`]: the client's request is wrong — answered 400 at once, no other
//!   channel tried, the channel's health untouched.
//!
//! Codes are read from where these providers put them: `error.code`, a top-level `code`,
//! `base_resp.status_code` (MiniMax), `errors[].code` (Cloudflare's API envelope), and a
//! `(NNNN)` at the end of `error.message` (MiniMax's OpenAI-compatible layer).

use serde_json::Value;

/// What an upstream error means for the relay.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The provider account's balance or allocation is used up.
    Balance,
    /// The key or the account is refused (invalid, expired, locked).
    Auth,
    /// The channel's rate limit is reached; another channel may serve.
    RateLimit,
    /// The client's request is wrong; no channel would serve it.
    Client,
}

impl ErrorKind {
    /// The kind's name in the README.
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::Balance => "balance exhausted",
            ErrorKind::Auth => "key refused",
            ErrorKind::RateLimit => "rate limit",
            ErrorKind::Client => "client error",
        }
    }
}

/// One documented error: its code as the provider writes it, and what it means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ErrorRule {
    /// The provider's code (compared as text: `1113`, `rpm_rate_limit_exceeded`).
    pub code: &'static str,
    /// What it means.
    pub kind: ErrorKind,
}

/// The documented error codes of some channel types.
#[derive(Debug, Clone, Copy)]
pub struct ProviderErrors {
    /// The channel types that answer with these codes.
    pub types: &'static [i32],
    /// The provider's page listing them.
    pub doc: &'static str,
    /// The codes.
    pub rules: &'static [ErrorRule],
}

const fn rule(code: &'static str, kind: ErrorKind) -> ErrorRule {
    ErrorRule { code, kind }
}

use ErrorKind::{Auth, Balance, Client, RateLimit};

/// Every type's documented codes.
pub const PROVIDER_ERRORS: &[ProviderErrors] = &[
    ProviderErrors {
        // Zhipu's BigModel API: HTTP 401 for authentication, 429 for both rate limits and an
        // account in arrears or locked, 400 for parameters; the business code says which.
        types: &[16, 26],
        doc: "https://docs.bigmodel.cn/cn/faq/api-code",
        rules: &[
            rule("1001", Auth),
            rule("1002", Auth),
            rule("1003", Auth),
            rule("1004", Auth),
            rule("1110", Auth),
            rule("1111", Auth),
            rule("1112", Auth),
            rule("1113", Balance),
            rule("1121", Auth),
            rule("1302", RateLimit),
            rule("1303", RateLimit),
            rule("1304", RateLimit),
            rule("1305", RateLimit),
            rule("1210", Client),
            rule("1211", Client),
            rule("1213", Client),
            rule("1214", Client),
            rule("1261", Client),
            rule("1301", Client),
        ],
    },
    ProviderErrors {
        // Baidu's AI platform codes, which Qianfan v1 answers as `error_code` in HTTP 200
        // bodies: the account's total and daily request allowances used up (19, 17), the
        // per-second and cluster limits (18, 4), the key refused (14, 6), the request's
        // parameters (100, 336001): the error-code table of the ERNIE chat pages and of Baidu
        // AI's common codes. An access token refused (110 invalid, 111 expired) is not the
        // key's fault: the adaptor forgets the token and the next channel is tried (503,
        // `relay::wire::baidu::error_status`); the next request exchanges the key again.
        types: &[15],
        doc: "https://cloud.baidu.com/doc/WENXINWORKSHOP/s/jlil56u11",
        rules: &[
            rule("17", Balance),
            rule("19", Balance),
            rule("6", Auth),
            rule("14", Auth),
            rule("4", RateLimit),
            rule("18", RateLimit),
            rule("100", Client),
            rule("336001", Client),
        ],
    },
    ProviderErrors {
        // Dify's Chat App API errors (`code` beside `message` and `status`): the hosted model's
        // quota used up, the app unusable (its configuration or model credentials), the
        // request's parameters; a refused key is HTTP 401 and a rate limit 429.
        types: &[37],
        doc: "https://github.com/langgenius/dify/blob/main/web/app/components/develop/template/template_chat.en.mdx",
        rules: &[
            rule("provider_quota_exceeded", Balance),
            rule("app_unavailable", Auth),
            rule("provider_not_initialize", Auth),
            rule("invalid_param", Client),
        ],
    },
    ProviderErrors {
        // Coze's API codes (`{code, msg}` before a stream, an `error` event or a failed chat's
        // `last_error` in it): the account's Coze token balance, pay-as-you-go balance or model
        // service in arrears (4011, 4019, 4022); the personal access token invalid or without
        // the permission (4100, 4101); the bot's daily limit, the system's and the purchased RPM
        // (4008, 4009, 4020); the request's parameters, messages and prompt length (4000, 4004,
        // 4005, 4010). Other codes (an unknown or unpublished bot, the model's error) → 502, the
        // next channel; 5000 → 500.
        types: &[49],
        doc: "https://www.coze.cn/open/docs/developer_guides/coze_error_codes",
        rules: &[
            rule("4011", Balance),
            rule("4019", Balance),
            rule("4022", Balance),
            rule("4100", Auth),
            rule("4101", Auth),
            rule("4008", RateLimit),
            rule("4009", RateLimit),
            rule("4020", RateLimit),
            rule("4000", Client),
            rule("4004", Client),
            rule("4005", Client),
            rule("4010", Client),
        ],
    },
    ProviderErrors {
        // Workers AI's errors (in Cloudflare's `errors[]` envelope).
        types: &[39],
        doc: "https://developers.cloudflare.com/workers-ai/platform/errors/",
        rules: &[
            rule("3036", Balance),
            rule("3023", Auth),
            rule("10000", Auth),
            rule("3040", RateLimit),
            rule("3003", Client),
            rule("3006", Client),
            rule("3042", Client),
            rule("5004", Client),
            rule("5007", Client),
        ],
    },
    ProviderErrors {
        // MiniMax's error codes (`base_resp.status_code`, in HTTP 200 answers too, or `(code)`
        // after the message of its OpenAI-compatible layer): insufficient balance, not
        // authorized, rate limit, input or output content flagged as sensitive, invalid
        // parameters; 1000, 1001, 1024 and 1033 (unknown, timeout, internal, system errors:
        // "retry later") go to the next channel as the upstream's failures.
        types: &[35],
        doc: "https://platform.minimax.io/docs/api-reference/errorcode",
        rules: &[
            rule("1008", Balance),
            rule("1004", Auth),
            rule("1002", RateLimit),
            rule("1026", Client),
            rule("1027", Client),
            rule("2013", Client),
        ],
    },
    ProviderErrors {
        // Qianfan ModelBuilder's v2 errors (`error.code`); a balance code is not documented for
        // the v2 inference API.
        types: &[46],
        doc: "https://ai.baidu.com/ai-doc/AppBuilder/4m8sgh88y",
        rules: &[
            rule("rpm_rate_limit_exceeded", RateLimit),
            rule("tpm_rate_limit_exceeded", RateLimit),
            rule("malformed_json", Client),
            rule("invalid_model", Client),
            rule("invalid_messages", Client),
            rule("characters_too_long", Client),
            rule("tokens_too_long", Client),
        ],
    },
    ProviderErrors {
        // Tencent Hunyuan (API 3.0; answered in HTTP 200 bodies, turned into statuses by
        // `relay::adaptor::native`): the product's codes (the official SDK's
        // hunyuan/v20230901/errors.go) and TencentCloud's common ones.
        types: &[23],
        doc: "https://github.com/TencentCloud/tencentcloud-sdk-go/blob/master/tencentcloud/hunyuan/v20230901/errors.go",
        rules: &[
            rule("ResourceUnavailable.InArrears", Balance),
            rule("ResourceUnavailable.LowBalance", Balance),
            rule("ResourceUnavailable.StopUsing", Balance),
            rule("ResourceUnavailable.NotExist", Balance),
            rule("ResourceInsufficient.ChargeResourceExhaust", Balance),
            rule("FailedOperation.ResourcePackExhausted", Balance),
            rule("FailedOperation.FreeResourcePackExhausted", Balance),
            rule("FailedOperation.ServiceStopArrears", Balance),
            rule("FailedOperation.ServiceStop", Balance),
            rule("FailedOperation.ServiceNotActivated", Balance),
            rule("AuthFailure.SignatureFailure", Auth),
            rule("AuthFailure.SignatureExpire", Auth),
            rule("AuthFailure.SecretIdNotFound", Auth),
            rule("AuthFailure.InvalidSecretId", Auth),
            rule("AuthFailure.TokenFailure", Auth),
            rule("FailedOperation.UserUnAuthError", Auth),
            rule("LimitExceeded", RateLimit),
            rule("RequestLimitExceeded", RateLimit),
            rule("FailedOperation.EngineServerLimitExceeded", RateLimit),
            rule("InvalidParameter", Client),
            rule("InvalidParameter.InvalidParameter", Client),
            rule("InvalidParameterValue", Client),
            rule("InvalidParameterValue.Model", Client),
            rule("InvalidParameterValue.ParameterValueError", Client),
            rule("OperationDenied.TextIllegalDetected", Client),
            rule("OperationDenied.ImageIllegalDetected", Client),
        ],
    },
    ProviderErrors {
        // iFlytek Spark (WebSocket; `header.code` of an answer frame, turned into statuses by
        // `relay::adaptor::spark`): the service's error codes.
        types: &[18],
        doc: "https://xfyun.cn/doc/spark/接口说明.html",
        rules: &[
            // The application's authorization: no grant for the version, tokens used up.
            rule("11200", Balance),
            rule("10016", Balance),
            rule("10015", Auth),
            rule("10006", RateLimit),
            rule("10007", RateLimit),
            rule("10110", RateLimit),
            rule("11201", RateLimit),
            rule("11202", RateLimit),
            rule("11203", RateLimit),
            rule("10003", Client),
            rule("10004", Client),
            rule("10005", Client),
            rule("10013", Client),
            rule("10014", Client),
            rule("10019", Client),
            rule("10021", Client),
            rule("10907", Client),
        ],
    },
];

/// The types that also answer errors with HTTP 200, their code in the body: MiniMax's
/// `base_resp` `{status_code, status_msg}` (status code 0 is success), which its
/// OpenAI-compatible chat answers carry too. The relay reads such a type's whole 200 answers,
/// and the first event of its 200 streams, for an error (`relay::adaptor::answer::error_in_ok`). Baidu v1 and Hunyuan, which do the
/// same, are read by their own adaptors.
pub const ERRORS_IN_OK_ANSWERS: &[i32] = &[35];

/// Whether `channel_type` answers errors with HTTP 200 ([`ERRORS_IN_OK_ANSWERS`]).
pub fn in_ok_answers(channel_type: i32) -> bool {
    ERRORS_IN_OK_ANSWERS.contains(&channel_type)
}

/// The documented codes of `channel_type`, if it has any.
pub fn of(channel_type: i32) -> Option<&'static ProviderErrors> {
    PROVIDER_ERRORS
        .iter()
        .find(|p| p.types.contains(&channel_type))
}

/// A code's text: strings as they are, numbers as written.
fn text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// The codes an error body carries (see the module header for where they are read).
fn codes(body: &str) -> Vec<String> {
    let Ok(v) = serde_json::from_str::<Value>(body) else {
        return Vec::new();
    };
    let mut found: Vec<String> = [
        &v["error"]["code"],
        &v["code"],
        &v["error_code"],
        &v["base_resp"]["status_code"],
    ]
    .into_iter()
    .filter_map(text)
    .collect();
    for e in v["errors"].as_array().into_iter().flatten() {
        found.extend(text(&e["code"]));
    }
    let message = v["error"]["message"]
        .as_str()
        .or_else(|| v["message"].as_str());
    if let Some(inner) = message
        .and_then(|m| m.trim_end().strip_suffix(')'))
        .and_then(|m| m.rsplit_once('('))
        .map(|(_, code)| code)
        .filter(|code| !code.is_empty() && code.bytes().all(|b| b.is_ascii_digit()))
    {
        found.push(inner.to_owned());
    }
    found
}

/// What the error answer `body` of a `channel_type` upstream means, when the provider documents
/// its code; `None`: the status decides as for any provider.
pub fn classify(channel_type: i32, body: &str) -> Option<ErrorKind> {
    let provider = of(channel_type)?;
    let codes = codes(body);
    provider
        .rules
        .iter()
        .find(|r| codes.iter().any(|c| c == r.code))
        .map(|r| r.kind)
}

/// How the relay takes one upstream error answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Judged {
    /// The status reported to the channel pool's health rules.
    pub health: u16,
    /// The status the client sees (before the channel's status-code mapping).
    pub client: u16,
    /// Whether another channel may be tried.
    pub retry: bool,
}

/// [`classify`] turned into what the relay does (see the module header); `None` when the
/// provider documents nothing for this answer.
pub fn judge(channel_type: i32, status: u16, body: &str) -> Option<Judged> {
    let kind = classify(channel_type, body)?;
    Some(match kind {
        Balance | Auth => Judged {
            health: 401,
            client: status,
            retry: true,
        },
        RateLimit => Judged {
            health: 429,
            client: 429,
            retry: true,
        },
        Client => Judged {
            health: 400,
            client: 400,
            retry: false,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zhipu_arrears_and_rate_limits_share_429_and_differ_by_code() {
        let arrears = r#"{"error":{"code":"1113","message":"您的账户已欠费，请充值后重试"}}"#;
        let limited = r#"{"error":{"code":"1302","message":"您当前使用该API的并发数过高"}}"#;
        assert_eq!(classify(16, arrears), Some(Balance));
        assert_eq!(classify(26, limited), Some(RateLimit));
        assert_eq!(
            judge(16, 429, arrears),
            Some(Judged {
                health: 401,
                client: 429,
                retry: true
            })
        );
        let sensitive = r#"{"error":{"code":"1301","message":"系统检测到输入或生成内容可能包含不安全或敏感内容"}}"#;
        assert_eq!(
            judge(16, 400, sensitive),
            Some(Judged {
                health: 400,
                client: 400,
                retry: false
            })
        );
        // Another type's codes mean nothing here.
        assert_eq!(classify(1, arrears), None);
        assert_eq!(classify(16, r#"{"error":{"code":"9999"}}"#), None);
        assert_eq!(classify(16, "not json"), None);
    }

    #[test]
    fn codes_are_read_where_each_provider_puts_them() {
        let cloudflare =
            r#"{"success":false,"errors":[{"code":3036,"message":"Account limited"}]}"#;
        assert_eq!(classify(39, cloudflare), Some(Balance));
        let minimax = r#"{"base_resp":{"status_code":1008,"status_msg":"insufficient balance"}}"#;
        assert_eq!(classify(35, minimax), Some(Balance));
        let minimax_compat = r#"{"error":{"type":"insufficient_balance_error","message":"insufficient balance (1008)"}}"#;
        assert_eq!(classify(35, minimax_compat), Some(Balance));
        let qianfan = r#"{"error":{"code":"rpm_rate_limit_exceeded","message":"Rate limit reached for RPM","type":"rate_limit_error"}}"#;
        assert_eq!(classify(46, qianfan), Some(RateLimit));
    }

    #[test]
    fn every_documented_type_is_a_table_type() {
        for provider in PROVIDER_ERRORS {
            assert!(provider.doc.starts_with("https://"));
            for id in provider.types {
                assert!(super::super::by_id(*id).is_some(), "type {id}");
                assert_eq!(
                    PROVIDER_ERRORS
                        .iter()
                        .filter(|p| p.types.contains(id))
                        .count(),
                    1,
                    "type {id} has one rule set"
                );
            }
        }
    }
}
