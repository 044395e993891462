//! THE channel type table: one row per type of spec 02 §3, default base URLs from reference
//! §5.1. This is the only place that says how to talk to a type; the relay, the channel test,
//! balance queries, model fetching and the console (`GET /api/channel/types`) read it.
//!
//! A capability is set only where the relay really serves it and the provider has it: each
//! OpenAI-compatible row gets the routes the provider's API reference lists (cited beside the
//! row; OpenAI and Custom keep every route the OpenAI pass-through forwards), Claude (14), Gemini (24), Azure (3), Bedrock (33), Vertex AI
//! (41) and Cohere (34) what their adaptors serve. When an adaptor lands, its row's `caps` (and,
//! for a new family, `serve::Serve::served_by`) change here and nowhere else.

use super::kinds::{
    Auth, BalanceApi, Caps, ChannelType, Family, Field, FieldKind, KeyFormat, ModelsApi, Target,
    TestRequest,
};

/// Every route the OpenAI pass-through forwards (`relay::routes::chat`).
const OPENAI_ROUTES: Caps = Caps::CHAT
    .with(Caps::STREAM)
    .with(Caps::COMPLETIONS)
    .with(Caps::RESPONSES)
    .with(Caps::EMBEDDINGS)
    .with(Caps::IMAGES)
    .with(Caps::AUDIO)
    .with(Caps::RERANK)
    .with(Caps::MODERATION);

/// Chat, streamed: the least an OpenAI-compatible provider serves.
const CHAT_STREAM: Caps = Caps::CHAT.with(Caps::STREAM);

/// Azure OpenAI: the OpenAI routes its deployments (and resource) serve.
const AZURE_CAPS: Caps = Caps::CHAT
    .with(Caps::STREAM)
    .with(Caps::COMPLETIONS)
    .with(Caps::RESPONSES)
    .with(Caps::EMBEDDINGS)
    .with(Caps::IMAGES)
    .with(Caps::AUDIO);

/// Claude through the Anthropic adaptor: chat (from every inbound format), streamed, and token
/// counts forwarded.
const CLAUDE_CAPS: Caps = Caps::CHAT.with(Caps::STREAM).with(Caps::COUNT_TOKENS);

/// Gemini through the Gemini adaptor: chat, streamed, embeddings (Gemini clients'
/// `embedContent`), and token counts forwarded.
const GEMINI_CAPS: Caps = Caps::CHAT
    .with(Caps::STREAM)
    .with(Caps::EMBEDDINGS)
    .with(Caps::COUNT_TOKENS);

const fn other(
    name: &'static str,
    label: &'static str,
    help: &'static str,
    default: &'static str,
) -> Field {
    Field {
        target: Target::Other,
        key: "",
        name,
        kind: FieldKind::Text,
        options: &[],
        required: false,
        default,
        label,
        help,
    }
}

const fn required(field: Field) -> Field {
    Field {
        required: true,
        ..field
    }
}

/// Azure's `api-version` (`v1` selects the `/openai/v1/` style).
const AZURE_FIELDS: &[Field] = &[other(
    "API version",
    "typeField.apiVersion",
    "typeField.azureVersionHelp",
    "2024-10-21",
)];
/// Gemini's API version in the URL path.
const GEMINI_FIELDS: &[Field] = &[other(
    "API version",
    "typeField.apiVersion",
    "typeField.geminiVersionHelp",
    "v1beta",
)];
/// Spark's model version (spec 02 §5: an empty one becomes v2.1).
const SPARK_FIELDS: &[Field] = &[other(
    "model version",
    "typeField.apiVersion",
    "typeField.sparkVersionHelp",
    "v2.1",
)];
const KNOWLEDGE_FIELDS: &[Field] = &[required(other(
    "knowledge base id",
    "typeField.knowledgeId",
    "typeField.knowledgeIdHelp",
    "",
))];
const CLOUDFLARE_FIELDS: &[Field] = &[required(other(
    "account id",
    "typeField.accountId",
    "typeField.accountIdHelp",
    "",
))];
const COZE_FIELDS: &[Field] = &[required(other(
    "bot id",
    "typeField.botId",
    "typeField.botIdHelp",
    "",
))];
/// Vertex: the region (reference §4.7: missing gives `global`) and the key type.
const VERTEX_FIELDS: &[Field] = &[
    other(
        "region",
        "typeField.region",
        "typeField.regionHelp",
        "global",
    ),
    Field {
        target: Target::Setting,
        key: "vertex_key_type",
        name: "key type",
        kind: FieldKind::Select,
        options: &["json", "api_key"],
        required: false,
        default: "json",
        label: "typeField.vertexKeyType",
        help: "typeField.vertexKeyTypeHelp",
    },
];

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

