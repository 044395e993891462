//! The parts of a request the text formula alone does not price (P16): audio tokens, server
//! tool calls and long-context tiers (the options of
//! `tollgate_actors::options::component_prices`).
//!
//! - At admission, [`Needs`] reads what the request would use — audio parts or an audio output
//!   modality, a server tool in `tools` (or chat's `web_search_options`), the
//!   `anthropic-beta: context-1m…` header — and [`resolve`] refuses (400, naming it) any of them
//!   without a price, as well as a prompt estimate above a published price boundary with no
//!   tier; such a request never reaches an upstream.
//! - At settlement, [`charge`] prices the usage: `round(group × (model × (text + audio_in ×
//!   AudioRatio + audio_out × AudioRatio × AudioCompletionRatio) + calls × US$ per call ×
//!   QuotaPerUnit))`, rounded once, with `model` and `completion` those of the highest tier the
//!   reported prompt is above (`text` is the formula of [`crate::relay::measure::price`]: cache reads and writes,
//!   completion × completion ratio). Audio tokens are inside the prompt and completion counts, so
//!   they are taken out of the text part first.

use axum::http::HeaderMap;
use serde::Deserialize;
use serde_json::Value;
use tollgate_actors::options::component_prices::{ComponentPrices, ComponentTable, Tool};
use tollgate_actors::options::pricing::ModelPricing;

use crate::error::RelayError;
use crate::relay::measure::price::{self, PriceError, Usage};

/// How deep [`any_object`] looks into a request body for audio parts.
const SCAN_DEPTH: usize = 6;

/// What a request would use beside text, read from its body and headers at admission.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Needs {
    /// Audio in the prompt (OpenAI `input_audio` parts, Gemini `audio/*` inline or file data).
    pub audio_in: bool,
    /// Audio asked for in the answer (`modalities: ["audio"]`, chat's `audio`, Gemini
    /// `responseModalities: ["AUDIO"]`).
    pub audio_out: bool,
    /// Server tools offered to the model, by [`Tool::index`].
    pub tools: [bool; 3],
    /// Tools billed once per request whatever the answer reports (chat's `web_search_options`:
    /// OpenAI's search models search on every request), by [`Tool::index`].
    pub per_request: [bool; 3],
    /// `anthropic-beta: context-1m…`: a prompt past 200K tokens, at the long-context price.
    pub long_context: bool,
}

impl Needs {
    /// Reads any client format's body (OpenAI chat or Responses, Anthropic, Gemini) and its
    /// headers.
    pub fn of_body(body: &Value, headers: &HeaderMap) -> Needs {
        let mut needs = Needs::of_fields(|k| body.get(k));
        needs.long_context = headers
            .get_all("anthropic-beta")
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .any(|beta| beta.trim().starts_with("context-1m"));
        needs
    }

    /// Reads a body through `body`, which gives a top-level field by name (for a request
    /// parsed into a typed head: only `messages`, `input`, `contents`, `modalities`, `audio`,
    /// `generationConfig`, `tools` and `web_search_options` are asked for).
    pub fn of_fields<'a>(body: impl Fn(&str) -> Option<&'a Value>) -> Needs {
        let mut needs = Needs::default();
        needs.scan(body);
        needs
    }

    /// Whether some message carries an audio part.
    pub fn audio_in_messages(messages: &[Value]) -> bool {
        messages
            .iter()
            .any(|m| any_object(m, SCAN_DEPTH, &is_audio_part))
    }

    fn scan<'a>(&mut self, body: impl Fn(&str) -> Option<&'a Value>) {
        self.audio_in = ["messages", "input", "contents"]
            .iter()
            .filter_map(|k| body(k))
            .any(|v| any_object(v, SCAN_DEPTH, &is_audio_part));
        let config = body("generationConfig").or_else(|| body("generation_config"));
        let gemini_modalities = config.and_then(|c| {
            c.get("responseModalities")
                .or_else(|| c.get("response_modalities"))
        });
        self.audio_out = [body("modalities"), gemini_modalities]
            .into_iter()
            .flatten()
            .filter_map(Value::as_array)
            .flatten()
            .any(|m| m.as_str().is_some_and(|m| m.eq_ignore_ascii_case("audio")))
            || body("audio").is_some_and(Value::is_object);
        for tool in body("tools")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(t) = server_tool(tool) {
                self.tools[t.index()] = true;
            }
        }
        if body("web_search_options").is_some_and(|v| !v.is_null()) {
            let i = Tool::OpenAiWebSearch.index();
            self.tools[i] = true;
            self.per_request[i] = true;
        }
    }
}

/// Whether `v` is a content part carrying audio: OpenAI's `{"type": "input_audio"}`, or a
/// Gemini `inlineData` / `fileData` (either case) whose MIME type is `audio/*`.
fn is_audio_part(v: &serde_json::Map<String, Value>) -> bool {
    if v.get("type").and_then(Value::as_str) == Some("input_audio") {
        return true;
    }
    ["inlineData", "inline_data", "fileData", "file_data"]
        .iter()
        .filter_map(|k| v.get(*k))
        .filter_map(|d| d.get("mimeType").or_else(|| d.get("mime_type")))
        .filter_map(Value::as_str)
        .any(|m| m.to_ascii_lowercase().starts_with("audio/"))
}

