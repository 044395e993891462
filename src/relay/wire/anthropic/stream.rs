//! Anthropic's stream events typed, both ways: the decoder reads `message_start`,
//! `content_block_start` / `_delta`, `message_delta`, `message_stop` and `error` into
//! lenient structs whose strings borrow from the event's text; the encoder writes each event
//! from structs declared in the order of their keys, straight into the output buffer, with
//! the bytes a `serde_json::Value` of it would have (events in
//! <https://docs.anthropic.com/en/docs/build-with-claude/streaming>).

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::usage::{UsageIn, UsageOut};
use super::{finish_of, message_id, stop_reason_of};
use crate::relay::measure::price::Usage;
use crate::relay::wire::typed::{Obj, Str, Verbatim, sse_typed};
use crate::relay::wire::{Decode, Encode, EncodeCtx, Piece};

/// A stream event as the decoder reads it (the type is in the data, else the `event:` line).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Event<'a> {
    #[serde(borrow, rename = "type")]
    kind: Str<'a>,
    /// `message_start`'s message.
    #[serde(borrow)]
    message: Obj<Message<'a>>,
    /// The content block an event is about (read as `as_u64` of a value: exactly, else 0).
    #[serde(borrow)]
    index: Option<Verbatim<'a>>,
    #[serde(borrow)]
    content_block: Obj<Block<'a>>,
    /// A content block's delta, or `message_delta`'s.
    #[serde(borrow)]
    delta: Obj<Delta<'a>>,
    /// `message_delta`'s usage.
    usage: Obj<UsageIn>,
    #[serde(borrow)]
    error: Obj<ErrorBody<'a>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Message<'a> {
    #[serde(borrow)]
    id: Str<'a>,
    #[serde(borrow)]
    model: Str<'a>,
    usage: Obj<UsageIn>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Block<'a> {
    #[serde(borrow, rename = "type")]
    kind: Str<'a>,
    #[serde(borrow)]
    id: Str<'a>,
    #[serde(borrow)]
    name: Str<'a>,
    #[serde(borrow)]
    text: Str<'a>,
    #[serde(borrow)]
    data: Str<'a>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Delta<'a> {
    #[serde(borrow, rename = "type")]
    kind: Str<'a>,
    #[serde(borrow)]
    text: Str<'a>,
    #[serde(borrow)]
    thinking: Str<'a>,
    #[serde(borrow)]
    signature: Str<'a>,
    #[serde(borrow)]
    partial_json: Str<'a>,
    #[serde(borrow)]
    stop_reason: Str<'a>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct ErrorBody<'a> {
    #[serde(borrow)]
    message: Str<'a>,
}

/// Decodes Anthropic stream events.
#[derive(Debug, Default)]
pub struct Decoder {
    /// The usage so far: each report's non-null fields replace the earlier ones.
    usage: UsageIn,
    /// content block index → tool call index.
    tools: HashMap<u64, usize>,
    done: bool,
}

impl Decoder {
    fn merge_usage(&mut self, usage: UsageIn) -> Piece {
        self.usage.merge(usage);
        Piece::Usage(self.usage.usage())
    }
}

impl Decode for Decoder {
    fn event(&mut self, event: &str, data: &str) -> Vec<Piece> {
        let Ok(Obj(value)) = serde_json::from_str::<Obj<Event>>(data) else {
            return Vec::new();
        };
        let block_index = match &value.index {
            Some(Verbatim::Num(n)) => n.as_u64().unwrap_or(0),
            _ => 0,
        };
        let mut pieces = Vec::new();
        match value.kind.get().unwrap_or(event) {
            "message_start" => {
                let message = &value.message;
                pieces.push(Piece::Start {
                    id: message.id.or_empty().to_owned(),
                    model: message.model.or_empty().to_owned(),
                });
                pieces.push(self.merge_usage(message.usage.0));
            }
            "content_block_start" => {
                let block = &value.content_block;
                match block.kind.or_empty() {
                    "tool_use" => {
                        let index = self.tools.len();
                        self.tools.insert(block_index, index);
                        pieces.push(Piece::ToolStart {
                            index,
                            id: block.id.or_empty().to_owned(),
                            name: block.name.or_empty().to_owned(),
                        });
                    }
                    "text" => {
                        if let Some(t) = block.text.non_empty() {
                            pieces.push(Piece::Text(t.to_owned()));
                        }
                    }
                    "redacted_thinking" => {
                        pieces.push(Piece::RedactedThinking(block.data.or_empty().to_owned()));
                    }
                    _ => {}
                }
            }
            "content_block_delta" => {
                let delta = &value.delta;
                match delta.kind.or_empty() {
                    "text_delta" => pieces.push(Piece::Text(delta.text.or_empty().to_owned())),
                    "thinking_delta" => {
                        pieces.push(Piece::Thinking(delta.thinking.or_empty().to_owned()));
                    }
                    "signature_delta" => pieces.push(Piece::ThinkingSignature(
                        delta.signature.or_empty().to_owned(),
                    )),
                    "input_json_delta" => {
                        if let Some(index) = self.tools.get(&block_index) {
                            pieces.push(Piece::ToolArgs {
                                index: *index,
                                json: delta.partial_json.or_empty().to_owned(),
                            });
                        }
                    }
                    _ => {}
                }
            }
            "message_delta" => {
                if let Some(reason) = value.delta.stop_reason.get() {
                    pieces.push(Piece::Stop(finish_of(reason).to_owned()));
                }
                pieces.push(self.merge_usage(value.usage.0));
            }
            "message_stop" => self.done = true,
            "error" => pieces.push(Piece::Error(
                value
                    .error
                    .message
                    .get()
                    .unwrap_or("the upstream stream failed")
                    .to_owned(),
            )),
            _ => {}
        }
        pieces
    }

    fn done(&self) -> bool {
        self.done
    }
}

/// `message_start` written.
#[derive(Serialize)]
struct MessageStartOut<'a> {
    message: MessageOut<'a>,
    #[serde(rename = "type")]
    kind: &'static str,
}

/// The (empty) message `message_start` carries.
#[derive(Serialize)]
struct MessageOut<'a> {
    content: [(); 0],
    id: &'a str,
    model: &'a str,
    role: &'static str,
    stop_reason: (),
    stop_sequence: (),
    #[serde(rename = "type")]
    kind: &'static str,
    usage: UsageOut,
}

