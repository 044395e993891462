//! iFlytek Spark's transport: its chat is a WebSocket conversation, not an HTTP exchange
//! (<https://xfyun.cn/doc/spark/Web.html>). The key is `APPID|APISecret|APIKey` (the
//! incumbent's format); the URL is signed ([`signed_url`], "WebSocket协议通用鉴权URL生成说明",
//! <https://xfyun.cn/doc/spark/general_url_authentication.html>: HMAC-SHA256 under the
//! APISecret of `host`, `date` and the request line, `authorization` base64 in the query; the
//! tests reproduce the page's example byte for byte). The model version — and with it the path
//! and the `domain` — comes from a `SparkDesk-vX.Y` model name, else the channel's `other`,
//! else v2.1 (spec 02 §5), as the incumbent chooses it ([`endpoint`]).
//!
//! [`Adaptor::request`] converts the OpenAI chat body the relay builds into Spark's request frame
//! ([`crate::relay::wire::spark`]) and carries it, with the signed URL, in a request builder
//! that is never sent over HTTP: [`Adaptor::outbound`] turns it into the conversation
//! ([`converse`]) — connect, handshake, send the frame, read the first answer frame — whose
//! answer is an OpenAI one: a `chat.completion`, a `chat.completion.chunk` stream (the usage
//! chunk and `[DONE]` only after Spark's last frame, so a cut stream is billed as cut), or an
//! error of the status its documented code means, the code in `error.code` where the attempt
//! loop reads every provider's ([`crate::channel_types::errors`]). A handshake Spark refuses
//! (a bad signature, a date out of its 300 s window) answers with its HTTP status.
//!
//! Outbound policy: a channel's base URL is the operator's (as for every type, the HTTP
//! clients do not filter its addresses: Ollama on localhost); no redirect is followed. A
//! channel's `socks5://` (names resolved here) or `socks5h://` proxy (names resolved by the
//! proxy), with its `user:pass@`, carries the WebSocket as it carries HTTP channels' requests
//! (hyper-util's SOCKS5 connector, reqwest's own); an `http(s)://` proxy is refused with a
//! message.

use std::sync::{Arc, LazyLock};
use std::time::Duration;

use axum::body::Bytes;
use axum::http::{HeaderValue, StatusCode, header};
use futures_util::{SinkExt, StreamExt};
use serde_json::json;
use tokio_tungstenite::tungstenite::{self, Message};
use tollgate_actors::channel_pool::routing_table::RoutedChannel;

use super::answer::{self, ANSWER_MAX, json_response};
use super::{Adaptor, AuthFailure, Authorizing, Conversation, Credential, Outbound};
use crate::channel_types::effective_base_url;
use crate::error::RelayError;
use crate::relay::wire::{self, EncodeCtx, Piece, Wire, hub, spark};
use crate::upstream::HttpClients;

mod sign;
pub use sign::{SparkKey, authorization, endpoint, signed_url, version};

/// The channel type.
const TYPE: i32 = 18;

/// How long connecting and the handshake may take (the HTTP clients' connect timeout).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The header of the request builder that carries the channel's proxy to [`converse`].
const PROXY: &str = "x-tollgate-proxy";

/// The largest answer frame read.
const FRAME_MAX: usize = 4 << 20;

/// Spark's adaptor: OpenAI chat bodies in, a WebSocket conversation out; chat is its only route.
pub struct Spark;

