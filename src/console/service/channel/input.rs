//! What the console sends for a channel ([`ChannelInput`], every field optional) and the
//! validation that turns it into a stored [`Channel`] (spec 02 §5, new channel defaults §9).
//!
//! Absent fields keep the current value (on create: the default), so a full edit form and a
//! "status/priority/weight only" update go through the same rules. An empty key keeps the old
//! key. Lenient shapes are accepted where the console is loose: numbers as strings, JSON fields
//! as objects or as text, models and groups as comma text or arrays.

use serde::{Deserialize, Deserializer};
use serde_json::Value;
use tollgate_storage::channels::{Channel, STATUS_ENABLED, split_list};
use tollgate_storage::secret::Secret;
use tollgate_storage::{ChannelId, Quota};

use crate::channel_types::{self, ChannelType, FieldKind, Target, keys};
use crate::error::{ConsoleError, ErrorCode};
use crate::outbound::proxy::{ProxyError, validate_proxy};

/// Lowest accepted priority.
pub const MIN_PRIORITY: i64 = -999;

/// A channel as sent by the console; `None` = not sent.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct ChannelInput {
    /// Id (updates only).
    #[serde(deserialize_with = "int")]
    pub id: Option<i64>,
    /// Name.
    pub name: Option<String>,
    /// Type id.
    #[serde(rename = "type", deserialize_with = "int")]
    pub channel_type: Option<i64>,
    /// Key(s), one per line; write-only.
    pub key: Option<Secret>,
    /// OpenAI organization.
    pub openai_organization: Option<String>,
    /// Max input tokens.
    #[serde(deserialize_with = "int")]
    pub max_input_tokens: Option<i64>,
    /// Base URL.
    pub base_url: Option<String>,
    /// Type-specific extra.
    pub other: Option<String>,
    /// JSON object text.
    #[serde(deserialize_with = "json_text")]
    pub model_mapping: Option<String>,
    /// JSON object text.
    #[serde(deserialize_with = "json_text")]
    pub status_code_mapping: Option<String>,
    /// Comma text or list.
    #[serde(deserialize_with = "list")]
    pub models: Option<String>,
    /// Comma text or list.
    #[serde(deserialize_with = "list")]
    pub group: Option<String>,
    /// The editor's list form of `group` (wins when both are sent).
    #[serde(deserialize_with = "list")]
    pub groups: Option<String>,
    /// 1 or 0.
    #[serde(deserialize_with = "int")]
    pub auto_ban: Option<i64>,
    /// Test model.
    pub test_model: Option<String>,
    /// Proxy URL.
    pub proxy: Option<String>,
    /// Priority.
    #[serde(deserialize_with = "int")]
    pub priority: Option<i64>,
    /// Weight.
    #[serde(deserialize_with = "int")]
    pub weight: Option<i64>,
    /// Tag.
    pub tag: Option<String>,
    /// JSON object text.
    #[serde(deserialize_with = "json_text")]
    pub setting: Option<String>,
    /// JSON object text.
    #[serde(deserialize_with = "json_text")]
    pub param_override: Option<String>,
    /// JSON object text.
    #[serde(deserialize_with = "json_text")]
    pub other_info: Option<String>,
    /// 1, 2 or 3.
    #[serde(deserialize_with = "int")]
    pub status: Option<i64>,
}

pub(super) fn int<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
    match Option::<Value>::deserialize(d)? {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => n
            .as_i64()
            .or_else(|| n.as_f64().filter(|f| f.fract() == 0.0).map(|f| f as i64))
            .map(Some)
            .ok_or_else(|| serde::de::Error::custom(format!("{n} is not an integer"))),
        Some(Value::String(s)) if s.trim().is_empty() => Ok(None),
        Some(Value::String(s)) => s
            .trim()
            .parse()
            .map(Some)
            .map_err(|_| serde::de::Error::custom(format!("{s:?} is not an integer"))),
        Some(Value::Bool(b)) => Ok(Some(i64::from(b))),
        Some(other) => Err(serde::de::Error::custom(format!(
            "{other} is not an integer"
        ))),
    }
}

pub(super) fn json_text<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Ok(match Option::<Value>::deserialize(d)? {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s),
        Some(other) => Some(other.to_string()),
    })
}

pub(super) fn list<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Ok(match Option::<Value>::deserialize(d)? {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s),
        Some(Value::Array(items)) => Some(
            items
                .iter()
                .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned))
                .collect::<Vec<_>>()
                .join(","),
        ),
        Some(other) => Some(other.to_string()),
    })
}