const CLAUDE_MODELS: &[&str] = &[
    "claude-3-5-haiku-20241022",
    "claude-3-7-sonnet-20250219",
    "claude-sonnet-4-20250514",
    "claude-opus-4-20250514",
];

/// A row of the OpenAI-compatible family with every pass-through route.
const fn openai(id: i32, name: &'static str, base: &'static str) -> ChannelType {
    ChannelType {
        id,
        name,
        family: Some(Family::OpenAi),
        default_base_url: base,
        base_url_required: base.is_empty(),
        auth: Auth::Bearer,
        key_format: KeyFormat::Lines,
        key_hint: "",
        fields: &[],
        caps: OPENAI_ROUTES,
        openai_prefix: "/v1",
        openai_paths: &[],
        native_responses: false,
        test: TestRequest::Chat,
        balance: None,
        models_api: Some(ModelsApi::OpenAi),
        models: &[],
    }
}

/// A row without an adaptor: stored and listed, never relayed or tested.
const fn unsupported(id: i32, name: &'static str, base: &'static str) -> ChannelType {
    ChannelType {
        id,
        name,
        family: None,
        default_base_url: base,
        base_url_required: false,
        auth: Auth::Bearer,
        key_format: KeyFormat::Lines,
        key_hint: "",
        fields: &[],
        caps: Caps::NONE,
        openai_prefix: "/v1",
        openai_paths: &[],
        native_responses: false,
        test: TestRequest::None,
        balance: None,
        models_api: None,
        models: &[],
    }
}

/// Types refused at channel creation, with the reason. A channel of such a type that already
/// exists (imported from the incumbent's database) is kept and listed, never picked.
pub const REFUSED_AT_CREATION: &[(i32, &str)] = &[(
    21,
    // The incumbent removed its adaptor (reference §5.1: "invalid api type") and no public
    // documentation of AI Proxy's knowledge-base API could be found (searched 2026-11-28).
    "no documentation of the provider's API could be found, and the incumbent removed its adaptor",
)];

/// The Gemini API's row (24), also used for PaLM2 (11).
const fn gemini_row() -> ChannelType {
    ChannelType {
        id: 24,
        name: "Gemini",
        family: Some(Family::Gemini),
        default_base_url: "https://generativelanguage.googleapis.com",
        base_url_required: false,
        auth: Auth::GoogApiKey,
        key_format: KeyFormat::Lines,
        key_hint: "",
        fields: GEMINI_FIELDS,
        caps: GEMINI_CAPS,
        openai_prefix: "/v1",
        openai_paths: &[],
        native_responses: false,
        test: TestRequest::Chat,
        balance: None,
        models_api: Some(ModelsApi::Gemini),
        models: &["gemini-2.0-flash", "gemini-2.5-flash", "gemini-2.5-pro"],
    }
}

/// Zhipu's BigModel v4 API (ChatGLM 16, GLM-4V 26; https://docs.bigmodel.cn/api-reference):
/// OpenAI's chat completions and embeddings under `{base}/api/paas/v4`, authenticated with a
/// JWT signed from the `id.secret` API key (`relay::adaptor::zhipu`).
const fn zhipu(id: i32, name: &'static str) -> ChannelType {
    ChannelType {
        family: Some(Family::Zhipu),
        auth: Auth::ProviderSigned,
        key_format: KeyFormat::IdSecret,
        key_hint: "keyHint.zhipu",
        caps: CHAT_STREAM.with(Caps::EMBEDDINGS),
        openai_prefix: "/api/paas/v4",
        models_api: None,
        ..openai(id, name, "https://open.bigmodel.cn")
    }
}

