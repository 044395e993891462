//! Every runtime option Tollgate knows: its key, default, kind and whether it is a secret.
//!
//! Defaults follow the spec (spec 01 §3, spec 02 §3/§9) and, where it is silent, new-api's
//! (reference §6.2), except where noted on the entry. Validation ([`normalize`]) turns the text an
//! admin sends into the text that is stored, or says why it is refused.

use super::OptionError;
use super::component_prices::{self, Shape};
use super::home_blocks::{self, Block};
use super::limit_rules;

/// How an option's text is interpreted and validated.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Kind {
    /// Free text.
    Text,
    /// `true` / `false`.
    Bool,
    /// An integer, at least `min`.
    Int {
        /// Smallest accepted value.
        min: i64,
    },
    /// A decimal number within `[min, max]`.
    Float {
        /// Smallest accepted value.
        min: f64,
        /// Largest accepted value.
        max: f64,
    },
    /// JSON text that must parse.
    Json,
    /// An address; trailing slashes are stripped; a script or local scheme is refused.
    Url,
    /// An http(s) URL or empty.
    HttpUrl,
    /// An http(s) address or empty; trailing slashes are stripped (where the console sends
    /// browsers to pay).
    HttpBase,
    /// Text the console uses as a link or image address: a script or local scheme is refused.
    Link,
    /// JSON text whose strings include links (chat links, nav links): none of its strings may
    /// use a script or local scheme.
    JsonLinks,
    /// An IANA time zone name (`Asia/Shanghai`, `UTC`).
    Zone,
    /// A home page block: JSON text of the block's shape (and, for nav links, no string with a
    /// script or local scheme).
    Block(Block),
    /// A price table of [`component_prices`] (audio ratios, tool call prices, tiers).
    Prices(Shape),
    /// Group and model rate-limit rules ([`limit_rules`]).
    LimitRules,
}

/// Schemes a browser would run or read locally; refused in every address an admin saves, so
/// a saved option can never become script in another admin's console.
pub const REFUSED_SCHEMES: [&str; 4] = ["javascript:", "data:", "vbscript:", "file:"];

/// The refused scheme `value` starts with, read as a browser reads a URL: tabs and line breaks
/// anywhere are dropped, leading control characters and spaces are skipped, case is ignored.
pub fn refused_scheme(value: &str) -> Option<&'static str> {
    let cleaned: String = value
        .chars()
        .filter(|c| !matches!(c, '\t' | '\n' | '\r'))
        .skip_while(|c| *c <= ' ')
        .take(16)
        .collect::<String>()
        .to_ascii_lowercase();
    REFUSED_SCHEMES
        .into_iter()
        .find(|scheme| cleaned.starts_with(scheme))
}

fn no_refused_scheme(key: &'static str, value: &str) -> Result<(), OptionError> {
    match refused_scheme(value) {
        Some(scheme) => Err(OptionError::RefusedScheme { key, scheme }),
        None => Ok(()),
    }
}

/// Every string inside a JSON value (object keys left out).
fn json_strings<'v>(value: &'v serde_json::Value, out: &mut Vec<&'v str>) {
    match value {
        serde_json::Value::String(s) => out.push(s),
        serde_json::Value::Array(items) => items.iter().for_each(|v| json_strings(v, out)),
        serde_json::Value::Object(map) => map.values().for_each(|v| json_strings(v, out)),
        _ => {}
    }
}

fn http_or_empty(key: &'static str, value: &str) -> Result<(), OptionError> {
    if value.is_empty() || value.starts_with("http://") || value.starts_with("https://") {
        Ok(())
    } else {
        Err(OptionError::NotHttpUrl(key))
    }
}

/// One known option.
#[derive(Debug, Clone, Copy)]
pub struct OptionDef {
    /// The key as the console sends it.
    pub key: &'static str,
    /// Value used while the admin has not saved one.
    pub default: &'static str,
    /// How the value is validated.
    pub kind: Kind,
    /// Secrets are write-only: never returned by GET /api/option/.
    pub secret: bool,
}

