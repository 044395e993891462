//! The `streamGenerateContent?alt=sse` chunks, both ways: each chunk is a partial
//! `GenerateContentResponse` and the stream has no end marker. The decoder reads each chunk
//! into lenient structs whose strings borrow from the chunk's text (no `Value` tree per
//! chunk); the encoder writes each chunk from structs declared in key order, the bytes a
//! `Value` would write.

use serde::de::IgnoredAny;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use tollgate_actors::options::component_prices::Tool;

use super::usage::{UsageIn, UsageOut};
use super::{finish_of, reason_of};
use crate::relay::measure::price::Usage;
use crate::relay::wire::typed::{
    List, Obj, Present, Shape, Sorted, Str, Verbatim, sse_typed, view,
};
use crate::relay::wire::{Decode, Encode, EncodeCtx, Piece};

/// `a`, else `b` (Gemini accepts both camelCase and snake_case field names): a present
/// camelCase field, even `null`, hides the snake_case one, and `null` is none (as indexing a
/// `Value` read them).
pub(super) fn either<'s, 'a, T>(
    a: &'s Shape<'a, T>,
    b: &'s Shape<'a, T>,
) -> Option<&'s Shape<'a, T>> {
    let field = if matches!(a, Shape::Absent) { b } else { a };
    field.given().then_some(field)
}

/// A chunk as the decoder reads it.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Chunk<'a> {
    #[serde(borrow)]
    error: Obj<ErrorBody<'a>>,
    #[serde(borrow, rename = "responseId")]
    response_id: Str<'a>,
    #[serde(borrow, rename = "modelVersion")]
    model_version: Str<'a>,
    #[serde(borrow)]
    candidates: List<Candidate<'a>>,
    #[serde(borrow, rename = "usageMetadata")]
    usage_metadata: Shape<'a, UsageIn<'a>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct ErrorBody<'a> {
    #[serde(borrow)]
    message: Str<'a>,
}

/// A whole `generateContent` answer (a `GenerateContentResponse`, as a chunk is one), as
/// [`super::to_hub`] reads it.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct Answer<'a> {
    #[serde(borrow, rename = "responseId")]
    pub(super) response_id: Str<'a>,
    /// The model, verbatim.
    #[serde(borrow, rename = "modelVersion")]
    pub(super) model_version: Option<Verbatim<'a>>,
    #[serde(borrow)]
    pub(super) candidates: List<Candidate<'a>>,
    #[serde(borrow, rename = "usageMetadata")]
    pub(super) usage_metadata: Shape<'a, UsageIn<'a>>,
}

/// A candidate of a chunk.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct Candidate<'a> {
    #[serde(borrow)]
    pub(super) content: Obj<Content<'a>>,
    #[serde(borrow, rename = "finishReason")]
    pub(super) finish_reason: Str<'a>,
    #[serde(borrow, rename = "groundingMetadata")]
    pub(super) grounding_camel: Shape<'a, Grounding<'a>>,
    #[serde(borrow, rename = "grounding_metadata")]
    pub(super) grounding_snake: Shape<'a, Grounding<'a>>,
}

impl Candidate<'_> {
    /// Whether Google Search grounded it: its `groundingMetadata` lists the queries run
    /// (`webSearchQueries`). Gemini 2.x bills Grounding with Google Search per grounded prompt
    /// (<https://ai.google.dev/gemini-api/docs/pricing>), so a grounded answer counts one call.
    pub(super) fn grounded(&self) -> bool {
        grounded(&self.grounding_camel, &self.grounding_snake)
    }
}

/// Whether a candidate's `groundingMetadata` (camelCase or snake_case) lists the queries run.
fn grounded<'a>(camel: &Shape<'a, Grounding<'a>>, snake: &Shape<'a, Grounding<'a>>) -> bool {
    let Some(Shape::Obj(g)) = either(camel, snake) else {
        return false;
    };
    matches!(either(&g.queries_camel, &g.queries_snake), Some(Shape::List(q)) if !q.is_empty())
}

