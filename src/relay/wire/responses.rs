//! OpenAI Responses API (`POST /v1/responses`) ⇄ the hub (OpenAI chat completions), both ways:
//! Responses clients of channels that only chat (OpenAI-compatible types, Claude, Gemini,
//! Cohere), and chat clients of channels set to answer through the Responses API
//! (`setting.upstream_api: "responses"`). Requests (here), whole answers ([`answer`]), and the
//! typed stream events ([`stream`]: `response.created`, `response.output_item.added` /
//! `.done`, `response.output_text.delta`, `response.function_call_arguments.delta`,
//! `response.reasoning_summary_text.delta`, `response.completed` with the usage, …); the
//! shapes are typed in [`read`] and [`write`] and the hub's in [`super::hub`].
//!
//! Fields and events follow OpenAI's API reference
//! (<https://platform.openai.com/docs/api-reference/responses>, the `openai-openapi` document
//! behind it). What a chat upstream cannot honour is refused with a 400 naming the field:
//! `previous_response_id` and `conversation` (state kept by OpenAI), stored `prompt`s, built-in
//! tools (web search, file search, computer use, …) and their call items, item references and
//! encrypted reasoning items. A reasoning item without encrypted content is only a summary for
//! display and is left out (chat upstreams never see earlier reasoning). The other way, a chat
//! request asking for `n` > 1 answers or `stop` sequences is refused for a Responses upstream,
//! which has neither. Fields neither side has a place for are not carried across.

pub mod answer;
pub mod read;
pub mod stream;
pub mod write;

use std::borrow::Cow;

use serde::Serialize;
use serde_json::Value;

use self::read::{InputPart, Item, Request};
use self::write::{
    FormatOut, InputContent, InputOut, InputPartOut, ReasoningOut, RequestOut, TextOut,
    ToolChoiceOut, ToolOut, TypedItemOut, UsageOut,
};
use super::ConvertError;
use super::hub::{
    self, ContentOut, FileOut, ImageUrlOut, MessageOut, PartOut, ToolCallOut, content_text,
};
use super::typed::{Shape, Str, Verbatim, view};
use crate::relay::measure::price::Usage;

pub use answer::{answer_from_bytes, answer_from_hub, answer_to_hub, answer_usage};
pub use stream::{Decoder, Encoder};

fn refuse<T>(field: &str, why: &str) -> Result<T, ConvertError> {
    Err(ConvertError(format!("{field}: {why}")))
}

/// A Responses `usage` object for [`Usage`].
pub fn usage_json_of(usage: &Usage) -> Value {
    hub::to_value(&UsageOut::from(usage))
}

/// One content part of a user (or system) input message as a hub part.
fn input_part<'a>(field: &str, part: &'a InputPart<'a>) -> Result<PartOut<'a>, ConvertError> {
    let borrowed = |s: &'a Str<'a>| s.get().map(Cow::Borrowed);
    match part.kind.or_empty() {
        "input_text" | "output_text" | "text" => Ok(PartOut::Text {
            text: Str(borrowed(&part.text)),
        }),
        "input_image" => {
            let Some(url) = part.image_url.get() else {
                return refuse(
                    field,
                    "images by file_id are stored by OpenAI; send the image_url",
                );
            };
            Ok(PartOut::ImageUrl {
                image_url: ImageUrlOut {
                    url: Cow::Borrowed(url),
                    detail: borrowed(&part.detail),
                },
            })
        }
        "input_file" if part.file_data.get().is_some() => Ok(PartOut::File {
            file: FileOut {
                file_data: borrowed(&part.file_data),
                file_url: None,
                filename: borrowed(&part.filename),
            },
        }),
        // A file by URL: the relay reads it (guarded) before converting, see relay::media.
        "input_file" if part.file_url.get().is_some() => Ok(PartOut::File {
            file: FileOut {
                file_data: None,
                file_url: borrowed(&part.file_url),
                filename: borrowed(&part.filename),
            },
        }),
        "input_file" => refuse(
            field,
            "files by file_id need a channel with the Responses API; send file_data or file_url",
        ),
        other => refuse(
            field,
            &format!("{other} content cannot be converted for this model's channel"),
        ),
    }
}

