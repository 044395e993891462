//! A channel's JSON fields as the relay uses them — model_mapping, status_code_mapping,
//! param_override and the `setting` object (system_prompt, system_prompt_override,
//! pass_through_body_enabled, upstream_api) — parsed once when the routing table is built, never per request.
//! Unparsable text counts as empty (the console validates these fields on save).

use std::collections::HashMap;

use serde_json::{Map, Value, json};
use tollgate_storage::channels::Channel;

/// The longest model_mapping chain followed (a → b → c …).
const MAX_MAPPING_HOPS: usize = 16;

/// The parsed JSON fields of one channel.
#[derive(Debug, Clone, Default)]
pub struct ChannelJson {
    /// Client model name → upstream model name (empty targets dropped).
    model_mapping: HashMap<String, String>,
    /// Upstream HTTP status → status shown to the client (valid statuses only).
    status_mapping: HashMap<u16, u16>,
    /// Top-level keys that replace the client's in the upstream body.
    param_override: Map<String, Value>,
    /// `setting.system_prompt`: added as the system message (non-empty only).
    system_prompt: Option<String>,
    /// `setting.system_prompt_override`: also put it before a system message the client sent.
    system_prompt_override: bool,
    /// `setting.pass_through_body_enabled`: forward the client's body untouched.
    pass_through: bool,
    /// `setting.upstream_api: "responses"`: chat requests reach this (OpenAI-compatible)
    /// channel through the Responses API (default `"chat"`).
    upstream_responses: bool,
}

impl ChannelJson {
    /// Parses the fields of `channel`.
    pub fn parse(channel: &Channel) -> ChannelJson {
        let mut json = ChannelJson::from_fields(
            &channel.model_mapping,
            &channel.status_code_mapping,
            &channel.param_override,
        );
        json.apply_setting(&channel.setting);
        json
    }

    /// Reads the channel's `setting` JSON object.
    pub fn apply_setting(&mut self, setting: &str) {
        let setting: Map<String, Value> = serde_json::from_str(setting).unwrap_or_default();
        self.system_prompt = setting
            .get("system_prompt")
            .and_then(Value::as_str)
            .filter(|p| !p.trim().is_empty())
            .map(str::to_owned);
        self.system_prompt_override =
            setting.get("system_prompt_override") == Some(&Value::Bool(true));
        self.pass_through = setting.get("pass_through_body_enabled") == Some(&Value::Bool(true));
        self.upstream_responses = setting.get("upstream_api") == Some(&json!("responses"));
    }

    /// Parses model_mapping, status_code_mapping and param_override texts.
    pub fn from_fields(
        model_mapping: &str,
        status_code_mapping: &str,
        param_override: &str,
    ) -> ChannelJson {
        let model_mapping = serde_json::from_str::<Map<String, Value>>(model_mapping)
            .unwrap_or_default()
            .into_iter()
            .filter_map(|(from, to)| match to {
                Value::String(to) if !to.is_empty() => Some((from, to)),
                _ => None,
            })
            .collect();
        let status = |v: &str| {
            v.trim()
                .parse::<u16>()
                .ok()
                .filter(|s| (100..600).contains(s))
        };
        let status_mapping = serde_json::from_str::<Map<String, Value>>(status_code_mapping)
            .unwrap_or_default()
            .into_iter()
            .filter_map(|(from, to)| {
                let to = match to {
                    Value::String(s) => status(&s),
                    Value::Number(n) => status(&n.to_string()),
                    _ => None,
                };
                Some((status(&from)?, to?))
            })
            .collect();
        let param_override =
            serde_json::from_str::<Map<String, Value>>(param_override).unwrap_or_default();
        ChannelJson {
            model_mapping,
            status_mapping,
            param_override,
            ..ChannelJson::default()
        }
    }

    /// The upstream name of `model`: mapping chains are followed (a → b → c); a cycle stops
    /// before the name would repeat.
    pub fn mapped_model<'a>(&'a self, model: &'a str) -> &'a str {
        let mut current = model;
        let mut seen: Vec<&str> = vec![model];
        for _ in 0..MAX_MAPPING_HOPS {
            match self.model_mapping.get(current) {
                Some(next) if !seen.contains(&next.as_str()) => {
                    current = next;
                    seen.push(next);
                }
                _ => break,
            }
        }
        current
    }

    /// The status the client sees for an upstream `status`.
    pub fn mapped_status(&self, status: u16) -> u16 {
        self.status_mapping.get(&status).copied().unwrap_or(status)
    }

    /// The system prompt to add and whether it also goes before the client's own.
    pub fn system_prompt(&self) -> Option<(&str, bool)> {
        self.system_prompt
            .as_deref()
            .map(|p| (p, self.system_prompt_override))
    }

    /// Whether the client's body is forwarded untouched (no mapping, override or prompt).
    pub fn pass_through(&self) -> bool {
        self.pass_through
    }

    /// Whether chat requests reach this channel through the Responses API
    /// (`setting.upstream_api: "responses"`).
    pub fn upstream_responses(&self) -> bool {
        self.upstream_responses
    }

    /// The param_override keys (empty when none).
    pub fn param_override(&self) -> &Map<String, Value> {
        &self.param_override
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn channel(mapping: &str, status: &str, overrides: &str) -> ChannelJson {
        ChannelJson::from_fields(mapping, status, overrides)
    }

    #[test]
    fn model_mapping_follows_chains_and_stops_at_cycles() {
        let json = channel(r#"{"a":"b","b":"c","x":"y","y":"x","e":"","n":1}"#, "", "");
        assert_eq!(json.mapped_model("a"), "c");
        assert_eq!(json.mapped_model("b"), "c");
        assert_eq!(json.mapped_model("x"), "y");
        assert_eq!(json.mapped_model("e"), "e");
        assert_eq!(json.mapped_model("n"), "n");
        assert_eq!(json.mapped_model("other"), "other");
    }

    #[test]
    fn status_mapping_accepts_strings_and_numbers_and_ignores_junk() {
        let json = channel("", r#"{"429":"503","500":502,"400":"9999","x":"500"}"#, "");
        assert_eq!(json.mapped_status(429), 503);
        assert_eq!(json.mapped_status(500), 502);
        assert_eq!(json.mapped_status(400), 400);
        assert_eq!(json.mapped_status(404), 404);
    }

    #[test]
    fn setting_reads_the_system_prompt_and_pass_through() {
        let mut json = ChannelJson::default();
        json.apply_setting(r#"{"system_prompt":"Be brief.","system_prompt_override":true}"#);
        assert_eq!(json.system_prompt(), Some(("Be brief.", true)));
        assert!(!json.pass_through());
        json.apply_setting(r#"{"system_prompt":"  ","pass_through_body_enabled":true}"#);
        assert_eq!(json.system_prompt(), None);
        assert!(json.pass_through());
        json.apply_setting("not json");
        assert_eq!((json.system_prompt(), json.pass_through()), (None, false));
    }

    #[test]
    fn bad_json_is_empty() {
        let json = channel("{", "[1]", "nope");
        assert_eq!(json.mapped_model("m"), "m");
        assert_eq!(json.mapped_status(429), 429);
        assert!(json.param_override().is_empty());
        let json = channel("", "", r#"{"temperature":0.1}"#);
        assert_eq!(json.param_override().len(), 1);
    }
}
