//! `/v1/audio/*` (OpenAI-compatible channels only), through the shared attempt loop.
//!
//! - **speech** (JSON in, audio out): the audio is streamed back as it arrives. Billed like
//!   new-api: the prompt is the number of characters of `input`, there are no completion tokens,
//!   so a ratio-priced model costs `round(group × model ratio × characters)` (ModelPrice per call
//!   when set). Settled when the upstream accepts the request (the input is spent then).
//! - **transcriptions / translations** (multipart in, text out): the upload is streamed to the
//!   upstream, never held whole in memory. The form is read only up to its `model` field (the
//!   official SDKs send the fields before the file); those first bytes are kept and replayed,
//!   then the rest of the upload is piped through unchanged, so the upstream gets the client's
//!   bytes exactly (a mapped model name is replaced in place). Because the upload can be sent
//!   only once, a failed attempt is not retried on another channel. Billed from the answer:
//!   the upstream's token usage when it reports one (`usage.type = tokens`); else, like new-api,
//!   the audio duration (`usage.seconds` or verbose_json's `duration`) at 1,000 prompt tokens
//!   per minute (`ceil(seconds) / 60 × 1000`) plus the transcript's tokens by Tollgate's
//!   estimator as completion (usage source "estimated"); with neither, the transcript only.
//!   The answer is read by the whole-answer reader ([`crate::relay::pipeline::whole::read_whole`]) into the one
//!   meter: one cut off or later than the relay timeout is billed `partial` (the audio is not
//!   counted up front, so a ratio-priced model costs nothing then; a per-call price is charged)
//!   and answered 502.
//!
//! Both are forwarded in a task of their own ([`crate::relay::pipeline::detach`]): a client that leaves while
//! the upstream works does not cancel the call, and pays what the upstream spent (usage source
//! `partial`, reason `client_gone`).

use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Instant;

use axum::body::{Body, BodyDataStream, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, Uri, header};
use axum::response::{IntoResponse, Response};
use futures_util::{Stream, StreamExt};
use serde_json::Value;
use tollgate_actors::channel_pool::routing_table::RoutedChannel;

use crate::channel_types::serve::{Need, Serve};
use crate::error::RelayError;
use crate::relay::adaptor::{Credential, post};
use crate::relay::measure::components::Needs;
use crate::relay::measure::price::Usage;
use crate::relay::measure::prompt::Prompt;
use crate::relay::pipeline::admission::{self, Ask, Price};
use crate::relay::pipeline::attempt::Build;
use crate::relay::pipeline::auth::Caller;
use crate::relay::pipeline::detach::Presence;
use crate::relay::pipeline::spine::{Answer, Plan, run};
use crate::relay::pipeline::whole::read_whole;
use crate::relay::wire::Wire;
use crate::state::AppState;

/// Default models, as new-api.
const DEFAULT_SPEECH_MODEL: &str = "tts-1";
const DEFAULT_TRANSCRIPTION_MODEL: &str = "whisper-1";

/// The most of an upload read before its `model` field is found.
const MAX_FORM_PREFIX: usize = 32 * 1024 * 1024;

/// POST /v1/audio/speech.
pub async fn speech(
    State(state): State<AppState>,
    caller: Caller,
    body: Bytes,
) -> Result<Response, RelayError> {
    let started = Instant::now();
    let parsed: Value = serde_json::from_slice(&body)
        .map_err(|e| RelayError::BadRequest(format!("the request body is not valid JSON: {e}")))?;
    let model = parsed["model"]
        .as_str()
        .filter(|m| !m.is_empty())
        .unwrap_or(DEFAULT_SPEECH_MODEL)
        .to_owned();
    let input = parsed["input"]
        .as_str()
        .ok_or_else(|| RelayError::BadRequest("input is required".into()))?;
    let chars = i64::try_from(input.chars().count()).unwrap_or(i64::MAX);
    let speech = Speech {
        model,
        chars,
        body,
        parsed,
        started,
    };
    run(&state, caller, speech).await
}

/// A speech request (forwarded in a task of its own, see [`crate::relay::pipeline::detach`]: a client that
/// leaves while the upstream works is still charged the input the upstream spent).
struct Speech {
    model: String,
    chars: i64,
    body: Bytes,
    parsed: Value,
    started: Instant,
}

impl Plan for Speech {
    fn model(&self) -> &str {
        &self.model
    }

