//! The vocabulary of the channel type table ([`super::table`]): a row's adaptor family, auth
//! scheme, key format, extra fields, capabilities, test request and balance API.
//!
//! Everything here serialises to what `GET /api/channel/types` returns (snake_case names), so the
//! console renders the channel editor from the same facts the relay uses.

use serde::Serialize;
use serde::ser::SerializeSeq;

/// One channel type: a row of the table.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct ChannelType {
    /// The numeric id stored on channels (spec 02 §3).
    pub id: i32,
    /// Display name (the console translates some: `channels:type.<id>`).
    pub name: &'static str,
    /// The adaptor family the relay talks to this type with (`None`: no adaptor yet).
    pub family: Option<Family>,
    /// Base URL used when the channel's own is empty ("" = none).
    pub default_base_url: &'static str,
    /// The channel must set a base URL (no usable default).
    pub base_url_required: bool,
    /// How requests are authenticated.
    pub auth: Auth,
    /// What the key field holds.
    pub key_format: KeyFormat,
    /// i18n key of a free-form key hint where the format cannot say it ("" = none).
    pub key_hint: &'static str,
    /// The extra fields the type needs (`other`, keys of `setting`).
    pub fields: &'static [Field],
    /// What the relay serves for this type (balance comes from [`ChannelType::balance`]).
    #[serde(skip)]
    pub caps: Caps,
    /// Where OpenAI's routes live under the base URL: this replaces their `/v1` (`/v1` for most
    /// types; DashScope's OpenAI-compatible mode is `/compatible-mode/v1`, Volcano Ark's
    /// `/api/v3`), so the default base URLs work as they are.
    #[serde(skip)]
    pub openai_prefix: &'static str,
    /// OpenAI routes the provider serves elsewhere under the base URL: (OpenAI's path, the
    /// provider's), e.g. DeepSeek's FIM completions at `/beta/completions`.
    #[serde(skip)]
    pub openai_paths: &'static [(&'static str, &'static str)],
    /// The upstream has OpenAI's Responses API beside chat completions, so Responses clients
    /// reach it as they are (OpenAI, Azure OpenAI); other OpenAI-family types speak Responses
    /// only when a channel's `setting.upstream_api` says so.
    #[serde(skip)]
    pub native_responses: bool,
    /// The channel test's request.
    pub test: TestRequest,
    /// How the provider's balance is read, if it can be.
    #[serde(skip)]
    pub balance: Option<BalanceApi>,
    /// How the upstream's model list is read, if it can be.
    pub models_api: Option<ModelsApi>,
    /// Models the console offers for this type.
    pub models: &'static [&'static str],
}

impl ChannelType {
    /// The capabilities, with [`Caps::BALANCE`] when the type has a balance API.
    pub fn capabilities(&self) -> Caps {
        if self.balance.is_some() {
            self.caps.with(Caps::BALANCE)
        } else {
            self.caps
        }
    }

    /// The field stored in `other`, if the type has one.
    pub fn other_field(&self) -> Option<&'static Field> {
        self.fields.iter().find(|f| f.target == Target::Other)
    }

    /// The field stored under `setting[key]`, if the type has one.
    pub fn setting_field(&self, key: &str) -> Option<&'static Field> {
        self.fields
            .iter()
            .find(|f| f.target == Target::Setting && f.key == key)
    }
}

/// The wire family of an adaptor. A family lists here once an adaptor exists or is being built;
/// types whose provider-specific protocol has none have `family: None`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Family {
    /// OpenAI's wire (`{base}/v1/...`, or the row's `openai_prefix` for `/v1`; bearer key): OpenAI
    /// and the compatible providers.
    OpenAi,
    /// Azure OpenAI deployments (`api-key` header, `api-version`).
    Azure,
    /// Anthropic Messages (`x-api-key`).
    Anthropic,
    /// Gemini `generateContent` (`x-goog-api-key`).
    Gemini,
    /// AWS Bedrock (SigV4 or a Bedrock API key).
    Bedrock,
    /// Google Vertex AI (service-account OAuth).
    Vertex,
    /// Cohere v2.
    Cohere,
    /// Zhipu BigModel v4: OpenAI's bodies, a JWT signed from the `id.secret` key.
    Zhipu,
    /// Cloudflare Workers AI: OpenAI's bodies under the account's path (the channel's `other`).
    Cloudflare,
    /// Baidu Qianfan v2: OpenAI's bodies, the API key as bearer and an optional `appid` header.
    QianfanV2,
    /// Tencent Hunyuan `ChatCompletions` (TC3-HMAC-SHA256), reached as an OpenAI-compatible
    /// upstream through `relay::adaptor::native`.
    Hunyuan,
    /// iFlytek Spark's WebSocket chat (a signed URL), reached as an OpenAI-compatible upstream
    /// through `relay::adaptor::spark`.
    Spark,
    /// Baidu Qianfan v1 ERNIE chat (an OAuth access token from `APIKey|SecretKey`), reached as
    /// an OpenAI-compatible upstream through `relay::adaptor::native`.
    Baidu,
    /// A Dify chat app (`chat-messages`, the app's key as bearer), reached as an
    /// OpenAI-compatible upstream through `relay::adaptor::native`.
    Dify,
    /// A Coze bot (chat API v3's event stream, a personal access token as bearer), reached as
    /// an OpenAI-compatible upstream through `relay::adaptor::coze`.
    Coze,
}

