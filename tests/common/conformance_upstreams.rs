//! The upstream side of the conformance matrix (tests/conformance.rs): every upstream, one mock
//! that answers each provider's documented wire format by path, and the checks of what each
//! upstream received.
//!
//! Wire formats, as documented (the fixtures below follow these pages; the existing per-provider
//! tests tests/relay_*.rs cite the same pages for the fixtures reused here):
//! - OpenAI chat completions and Responses: the API reference
//!   (https://platform.openai.com/docs/api-reference/chat/create,
//!   https://platform.openai.com/docs/api-reference/responses/create, streaming events
//!   https://platform.openai.com/docs/api-reference/responses-streaming). `reasoning_content` is
//!   not OpenAI's: it is the field OpenAI-compatible reasoning models answer with
//!   (https://api-docs.deepseek.com/guides/reasoning_model), which type-1 channels often front.
//! - Azure OpenAI: https://learn.microsoft.com/en-us/azure/ai-services/openai/reference
//!   (`/openai/deployments/{deployment-id}/chat/completions?api-version=`, `api-key` header).
//! - Anthropic Messages: https://docs.anthropic.com/en/api/messages, streaming
//!   https://docs.anthropic.com/en/docs/build-with-claude/streaming (thinking blocks with
//!   `signature_delta`, tool_use with `input_json_delta`), vision
//!   https://docs.anthropic.com/en/docs/build-with-claude/vision.
//! - Bedrock: InvokeModel / InvokeModelWithResponseStream with the Messages body
//!   (https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-anthropic-claude-messages.html),
//!   Converse / ConverseStream (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html,
//!   https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ConverseStream.html,
//!   ReasoningContentBlock https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ReasoningContentBlock.html,
//!   ImageBlock https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ImageBlock.html),
//!   SigV4 verified like AWS ([`super::common::cloud_auth::verify_sigv4`]).
//! - Vertex AI: Gemini `generateContent` / `streamGenerateContent`
//!   (https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/inference), Claude
//!   `rawPredict` / `streamRawPredict` (https://cloud.google.com/vertex-ai/generative-ai/docs/partner-models/claude/use-claude),
//!   the signed-JWT grant verified like Google ([`super::common::cloud_auth::verify_grant`]).
//! - Gemini API: https://ai.google.dev/api/generate-content (parts with `thought: true`,
//!   https://ai.google.dev/gemini-api/docs/thinking; `functionCall`; `inlineData`).
//! - Cohere chat v2: https://docs.cohere.com/reference/chat, https://docs.cohere.com/v2/docs/streaming
//!   (`thinking` content, `tool-call-*` events, `message-end` usage).
//! - MiniMax: its OpenAI-compatible chat completions
//!   (https://platform.minimaxi.com/docs/api-reference/text-openai-api), OpenAI's fixtures.
//! - Zhipu's v4 API (`/api/paas/v4/chat/completions`, the key signed into an HS256 JWT:
//!   https://open.bigmodel.cn/dev/api/http-call/http-auth), Workers AI's OpenAI-compatible
//!   endpoints (`/client/v4/accounts/{account}/ai/v1/…`:
//!   https://developers.cloudflare.com/workers-ai/configuration/open-ai-compatibility/), Qianfan
//!   v2 (`/v2/chat/completions`, bearer key and `appid`: https://cloud.baidu.com/doc/qianfan-api/s/ym9chdsy5):
//!   OpenAI's fixtures.
//! - Tencent Hunyuan `ChatCompletions` (API 3.0, 2023-09-01): the official SDK's models
//!   (https://github.com/TencentCloud/tencentcloud-sdk-go, `tencentcloud/hunyuan/v20230901/`),
//!   TC3-HMAC-SHA256 verified like Tencent ([`super::common::mock_hunyuan::signed_by`]); no
//!   reasoning output in that API.
#![expect(
    clippy::expect_used,
    reason = "a broken mock must fail the test loudly"
)]

use base64::Engine;
use serde_json::{Value, json};

use super::common::cloud_auth::{
    AwsExpect, PROJECT, service_account_json, verify_grant, verify_sigv4,
};
use super::common::mock_cloud::{Answer, Recorded, sse};
use super::common::mock_hunyuan::signed_by;

/// Every upstream bills this usage: 21 prompt tokens, 8 completion tokens.
pub const PROMPT: i64 = 21;
/// See [`PROMPT`].
pub const COMPLETION: i64 = 8;
/// The answer's text (streams send it as "Hi " + "there").
pub const TEXT: &str = "Hi there";
/// The reasoning text.
pub const THINKING: &str = "Let me think.";
/// The signature of Claude's thinking block.
pub const SIGNATURE: &str = "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds";
/// A 1×1 PNG, base64.
pub const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

const OPENAI_KEY: &str = "sk-upstream-openai-conf";
const AZURE_KEY: &str = "azure-upstream-key-conf";
const CLAUDE_KEY: &str = "sk-ant-upstream-conf";
const GEMINI_KEY: &str = "gemini-upstream-key-conf";
const COHERE_KEY: &str = "cohere-upstream-key-conf";
const MINIMAX_KEY: &str = "minimax-upstream-key-conf";
const ZHIPU_ID: &str = "zhipuconf";
const ZHIPU_SECRET: &str = "zhipu-secret-conf";
const CLOUDFLARE_KEY: &str = "cloudflare-token-conf";
const CLOUDFLARE_ACCOUNT: &str = "conf0account";
const QIANFAN_KEY: &str = "bce-v3/ALTAK-conf/secret";
const QIANFAN_APP: &str = "app-conf";
const HUNYUAN_ID: &str = "AKIDconformance0001";
const HUNYUAN_SECRET: &str = "hunyuan-conformance-secret";
const BAIDU_AK: &str = "baidu-conformance-ak";
const BAIDU_SK: &str = "baidu-conformance-sk";
const BAIDU_TOKEN: &str = "24.baidu-conformance-token";
const DIFY_KEY: &str = "app-dify-conformance";
const COZE_TOKEN: &str = "pat_coze_conformance";
const COZE_BOT: &str = "7348293334";
const AWS_ACCESS: &str = "AKIDCONFORMANCE1";
const AWS_SECRET: &str = "conformance/Secret+Key/EXAMPLE";
const AWS_REGION: &str = "us-west-2";
const VERTEX_TOKEN: &str = "ya29.conformance-token";
const VERTEX_REGION: &str = "us-central1";
const AZURE_DEPLOYMENT: &str = "gpt-4o-conf";

/// What a cell asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scenario {
    /// Plain text.
    Text,
    /// A tool definition sent; the upstream answers a tool call.
    Tools,
    /// An inline base64 image part.
    Image,
    /// Reasoning asked for; the upstream answers thinking before the text.
    Reasoning,
}

impl Scenario {
    /// The marker put in the user's text, by which the mock knows what to answer.
    pub fn marker(self) -> &'static str {
        match self {
            Scenario::Text => "scenario-text",
            Scenario::Tools => "scenario-tools",
            Scenario::Image => "scenario-image",
            Scenario::Reasoning => "scenario-reasoning",
        }
    }

    fn of(body: &[u8]) -> Scenario {
        let text = String::from_utf8_lossy(body);
        [Scenario::Tools, Scenario::Image, Scenario::Reasoning]
            .into_iter()
            .find(|s| text.contains(s.marker()))
            .unwrap_or(Scenario::Text)
    }
}