/// `content_block_start` written.
#[derive(Serialize)]
struct BlockStartOut<'a> {
    content_block: BlockOut<'a>,
    index: usize,
    #[serde(rename = "type")]
    kind: &'static str,
}

/// An empty object (a tool call's `input` before its deltas).
#[derive(Serialize)]
struct Empty {}

/// A content block as it starts.
#[derive(Serialize)]
#[serde(untagged)]
enum BlockOut<'a> {
    Text {
        text: &'static str,
        #[serde(rename = "type")]
        kind: &'static str,
    },
    Thinking {
        thinking: &'static str,
        #[serde(rename = "type")]
        kind: &'static str,
    },
    Redacted {
        data: &'a str,
        #[serde(rename = "type")]
        kind: &'static str,
    },
    Tool {
        id: &'a str,
        input: Empty,
        name: &'a str,
        #[serde(rename = "type")]
        kind: &'static str,
    },
}

/// `content_block_delta` written.
#[derive(Serialize)]
struct BlockDeltaOut<'a> {
    delta: DeltaOut<'a>,
    index: usize,
    #[serde(rename = "type")]
    kind: &'static str,
}

/// A content block's delta.
#[derive(Serialize)]
#[serde(untagged)]
enum DeltaOut<'a> {
    Text {
        text: &'a str,
        #[serde(rename = "type")]
        kind: &'static str,
    },
    Thinking {
        thinking: &'a str,
        #[serde(rename = "type")]
        kind: &'static str,
    },
    Signature {
        signature: &'a str,
        #[serde(rename = "type")]
        kind: &'static str,
    },
    Json {
        partial_json: &'a str,
        #[serde(rename = "type")]
        kind: &'static str,
    },
}

/// `content_block_stop` written.
#[derive(Serialize)]
struct BlockStopOut {
    index: usize,
    #[serde(rename = "type")]
    kind: &'static str,
}

/// `error` written.
#[derive(Serialize)]
struct ErrorOut<'a> {
    error: ErrorBodyOut<'a>,
    #[serde(rename = "type")]
    kind: &'static str,
}

#[derive(Serialize)]
struct ErrorBodyOut<'a> {
    message: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
}

/// `message_delta` written.
#[derive(Serialize)]
struct MessageDeltaOut {
    delta: StopOut,
    #[serde(rename = "type")]
    kind: &'static str,
    usage: UsageOut,
}

#[derive(Serialize)]
struct StopOut {
    stop_reason: &'static str,
    stop_sequence: (),
}

/// `message_stop` written.
#[derive(Serialize)]
struct KindOut {
    #[serde(rename = "type")]
    kind: &'static str,
}

/// The kind of the content block being streamed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BlockKind {
    Text,
    Thinking,
    Redacted,
    Tool(usize),
}

/// Encodes pieces as Anthropic stream events.
pub struct Encoder {
    ctx: EncodeCtx,
    id: String,
    started: bool,
    open: Option<BlockKind>,
    next_index: usize,
    stop: Option<String>,
    usage: Option<Usage>,
}

impl Encoder {
    /// An encoder for one answer.
    pub fn new(ctx: EncodeCtx) -> Encoder {
        Encoder {
            ctx,
            id: "msg_tollgate".into(),
            started: false,
            open: None,
            next_index: 0,
            stop: None,
            usage: None,
        }
    }