impl Adaptor for Spark {
    fn name(&self) -> &'static str {
        "spark"
    }

    fn own_api(&self) -> bool {
        true
    }

    /// The base URL, signed into the WebSocket URL by [`Adaptor::request`].
    fn own_chat_url(&self, channel: &RoutedChannel, _model: &str) -> Option<String> {
        let c = &channel.channel;
        Some(effective_base_url(c.channel_type, &c.base_url))
    }

    fn authorize<'k, 'f>(
        &self,
        _http: &'f HttpClients,
        _channel: &'f RoutedChannel,
        key: &'k str,
    ) -> Authorizing<'k, 'f>
    where
        'k: 'f,
    {
        Authorizing::Ready(
            SparkKey::parse(key)
                .map(|_| Credential::Key(key))
                .map_err(|message| AuthFailure {
                    status: Some(401),
                    message,
                }),
        )
    }

    fn bytes_only(&self, _wire: Wire) -> bool {
        false
    }

    fn builds_own_requests(&self) -> bool {
        true
    }

    /// `url` is the channel's base URL ([`Adaptor::generate_url`]); the body an OpenAI chat
    /// request whose `model` is the upstream's.
    fn request(
        &self,
        http: &HttpClients,
        channel: &RoutedChannel,
        _wire: Wire,
        url: String,
        key: &Credential<'_>,
        _headers: &[(&'static str, HeaderValue)],
        body: Bytes,
    ) -> Result<reqwest::RequestBuilder, RelayError> {
        let c = &channel.channel;
        let proxy = c.proxy.trim();
        if !proxy.is_empty() && !proxy.starts_with("socks5://") && !proxy.starts_with("socks5h://")
        {
            return Err(RelayError::Unreachable(
                "a Spark channel's proxy must be socks5:// or socks5h://: its WebSocket API \
                 cannot go through an HTTP proxy"
                    .into(),
            ));
        }
        let key = SparkKey::parse(key.text()).map_err(|message| RelayError::Upstream {
            status: 401,
            message,
        })?;
        let bad = |e: serde_json::Error| {
            RelayError::BadRequest(format!("the request body is not valid JSON: {e}"))
        };
        let model: Model<'_> = serde_json::from_slice(&body).map_err(bad)?;
        let hub = hub::Request::from_bytes(&body).map_err(bad)?;
        spark::check(&hub).map_err(|e| RelayError::BadRequest(e.0))?;
        let (path, domain) = endpoint(&version(model.model.or_empty(), &c.other));
        let frame = spark::request_from_hub(&hub, key.app_id, &domain);
        let frame = serde_json::to_vec(&frame).map_err(|e| RelayError::Internal(e.to_string()))?;
        let date = httpdate::fmt_http_date(std::time::SystemTime::now());
        let url = signed_url(&url, &path, &key, &date).map_err(RelayError::Unreachable)?;
        // The proxy rides along as a header of the builder, which is never sent.
        let mut req = http.direct().get(url).body(frame);
        if !proxy.is_empty() {
            req = req.header(PROXY, proxy);
        }
        Ok(req)
    }

    fn outbound(&self, req: Box<reqwest::RequestBuilder>, model: &str, stream: bool) -> Outbound {
        let (_, built) = req.build_split();
        let model = model.to_owned();
        let talk: Conversation = Box::pin(async move {
            let built = built.map_err(|e| (format!("the Spark request: {e}"), "network"))?;
            let frame = built
                .body()
                .and_then(reqwest::Body::as_bytes)
                .map(|b| String::from_utf8_lossy(b).into_owned())
                .unwrap_or_default();
            let proxy = built
                .headers()
                .get(PROXY)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            converse(built.url().clone(), proxy, frame, model, stream).await
        });
        Outbound::Conversation(talk)
    }
}

/// What the conversion reads of the OpenAI body beside the hub view.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(default)]
struct Model<'a> {
    /// The upstream model.
    #[serde(borrow)]
    model: wire::typed::Str<'a>,
}

/// The TLS settings of `wss://` (rustls with ring and the Mozilla roots, as reqwest's).
static TLS: LazyLock<Option<Arc<rustls::ClientConfig>>> = LazyLock::new(|| {
    let roots = rustls::RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .ok()
        .map(|b| Arc::new(b.with_root_certificates(roots).with_no_client_auth()))
});

type Socket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// The conversation: connects to `url`, sends `frame`, and answers as OpenAI would (see the
/// module header). `Err`: no answer at all (a description and the attempt's error class).
async fn converse(
    url: reqwest::Url,
    proxy: Option<String>,
    frame: String,
    model: String,
    stream: bool,
) -> Result<reqwest::Response, (String, &'static str)> {
    let mut ws = match tokio::time::timeout(CONNECT_TIMEOUT, dial(&url, proxy.as_deref())).await {
        Ok(Ok(ws)) => ws,
        Ok(Err(Dialed::Refused(resp))) => return Ok(resp),
        Ok(Err(Dialed::Failed(e))) => return Err(e),
        Err(_) => return Err(("could not connect to the upstream".into(), "connect")),
    };
    if ws.send(Message::text(frame)).await.is_err() {
        return Err(("the upstream request failed".into(), "network"));
    }
    let mut decoder = spark::Decoder::default();
    // The first frame decides between an answer and an error.
    let first = match next_text(&mut ws).await {
        Some(text) => text,
        None => return Err(("Spark closed the conversation unanswered".into(), "network")),
    };
    if let Ok(frame) = serde_json::from_str::<spark::Frame<'_>>(&first)
        && let Some((code, message)) = spark::frame_error(&frame)
    {
        let _ = ws.close(None).await;
        return Ok(error(&code.to_string(), &message));
    }
    let pieces = decoder.frame(&first);
    if stream {
        return Ok(streamed(ws, decoder, pieces, model));
    }
    Ok(whole(ws, decoder, pieces, &model).await)
}