/// The upstreams of the matrix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Upstream {
    /// OpenAI (1).
    OpenAi,
    /// Azure OpenAI (3).
    Azure,
    /// Anthropic Claude (14).
    Claude,
    /// Claude on AWS Bedrock (33), InvokeModel.
    BedrockClaude,
    /// A non-Claude model on AWS Bedrock (33), Converse.
    BedrockConverse,
    /// Gemini on Vertex AI (41).
    VertexGemini,
    /// Claude on Vertex AI (41).
    VertexClaude,
    /// Google Gemini API (24).
    Gemini,
    /// Cohere (34).
    Cohere,
    /// MiniMax (35), its OpenAI-compatible API.
    MiniMax,
    /// Zhipu GLM (16), the v4 API with a signed JWT.
    Zhipu,
    /// Cloudflare Workers AI (39), the account's OpenAI-compatible path.
    Cloudflare,
    /// Baidu Qianfan v2 (46), with an app id.
    QianfanV2,
    /// Tencent Hunyuan (23).
    Hunyuan,
    /// Baidu Qianfan v1 (15), ERNIE chat with an OAuth access token.
    Baidu,
    /// A Dify chat app (37).
    Dify,
    /// A Coze bot (49), chat API v3.
    Coze,
}

/// All upstreams, in the matrix's order.
pub const UPSTREAMS: [Upstream; 17] = [
    Upstream::OpenAi,
    Upstream::Azure,
    Upstream::Claude,
    Upstream::BedrockClaude,
    Upstream::BedrockConverse,
    Upstream::VertexGemini,
    Upstream::VertexClaude,
    Upstream::Gemini,
    Upstream::Cohere,
    Upstream::MiniMax,
    Upstream::Zhipu,
    Upstream::Cloudflare,
    Upstream::QianfanV2,
    Upstream::Hunyuan,
    Upstream::Baidu,
    Upstream::Dify,
    Upstream::Coze,
];

/// An upstream's body format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// OpenAI chat completions.
    Chat,
    /// OpenAI Responses.
    Responses,
    /// Anthropic Messages (with `model`).
    Messages,
    /// Anthropic Messages in a cloud's body (`anthropic_version`, no `model`).
    CloudMessages(&'static str),
    /// Bedrock Converse.
    Converse,
    /// Gemini generateContent.
    Gemini,
    /// Cohere chat v2.
    Cohere,
    /// Hunyuan `ChatCompletions`.
    Hunyuan,
    /// Baidu Qianfan v1 ERNIE chat.
    Baidu,
    /// Dify chat-messages.
    Dify,
    /// Coze chat API v3.
    Coze,
}

