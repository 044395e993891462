//! Whole answers: a Responses `response` object as a hub `chat.completion`, and back.

use std::borrow::Cow;

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::Value;
use serde_json::value::RawValue;

use super::read::Response;
use super::write::{IncompleteOut, ItemOut, PartOut, ResponseOut, UsageOut};
use crate::relay::measure::components::web_searches_into;
use crate::relay::measure::price::Usage;
use crate::relay::measure::usage::OpenAiUsage;
use crate::relay::wire::hub::{
    self, AnswerOut, ChoiceOut, ContentOut, MessageOut, ToolCallOut, content_text,
};
use crate::relay::wire::typed::{List, Str, Verbatim, parse, view};
use crate::relay::wire::{now, openai};

/// The hub finish reason of a Responses object (its status, why it is incomplete, its calls).
pub(super) fn finish_of<U>(response: &Response<'_, U>, called: bool) -> &'static str {
    match response.incomplete_details.reason.get() {
        Some("max_output_tokens") => "length",
        Some("content_filter") => "content_filter",
        _ if called => "tool_calls",
        _ => "stop",
    }
}

/// A response object's usage (`usage`: its `usage` field, read by the one OpenAI usage reader)
/// with its web search calls (OpenAI bills each `web_search_call` output item); `None` when it
/// reports none. The one reading of a Responses usage: whole answers ([`answer_usage`]) and the
/// stream's final events alike.
pub(super) fn usage_of<U>(response: &Response<'_, U>, usage: Option<&Value>) -> Option<Usage> {
    usage_with_searches(response.output.iter().map(|i| i.kind.get()), usage)
}

/// `usage` (when it is an object) with the web search calls among the output items of types
/// `kinds`.
fn usage_with_searches<'k>(
    kinds: impl Iterator<Item = Option<&'k str>>,
    usage: Option<&Value>,
) -> Option<Usage> {
    let mut usage = openai::usage_of(usage.filter(|u| u.is_object())?);
    web_searches_into(kinds, &mut usage);
    Some(usage)
}

/// The output items of a response as its usage reads them: their types only.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Kinds<'a> {
    #[serde(borrow)]
    output: List<Kind<'a>>,
}

/// An output item's type.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Kind<'a> {
    #[serde(borrow, rename = "type")]
    kind: Str<'a>,
}

/// The usage a whole Responses answer reports, with its web search calls (see [`usage_of`]),
/// reading only the output items' types.
pub fn answer_usage(answer: &Value) -> Option<Usage> {
    let kinds: Kinds = view(answer);
    usage_with_searches(
        kinds.output.iter().map(|i| i.kind.get()),
        answer.get("usage"),
    )
}

/// A whole Responses answer as a hub `chat.completion`.
pub fn answer_to_hub(answer: &Value) -> Value {
    // The usage is read in place (`openai::usage_of` reads a value), not copied out.
    let response: Response<'_, IgnoredAny> = view(answer);
    let usage = answer.get("usage").filter(|u| u.is_object());
    hub_answer(&response, usage.map(openai::usage_of)).0
}

/// A whole Responses answer read straight from its bytes: the hub `chat.completion` and the
/// usage it reports, as [`answer_to_hub`] and [`answer_usage`] give them from the body
/// parsed. `None` when the bytes are not JSON or repeat a field read (the caller then parses
/// them as a value).
pub fn answer_from_bytes(bytes: &[u8]) -> Option<(Value, Option<Usage>)> {
    let response: Response<'_, Option<&RawValue>> = parse(bytes)?;
    let usage = (response.usage)
        .filter(|raw| raw.get().starts_with('{'))
        .map(|raw| usage_from_text(raw.get()));
    Some(hub_answer(&response, usage))
}

/// An OpenAI `usage` object's text as [`openai::usage_of`] reads it parsed (a repeated key,
/// which the typed reader refuses and a value keeps the last of, through a value).
fn usage_from_text(text: &str) -> Usage {
    match serde_json::from_str::<OpenAiUsage>(text) {
        Ok(usage) => Usage::from(&usage),
        Err(_) => serde_json::from_str::<Value>(text)
            .map(|value| openai::usage_of(&value))
            .unwrap_or_default(),
    }
}