impl Family {
    /// Whether the family's chat takes tools (passed through or converted): all but Baidu
    /// Qianfan v1's, Dify's and Coze's text-only chats and Spark's WebSocket chat, relayed
    /// without functions.
    pub const fn tools(self) -> bool {
        !matches!(
            self,
            Family::Baidu | Family::Spark | Family::Dify | Family::Coze
        )
    }

    /// Whether the family takes OpenAI's bodies (so OpenAI-format routes reach it as they are).
    pub const fn openai_bodies(self) -> bool {
        matches!(
            self,
            Family::OpenAi | Family::Azure | Family::Zhipu | Family::Cloudflare | Family::QianfanV2
        )
    }
}

/// How a request to the type's upstream is authenticated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Auth {
    /// `Authorization: Bearer <key>`.
    Bearer,
    /// Azure's `api-key: <key>` header.
    ApiKeyHeader,
    /// Anthropic's `x-api-key: <key>` header.
    XApiKey,
    /// Google's `x-goog-api-key: <key>` header.
    GoogApiKey,
    /// AWS SigV4 from `AK|SK|region[|session token]`, or a Bedrock API key as a bearer token.
    AwsSigV4,
    /// An OAuth2 access token obtained with a Google service-account key (signed-JWT grant).
    GoogleServiceAccount,
    /// A provider-specific signature or token exchange (Baidu, Xunfei, Tencent, …).
    ProviderSigned,
}

/// What a channel's key field holds and how it splits into keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyFormat {
    /// One key per line.
    Lines,
    /// One key per line, each made of these `|`-separated parts.
    Parts(&'static [&'static str]),
    /// One AWS credential per line: `AK|SK|region[|session token]`, or `APIKey|region` (a
    /// Bedrock API key).
    Aws,
    /// One `id.secret` key per line: two non-empty parts separated by one dot (Zhipu's API
    /// keys, signed into a JWT by `relay::adaptor::zhipu`).
    IdSecret,
    /// Google service-account JSON keys: one object, an array of objects, or objects one after
    /// another — never split by lines. Stored one compact object per line.
    ServiceAccountJson,
}

impl KeyFormat {
    /// The format's name on the wire.
    pub fn name(self) -> &'static str {
        match self {
            KeyFormat::Lines => "lines",
            KeyFormat::Parts(_) => "parts",
            KeyFormat::Aws => "aws",
            KeyFormat::IdSecret => "id_secret",
            KeyFormat::ServiceAccountJson => "service_account_json",
        }
    }
}

impl Serialize for KeyFormat {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Shape {
            kind: &'static str,
            #[serde(skip_serializing_if = "is_empty")]
            parts: &'static [&'static str],
        }
        let parts = match self {
            KeyFormat::Parts(parts) => *parts,
            KeyFormat::Aws => &["AK", "SK", "region", "session token (optional)"][..],
            KeyFormat::IdSecret => &["id", "secret"][..],
            _ => &[][..],
        };
        Shape {
            kind: self.name(),
            parts,
        }
        .serialize(s)
    }
}

/// Whether a list of names is empty (serde's `skip_serializing_if` passes a reference to it).
fn is_empty(list: &&[&str]) -> bool {
    list.is_empty()
}

/// Where an extra field is stored on the channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Target {
    /// The channel's `other` text.
    Other,
    /// A key of the channel's `setting` JSON object.
    Setting,
}

/// How the console edits an extra field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FieldKind {
    /// One line of text.
    Text,
    /// One of [`Field::options`].
    Select,
    /// On or off (a JSON boolean in `setting`).
    Bool,
}