    fn ask(&self) -> Ask<'_> {
        // Speech is billed on its input characters: no output tokens.
        Ask::input_only(&self.model, self.chars)
    }

    fn texts(&self) -> Vec<&str> {
        self.parsed["input"].as_str().into_iter().collect()
    }

    fn need(&self) -> Need {
        Need::new(Serve::Audio, "/v1/audio/speech")
    }

    fn started(&self) -> Instant {
        self.started
    }

    fn build(
        &self,
        state: &AppState,
        _price: &Price,
        channel: &RoutedChannel,
        wire: Wire,
        upstream_model: &str,
        key: &Credential<'_>,
    ) -> Result<Build, RelayError> {
        if wire != Wire::OpenAi {
            return Ok(Build::Skip(unsupported(channel.channel.channel_type)));
        }
        let body = json_body(
            &self.body,
            &self.parsed,
            &self.model,
            upstream_model,
            channel.json.param_override(),
        )?;
        let Some(url) =
            crate::relay::adaptor::openai_url(channel, "/v1/audio/speech", upstream_model)
        else {
            return Ok(Build::Skip(unsupported(channel.channel.channel_type)));
        };
        Ok(Build::Send(Box::new(
            post(state, channel, wire, url, key)?
                .header(header::CONTENT_TYPE, "application/json")
                .body(body),
        )))
    }

    fn prompt(&mut self) -> Prompt {
        Prompt::known(self.chars)
    }

    /// Settled when the upstream accepts the request (the input is spent then); the audio is
    /// streamed back as it arrives.
    async fn answer(
        self,
        _state: &AppState,
        won: Answer,
        presence: &Presence,
    ) -> Result<Response, RelayError> {
        let Answer {
            resp, mut meter, ..
        } = won;
        meter.ctx_mut().first_byte = Some(Instant::now());
        meter.reported(Usage {
            prompt_tokens: self.chars,
            ..Usage::default()
        });
        meter.settle(presence.ending()).await;
        let status = resp.status();
        let content_type = resp
            .headers()
            .get(header::CONTENT_TYPE)
            .cloned()
            .unwrap_or(HeaderValue::from_static("audio/mpeg"));
        let mut response = Response::new(Body::from_stream(resp.bytes_stream()));
        *response.status_mut() = status;
        response
            .headers_mut()
            .insert(header::CONTENT_TYPE, content_type);
        Ok(response)
    }
}

fn unsupported(channel_type: i32) -> RelayError {
    RelayError::NotImplemented(format!("audio on channel type {channel_type}"))
}

/// A JSON body with the model mapped and the channel's param_override applied (the client's
/// bytes when neither changes anything).
fn json_body(
    body: &Bytes,
    parsed: &Value,
    model: &str,
    upstream_model: &str,
    overrides: &serde_json::Map<String, Value>,
) -> Result<Bytes, RelayError> {
    if upstream_model == model && overrides.is_empty() && parsed["model"] == model {
        return Ok(body.clone());
    }
    let mut value = parsed.clone();
    value["model"] = Value::String(upstream_model.to_owned());
    if let Value::Object(map) = &mut value {
        map.extend(overrides.iter().map(|(k, v)| (k.clone(), v.clone())));
    }
    serde_json::to_vec(&value)
        .map(Bytes::from)
        .map_err(|e| RelayError::Internal(e.to_string()))
}

/// The client's upload, recording what is read while the form's first fields are parsed.
struct Tee(Arc<Mutex<TeeState>>);

struct TeeState {
    rest: BodyDataStream,
    seen: Vec<Bytes>,
    seen_len: usize,
    recording: bool,
}

impl Stream for Tee {
    type Item = Result<Bytes, axum::Error>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let mut state = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let next = state.rest.poll_next_unpin(cx);
        if let Poll::Ready(Some(Ok(bytes))) = &next
            && state.recording
        {
            state.seen_len += bytes.len();
            state.seen.push(bytes.clone());
        }
        next
    }
}