/// A whole answer as its usage reads it: its candidates' grounding and its `usageMetadata`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct UsageView<'a> {
    #[serde(borrow)]
    candidates: List<Grounds<'a>>,
    #[serde(borrow, rename = "usageMetadata")]
    usage_metadata: Shape<'a, UsageIn<'a>>,
}

/// A candidate's grounding.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Grounds<'a> {
    #[serde(borrow, rename = "groundingMetadata")]
    grounding_camel: Shape<'a, Grounding<'a>>,
    #[serde(borrow, rename = "grounding_metadata")]
    grounding_snake: Shape<'a, Grounding<'a>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct Grounding<'a> {
    #[serde(borrow, rename = "webSearchQueries")]
    queries_camel: Shape<'a, IgnoredAny>,
    #[serde(borrow, rename = "web_search_queries")]
    queries_snake: Shape<'a, IgnoredAny>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct Content<'a> {
    #[serde(borrow)]
    pub(super) parts: List<Part<'a>>,
}

/// A part of a chunk's content.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct Part<'a> {
    #[serde(borrow)]
    pub(super) text: Str<'a>,
    #[serde(borrow)]
    pub(super) thought: Shape<'a, IgnoredAny>,
    #[serde(borrow, rename = "functionCall")]
    pub(super) call_camel: Shape<'a, Call<'a>>,
    #[serde(borrow, rename = "function_call")]
    pub(super) call_snake: Shape<'a, Call<'a>>,
    #[serde(borrow, rename = "thoughtSignature")]
    pub(super) signature_camel: Shape<'a, IgnoredAny>,
    #[serde(borrow, rename = "thought_signature")]
    pub(super) signature_snake: Shape<'a, IgnoredAny>,
}

/// A `functionCall`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct Call<'a> {
    /// Its name, verbatim (a whole answer copies it as it came).
    #[serde(borrow)]
    pub(super) name: Option<Verbatim<'a>>,
    /// Its arguments, verbatim, `null` told from absent (written with keys in name order, as a
    /// `Value` wrote them: [`args_text`]).
    #[serde(borrow)]
    pub(super) args: Present<Verbatim<'a>>,
}

/// A function call's `args` as JSON text (as a `Value` writes it; `{}` when absent).
pub(super) fn args_text(args: &Present<Verbatim>) -> String {
    match args {
        Present(Some(args)) => Sorted(args).to_json(),
        Present(None) => "{}".to_owned(),
    }
}

/// The usage a whole `generateContent` answer reports (`None`: it has no `usageMetadata`), with
/// its Google Search call when a candidate was grounded.
pub(super) fn answer_usage(answer: &Value) -> Option<Usage> {
    let read: UsageView = view(answer);
    let mut usage = match &read.usage_metadata {
        Shape::Absent => return None,
        Shape::Obj(meta) => meta.usage(),
        _ => UsageIn::default().usage(),
    };
    if read
        .candidates
        .iter()
        .any(|c| grounded(&c.grounding_camel, &c.grounding_snake))
    {
        usage.tool_calls[Tool::GeminiGoogleSearch.index()] = 1;
    }
    Some(usage)
}

/// Decodes `streamGenerateContent?alt=sse` chunks.
#[derive(Debug, Default)]
pub struct Decoder {
    started: bool,
    calls: usize,
    /// A chunk so far was grounded with Google Search (one call, see [`Candidate::grounded`]).
    grounded: bool,
}