/// An extra field a type needs, as the console renders it.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Field {
    /// Where it is stored.
    pub target: Target,
    /// The key under `setting` ("" for `other`).
    pub key: &'static str,
    /// What it is, in English (server messages and API clients; the console shows `label`).
    pub name: &'static str,
    /// How it is edited.
    pub kind: FieldKind,
    /// The choices of a select (the values; the console labels them `typeField.option.<value>`).
    #[serde(skip_serializing_if = "is_empty")]
    pub options: &'static [&'static str],
    /// The channel cannot be saved without it.
    pub required: bool,
    /// The value used when it is left empty ("" = none).
    pub default: &'static str,
    /// i18n key of the label (`channels` namespace).
    pub label: &'static str,
    /// i18n key of the help text (`channels` namespace; "" = none).
    pub help: &'static str,
}

/// The request the channel test sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TestRequest {
    /// A minimal chat request ("hi", at most 1 token) in the family's wire.
    Chat,
    /// A minimal embeddings request ("hello world").
    Embeddings,
    /// The type cannot be tested.
    None,
}

/// A provider's balance API (see `console::service::channel::balance`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BalanceApi {
    /// OpenAI's `/v1/dashboard/billing/subscription` and `/usage`.
    OpenAiBilling,
    /// OpenRouter's `/api/v1/credits`.
    OpenRouterCredits,
    /// Moonshot's `/v1/users/me/balance` (CNY).
    MoonshotBalance,
    /// SiliconCloud's `/v1/user/info` (CNY).
    SiliconFlowUserInfo,
    /// DeepSeek's `/user/balance`.
    DeepSeekBalance,
}

/// How the upstream's model list is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ModelsApi {
    /// `GET {base}/v1/models` with a bearer key (`data[].id`).
    OpenAi,
    /// `GET {base}/v1/models` with `x-api-key` (`data[].id`).
    Anthropic,
    /// `GET {base}/v1beta/models` with `x-goog-api-key` (`models[].name`).
    Gemini,
}

/// A set of capabilities: what the relay serves for a type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Caps(u16);

impl Caps {
    /// Nothing.
    pub const NONE: Caps = Caps(0);
    /// Chat (OpenAI chat completions, Anthropic Messages, Gemini generateContent inbound).
    pub const CHAT: Caps = Caps(1);
    /// Streamed chat.
    pub const STREAM: Caps = Caps(1 << 1);
    /// The OpenAI Responses API.
    pub const RESPONSES: Caps = Caps(1 << 2);
    /// Embeddings.
    pub const EMBEDDINGS: Caps = Caps(1 << 3);
    /// Image generation.
    pub const IMAGES: Caps = Caps(1 << 4);
    /// Speech, transcription and translation.
    pub const AUDIO: Caps = Caps(1 << 5);
    /// Rerank.
    pub const RERANK: Caps = Caps(1 << 6);
    /// Moderations.
    pub const MODERATION: Caps = Caps(1 << 7);
    /// Token counting forwarded to the upstream.
    pub const COUNT_TOKENS: Caps = Caps(1 << 8);
    /// A balance query.
    pub const BALANCE: Caps = Caps(1 << 9);
    /// Legacy OpenAI completions (`/v1/completions`), where the provider documents them.
    pub const COMPLETIONS: Caps = Caps(1 << 10);

    /// Every capability with its wire name, in display order.
    pub const NAMED: [(Caps, &'static str); 11] = [
        (Caps::CHAT, "chat"),
        (Caps::STREAM, "stream"),
        (Caps::COMPLETIONS, "completions"),
        (Caps::RESPONSES, "responses"),
        (Caps::EMBEDDINGS, "embeddings"),
        (Caps::IMAGES, "images"),
        (Caps::AUDIO, "audio"),
        (Caps::RERANK, "rerank"),
        (Caps::MODERATION, "moderation"),
        (Caps::COUNT_TOKENS, "count_tokens"),
        (Caps::BALANCE, "balance"),
    ];

    /// Both sets.
    pub const fn with(self, other: Caps) -> Caps {
        Caps(self.0 | other.0)
    }

    /// Whether every capability of `other` is in `self`.
    pub const fn has(self, other: Caps) -> bool {
        self.0 & other.0 == other.0
    }
}

impl Serialize for Caps {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let names: Vec<&str> = Caps::NAMED
            .iter()
            .filter(|(c, _)| self.has(*c))
            .map(|(_, n)| *n)
            .collect();
        let mut seq = s.serialize_seq(Some(names.len()))?;
        for name in names {
            seq.serialize_element(name)?;
        }
        seq.end()
    }
}
