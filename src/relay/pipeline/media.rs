//! Media a client names by URL, for upstreams that take media only as bytes: Gemini
//! (`inline_data`), Bedrock Converse (image bytes) and Claude on Bedrock or Vertex (base64
//! sources; Anthropic's own API reads URLs itself). Before a job is forwarded, when a channel
//! that may serve it is one of those, each `http(s)` image URL of the hub request (and, for
//! Anthropic clients whose body such a channel takes as it is, each `url` image or document
//! source) is read by the guarded media fetcher ([`crate::outbound::media`]) and replaced by its
//! bytes (a `data:` URL in the hub, a `base64` source for Claude), so the converters of
//! [`crate::relay::wire`] never see a remote URL they would have to read. Documents by URL (the hub's
//! `file` parts with a `file_url`: an Anthropic `document` with a `url` source, a Responses
//! `input_file` with a `file_url`, a Gemini `fileData` that is not an image) are read for every
//! converted request, since no converted format takes a document URL; what is read becomes
//! OpenAI's `file_data` (a data URL), which each converter maps or refuses by name.
//!
//! A URL that cannot be read is the client's to fix: a 400 naming the part
//! (`messages[0].content[1]: image URL … refused: … resolves to a loopback address`), never a
//! 500. The ImageReadProxy option, when set, is the proxy the reads go through (a redirect is
//! then not followed). What is read must say it is a type every byte-taking upstream takes for
//! the part ([`IMAGE_TYPES`], [`DOCUMENT_TYPES`]), else it is a 400 naming the part.

use base64::Engine;
use serde_json::{Value, json};
use tollgate_actors::channel_pool::routing_table::RoutedChannel;

use crate::error::RelayError;
use crate::outbound::media::Media;
use crate::relay::adaptor;
use crate::relay::pipeline::auth::Caller;
use crate::relay::wire::Wire;
use crate::state::AppState;

/// The image types a medium read for an image part must have: what Gemini
/// (https://ai.google.dev/gemini-api/docs/image-understanding), Bedrock Converse's
/// `ImageBlock` (png, jpeg, gif, webp) and Claude
/// (https://docs.anthropic.com/en/docs/build-with-claude/vision) all take.
pub const IMAGE_TYPES: [&str; 4] = ["image/png", "image/jpeg", "image/gif", "image/webp"];

/// The document types a medium read for a document part must have: PDF, which every converted
/// upstream that takes documents accepts (OpenAI chat's `file` parts take PDF only).
pub const DOCUMENT_TYPES: [&str; 1] = ["application/pdf"];

/// Most media URLs one request may name for reading (each read is bounded by the fetcher's size
/// and time limits; this bounds their sum).
pub const MAX_REMOTE_MEDIA: usize = 16;

/// What the channels that may serve a job need read.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Needs {
    /// The hub request is converted for a channel that takes only bytes.
    hub: bool,
    /// The hub request is converted for some channel: documents by URL are read, whatever the
    /// channel (no converted format takes a document URL from the hub: OpenAI chat's `file`
    /// part has none, Gemini, Converse and Claude on a cloud take only bytes).
    documents: bool,
    /// An Anthropic client's body goes as it is to Claude on Bedrock or Vertex.
    anthropic: bool,
}

/// The parts of a job (see `crate::relay::routes::convert::Job`) whose media may be read.
pub struct JobMedia<'a> {
    /// The client's wire.
    pub client: Wire,
    /// The model the client asked for.
    pub model: &'a str,
    /// Who called (their group, a pinned channel).
    pub caller: &'a Caller,
    /// The client's request as a hub (OpenAI chat) request.
    pub hub: &'a mut Value,
    /// The client's body, parsed.
    pub parsed: &'a mut Value,
}

/// What the candidate channels of `job` need (the pinned channel, else every channel of the
/// route).
fn needs(state: &AppState, job: &JobMedia<'_>) -> Needs {
    let table = state.channel_pool.table().load();
    let mut needs = Needs::default();
    let mut look = |c: &RoutedChannel| {
        let upstream_model = c.json.mapped_model(job.model);
        let Some(wire) = adaptor::wire(c.channel.channel_type, upstream_model) else {
            return;
        };
        let wire = wire.upstream(c, job.client);
        if wire != job.client {
            needs.documents = true;
        }
        if !adaptor::bytes_only(c.channel.channel_type, wire) {
            return;
        }
        if wire != job.client {
            needs.hub = true;
        } else if wire == Wire::Anthropic {
            needs.anthropic = true;
        }
    };
    if let Some(id) = job.caller.pinned {
        if let Some(c) = table.channel(id) {
            look(c);
        }
        return needs;
    }
    if let Some(route) = table.route(&job.caller.group, job.model) {
        for c in route.tiers.iter().flat_map(|t| t.channels.iter()) {
            look(c);
        }
    }
    needs
}

