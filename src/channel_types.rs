//! Channel types: id → name, default base URL, wire protocol, and a built-in model list for the
//! common providers (spec 02 §3 ids, reference §5.1 base URLs).
//!
//! Used by channel validation (unknown types are refused), by the console's model picker
//! (GET /api/channel/models), and wherever an upstream URL is built: an empty `base_url` means
//! the type's default.

/// How Tollgate talks to a type's upstream (for tests and model listing).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// OpenAI's `/v1/chat/completions` and `/v1/models` with a bearer key.
    OpenAi,
    /// Azure OpenAI deployments (`api-key` header, `api-version` from `other`).
    Azure,
    /// Anthropic `/v1/messages` (`x-api-key`).
    Anthropic,
    /// Gemini `generateContent` (`x-goog-api-key`).
    Gemini,
    /// A provider-specific protocol Tollgate cannot probe yet.
    Other,
}

/// One channel type.
#[derive(Debug, Clone, Copy)]
pub struct ChannelType {
    /// The numeric id stored on channels.
    pub id: i32,
    /// Display name.
    pub name: &'static str,
    /// Base URL used when the channel's own is empty ("" = the channel must set one).
    pub default_base_url: &'static str,
    /// Wire protocol.
    pub protocol: Protocol,
    /// Models the console offers for this type.
    pub models: &'static [&'static str],
}

const fn t(
    id: i32,
    name: &'static str,
    default_base_url: &'static str,
    protocol: Protocol,
    models: &'static [&'static str],
) -> ChannelType {
    ChannelType {
        id,
        name,
        default_base_url,
        protocol,
        models,
    }
}

use Protocol::{Anthropic, Azure, Gemini, OpenAi, Other};

const OPENAI_MODELS: &[&str] = &[
    "gpt-4o",
    "gpt-4o-mini",
    "gpt-4.1",
    "gpt-4.1-mini",
    "gpt-4.1-nano",
    "o3",
    "o3-mini",
    "o4-mini",
    "gpt-3.5-turbo",
    "text-embedding-3-small",
    "text-embedding-3-large",
];