/// Every type, by id.
pub const CHANNEL_TYPES: &[ChannelType] = &[
    ChannelType {
        balance: Some(BalanceApi::OpenAiBilling),
        models: OPENAI_MODELS,
        native_responses: true,
        ..openai(1, "OpenAI", "https://api.openai.com")
    },
    unsupported(2, "Midjourney Proxy", "https://oa.api2d.net"),
    ChannelType {
        id: 3,
        name: "Azure OpenAI",
        family: Some(Family::Azure),
        default_base_url: "",
        base_url_required: true,
        auth: Auth::ApiKeyHeader,
        key_format: KeyFormat::Lines,
        key_hint: "",
        fields: AZURE_FIELDS,
        // The Azure transport (`relay::adaptor::azure`): deployment URLs for chat, completions,
        // embeddings, images and audio; Responses at the resource.
        caps: AZURE_CAPS,
        openai_prefix: "/v1",
        openai_paths: &[],
        native_responses: true,
        test: TestRequest::Chat,
        balance: None,
        models_api: None,
        models: OPENAI_MODELS,
    },
    ChannelType {
        models: &["llama3.1", "qwen2.5"],
        // Ollama's OpenAI compatibility (https://docs.ollama.com/api/openai-compatibility):
        // chat, completions, Responses (stateless), embeddings, image generations (experimental),
        // speech and transcriptions; no rerank or moderations.
        caps: CHAT_STREAM
            .with(Caps::COMPLETIONS)
            .with(Caps::RESPONSES)
            .with(Caps::EMBEDDINGS)
            .with(Caps::IMAGES)
            .with(Caps::AUDIO),
        ..openai(4, "Ollama", "http://localhost:11434")
    },
    unsupported(5, "Midjourney Proxy Plus", "https://api.openai-sb.com"),
    ChannelType {
        balance: Some(BalanceApi::OpenAiBilling),
        ..openai(8, "Custom", "")
    },
    ChannelType {
        id: 11,
        name: "PaLM2",
        // The PaLM API is retired (https://ai.google.dev/palm_docs/deprecation): PaLM2 channels
        // are sent to the Gemini API with the same Google AI Studio key, as Gemini (24) channels
        // are; the channel editor says so (`keyHint.palm`).
        key_hint: "keyHint.palm",
        models: &["gemini-2.0-flash", "gemini-2.5-flash"],
        ..gemini_row()
    },
    ChannelType {
        id: 14,
        name: "Claude",
        family: Some(Family::Anthropic),
        default_base_url: "https://api.anthropic.com",
        base_url_required: false,
        auth: Auth::XApiKey,
        key_format: KeyFormat::Lines,
        key_hint: "",
        fields: &[],
        caps: CLAUDE_CAPS,
        openai_prefix: "/v1",
        openai_paths: &[],
        native_responses: false,
        test: TestRequest::Chat,
        balance: None,
        models_api: Some(ModelsApi::Anthropic),
        models: CLAUDE_MODELS,
    },
    ChannelType {
        id: 15,
        name: "Baidu Qianfan",
        family: Some(Family::Baidu),
        default_base_url: "https://aip.baidubce.com",
        base_url_required: false,
        auth: Auth::ProviderSigned,
        // The incumbent's key format (reference §5.1), exchanged for an access token.
        key_format: KeyFormat::Parts(&["APIKey", "SecretKey"]),
        key_hint: "",
        fields: &[],
        // ERNIE chat, streamed, through `wenxinworkshop/chat/{endpoint}` (`relay::adaptor::baidu`,
        // `relay::wire::baidu`; https://cloud.baidu.com/doc/WENXINWORKSHOP/s/jlil56u11). Its
        // documented error codes are in `errors`.
        caps: CHAT_STREAM,
        openai_prefix: "/v1",
        openai_paths: &[],
        native_responses: false,
        test: TestRequest::Chat,
        balance: None,
        models_api: None,
        models: &[
            "ERNIE-4.0-8K",
            "ERNIE-3.5-8K",
            "ERNIE-Speed-8K",
            "ERNIE-Lite-8K",
        ],
    },
    ChannelType {
        models: &["glm-4", "glm-4-flash"],
        ..zhipu(16, "ChatGLM")
    },
    ChannelType {
        models: &["qwen-turbo", "qwen-plus", "qwen-max"],
        // DashScope's OpenAI-compatible mode
        // (https://help.aliyun.com/zh/model-studio/compatibility-of-openai-with-dashscope).
        openai_prefix: "/compatible-mode/v1",
        // Its OpenAI-compatible APIs (https://help.aliyun.com/zh/model-studio/toolkits-and-frameworks):
        // chat, completions, embeddings (files and batches aside). Its Responses API lives
        // under another path (`/api/v2/apps/protocols/compatible-mode/v1`), so Responses
        // clients are converted to chat; images, audio and rerank are DashScope-native only.
        // Completions: Qwen Coder's (https://help.aliyun.com/zh/model-studio/completions).
        caps: CHAT_STREAM.with(Caps::EMBEDDINGS).with(Caps::COMPLETIONS),
        ..openai(17, "Qwen", "https://dashscope.aliyuncs.com")
    },
    ChannelType {
        id: 18,
        name: "Spark",
        family: Some(Family::Spark),
        // Dialed as wss:// (the console takes http(s) base URLs only).
        default_base_url: "https://spark-api.xf-yun.com",
        base_url_required: false,
        auth: Auth::ProviderSigned,
        // The incumbent's key format (reference §5.1); the APISecret signs the URL.
        key_format: KeyFormat::Parts(&["APPID", "APISecret", "APIKey"]),
        key_hint: "",
        fields: SPARK_FIELDS,
        // Chat, streamed, over the WebSocket API (`relay::adaptor::spark`, `relay::wire::spark`:
        // https://xfyun.cn/doc/spark/Web.html, its signed URL
        // https://xfyun.cn/doc/spark/general_url_authentication.html). Its documented error
        // codes are in `errors`.
        caps: CHAT_STREAM,
        openai_prefix: "",
        openai_paths: &[],
        native_responses: false,
        test: TestRequest::Chat,
        balance: None,
        models_api: None,
        models: &[
            "SparkDesk-v1.1",
            "SparkDesk-v2.1",
            "SparkDesk-v3.1",
            "SparkDesk-v3.5",
            "SparkDesk-v4.0",
        ],
    },
    ChannelType {
        models: &["360gpt-pro", "360gpt-turbo"],
        // 360's API index (https://ai.360.com/docs/437061603e0) lists chat/completions (OpenAI
        // format), messages (Claude format), a Responses API and its own image, video, audio and
        // knowledge-base APIs: chat only of OpenAI's routes here (Responses clients converted).
        caps: CHAT_STREAM,
        ..openai(19, "360", "https://api.360.cn")
    },
    ChannelType {
        balance: Some(BalanceApi::OpenRouterCredits),
        // OpenRouter's API (https://openrouter.ai/docs/api-reference/overview; its SDKs' endpoint
        // list: /v1/chat/completions, /v1/responses, /v1/messages, /v1/embeddings).
        caps: CHAT_STREAM.with(Caps::RESPONSES).with(Caps::EMBEDDINGS),
        ..openai(20, "OpenRouter", "https://openrouter.ai/api")
    },
    ChannelType {
        fields: KNOWLEDGE_FIELDS,
        ..unsupported(21, "AI Proxy Library", "https://api.aiproxy.io")
    },
    ChannelType {
        key_hint: "keyHint.fastgpt",
        // A FastGPT app's API is its chat completions (https://doc.fastgpt.io/docs/openapi/intro).
        caps: CHAT_STREAM,
        ..openai(22, "FastGPT", "https://fastgpt.run/api/openapi")
    },
    ChannelType {
        id: 23,
        name: "Hunyuan",
        family: Some(Family::Hunyuan),
        default_base_url: "https://hunyuan.tencentcloudapi.com",
        base_url_required: false,
        auth: Auth::ProviderSigned,
        // The incumbent's key format (reference §5.1); TC3-HMAC-SHA256 signs with the
        // SecretId and SecretKey.
        key_format: KeyFormat::Parts(&["AppId", "SecretId", "SecretKey"]),
        key_hint: "",
        fields: &[],
        // Chat (streamed, tools) through `ChatCompletions` (`relay::adaptor::hunyuan`,
        // `relay::wire::hunyuan`: the official SDK's hunyuan/v20230901 models; TencentCloud API
        // 3.0 Signature v3, https://tencentcloud.com/document/api/266/34114). Its documented
        // error codes are in `errors`.
        caps: CHAT_STREAM,
        openai_prefix: "/v1",
        openai_paths: &[],
        native_responses: false,
        test: TestRequest::Chat,
        balance: None,
        models_api: None,
        models: &[
            "hunyuan-turbos-latest",
            "hunyuan-lite",
            "hunyuan-standard",
            "hunyuan-pro",
            "hunyuan-turbo",
            "hunyuan-functioncall",
        ],
    },
    gemini_row(),
    ChannelType {
        balance: Some(BalanceApi::MoonshotBalance),
        models: &["moonshot-v1-8k", "moonshot-v1-32k", "moonshot-v1-128k"],
        // Moonshot's endpoints (https://platform.kimi.ai/docs/api/overview): chat completions,
        // models, token estimates, balance and files; nothing else of OpenAI's.
        caps: CHAT_STREAM,
        ..openai(25, "Moonshot", "https://api.moonshot.cn")
    },
    ChannelType {
        models: &["glm-4v", "glm-4v-plus"],
        ..zhipu(26, "GLM-4V")
    },
    ChannelType {
        models: &["yi-large", "yi-medium"],
        // 01.AI's platform API (https://platform.lingyiwanwu.com/docs/api-reference): chat
        // completions (vision through chat) and no other OpenAI route, embeddings included.
        caps: CHAT_STREAM,
        ..openai(31, "Yi", "https://api.lingyiwanwu.com")
    },
    ChannelType {
        id: 33,
        name: "AWS Claude",
        family: Some(Family::Bedrock),
        // The runtime endpoint is derived from the key's region.
        default_base_url: "",
        base_url_required: false,
        auth: Auth::AwsSigV4,
        key_format: KeyFormat::Aws,
        key_hint: "",
        fields: &[],
        // Claude through InvokeModel, other models through Converse, token counts through
        // CountTokens, Titan and Cohere embeddings through InvokeModel (`relay::adaptor::bedrock`,
        // `relay::routes::count`, `relay::adaptor::cloud_embed`).
        caps: Caps::CHAT
            .with(Caps::STREAM)
            .with(Caps::EMBEDDINGS)
            .with(Caps::COUNT_TOKENS),
        openai_prefix: "/v1",
        openai_paths: &[],
        native_responses: false,
        test: TestRequest::Chat,
        balance: None,
        models_api: None,
        models: &[],
    },
    ChannelType {
        id: 34,
        name: "Cohere",
        family: Some(Family::Cohere),
        default_base_url: "https://api.cohere.ai",
        base_url_required: false,
        auth: Auth::Bearer,
        key_format: KeyFormat::Lines,
        key_hint: "",
        fields: &[],
        // Chat through the hub, embeddings and rerank (`relay::routes::cohere`).
        caps: Caps::CHAT
            .with(Caps::STREAM)
            .with(Caps::EMBEDDINGS)
            .with(Caps::RERANK),
        openai_prefix: "/v1",
        openai_paths: &[],
        native_responses: false,
        test: TestRequest::Chat,
        balance: None,
        models_api: None,
        models: &["command-r", "command-r-plus"],
    },
    ChannelType {
        models: &["MiniMax-M2.5", "MiniMax-M2.1", "MiniMax-M2"],
        // MiniMax's OpenAI-compatible API (https://platform.minimaxi.com/docs/api-reference/text-openai-api):
        // chat completions under `{base}/v1`, bearer key. Its embeddings, speech and images are
        // MiniMax's own formats, not OpenAI's. The default host is the one the page names
        // (`api.minimaxi.com`; the incumbent's `api.minimax.chat` is its older name).
        caps: CHAT_STREAM,
        models_api: None,
        ..openai(35, "MiniMax", "https://api.minimaxi.com")
    },
    unsupported(36, "Suno", ""),
    ChannelType {
        id: 37,
        name: "Dify",
        family: Some(Family::Dify),
        default_base_url: "https://api.dify.ai",
        base_url_required: false,
        auth: Auth::Bearer,
        key_format: KeyFormat::Lines,
        key_hint: "",
        fields: &[],
        // A chat app's `POST /v1/chat-messages`, blocking or streamed (`relay::adaptor::dify`,
        // `relay::wire::dify`; the "Chat App API" page every Dify app shows). Its documented
        // error codes are in `errors`.
        caps: CHAT_STREAM,
        openai_prefix: "/v1",
        openai_paths: &[],
        native_responses: false,
        test: TestRequest::Chat,
        balance: None,
        models_api: None,
        models: &[],
    },
    ChannelType {
        models: &["jina-embeddings-v3", "jina-reranker-v2-base-multilingual"],
        // Jina's Search Foundation API (https://jina.ai/embeddings/, https://jina.ai/reranker/):
        // `POST {base}/v1/embeddings` (OpenAI's body and answer, `usage.total_tokens`) and
        // `POST {base}/v1/rerank` (the rerank shape Tollgate's `/v1/rerank` takes), bearer key.
        caps: Caps::EMBEDDINGS.with(Caps::RERANK),
        test: TestRequest::Embeddings,
        models_api: None,
        ..openai(38, "Jina", "https://api.jina.ai")
    },
    ChannelType {
        family: Some(Family::Cloudflare),
        fields: CLOUDFLARE_FIELDS,
        models: &[
            "@cf/meta/llama-3.1-8b-instruct",
            "@cf/baai/bge-large-en-v1.5",
        ],
        // Workers AI's OpenAI-compatible endpoints
        // (https://developers.cloudflare.com/workers-ai/configuration/open-ai-compatibility/):
        // chat completions and embeddings under `/client/v4/accounts/{account}/ai/v1`
        // (`relay::adaptor::cloudflare`), an API token as the bearer key.
        caps: CHAT_STREAM.with(Caps::EMBEDDINGS),
        models_api: None,
        ..openai(39, "Cloudflare", "https://api.cloudflare.com")
    },
    ChannelType {
        balance: Some(BalanceApi::SiliconFlowUserInfo),
        // SiliconFlow's API reference (https://docs.siliconflow.cn/llms.txt): chat, embeddings,
        // rerank, image generations, speech and transcriptions; no moderations or Responses.
        caps: CHAT_STREAM
            .with(Caps::EMBEDDINGS)
            .with(Caps::IMAGES)
            .with(Caps::AUDIO)
            .with(Caps::RERANK),
        ..openai(40, "SiliconCloud", "https://api.siliconflow.cn")
    },
    ChannelType {
        id: 41,
        name: "Vertex AI",
        family: Some(Family::Vertex),
        // The regional endpoint is derived from `other` (the region).
        default_base_url: "",
        base_url_required: false,
        auth: Auth::GoogleServiceAccount,
        key_format: KeyFormat::ServiceAccountJson,
        key_hint: "",
        fields: VERTEX_FIELDS,
        // Gemini and Claude models, their token counts, text embeddings through `:predict`
        // (`relay::adaptor::vertex`, `relay::routes::count`, `relay::adaptor::cloud_embed`).
        caps: Caps::CHAT
            .with(Caps::STREAM)
            .with(Caps::EMBEDDINGS)
            .with(Caps::COUNT_TOKENS),
        openai_prefix: "/v1",
        openai_paths: &[],
        native_responses: false,
        test: TestRequest::Chat,
        balance: None,
        models_api: None,
        models: &[],
    },
    ChannelType {
        models: &[
            "mistral-large-latest",
            "mistral-small-latest",
            "codestral-latest",
        ],
        // Mistral's API (https://docs.mistral.ai/api/): chat, embeddings, moderations, audio
        // transcriptions (no speech or translations: those get Mistral's own error), FIM, OCR;
        // no image generations, rerank or Responses.
        caps: CHAT_STREAM
            .with(Caps::EMBEDDINGS)
            .with(Caps::MODERATION)
            .with(Caps::AUDIO),
        ..openai(42, "Mistral", "https://api.mistral.ai")
    },
    ChannelType {
        balance: Some(BalanceApi::DeepSeekBalance),
        models: &["deepseek-chat", "deepseek-reasoner"],
        // DeepSeek's API reference lists chat completions, FIM completions, the model list and
        // the balance, nothing else (https://api-docs.deepseek.com/api/deepseek-api): no
        // embeddings, images, audio, rerank or moderations, so such requests never reach it.
        caps: CHAT_STREAM.with(Caps::COMPLETIONS),
        // FIM completions are legacy completions (`prompt`, `suffix`, at most 4K tokens) served
        // only on the beta base URL (https://api-docs.deepseek.com/guides/fim_completion):
        // `/v1/completions` goes to `{base}/beta/completions`.
        openai_paths: &[("/v1/completions", "/beta/completions")],
        ..openai(43, "DeepSeek", "https://api.deepseek.com")
    },
    ChannelType {
        models: &["m3e", "m3e-base", "m3e-large"],
        // M3E (MokaAI's open embedding models) is served by an OpenAI-compatible embeddings
        // server (FastGPT's guide, https://doc.fastgpt.io/docs/self-host/custom-models/m3e:
        // `POST {base}/v1/embeddings`, bearer key): embeddings only, so it is tested with one.
        caps: Caps::EMBEDDINGS,
        test: TestRequest::Embeddings,
        models_api: None,
        ..openai(44, "M3E", "https://api.moka.ai")
    },
    ChannelType {
        // Ark's model-call API (https://www.volcengine.com/docs/82379/1298459).
        openai_prefix: "/api/v3",
        // Ark's runtime API (its SDK, com.volcengine.ark.runtime: chat completions, embeddings,
        // image generations, Responses, content generation): no audio, rerank or moderations.
        caps: CHAT_STREAM
            .with(Caps::RESPONSES)
            .with(Caps::EMBEDDINGS)
            .with(Caps::IMAGES),
        ..openai(45, "Volcano Ark", "https://ark.cn-beijing.volces.com")
    },
    ChannelType {
        family: Some(Family::QianfanV2),
        key_hint: "keyHint.qianfanV2",
        models: &["ernie-4.0-8k", "ernie-3.5-8k", "ernie-speed-8k"],
        // Qianfan's v2 inference API, OpenAI-compatible
        // (https://cloud.baidu.com/doc/qianfan/s/qmh4sv5vi): chat completions under `{base}/v2`,
        // the API key as bearer and the optional `appid` header (`relay::adaptor::qianfan`).
        openai_prefix: "/v2",
        caps: CHAT_STREAM,
        ..openai(46, "Baidu Qianfan v2", "https://qianfan.baidubce.com")
    },
    ChannelType {
        // Xinference's model abilities (https://inference.readthedocs.io/en/latest/models/index.html):
        // chat, embeddings, rerank, images, audio; no moderations or Responses.
        caps: CHAT_STREAM
            .with(Caps::COMPLETIONS)
            .with(Caps::EMBEDDINGS)
            .with(Caps::IMAGES)
            .with(Caps::AUDIO)
            .with(Caps::RERANK),
        ..openai(47, "Xinference", "")
    },
    ChannelType {
        models: &["grok-3", "grok-3-mini", "grok-4"],
        // xAI's REST API (https://docs.x.ai/api-reference): chat completions, Responses, image
        // generations and edits, videos, models, tokenize; text to speech is its own `/v1/tts`,
        // not OpenAI's; no embeddings, rerank or moderations; completions are its legacy
        // `/v1/completions` (https://docs.x.ai/developers/rest-api-reference/inference/legacy).
        caps: CHAT_STREAM
            .with(Caps::RESPONSES)
            .with(Caps::IMAGES)
            .with(Caps::COMPLETIONS),
        ..openai(48, "xAI", "https://api.x.ai")
    },
    ChannelType {
        id: 49,
        name: "Coze",
        family: Some(Family::Coze),
        default_base_url: "https://api.coze.cn",
        base_url_required: false,
        auth: Auth::Bearer,
        key_format: KeyFormat::Lines,
        key_hint: "",
        fields: COZE_FIELDS,
        // A bot's chat API v3, `POST /v3/chat`, always as its event stream (whole answers
        // gathered), a personal access token as bearer, the bot the channel's `other` else the
        // model (`relay::adaptor::coze`, `relay::wire::coze`;
        // https://www.coze.cn/open/docs/developer_guides/chat_v3, coze-py's
        // `cozepy/chat/__init__.py`). Api.coze.com serves coze.com's bots. Its documented error
        // codes (https://www.coze.cn/open/docs/developer_guides/coze_error_codes) are in `errors`.
        caps: CHAT_STREAM,
        openai_prefix: "/v1",
        openai_paths: &[],
        native_responses: false,
        test: TestRequest::Chat,
        balance: None,
        models_api: None,
        models: &[],
    },
];