/// POST /v1/audio/transcriptions and /v1/audio/translations.
pub async fn upload(
    State(state): State<AppState>,
    uri: Uri,
    caller: Caller,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, RelayError> {
    let started = Instant::now();
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .cloned()
        .ok_or_else(|| RelayError::BadRequest("a multipart/form-data body is required".into()))?;
    let boundary = content_type
        .to_str()
        .ok()
        .and_then(|ct| multer::parse_boundary(ct).ok())
        .ok_or_else(|| RelayError::BadRequest("a multipart/form-data body is required".into()))?;
    let tee = Arc::new(Mutex::new(TeeState {
        rest: body.into_data_stream(),
        seen: Vec::new(),
        seen_len: 0,
        recording: true,
    }));
    let model = form_model(Tee(Arc::clone(&tee)), &boundary, &tee).await?;
    let model = model.unwrap_or_else(|| DEFAULT_TRANSCRIPTION_MODEL.to_owned());
    // Nothing reads the upload between here and the first attempt: what was read so far is
    // the form's head the upstream gets first.
    let prefix: Vec<Bytes> = {
        let mut t = tee.lock().unwrap_or_else(PoisonError::into_inner);
        t.recording = false;
        std::mem::take(&mut t.seen)
    };
    let upload = Upload {
        model,
        upload: Mutex::new(Some((prefix, Tee(tee)))),
        path: uri.path().to_owned(),
        content_type,
        started,
    };
    run(&state, caller, upload).await
}

/// A transcription or translation (forwarded in a task of its own, see [`crate::relay::pipeline::detach`]).
struct Upload {
    model: String,
    /// The form's first bytes (read to find the model) and the rest of the client's upload,
    /// taken by the first attempt (an upload is sent once).
    upload: Mutex<Option<(Vec<Bytes>, Tee)>>,
    path: String,
    content_type: HeaderValue,
    started: Instant,
}

impl Plan for Upload {
    fn model(&self) -> &str {
        &self.model
    }

    fn ask(&self) -> Ask<'_> {
        Ask {
            model: &self.model,
            prompt_estimate: 0,
            max_tokens: None,
            answers: 1,
            calls: 1.0,
            needs: Needs::default(),
            body: admission::Body::Plain,
            per_call: false,
        }
    }

    fn texts(&self) -> Vec<&str> {
        Vec::new()
    }

    fn need(&self) -> Need {
        Need::new(
            Serve::Audio,
            if self.path == "/v1/audio/translations" {
                "/v1/audio/translations"
            } else {
                "/v1/audio/transcriptions"
            },
        )
    }

    fn started(&self) -> Instant {
        self.started
    }

    fn build(
        &self,
        state: &AppState,
        _price: &Price,
        channel: &RoutedChannel,
        wire: Wire,
        upstream_model: &str,
        key: &Credential<'_>,
    ) -> Result<Build, RelayError> {
        if wire != Wire::OpenAi {
            return Ok(Build::Skip(unsupported(channel.channel.channel_type)));
        }
        let taken = self
            .upload
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        let Some((prefix, rest)) = taken else {
            return Ok(Build::Stop);
        };
        let prefix = if upstream_model == self.model {
            prefix
        } else {
            vec![Bytes::from(replace_model(&prefix.concat(), upstream_model))]
        };
        let stream = futures_util::stream::iter(prefix.into_iter().map(Ok)).chain(rest);
        let Some(url) = crate::relay::adaptor::openai_url(channel, &self.path, upstream_model)
        else {
            return Ok(Build::Skip(unsupported(channel.channel.channel_type)));
        };
        Ok(Build::Send(Box::new(
            post(state, channel, wire, url, key)?
                .header(header::CONTENT_TYPE, self.content_type.clone())
                .body(reqwest::Body::wrap_stream(stream)),
        )))
    }

    /// The audio's worth in tokens is its duration, which only the answer tells: the prompt
    /// starts at 0 and is learned from the transcription.
    fn prompt(&mut self) -> Prompt {
        Prompt::known(0)
    }

    async fn answer(
        self,
        state: &AppState,
        won: Answer,
        presence: &Presence,
    ) -> Result<Response, RelayError> {
        let Answer {
            resp, mut meter, ..
        } = won;
        let status = resp.status();
        let answer_type = resp.headers().get(header::CONTENT_TYPE).cloned();
        // An answer cut off or too late is billed as partial like every whole answer
        // (`whole::read_whole`): the upstream worked.
        let bytes = read_whole(resp, state.config.relay_timeout(), &mut meter).await?;
        let transcript = transcript_usage(&bytes);
        meter.output(&transcript.text);
        match transcript.reported {
            Some(usage) => meter.reported(usage),
            None => meter.prompt_learned(transcript.duration_tokens),
        }
        meter.settle(presence.ending()).await;
        let mut response = (status, bytes).into_response();
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            answer_type.unwrap_or(HeaderValue::from_static("application/json")),
        );
        Ok(response)
    }
}

/// Reads the form up to its `model` field (`None`: the form has none).
async fn form_model(
    tee: Tee,
    boundary: &str,
    state: &Arc<Mutex<TeeState>>,
) -> Result<Option<String>, RelayError> {
    let bad =
        |e: multer::Error| RelayError::BadRequest(format!("the multipart body is invalid: {e}"));
    let mut form = multer::Multipart::new(tee, boundary);
    while let Some(mut field) = form.next_field().await.map_err(bad)? {
        if field.name() == Some("model") {
            let model = field.text().await.map_err(bad)?;
            return Ok(Some(model.trim().to_owned()).filter(|m| !m.is_empty()));
        }
        while field.chunk().await.map_err(bad)?.is_some() {
            let seen = state
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .seen_len;
            if seen > MAX_FORM_PREFIX {
                return Err(RelayError::BadRequest(
                    "send the model field before the file in the multipart form".into(),
                ));
            }
        }
    }
    Ok(None)
}

