//! Channel types: the one table that says how to talk to each type ([`table`]), in the
//! vocabulary of [`kinds`] — adaptor family, default base URL, auth scheme, key format, the
//! extra fields it needs, capabilities, test request, balance and model-list APIs.
//!
//! Readers: channel validation (unknown types and malformed keys are refused, [`keys`]), the
//! relay (the wire of a family, capability routing through [`serve`]), the channel test, balance
//! queries, model fetching, and the console (`GET /api/channel/types`). An empty `base_url`
//! means the type's default.

pub mod errors;
pub mod keys;
pub mod kinds;
pub mod serve;
pub mod table;

pub use kinds::{
    Auth, BalanceApi, Caps, ChannelType, Family, Field, FieldKind, KeyFormat, ModelsApi, Target,
    TestRequest,
};
pub use table::{CHANNEL_TYPES, REFUSED_AT_CREATION};

/// The type with this id.
pub fn by_id(id: i32) -> Option<&'static ChannelType> {
    CHANNEL_TYPES.iter().find(|t| t.id == id)
}

/// Why a channel of this type cannot be created, if it cannot ([`REFUSED_AT_CREATION`]).
pub fn refused(id: i32) -> Option<&'static str> {
    REFUSED_AT_CREATION
        .iter()
        .find(|(refused, _)| *refused == id)
        .map(|(_, why)| *why)
}

/// The adaptor family of a type (`None`: unknown type, or no adaptor).
pub fn family(id: i32) -> Option<Family> {
    by_id(id).and_then(|t| t.family)
}

/// The key format of a channel of type `row` whose `setting` is `setting` (Vertex takes an API
/// key per line instead of service-account JSON when `setting.vertex_key_type` is `api_key`).
pub fn key_format(row: &ChannelType, setting: &str) -> KeyFormat {
    if row.key_format == KeyFormat::ServiceAccountJson
        && row.setting_field("vertex_key_type").is_some()
        && setting_value(setting, "vertex_key_type").as_deref() == Some("api_key")
    {
        return KeyFormat::Lines;
    }
    row.key_format
}

/// `setting[key]` as text (a string, or any other JSON value's text), if set.
pub fn setting_value(setting: &str, key: &str) -> Option<String> {
    let value: serde_json::Value = serde_json::from_str(setting).ok()?;
    match value.get(key)? {
        serde_json::Value::Null => None,
        serde_json::Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    }
}

/// The base URL a channel uses: its own, else its type's default ("" when neither is set).
pub fn effective_base_url(channel_type: i32, base_url: &str) -> String {
    let own = base_url.trim().trim_end_matches('/');
    if !own.is_empty() {
        return own.to_owned();
    }
    by_id(channel_type).map_or_else(String::new, |t| t.default_base_url.to_owned())
}

/// The URL of OpenAI route `path` (`/v1/chat/completions`, `/v1/models`, …) at `base` for a
/// channel of `channel_type`: the row's [`ChannelType::openai_paths`] entry for it, else the row's
/// [`ChannelType::openai_prefix`] in place of `/v1` (`{base}/compatible-mode/v1/chat/completions`
/// for Qwen, `{base}/api/v3/…` for Volcano Ark, `{base}/beta/completions` for DeepSeek's FIM).
pub fn openai_url(channel_type: i32, base: &str, path: &str) -> String {
    let row = by_id(channel_type);
    if let Some((_, own)) =
        row.and_then(|t| t.openai_paths.iter().find(|(openai, _)| *openai == path))
    {
        return format!("{base}{own}");
    }
    let prefix = row.map_or("/v1", |t| t.openai_prefix);
    match path.strip_prefix("/v1") {
        Some(rest) if rest.is_empty() || rest.starts_with('/') => format!("{base}{prefix}{rest}"),
        _ => format!("{base}{path}"),
    }
}

/// The channel's `other`, else its type's default for it ("" when neither is set).
pub fn effective_other(channel_type: i32, other: &str) -> String {
    let own = other.trim();
    if !own.is_empty() {
        return own.to_owned();
    }
    by_id(channel_type)
        .and_then(ChannelType::other_field)
        .map_or_else(String::new, |f| f.default.to_owned())
}

#[cfg(test)]
mod readme;
#[cfg(test)]
mod tests;