/// The defaults of a new channel (spec 02 §9: type 1, auto_ban 1, group default, priority 0,
/// weight 0), enabled.
pub fn new_channel(now: i64) -> Channel {
    Channel {
        id: ChannelId(0),
        name: String::new(),
        channel_type: 1,
        key: Secret::default(),
        openai_organization: String::new(),
        max_input_tokens: 0,
        base_url: String::new(),
        other: String::new(),
        model_mapping: String::new(),
        status_code_mapping: String::new(),
        models: String::new(),
        group: "default".into(),
        auto_ban: 1,
        test_model: String::new(),
        proxy: String::new(),
        priority: 0,
        weight: 0,
        tag: String::new(),
        setting: String::new(),
        param_override: String::new(),
        used_quota: Quota::ZERO,
        balance: 0.0,
        response_time: 0,
        status: STATUS_ENABLED,
        other_info: String::new(),
        created_time: now,
        test_time: 0,
        balance_updated_time: 0,
    }
}

/// Trimmed, de-duplicated, comma-joined list.
pub fn normalize_list(text: &str) -> String {
    let mut seen: Vec<&str> = Vec::new();
    for item in split_list(text) {
        if !seen.contains(&item) {
            seen.push(item);
        }
    }
    seen.join(",")
}

/// Checks that `text` is empty or a JSON object.
pub fn check_json_object(field: &str, text: &str) -> Result<(), ConsoleError> {
    if text.trim().is_empty() {
        return Ok(());
    }
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(_)) => Ok(()),
        _ => Err(ConsoleError::with_args(
            ErrorCode::ChannelFieldNotJson,
            [field.to_string()],
        )),
    }
}

fn i32_field(field: &str, value: i64) -> Result<i32, ConsoleError> {
    i32::try_from(value)
        .map_err(|_| ConsoleError::with_args(ErrorCode::FieldOutOfRange, [field.to_string()]))
}

/// The key with Chinese commas replaced, and whether any were.
fn clean_key(key: &str) -> (String, bool) {
    let had = key.contains('，');
    (key.replace('，', ",").trim().to_owned(), had)
}

/// Applies `input` over `current` (create: [`new_channel`]) and validates the result.
/// Returns the channel and notices for the admin (e.g. commas converted).
pub fn apply(
    input: ChannelInput,
    mut c: Channel,
    creating: bool,
) -> Result<(Channel, Vec<String>), ConsoleError> {
    let mut notices = Vec::new();
    let before = (c.channel_type, c.setting.clone(), c.other.clone());
    if let Some(v) = input.name {
        c.name = v.trim().to_owned();
    }
    if let Some(v) = input.channel_type {
        c.channel_type = i32_field("type", v)?;
    }
    let key_sent = input
        .key
        .as_ref()
        .is_some_and(|k| !k.expose().trim().is_empty());
    if let Some(key) = input.key.filter(|k| !k.expose().trim().is_empty()) {
        let (key, converted) = clean_key(key.expose());
        if converted {
            notices.push("Chinese commas in the key were replaced with English commas".into());
        }
        c.key = Secret::new(key);
    }
    macro_rules! take {
        ($($field:ident),*) => { $( if let Some(v) = input.$field { c.$field = v.trim().to_owned(); } )* };
    }
    take!(
        openai_organization,
        base_url,
        other,
        model_mapping,
        status_code_mapping,
        test_model,
        proxy,
        tag,
        setting,
        param_override,
        other_info
    );
    if let Some(v) = input.models {
        c.models = normalize_list(&v);
    }
    if let Some(v) = input.groups.or(input.group) {
        c.group = normalize_list(&v);
    }
    if let Some(v) = input.max_input_tokens {
        c.max_input_tokens = v;
    }
    if let Some(v) = input.auto_ban {
        c.auto_ban = i32_field("auto_ban", v)?;
    }
    if let Some(v) = input.priority {
        c.priority = v;
    }
    if let Some(v) = input.weight {
        c.weight = v;
    }
    if let Some(v) = input.status {
        c.status = i32_field("status", v)?;
    }
    validate(&mut c, creating)?;
    // The key and the type's extra fields are checked when they are sent, or when what decides
    // them changed (a key stored under another type or key type); otherwise a stored channel is
    // kept as is, so a status-only update never fails on an old record.
    let (old_type, old_setting, old_other) = before;
    if creating || old_type != c.channel_type {
        refuse_type(c.channel_type)?;
    }
    let retyped = old_type != c.channel_type || old_setting != c.setting;
    if creating || retyped || old_other != c.other {
        check_fields(&c, type_row(c.channel_type)?)?;
    }
    if key_sent || retyped {
        check_key(&mut c)?;
    }
    Ok((c, notices))
}

/// Checks the key against its type's format and stores it in the normal form (one key per
/// line; JSON keys one compact object per line). The refusal never contains the key.
fn check_key(c: &mut Channel) -> Result<(), ConsoleError> {
    let row = type_row(c.channel_type)?;
    let format = channel_types::key_format(row, &c.setting);
    let keys = keys::normalize(format, c.key.expose()).map_err(|e| {
        ConsoleError::with_args(
            ErrorCode::ChannelKeyInvalid,
            [row.name.to_string(), e.to_string()],
        )
    })?;
    c.key = Secret::new(keys.join("\n"));
    Ok(())
}