/// Every type Tollgate accepts, by id.
pub const CHANNEL_TYPES: &[ChannelType] = &[
    t(1, "OpenAI", "https://api.openai.com", OpenAi, OPENAI_MODELS),
    t(2, "Midjourney Proxy", "https://oa.api2d.net", Other, &[]),
    t(3, "Azure OpenAI", "", Azure, OPENAI_MODELS),
    t(
        4,
        "Ollama",
        "http://localhost:11434",
        OpenAi,
        &["llama3.1", "qwen2.5"],
    ),
    t(
        5,
        "Midjourney Proxy Plus",
        "https://api.openai-sb.com",
        Other,
        &[],
    ),
    t(8, "Custom", "", OpenAi, &[]),
    t(11, "PaLM2", "", Other, &[]),
    t(
        14,
        "Claude",
        "https://api.anthropic.com",
        Anthropic,
        &[
            "claude-3-5-haiku-20241022",
            "claude-3-7-sonnet-20250219",
            "claude-sonnet-4-20250514",
            "claude-opus-4-20250514",
        ],
    ),
    t(15, "Baidu Qianfan", "https://aip.baidubce.com", Other, &[]),
    t(
        16,
        "ChatGLM",
        "https://open.bigmodel.cn",
        Other,
        &["glm-4", "glm-4-flash"],
    ),
    t(
        17,
        "Qwen",
        "https://dashscope.aliyuncs.com",
        Other,
        &["qwen-turbo", "qwen-plus", "qwen-max"],
    ),
    t(18, "Spark", "", Other, &[]),
    t(19, "360", "https://api.360.cn", OpenAi, &[]),
    t(20, "OpenRouter", "https://openrouter.ai/api", OpenAi, &[]),
    t(21, "AI Proxy Library", "https://api.aiproxy.io", Other, &[]),
    t(
        22,
        "FastGPT",
        "https://fastgpt.run/api/openapi",
        OpenAi,
        &[],
    ),
    t(
        23,
        "Hunyuan",
        "https://hunyuan.tencentcloudapi.com",
        Other,
        &[],
    ),
    t(
        24,
        "Gemini",
        "https://generativelanguage.googleapis.com",
        Gemini,
        &["gemini-2.0-flash", "gemini-2.5-flash", "gemini-2.5-pro"],
    ),
    t(
        25,
        "Moonshot",
        "https://api.moonshot.cn",
        OpenAi,
        &["moonshot-v1-8k", "moonshot-v1-32k", "moonshot-v1-128k"],
    ),
    t(26, "GLM-4V", "https://open.bigmodel.cn", Other, &["glm-4v"]),
    t(
        31,
        "Yi",
        "https://api.lingyiwanwu.com",
        OpenAi,
        &["yi-large", "yi-medium"],
    ),
    t(33, "AWS Claude", "", Other, &[]),
    t(
        34,
        "Cohere",
        "https://api.cohere.ai",
        Other,
        &["command-r", "command-r-plus"],
    ),
    t(35, "MiniMax", "https://api.minimax.chat", Other, &[]),
    t(36, "Suno", "", Other, &[]),
    t(37, "Dify", "https://api.dify.ai", Other, &[]),
    t(38, "Jina", "https://api.jina.ai", Other, &[]),
    t(39, "Cloudflare", "https://api.cloudflare.com", Other, &[]),
    t(
        40,
        "SiliconCloud",
        "https://api.siliconflow.cn",
        OpenAi,
        &[],
    ),
    t(41, "Vertex AI", "", Other, &[]),
    t(
        42,
        "Mistral",
        "https://api.mistral.ai",
        OpenAi,
        &[
            "mistral-large-latest",
            "mistral-small-latest",
            "codestral-latest",
        ],
    ),
    t(
        43,
        "DeepSeek",
        "https://api.deepseek.com",
        OpenAi,
        &["deepseek-chat", "deepseek-reasoner"],
    ),
    t(44, "M3E", "https://api.moka.ai", Other, &[]),
    t(
        45,
        "Volcano Ark",
        "https://ark.cn-beijing.volces.com",
        Other,
        &[],
    ),
    t(
        46,
        "Baidu Qianfan v2",
        "https://qianfan.baidubce.com",
        Other,
        &[],
    ),
    t(47, "Xinference", "", OpenAi, &[]),
    t(
        48,
        "xAI",
        "https://api.x.ai",
        OpenAi,
        &["grok-3", "grok-3-mini", "grok-4"],
    ),
    t(49, "Coze", "https://api.coze.cn", Other, &[]),
];

/// The type with this id.
pub fn by_id(id: i32) -> Option<&'static ChannelType> {
    CHANNEL_TYPES.iter().find(|t| t.id == id)
}

/// The base URL a channel uses: its own, else its type's default ("" when neither is set).
pub fn effective_base_url(channel_type: i32, base_url: &str) -> String {
    let own = base_url.trim().trim_end_matches('/');
    if !own.is_empty() {
        return own.to_owned();
    }
    by_id(channel_type).map_or_else(String::new, |t| t.default_base_url.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_spec_types_are_present() {
        let mut ids: Vec<i32> = CHANNEL_TYPES.iter().map(|t| t.id).collect();
        ids.sort_unstable();
        let before = ids.len();
        ids.dedup();
        assert_eq!(ids.len(), before, "duplicate type id");
        for id in [1, 3, 14, 18, 24, 43, 49] {
            assert!(by_id(id).is_some(), "type {id}");
        }
        assert!(by_id(6).is_none() && by_id(99).is_none());
    }

    #[test]
    fn base_url_falls_back_to_the_type_default() {
        assert_eq!(effective_base_url(1, ""), "https://api.openai.com");
        assert_eq!(effective_base_url(1, "http://x/ "), "http://x");
        assert_eq!(effective_base_url(3, ""), "");
    }
}