/// The form bytes with the value of the `model` field replaced by `model`.
fn replace_model(form: &[u8], model: &str) -> Vec<u8> {
    let find = |hay: &[u8], needle: &[u8], from: usize| {
        hay.get(from..)
            .and_then(|h| h.windows(needle.len()).position(|w| w == needle))
            .map(|i| i + from)
    };
    let replaced = find(form, b"name=\"model\"", 0)
        .and_then(|at| find(form, b"\r\n\r\n", at))
        .map(|head_end| head_end + 4)
        .and_then(|start| find(form, b"\r\n", start).map(|end| (start, end)));
    match replaced {
        Some((start, end)) => {
            let mut out = Vec::with_capacity(form.len() + model.len());
            out.extend_from_slice(&form[..start]);
            out.extend_from_slice(model.as_bytes());
            out.extend_from_slice(&form[end..]);
            out
        }
        None => {
            tracing::warn!("could not rewrite the model field of an audio upload");
            form.to_vec()
        }
    }
}

/// What a transcription answer says of its usage (see the module doc).
#[derive(Debug, PartialEq)]
struct Transcript {
    /// The transcript (the `text` of a JSON answer, or the whole text / srt / vtt answer).
    text: String,
    /// The upstream's token usage (`usage.type = tokens`).
    reported: Option<Usage>,
    /// The audio's duration in prompt tokens (0 when the answer does not say it).
    duration_tokens: i64,
}

/// Reads a transcription answer (see the module doc).
fn transcript_usage(bytes: &[u8]) -> Transcript {
    let answer: Option<Value> = serde_json::from_slice(bytes).ok();
    let text = match &answer {
        Some(v) => v["text"].as_str().unwrap_or_default().to_owned(),
        None => String::from_utf8_lossy(bytes).into_owned(),
    };
    let usage = answer.as_ref().map(|v| &v["usage"]);
    let reported = usage.filter(|u| u["type"] == "tokens").map(|u| Usage {
        prompt_tokens: u["input_tokens"].as_i64().unwrap_or(0),
        completion_tokens: u["output_tokens"].as_i64().unwrap_or(0),
        ..Usage::default()
    });
    let seconds = usage
        .and_then(|u| u["seconds"].as_f64())
        .or_else(|| answer.as_ref().and_then(|v| v["duration"].as_f64()));
    Transcript {
        text,
        reported,
        duration_tokens: seconds.map_or(0, duration_tokens),
    }
}

/// new-api's audio duration rule: `ceil(seconds) / 60 × 1000` tokens, rounded.
fn duration_tokens(seconds: f64) -> i64 {
    if !seconds.is_finite() || seconds <= 0.0 {
        return 0;
    }
    let tokens = (seconds.ceil() / 60.0 * 1000.0).round();
    if tokens >= 9.0e15 {
        return i64::MAX;
    }
    #[expect(clippy::cast_possible_truncation, reason = "range checked just above")]
    let tokens = tokens as i64;
    tokens
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_field_is_replaced_in_place() {
        let form = b"--b\r\nContent-Disposition: form-data; name=\"model\"\r\n\r\nwhisper-1\r\n--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.mp3\"\r\n\r\nDATA";
        let out = replace_model(form, "whisper-large");
        let text = String::from_utf8_lossy(&out);
        assert!(text.contains("\r\n\r\nwhisper-large\r\n--b\r\n"));
        assert!(text.ends_with("DATA"));
    }

    #[test]
    fn transcripts_are_billed_by_tokens_duration_or_text() {
        let t = transcript_usage(
            br#"{"text":"hi","usage":{"type":"tokens","input_tokens":50,"output_tokens":3}}"#,
        );
        let reported = t.reported.map(|u| (u.prompt_tokens, u.completion_tokens));
        assert_eq!((t.text.as_str(), reported), ("hi", Some((50, 3))));
        let t = transcript_usage(br#"{"text":"hello world!","duration":61.2}"#);
        // ceil(61.2) = 62 s → 62 / 60 × 1000 = 1033.3 → 1033
        assert_eq!(
            (t.text.as_str(), t.reported.is_none(), t.duration_tokens),
            ("hello world!", true, 1033)
        );
        let t = transcript_usage(br#"{"text":"x","usage":{"type":"duration","seconds":3}}"#);
        assert_eq!(t.duration_tokens, 50);
        let t = transcript_usage(b"plain transcript");
        assert_eq!(
            (t.text.as_str(), t.reported.is_none(), t.duration_tokens),
            ("plain transcript", true, 0)
        );
        assert_eq!(duration_tokens(f64::NAN), 0);
    }
}
