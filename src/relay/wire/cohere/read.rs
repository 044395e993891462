//! Lenient read views for the Cohere conversions (every field as [`crate::relay::wire::typed`]
//! reads it: a field of another JSON type reads as absent): a whole Cohere answer, a stream
//! event and `usage` (the hub request is read as [`crate::relay::wire::hub::Request`]). Ids and
//! names the converters copy are [`Verbatim`]s, so a value that is not a string is copied as it
//! was.

use serde::Deserialize;

use crate::relay::measure::price::Usage;
use crate::relay::wire::typed::{List, Obj, Shape, Str, Verbatim};

/// A tool call of a Cohere answer.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Call<'a> {
    /// The call's id, verbatim.
    #[serde(borrow)]
    pub id: Option<Verbatim<'a>>,
    /// The function called.
    #[serde(borrow)]
    pub function: Obj<Function<'a>>,
}

/// The function of a tool call.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Function<'a> {
    /// Its name, verbatim.
    #[serde(borrow)]
    pub name: Option<Verbatim<'a>>,
    /// Its arguments, verbatim (JSON text when a string).
    #[serde(borrow)]
    pub arguments: Option<Verbatim<'a>>,
}

/// A whole Cohere answer.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Answer<'a> {
    /// The answer's id.
    #[serde(borrow)]
    pub id: Str<'a>,
    /// The assistant's message.
    #[serde(borrow)]
    pub message: Obj<AnswerMessage<'a>>,
    /// Why it stopped.
    #[serde(borrow)]
    pub finish_reason: Str<'a>,
    /// Usage (read when an object).
    #[serde(borrow)]
    pub usage: Shape<'a, UsageIn<'a>>,
}

/// The message of a Cohere answer.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct AnswerMessage<'a> {
    /// A string or content blocks.
    #[serde(borrow)]
    pub content: Shape<'a, Block<'a>>,
    /// The model's plan before its tool calls.
    #[serde(borrow)]
    pub tool_plan: Str<'a>,
    /// Tool calls.
    #[serde(borrow)]
    pub tool_calls: List<Call<'a>>,
}

/// A content block of a Cohere answer.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Block<'a> {
    /// `text` or `thinking`.
    #[serde(borrow, rename = "type")]
    pub kind: Str<'a>,
    /// A text block's text.
    #[serde(borrow)]
    pub text: Str<'a>,
    /// A thinking block's thinking.
    #[serde(borrow)]
    pub thinking: Str<'a>,
}

/// One stream event (every type's fields: `type` says which apply).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Event<'a> {
    /// The event type.
    #[serde(borrow, rename = "type")]
    pub kind: Str<'a>,
    /// `message-start`'s id.
    #[serde(borrow)]
    pub id: Str<'a>,
    /// The tool call's index (a number, read as `as_u64` reads one).
    #[serde(borrow)]
    pub index: Option<Verbatim<'a>>,
    /// The delta.
    #[serde(borrow)]
    pub delta: Obj<Delta<'a>>,
}

impl Event<'_> {
    /// The tool call index, 0 when absent or not an unsigned integer.
    pub fn index(&self) -> u64 {
        match &self.index {
            Some(Verbatim::Num(n)) => n.as_u64().unwrap_or(0),
            _ => 0,
        }
    }
}

/// A stream event's delta.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Delta<'a> {
    /// The message delta.
    #[serde(borrow)]
    pub message: Obj<DeltaMessage<'a>>,
    /// `message-end`'s error.
    #[serde(borrow)]
    pub error: Str<'a>,
    /// `message-end`'s usage (read when an object).
    #[serde(borrow)]
    pub usage: Shape<'a, UsageIn<'a>>,
    /// `message-end`'s reason.
    #[serde(borrow)]
    pub finish_reason: Str<'a>,
}

/// A delta's message.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct DeltaMessage<'a> {
    /// Content: text or thinking.
    #[serde(borrow)]
    pub content: Obj<DeltaContent<'a>>,
    /// More of the tool plan.
    #[serde(borrow)]
    pub tool_plan: Str<'a>,
    /// The tool call started or continued.
    #[serde(borrow)]
    pub tool_calls: Obj<DeltaCall<'a>>,
}

/// A delta's content.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct DeltaContent<'a> {
    /// Thinking text.
    #[serde(borrow)]
    pub thinking: Str<'a>,
    /// Answer text.
    #[serde(borrow)]
    pub text: Str<'a>,
}

/// A delta's tool call.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct DeltaCall<'a> {
    /// Its id.
    #[serde(borrow)]
    pub id: Str<'a>,
    /// Its function.
    #[serde(borrow)]
    pub function: Obj<DeltaFunction<'a>>,
}

/// A delta tool call's function.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct DeltaFunction<'a> {
    /// Its name.
    #[serde(borrow)]
    pub name: Str<'a>,
    /// More of its arguments (JSON text).
    #[serde(borrow)]
    pub arguments: Str<'a>,
}

/// A Cohere `usage`: billed units and the model's token counts.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct UsageIn<'a> {
    /// What Cohere charges.
    #[serde(borrow)]
    pub billed_units: Obj<Counts<'a>>,
    /// What the model saw.
    #[serde(borrow)]
    pub tokens: Obj<Counts<'a>>,
}

/// Input and output token counts (JSON numbers, integers or not).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Counts<'a> {
    /// Input tokens.
    #[serde(borrow)]
    pub input_tokens: Option<Verbatim<'a>>,
    /// Output tokens.
    #[serde(borrow)]
    pub output_tokens: Option<Verbatim<'a>>,
}

impl UsageIn<'_> {
    /// As [`Usage`]: billed units, else the model's token counts.
    pub fn usage(&self) -> Usage {
        let number = |v: &Option<Verbatim>| match v {
            Some(Verbatim::Num(n)) => n.as_f64(),
            _ => None,
        };
        let count = |billed: &Option<Verbatim>, tokens: &Option<Verbatim>| {
            number(billed).or_else(|| number(tokens)).map_or(0, whole)
        };
        Usage {
            prompt_tokens: count(&self.billed_units.input_tokens, &self.tokens.input_tokens),
            completion_tokens: count(&self.billed_units.output_tokens, &self.tokens.output_tokens),
            cache_in_prompt: true,
            ..Usage::default()
        }
    }
}

/// A token count Cohere writes as a JSON number (its schema says `number`) as an i64.
fn whole(n: f64) -> i64 {
    if (0.0..9.0e18).contains(&n) {
        #[expect(clippy::cast_possible_truncation, reason = "range checked just above")]
        let n = n.round() as i64;
        n
    } else {
        0
    }
}