/// Whether some object in `v` (at most `depth` levels down) satisfies `pred`.
fn any_object(
    v: &Value,
    depth: usize,
    pred: &dyn Fn(&serde_json::Map<String, Value>) -> bool,
) -> bool {
    match v {
        Value::Object(map) => {
            pred(map) || (depth > 0 && map.values().any(|x| any_object(x, depth - 1, pred)))
        }
        Value::Array(items) => depth > 0 && items.iter().any(|x| any_object(x, depth - 1, pred)),
        _ => false,
    }
}

/// The server tool a `tools` entry declares, if it is one: OpenAI's `web_search`,
/// `web_search_preview`, `web_search_2025_08_26`…
/// (<https://platform.openai.com/docs/guides/tools-web-search>), Anthropic's
/// `web_search_20250305` (a date of 8 digits), Gemini's `google_search` /
/// `google_search_retrieval` (<https://ai.google.dev/gemini-api/docs/google-search>).
fn server_tool(tool: &Value) -> Option<Tool> {
    if let Some(kind) = tool.get("type").and_then(Value::as_str) {
        if let Some(date) = kind.strip_prefix("web_search_")
            && date.len() == 8
            && date.bytes().all(|b| b.is_ascii_digit())
        {
            return Some(Tool::AnthropicWebSearch);
        }
        if kind.starts_with("web_search") {
            return Some(Tool::OpenAiWebSearch);
        }
    }
    let gemini = [
        "google_search",
        "googleSearch",
        "google_search_retrieval",
        "googleSearchRetrieval",
    ];
    gemini
        .iter()
        .any(|k| tool.get(*k).is_some())
        .then_some(Tool::GeminiGoogleSearch)
}

/// The component prices an admitted request settles with.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Components {
    /// The model's audio ratios, tool prices and tiers.
    pub prices: ComponentPrices,
    /// Calls billed whatever the answer reports ([`Needs::per_request`]), by [`Tool::index`].
    pub per_request: [i64; 3],
}

/// Checks that everything `needs` would use has a price for `model` (priced `pricing`), and a
/// prompt of `prompt_estimate` tokens its tier; returns the prices to settle with. A per-call
/// price covers everything.
pub fn resolve(
    needs: Needs,
    model: &str,
    pricing: ModelPricing,
    prompt_estimate: i64,
    table: &ComponentTable,
) -> Result<Components, RelayError> {
    if matches!(pricing, ModelPricing::PerCall { .. }) {
        return Ok(Components::default());
    }
    let prices = table.prices(model);
    let refuse = |what: String| {
        Err(RelayError::BadRequest(format!(
            "{what}; the request was not sent upstream (an administrator sets prices on the \
             pricing settings page)"
        )))
    };
    if needs.audio_in && prices.audio_ratio.is_none() {
        return refuse(format!(
            "model {model} has no price for audio input (AudioRatio)"
        ));
    }
    if needs.audio_out && (prices.audio_ratio.is_none() || prices.audio_completion_ratio.is_none())
    {
        return refuse(format!(
            "model {model} has no price for audio output (AudioRatio and AudioCompletionRatio)"
        ));
    }
    for tool in Tool::ALL {
        if needs.tools[tool.index()] && prices.tool(tool).is_none() {
            return refuse(format!(
                "the server tool {} has no price (ToolCallPrice)",
                tool.key()
            ));
        }
    }
    if needs.long_context && !table.has_tiers(model) {
        return refuse(format!(
            "model {model} has no long-context price for anthropic-beta context-1m \
             (ModelPriceTiers)"
        ));
    }
    if let Some(boundary) = table.untiered_boundary(model, prompt_estimate) {
        return refuse(format!(
            "the prompt (about {prompt_estimate} tokens) is above {boundary} tokens, where the \
             price of model {model} rises, and ModelPriceTiers has no tier for it"
        ));
    }
    Ok(Components {
        prices,
        per_request: needs.per_request.map(i64::from),
    })
}

/// The model and completion ratios a prompt of `prompt_tokens` is priced at: its tier's, else
/// the model's.
pub fn effective(
    pricing: ModelPricing,
    components: &Components,
    prompt_tokens: i64,
) -> ModelPricing {
    match (pricing, components.prices.tier_for(prompt_tokens)) {
        (ModelPricing::Ratio { cache, .. }, Some(tier)) => ModelPricing::Ratio {
            model: tier.model_ratio,
            completion: tier.completion_ratio,
            cache,
        },
        (pricing, _) => pricing,
    }
}

/// The calls of each tool billed: what the answer reported, at least the per-request ones.
pub fn billed_calls(components: &Components, usage: &Usage) -> [i64; 3] {
    Tool::ALL.map(|t| usage.calls(t).max(0).max(components.per_request[t.index()]))
}