/// A remote media reference found in a request.
struct Remote {
    /// Where it is, e.g. `messages[0].content[1]`.
    path: String,
    /// The URL.
    url: String,
    /// "image" or "document".
    kind: &'static str,
}

/// Whether `url` is one the relay reads (`http://` or `https://`; `data:` URLs already carry
/// their bytes, other schemes are the upstream's business).
fn is_remote(url: &str) -> bool {
    let lower = url.get(..8).unwrap_or(url).to_ascii_lowercase();
    lower.starts_with("http://") || lower.starts_with("https://")
}

/// The `http(s)` URLs of a hub request's `image_url` parts (`images`) and of its `file` parts
/// given by URL (`documents`: `file.file_url`, the hub's own field for a document a client
/// named by URL, e.g. an Anthropic `document` with a `url` source).
fn hub_remotes(hub: &Value, images: bool, documents: bool) -> Vec<Remote> {
    let mut out = Vec::new();
    for (i, message) in hub["messages"].as_array().into_iter().flatten().enumerate() {
        for (j, part) in message["content"]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
        {
            let (url, kind) = match part["type"].as_str() {
                Some("image_url") if images => {
                    let image = &part["image_url"];
                    (image["url"].as_str().or_else(|| image.as_str()), "image")
                }
                Some("file") if documents => (part["file"]["file_url"].as_str(), "document"),
                _ => continue,
            };
            if let Some(url) = url.filter(|u| is_remote(u)) {
                out.push(Remote {
                    path: format!("messages[{i}].content[{j}]"),
                    url: url.to_owned(),
                    kind,
                });
            }
        }
    }
    out
}

/// The file name of a document read from `url`: the last segment of its path (as the URL
/// spells it), else "document" with the extension of its MIME type.
fn file_name(url: &str, mime: &str) -> String {
    let last = reqwest::Url::parse(url).ok().and_then(|u| {
        u.path_segments()
            .and_then(|mut s| s.next_back().map(str::to_owned))
            .filter(|s| !s.is_empty())
    });
    last.unwrap_or_else(|| {
        let ext = mime_guess::get_mime_extensions_str(mime)
            .and_then(|e| e.first())
            .unwrap_or(&"bin");
        format!("document.{ext}")
    })
}

/// The `url` sources of an Anthropic request's image and document blocks (tool results'
/// blocks included).
fn anthropic_remotes(body: &Value) -> Vec<Remote> {
    let mut out = Vec::new();
    let mut look = |path: String, block: &Value| {
        let kind = match block["type"].as_str() {
            Some("image") => "image",
            Some("document") => "document",
            _ => return,
        };
        if block["source"]["type"] == "url"
            && let Some(url) = block["source"]["url"].as_str()
            && is_remote(url)
        {
            out.push(Remote {
                path,
                url: url.to_owned(),
                kind,
            });
        }
    };
    for (i, message) in body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        for (j, block) in message["content"]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
        {
            look(format!("messages[{i}].content[{j}]"), block);
            for (k, inner) in block["content"]
                .as_array()
                .into_iter()
                .flatten()
                .enumerate()
            {
                look(format!("messages[{i}].content[{j}].content[{k}]"), inner);
            }
        }
    }
    out
}

/// `url` shortened for a message.
fn shown(url: &str) -> String {
    const MAX: usize = 120;
    match url.char_indices().nth(MAX) {
        Some((at, _)) => format!("{}…", &url[..at]),
        None => url.to_owned(),
    }
}

/// Reads every remote medium of `remotes` (a few at a time), in order.
async fn read_all(state: &AppState, remotes: &[Remote]) -> Result<Vec<Media>, RelayError> {
    use futures_util::{StreamExt, TryStreamExt};
    if remotes.len() > MAX_REMOTE_MEDIA {
        return Err(RelayError::BadRequest(format!(
            "{} media URLs in one request; at most {MAX_REMOTE_MEDIA} can be read (send the rest as data)",
            remotes.len()
        )));
    }
    let proxy = state.options.current().text("ImageReadProxy").to_owned();
    // Owned futures: a stream of futures borrowing `remotes` trips the compiler's check that
    // the relay's task is `Send` for every lifetime.
    let reads: Vec<_> = remotes
        .iter()
        .map(|remote| {
            let fetcher = state.http.media().clone();
            let proxy = proxy.clone();
            let url = remote.url.clone();
            let accepts: &'static [&'static str] = if remote.kind == "document" {
                &DOCUMENT_TYPES
            } else {
                &IMAGE_TYPES
            };
            let place = format!(
                "{}: {} URL {}",
                remote.path,
                remote.kind,
                shown(&remote.url)
            );
            async move {
                fetcher
                    .fetch(&url, &proxy, accepts)
                    .await
                    .map_err(|e| RelayError::BadRequest(format!("{place} {e}")))
            }
        })
        .collect();
    futures_util::stream::iter(reads)
        .buffered(4)
        .try_collect()
        .await
}

