//! Answers read whole: within the relay timeout, metered and settled before the client gets
//! them; a body that breaks off, comes too late or is not JSON is billed as partial (the upstream
//! accepted the request) and answered 502.

use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::Value;

use crate::error::RelayError;
use crate::relay::measure::components::OutputItems;
use crate::relay::measure::usage::{OpenAiUsage, PartialReason, Usage};
use crate::relay::pipeline::meter::{Ending, Meter};

/// The usage of a whole answer (the rest is skipped without building values).
#[derive(Deserialize)]
struct PlainUsage {
    #[serde(default)]
    usage: Option<OpenAiUsage>,
    /// The Responses API's output items (web search calls are billed per call).
    #[serde(default)]
    output: OutputItems,
}

/// Every piece of output of a whole OpenAI-style answer (for counting when it reports no
/// usage): chat messages' content, reasoning and tool calls, legacy completions' `text`, and
/// the Responses API's `output` items (message text and refusals, function calls, reasoning).
pub(in crate::relay) fn answer_output(answer: &Value, mut out: impl FnMut(&str)) {
    let mut text = |v: &Value| {
        if let Some(t) = v.as_str() {
            out(t);
        }
    };
    for choice in answer["choices"].as_array().into_iter().flatten() {
        text(&choice["text"]);
        let message = &choice["message"];
        for field in ["reasoning_content", "reasoning", "refusal"] {
            text(&message[field]);
        }
        match &message["content"] {
            Value::Array(parts) => parts.iter().for_each(|p| text(&p["text"])),
            content => text(content),
        }
        for call in message["tool_calls"].as_array().into_iter().flatten() {
            text(&call["function"]["name"]);
            text(&call["function"]["arguments"]);
        }
    }
    for item in answer["output"].as_array().into_iter().flatten() {
        text(&item["name"]);
        text(&item["arguments"]);
        text(&item["input"]);
        for list in ["content", "summary"] {
            for part in item[list].as_array().into_iter().flatten() {
                text(&part["text"]);
                text(&part["refusal"]);
            }
        }
    }
}

/// Reads a non-stream answer whole, settles, and passes it on unchanged. A body that breaks
/// off or does not come within the relay timeout, or is not JSON, is billed as partial (the
/// upstream accepted the request) and answered 502.
pub(in crate::relay) async fn finish_plain(
    resp: reqwest::Response,
    mut meter: Meter,
    timeout: Duration,
    presence: &crate::relay::pipeline::detach::Presence,
) -> Result<Response, RelayError> {
    let status = resp.status();
    let content_type = resp.headers().get(header::CONTENT_TYPE).cloned();
    let bytes = read_whole(resp, timeout, &mut meter).await?;
    let Ok(answer) = serde_json::from_slice::<PlainUsage>(&bytes) else {
        return Err(not_json(&mut meter).await);
    };
    match answer.usage {
        Some(u) => {
            let mut usage = Usage::from(&u);
            answer.output.count_into(&mut usage);
            meter.reported(usage);
        }
        None => {
            if let Ok(value) = serde_json::from_slice::<Value>(&bytes) {
                answer_output(&value, |t| meter.output(t));
            }
        }
    }
    meter.settle(presence.ending()).await;
    let mut response = (status, bytes).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        content_type.unwrap_or(HeaderValue::from_static("application/json")),
    );
    Ok(response)
}

/// The whole body of a 2xx answer, within `timeout`; a body that breaks off or comes too late
/// settles the meter as partial and is answered 502.
pub(in crate::relay) async fn read_whole(
    resp: reqwest::Response,
    timeout: Duration,
    meter: &mut Meter,
) -> Result<Bytes, RelayError> {
    let read = tokio::time::timeout(timeout, resp.bytes()).await;
    let ctx = meter.ctx_mut();
    ctx.first_byte = Some(Instant::now());
    let reason = match read {
        Ok(Ok(bytes)) => return Ok(bytes),
        Ok(Err(_)) => PartialReason::UpstreamCut,
        Err(_) => PartialReason::IdleTimeout,
    };
    meter.settle(Ending::Cut(reason)).await;
    Err(RelayError::Unreachable(
        "the upstream answer was cut off".into(),
    ))
}

/// A 2xx answer that is not JSON: billed as partial, answered 502.
pub(in crate::relay) async fn not_json(meter: &mut Meter) -> RelayError {
    meter.settle(Ending::Cut(PartialReason::NonJson)).await;
    RelayError::Upstream {
        status: 502,
        message: "the upstream answer is not valid JSON".into(),
    }
}