/// US$ of the tool calls of `usage`. A tool the answer used without its own price (it was not
/// asked for in a way admission recognised) costs the dearest configured tool price.
fn tool_usd(components: &Components, usage: &Usage) -> Result<f64, PriceError> {
    let prices = &components.prices;
    let dearest = Tool::ALL
        .iter()
        .filter_map(|t| prices.tool(*t))
        .fold(0.0_f64, f64::max);
    let mut usd = 0.0;
    for (tool, calls) in Tool::ALL.into_iter().zip(billed_calls(components, usage)) {
        if calls > 0 {
            let each = prices.tool(tool).unwrap_or(dearest);
            price::check_ratios(&[each])?;
            usd += calls as f64 * each;
        }
    }
    Ok(usd)
}

/// The quota a finished request costs, its components included (see the module header).
pub fn charge(
    pricing: ModelPricing,
    components: &Components,
    group_ratio: f64,
    quota_per_unit: i64,
    usage: Usage,
) -> Result<i64, PriceError> {
    let ModelPricing::Ratio {
        model,
        completion,
        cache,
    } = effective(pricing, components, usage.prompt_tokens)
    else {
        return price::charge(pricing, group_ratio, quota_per_unit, usage);
    };
    if usage.audio_prompt_tokens < 0 || usage.audio_completion_tokens < 0 {
        return Err(PriceError::NegativeTokens);
    }
    let prices = &components.prices;
    let audio_in_ratio = prices.audio_ratio;
    let audio_out_ratio = prices
        .audio_ratio
        .zip(prices.audio_completion_ratio)
        .map(|(a, c)| a * c);
    check_ratios_opt(&[audio_in_ratio, audio_out_ratio])?;
    // Audio without its price is text (admission refuses requests that ask for it).
    let audio_in = audio_in_ratio.map_or(0, |_| usage.audio_prompt_tokens.min(usage.prompt_tokens));
    let audio_out = audio_out_ratio.map_or(0, |_| {
        usage.audio_completion_tokens.min(usage.completion_tokens)
    });
    let text = Usage {
        prompt_tokens: usage.prompt_tokens - audio_in,
        completion_tokens: usage.completion_tokens - audio_out,
        ..usage
    };
    let tools = tool_usd(components, &usage)?;
    if usage.prompt_tokens == 0 && usage.completion_tokens == 0 && tools == 0.0 {
        return Ok(0);
    }
    let weighted = price::weighted(text, completion, cache)?
        + audio_in as f64 * audio_in_ratio.unwrap_or(0.0)
        + audio_out as f64 * audio_out_ratio.unwrap_or(0.0);
    price::check_ratios(&[model, group_ratio])?;
    if quota_per_unit < 0 {
        return Err(PriceError::InvalidRatio);
    }
    let units = price::to_units(group_ratio * (model * weighted + tools * quota_per_unit as f64))?;
    let used = usage.prompt_tokens > 0 || usage.completion_tokens > 0;
    Ok(if units == 0 && used && model * group_ratio > 0.0 {
        1
    } else {
        units
    })
}

fn check_ratios_opt(values: &[Option<f64>]) -> Result<(), PriceError> {
    let set: Vec<f64> = values.iter().flatten().copied().collect();
    price::check_ratios(&set)
}

/// The output items of a Responses API answer, as far as billing reads them: each
/// `web_search_call` item is one web search call
/// (<https://platform.openai.com/docs/guides/tools-web-search>).
/// Read leniently: an `output` that is not a list of objects counts nothing (it never makes the
/// answer unreadable).
#[derive(Debug, Default, Deserialize)]
#[serde(untagged)]
pub enum OutputItems {
    /// A list of items.
    Items(Vec<OutputItem>),
    /// Anything else.
    #[default]
    #[serde(skip)]
    None,
    /// Anything else, skipped.
    Other(serde::de::IgnoredAny),
}

/// One output item's type.
#[derive(Debug, Default, Deserialize)]
pub struct OutputItem {
    #[serde(default, rename = "type")]
    kind: Option<Value>,
}

impl OutputItems {
    /// Adds the web search calls among the items to `usage`.
    pub fn count_into(&self, usage: &mut Usage) {
        let OutputItems::Items(items) = self else {
            return;
        };
        web_searches_into(
            items
                .iter()
                .map(|i| i.kind.as_ref().and_then(Value::as_str)),
            usage,
        );
    }
}

/// Sets the OpenAI web search calls of `usage` from the types of a Responses answer's output
/// items: each `web_search_call` item is one call. The one counting of them, for answers passed
/// through ([`OutputItems`]) and answers converted (`wire::responses`).
pub fn web_searches_into<'a>(kinds: impl Iterator<Item = Option<&'a str>>, usage: &mut Usage) {
    let calls = kinds.filter(|k| *k == Some("web_search_call")).count();
    usage.tool_calls[Tool::OpenAiWebSearch.index()] = i64::try_from(calls).unwrap_or(i64::MAX);
}

#[cfg(test)]
mod tests;
