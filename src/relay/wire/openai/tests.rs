//! Unit tests of the OpenAI chat wire.

use super::*;
use crate::relay::wire::{Decode, Piece};

#[test]
fn decoder_reads_text_tools_finish_and_usage() {
    let mut d = Decoder::default();
    let p = d.event(
        "",
        r#"{"id":"x","model":"m","choices":[{"index":0,"delta":{"content":"Hi"}}]}"#,
    );
    assert_eq!(
        p,
        vec![
            Piece::Start {
                id: "x".into(),
                model: "m".into()
            },
            Piece::Text("Hi".into())
        ]
    );
    let p = d.event(
        "",
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","function":{"name":"f","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}"#,
    );
    assert_eq!(p.len(), 3);
    let p = d.event(
        "",
        r#"{"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":2}}"#,
    );
    assert_eq!(
        p,
        vec![Piece::Usage(Usage {
            prompt_tokens: 5,
            completion_tokens: 2,
            cache_in_prompt: true,
            ..Usage::default()
        })]
    );
    assert!(!d.done());
    d.event("", "[DONE]");
    assert!(d.done());
}
