//! Streams: Responses events from an upstream as pieces ([`Decoder`]), and pieces as
//! Responses events for a client ([`Encoder`]), each event read and written as its type.

use std::collections::HashMap;

use super::answer::{finish_of, item_id, status_of, usage_of};
use super::read::Event;
use super::write::{EventOut, IncompleteOut, ItemOut, PartOut, ResponseOut, UsageOut};
use crate::relay::measure::price::Usage;
use crate::relay::wire::typed::sse_typed;
use crate::relay::wire::{Decode, Encode, EncodeCtx, Piece, now};

/// Decodes Responses stream events (the type is the data's `type`, else the `event:` line).
/// `response.completed`, `response.incomplete` and `response.failed` end the stream.
#[derive(Debug, Default)]
pub struct Decoder {
    /// Function call item id → tool call index.
    by_item: HashMap<String, usize>,
    /// Output index of a function call item → tool call index.
    by_output: HashMap<u64, usize>,
    done: bool,
}

impl Decoder {
    fn tool_index(&self, event: &Event) -> Option<usize> {
        event
            .item_id
            .get()
            .and_then(|id| self.by_item.get(id))
            .or_else(|| output_index(event).and_then(|i| self.by_output.get(&i)))
            .copied()
    }
}

/// An event's `output_index`, when it is a whole number.
fn output_index(event: &Event) -> Option<u64> {
    event.output_index.0.and_then(|i| u64::try_from(i).ok())
}

impl Decode for Decoder {
    fn event(&mut self, event: &str, data: &str) -> Vec<Piece> {
        let Ok(value) = serde_json::from_str::<Event>(data) else {
            return Vec::new();
        };
        let kind = value.kind.get().unwrap_or(event);
        let delta = || value.delta.non_empty().map(str::to_owned);
        let mut pieces = Vec::new();
        match kind {
            "response.created" => pieces.push(Piece::Start {
                id: value.response.id.or_empty().to_owned(),
                model: value.response.model.or_empty().to_owned(),
            }),
            "response.output_text.delta" | "response.refusal.delta" => {
                pieces.extend(delta().map(Piece::Text));
            }
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                pieces.extend(delta().map(Piece::Thinking));
            }
            "response.output_item.added" if value.item.kind.get() == Some("function_call") => {
                let item = &value.item;
                let index = self.by_item.len().max(self.by_output.len());
                if let Some(id) = item.id.get() {
                    self.by_item.insert(id.to_owned(), index);
                }
                if let Some(at) = output_index(&value) {
                    self.by_output.insert(at, index);
                }
                pieces.push(Piece::ToolStart {
                    index,
                    id: item.call_id.or_empty().to_owned(),
                    name: item.name.or_empty().to_owned(),
                });
                if let Some(args) = item.arguments.non_empty() {
                    pieces.push(Piece::ToolArgs {
                        index,
                        json: args.to_owned(),
                    });
                }
            }
            "response.function_call_arguments.delta" => {
                if let (Some(index), Some(json)) = (self.tool_index(&value), delta()) {
                    pieces.push(Piece::ToolArgs { index, json });
                }
            }
            "response.completed" | "response.incomplete" | "response.failed" => {
                let response = &value.response;
                if let Some(usage) = usage_of(response, response.usage.as_ref()) {
                    pieces.push(Piece::Usage(usage));
                }
                if kind == "response.failed" {
                    let message = response
                        .error
                        .message
                        .get()
                        .unwrap_or("the response failed");
                    pieces.push(Piece::Error(message.to_owned()));
                }
                let called = !self.by_item.is_empty() || !self.by_output.is_empty();
                pieces.push(Piece::Stop(finish_of(response, called).to_owned()));
                self.done = true;
            }
            "error" => {
                let message = value.message.get().unwrap_or("upstream error");
                pieces.push(Piece::Error(message.to_owned()));
            }
            _ => {}
        }
        pieces
    }

    fn done(&self) -> bool {
        self.done
    }
}

/// One output item being streamed.
#[derive(Debug)]
enum Item {
    Message {
        id: String,
        text: String,
    },
    Reasoning {
        id: String,
        text: String,
    },
    Call {
        id: String,
        call_id: String,
        name: String,
        args: String,
    },
}

impl Item {
    /// The item as it stands (`done`: its final form).
    fn out(&self, done: bool) -> ItemOut<'_> {
        let status = if done { "completed" } else { "in_progress" };
        match self {
            Item::Message { id, text } => {
                let content = if done {
                    vec![PartOut::output_text(text)]
                } else {
                    Vec::new()
                };
                ItemOut::message(id, status, content)
            }
            Item::Reasoning { id, text } => {
                let summary = if done {
                    vec![PartOut::summary_text(text)]
                } else {
                    Vec::new()
                };
                ItemOut::reasoning(id, summary)
            }
            Item::Call {
                id,
                call_id,
                name,
                args,
            } => {
                let args = if done { args.as_str() } else { "" };
                ItemOut::call(id, status, call_id, Some(name), args)
            }
        }
    }
}

