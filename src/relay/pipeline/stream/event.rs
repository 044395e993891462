//! One event of an OpenAI-path stream: the part of its chunk Tollgate reads (borrowed from the
//! event's data), what it adds to the meter and the ending rule, and whether it goes out.

use std::borrow::Cow;

use serde::Deserialize;

use crate::relay::measure::components::OutputItems;
use crate::relay::measure::usage::{OpenAiUsage, Usage};
use crate::relay::pipeline::ending::EndRule;
use crate::relay::pipeline::meter::Meter;

/// The part of a chunk Tollgate reads: borrowed from the event's data, nothing copied but
/// the answer's text. Chat completions chunks (`choices[].delta`, legacy completions'
/// `choices[].text`, the `usage` chunk) and Responses API events (`type`, a text `delta`, the
/// `response` of `response.completed` with its usage) share it. Text fields are read
/// leniently ([`Loose`]): an upstream's odd shape for one of them never hides the usage.
///
/// Read for every event of every stream, so it stays small: the usage and the Responses API's
/// `response` (one event of a stream each) are boxed, and the usual single choice is held
/// without a vector ([`Choices`]).
#[derive(Deserialize)]
struct Chunk<'a> {
    #[serde(default, borrow)]
    choices: Choices<'a>,
    #[serde(default)]
    usage: Option<Box<OpenAiUsage>>,
    #[serde(default, rename = "type", borrow)]
    kind: Loose<'a>,
    #[serde(default, borrow)]
    delta: Loose<'a>,
    #[serde(default)]
    response: Option<Box<ResponseUsage>>,
    /// An in-band error (its text is checked for the channel's key before it goes out).
    #[serde(default)]
    error: Option<serde::de::IgnoredAny>,
}

/// A chunk's `choices`: the first in place, any others in a vector (allocated only for
/// `n > 1`). Read as a `Vec` reads it (anything but a list, `null` included, fails the chunk).
#[derive(Default)]
struct Choices<'a> {
    first: Option<ChunkChoice<'a>>,
    rest: Vec<ChunkChoice<'a>>,
}

impl<'a> Choices<'a> {
    fn iter(&self) -> impl Iterator<Item = &ChunkChoice<'a>> {
        self.first.iter().chain(&self.rest)
    }

    fn is_empty(&self) -> bool {
        self.first.is_none()
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Choices<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Choices<'a>, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = Choices<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a list of choices")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Choices<'de>, A::Error> {
                let mut choices = Choices {
                    first: seq.next_element()?,
                    rest: Vec::new(),
                };
                while let Some(choice) = seq.next_element()? {
                    choices.rest.push(choice);
                }
                Ok(choices)
            }
        }
        d.deserialize_seq(Visit)
    }
}

#[derive(Deserialize)]
struct ChunkChoice<'a> {
    #[serde(default, borrow)]
    delta: Option<Delta<'a>>,
    /// Legacy completions.
    #[serde(default, borrow)]
    text: Loose<'a>,
    /// Why the choice stopped (`null` until it does).
    #[serde(default, borrow)]
    finish_reason: Loose<'a>,
}

#[derive(Deserialize)]
struct Delta<'a> {
    #[serde(default, borrow)]
    content: Loose<'a>,
    #[serde(default, borrow)]
    reasoning_content: Loose<'a>,
    /// OpenRouter's and vLLM's name for `reasoning_content`.
    #[serde(default, borrow)]
    reasoning: Loose<'a>,
    #[serde(default, borrow)]
    tool_calls: Vec<ToolDelta<'a>>,
}

#[derive(Deserialize)]
struct ToolDelta<'a> {
    #[serde(default, borrow)]
    function: Option<FunctionDelta<'a>>,
}

#[derive(Deserialize)]
struct FunctionDelta<'a> {
    #[serde(default, borrow)]
    name: Loose<'a>,
    #[serde(default, borrow)]
    arguments: Loose<'a>,
}

/// The `response` of a Responses API event: its usage and its output items' types (web search
/// calls are billed per call).
#[derive(Deserialize)]
struct ResponseUsage {
    #[serde(default)]
    usage: Option<OpenAiUsage>,
    #[serde(default)]
    output: OutputItems,
}

/// A string field read leniently: its text when it is a string, nothing when it is anything
/// else (skipped without building a value).
#[derive(Default)]
struct Loose<'a>(Option<Cow<'a, str>>);

impl Loose<'_> {
    fn text(&self) -> Option<&str> {
        self.0.as_deref()
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Loose<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Loose<'a>, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = Loose<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("any value")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Loose<'de>, E> {
                Ok(Loose(Some(Cow::Borrowed(v))))
            }
            fn visit_str<E>(self, v: &str) -> Result<Loose<'de>, E> {
                Ok(Loose(Some(Cow::Owned(v.to_owned()))))
            }
            fn visit_string<E>(self, v: String) -> Result<Loose<'de>, E> {
                Ok(Loose(Some(Cow::Owned(v))))
            }
            fn visit_bool<E>(self, _: bool) -> Result<Loose<'de>, E> {
                Ok(Loose(None))
            }
            fn visit_i64<E>(self, _: i64) -> Result<Loose<'de>, E> {
                Ok(Loose(None))
            }
            fn visit_u64<E>(self, _: u64) -> Result<Loose<'de>, E> {
                Ok(Loose(None))
            }
            fn visit_f64<E>(self, _: f64) -> Result<Loose<'de>, E> {
                Ok(Loose(None))
            }
            fn visit_unit<E>(self) -> Result<Loose<'de>, E> {
                Ok(Loose(None))
            }
            fn visit_none<E>(self) -> Result<Loose<'de>, E> {
                Ok(Loose(None))
            }
            fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<Loose<'de>, D::Error> {
                d.deserialize_any(self)
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Loose<'de>, A::Error> {
                while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
                Ok(Loose(None))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Loose<'de>, A::Error> {
                while map
                    .next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?
                    .is_some()
                {}
                Ok(Loose(None))
            }
        }
        d.deserialize_any(Visit)
    }
}

