//! The README's provider table, made from the channel type table: the test fails when README.md
//! drifts from the code (its message holds the table to paste between the markers).

use std::fmt::Write as _;

use super::CHANNEL_TYPES;
use super::kinds::{ChannelType, Family, KeyFormat, Target};
use super::serve::{Serve, mask};

const START: &str = "<!-- provider-table:start -->";
const END: &str = "<!-- provider-table:end -->";

fn mark(yes: bool) -> &'static str {
    if yes { "✓" } else { "" }
}

/// How to configure a row's key (and its extra fields), in one table cell.
fn key_text(row: &ChannelType) -> String {
    // The task relays (`crate::task_relay`) take these types outside the chat families.
    match row.id {
        2 | 5 => return "tasks: `/mj/…` (the key goes upstream as `mj-api-secret`)".to_owned(),
        36 => return "tasks: `/suno/…` (the key goes upstream as a Bearer key)".to_owned(),
        _ => {}
    }
    if let Some(why) = super::refused(row.id) {
        return format!("refused at creation: {why}");
    }
    if row.family.is_none() {
        return "not relayed yet".to_owned();
    }
    let mut text = match row.key_format {
        KeyFormat::Lines => "one API key per line".to_owned(),
        KeyFormat::Parts(parts) => format!("`{}` per line", parts.join("\\|")),
        KeyFormat::IdSecret => "`id.secret` per line".to_owned(),
        KeyFormat::Aws => {
            "`AK\\|SK\\|region[\\|session token]` or `APIKey\\|region`, one per line".to_owned()
        }
        KeyFormat::ServiceAccountJson => {
            "service-account JSON: one object, an array, or objects one after another (or, with \
             `setting.vertex_key_type` `api_key`, express-mode API keys one per line)"
                .to_owned()
        }
    };
    if row.base_url_required {
        text.push_str("; base URL required");
    }
    if row.id == 1 {
        text.push_str("; video (`/v1/videos`): OpenAI only");
    }
    for field in row.fields {
        let place = match field.target {
            Target::Other => "`other`".to_owned(),
            Target::Setting => format!("`setting.{}`", field.key),
        };
        let _ = write!(text, "; {place}: {}", field.name);
        if !field.default.is_empty() {
            let _ = write!(text, " (default `{}`)", field.default);
        }
    }
    text
}

/// A row's documented error codes ([`super::errors`]), grouped by what they mean.
fn errors_text(row: &ChannelType) -> String {
    use super::errors::ErrorKind;
    let Some(provider) = super::errors::of(row.id) else {
        return String::new();
    };
    let kinds = [
        ErrorKind::Balance,
        ErrorKind::Auth,
        ErrorKind::RateLimit,
        ErrorKind::Client,
    ];
    kinds
        .iter()
        .filter_map(|kind| {
            let codes: Vec<&str> = provider
                .rules
                .iter()
                .filter(|r| r.kind == *kind)
                .map(|r| r.code)
                .collect();
            (!codes.is_empty()).then(|| format!("{}: `{}`", kind.name(), codes.join("`, `")))
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// The provider table as the README holds it.
fn provider_table() -> String {
    let mut out = String::from(
        "| type | name | chat | stream | tools | completions | images | embeddings | audio | rerank | moderation | Responses | key | provider errors |\n\
         |---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    let mut rows: Vec<&ChannelType> = CHANNEL_TYPES.iter().collect();
    rows.sort_by_key(|row| row.id);
    for row in rows {
        let bits = mask(row.id);
        let has = |serve: Serve| bits & serve.bit() != 0;
        let chat = has(Serve::Chat);
        // Responses clients reach every chat type: natively where the upstream has the API,
        // converted to chat elsewhere.
        let responses = match (chat, row.native_responses) {
            (false, _) => "",
            (true, true) => "native",
            (true, false) => "converted",
        };
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            row.id,
            row.name,
            mark(chat),
            mark(has(Serve::ChatStream)),
            // Tools travel with chat (passed through or converted) except on text-only types.
            mark(chat && row.family.is_some_and(Family::tools)),
            mark(has(Serve::Completions)),
            mark(has(Serve::Images)),
            mark(has(Serve::Embeddings) || has(Serve::GeminiEmbeddings)),
            mark(has(Serve::Audio)),
            mark(has(Serve::Rerank)),
            mark(has(Serve::Moderation)),
            responses,
            key_text(row),
            errors_text(row),
        );
    }
    out
}

#[test]
fn the_readme_provider_table_matches_the_type_table() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/README.md");
    let readme = std::fs::read_to_string(path).unwrap_or_default();
    let expected = provider_table();
    let found = readme
        .split_once(START)
        .and_then(|(_, rest)| rest.split_once(END))
        .map(|(table, _)| table.trim().to_owned());
    assert_eq!(
        found.as_deref(),
        Some(expected.trim()),
        "README.md's provider table differs from src/channel_types/table.rs; put this between \
         {START} and {END}:\n{expected}"
    );
}