/// Appends event `kind` (numbered from `sequence`) to `out`.
fn emit<'a>(sequence: &mut u64, out: &mut Vec<u8>, kind: &'a str, mut data: EventOut<'a>) {
    data.kind = kind;
    data.sequence_number = *sequence;
    *sequence += 1;
    sse_typed(out, kind, &data);
}

/// Encodes pieces as Responses stream events: `response.created` and `response.in_progress`,
/// an output item per run of text, reasoning or tool call (added, deltas, done), and
/// `response.completed` (`response.incomplete` when the output limit stopped it) carrying the
/// whole response and its usage.
pub struct Encoder {
    ctx: EncodeCtx,
    id: String,
    created: i64,
    sequence: u64,
    started: bool,
    items: Vec<Item>,
    /// The text or reasoning item still open (tool calls stay open to the end).
    open: Option<usize>,
    /// Tool call index → item index.
    calls: HashMap<usize, usize>,
    stop: Option<String>,
    usage: Option<Usage>,
}

impl Encoder {
    /// An encoder for one answer.
    pub fn new(ctx: EncodeCtx) -> Encoder {
        Encoder {
            ctx,
            id: "resp_tollgate".into(),
            created: now(),
            sequence: 0,
            started: false,
            items: Vec::new(),
            open: None,
            calls: HashMap::new(),
            stop: None,
            usage: None,
        }
    }

    fn start(&mut self, out: &mut Vec<u8>) {
        if self.started {
            return;
        }
        self.started = true;
        for kind in ["response.created", "response.in_progress"] {
            let response = ResponseOut::new(
                &self.id,
                self.created,
                &self.ctx.model,
                ("in_progress", None),
                Vec::new(),
                None,
            );
            emit(
                &mut self.sequence,
                out,
                kind,
                EventOut {
                    response: Some(response),
                    ..EventOut::default()
                },
            );
        }
    }

    /// Opens a new output item; returns its index.
    fn add(&mut self, out: &mut Vec<u8>, item: Item) -> usize {
        let at = self.items.len();
        self.items.push(item);
        emit(
            &mut self.sequence,
            out,
            "response.output_item.added",
            EventOut {
                output_index: Some(at),
                item: self.items.get(at).map(|i| i.out(false)),
                ..EventOut::default()
            },
        );
        at
    }

    /// Closes the open text or reasoning item.
    fn close_open(&mut self, out: &mut Vec<u8>) {
        if let Some(at) = self.open.take() {
            self.close(out, at);
        }
    }

    fn close(&mut self, out: &mut Vec<u8>, at: usize) {
        let Some(item) = self.items.get(at) else {
            return;
        };
        let sequence = &mut self.sequence;
        let on = |id| EventOut {
            item_id: Some(id),
            output_index: Some(at),
            ..EventOut::default()
        };
        match item {
            Item::Message { id, text } => {
                emit(
                    sequence,
                    out,
                    "response.output_text.done",
                    EventOut {
                        content_index: Some(0),
                        text: Some(text),
                        logprobs: Some([]),
                        ..on(id)
                    },
                );
                emit(
                    sequence,
                    out,
                    "response.content_part.done",
                    EventOut {
                        content_index: Some(0),
                        part: Some(PartOut::output_text(text)),
                        ..on(id)
                    },
                );
            }
            Item::Reasoning { id, text } => {
                emit(
                    sequence,
                    out,
                    "response.reasoning_summary_text.done",
                    EventOut {
                        summary_index: Some(0),
                        text: Some(text),
                        ..on(id)
                    },
                );
                emit(
                    sequence,
                    out,
                    "response.reasoning_summary_part.done",
                    EventOut {
                        summary_index: Some(0),
                        part: Some(PartOut::summary_text(text)),
                        ..on(id)
                    },
                );
            }
            Item::Call { id, name, args, .. } => emit(
                sequence,
                out,
                "response.function_call_arguments.done",
                EventOut {
                    name: Some(name),
                    arguments: Some(args),
                    ..on(id)
                },
            ),
        }
        emit(
            sequence,
            out,
            "response.output_item.done",
            EventOut {
                output_index: Some(at),
                item: Some(item.out(true)),
                ..EventOut::default()
            },
        );
    }