/// The hub `chat.completion` of a response read whose usage (without its web search calls,
/// which a hub answer does not carry) is `usage`, and the usage with them.
fn hub_answer<U>(response: &Response<'_, U>, usage: Option<Usage>) -> (Value, Option<Usage>) {
    let mut text = String::new();
    let mut reasoning = String::new();
    let mut refusal = String::new();
    let mut tool_calls = Vec::new();
    for item in response.output.iter() {
        match item.kind.or_empty() {
            "message" => {
                for part in item.content.iter() {
                    match part.kind.or_empty() {
                        "refusal" => refusal.push_str(part.refusal.or_empty()),
                        _ => text.push_str(part.text.or_empty()),
                    }
                }
            }
            "reasoning" => {
                for part in item.summary.iter().chain(item.content.iter()) {
                    reasoning.push_str(part.text.or_empty());
                }
            }
            "function_call" => tool_calls.push(ToolCallOut::function(
                Str(item.call_id.get().map(Cow::Borrowed)),
                Str(item.name.get().map(Cow::Borrowed)),
                Cow::Borrowed(item.arguments.get().unwrap_or("{}")),
            )),
            _ => {}
        }
    }
    let finish = finish_of(response, !tool_calls.is_empty());
    let content = if text.is_empty() && !tool_calls.is_empty() {
        None
    } else {
        Some(ContentOut::Text(Cow::Owned(text)))
    };
    let mut message = MessageOut::new("assistant", content);
    if !tool_calls.is_empty() {
        message.tool_calls = Some(tool_calls);
    }
    if !reasoning.is_empty() {
        message.reasoning_content = Some(reasoning);
    }
    if !refusal.is_empty() {
        message.refusal = Some(refusal);
    }
    let hub = hub::to_value(&AnswerOut {
        id: format!("chatcmpl-{}", response.id.get().unwrap_or("tollgate")),
        object: "chat.completion",
        created: now(),
        model: Str(response.model.get().map(Cow::Borrowed)),
        choices: [ChoiceOut {
            index: 0,
            message,
            finish_reason: finish,
        }],
        usage: usage.as_ref().map(openai::usage_json),
    });
    let usage = usage.map(|mut usage| {
        web_searches_into(response.output.iter().map(|i| i.kind.get()), &mut usage);
        usage
    });
    (hub, usage)
}

/// An id for a Responses object or item: `prefix` and the upstream's id without its own prefix.
pub(super) fn item_id(prefix: &str, upstream: &str) -> String {
    let bare = upstream
        .trim_start_matches("chatcmpl-")
        .trim_start_matches("resp_")
        .trim_start_matches("msg_");
    if bare.is_empty() {
        format!("{prefix}_tollgate")
    } else {
        format!("{prefix}_{bare}")
    }
}

/// The status and incomplete details of a response that stopped for `finish`.
pub(super) fn status_of(finish: &str) -> (&'static str, Option<IncompleteOut>) {
    match finish {
        "length" => (
            "incomplete",
            Some(IncompleteOut {
                reason: "max_output_tokens",
            }),
        ),
        "content_filter" => (
            "incomplete",
            Some(IncompleteOut {
                reason: "content_filter",
            }),
        ),
        _ => ("completed", None),
    }
}

/// A hub `chat.completion` as a whole Responses answer naming `model`.
pub fn answer_from_hub(hub: &Value, model: &str) -> Value {
    let answer: hub::Answer = view(hub);
    let default = hub::Choice::default();
    let choice = answer.choices.iter().next().unwrap_or(&default);
    let message = &choice.message;
    let id = answer.id.or_empty();
    let (reasoning_id, message_id, response_id) =
        (item_id("rs", id), item_id("msg", id), item_id("resp", id));
    let mut output = Vec::new();
    if let Some(r) = message.reasoning_content.non_empty() {
        output.push(ItemOut::reasoning(
            &reasoning_id,
            vec![PartOut::summary_text(r)],
        ));
    }
    let text = content_text(&message.content);
    let calls = message.tool_calls.present();
    let mut content = Vec::new();
    if !text.is_empty() || calls.is_none_or(<[_]>::is_empty) {
        content.push(PartOut::output_text(&text));
    }
    if let Some(refusal) = message.refusal.non_empty() {
        content.push(PartOut::refusal(refusal));
    }
    if !content.is_empty() {
        output.push(ItemOut::message(&message_id, "completed", content));
    }
    let call_ids: Vec<String> = message
        .tool_calls
        .iter()
        .map(|call| item_id("fc", call.id.or_empty()))
        .collect();
    for (call, fc) in message.tool_calls.iter().zip(&call_ids) {
        output.push(ItemOut::call(
            fc,
            "completed",
            call.id.or_empty(),
            call.function.name.get(),
            call.function
                .arguments
                .as_ref()
                .and_then(Verbatim::as_str)
                .unwrap_or("{}"),
        ));
    }
    let usage = hub.get("usage").map(openai::usage_of).unwrap_or_default();
    hub::to_value(&ResponseOut::new(
        &response_id,
        now(),
        model,
        status_of(choice.finish_reason.get().unwrap_or("stop")),
        output,
        Some(UsageOut::from(&usage)),
    ))
}