/// Appends a tool call to the assistant message the conversation ends with (or a new one).
fn push_call<'a>(messages: &mut Vec<MessageOut<'a>>, call: ToolCallOut<'a>) {
    if let Some(last) = messages.last_mut()
        && last.role == "assistant"
    {
        last.tool_calls.get_or_insert_with(Vec::new).push(call);
        return;
    }
    let mut message = MessageOut::new("assistant", None);
    message.tool_calls = Some(vec![call]);
    messages.push(message);
}

/// A string borrowed from a lenient field (`Cow` of the field's own `Cow`).
fn cow<'a>(s: &'a Str<'a>) -> Str<'a> {
    Str(s.get().map(Cow::Borrowed))
}

/// One input item as hub messages.
fn input_item<'a>(
    i: usize,
    item: &'a Item<'a>,
    messages: &mut Vec<MessageOut<'a>>,
) -> Result<(), ConvertError> {
    let field = format!("input[{i}]");
    let kind = item.kind.get().unwrap_or(if item.role == Shape::Absent {
        ""
    } else {
        "message"
    });
    match kind {
        "message" => {
            let role = match item.role.str().unwrap_or("user") {
                "system" | "developer" => "system",
                "assistant" => "assistant",
                _ => "user",
            };
            let content = match &item.content {
                Shape::Str(s) => ContentOut::Text(Cow::Borrowed(s)),
                Shape::List(parts) if role == "user" => {
                    let parts = parts
                        .iter()
                        .enumerate()
                        .map(|(j, p)| input_part(&format!("{field}.content[{j}]"), p))
                        .collect::<Result<Vec<_>, _>>()?;
                    if parts.iter().all(|p| matches!(p, PartOut::Text { .. })) {
                        ContentOut::Text(Cow::Owned(content_text(&Shape::List(parts)).into_owned()))
                    } else {
                        ContentOut::Parts(parts)
                    }
                }
                other => ContentOut::Text(content_text(other)),
            };
            messages.push(MessageOut::new(role, Some(content)));
        }
        "function_call" => push_call(
            messages,
            ToolCallOut::function(
                cow(&item.call_id),
                cow(&item.name),
                Cow::Borrowed(item.arguments.get().unwrap_or("{}")),
            ),
        ),
        "function_call_output" => {
            let mut message =
                MessageOut::new("tool", Some(ContentOut::Text(content_text(&item.output))));
            message.tool_call_id = Some(cow(&item.call_id));
            messages.push(message);
        }
        "reasoning" if item.encrypted_content.get().is_some() => {
            return refuse(
                &field,
                "encrypted reasoning can only go back to OpenAI's Responses API; leave it out for this model",
            );
        }
        // A summary shown to the user; chat upstreams never take earlier reasoning back.
        "reasoning" => {}
        "item_reference" => {
            return refuse(
                &field,
                "item references point at items OpenAI stored; send the items themselves",
            );
        }
        other => {
            return refuse(
                &format!("{field}.type"),
                &format!(
                    "{other:?} items cannot be converted for this model's channel (built-in tools run only on OpenAI's Responses API)"
                ),
            );
        }
    }
    Ok(())
}

/// The hub request a Responses request converts to.
#[derive(Serialize)]
struct HubRequestOut<'a> {
    model: Option<&'a Verbatim<'a>>,
    messages: Vec<MessageOut<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_tokens: Option<&'a Verbatim<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<&'a Verbatim<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    top_p: Option<&'a Verbatim<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    parallel_tool_calls: Option<&'a Verbatim<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    user: Option<&'a Verbatim<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    stream: Option<&'a Verbatim<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning_effort: Option<&'a str>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<HubToolOut<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<HubToolChoiceOut<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    response_format: Option<HubFormatOut<'a>>,
}

#[derive(Serialize)]
struct HubToolOut<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    function: HubFunctionDefOut<'a>,
}

#[derive(Serialize)]
struct HubFunctionDefOut<'a> {
    name: Str<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<&'a Verbatim<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    parameters: Option<&'a Verbatim<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    strict: Option<&'a Verbatim<'a>>,
}

#[derive(Serialize)]
#[serde(untagged)]
enum HubToolChoiceOut<'a> {
    Mode(&'a str),
    Function {
        #[serde(rename = "type")]
        kind: &'static str,
        function: HubChoiceName<'a>,
    },
}

#[derive(Serialize)]
struct HubChoiceName<'a> {
    name: Option<&'a Verbatim<'a>>,
}

