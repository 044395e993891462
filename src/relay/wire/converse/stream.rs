//! ConverseStream events as pieces: each event's payload is read into the borrowed
//! [`Event`] view (no `Value` tree per event).

use std::collections::HashMap;

use super::finish_of;
use super::read::{Event, Start, usage_of_shape};
use crate::relay::wire::typed::{Obj, Shape};
use crate::relay::wire::{Decode, Piece};

/// Decodes ConverseStream events.
#[derive(Debug, Default)]
pub struct Decoder {
    /// Content block index → tool call index.
    tools: HashMap<u64, usize>,
    done: bool,
}

impl Decode for Decoder {
    fn event(&mut self, event: &str, data: &str) -> Vec<Piece> {
        // A payload that is JSON but not an object reads as an empty event, as indexing a
        // `Value` read it.
        let Ok(Obj(value)) = serde_json::from_str::<Obj<Event>>(data) else {
            return Vec::new();
        };
        let block = value.block();
        let mut pieces = Vec::new();
        match event {
            "messageStart" => pieces.push(Piece::Start {
                id: "chatcmpl-bedrock".into(),
                model: String::new(),
            }),
            "contentBlockStart" => {
                let Start { tool_use } = &value.start.0;
                if !matches!(tool_use, Shape::Absent) {
                    let (id, name) = match tool_use {
                        Shape::Obj(tool) => (tool.tool_use_id.or_empty(), tool.name.or_empty()),
                        _ => ("", ""),
                    };
                    let index = self.tools.len();
                    self.tools.insert(block, index);
                    pieces.push(Piece::ToolStart {
                        index,
                        id: id.to_owned(),
                        name: name.to_owned(),
                    });
                }
            }
            "contentBlockDelta" => {
                let delta = &value.delta;
                let reasoning = &delta.reasoning_content;
                if let Some(t) = delta.text.get() {
                    pieces.push(Piece::Text(t.to_owned()));
                } else if let Some(json) = delta.tool_use.input.get() {
                    if let Some(index) = self.tools.get(&block) {
                        pieces.push(Piece::ToolArgs {
                            index: *index,
                            json: json.to_owned(),
                        });
                    }
                } else if let Some(r) = reasoning.text.get() {
                    pieces.push(Piece::Thinking(r.to_owned()));
                } else if let Some(s) = reasoning.signature.get() {
                    // ReasoningContentBlockDelta: text, signature or redactedContent.
                    pieces.push(Piece::ThinkingSignature(s.to_owned()));
                } else if let Some(data) = reasoning.redacted_content.get() {
                    pieces.push(Piece::RedactedThinking(data.to_owned()));
                }
            }
            "messageStop" => {
                let reason = value.stop_reason.get().unwrap_or("end_turn");
                pieces.push(Piece::Stop(finish_of(reason).to_owned()));
            }
            "metadata" => {
                if let Some(usage) = usage_of_shape(&value.usage) {
                    pieces.push(Piece::Usage(usage));
                }
                // The metadata event is the stream's last.
                self.done = true;
            }
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