/// Refuses a type no channel may be created with (`channel_types::REFUSED_AT_CREATION`).
fn refuse_type(channel_type: i32) -> Result<(), ConsoleError> {
    match channel_types::refused(channel_type) {
        Some(why) => Err(ConsoleError::with_args(
            ErrorCode::ChannelTypeRefused,
            [
                channel_type.to_string(),
                type_row(channel_type)?.name.to_string(),
                why.to_string(),
            ],
        )),
        None => Ok(()),
    }
}

fn type_row(channel_type: i32) -> Result<&'static ChannelType, ConsoleError> {
    channel_types::by_id(channel_type).ok_or_else(|| {
        ConsoleError::with_args(ErrorCode::ChannelTypeUnknown, [channel_type.to_string()])
    })
}

/// The type's extra fields: required ones are set, select values are among the options.
fn check_fields(c: &Channel, row: &ChannelType) -> Result<(), ConsoleError> {
    for field in row.fields {
        let value = match field.target {
            Target::Other => Some(c.other.clone()).filter(|v| !v.is_empty()),
            Target::Setting => channel_types::setting_value(&c.setting, field.key),
        };
        let value = value.as_deref().map(str::trim).filter(|v| !v.is_empty());
        let place = match field.target {
            Target::Other => "other".to_owned(),
            Target::Setting => format!("setting.{}", field.key),
        };
        match value {
            None if field.required && field.default.is_empty() => {
                return Err(ConsoleError::with_args(
                    ErrorCode::ChannelNeedsField,
                    [
                        row.name.to_string(),
                        field.name.to_string(),
                        place.to_string(),
                    ],
                ));
            }
            Some(v) if field.kind == FieldKind::Select && !field.options.contains(&v) => {
                return Err(ConsoleError::with_args(
                    ErrorCode::ChannelFieldChoice,
                    [
                        place.to_string(),
                        row.name.to_string(),
                        field.options.join(", ").to_string(),
                    ],
                ));
            }
            _ => {}
        }
    }
    Ok(())
}

fn validate(c: &mut Channel, creating: bool) -> Result<(), ConsoleError> {
    let bad = |code: ErrorCode| Err(ConsoleError::of(code));
    if c.name.is_empty() {
        return bad(ErrorCode::ChannelNameRequired);
    }
    if c.key.expose().trim().is_empty() {
        return bad(if creating {
            ErrorCode::ChannelKeyRequired
        } else {
            ErrorCode::ChannelNoKey
        });
    }
    let kind = type_row(c.channel_type)?;
    if c.models.is_empty() {
        return bad(ErrorCode::ChannelModelsRequired);
    }
    if c.group.is_empty() {
        c.group = "default".into();
    }
    c.base_url = c.base_url.trim_end_matches('/').to_owned();
    let scheme_ok = c.base_url.starts_with("http://") || c.base_url.starts_with("https://");
    if !c.base_url.is_empty() && !scheme_ok {
        return bad(ErrorCode::BaseUrlNotHttp);
    }
    if c.base_url.is_empty() && kind.base_url_required {
        return Err(ConsoleError::with_args(
            ErrorCode::ChannelNeedsBaseUrl,
            [kind.name.to_string()],
        ));
    }
    if c.channel_type == 18 && c.other.is_empty() {
        c.other = "v2.1".into();
    }
    for (field, text) in [
        ("model_mapping", &c.model_mapping),
        ("status_code_mapping", &c.status_code_mapping),
        ("setting", &c.setting),
        ("param_override", &c.param_override),
        ("other_info", &c.other_info),
    ] {
        check_json_object(field, text)?;
    }
    if c.priority < MIN_PRIORITY {
        return Err(ConsoleError::with_args(
            ErrorCode::PriorityTooLow,
            [MIN_PRIORITY.to_string()],
        ));
    }
    if c.weight < 0 {
        return bad(ErrorCode::WeightNegative);
    }
    if c.max_input_tokens < 0 {
        return bad(ErrorCode::MaxInputTokensNegative);
    }
    if !matches!(c.auto_ban, 0 | 1) {
        return bad(ErrorCode::AutoBanInvalid);
    }
    if !matches!(c.status, 1..=3) {
        return bad(ErrorCode::ChannelStatusInvalid);
    }
    if !c.proxy.is_empty() {
        validate_proxy(&c.proxy).map_err(proxy_refused)?;
    }
    Ok(())
}

/// A refused proxy address as the console answers it (its own code, the detail as argument).
pub fn proxy_refused(e: ProxyError) -> ConsoleError {
    match e {
        ProxyError::Url(why) => ConsoleError::with_args(ErrorCode::ProxyNotUrl, [why]),
        ProxyError::Scheme(scheme) => ConsoleError::with_args(ErrorCode::ProxyScheme, [scheme]),
        ProxyError::NoHost => ConsoleError::of(ErrorCode::ProxyNoHost),
    }
}

#[cfg(test)]
mod tests;
