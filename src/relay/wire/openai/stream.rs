//! The chat completions stream, typed: the chunk decoder reads each `chat.completion.chunk`
//! into a borrowed view instead of a `Value` tree per chunk; the encoder writes each chunk from
//! structs straight into the output buffer. The structs declare their fields in name order, so
//! the bytes are those a `Value` (whose keys are sorted) wrote before.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{usage_json, usage_of};
use crate::relay::measure::price::Usage;
use crate::relay::wire::typed::{List, Obj, Str, Verbatim, sse_typed};
use crate::relay::wire::{Decode, Encode, EncodeCtx, Piece, now};

/// A `chat.completion.chunk` as the decoder reads it.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Chunk<'a> {
    #[serde(borrow)]
    id: Str<'a>,
    #[serde(borrow)]
    model: Str<'a>,
    #[serde(borrow)]
    error: Obj<ErrorIn<'a>>,
    #[serde(borrow)]
    choices: List<ChoiceIn<'a>>,
    /// Read as a `Value` (usage comes once per stream): [`usage_of`] reads it as before.
    usage: Option<Value>,
}

/// An error chunk's error.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct ErrorIn<'a> {
    #[serde(borrow)]
    message: Str<'a>,
}

/// A chunk's choice.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct ChoiceIn<'a> {
    /// Read as `as_u64` reads a value.
    #[serde(borrow)]
    index: Option<Verbatim<'a>>,
    #[serde(borrow)]
    delta: Obj<DeltaIn<'a>>,
    #[serde(borrow)]
    finish_reason: Str<'a>,
}

/// A choice's delta.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct DeltaIn<'a> {
    #[serde(borrow)]
    reasoning_content: Str<'a>,
    #[serde(borrow)]
    reasoning: Str<'a>,
    #[serde(borrow)]
    content: Str<'a>,
    #[serde(borrow)]
    tool_calls: List<CallIn<'a>>,
}

/// A delta's tool call.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct CallIn<'a> {
    #[serde(borrow)]
    index: Option<Verbatim<'a>>,
    #[serde(borrow)]
    id: Str<'a>,
    #[serde(borrow)]
    function: Obj<FunctionIn<'a>>,
}

/// A delta tool call's function.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct FunctionIn<'a> {
    #[serde(borrow)]
    name: Str<'a>,
    #[serde(borrow)]
    arguments: Str<'a>,
}

/// `index` as `as_u64` reads it: 0 when absent or not an unsigned integer.
fn index_of(index: &Option<Verbatim>) -> u64 {
    match index {
        Some(Verbatim::Num(n)) => n.as_u64().unwrap_or(0),
        _ => 0,
    }
}

/// Decodes `chat.completion.chunk` events.
#[derive(Debug, Default)]
pub struct Decoder {
    started: bool,
    done: bool,
}

impl Decode for Decoder {
    fn event(&mut self, _event: &str, data: &str) -> Vec<Piece> {
        if data.trim() == "[DONE]" {
            self.done = true;
            return Vec::new();
        }
        // A chunk that is JSON but not an object reads as an empty chunk, as indexing a
        // `Value` read it.
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
                id: chunk.id.or_empty().to_owned(),
                model: chunk.model.or_empty().to_owned(),
            });
        }
        for choice in chunk.choices.iter() {
            if index_of(&choice.index) != 0 {
                continue;
            }
            let delta = &choice.delta;
            if let Some(text) = delta
                .reasoning_content
                .get()
                .or_else(|| delta.reasoning.get())
                .filter(|t| !t.is_empty())
            {
                pieces.push(Piece::Thinking(text.to_owned()));
            }
            if let Some(text) = delta.content.non_empty() {
                pieces.push(Piece::Text(text.to_owned()));
            }
            for call in delta.tool_calls.iter() {
                let index = usize::try_from(index_of(&call.index)).unwrap_or(0);
                let name = call.function.name.get();
                if call.id.get().is_some() || name.is_some() {
                    pieces.push(Piece::ToolStart {
                        index,
                        id: call.id.or_empty().to_owned(),
                        name: name.unwrap_or_default().to_owned(),
                    });
                }
                if let Some(args) = call.function.arguments.non_empty() {
                    pieces.push(Piece::ToolArgs {
                        index,
                        json: args.to_owned(),
                    });
                }
            }
            if let Some(reason) = choice.finish_reason.get() {
                pieces.push(Piece::Stop(reason.to_owned()));
            }
        }
        if let Some(usage) = chunk.usage.as_ref().filter(|u| u.is_object()) {
            pieces.push(Piece::Usage(usage_of(usage)));
        }
        pieces
    }

    fn done(&self) -> bool {
        self.done
    }
}

/// A `chat.completion.chunk` the encoder writes (fields in name order).
#[derive(Serialize)]
struct ChunkOut<'a> {
    choices: [ChoiceOut<'a>; 1],
    created: i64,
    id: &'a str,
    model: &'a str,
    object: &'static str,
}

/// The chunk's one choice.
#[derive(Serialize)]
struct ChoiceOut<'a> {
    delta: DeltaOut<'a>,
    finish_reason: Option<&'a str>,
    index: u32,
}

/// A chunk's delta (each variant's fields in name order).
#[derive(Serialize)]
#[serde(untagged)]
enum DeltaOut<'a> {
    Start {
        content: &'static str,
        role: &'static str,
    },
    Text {
        content: &'a str,
    },
    Thinking {
        reasoning_content: &'a str,
    },
    Calls {
        tool_calls: [CallOut<'a>; 1],
    },
    Empty {},
}