#[derive(Serialize)]
struct HubFormatOut<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    /// The schema's fields, by reference.
    #[serde(skip_serializing_if = "Option::is_none")]
    json_schema: Option<&'a hub::JsonSchema<'a>>,
}

/// A Responses request as a hub request; `Err` names the field a chat upstream cannot honour.
pub fn request_to_hub(body: &Value) -> Result<Value, ConvertError> {
    let request: Request = view(body);
    for (field, value) in [
        ("previous_response_id", &request.previous_response_id),
        ("conversation", &request.conversation),
    ] {
        if value.given() {
            return refuse(
                field,
                "this model's channel keeps no Responses state; send the whole conversation in input",
            );
        }
    }
    if request.prompt.given() {
        return refuse(
            "prompt",
            "stored prompts live at OpenAI; send instructions and input instead",
        );
    }
    if request.background == Shape::Bool(true) {
        return refuse(
            "background",
            "background responses need a channel with the Responses API",
        );
    }
    let mut messages = Vec::new();
    match &request.instructions {
        Shape::Str(s) if !s.is_empty() => {
            messages.push(MessageOut::new(
                "system",
                Some(ContentOut::Text(Cow::Borrowed(s))),
            ));
        }
        Shape::List(items) => {
            for (i, item) in items.iter().enumerate() {
                input_item(i, item, &mut messages)?;
            }
        }
        _ => {}
    }
    match &request.input {
        Shape::Str(s) => messages.push(MessageOut::new(
            "user",
            Some(ContentOut::Text(Cow::Borrowed(s))),
        )),
        Shape::List(items) => {
            for (i, item) in items.iter().enumerate() {
                input_item(i, item, &mut messages)?;
            }
        }
        Shape::Absent | Shape::Null => {}
        _ => return refuse("input", "must be a string or an array of items"),
    }
    let mut tools = Vec::new();
    for (i, tool) in request.tools.iter().enumerate() {
        match tool.kind.or_empty() {
            "function" => tools.push(HubToolOut {
                kind: "function",
                function: HubFunctionDefOut {
                    name: tool.name.str(),
                    description: tool.description.value(),
                    parameters: tool.parameters.value(),
                    strict: tool.strict.as_ref(),
                },
            }),
            other => {
                return refuse(
                    &format!("tools[{i}].type"),
                    &format!(
                        "{other:?} is a built-in tool only OpenAI's Responses API runs; this model's channel takes function tools"
                    ),
                );
            }
        }
    }
    let tool_choice = match &request.tool_choice {
        Shape::Absent | Shape::Null => None,
        Shape::Str(s) => Some(HubToolChoiceOut::Mode(s)),
        Shape::Obj(choice) if choice.kind.get() == Some("function") => {
            Some(HubToolChoiceOut::Function {
                kind: "function",
                function: HubChoiceName {
                    name: choice.name.as_ref(),
                },
            })
        }
        _ => {
            return refuse(
                "tool_choice",
                "only auto, none, required or one function can be converted for this model's channel",
            );
        }
    };
    let format = &request.text.format;
    let response_format = match format.kind.get() {
        Some("json_schema") => Some(HubFormatOut {
            kind: "json_schema",
            json_schema: Some(&format.fields),
        }),
        Some("json_object") => Some(HubFormatOut {
            kind: "json_object",
            json_schema: None,
        }),
        _ => None,
    };
    Ok(hub::to_value(&HubRequestOut {
        model: request.model.as_ref(),
        messages,
        max_tokens: request.max_output_tokens.as_ref(),
        temperature: request.temperature.as_ref(),
        top_p: request.top_p.as_ref(),
        parallel_tool_calls: request.parallel_tool_calls.as_ref(),
        user: request.user.as_ref(),
        stream: request.stream.as_ref(),
        reasoning_effort: request.reasoning.effort.get(),
        tools,
        tool_choice,
        response_format,
    }))
}

/// What a chat request asks for that the Responses API has no field for (checked before it is
/// sent to a Responses upstream).
pub fn check_hub(hub: &Value) -> Result<(), ConvertError> {
    let request: hub::Request = view(hub);
    if hub::int(&request.n).is_some_and(|n| n > 1) {
        return refuse(
            "n",
            "this model's channel answers through the Responses API, which gives one answer per request",
        );
    }
    let stop = match &request.stop {
        Some(Verbatim::Str(s)) => !s.is_empty(),
        Some(Verbatim::List(list)) => !list.is_empty(),
        _ => false,
    };
    if stop {
        return refuse(
            "stop",
            "this model's channel answers through the Responses API, which has no stop sequences",
        );
    }
    Ok(())
}

