//! Cohere's typed stream events as pieces: each event's data is read into the borrowed
//! [`Event`] view (no `Value` tree per event).

use std::collections::HashMap;

use super::finish_of;
use super::read::Event;
use crate::relay::wire::typed::{Obj, Shape};
use crate::relay::wire::{Decode, Piece};

/// Decodes Cohere's typed stream events (the type is in the data's `type`, and in the `event:`
/// line when the upstream sends one). `message-end` ends the stream; a `[DONE]` line too.
#[derive(Debug, Default)]
pub struct Decoder {
    /// Cohere's tool call index → the hub's (counted from 0 in order of appearance).
    tools: HashMap<u64, usize>,
    done: bool,
}

impl Decode for Decoder {
    fn event(&mut self, event: &str, data: &str) -> Vec<Piece> {
        if data.trim() == "[DONE]" {
            self.done = true;
            return Vec::new();
        }
        // Data that is JSON but not an object reads as an empty event of the `event:` line's
        // type, as indexing a `Value` read it.
        let Ok(Obj(value)) = serde_json::from_str::<Obj<Event>>(data) else {
            return Vec::new();
        };
        let kind = value.kind.get().unwrap_or(event);
        let message = &value.delta.message;
        let mut pieces = Vec::new();
        match kind {
            "message-start" => pieces.push(Piece::Start {
                id: value.id.or_empty().to_owned(),
                model: String::new(),
            }),
            "content-start" | "content-delta" => {
                if let Some(t) = message.content.thinking.non_empty() {
                    pieces.push(Piece::Thinking(t.to_owned()));
                }
                if let Some(t) = message.content.text.non_empty() {
                    pieces.push(Piece::Text(t.to_owned()));
                }
            }
            "tool-plan-delta" => {
                if let Some(t) = message.tool_plan.non_empty() {
                    pieces.push(Piece::Thinking(t.to_owned()));
                }
            }
            "tool-call-start" => {
                let call = &message.tool_calls;
                let index = self.tools.len();
                self.tools.insert(value.index(), index);
                pieces.push(Piece::ToolStart {
                    index,
                    id: call.id.or_empty().to_owned(),
                    name: call.function.name.or_empty().to_owned(),
                });
                if let Some(args) = call.function.arguments.non_empty() {
                    pieces.push(Piece::ToolArgs {
                        index,
                        json: args.to_owned(),
                    });
                }
            }
            "tool-call-delta" => {
                let args = message.tool_calls.function.arguments.non_empty();
                let index = self.tools.get(&value.index());
                if let (Some(args), Some(index)) = (args, index) {
                    pieces.push(Piece::ToolArgs {
                        index: *index,
                        json: args.to_owned(),
                    });
                }
            }
            "message-end" => {
                let delta = &value.delta;
                if let Some(error) = delta.error.non_empty() {
                    pieces.push(Piece::Error(error.to_owned()));
                }
                if let Shape::Obj(usage) = &delta.usage {
                    pieces.push(Piece::Usage(usage.usage()));
                }
                let reason = delta.finish_reason.or_empty();
                pieces.push(Piece::Stop(finish_of(reason).to_owned()));
                self.done = true;
            }
            _ => {}
        }
        pieces
    }

    fn done(&self) -> bool {
        self.done
    }
}