/// Why no conversation began.
enum Dialed {
    /// Spark answered the handshake with an HTTP error: that answer, OpenAI-shaped.
    Refused(reqwest::Response),
    /// Nothing usable came back.
    Failed((String, &'static str)),
}

/// A TCP connection to `host`:`port` through the SOCKS5 `proxy` ([`validate_proxy`]'s form).
///
/// [`validate_proxy`]: crate::outbound::proxy::validate_proxy
async fn through_socks(
    proxy: &str,
    host: &str,
    port: u16,
) -> Result<tokio::net::TcpStream, String> {
    use tower_service::Service;
    let proxy = crate::outbound::proxy::validate_proxy(proxy).map_err(|e| e.to_string())?;
    let at = format!(
        "socks5://{}:{}",
        proxy.host_str().unwrap_or_default(),
        proxy.port().unwrap_or(1080)
    );
    let at: axum::http::Uri = at
        .parse()
        .map_err(|_| "the proxy URL is not valid".to_owned())?;
    let mut inner = hyper_util::client::legacy::connect::HttpConnector::new();
    inner.enforce_http(false);
    let mut socks = hyper_util::client::legacy::connect::proxy::SocksV5::new(at, inner)
        .local_dns(proxy.scheme() == "socks5");
    if !proxy.username().is_empty() {
        let decode = |s: &str| {
            percent_encoding::percent_decode_str(s)
                .decode_utf8_lossy()
                .into_owned()
        };
        socks = socks.with_auth(
            decode(proxy.username()),
            decode(proxy.password().unwrap_or_default()),
        );
    }
    let dst: axum::http::Uri = format!("http://{host}:{port}")
        .parse()
        .map_err(|_| "the channel's base URL has no valid host".to_owned())?;
    std::future::poll_fn(|cx| socks.poll_ready(cx))
        .await
        .map_err(|_| "the proxy cannot be used".to_owned())?;
    let io = socks
        .call(dst)
        .await
        .map_err(|_| "could not connect to the upstream through the proxy".to_owned())?;
    Ok(io.into_inner())
}

/// Connects (directly, or through the channel's SOCKS5 `proxy`) and shakes hands.
async fn dial(url: &reqwest::Url, proxy: Option<&str>) -> Result<Socket, Dialed> {
    let failed = |m: &str, class| Dialed::Failed((m.to_owned(), class));
    let host = url
        .host_str()
        .ok_or_else(|| failed("the channel's base URL has no host", "connect"))?;
    let port = url.port_or_known_default().unwrap_or(443);
    let tcp = match proxy {
        Some(proxy) => through_socks(proxy, host, port)
            .await
            .map_err(|m| failed(&m, "connect"))?,
        None => {
            let host = host.trim_start_matches('[').trim_end_matches(']');
            tokio::net::TcpStream::connect((host, port))
                .await
                .map_err(|_| failed("could not connect to the upstream", "connect"))?
        }
    };
    let _ = tcp.set_nodelay(true);
    let connector = match url.scheme() {
        "wss" => match TLS.as_ref() {
            Some(tls) => tokio_tungstenite::Connector::Rustls(Arc::clone(tls)),
            None => return Err(failed("TLS is not available", "connect")),
        },
        _ => tokio_tungstenite::Connector::Plain,
    };
    let config = tungstenite::protocol::WebSocketConfig::default()
        .max_message_size(Some(FRAME_MAX))
        .max_frame_size(Some(FRAME_MAX));
    match tokio_tungstenite::client_async_tls_with_config(
        url.as_str(),
        tcp,
        Some(config),
        Some(connector),
    )
    .await
    {
        Ok((ws, _)) => Ok(ws),
        Err(tungstenite::Error::Http(resp)) => {
            let status = resp.status().as_u16();
            let body = resp.body().as_deref().unwrap_or_default();
            let message = serde_json::from_slice::<serde_json::Value>(body)
                .ok()
                .and_then(|v| v["message"].as_str().map(str::to_owned))
                .unwrap_or_else(|| format!("the handshake was refused with {status}"));
            let body = json!({"error": {"message": format!("Spark: {message}"),
                "type": "upstream_error", "code": status.to_string()}});
            let status = StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_GATEWAY);
            Err(Dialed::Refused(json_response(
                status,
                body.to_string().into(),
            )))
        }
        Err(_) => Err(failed(
            "the upstream's WebSocket handshake failed",
            "connect",
        )),
    }
}

/// The next text frame, `None` when the conversation ended (closed, broken).
async fn next_text(ws: &mut Socket) -> Option<String> {
    loop {
        match ws.next().await? {
            Ok(Message::Text(text)) => return Some(text.as_str().to_owned()),
            Ok(Message::Binary(bytes)) => return String::from_utf8(bytes.to_vec()).ok(),
            Ok(Message::Close(_)) | Err(_) => return None,
            Ok(_) => {}
        }
    }
}

/// An OpenAI-shaped error answer for Spark's error `code`: the status its documented meaning
/// gives ([`answer::provider_error`]: a spent allocation 403, a refused application 401, a rate
/// limit 429, the client's mistake 400), else 502 (Spark's own failures).
fn error(code: &str, message: &str) -> reqwest::Response {
    answer::provider_error(TYPE, "Spark", code, message, 502)
}

/// Reads the rest of the conversation into one `chat.completion` naming `model`.
async fn whole(
    mut ws: Socket,
    mut decoder: spark::Decoder,
    mut pieces: Vec<Piece>,
    model: &str,
) -> reqwest::Response {
    let mut id = String::new();
    let mut text = String::new();
    let mut usage = None;
    loop {
        for piece in pieces.drain(..) {
            match piece {
                Piece::Start { id: sid, .. } => id = sid,
                Piece::Text(t) if text.len() + t.len() > ANSWER_MAX => {
                    let _ = ws.close(None).await;
                    let body = json!({"error": {"message": "Spark: the answer is too large",
                        "type": "upstream_error"}});
                    return json_response(StatusCode::BAD_GATEWAY, body.to_string().into());
                }
                Piece::Text(t) => text.push_str(&t),
                Piece::Usage(u) => usage = Some(u),
                Piece::Error(message) => {
                    let _ = ws.close(None).await;
                    let rest = message.strip_prefix("Spark: ").unwrap_or(&message);
                    let (code, text) = rest.split_once(": ").unwrap_or(("", rest));
                    return error(code, text);
                }
                _ => {}
            }
        }
        if decoder.done() {
            break;
        }
        match next_text(&mut ws).await {
            Some(frame) => pieces = decoder.frame(&frame),
            None => {
                let body = json!({"error": {"message": "Spark: the answer was cut short",
                    "type": "upstream_error"}});
                return json_response(StatusCode::BAD_GATEWAY, body.to_string().into());
            }
        }
    }
    let _ = ws.close(None).await;
    let usage = usage.unwrap_or_default();
    let body = json!({
        "id": format!("chatcmpl-{id}"),
        "object": "chat.completion",
        "created": crate::clock::now_unix(),
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
            "finish_reason": "stop"}],
        "usage": {"prompt_tokens": usage.prompt_tokens,
            "completion_tokens": usage.completion_tokens,
            "total_tokens": usage.prompt_tokens.saturating_add(usage.completion_tokens)},
    });
    json_response(StatusCode::OK, body.to_string().into())
}