impl Upstream {
    /// The model name clients ask for (each upstream has its own).
    pub fn model(self) -> &'static str {
        match self {
            Upstream::OpenAi => "conf-openai",
            Upstream::Azure => "conf-azure",
            Upstream::Claude => "conf-claude",
            Upstream::BedrockClaude => "conf-bedrock-claude",
            Upstream::BedrockConverse => "conf-bedrock-nova",
            Upstream::VertexGemini => "conf-vertex-gemini",
            Upstream::VertexClaude => "conf-vertex-claude",
            Upstream::Gemini => "conf-gemini",
            Upstream::Cohere => "conf-cohere",
            Upstream::MiniMax => "conf-minimax",
            Upstream::Zhipu => "conf-zhipu",
            Upstream::Cloudflare => "conf-cloudflare",
            Upstream::QianfanV2 => "conf-qianfan",
            Upstream::Hunyuan => "conf-hunyuan",
            Upstream::Baidu => "conf-baidu",
            Upstream::Dify => "conf-dify",
            Upstream::Coze => "conf-coze",
        }
    }

    /// The model the upstream is asked for (the channel's model mapping).
    fn upstream_model(self) -> &'static str {
        match self {
            Upstream::OpenAi => "gpt-4o-mini",
            Upstream::Azure => AZURE_DEPLOYMENT,
            Upstream::Claude => "claude-sonnet-4-20250514",
            Upstream::BedrockClaude => "anthropic.claude-sonnet-4-20250514-v1:0",
            Upstream::BedrockConverse => "amazon.nova-lite-v1:0",
            Upstream::VertexGemini | Upstream::Gemini => "gemini-2.5-flash",
            Upstream::VertexClaude => "claude-sonnet-4@20250514",
            Upstream::Cohere => "command-a-03-2025",
            Upstream::MiniMax => "MiniMax-M2.1",
            Upstream::Zhipu => "glm-4-flash",
            Upstream::Cloudflare => "@cf/meta/llama-3.1-8b-instruct",
            Upstream::QianfanV2 => "ernie-4.0-8k",
            Upstream::Hunyuan => "hunyuan-turbo",
            Upstream::Baidu => "ERNIE-4.0-8K",
            Upstream::Dify => "dify-app",
            Upstream::Coze => "coze-bot",
        }
    }

    /// The channel (POST /api/channel/ body) of this upstream on the mock at `base`.
    pub fn channel(self, base: &str) -> Value {
        let (kind, key, other) = match self {
            Upstream::OpenAi => (1, OPENAI_KEY.to_owned(), ""),
            Upstream::Azure => (3, AZURE_KEY.to_owned(), ""),
            Upstream::Claude => (14, CLAUDE_KEY.to_owned(), ""),
            Upstream::BedrockClaude | Upstream::BedrockConverse => {
                (33, format!("{AWS_ACCESS}|{AWS_SECRET}|{AWS_REGION}"), "")
            }
            Upstream::VertexGemini | Upstream::VertexClaude => (
                41,
                service_account_json(&format!("{base}/token")),
                VERTEX_REGION,
            ),
            Upstream::Gemini => (24, GEMINI_KEY.to_owned(), ""),
            Upstream::Cohere => (34, COHERE_KEY.to_owned(), ""),
            Upstream::MiniMax => (35, MINIMAX_KEY.to_owned(), ""),
            Upstream::Zhipu => (16, format!("{ZHIPU_ID}.{ZHIPU_SECRET}"), ""),
            Upstream::Cloudflare => (39, CLOUDFLARE_KEY.to_owned(), CLOUDFLARE_ACCOUNT),
            Upstream::QianfanV2 => (46, format!("{QIANFAN_KEY}|{QIANFAN_APP}"), ""),
            Upstream::Hunyuan => (23, format!("1300000000|{HUNYUAN_ID}|{HUNYUAN_SECRET}"), ""),
            Upstream::Baidu => (15, format!("{BAIDU_AK}|{BAIDU_SK}"), ""),
            Upstream::Dify => (37, DIFY_KEY.to_owned(), ""),
            Upstream::Coze => (49, COZE_TOKEN.to_owned(), COZE_BOT),
        };
        json!({"name": format!("{self:?}"), "type": kind, "key": key, "base_url": base,
            "other": other, "models": self.model(), "group": "default",
            "model_mapping": json!({self.model(): self.upstream_model()}).to_string()})
    }

    /// The upstream's body format for a client speaking `responses_client` (OpenAI's and
    /// Azure's channels have the Responses API and get Responses clients' requests in it).
    pub fn format(self, responses_client: bool) -> Format {
        match self {
            Upstream::OpenAi | Upstream::Azure if responses_client => Format::Responses,
            Upstream::OpenAi | Upstream::Azure => Format::Chat,
            Upstream::Claude => Format::Messages,
            Upstream::BedrockClaude => Format::CloudMessages("bedrock-2023-05-31"),
            Upstream::VertexClaude => Format::CloudMessages("vertex-2023-10-16"),
            Upstream::BedrockConverse => Format::Converse,
            Upstream::VertexGemini | Upstream::Gemini => Format::Gemini,
            Upstream::Cohere => Format::Cohere,
            Upstream::MiniMax | Upstream::Zhipu | Upstream::Cloudflare | Upstream::QianfanV2 => {
                Format::Chat
            }
            Upstream::Hunyuan => Format::Hunyuan,
            Upstream::Baidu => Format::Baidu,
            Upstream::Dify => Format::Dify,
            Upstream::Coze => Format::Coze,
        }
    }

    /// The path (and query, when it matters) the upstream must be called at.
    fn expected_path(self, responses_client: bool, stream: bool) -> (String, Option<String>) {
        let model = self.upstream_model();
        let vertex = |publisher: &str| {
            format!(
                "/v1/projects/{PROJECT}/locations/{VERTEX_REGION}/publishers/{publisher}/models/{model}"
            )
        };
        let encoded = model.replace(':', "%3A");
        match self {
            Upstream::OpenAi if responses_client => ("/v1/responses".into(), None),
            Upstream::OpenAi => ("/v1/chat/completions".into(), None),
            Upstream::Azure if responses_client => (
                "/openai/responses".into(),
                Some("api-version=2024-10-21".into()),
            ),
            Upstream::Azure => (
                format!("/openai/deployments/{AZURE_DEPLOYMENT}/chat/completions"),
                Some("api-version=2024-10-21".into()),
            ),
            Upstream::Claude => ("/v1/messages".into(), None),
            Upstream::BedrockClaude if stream => (
                format!("/model/{encoded}/invoke-with-response-stream"),
                None,
            ),
            Upstream::BedrockClaude => (format!("/model/{encoded}/invoke"), None),
            Upstream::BedrockConverse if stream => {
                (format!("/model/{encoded}/converse-stream"), None)
            }
            Upstream::BedrockConverse => (format!("/model/{encoded}/converse"), None),
            Upstream::VertexGemini if stream => (
                format!("{}:streamGenerateContent", vertex("google")),
                Some("alt=sse".into()),
            ),
            Upstream::VertexGemini => (format!("{}:generateContent", vertex("google")), None),
            Upstream::VertexClaude if stream => {
                (format!("{}:streamRawPredict", vertex("anthropic")), None)
            }
            Upstream::VertexClaude => (format!("{}:rawPredict", vertex("anthropic")), None),
            Upstream::Gemini if stream => (
                format!("/v1beta/models/{model}:streamGenerateContent"),
                Some("alt=sse".into()),
            ),
            Upstream::Gemini => (format!("/v1beta/models/{model}:generateContent"), None),
            Upstream::Cohere => ("/v2/chat".into(), None),
            Upstream::MiniMax => ("/v1/chat/completions".into(), None),
            Upstream::Zhipu => ("/api/paas/v4/chat/completions".into(), None),
            Upstream::Cloudflare => (
                format!("/client/v4/accounts/{CLOUDFLARE_ACCOUNT}/ai/v1/chat/completions"),
                None,
            ),
            Upstream::QianfanV2 => ("/v2/chat/completions".into(), None),
            Upstream::Hunyuan => ("/".into(), None),
            Upstream::Baidu => (
                "/rpc/2.0/ai_custom/v1/wenxinworkshop/chat/completions_pro".into(),
                Some(format!("access_token={BAIDU_TOKEN}")),
            ),
            Upstream::Dify => ("/v1/chat-messages".into(), None),
            Upstream::Coze => ("/v3/chat".into(), None),
        }
    }

    /// Checks the one model call the mock recorded for a cell: path, query, auth, body shape.
    pub fn check_request(
        self,
        call: &Recorded,
        scenario: Scenario,
        responses_client: bool,
        stream: bool,
    ) -> Result<(), String> {
        let (path, query) = self.expected_path(responses_client, stream);
        if call.path != path {
            return Err(format!("upstream path {} (expected {path})", call.path));
        }
        if let Some(q) = query
            && !call.query.split('&').any(|p| p == q)
        {
            return Err(format!("upstream query {:?} lacks {q}", call.query));
        }
        // The mock refuses a wrong credential with 401/403, so a 200 already proves it; the
        // header is checked here too so that the failure says so.
        let auth = |name: &str| call.header(name).unwrap_or_default();
        let ok = match self {
            Upstream::OpenAi => auth("authorization") == format!("Bearer {OPENAI_KEY}"),
            Upstream::Azure => auth("api-key") == AZURE_KEY,
            Upstream::Claude => {
                auth("x-api-key") == CLAUDE_KEY && !auth("anthropic-version").is_empty()
            }
            Upstream::BedrockClaude | Upstream::BedrockConverse => {
                auth("authorization").starts_with("AWS4-HMAC-SHA256 ")
            }
            Upstream::VertexGemini | Upstream::VertexClaude => {
                auth("authorization") == format!("Bearer {VERTEX_TOKEN}")
            }
            Upstream::Gemini => auth("x-goog-api-key") == GEMINI_KEY,
            Upstream::Cohere => auth("authorization") == format!("Bearer {COHERE_KEY}"),
            Upstream::MiniMax => auth("authorization") == format!("Bearer {MINIMAX_KEY}"),
            Upstream::Zhipu => zhipu_signed(&auth("authorization")),
            Upstream::Cloudflare => auth("authorization") == format!("Bearer {CLOUDFLARE_KEY}"),
            Upstream::QianfanV2 => {
                auth("authorization") == format!("Bearer {QIANFAN_KEY}")
                    && auth("appid") == QIANFAN_APP
            }
            Upstream::Hunyuan => auth("authorization")
                .starts_with(&format!("TC3-HMAC-SHA256 Credential={HUNYUAN_ID}/")),
            // The access token is in the query (checked with the path above).
            Upstream::Baidu => auth("authorization").is_empty(),
            Upstream::Dify => auth("authorization") == format!("Bearer {DIFY_KEY}"),
            Upstream::Coze => auth("authorization") == format!("Bearer {COZE_TOKEN}"),
        };
        if !ok {
            return Err("upstream auth header missing or wrong".into());
        }
        let body: Value = serde_json::from_slice(&call.body)
            .map_err(|e| format!("upstream body is not JSON: {e}"))?;
        check_body(self.format(responses_client), self, &body, scenario, stream)
            .map_err(|e| format!("upstream body: {e}: {body}"))
    }
}

/// Whether `auth` is `Bearer <JWT>` signed as Zhipu documents it
/// (https://open.bigmodel.cn/dev/api/http-call/http-auth) with the conformance key's secret.
fn zhipu_signed(auth: &str) -> bool {
    use jsonwebtoken::{Algorithm, DecodingKey, Validation};
    let Some(token) = auth.strip_prefix("Bearer ") else {
        return false;
    };
    let mut check = Validation::new(Algorithm::HS256);
    check.validate_exp = false;
    check.required_spec_claims.clear();
    jsonwebtoken::decode::<Value>(
        token,
        &DecodingKey::from_secret(ZHIPU_SECRET.as_bytes()),
        &check,
    )
    .is_ok_and(|data| data.claims["api_key"] == ZHIPU_ID)
}

/// Whether any value inside `value` (itself included) satisfies `pred`.
pub fn find(value: &Value, pred: &dyn Fn(&Value) -> bool) -> bool {
    if pred(value) {
        return true;
    }
    match value {
        Value::Array(items) => items.iter().any(|v| find(v, pred)),
        Value::Object(map) => map.values().any(|v| find(v, pred)),
        _ => false,
    }
}

fn require(ok: bool, what: &str) -> Result<(), String> {
    if ok { Ok(()) } else { Err(what.to_owned()) }
}

fn data_url() -> String {
    format!("data:image/png;base64,{PNG}")
}