impl Decode for Decoder {
    fn event(&mut self, _event: &str, data: &str) -> Vec<Piece> {
        let Ok(Obj(chunk)) = serde_json::from_str::<Obj<Chunk>>(data) else {
            return Vec::new();
        };
        let mut pieces = Vec::new();
        if let Some(message) = chunk.error.message.get() {
            pieces.push(Piece::Error(message.to_owned()));
            return pieces;
        }
        if !self.started {
            self.started = true;
            pieces.push(Piece::Start {
                id: chunk.response_id.or_empty().to_owned(),
                model: chunk.model_version.or_empty().to_owned(),
            });
        }
        let first = chunk.candidates.iter().next();
        for part in first.into_iter().flat_map(|c| c.content.parts.iter()) {
            if let Some(t) = part.text.non_empty() {
                pieces.push(if matches!(part.thought, Shape::Bool(true)) {
                    Piece::Thinking(t.to_owned())
                } else {
                    Piece::Text(t.to_owned())
                });
            } else if let Some(call) = either(&part.call_camel, &part.call_snake) {
                let index = self.calls;
                self.calls += 1;
                let (name, args) = match call {
                    Shape::Obj(call) => (
                        call.name
                            .as_ref()
                            .and_then(Verbatim::as_str)
                            .unwrap_or_default(),
                        &call.args,
                    ),
                    _ => ("", &Present(None)),
                };
                pieces.push(Piece::ToolStart {
                    index,
                    id: format!("call_{index}"),
                    name: name.to_owned(),
                });
                pieces.push(Piece::ToolArgs {
                    index,
                    json: args_text(args),
                });
                let signature = either(&part.signature_camel, &part.signature_snake)
                    .and_then(Shape::str)
                    .filter(|s| !s.is_empty());
                if let Some(signature) = signature {
                    pieces.push(Piece::ToolSignature {
                        index,
                        signature: signature.to_owned(),
                    });
                }
            }
        }
        if let Some(reason) = first.and_then(|c| c.finish_reason.get()) {
            pieces.push(Piece::Stop(finish_of(reason, self.calls > 0).to_owned()));
        }
        self.grounded |= chunk.candidates.iter().any(Candidate::grounded);
        if let Shape::Obj(meta) = &chunk.usage_metadata {
            let mut usage = meta.usage();
            usage.tool_calls[Tool::GeminiGoogleSearch.index()] = i64::from(self.grounded);
            pieces.push(Piece::Usage(usage));
        }
        pieces
    }

    fn done(&self) -> bool {
        false
    }
}

/// A chunk as written (keys in name order).
#[derive(Serialize)]
struct ChunkOut<'a, P> {
    candidates: [CandidateOut<P>; 1],
    #[serde(rename = "modelVersion")]
    model_version: &'a str,
    #[serde(rename = "responseId")]
    response_id: &'a str,
    #[serde(rename = "usageMetadata", skip_serializing_if = "Option::is_none")]
    usage_metadata: Option<UsageOut>,
}

#[derive(Serialize)]
struct CandidateOut<P> {
    content: ContentOut<P>,
    #[serde(rename = "finishReason", skip_serializing_if = "Option::is_none")]
    finish_reason: Option<&'static str>,
    index: u32,
}

#[derive(Serialize)]
struct ContentOut<P> {
    parts: P,
    role: &'static str,
}

/// A text part as written.
#[derive(Serialize)]
struct TextOut<'a> {
    text: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    thought: Option<bool>,
}

/// A function call part as written.
#[derive(Serialize)]
struct CallOut<'a> {
    #[serde(rename = "functionCall")]
    function_call: CallBodyOut<'a>,
    #[serde(rename = "thoughtSignature", skip_serializing_if = "Option::is_none")]
    thought_signature: Option<&'a str>,
}

#[derive(Serialize)]
struct CallBodyOut<'a> {
    args: Value,
    name: &'a str,
}

/// The last chunk's parts: the tool calls, else one empty text.
#[derive(Serialize)]
#[serde(untagged)]
enum EndParts<'a> {
    Calls(Vec<CallOut<'a>>),
    Empty([TextOut<'static>; 1]),
}

#[derive(Serialize)]
struct ErrorOut<'a> {
    error: ErrorBodyOut<'a>,
}

#[derive(Serialize)]
struct ErrorBodyOut<'a> {
    code: u16,
    message: &'a str,
    status: &'static str,
}