/// Responses API events whose `delta` is output text (answer, refusal, reasoning, tool call
/// arguments) — not audio or other binary deltas.
fn counts_delta(kind: &str) -> bool {
    kind.starts_with("response.")
        && [
            "output_text.delta",
            "refusal.delta",
            "reasoning_text.delta",
            "reasoning_summary_text.delta",
            "arguments.delta",
            "input.delta",
        ]
        .iter()
        .any(|suffix| kind.ends_with(suffix))
}

/// What becomes of one upstream event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Verdict {
    /// Forwarded as the upstream sent it.
    Keep,
    /// Held back (the usage-only chunk the client did not ask for).
    Drop,
    /// The format's end marker (`[DONE]`, `response.completed`, ...): forwarded, and the
    /// answer is over.
    Done,
    /// An in-band error: forwarded, with any part of the channel's key masked.
    Error,
}

/// Reads usage and output from one event's data into the meter, its ending signals into
/// `rule`, and decides its fate.
pub(super) fn observe(
    meter: &mut Meter,
    rule: &mut EndRule,
    client_wants_usage: bool,
    data: &str,
) -> Verdict {
    if data.trim() == "[DONE]" {
        rule.marker();
        return Verdict::Done;
    }
    let Ok(chunk) = serde_json::from_str::<Chunk<'_>>(data) else {
        return Verdict::Keep;
    };
    meter.mark_answered();
    if chunk.error.is_some() {
        return Verdict::Error;
    }
    for choice in chunk.choices.iter() {
        if choice.finish_reason.text().is_some() {
            rule.finish();
        }
        if let Some(text) = choice.text.text() {
            meter.output(text);
        }
        let Some(delta) = &choice.delta else { continue };
        for part in [&delta.reasoning_content, &delta.reasoning, &delta.content] {
            if let Some(text) = part.text() {
                meter.output(text);
            }
        }
        for call in delta.tool_calls.iter().filter_map(|c| c.function.as_ref()) {
            for part in [&call.name, &call.arguments] {
                if let Some(text) = part.text() {
                    meter.output(text);
                }
            }
        }
    }
    if let Some(kind) = chunk.kind.text() {
        if counts_delta(kind)
            && let Some(text) = chunk.delta.text()
        {
            meter.output(text);
        }
        if let Some((usage, output)) = chunk
            .response
            .as_ref()
            .and_then(|r| Some((r.usage.as_ref()?, &r.output)))
        {
            let mut usage = Usage::from(usage);
            output.count_into(&mut usage);
            meter.reported(usage);
            rule.usage();
        }
        if matches!(
            kind,
            "response.completed" | "response.incomplete" | "response.failed"
        ) {
            rule.marker();
            return Verdict::Done;
        }
        return Verdict::Keep;
    }
    match &chunk.usage {
        Some(usage) => {
            meter.reported(Usage::from(&**usage));
            rule.usage();
            if client_wants_usage || !chunk.choices.is_empty() {
                Verdict::Keep
            } else {
                Verdict::Drop
            }
        }
        None => Verdict::Keep,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn contents(data: &str) -> Option<Vec<String>> {
        let chunk = serde_json::from_str::<Chunk<'_>>(data).ok()?;
        Some(
            chunk
                .choices
                .iter()
                .filter_map(|c| c.delta.as_ref()?.content.text().map(str::to_owned))
                .collect(),
        )
    }

    #[test]
    fn choices_read_as_a_list_whatever_their_number() {
        let one =
            r#"{"id":"x","choices":[{"index":0,"delta":{"content":"a"},"finish_reason":null}]}"#;
        assert_eq!(contents(one), Some(vec!["a".to_owned()]));
        let three = r#"{"choices":[{"delta":{"content":"a"}},{"delta":{"content":"b\n"}},{"delta":{"content":"c"}}]}"#;
        assert_eq!(
            contents(three),
            Some(vec!["a".to_owned(), "b\n".to_owned(), "c".to_owned()])
        );
        assert_eq!(contents(r#"{"choices":[]}"#), Some(vec![]));
        assert_eq!(contents(r#"{"usage":{"prompt_tokens":1}}"#), Some(vec![]));
        // As a Vec read them: a choices field that is not a list fails the chunk.
        assert_eq!(contents(r#"{"choices":null}"#), None);
        assert_eq!(contents(r#"{"choices":{"delta":{}}}"#), None);
        let usage = serde_json::from_str::<Chunk<'_>>(
            r#"{"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":20}}"#,
        )
        .expect("a usage chunk");
        assert!(usage.choices.is_empty());
        assert_eq!(usage.usage.map(|u| u.completion_tokens), Some(20));
    }
}