const fn def(key: &'static str, default: &'static str, kind: Kind) -> OptionDef {
    OptionDef {
        key,
        default,
        kind,
        secret: false,
    }
}

const fn secret(key: &'static str) -> OptionDef {
    OptionDef {
        key,
        default: "",
        kind: Kind::Text,
        secret: true,
    }
}

const B: Kind = Kind::Bool;
const T: Kind = Kind::Text;
const J: Kind = Kind::Json;
const U: Kind = Kind::Url;
const L: Kind = Kind::Link;
const JL: Kind = Kind::JsonLinks;
const N0: Kind = Kind::Int { min: 0 };
const N1: Kind = Kind::Int { min: 1 };

/// Default channel auto-disable keywords (matched case-insensitively against upstream errors).
const DISABLE_KEYWORDS: &str = "Your credit balance is too low
This organization has been disabled.
You exceeded your current quota
Permission denied
The security token included in the request is invalid
Operation not allowed
Your account is not authorized";

/// The catalog, in the order the settings page shows them.
pub const CATALOG: &[OptionDef] = &[
    // Login and registration (spec 01 §3).
    def("PasswordLoginEnabled", "true", B),
    def("PasswordRegisterEnabled", "true", B),
    def("EmailVerificationEnabled", "false", B),
    def("RegisterEnabled", "true", B),
    def("GitHubOAuthEnabled", "false", B),
    def("GitHubClientId", "", T),
    secret("GitHubClientSecret"),
    def("oidc.enabled", "false", B),
    def("oidc.client_id", "", T),
    secret("oidc.client_secret"),
    def("oidc.well_known", "", Kind::HttpUrl),
    def("oidc.authorization_endpoint", "", L),
    def("oidc.token_endpoint", "", L),
    def("oidc.user_info_endpoint", "", L),
    def("LinuxDOOAuthEnabled", "false", B),
    def("LinuxDOClientId", "", T),
    secret("LinuxDOClientSecret"),
    def("LinuxDOMinimumTrustLevel", "0", N0),
    def("WeChatAuthEnabled", "false", B),
    def("WeChatServerAddress", "", U),
    secret("WeChatServerToken"),
    def("WeChatAccountQRCodeImageURL", "", L),
    def("TelegramOAuthEnabled", "false", B),
    secret("TelegramBotToken"),
    def("TelegramBotName", "", T),
    def("TurnstileCheckEnabled", "false", B),
    def("TurnstileSiteKey", "", T),
    secret("TurnstileSecretKey"),
    def("EmailDomainRestrictionEnabled", "false", B),
    def("EmailAliasRestrictionEnabled", "false", B),
    def(
        "EmailDomainWhitelist",
        "gmail.com,163.com,126.com,qq.com,outlook.com,hotmail.com,icloud.com,yahoo.com,foxmail.com",
        T,
    ),
    // Mail.
    def("SMTPServer", "", T),
    def("SMTPPort", "587", N1),
    def("SMTPAccount", "", T),
    def("SMTPFrom", "", T),
    secret("SMTPToken"),
    def("SMTPSSLEnabled", "false", B),
    def("SMTPAllowPlaintext", "false", B),
    // Server and payment.
    def("ServerAddress", "http://localhost:3000", U),
    def("WorkerUrl", "", U),
    secret("WorkerValidKey"),
    def("PayAddress", "", Kind::HttpBase),
    def("EpayId", "", T),
    secret("EpayKey"),
    def("CustomCallbackAddress", "", U),
    def(
        "Price",
        "7.3",
        Kind::Float {
            min: 0.0,
            max: f64::MAX,
        },
    ),
    def("MinTopUp", "1", N1),
    def("TopupGroupRatio", r#"{"default":1,"vip":1,"svip":1}"#, J),
    def("TopUpLink", "", L),
    // Content and branding.
    def("Notice", "", T),
    def("SystemName", "Tollgate", T),
    def("Logo", "", L),
    def("Footer", "", T),
    def("About", "", T),
    def("HomePageContent", "", T),
    def("Providers", "[]", Kind::Block(Block::Providers)),
    def("CustemNavLinks", "[]", Kind::Block(Block::NavLinks)),
    def("TypingList", "[]", Kind::Block(Block::TypingList)),
    def("Advantages", "[]", Kind::Block(Block::Advantages)),
    def(
        "ModelDescriptions",
        "{}",
        Kind::Block(Block::ModelDescriptions),
    ),
    def("ImageReadProxy", "", L),
    // General operation (spec 02 §3).
    def("general_setting.docs_link", "", L),
    def("QuotaPerUnit", "500000", N1),
    def("RetryTimes", "0", N0),
    def("DisplayInCurrencyEnabled", "true", B),
    def("DisplayTokenStatEnabled", "true", B),
    def("DefaultCollapseSidebar", "false", B),
    def("DemoSiteEnabled", "false", B),
    def("SelfUseModeEnabled", "false", B),
    // Drawing and tasks default off: Tollgate does not relay Midjourney/Suno yet, so the
    // console must not offer their pages (new-api defaults them on).
    def("DrawingEnabled", "false", B),
    def("TaskEnabled", "false", B),
    def("MjNotifyEnabled", "false", B),
    def("MjAccountFilterEnabled", "false", B),
    def("MjForwardUrlEnabled", "true", B),
    def("MjModeClearEnabled", "false", B),
    def("MjActionCheckSuccessEnabled", "true", B),
    // Tollgate's own (new-api's TASK_TIMEOUT_MINUTES environment variable): an asynchronous task
    // still unfinished after this many minutes is failed and refunded.
    def("TaskTimeoutMinutes", "1440", N1),
    def("CheckSensitiveEnabled", "false", B),
    def("CheckSensitiveOnPromptEnabled", "false", B),
    def("StopOnSensitiveEnabled", "true", B),
    def("SensitiveWords", "", T),
    def("LogConsumeEnabled", "true", B),
    // Tollgate's own: a relay request that fails after admission writes an error row (type 5).
    def("ErrorLogEnabled", "true", B),
    def("DataExportEnabled", "true", B),
    def("DataExportInterval", "5", N1),
    def("DataExportDefaultTime", "hour", T),
    // Tollgate's own: delete logs older than this many days, hourly (0 = off, the default).
    def("LogRetentionDays", "0", N0),
    def(
        "ChannelDisableThreshold",
        "5",
        Kind::Float {
            min: 0.0,
            max: f64::MAX,
        },
    ),
    def("QuotaRemindThreshold", "1000", N0),
    def("AutomaticDisableChannelEnabled", "false", B),
    def("AutomaticEnableChannelEnabled", "false", B),
    def("AutomaticDisableKeywords", DISABLE_KEYWORDS, T),
    def("QuotaForNewUser", "0", N0),
    def("PreConsumedQuota", "500", N0),
    def("QuotaForInviter", "0", N0),
    def("QuotaForInvitee", "0", N0),
    def("StreamCacheQueueLength", "0", N0),
    def("Chats", "[]", JL),
    // Pricing and groups.
    def("GroupRatio", r#"{"default":1,"vip":1,"svip":1}"#, J),
    def(
        "UserUsableGroups",
        r#"{"default":"默认分组","vip":"vip分组"}"#,
        J,
    ),
    def("ModelPrice", "{}", J),
    def("ModelRatio", "{}", J),
    def("CacheRatio", "{}", J),
    def("CompletionRatio", "{}", J),
    // Tollgate's own: the most output tokens each model can produce (over a built-in table);
    // bounds a reservation when the request sets no max_tokens.
    def("ModelMaxOutput", "{}", J),
    // Tollgate's own (P16): what the ratio formula alone does not price; each text is the
    // whole table, seeded with published prices (see component_prices).
    def(
        "AudioRatio",
        component_prices::DEFAULT_AUDIO_RATIO,
        Kind::Prices(Shape::RatioMap),
    ),
    def(
        "AudioCompletionRatio",
        component_prices::DEFAULT_AUDIO_COMPLETION_RATIO,
        Kind::Prices(Shape::RatioMap),
    ),
    def(
        "ToolCallPrice",
        component_prices::DEFAULT_TOOL_CALL_PRICE,
        Kind::Prices(Shape::ToolPrices),
    ),
    def(
        "ModelPriceTiers",
        component_prices::DEFAULT_MODEL_PRICE_TIERS,
        Kind::Prices(Shape::Tiers),
    ),
    // The ratio of a model without a price, when self-use mode or the user's
    // accept_unset_model_ratio_model admits it (new-api's 37.5): never free.
    def(
        "DefaultModelRatio",
        "37.5",
        Kind::Float { min: 0.0, max: 1e9 },
    ),
    // Tollgate's own: output tokens reserved for a request without max_tokens (at most the
    // model's max output), and the most output admission asks to be covered by the balance.
    def("DefaultOutputReserve", "4096", N1),
    // Tollgate's own: the most output tokens Tollgate writes into an upstream body for a model
    // with no known maximum (ModelMaxOutput) when the caller's balance lowers the limit, and
    // the output reserved for such a model when the request sets no limit.
    def("DefaultOutputCap", "32768", N1),
    // Tollgate's own: units a streamed answer may cost past its reservation before the
    // mid-stream ceiling ends it (0: the reservation is the ceiling).
    def("DebtAllowance", "0", N0),
    // Tollgate's own (P15): the IANA time zone in which calendar budget windows (day, week,
    // month) begin.
    def("BudgetTimeZone", "UTC", Kind::Zone),
    // Tollgate's own: free token counts (count_tokens, :countTokens) per API key per minute
    // (0 = no limit).
    def("CountTokensRateLimit", "60", N0),
    // Tollgate's own: MiB of relay request bodies handled at once (0 = no limit); past it new
    // requests get 503 until memory frees.
    def("RelayBodyBudgetMB", "1024", N0),
    // Tollgate's own: MiB of request bodies one API key may have in flight (0 = no limit); past
    // it that key's requests get 429.
    def("RelayBodyBudgetPerKeyMB", "128", N0),
    // Rate limits.
    def("ModelRequestRateLimitEnabled", "false", B),
    def("ModelRequestRateLimitCount", "0", N0),
    def("ModelRequestRateLimitSuccessCount", "1000", N1),
    def("ModelRequestRateLimitDurationMinutes", "1", N0),
    def("ModelRequestRateLimitGroup", "{}", J),
    // Tollgate's own (P15): group and model rules of the rate-limit engine (a JSON list; see
    // limit_rules).
    def("RateLimitRules", "[]", Kind::LimitRules),
    // Tollgate's own (P15 item 4): sticky routing for prompt caches — the most conversations a
    // node remembers (0 = off) and how long one is kept after its last request.
    def("StickyRoutingMaxEntries", "100000", N0),
    def("StickyRoutingTtlSeconds", "3600", N0),
    // Provider settings.
    def("gemini.safety_settings", "{}", J),
    def("gemini.version_settings", "{}", J),
    def("gemini.supported_imagine_models", "[]", J),
    def("gemini.thinking_adapter_enabled", "false", B),
    def(
        "gemini.thinking_adapter_budget_tokens_percentage",
        "0.6",
        Kind::Float { min: 0.1, max: 1.0 },
    ),
    def("claude.model_headers_settings", "{}", J),
    def("claude.thinking_adapter_enabled", "true", B),
    def("claude.default_max_tokens", r#"{"default":8192}"#, J),
    def(
        "claude.thinking_adapter_budget_tokens_percentage",
        "0.8",
        Kind::Float { min: 0.1, max: 1.0 },
    ),
    def("global.pass_through_request_enabled", "false", B),
    def("general_setting.ping_interval_enabled", "false", B),
    def("general_setting.ping_interval_seconds", "60", N1),
];

/// Looks a key up in the catalog.
pub fn find(key: &str) -> Option<&'static OptionDef> {
    CATALOG.iter().find(|d| d.key == key)
}

/// Validates `value` for `key` and returns the text to store.
pub fn normalize(key: &str, value: &str) -> Result<String, OptionError> {
    let def = find(key).ok_or_else(|| OptionError::UnknownKey(key.to_owned()))?;
    let key = def.key;
    match def.kind {
        Kind::Text => Ok(value.to_owned()),
        Kind::Bool => match value.trim() {
            "true" => Ok("true".into()),
            "false" => Ok("false".into()),
            _ => Err(OptionError::NotBool(key)),
        },
        Kind::Int { min } => {
            let n: i64 = value
                .trim()
                .parse()
                .map_err(|_| OptionError::NotInteger(key))?;
            if n < min {
                return Err(OptionError::TooSmall {
                    key,
                    min: min.to_string(),
                });
            }
            Ok(n.to_string())
        }
        Kind::Float { min, max } => {
            let n: f64 = value
                .trim()
                .parse()
                .map_err(|_| OptionError::NotNumber(key))?;
            if !n.is_finite() {
                return Err(OptionError::NotNumber(key));
            }
            if n < min {
                return Err(OptionError::TooSmall {
                    key,
                    min: min.to_string(),
                });
            }
            if n > max {
                return Err(OptionError::TooLarge {
                    key,
                    max: max.to_string(),
                });
            }
            Ok(value.trim().to_owned())
        }
        Kind::Json => {
            serde_json::from_str::<serde_json::Value>(value)
                .map_err(|_| OptionError::NotJson(key))?;
            Ok(value.to_owned())
        }
        Kind::Url => {
            no_refused_scheme(key, value)?;
            Ok(value.trim().trim_end_matches('/').to_owned())
        }
        Kind::HttpUrl => {
            let v = value.trim();
            http_or_empty(key, v)?;
            Ok(v.to_owned())
        }
        Kind::HttpBase => {
            let v = value.trim().trim_end_matches('/');
            http_or_empty(key, v)?;
            Ok(v.to_owned())
        }
        Kind::Link => {
            no_refused_scheme(key, value)?;
            Ok(value.to_owned())
        }
        Kind::JsonLinks => {
            no_refused_link(key, value)?;
            Ok(value.to_owned())
        }
        Kind::Zone => {
            let v = value.trim();
            jiff::tz::TimeZone::get(v).map_err(|_| OptionError::NotZone(key))?;
            Ok(v.to_owned())
        }
        Kind::Block(block) => {
            serde_json::from_str::<serde_json::Value>(value)
                .map_err(|_| OptionError::NotJson(key))?;
            home_blocks::check(block, value)
                .map_err(|reason| OptionError::BadShape { key, reason })?;
            if block == Block::NavLinks {
                no_refused_link(key, value)?;
            }
            Ok(value.to_owned())
        }
        Kind::Prices(shape) => {
            serde_json::from_str::<serde_json::Value>(value)
                .map_err(|_| OptionError::NotJson(key))?;
            component_prices::check(shape, value)
                .map_err(|reason| OptionError::BadShape { key, reason })?;
            Ok(value.to_owned())
        }
        Kind::LimitRules => {
            limit_rules::parse(value)?;
            Ok(value.to_owned())
        }
    }
}

/// JSON text none of whose strings uses a script or local scheme.
fn no_refused_link(key: &'static str, value: &str) -> Result<(), OptionError> {
    let parsed: serde_json::Value =
        serde_json::from_str(value).map_err(|_| OptionError::NotJson(key))?;
    let mut strings = Vec::new();
    json_strings(&parsed, &mut strings);
    strings
        .into_iter()
        .try_for_each(|s| no_refused_scheme(key, s))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn script_and_local_schemes_are_refused_in_every_address() {
        for bad in [
            "javascript:alert(1)",
            "  JavaScript:alert(1)",
            "java\tscript:alert(1)",
            "\u{1}javascript:alert(1)",
            "data:text/html,<script>alert(1)</script>",
            "VBScript:msgbox",
            "file:///etc/passwd",
        ] {
            for key in [
                "ServerAddress",
                "Logo",
                "TopUpLink",
                "general_setting.docs_link",
            ] {
                assert!(
                    matches!(normalize(key, bad), Err(OptionError::RefusedScheme { .. })),
                    "{key} = {bad:?} must be refused"
                );
            }
        }
        let chats = r#"[{"ChatGPT Next Web":"javascript:fetch('/api/user/token')"}]"#;
        assert!(matches!(
            normalize("Chats", chats),
            Err(OptionError::RefusedScheme { .. })
        ));
        let nav = r#"[{"text":"x","item_key":"x","url":"data:text/html,hi"}]"#;
        assert!(normalize("CustemNavLinks", nav).is_err());
        let fine = r#"[{"Lobe":"https://chat.example.com/?settings={\"key\":\"sk-{key}\"}"}]"#;
        assert!(normalize("Chats", fine).is_ok());
        assert_eq!(
            normalize("Logo", "https://cdn.example.com/logo.png").as_deref(),
            Ok("https://cdn.example.com/logo.png")
        );
        assert_eq!(normalize("Logo", "/logo.png").as_deref(), Ok("/logo.png"));
    }

    #[test]
    fn every_default_passes_its_own_validation() {
        for d in CATALOG {
            let stored = normalize(d.key, d.default).unwrap_or_else(|e| panic!("{}: {e}", d.key));
            assert_eq!(
                stored, d.default,
                "{} default must be stored unchanged",
                d.key
            );
        }
    }

    #[test]
    fn keys_are_unique() {
        let mut keys: Vec<_> = CATALOG.iter().map(|d| d.key).collect();
        keys.sort_unstable();
        let before = keys.len();
        keys.dedup();
        assert_eq!(before, keys.len());
    }

    #[test]
    fn secrets_are_the_write_only_keys() {
        let secrets: Vec<_> = CATALOG.iter().filter(|d| d.secret).map(|d| d.key).collect();
        for key in [
            "GitHubClientSecret",
            "oidc.client_secret",
            "LinuxDOClientSecret",
            "WeChatServerToken",
            "TelegramBotToken",
            "TurnstileSecretKey",
            "SMTPToken",
            "EpayKey",
            "WorkerValidKey",
        ] {
            assert!(secrets.contains(&key), "{key} must be secret");
        }
        assert!(
            !secrets.contains(&"TurnstileSiteKey"),
            "the site key is public"
        );
    }

    #[test]
    fn validation_rules() {
        assert_eq!(
            normalize("RegisterEnabled", "false").as_deref(),
            Ok("false")
        );
        assert!(matches!(
            normalize("RegisterEnabled", "yes"),
            Err(OptionError::NotBool(_))
        ));
        assert!(matches!(
            normalize("GroupRatio", "{bad"),
            Err(OptionError::NotJson(_))
        ));
        assert!(
            normalize("GroupRatio", "{bad")
                .is_err_and(|e| e.to_string().contains("not a valid JSON string"))
        );
        assert!(matches!(
            normalize("RetryTimes", "-1"),
            Err(OptionError::TooSmall { .. })
        ));
        assert!(matches!(
            normalize("RetryTimes", "x"),
            Err(OptionError::NotInteger(_))
        ));
        assert!(matches!(
            normalize("Price", "NaN"),
            Err(OptionError::NotNumber(_))
        ));
        assert!(matches!(
            normalize("MinTopUp", "0"),
            Err(OptionError::TooSmall { .. })
        ));
        assert!(matches!(
            normalize("gemini.thinking_adapter_budget_tokens_percentage", "1.5"),
            Err(OptionError::TooLarge { .. })
        ));
        assert_eq!(
            normalize("ServerAddress", "https://gw.example.com//").as_deref(),
            Ok("https://gw.example.com")
        );
        assert!(matches!(
            normalize("oidc.well_known", "ftp://x"),
            Err(OptionError::NotHttpUrl(_))
        ));
        assert!(matches!(
            normalize("PayAddress", "ftp://pay.example.com"),
            Err(OptionError::NotHttpUrl(_))
        ));
        assert_eq!(
            normalize("PayAddress", " https://pay.example.com/ ").as_deref(),
            Ok("https://pay.example.com")
        );
        assert!(matches!(
            normalize("NoSuchKey", "1"),
            Err(OptionError::UnknownKey(_))
        ));
    }
}