fn check_body(
    format: Format,
    upstream: Upstream,
    body: &Value,
    scenario: Scenario,
    stream: bool,
) -> Result<(), String> {
    let marker = scenario.marker();
    let has_marker = |v: &Value| v.as_str().is_some_and(|s| s.contains(marker));
    match format {
        Format::Chat => {
            require(
                find(&body["messages"], &has_marker),
                "the user text in messages",
            )?;
            require(
                upstream == Upstream::Azure || body["model"] == upstream.upstream_model(),
                "model",
            )?;
            require(
                !stream || body["stream"] == true,
                "stream: true on a stream",
            )?;
        }
        Format::Responses => {
            require(find(&body["input"], &has_marker), "the user text in input")?;
        }
        Format::Messages | Format::CloudMessages(_) => {
            require(
                find(&body["messages"], &has_marker),
                "the user text in messages",
            )?;
            require(body["max_tokens"].is_u64(), "max_tokens")?;
            if let Format::CloudMessages(version) = format {
                require(body["anthropic_version"] == version, "anthropic_version")?;
                require(body.get("model").is_none(), "no model in a cloud body")?;
            } else {
                require(body["model"] == upstream.upstream_model(), "model")?;
            }
        }
        Format::Converse => {
            require(
                find(&body["messages"], &has_marker),
                "the user text in messages",
            )?;
            require(body.get("model").is_none(), "no model in the body")?;
        }
        Format::Gemini => {
            require(
                find(&body["contents"], &has_marker),
                "the user text in contents",
            )?;
        }
        Format::Cohere => {
            require(
                find(&body["messages"], &has_marker),
                "the user text in messages",
            )?;
            require(body["model"] == upstream.upstream_model(), "model")?;
        }
        Format::Hunyuan => {
            require(
                find(&body["Messages"], &has_marker),
                "the user text in Messages",
            )?;
            require(body["Model"] == upstream.upstream_model(), "Model")?;
            require(
                !stream || body["Stream"] == true,
                "Stream: true on a stream",
            )?;
        }
        Format::Coze => {
            require(
                find(&body["additional_messages"], &has_marker),
                "the user text in additional_messages",
            )?;
            require(body["bot_id"] == COZE_BOT, "bot_id")?;
            // Always a stream (whole answers are gathered from it).
            require(body["stream"] == true, "stream: true")?;
        }
        Format::Dify => {
            require(has_marker(&body["query"]), "the user text in the query")?;
            require(
                body["response_mode"] == if stream { "streaming" } else { "blocking" },
                "response_mode",
            )?;
        }
        Format::Baidu => {
            require(
                find(&body["messages"], &has_marker),
                "the user text in messages",
            )?;
            require(body.get("model").is_none(), "no model in the body")?;
            require(
                !stream || body["stream"] == true,
                "stream: true on a stream",
            )?;
        }
    }
    let named = |v: &Value| v.as_str() == Some("get_weather");
    match scenario {
        Scenario::Text | Scenario::Reasoning => Ok(()),
        Scenario::Tools => {
            if format == Format::Hunyuan {
                // Hunyuan's tool: PascalCase, its schema as JSON text.
                let tool = &body["Tools"][0]["Function"];
                require(named(&tool["Name"]), "the tool definition")?;
                let schema: Value = tool["Parameters"]
                    .as_str()
                    .and_then(|t| serde_json::from_str(t).ok())
                    .unwrap_or_default();
                return require(
                    schema["properties"]["city"]["type"] == "string",
                    "the tool's parameter schema",
                );
            }
            let tool = match format {
                Format::Chat | Format::Cohere => &body["tools"][0]["function"],
                Format::Responses => &body["tools"][0],
                Format::Messages | Format::CloudMessages(_) => &body["tools"][0],
                Format::Converse => &body["toolConfig"]["tools"][0]["toolSpec"],
                // Checked above, in Hunyuan's own field names.
                Format::Hunyuan => return Ok(()),
                // Refused before the upstream (no tools in Qianfan v1's chat here).
                Format::Baidu => return Err("tools reached Baidu".into()),
                Format::Dify => return Err("tools reached Dify".into()),
                Format::Coze => return Err("tools reached Coze".into()),
                Format::Gemini => {
                    let t = &body["tools"][0];
                    if t["functionDeclarations"].is_array() {
                        &t["functionDeclarations"][0]
                    } else {
                        &t["function_declarations"][0]
                    }
                }
            };
            require(named(&tool["name"]), "the tool definition")?;
            let schema = match format {
                Format::Messages | Format::CloudMessages(_) => &tool["input_schema"],
                Format::Converse => &tool["inputSchema"]["json"],
                _ => &tool["parameters"],
            };
            require(
                schema["properties"]["city"]["type"]
                    .as_str()
                    .is_some_and(|t| t.eq_ignore_ascii_case("string")),
                "the tool's parameter schema",
            )
        }
        Scenario::Image => {
            let url = data_url();
            let ok = match format {
                Format::Chat | Format::Cohere => find(body, &|v| {
                    v["type"] == "image_url" && v["image_url"]["url"] == url.as_str()
                }),
                Format::Hunyuan => find(body, &|v| {
                    v["Type"] == "image_url" && v["ImageUrl"]["Url"] == url.as_str()
                }),
                // Refused before the upstream (Qianfan v1's chat takes text only).
                Format::Baidu | Format::Dify | Format::Coze => false,
                Format::Responses => find(body, &|v| {
                    v["type"] == "input_image" && v["image_url"] == url.as_str()
                }),
                Format::Messages | Format::CloudMessages(_) => find(body, &|v| {
                    v["type"] == "image"
                        && v["source"]["type"] == "base64"
                        && v["source"]["media_type"] == "image/png"
                        && v["source"]["data"] == PNG
                }),
                Format::Converse => find(body, &|v| {
                    v["image"]["format"] == "png" && v["image"]["source"]["bytes"] == PNG
                }),
                Format::Gemini => find(body, &|v| {
                    let d = if v["inlineData"].is_object() {
                        &v["inlineData"]
                    } else {
                        &v["inline_data"]
                    };
                    (d["mimeType"] == "image/png" || d["mime_type"] == "image/png")
                        && d["data"] == PNG
                }),
            };
            require(ok, "the image part in the upstream's format")
        }
    }
}

// ---- the mock ----