/// Encodes pieces as `streamGenerateContent?alt=sse` chunks. Tool calls are sent whole (Gemini
/// has no partial function calls), in the final chunk with the finish reason and usage.
pub struct Encoder {
    ctx: EncodeCtx,
    id: String,
    /// Tool calls so far: name, JSON arguments, thought signature (empty: none).
    calls: Vec<(String, String, String)>,
    stop: Option<String>,
    usage: Option<Usage>,
}

impl Encoder {
    /// An encoder for one answer.
    pub fn new(ctx: EncodeCtx) -> Encoder {
        Encoder {
            ctx,
            id: String::new(),
            calls: Vec::new(),
            stop: None,
            usage: None,
        }
    }

    fn chunk<P>(&self, parts: P) -> ChunkOut<'_, P> {
        ChunkOut {
            candidates: [CandidateOut {
                content: ContentOut {
                    parts,
                    role: "model",
                },
                finish_reason: None,
                index: 0,
            }],
            model_version: &self.ctx.model,
            response_id: &self.id,
            usage_metadata: None,
        }
    }

    fn text(&self, text: &str, thought: Option<bool>, out: &mut Vec<u8>) {
        sse_typed(out, "", &self.chunk([TextOut { text, thought }]));
    }
}

impl Encode for Encoder {
    fn piece(&mut self, piece: &Piece, out: &mut Vec<u8>) {
        match piece {
            Piece::Start { id, .. } => self.id = id.trim_start_matches("chatcmpl-").to_owned(),
            Piece::Text(text) => self.text(text, None, out),
            Piece::Thinking(text) => self.text(text, Some(true), out),
            Piece::ToolStart { index, name, .. } => {
                if self.calls.len() <= *index {
                    self.calls
                        .resize(index + 1, (String::new(), String::new(), String::new()));
                }
                if let Some(call) = self.calls.get_mut(*index) {
                    call.0.clone_from(name);
                }
            }
            Piece::ToolArgs { index, json } => {
                if let Some(call) = self.calls.get_mut(*index) {
                    call.1.push_str(json);
                }
            }
            Piece::ToolSignature { index, signature } => {
                if let Some(call) = self.calls.get_mut(*index) {
                    call.2.clone_from(signature);
                }
            }
            // Gemini has no field for Anthropic's or Converse's signatures (a thoughtSignature
            // is Gemini's own): the thinking text reaches the client, the signature cannot.
            Piece::ThinkingSignature(_) | Piece::RedactedThinking(_) => {}
            Piece::Stop(reason) => self.stop = Some(reason.clone()),
            Piece::Usage(usage) => self.usage = Some(*usage),
            Piece::Error(message) => sse_typed(
                out,
                "",
                &ErrorOut {
                    error: ErrorBodyOut {
                        code: 502,
                        message,
                        status: "UNAVAILABLE",
                    },
                },
            ),
        }
    }

    fn end(&mut self, out: &mut Vec<u8>) {
        let parts = if self.calls.is_empty() {
            EndParts::Empty([TextOut {
                text: "",
                thought: None,
            }])
        } else {
            EndParts::Calls(
                self.calls
                    .iter()
                    .map(|(name, args, signature)| CallOut {
                        function_call: CallBodyOut {
                            args: serde_json::from_str(args).unwrap_or_else(|_| json!({})),
                            name,
                        },
                        thought_signature: (!signature.is_empty()).then_some(signature.as_str()),
                    })
                    .collect(),
            )
        };
        let mut chunk = self.chunk(parts);
        chunk.candidates[0].finish_reason = Some(reason_of(self.stop.as_deref().unwrap_or("stop")));
        chunk.usage_metadata = Some(UsageOut::from(&self.usage.unwrap_or_default()));
        sse_typed(out, "", &chunk);
    }
}
