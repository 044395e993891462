//! `ChannelView`: a channel as every GET returns it. The key is never included: `key` is
//! always `""`, with `key_set` and `key_count` saying whether and how many keys are stored.

use serde::Serialize;
use tollgate_storage::channels::Channel;

/// The console's view of a channel (new-api field names).
#[derive(Debug, Clone, Serialize)]
pub struct ChannelView {
    /// Id.
    pub id: i64,
    /// Name.
    pub name: String,
    /// Type id.
    #[serde(rename = "type")]
    pub channel_type: i32,
    /// Always empty: keys are write-only.
    pub key: &'static str,
    /// True when a key is stored.
    pub key_set: bool,
    /// Number of key lines.
    pub key_count: usize,
    /// OpenAI organization.
    pub openai_organization: String,
    /// Max input tokens (0 = no limit).
    pub max_input_tokens: i64,
    /// Base URL as configured ("" = type default).
    pub base_url: String,
    /// Type-specific extra.
    pub other: String,
    /// JSON text.
    pub model_mapping: String,
    /// JSON text.
    pub status_code_mapping: String,
    /// Comma text.
    pub models: String,
    /// Comma text.
    pub group: String,
    /// 1 or 0.
    pub auto_ban: i32,
    /// Test model.
    pub test_model: String,
    /// Proxy URL.
    pub proxy: String,
    /// Priority.
    pub priority: i64,
    /// Weight.
    pub weight: i64,
    /// Tag.
    pub tag: String,
    /// JSON text.
    pub setting: String,
    /// JSON text.
    pub param_override: String,
    /// Quota used through the channel (the sum of its consume rows, from
    /// [`tollgate_storage::channel_usage`], plus what an imported record brought along).
    pub used_quota: i64,
    /// Balance in US$.
    pub balance: f64,
    /// Last test latency in ms.
    pub response_time: i64,
    /// 1, 2 or 3.
    pub status: i32,
    /// JSON text (status_reason, status_time).
    pub other_info: String,
    /// Unix seconds.
    pub created_time: i64,
    /// Unix seconds.
    pub test_time: i64,
    /// Unix seconds.
    pub balance_updated_time: i64,
}

impl ChannelView {
    /// The view with the quota used through the channel: what Tollgate counted (apart from
    /// the record) added to what the record brought along (a channel imported from new-api).
    #[must_use]
    pub fn with_used(mut self, used: tollgate_storage::Quota) -> Self {
        self.used_quota = self.used_quota.saturating_add(used.0);
        self
    }
}

impl From<&Channel> for ChannelView {
    fn from(c: &Channel) -> Self {
        let key_count = c.key_lines().len();
        ChannelView {
            id: c.id.0,
            name: c.name.clone(),
            channel_type: c.channel_type,
            key: "",
            key_set: key_count > 0,
            key_count,
            openai_organization: c.openai_organization.clone(),
            max_input_tokens: c.max_input_tokens,
            base_url: c.base_url.clone(),
            other: c.other.clone(),
            model_mapping: c.model_mapping.clone(),
            status_code_mapping: c.status_code_mapping.clone(),
            models: c.models.clone(),
            group: c.group.clone(),
            auto_ban: c.auto_ban,
            test_model: c.test_model.clone(),
            proxy: c.proxy.clone(),
            priority: c.priority,
            weight: c.weight,
            tag: c.tag.clone(),
            setting: c.setting.clone(),
            param_override: c.param_override.clone(),
            used_quota: c.used_quota.0,
            balance: c.balance,
            response_time: c.response_time,
            status: c.status,
            other_info: c.other_info.clone(),
            created_time: c.created_time,
            test_time: c.test_time,
            balance_updated_time: c.balance_updated_time,
        }
    }
}