    /// Appends `delta` to the open item of the kind `reasoning` says, opening one if needed.
    fn text(&mut self, out: &mut Vec<u8>, delta: &str, reasoning: bool) {
        let open_kind = self
            .open
            .and_then(|at| self.items.get(at))
            .map(|i| matches!(i, Item::Reasoning { .. }));
        if open_kind != Some(reasoning) {
            self.close_open(out);
            let n = self.items.len();
            let bare = self.id.trim_start_matches("resp_");
            let at = if reasoning {
                let id = format!("rs_{n}_{bare}");
                let at = self.add(
                    out,
                    Item::Reasoning {
                        id: id.clone(),
                        text: String::new(),
                    },
                );
                emit(
                    &mut self.sequence,
                    out,
                    "response.reasoning_summary_part.added",
                    EventOut {
                        item_id: Some(&id),
                        output_index: Some(at),
                        summary_index: Some(0),
                        part: Some(PartOut::summary_text("")),
                        ..EventOut::default()
                    },
                );
                at
            } else {
                let id = format!("msg_{n}_{bare}");
                let at = self.add(
                    out,
                    Item::Message {
                        id: id.clone(),
                        text: String::new(),
                    },
                );
                emit(
                    &mut self.sequence,
                    out,
                    "response.content_part.added",
                    EventOut {
                        item_id: Some(&id),
                        output_index: Some(at),
                        content_index: Some(0),
                        part: Some(PartOut::output_text("")),
                        ..EventOut::default()
                    },
                );
                at
            };
            self.open = Some(at);
        }
        let Some(at) = self.open else { return };
        let id = match self.items.get_mut(at) {
            Some(Item::Message { id, text } | Item::Reasoning { id, text }) => {
                text.push_str(delta);
                &*id
            }
            _ => return,
        };
        let on = EventOut {
            item_id: Some(id),
            output_index: Some(at),
            delta: Some(delta),
            ..EventOut::default()
        };
        if reasoning {
            emit(
                &mut self.sequence,
                out,
                "response.reasoning_summary_text.delta",
                EventOut {
                    summary_index: Some(0),
                    ..on
                },
            );
        } else {
            emit(
                &mut self.sequence,
                out,
                "response.output_text.delta",
                EventOut {
                    content_index: Some(0),
                    logprobs: Some([]),
                    ..on
                },
            );
        }
    }
}

impl Encode for Encoder {
    fn piece(&mut self, piece: &Piece, out: &mut Vec<u8>) {
        if let Piece::Start { id, .. } = piece {
            if !id.is_empty() {
                self.id = item_id("resp", id);
            }
            self.start(out);
            return;
        }
        self.start(out);
        match piece {
            Piece::Start { .. } => {}
            Piece::Text(t) => self.text(out, t, false),
            Piece::Thinking(t) => self.text(out, t, true),
            Piece::ToolStart { index, id, name } => {
                self.close_open(out);
                let at = self.add(
                    out,
                    Item::Call {
                        id: item_id("fc", id),
                        call_id: id.clone(),
                        name: name.clone(),
                        args: String::new(),
                    },
                );
                self.calls.insert(*index, at);
            }
            Piece::ToolArgs { index, json } => {
                let Some(&at) = self.calls.get(index) else {
                    return;
                };
                let id = match self.items.get_mut(at) {
                    Some(Item::Call { id, args, .. }) => {
                        args.push_str(json);
                        &*id
                    }
                    _ => return,
                };
                emit(
                    &mut self.sequence,
                    out,
                    "response.function_call_arguments.delta",
                    EventOut {
                        item_id: Some(id),
                        output_index: Some(at),
                        delta: Some(json),
                        ..EventOut::default()
                    },
                );
            }
            // A Responses reasoning item carries OpenAI's own encrypted content, not another
            // provider's signature; a function_call item has no field for Gemini's. The
            // client's next turn comes back without them, and the converters for those
            // upstreams leave unsigned thinking out (see `wire`'s module comment).
            Piece::ThinkingSignature(_)
            | Piece::RedactedThinking(_)
            | Piece::ToolSignature { .. } => {}
            Piece::Stop(reason) => self.stop = Some(reason.clone()),
            Piece::Usage(usage) => self.usage = Some(*usage),
            Piece::Error(message) => emit(
                &mut self.sequence,
                out,
                "error",
                EventOut {
                    code: Some("upstream_error"),
                    message: Some(message),
                    param: Some(()),
                    ..EventOut::default()
                },
            ),
        }
    }

    fn end(&mut self, out: &mut Vec<u8>) {
        self.start(out);
        self.close_open(out);
        let mut calls: Vec<usize> = self.calls.values().copied().collect();
        calls.sort_unstable();
        for at in calls {
            self.close(out, at);
        }
        let (status, incomplete): (&str, Option<IncompleteOut>) =
            status_of(self.stop.as_deref().unwrap_or("stop"));
        let response = ResponseOut::new(
            &self.id,
            self.created,
            &self.ctx.model,
            (status, incomplete),
            self.items.iter().map(|i| i.out(true)).collect(),
            self.usage.as_ref().map(UsageOut::from),
        );
        let kind = if status == "incomplete" {
            "response.incomplete"
        } else {
            "response.completed"
        };
        emit(
            &mut self.sequence,
            out,
            kind,
            EventOut {
                response: Some(response),
                ..EventOut::default()
            },
        );
    }
}