/// The mock of every upstream: the credential checked, then the operation answered by its
/// path in the provider's format (what it answers follows the cell's scenario marker).
pub fn answer(req: &Recorded) -> Answer {
    let host = req.header("host").unwrap_or_default();
    let path = req.path.as_str();
    if path == "/token" {
        return match verify_grant(&req.body, &format!("http://{host}/token")) {
            Ok(_) => Answer::Json(
                200,
                json!({"access_token": VERTEX_TOKEN, "expires_in": 3599, "token_type": "Bearer"}),
            ),
            Err(e) => Answer::Json(
                400,
                json!({"error": "invalid_grant", "error_description": e}),
            ),
        };
    }
    let scenario = Scenario::of(&req.body);
    let body: Value = serde_json::from_slice(&req.body).unwrap_or(Value::Null);
    let streamed = body["stream"] == true;
    let auth = req.header("authorization").unwrap_or_default();
    let refuse = |what: &str| Answer::Json(401, json!({"error": {"message": what}}));
    if path == "/oauth/2.0/token" {
        let asked = |p: &str| req.query.split('&').any(|q| q == p);
        return if asked("grant_type=client_credentials")
            && asked(&format!("client_id={BAIDU_AK}"))
            && asked(&format!("client_secret={BAIDU_SK}"))
        {
            Answer::Json(
                200,
                json!({"access_token": BAIDU_TOKEN, "expires_in": 2_592_000}),
            )
        } else {
            Answer::Json(
                401,
                json!({"error": "invalid_client", "error_description": "unknown client id"}),
            )
        };
    }
    if path == "/v3/chat" {
        if auth != format!("Bearer {COZE_TOKEN}") {
            return Answer::Json(
                401,
                json!({"code": 4100, "msg": "authentication is invalid"}),
            );
        }
        return Answer::Chunks("text/event-stream", vec![sse(&coze_events())]);
    }
    if path == "/v1/chat-messages" {
        if auth != format!("Bearer {DIFY_KEY}") {
            return Answer::Json(
                401,
                json!({"code": "unauthorized", "message": "Access token is invalid", "status": 401}),
            );
        }
        return if body["response_mode"] == "streaming" {
            Answer::Chunks("text/event-stream", vec![sse(&dify_events())])
        } else {
            Answer::Json(200, dify_message(TEXT, true))
        };
    }
    if path.starts_with("/rpc/2.0/ai_custom/v1/wenxinworkshop/chat/") {
        if !req
            .query
            .split('&')
            .any(|q| q == format!("access_token={BAIDU_TOKEN}"))
        {
            return Answer::Json(
                200,
                json!({"error_code": 110, "error_msg": "Access token invalid or no longer valid"}),
            );
        }
        return if streamed {
            Answer::Chunks("text/event-stream", vec![sse(&baidu_events())])
        } else {
            Answer::Json(200, baidu_chunk(TEXT, COMPLETION, None))
        };
    }
    if path == "/" && req.header("x-tc-action").is_some() {
        let get = |name: &str| req.header(name).unwrap_or_default();
        if !signed_by(&get, &req.body, HUNYUAN_ID, HUNYUAN_SECRET) {
            return Answer::Json(
                200,
                json!({"Response": {"Error": {"Code": "AuthFailure.SignatureFailure",
                    "Message": "signature mismatch"}, "RequestId": "conf"}}),
            );
        }
        return if body["Stream"] == true {
            Answer::Chunks("text/event-stream", vec![sse(&hunyuan_events(scenario))])
        } else {
            Answer::Json(200, hunyuan_answer(scenario))
        };
    }
    if let Some(rest) = path.strip_prefix("/model/") {
        let expect = AwsExpect {
            access_key: AWS_ACCESS,
            secret_key: AWS_SECRET,
            region: AWS_REGION,
            service: "bedrock",
            session_token: None,
            now: Some(time::OffsetDateTime::now_utc().unix_timestamp()),
        };
        if let Err(e) = verify_sigv4(req, &expect) {
            return Answer::Json(403, json!({"message": e}));
        }
        return match rest.rsplit_once('/').map(|(_, op)| op) {
            Some("invoke") => Answer::Json(200, messages_answer(scenario)),
            Some("invoke-with-response-stream") => Answer::Chunks(
                "application/vnd.amazon.eventstream",
                messages_events(scenario)
                    .iter()
                    .map(|(_, event)| {
                        let bytes =
                            base64::engine::general_purpose::STANDARD.encode(event.to_string());
                        aws_frame("chunk", &json!({"bytes": bytes}))
                    })
                    .collect(),
            ),
            Some("converse") => Answer::Json(200, converse_answer(scenario)),
            Some("converse-stream") => Answer::Chunks(
                "application/vnd.amazon.eventstream",
                converse_events(scenario)
                    .iter()
                    .map(|(name, payload)| aws_frame(name, payload))
                    .collect(),
            ),
            _ => Answer::Json(404, json!({"message": "UnknownOperationException"})),
        };
    }
    if path.starts_with("/v1/projects/") {
        if auth != format!("Bearer {VERTEX_TOKEN}") {
            return refuse("Request had invalid authentication credentials.");
        }
        return match path.rsplit_once(':').map(|(_, m)| m) {
            Some("generateContent") => Answer::Json(200, gemini_answer(scenario)),
            Some("streamGenerateContent") => {
                Answer::Chunks("text/event-stream", vec![sse(&gemini_events(scenario))])
            }
            Some("rawPredict") => Answer::Json(200, messages_answer(scenario)),
            Some("streamRawPredict") => {
                Answer::Chunks("text/event-stream", vec![sse(&messages_events(scenario))])
            }
            _ => Answer::Json(
                404,
                json!({"error": {"code": 404, "message": "no such method"}}),
            ),
        };
    }
    if let Some(rest) = path.strip_prefix("/v1beta/models/") {
        if req.header("x-goog-api-key").as_deref() != Some(GEMINI_KEY) {
            return refuse("API key not valid.");
        }
        return if rest.ends_with(":streamGenerateContent") {
            Answer::Chunks("text/event-stream", vec![sse(&gemini_events(scenario))])
        } else {
            Answer::Json(200, gemini_answer(scenario))
        };
    }
    let (ok, openai_style) = match path {
        "/v1/chat/completions" | "/v1/responses" => (
            auth == format!("Bearer {OPENAI_KEY}") || auth == format!("Bearer {MINIMAX_KEY}"),
            true,
        ),
        "/api/paas/v4/chat/completions" => (zhipu_signed(&auth), true),
        "/v2/chat/completions" => (
            auth == format!("Bearer {QIANFAN_KEY}")
                && req.header("appid").as_deref() == Some(QIANFAN_APP),
            true,
        ),
        p if p.starts_with("/client/v4/accounts/") => {
            (auth == format!("Bearer {CLOUDFLARE_KEY}"), true)
        }
        p if p.starts_with("/openai/") => {
            (req.header("api-key").as_deref() == Some(AZURE_KEY), true)
        }
        "/v1/messages" => (
            req.header("x-api-key").as_deref() == Some(CLAUDE_KEY),
            false,
        ),
        "/v2/chat" => (auth == format!("Bearer {COHERE_KEY}"), false),
        _ => return Answer::Json(404, json!({"error": {"message": "no such path"}})),
    };
    if !ok {
        return refuse("invalid key");
    }
    let events = |events: Vec<(&'static str, Value)>| {
        Answer::Chunks("text/event-stream", vec![sse(&events)])
    };
    if openai_style && path.ends_with("/responses") {
        return if streamed {
            events(responses_events(scenario))
        } else {
            Answer::Json(200, responses_answer(scenario))
        };
    }
    match (path, streamed) {
        ("/v1/messages", false) => Answer::Json(200, messages_answer(scenario)),
        ("/v1/messages", true) => events(messages_events(scenario)),
        ("/v2/chat", false) => Answer::Json(200, cohere_answer(scenario)),
        ("/v2/chat", true) => events(cohere_events(scenario)),
        (_, false) => Answer::Json(200, chat_answer(scenario)),
        (_, true) => {
            let mut bytes = sse(&chat_events(scenario));
            bytes.extend_from_slice(b"data: [DONE]\n\n");
            Answer::Chunks("text/event-stream", vec![bytes])
        }
    }
}

/// One `application/vnd.amazon.eventstream` message.
pub fn aws_frame(event_type: &str, payload: &Value) -> Vec<u8> {
    use aws_smithy_eventstream::frame::write_message_to;
    use aws_smithy_types::event_stream::{Header, HeaderValue, Message};
    let message = Message::new(bytes::Bytes::from(payload.to_string()))
        .add_header(Header::new(
            ":message-type",
            HeaderValue::String("event".into()),
        ))
        .add_header(Header::new(
            ":event-type",
            HeaderValue::String(event_type.to_owned().into()),
        ))
        .add_header(Header::new(
            ":content-type",
            HeaderValue::String("application/json".into()),
        ));
    let mut out = Vec::new();
    write_message_to(&message, &mut out).expect("frame");
    out
}

const TOOL_ARGS: [&str; 2] = ["{\"city\":", " \"Paris\"}"];

fn tool_args() -> String {
    TOOL_ARGS.concat()
}

// ---- OpenAI chat completions ----

fn chat_usage() -> Value {
    json!({"prompt_tokens": PROMPT, "completion_tokens": COMPLETION,
        "total_tokens": PROMPT + COMPLETION})
}