    fn start(&mut self, out: &mut Vec<u8>) {
        if self.started {
            return;
        }
        self.started = true;
        let usage = self.usage.unwrap_or(Usage {
            prompt_tokens: self.ctx.prompt_estimate,
            ..Usage::default()
        });
        let mut usage = UsageOut::from(&usage);
        usage.output_tokens = 0;
        sse_typed(
            out,
            "message_start",
            &MessageStartOut {
                message: MessageOut {
                    content: [],
                    id: &self.id,
                    model: &self.ctx.model,
                    role: "assistant",
                    stop_reason: (),
                    stop_sequence: (),
                    kind: "message",
                    usage,
                },
                kind: "message_start",
            },
        );
    }

    fn close(&mut self, out: &mut Vec<u8>) {
        if self.open.take().is_some() {
            let index = self.next_index;
            self.next_index += 1;
            sse_typed(
                out,
                "content_block_stop",
                &BlockStopOut {
                    index,
                    kind: "content_block_stop",
                },
            );
        }
    }

    fn open(&mut self, block: BlockKind, out: &mut Vec<u8>, start: BlockOut) {
        if self.open == Some(block) {
            return;
        }
        self.close(out);
        self.open = Some(block);
        sse_typed(
            out,
            "content_block_start",
            &BlockStartOut {
                content_block: start,
                index: self.next_index,
                kind: "content_block_start",
            },
        );
    }

    fn delta(&self, out: &mut Vec<u8>, delta: DeltaOut) {
        sse_typed(
            out,
            "content_block_delta",
            &BlockDeltaOut {
                delta,
                index: self.next_index,
                kind: "content_block_delta",
            },
        );
    }

    fn open_thinking(&mut self, out: &mut Vec<u8>) {
        self.open(
            BlockKind::Thinking,
            out,
            BlockOut::Thinking {
                thinking: "",
                kind: "thinking",
            },
        );
    }
}

impl Encode for Encoder {
    fn piece(&mut self, piece: &Piece, out: &mut Vec<u8>) {
        match piece {
            Piece::Start { id, .. } => {
                self.id = message_id(id);
                self.start(out);
            }
            Piece::Usage(usage) => self.usage = Some(*usage),
            Piece::Stop(reason) => self.stop = Some(reason.clone()),
            Piece::Text(text) => {
                self.start(out);
                self.open(
                    BlockKind::Text,
                    out,
                    BlockOut::Text {
                        text: "",
                        kind: "text",
                    },
                );
                self.delta(
                    out,
                    DeltaOut::Text {
                        text,
                        kind: "text_delta",
                    },
                );
            }
            Piece::Thinking(text) => {
                self.start(out);
                self.open_thinking(out);
                self.delta(
                    out,
                    DeltaOut::Thinking {
                        thinking: text,
                        kind: "thinking_delta",
                    },
                );
            }
            Piece::ThinkingSignature(signature) => {
                self.start(out);
                // The signature closes the thinking it signs (Converse may send it in a block
                // of its own): a thinking block is open, or opened, to carry it.
                self.open_thinking(out);
                self.delta(
                    out,
                    DeltaOut::Signature {
                        signature,
                        kind: "signature_delta",
                    },
                );
                // A signature ends its block: more thinking is another block.
                self.close(out);
            }
            Piece::RedactedThinking(data) => {
                self.start(out);
                self.close(out);
                self.open(
                    BlockKind::Redacted,
                    out,
                    BlockOut::Redacted {
                        data,
                        kind: "redacted_thinking",
                    },
                );
                self.close(out);
            }
            // Anthropic's tool_use blocks have no field for Gemini's signature: an Anthropic
            // client cannot send it back, and a Gemini upstream that requires it (Gemini 3 with
            // tools) will say so in its own 400.
            Piece::ToolSignature { .. } => {}
            Piece::ToolStart { index, id, name } => {
                self.start(out);
                self.open(
                    BlockKind::Tool(*index),
                    out,
                    BlockOut::Tool {
                        id,
                        input: Empty {},
                        name,
                        kind: "tool_use",
                    },
                );
            }
            Piece::ToolArgs { index, json } => {
                self.start(out);
                if self.open != Some(BlockKind::Tool(*index)) {
                    return;
                }
                self.delta(
                    out,
                    DeltaOut::Json {
                        partial_json: json,
                        kind: "input_json_delta",
                    },
                );
            }
            Piece::Error(message) => {
                self.start(out);
                sse_typed(
                    out,
                    "error",
                    &ErrorOut {
                        error: ErrorBodyOut {
                            message,
                            kind: "api_error",
                        },
                        kind: "error",
                    },
                );
            }
        }
    }

    fn end(&mut self, out: &mut Vec<u8>) {
        self.start(out);
        self.close(out);
        let usage = self.usage.unwrap_or_default();
        sse_typed(
            out,
            "message_delta",
            &MessageDeltaOut {
                delta: StopOut {
                    stop_reason: stop_reason_of(self.stop.as_deref().unwrap_or("stop")),
                    stop_sequence: (),
                },
                kind: "message_delta",
                usage: UsageOut::from(&usage),
            },
        );
        sse_typed(
            out,
            "message_stop",
            &KindOut {
                kind: "message_stop",
            },
        );
    }
}
