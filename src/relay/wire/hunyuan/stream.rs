//! Hunyuan's stream: each SSE `data:` is one chunk's response parameters (see the parent
//! module's header), decoded into the hub's pieces.

use std::collections::HashMap;

use serde_json::Value;

use super::{Params, finish_of};
use crate::relay::wire::{Decode, Piece, typed};

/// Decodes Hunyuan's stream chunks.
#[derive(Debug, Default)]
pub struct Decoder {
    started: bool,
    /// Tool call id → the hub's index (Hunyuan repeats the id on each chunk of a call).
    tools: HashMap<String, usize>,
    done: bool,
}

impl Decode for Decoder {
    fn event(&mut self, _event: &str, data: &str) -> Vec<Piece> {
        let Ok(value) = serde_json::from_str::<Value>(data) else {
            return Vec::new();
        };
        // Chunks are the response parameters themselves; tolerate them wrapped in `Response`.
        let value = value.get("Response").unwrap_or(&value);
        let params: Params<'_> = typed::view(value);
        let mut pieces = Vec::new();
        if let Some(error) = &params.error {
            pieces.push(Piece::Error(format!(
                "{}: {}",
                error.code.or_empty(),
                error.message.or_empty()
            )));
            return pieces;
        }
        if let Some(error) = &params.error_msg
            && (error.msg.non_empty().is_some() || error.code.0.is_some())
        {
            pieces.push(Piece::Error(format!(
                "{} ({})",
                error.msg.or_empty(),
                error.code.0.unwrap_or(0)
            )));
        }
        if !self.started {
            self.started = true;
            pieces.push(Piece::Start {
                id: params.id.or_empty().to_owned(),
                model: String::new(),
            });
        }
        let mut finish = None;
        if let Some(choice) = params.choices.iter().next() {
            let delta = &choice.delta;
            if let Some(text) = delta.content.non_empty() {
                pieces.push(Piece::Text(text.to_owned()));
            }
            for call in delta.tool_calls.iter() {
                let id = call.id.or_empty();
                let known = self.tools.get(id).copied();
                let index = match known {
                    Some(index) => index,
                    None => {
                        let index = self.tools.len();
                        self.tools.insert(id.to_owned(), index);
                        pieces.push(Piece::ToolStart {
                            index,
                            id: id.to_owned(),
                            name: call.function.name.or_empty().to_owned(),
                        });
                        index
                    }
                };
                if let Some(args) = call.function.arguments.non_empty() {
                    pieces.push(Piece::ToolArgs {
                        index,
                        json: args.to_owned(),
                    });
                }
            }
            finish = choice.finish_reason.non_empty().map(finish_of);
        }
        if let Some(usage) = &params.usage {
            pieces.push(Piece::Usage(usage.usage()));
        }
        if let Some(reason) = finish {
            pieces.push(Piece::Stop(reason.to_owned()));
            self.done = true;
        }
        pieces
    }

    fn done(&self) -> bool {
        self.done
    }
}
