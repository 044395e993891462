//! What the relay reads of an OpenAI-style JSON request body ([`ChatHead`]): the model, the
//! stream flag, the output bound and every text of the prompt; everything else passes through
//! untouched.

use serde::Deserialize;
use serde_json::Value;

use crate::relay::measure::components::Needs;
use crate::relay::measure::estimate::{Estimate, ImageRule};
use crate::relay::measure::prompt_count::{count_prompt, each_text};

/// What the relay reads from the request body; everything else passes through untouched.
#[derive(Debug, Deserialize)]
pub(in crate::relay) struct ChatHead {
    #[serde(default)]
    pub(in crate::relay) model: String,
    #[serde(default)]
    pub(in crate::relay) stream: bool,
    #[serde(default)]
    pub(in crate::relay) stream_options: Option<Value>,
    #[serde(default)]
    pub(in crate::relay) max_tokens: Option<i64>,
    #[serde(default)]
    pub(in crate::relay) max_completion_tokens: Option<i64>,
    /// Responses API.
    #[serde(default)]
    pub(in crate::relay) max_output_tokens: Option<i64>,
    #[serde(default)]
    pub(in crate::relay) messages: Vec<Value>,
    /// Embeddings, moderations, responses, rerank input.
    #[serde(default)]
    pub(in crate::relay) input: Option<Value>,
    /// Completions and image prompts.
    #[serde(default)]
    pub(in crate::relay) prompt: Option<Value>,
    /// Rerank query.
    #[serde(default)]
    pub(in crate::relay) query: Option<String>,
    /// Rerank documents.
    #[serde(default)]
    pub(in crate::relay) documents: Option<Value>,
    /// Responses instructions.
    #[serde(default)]
    pub(in crate::relay) instructions: Option<Value>,
    /// Chat and completions: how many answers; images: how many images (with their size and
    /// quality below).
    #[serde(default)]
    pub(in crate::relay) n: Option<i64>,
    /// Legacy completions: how many answers are generated (and billed) to return the best `n`.
    #[serde(default)]
    pub(in crate::relay) best_of: Option<i64>,
    #[serde(default)]
    pub(in crate::relay) size: Option<String>,
    #[serde(default)]
    pub(in crate::relay) quality: Option<String>,
    /// Tool definitions (and the legacy functions).
    #[serde(default)]
    pub(in crate::relay) tools: Option<Value>,
    #[serde(default)]
    pub(in crate::relay) functions: Option<Value>,
    /// Chat: the answer's modalities (`["text", "audio"]`).
    #[serde(default)]
    pub(in crate::relay) modalities: Option<Value>,
    /// Chat: the audio answer's voice and format.
    #[serde(default)]
    pub(in crate::relay) audio: Option<Value>,
    /// Chat: web search of OpenAI's search models.
    #[serde(default)]
    pub(in crate::relay) web_search_options: Option<Value>,
    /// Tollgate's spend ceiling ([`crate::relay::pipeline::max_cost`]): taken out of the body
    /// before it is forwarded.
    #[serde(default)]
    pub(in crate::relay) max_cost: Option<Value>,
}

impl ChatHead {
    /// Every text of the prompt, whatever the endpoint's input field: the messages' contents,
    /// else `input` / `prompt` and a rerank `query`.
    pub(in crate::relay) fn texts(&self) -> Vec<&str> {
        let mut texts = Vec::new();
        let mut add = |text| texts.push(text);
        if self.messages.is_empty() {
            for value in [&self.input, &self.prompt].into_iter().flatten() {
                each_text(value, &mut add);
            }
            if let Some(query) = &self.query {
                add(query);
            }
        } else {
            self.messages
                .iter()
                .for_each(|m| each_text(&m["content"], &mut add));
        }
        texts
    }

    /// The upper-bound prompt estimate the reservation uses: every part of the request, images
    /// and audio by their size ([`estimate`]).
    pub(in crate::relay) fn reserve_estimate(&self) -> i64 {
        let mut e = Estimate::new(ImageRule::for_model(&self.model));
        if !self.messages.is_empty() {
            e.messages(&self.messages);
        }
        let fields = [
            ("input", &self.input),
            ("prompt", &self.prompt),
            ("documents", &self.documents),
            ("instructions", &self.instructions),
            ("tools", &self.tools),
            ("functions", &self.functions),
        ];
        for (key, value) in fields {
            if let Some(value) = value {
                e.field(key, value);
            }
        }
        if let Some(query) = &self.query {
            e.field("query", &Value::String(query.clone()));
        }
        e.total()
    }

    /// What the request would use beside text ([`Needs`]).
    pub(in crate::relay) fn needs(&self) -> Needs {
        let needs = Needs::of_fields(|k| match k {
            "input" => self.input.as_ref(),
            "modalities" => self.modalities.as_ref(),
            "audio" => self.audio.as_ref(),
            "tools" => self.tools.as_ref(),
            "web_search_options" => self.web_search_options.as_ref(),
            _ => None,
        });
        Needs {
            audio_in: needs.audio_in || Needs::audio_in_messages(&self.messages),
            ..needs
        }
    }

    /// Chat framing applies when the request has messages.
    pub(in crate::relay) fn framed_messages(&self) -> Option<usize> {
        (!self.messages.is_empty()).then_some(self.messages.len())
    }
}

/// The exact prompt tokens of a JSON relay request `body` for `model` (its texts with the
/// model's counter, plus the chat framing); `None` if the body is not a request.
pub(in crate::relay) fn exact_prompt(body: &[u8], model: &str) -> Option<i64> {
    let head: ChatHead = serde_json::from_slice(body).ok()?;
    Some(count_prompt(model, &head.texts(), head.framed_messages()))
}