fn chat_answer(scenario: Scenario) -> Value {
    let mut message = json!({"role": "assistant", "content": TEXT, "refusal": null});
    let mut finish = "stop";
    if scenario == Scenario::Tools {
        message["content"] = Value::Null;
        message["tool_calls"] = json!([{"id": "call_conf_1", "type": "function",
            "function": {"name": "get_weather", "arguments": tool_args()}}]);
        finish = "tool_calls";
    }
    if scenario == Scenario::Reasoning {
        message["reasoning_content"] = json!(THINKING);
    }
    json!({"id": "chatcmpl-conf", "object": "chat.completion", "created": 1_741_569_952,
        "model": "gpt-4o-mini-2024-07-18", "choices": [{"index": 0, "message": message,
            "logprobs": null, "finish_reason": finish}], "usage": chat_usage()})
}

fn chat_events(scenario: Scenario) -> Vec<(&'static str, Value)> {
    let chunk = |delta: Value, finish: Value| {
        (
            "",
            json!({"id": "chatcmpl-conf", "object": "chat.completion.chunk",
            "created": 1_741_569_952, "model": "gpt-4o-mini-2024-07-18",
            "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}]}),
        )
    };
    let mut out = vec![chunk(
        json!({"role": "assistant", "content": ""}),
        Value::Null,
    )];
    if scenario == Scenario::Reasoning {
        out.push(chunk(json!({"reasoning_content": THINKING}), Value::Null));
    }
    if scenario == Scenario::Tools {
        out.push(chunk(
            json!({"tool_calls": [{"index": 0, "id": "call_conf_1", "type": "function",
                "function": {"name": "get_weather", "arguments": ""}}]}),
            Value::Null,
        ));
        for piece in TOOL_ARGS {
            out.push(chunk(
                json!({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}),
                Value::Null,
            ));
        }
        out.push(chunk(json!({}), json!("tool_calls")));
    } else {
        out.push(chunk(json!({"content": "Hi "}), Value::Null));
        out.push(chunk(json!({"content": "there"}), Value::Null));
        out.push(chunk(json!({}), json!("stop")));
    }
    out.push((
        "",
        json!({"id": "chatcmpl-conf", "object": "chat.completion.chunk",
        "created": 1_741_569_952, "model": "gpt-4o-mini-2024-07-18", "choices": [],
        "usage": chat_usage()}),
    ));
    out
}

// ---- OpenAI Responses ----

fn responses_output(scenario: Scenario) -> Vec<Value> {
    let mut out = Vec::new();
    if scenario == Scenario::Reasoning {
        out.push(json!({"type": "reasoning", "id": "rs_conf", "summary":
            [{"type": "summary_text", "text": THINKING}]}));
    }
    if scenario == Scenario::Tools {
        out.push(
            json!({"type": "function_call", "id": "fc_conf", "call_id": "call_conf_1",
            "name": "get_weather", "arguments": tool_args(), "status": "completed"}),
        );
    } else {
        out.push(
            json!({"type": "message", "id": "msg_conf", "status": "completed",
            "role": "assistant", "content": [{"type": "output_text", "text": TEXT,
                "annotations": []}]}),
        );
    }
    out
}

fn responses_answer(scenario: Scenario) -> Value {
    json!({"id": "resp_conf", "object": "response", "created_at": 1_741_476_542,
        "status": "completed", "error": null, "incomplete_details": null, "model": "gpt-4o-mini",
        "output": responses_output(scenario), "parallel_tool_calls": true,
        "usage": {"input_tokens": PROMPT, "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": COMPLETION, "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": PROMPT + COMPLETION}})
}

fn responses_events(scenario: Scenario) -> Vec<(&'static str, Value)> {
    let mut seq = 0;
    let mut out = Vec::new();
    let mut push = |name: &'static str, mut data: Value| {
        data["type"] = json!(name);
        data["sequence_number"] = json!(seq);
        seq += 1;
        out.push((name, data));
    };
    let mut created = responses_answer(scenario);
    created["status"] = json!("in_progress");
    created["output"] = json!([]);
    created["usage"] = Value::Null;
    push("response.created", json!({"response": created}));
    for (i, item) in responses_output(scenario).into_iter().enumerate() {
        let mut added = item.clone();
        match item["type"].as_str() {
            Some("message") => {
                added["content"] = json!([]);
                push(
                    "response.output_item.added",
                    json!({"output_index": i, "item": added}),
                );
                for delta in ["Hi ", "there"] {
                    push(
                        "response.output_text.delta",
                        json!({"item_id": "msg_conf",
                        "output_index": i, "content_index": 0, "delta": delta}),
                    );
                }
                push(
                    "response.output_text.done",
                    json!({"item_id": "msg_conf",
                    "output_index": i, "content_index": 0, "text": TEXT}),
                );
            }
            Some("function_call") => {
                added["arguments"] = json!("");
                push(
                    "response.output_item.added",
                    json!({"output_index": i, "item": added}),
                );
                for delta in TOOL_ARGS {
                    push(
                        "response.function_call_arguments.delta",
                        json!({"item_id": "fc_conf",
                        "output_index": i, "delta": delta}),
                    );
                }
                push(
                    "response.function_call_arguments.done",
                    json!({"item_id": "fc_conf",
                    "output_index": i, "arguments": tool_args()}),
                );
            }
            _ => {
                added["summary"] = json!([]);
                push(
                    "response.output_item.added",
                    json!({"output_index": i, "item": added}),
                );
                push(
                    "response.reasoning_summary_text.delta",
                    json!({"item_id": "rs_conf",
                    "output_index": i, "summary_index": 0, "delta": THINKING}),
                );
                push(
                    "response.reasoning_summary_text.done",
                    json!({"item_id": "rs_conf",
                    "output_index": i, "summary_index": 0, "text": THINKING}),
                );
            }
        }
        push(
            "response.output_item.done",
            json!({"output_index": i, "item": item}),
        );
    }
    push(
        "response.completed",
        json!({"response": responses_answer(scenario)}),
    );
    out
}

// ---- Anthropic Messages (Claude, and Claude on Bedrock and Vertex) ----

fn messages_answer(scenario: Scenario) -> Value {
    let mut content = Vec::new();
    if scenario == Scenario::Reasoning {
        content.push(json!({"type": "thinking", "thinking": THINKING, "signature": SIGNATURE}));
    }
    let stop = if scenario == Scenario::Tools {
        content.push(
            json!({"type": "tool_use", "id": "toolu_conf_1", "name": "get_weather",
            "input": {"city": "Paris"}}),
        );
        "tool_use"
    } else {
        content.push(json!({"type": "text", "text": TEXT}));
        "end_turn"
    };
    json!({"id": "msg_conf", "type": "message", "role": "assistant",
        "model": "claude-sonnet-4-20250514", "content": content, "stop_reason": stop,
        "stop_sequence": null, "usage": {"input_tokens": PROMPT, "output_tokens": COMPLETION}})
}

fn messages_events(scenario: Scenario) -> Vec<(&'static str, Value)> {
    let mut out = vec![(
        "message_start",
        json!({"type": "message_start", "message": {"id": "msg_conf", "type": "message",
            "role": "assistant", "model": "claude-sonnet-4-20250514", "content": [],
            "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": PROMPT, "output_tokens": 1}}}),
    )];
    let mut index = 0;
    let mut block = |out: &mut Vec<(&'static str, Value)>, start: Value, deltas: Vec<Value>| {
        out.push((
            "content_block_start",
            json!({"type": "content_block_start",
            "index": index, "content_block": start}),
        ));
        for delta in deltas {
            out.push((
                "content_block_delta",
                json!({"type": "content_block_delta",
                "index": index, "delta": delta}),
            ));
        }
        out.push((
            "content_block_stop",
            json!({"type": "content_block_stop", "index": index}),
        ));
        index += 1;
    };
    if scenario == Scenario::Reasoning {
        block(
            &mut out,
            json!({"type": "thinking", "thinking": ""}),
            vec![
                json!({"type": "thinking_delta", "thinking": THINKING}),
                json!({"type": "signature_delta", "signature": SIGNATURE}),
            ],
        );
    }
    let stop = if scenario == Scenario::Tools {
        block(
            &mut out,
            json!({"type": "tool_use", "id": "toolu_conf_1", "name": "get_weather", "input": {}}),
            TOOL_ARGS
                .iter()
                .map(|p| json!({"type": "input_json_delta", "partial_json": p}))
                .collect(),
        );
        "tool_use"
    } else {
        block(
            &mut out,
            json!({"type": "text", "text": ""}),
            vec![
                json!({"type": "text_delta", "text": "Hi "}),
                json!({"type": "text_delta", "text": "there"}),
            ],
        );
        "end_turn"
    };
    out.push((
        "message_delta",
        json!({"type": "message_delta",
        "delta": {"stop_reason": stop, "stop_sequence": null},
        "usage": {"output_tokens": COMPLETION}}),
    ));
    out.push(("message_stop", json!({"type": "message_stop"})));
    out
}