/// `media` as a `data:` URL.
fn data_url(media: &Media) -> String {
    format!(
        "data:{};base64,{}",
        media.mime,
        base64::engine::general_purpose::STANDARD.encode(&media.bytes)
    )
}

/// Replaces, in `job`, the remote media the candidate channels cannot read themselves by their
/// bytes. Nothing changes (and nothing is read) when no candidate needs it.
pub async fn inline_remote(state: &AppState, job: JobMedia<'_>) -> Result<(), RelayError> {
    let needs = needs(state, &job);
    if needs.hub || needs.documents {
        let remotes = hub_remotes(job.hub, needs.hub, needs.documents);
        if !remotes.is_empty() {
            let media = read_all(state, &remotes).await?;
            for (remote, media) in remotes.iter().zip(&media) {
                let Some(part) = job.hub.pointer_mut(&pointer(&remote.path)) else {
                    continue;
                };
                let data = data_url(media);
                if remote.kind == "document" {
                    // The document's bytes in OpenAI's form (`file_data`, a data URL), named
                    // as the client named it or as its URL does.
                    let name = part["file"]["filename"]
                        .as_str()
                        .map_or_else(|| file_name(&remote.url, &media.mime), str::to_owned);
                    part["file"] = json!({"filename": name, "file_data": data});
                    continue;
                }
                match &mut part["image_url"] {
                    Value::Object(image) => {
                        image.insert("url".into(), Value::String(data));
                    }
                    other => *other = json!({ "url": data }),
                }
            }
        }
    }
    if needs.anthropic && job.client == Wire::Anthropic {
        let remotes = anthropic_remotes(job.parsed);
        if !remotes.is_empty() {
            let media = read_all(state, &remotes).await?;
            for (remote, media) in remotes.iter().zip(&media) {
                if let Some(block) = job.parsed.pointer_mut(&pointer(&remote.path)) {
                    block["source"] = json!({
                        "type": "base64",
                        "media_type": media.mime,
                        "data": base64::engine::general_purpose::STANDARD.encode(&media.bytes),
                    });
                }
            }
        }
    }
    Ok(())
}

/// A part's path (`messages[0].content[1]`) as a JSON pointer (`/messages/0/content/1`).
fn pointer(path: &str) -> String {
    let mut out = String::with_capacity(path.len() + 4);
    for segment in path.split('.') {
        match segment.split_once('[') {
            Some((name, index)) => {
                out.push('/');
                out.push_str(name);
                out.push('/');
                out.push_str(index.trim_end_matches(']'));
            }
            None => {
                out.push('/');
                out.push_str(segment);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remote_parts_are_found_with_their_paths() {
        let hub = json!({"messages": [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": [
                {"type": "text", "text": "what is this"},
                {"type": "image_url", "image_url": {"url": "https://img.example/a.png", "detail": "low"}},
                {"type": "image_url", "image_url": "HTTP://img.example/b.png"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA"}},
                {"type": "image_url", "image_url": {"url": "gs://bucket/c.png"}}]}]});
        let found: Vec<_> = hub_remotes(&hub, true, false)
            .into_iter()
            .map(|r| (r.path, r.url))
            .collect();
        assert_eq!(
            found,
            [
                (
                    "messages[1].content[1]".to_owned(),
                    "https://img.example/a.png".to_owned()
                ),
                (
                    "messages[1].content[2]".to_owned(),
                    "HTTP://img.example/b.png".to_owned()
                ),
            ]
        );
        let anthropic = json!({"messages": [{"role": "user", "content": [
            {"type": "image", "source": {"type": "url", "url": "https://img.example/a.png"}},
            {"type": "document", "source": {"type": "url", "url": "https://doc.example/a.pdf"}},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AA"}},
            {"type": "tool_result", "tool_use_id": "t", "content": [
                {"type": "image", "source": {"type": "url", "url": "http://img.example/t.png"}}]}]}]});
        let found: Vec<_> = anthropic_remotes(&anthropic)
            .into_iter()
            .map(|r| r.path)
            .collect();
        assert_eq!(
            found,
            [
                "messages[0].content[0]",
                "messages[0].content[1]",
                "messages[0].content[3].content[0]"
            ]
        );
        assert_eq!(
            pointer("messages[0].content[3].content[0]"),
            "/messages/0/content/3/content/0"
        );
    }
}