/// A delta's tool call.
#[derive(Serialize)]
#[serde(untagged)]
enum CallOut<'a> {
    Start {
        function: FunctionStart<'a>,
        id: &'a str,
        index: usize,
        #[serde(rename = "type")]
        kind: &'static str,
    },
    Args {
        function: FunctionArgs<'a>,
        index: usize,
    },
    Signature {
        extra_content: Extra<'a>,
        index: usize,
    },
}

#[derive(Serialize)]
struct FunctionStart<'a> {
    arguments: &'static str,
    name: &'a str,
}

#[derive(Serialize)]
struct FunctionArgs<'a> {
    arguments: &'a str,
}

/// Gemini's place for a tool call's thought signature.
#[derive(Serialize)]
struct Extra<'a> {
    google: Google<'a>,
}

#[derive(Serialize)]
struct Google<'a> {
    thought_signature: &'a str,
}

/// The error event.
#[derive(Serialize)]
struct ErrorOut<'a> {
    error: ErrorBody<'a>,
}

#[derive(Serialize)]
struct ErrorBody<'a> {
    message: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
}

/// The usage chunk (no choices).
#[derive(Serialize)]
struct UsageChunk<'a> {
    choices: [(); 0],
    created: i64,
    id: &'a str,
    model: &'a str,
    object: &'static str,
    usage: Value,
}

/// Encodes pieces as `chat.completion.chunk` events ending with `data: [DONE]`.
pub struct Encoder {
    ctx: EncodeCtx,
    id: String,
    created: i64,
    started: bool,
    usage: Option<Usage>,
}

impl Encoder {
    /// An encoder for one answer.
    pub fn new(ctx: EncodeCtx) -> Encoder {
        Encoder {
            ctx,
            id: "chatcmpl-tollgate".into(),
            created: now(),
            started: false,
            usage: None,
        }
    }

    fn chunk(&self, out: &mut Vec<u8>, delta: DeltaOut, finish: Option<&str>) {
        let chunk = ChunkOut {
            choices: [ChoiceOut {
                delta,
                finish_reason: finish,
                index: 0,
            }],
            created: self.created,
            id: &self.id,
            model: &self.ctx.model,
            object: "chat.completion.chunk",
        };
        sse_typed(out, "", &chunk);
    }

    fn start(&mut self, out: &mut Vec<u8>) {
        if !self.started {
            self.started = true;
            let delta = DeltaOut::Start {
                content: "",
                role: "assistant",
            };
            self.chunk(out, delta, None);
        }
    }
}

impl Encode for Encoder {
    fn piece(&mut self, piece: &Piece, out: &mut Vec<u8>) {
        let delta = match piece {
            Piece::Start { id, .. } => {
                if !id.is_empty() {
                    self.id = format!("chatcmpl-{}", id.trim_start_matches("chatcmpl-"));
                }
                self.start(out);
                return;
            }
            Piece::Usage(usage) => {
                self.usage = Some(*usage);
                return;
            }
            Piece::Error(message) => {
                let error = ErrorOut {
                    error: ErrorBody {
                        message,
                        kind: "upstream_error",
                    },
                };
                sse_typed(out, "", &error);
                return;
            }
            Piece::Text(text) => DeltaOut::Text { content: text },
            Piece::Thinking(text) => DeltaOut::Thinking {
                reasoning_content: text,
            },
            Piece::ToolStart { index, id, name } => DeltaOut::Calls {
                tool_calls: [CallOut::Start {
                    function: FunctionStart {
                        arguments: "",
                        name,
                    },
                    id,
                    index: *index,
                    kind: "function",
                }],
            },
            Piece::ToolArgs { index, json } => DeltaOut::Calls {
                tool_calls: [CallOut::Args {
                    function: FunctionArgs { arguments: json },
                    index: *index,
                }],
            },
            // Where Gemini's OpenAI-compatible API puts a tool call's thought signature
            // (https://ai.google.dev/gemini-api/docs/thought-signatures): a client sending the
            // call back with it keeps a Gemini upstream's check satisfied.
            Piece::ToolSignature { index, signature } => DeltaOut::Calls {
                tool_calls: [CallOut::Signature {
                    extra_content: Extra {
                        google: Google {
                            thought_signature: signature,
                        },
                    },
                    index: *index,
                }],
            },
            // Chat completions chunks have no field for Anthropic or Converse signatures: the
            // client's next turn comes back with the reasoning text only, which those
            // upstreams' converters leave out rather than send unsigned.
            Piece::ThinkingSignature(_) | Piece::RedactedThinking(_) => return,
            Piece::Stop(reason) => {
                self.start(out);
                self.chunk(out, DeltaOut::Empty {}, Some(reason));
                return;
            }
        };
        self.start(out);
        self.chunk(out, delta, None);
    }

    fn end(&mut self, out: &mut Vec<u8>) {
        self.start(out);
        if self.ctx.include_usage
            && let Some(usage) = &self.usage
        {
            let chunk = UsageChunk {
                choices: [],
                created: self.created,
                id: &self.id,
                model: &self.ctx.model,
                object: "chat.completion.chunk",
                usage: usage_json(usage),
            };
            sse_typed(out, "", &chunk);
        }
        out.extend_from_slice(b"data: [DONE]\n\n");
    }
}