// ---- Bedrock Converse ----

fn converse_answer(scenario: Scenario) -> Value {
    let mut content = Vec::new();
    if scenario == Scenario::Reasoning {
        content.push(json!({"reasoningContent": {"reasoningText":
            {"text": THINKING, "signature": SIGNATURE}}}));
    }
    let stop = if scenario == Scenario::Tools {
        content.push(
            json!({"toolUse": {"toolUseId": "tooluse_conf_1", "name": "get_weather",
            "input": {"city": "Paris"}}}),
        );
        "tool_use"
    } else {
        content.push(json!({"text": TEXT}));
        "end_turn"
    };
    json!({"output": {"message": {"role": "assistant", "content": content}},
        "stopReason": stop, "usage": {"inputTokens": PROMPT, "outputTokens": COMPLETION,
            "totalTokens": PROMPT + COMPLETION}, "metrics": {"latencyMs": 321}})
}

fn converse_events(scenario: Scenario) -> Vec<(&'static str, Value)> {
    let mut out = vec![("messageStart", json!({"role": "assistant"}))];
    let mut index = 0;
    if scenario == Scenario::Reasoning {
        out.push((
            "contentBlockDelta",
            json!({"contentBlockIndex": index,
            "delta": {"reasoningContent": {"text": THINKING}}}),
        ));
        out.push((
            "contentBlockDelta",
            json!({"contentBlockIndex": index,
            "delta": {"reasoningContent": {"signature": SIGNATURE}}}),
        ));
        out.push(("contentBlockStop", json!({"contentBlockIndex": index})));
        index += 1;
    }
    let stop = if scenario == Scenario::Tools {
        out.push((
            "contentBlockStart",
            json!({"contentBlockIndex": index,
            "start": {"toolUse": {"toolUseId": "tooluse_conf_1", "name": "get_weather"}}}),
        ));
        for piece in TOOL_ARGS {
            out.push((
                "contentBlockDelta",
                json!({"contentBlockIndex": index,
                "delta": {"toolUse": {"input": piece}}}),
            ));
        }
        "tool_use"
    } else {
        for piece in ["Hi ", "there"] {
            out.push((
                "contentBlockDelta",
                json!({"contentBlockIndex": index,
                "delta": {"text": piece}}),
            ));
        }
        "end_turn"
    };
    out.push(("contentBlockStop", json!({"contentBlockIndex": index})));
    out.push(("messageStop", json!({"stopReason": stop})));
    out.push((
        "metadata",
        json!({"usage": {"inputTokens": PROMPT, "outputTokens": COMPLETION,
        "totalTokens": PROMPT + COMPLETION}, "metrics": {"latencyMs": 321}}),
    ));
    out
}

// ---- Gemini (Gemini API and Vertex) ----

fn gemini_usage() -> Value {
    json!({"promptTokenCount": PROMPT, "candidatesTokenCount": COMPLETION,
        "totalTokenCount": PROMPT + COMPLETION})
}