/// A hub content part as a Responses input part (`None`: nothing the Responses API takes).
fn output_part<'a>(part: &'a hub::Part<'a>) -> Option<InputPartOut<'a>> {
    match part.kind.get()? {
        "text" => Some(InputPartOut::InputText {
            text: part.text.as_ref(),
        }),
        "image_url" => {
            let (url, detail) = match &part.image_url {
                Shape::Obj(image) => (image.url.get()?, image.detail.get()),
                Shape::Str(url) => (&**url, None),
                _ => return None,
            };
            Some(InputPartOut::InputImage {
                image_url: url,
                detail,
            })
        }
        "file" => {
            let field = |key: &str| {
                part.file
                    .as_ref()
                    .and_then(|f| f.get(key))
                    .filter(|v| !v.is_null())
            };
            Some(InputPartOut::InputFile {
                file_data: field("file_data"),
                file_id: field("file_id"),
                file_url: field("file_url"),
                filename: field("filename"),
            })
        }
        _ => None,
    }
}

/// A hub request as a Responses request for `model` (not stored at OpenAI: chat completions
/// are not either).
pub fn request_from_hub(hub: &Value, model: &str, stream: bool) -> Value {
    let request: hub::Request = view(hub);
    let mut input = Vec::new();
    for message in request.messages.iter() {
        let role = message.role.get().unwrap_or("user");
        match role {
            "tool" | "function" => {
                input.push(InputOut::Typed(TypedItemOut::FunctionCallOutput {
                    call_id: message.tool_call_id.str(),
                    output: content_text(&message.content),
                }));
            }
            "assistant" => {
                let text = content_text(&message.content);
                if !text.is_empty() {
                    input.push(InputOut::Message {
                        role: "assistant",
                        content: InputContent::Text(text),
                    });
                }
                for call in message.tool_calls.iter() {
                    input.push(InputOut::Typed(TypedItemOut::FunctionCall {
                        call_id: call.id.str(),
                        name: call.function.name.str(),
                        arguments: call.function.arguments_text(),
                    }));
                }
            }
            _ => {
                let role = if matches!(role, "system" | "developer") {
                    role
                } else {
                    "user"
                };
                let content = match &message.content {
                    Shape::List(parts) => {
                        InputContent::Parts(parts.iter().filter_map(output_part).collect())
                    }
                    other => InputContent::Text(content_text(other)),
                };
                input.push(InputOut::Message { role, content });
            }
        }
    }
    let tools: Vec<ToolOut> = request
        .tools
        .iter()
        .map(|t| ToolOut {
            kind: "function",
            name: t.function.name.str(),
            description: t.function.description.value(),
            parameters: t.function.parameters.value(),
            strict: t.function.strict.as_ref(),
        })
        .collect();
    let tool_choice = match &request.tool_choice {
        Shape::Str(s) => Some(ToolChoiceOut::Mode(s)),
        Shape::Obj(choice) => Some(ToolChoiceOut::Function {
            kind: "function",
            name: match &choice.function {
                Shape::Obj(f) => f.name.get(),
                _ => None,
            },
        }),
        _ => None,
    };
    let format = &request.response_format;
    let text = match format.kind.get() {
        Some("json_schema") => Some(TextOut {
            format: FormatOut {
                kind: "json_schema",
                schema: Some(&format.json_schema.0),
            },
        }),
        Some("json_object") => Some(TextOut {
            format: FormatOut {
                kind: "json_object",
                schema: None,
            },
        }),
        _ => None,
    };
    hub::to_value(&RequestOut {
        model,
        input,
        store: false,
        stream: stream.then_some(true),
        max_output_tokens: request.max_output(),
        temperature: request.temperature.as_ref(),
        top_p: request.top_p.as_ref(),
        parallel_tool_calls: request.parallel_tool_calls.as_ref(),
        user: request.user.as_ref(),
        reasoning: request
            .reasoning_effort
            .get()
            .map(|effort| ReasoningOut { effort }),
        tools: (!tools.is_empty()).then_some(tools),
        tool_choice,
        text,
    })
}

#[cfg(test)]
mod tests;