/// The rest of the conversation as OpenAI `chat.completion.chunk` events naming `model`,
/// beginning with `first` (the first frame's pieces); the usage chunk and `[DONE]` follow only
/// after Spark's last frame, so a cut conversation stays cut for the meter.
fn streamed(
    ws: Socket,
    decoder: spark::Decoder,
    first: Vec<Piece>,
    model: String,
) -> reqwest::Response {
    struct State {
        ws: Socket,
        decoder: spark::Decoder,
        encoder: Box<dyn wire::Encode>,
        first: Option<Vec<Piece>>,
        ended: bool,
    }
    fn encode(state: &mut State, pieces: &[Piece]) -> Vec<u8> {
        let mut out = Vec::new();
        for piece in pieces {
            state.encoder.piece(piece, &mut out);
            if matches!(piece, Piece::Error(_)) {
                state.ended = true;
            }
        }
        if state.decoder.done() && !state.ended {
            state.encoder.end(&mut out);
            state.ended = true;
        }
        out
    }
    let state = State {
        ws,
        decoder,
        encoder: wire::encoder(
            Wire::OpenAi,
            EncodeCtx {
                model,
                prompt_estimate: 0,
                include_usage: true,
            },
        ),
        first: Some(first),
        ended: false,
    };
    let body = futures_util::stream::unfold(state, |mut state| async move {
        loop {
            if state.ended {
                let _ = state.ws.close(None).await;
                return None;
            }
            let pieces = match state.first.take() {
                Some(pieces) => pieces,
                None => match next_text(&mut state.ws).await {
                    Some(frame) => state.decoder.frame(&frame),
                    // Closed before the last frame: cut (no usage chunk, no `[DONE]`).
                    None => return None,
                },
            };
            let out = encode(&mut state, &pieces);
            if !out.is_empty() {
                return Some((Ok::<Bytes, std::io::Error>(Bytes::from(out)), state));
            }
        }
    });
    let resp = axum::http::Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, "text/event-stream")
        .body(reqwest::Body::wrap_stream(body));
    match resp {
        Ok(resp) => reqwest::Response::from(resp),
        Err(_) => {
            reqwest::Response::from(axum::http::Response::new(reqwest::Body::from(Bytes::new())))
        }
    }
}

#[cfg(test)]
#[path = "spark_tests.rs"]
mod tests;