fn gemini_answer(scenario: Scenario) -> Value {
    let mut parts = Vec::new();
    if scenario == Scenario::Reasoning {
        parts.push(json!({"text": THINKING, "thought": true}));
    }
    if scenario == Scenario::Tools {
        parts.push(json!({"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}}));
    } else {
        parts.push(json!({"text": TEXT}));
    }
    json!({"candidates": [{"content": {"role": "model", "parts": parts},
            "finishReason": "STOP", "index": 0}],
        "usageMetadata": gemini_usage(), "modelVersion": "gemini-2.5-flash",
        "responseId": "conf-gemini"})
}

fn gemini_events(scenario: Scenario) -> Vec<(&'static str, Value)> {
    let chunk = |parts: Value, last: bool| {
        let mut c = json!({"candidates": [{"content": {"role": "model", "parts": parts},
            "index": 0}], "modelVersion": "gemini-2.5-flash", "responseId": "conf-gemini",
            "usageMetadata": {"promptTokenCount": PROMPT, "totalTokenCount": PROMPT}});
        if last {
            c["candidates"][0]["finishReason"] = json!("STOP");
            c["usageMetadata"] = gemini_usage();
        }
        ("", c)
    };
    let mut out = Vec::new();
    if scenario == Scenario::Reasoning {
        out.push(chunk(json!([{"text": THINKING, "thought": true}]), false));
    }
    if scenario == Scenario::Tools {
        out.push(chunk(
            json!([{"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}}]),
            true,
        ));
    } else {
        out.push(chunk(json!([{"text": "Hi "}]), false));
        out.push(chunk(json!([{"text": "there"}]), true));
    }
    out
}

// ---- Cohere chat v2 ----

fn cohere_usage() -> Value {
    json!({"billed_units": {"input_tokens": PROMPT, "output_tokens": COMPLETION},
        "tokens": {"input_tokens": PROMPT + 50, "output_tokens": COMPLETION}})
}

fn cohere_answer(scenario: Scenario) -> Value {
    let mut message = json!({"role": "assistant"});
    let mut content = Vec::new();
    if scenario == Scenario::Reasoning {
        content.push(json!({"type": "thinking", "thinking": THINKING}));
    }
    let finish = if scenario == Scenario::Tools {
        message["tool_plan"] = json!("I will look up the weather.");
        message["tool_calls"] = json!([{"id": "get_weather_conf1", "type": "function",
            "function": {"name": "get_weather", "arguments": tool_args()}}]);
        "TOOL_CALL"
    } else {
        content.push(json!({"type": "text", "text": TEXT}));
        "COMPLETE"
    };
    if !content.is_empty() {
        message["content"] = Value::Array(content);
    }
    json!({"id": "c14c80c3-conf", "message": message, "finish_reason": finish,
        "usage": cohere_usage()})
}

fn cohere_events(scenario: Scenario) -> Vec<(&'static str, Value)> {
    let mut out = vec![(
        "message-start",
        json!({"type": "message-start", "id": "c14c80c3-conf",
            "delta": {"message": {"role": "assistant"}}}),
    )];
    let mut index = 0;
    if scenario == Scenario::Reasoning {
        out.push((
            "content-start",
            json!({"type": "content-start", "index": index,
            "delta": {"message": {"content": {"type": "thinking", "thinking": ""}}}}),
        ));
        out.push((
            "content-delta",
            json!({"type": "content-delta", "index": index,
            "delta": {"message": {"content": {"thinking": THINKING}}}}),
        ));
        out.push((
            "content-end",
            json!({"type": "content-end", "index": index}),
        ));
        index += 1;
    }
    let finish = if scenario == Scenario::Tools {
        out.push((
            "tool-plan-delta",
            json!({"type": "tool-plan-delta",
            "delta": {"message": {"tool_plan": "I will look up the weather."}}}),
        ));
        out.push((
            "tool-call-start",
            json!({"type": "tool-call-start", "index": 0,
            "delta": {"message": {"tool_calls": {"id": "get_weather_conf1", "type": "function",
                "function": {"name": "get_weather", "arguments": ""}}}}}),
        ));
        for piece in TOOL_ARGS {
            out.push((
                "tool-call-delta",
                json!({"type": "tool-call-delta", "index": 0,
                "delta": {"message": {"tool_calls": {"function": {"arguments": piece}}}}}),
            ));
        }
        out.push((
            "tool-call-end",
            json!({"type": "tool-call-end", "index": 0}),
        ));
        "TOOL_CALL"
    } else {
        out.push((
            "content-start",
            json!({"type": "content-start", "index": index,
            "delta": {"message": {"content": {"type": "text", "text": ""}}}}),
        ));
        for piece in ["Hi ", "there"] {
            out.push((
                "content-delta",
                json!({"type": "content-delta", "index": index,
                "delta": {"message": {"content": {"text": piece}}}}),
            ));
        }
        out.push((
            "content-end",
            json!({"type": "content-end", "index": index}),
        ));
        "COMPLETE"
    };
    out.push((
        "message-end",
        json!({"type": "message-end",
        "delta": {"finish_reason": finish, "usage": cohere_usage()}}),
    ));
    out
}

// ---- Tencent Hunyuan ChatCompletions ----

fn hunyuan_usage(completion: i64) -> Value {
    json!({"PromptTokens": PROMPT, "CompletionTokens": completion, "TotalTokens": PROMPT + completion})
}

fn hunyuan_call(arguments: &str) -> Value {
    json!({"Id": "call_conf1", "Type": "function",
        "Function": {"Name": "get_weather", "Arguments": arguments}})
}

fn hunyuan_answer(scenario: Scenario) -> Value {
    let (message, finish) = if scenario == Scenario::Tools {
        (
            json!({"Role": "assistant", "Content": "", "ToolCalls": [hunyuan_call(&tool_args())]}),
            "tool_calls",
        )
    } else {
        (json!({"Role": "assistant", "Content": TEXT}), "stop")
    };
    json!({"Response": {"Id": "hy-conf", "Created": 1_715_000_000, "Note": "以上内容为AI生成",
        "Choices": [{"FinishReason": finish, "Message": message}],
        "Usage": hunyuan_usage(COMPLETION), "RequestId": "hy-conf"}})
}

/// Chunks of response parameters (the usage so far in each), the last with its FinishReason.
fn hunyuan_events(scenario: Scenario) -> Vec<(&'static str, Value)> {
    let chunk = |delta: Value, finish: &str, completion: i64| {
        json!({"Note": "以上内容为AI生成", "Choices": [{"Delta": delta, "FinishReason": finish}],
            "Created": 1_715_000_000, "Id": "hy-conf", "Usage": hunyuan_usage(completion)})
    };
    if scenario == Scenario::Tools {
        let [first, second] = TOOL_ARGS;
        vec![
            (
                "",
                chunk(
                    json!({"Role": "assistant", "Content": "", "ToolCalls": [hunyuan_call(first)]}),
                    "",
                    3,
                ),
            ),
            (
                "",
                chunk(
                    json!({"Role": "assistant", "Content": "", "ToolCalls": [hunyuan_call(second)]}),
                    "tool_calls",
                    COMPLETION,
                ),
            ),
        ]
    } else {
        vec![
            (
                "",
                chunk(json!({"Role": "assistant", "Content": "Hi "}), "", 3),
            ),
            (
                "",
                chunk(
                    json!({"Role": "assistant", "Content": "there"}),
                    "stop",
                    COMPLETION,
                ),
            ),
        ]
    }
}

// ---- Baidu Qianfan v1 ERNIE chat ----

/// A whole answer, or (with `end`) one stream chunk: text and the usage so far.
fn baidu_chunk(text: &str, completion: i64, end: Option<bool>) -> Value {
    let mut v = json!({"id": "as-conf", "object": "chat.completion", "created": 1_715_000_000,
        "result": text, "is_truncated": false, "need_clear_history": false,
        "finish_reason": "normal", "usage": {"prompt_tokens": PROMPT,
            "completion_tokens": completion, "total_tokens": PROMPT + completion}});
    if let Some(end) = end {
        v["is_end"] = json!(end);
        v["sentence_id"] = json!(usize::from(end));
    }
    v
}

/// Two sentences, the last with `is_end`.
fn baidu_events() -> Vec<(&'static str, Value)> {
    vec![
        ("", baidu_chunk("Hi ", 3, Some(false))),
        ("", baidu_chunk("there", COMPLETION, Some(true))),
    ]
}

// ---- Dify chat-messages ----

/// A blocking answer (`with_usage`), or a stream's `message` event.
fn dify_message(text: &str, with_usage: bool) -> Value {
    let mut v = json!({"event": "message", "task_id": "t-conf", "message_id": "m-conf",
        "conversation_id": "c-conf", "answer": text, "created_at": 1_705_398_420});
    if with_usage {
        v["metadata"] = json!({"usage": {"prompt_tokens": PROMPT, "completion_tokens": COMPLETION,
            "total_tokens": PROMPT + COMPLETION, "currency": "USD"}});
    }
    v
}

/// Two `message` events, a ping and `message_end` with the usage.
fn dify_events() -> Vec<(&'static str, Value)> {
    vec![
        ("", dify_message("Hi ", false)),
        ("", dify_message("there", false)),
        ("", json!({"event": "ping"})),
        (
            "",
            json!({"event": "message_end", "message_id": "m-conf", "conversation_id": "c-conf",
                "metadata": {"usage": {"prompt_tokens": PROMPT, "completion_tokens": COMPLETION,
                    "total_tokens": PROMPT + COMPLETION}}}),
        ),
    ]
}

// ---- Coze chat API v3 ----

/// A Message object of the answer.
fn coze_message(event_id: &str, kind: &str, text: &str) -> Value {
    json!({"id": event_id, "conversation_id": "c-conf", "bot_id": COZE_BOT, "role": "assistant",
        "type": kind, "content": text, "content_type": "text", "chat_id": "chat-conf"})
}

/// The chat's start, two answer deltas, the whole message, a verbose one, the completed chat
/// with its usage, done.
fn coze_events() -> Vec<(&'static str, Value)> {
    let chat = |status: &str| {
        json!({"id": "chat-conf", "conversation_id": "c-conf", "bot_id": COZE_BOT,
            "status": status, "usage": null, "last_error": {"code": 0, "msg": ""}})
    };
    let mut done = chat("completed");
    done["usage"] = json!({"token_count": PROMPT + COMPLETION, "output_count": COMPLETION,
        "input_count": PROMPT});
    vec![
        ("conversation.chat.created", chat("created")),
        ("conversation.chat.in_progress", chat("in_progress")),
        (
            "conversation.message.delta",
            coze_message("m-conf", "answer", "Hi "),
        ),
        (
            "conversation.message.delta",
            coze_message("m-conf", "answer", "there"),
        ),
        (
            "conversation.message.completed",
            coze_message("m-conf", "answer", TEXT),
        ),
        (
            "conversation.message.completed",
            coze_message(
                "v-conf",
                "verbose",
                "{\"msg_type\":\"generate_answer_finish\"}",
            ),
        ),
        ("conversation.chat.completed", done),
        ("done", json!("[DONE]")),
    ]
}
