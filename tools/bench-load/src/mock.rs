//! The fast mock upstream: a minimal hyper HTTP/1 server answering every POST with a fixed
//! `chat.completion` (with usage), or, when the body asks for `"stream":true`, an SSE stream of
//! 20 content chunks, a usage chunk and `[DONE]`. The model `bench-slow` streams the same chunks
//! 10 ms apart, and `bench-long` 100 ms apart (the concurrent-streams checks need streams that
//! stay open: ~0.2 s for the burst, ~2.2 s, longer than the ramp, for the ramped check).

use std::convert::Infallible;
use std::time::Duration;

use bytes::Bytes;
use futures_util::stream;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

/// Prompt tokens the mock reports.
pub const PROMPT_TOKENS: u64 = 12;
/// Completion tokens the mock reports (one per content chunk).
pub const COMPLETION_TOKENS: u64 = 20;
/// Content chunks per stream.
const CHUNKS: usize = 20;
/// The model whose stream is paced (10 ms between chunks).
pub const SLOW_MODEL: &str = "bench-slow";
/// The model whose stream is paced 100 ms between chunks.
pub const LONG_MODEL: &str = "bench-long";

/// The non-stream answer.
fn completion() -> Bytes {
    Bytes::from(format!(
        r#"{{"id":"chatcmpl-bench","object":"chat.completion","created":1700000000,"model":"gpt-4o-mini","choices":[{{"index":0,"message":{{"role":"assistant","content":"Hello from the benchmark mock upstream."}},"finish_reason":"stop"}}],"usage":{{"prompt_tokens":{PROMPT_TOKENS},"completion_tokens":{COMPLETION_TOKENS},"total_tokens":{}}}}}"#,
        PROMPT_TOKENS + COMPLETION_TOKENS
    ))
}

/// The SSE events of one stream, each a complete `data: …\n\n` block.
pub fn sse_events() -> Vec<Bytes> {
    let head = r#"{"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4o-mini","#;
    let mut events: Vec<Bytes> = (0..CHUNKS)
        .map(|i| {
            Bytes::from(format!(
                "data: {head}\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"tok{i} \"}},\"finish_reason\":null}}]}}\n\n"
            ))
        })
        .collect();
    events.push(Bytes::from(format!(
        "data: {head}\"choices\":[],\"usage\":{{\"prompt_tokens\":{PROMPT_TOKENS},\"completion_tokens\":{COMPLETION_TOKENS},\"total_tokens\":{}}}}}\n\n",
        PROMPT_TOKENS + COMPLETION_TOKENS
    )));
    events.push(Bytes::from_static(b"data: [DONE]\n\n"));
    events
}

/// Whether `hay` contains `needle`.
fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

type Body = BoxBody<Bytes, Infallible>;

/// Answers one request.
async fn answer(
    req: Request<Incoming>,
    json: Bytes,
    sse: Bytes,
) -> Result<Response<Body>, hyper::Error> {
    let body = req.into_body().collect().await?.to_bytes();
    let compact: Vec<u8> = body.iter().copied().filter(|b| *b != b' ').collect();
    if !contains(&compact, br#""stream":true"#) {
        return Ok(respond("application/json", Full::new(json).boxed()));
    }
    let pace = if contains(&compact, SLOW_MODEL.as_bytes()) {
        Duration::from_millis(10)
    } else if contains(&compact, LONG_MODEL.as_bytes()) {
        Duration::from_millis(100)
    } else {
        return Ok(respond("text/event-stream", Full::new(sse).boxed()));
    };
    let paced = stream::unfold(sse_events().into_iter(), move |mut events| async move {
        let event = events.next()?;
        tokio::time::sleep(pace).await;
        Some((Ok::<_, Infallible>(Frame::data(event)), events))
    });
    Ok(respond("text/event-stream", StreamBody::new(paced).boxed()))
}

/// A 200 with `content_type`.
fn respond(content_type: &'static str, body: Body) -> Response<Body> {
    let mut resp = Response::new(body);
    if let Ok(value) = content_type.parse() {
        resp.headers_mut()
            .insert(hyper::header::CONTENT_TYPE, value);
    }
    resp
}

/// Serves on `listener` until the process is killed.
pub async fn serve(listener: TcpListener) -> std::io::Result<()> {
    let json = completion();
    let sse = Bytes::from(sse_events().concat());
    loop {
        let (socket, _) = listener.accept().await?;
        let _ = socket.set_nodelay(true);
        let (json, sse) = (json.clone(), sse.clone());
        tokio::spawn(async move {
            let service = service_fn(move |req| answer(req, json.clone(), sse.clone()));
            let _ = http1::Builder::new()
                .serve_connection(TokioIo::new(socket), service)
                .await;
        });
    }
}
