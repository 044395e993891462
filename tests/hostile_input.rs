//! Hostile input (issue P12 item 8): property tests, with fixed seeds and case counts, that no
//! input panics or hangs the parsers an upstream or an administrator feeds: the SSE reader,
//! every format converter and stream decoder, the in-band error masking, the prompt estimator
//! and the option validators. (cargo-fuzz needs a nightly toolchain these machines lack.)

use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed};
use serde_json::{Map, Value};
use tollgate::relay::pipeline::sse::SseReader;
use tollgate::relay::wire::{self, EncodeCtx, Wire};
use tollgate_actors::options::OptionsSnapshot;
use tollgate_actors::options::catalog;

const WIRES: [Wire; 6] = [
    Wire::OpenAi,
    Wire::Anthropic,
    Wire::Gemini,
    Wire::Converse,
    Wire::Cohere,
    Wire::Responses,
];

fn config(cases: u32) -> Config {
    Config {
        cases,
        rng_seed: RngSeed::Fixed(0x7011_6a7e),
        failure_persistence: None,
        ..Config::default()
    }
}

/// Field names the converters look for, so generated JSON reaches their deep paths.
const KEYS: &[&str] = &[
    "model",
    "messages",
    "role",
    "content",
    "type",
    "text",
    "image_url",
    "url",
    "tools",
    "tool_calls",
    "function",
    "name",
    "arguments",
    "tool_call_id",
    "tool_use",
    "tool_result",
    "input",
    "id",
    "choices",
    "delta",
    "message",
    "finish_reason",
    "usage",
    "prompt_tokens",
    "completion_tokens",
    "input_tokens",
    "output_tokens",
    "candidates",
    "parts",
    "inlineData",
    "functionCall",
    "functionResponse",
    "usageMetadata",
    "promptTokenCount",
    "system",
    "systemInstruction",
    "contents",
    "thinking",
    "signature",
    "max_tokens",
    "stream",
    "n",
    "source",
    "data",
    "media_type",
    "error",
    "index",
    "stop_reason",
    "generationConfig",
    "cache_control",
    "reasoning_content",
    "response",
    "output",
    "instructions",
    "candidateCount",
];

fn json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        "\\PC{0,12}".prop_map(Value::String),
        prop::sample::select(KEYS).prop_map(|k| Value::String(k.to_owned())),
    ];
    leaf.prop_recursive(5, 64, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((prop::sample::select(KEYS), inner), 0..6).prop_map(|fields| {
                Value::Object(
                    fields
                        .into_iter()
                        .map(|(k, v)| (k.to_owned(), v))
                        .collect::<Map<_, _>>(),
                )
            }),
        ]
    })
}

/// Every event of `bytes` fed in pieces cut at `cuts`, then finished.
fn events(bytes: &[u8], cuts: &[usize], limit: usize) -> Vec<(String, String)> {
    let mut reader = SseReader::with_limit(limit);
    let mut out = Vec::new();
    let mut at = 0;
    let mut points: Vec<usize> = cuts.iter().map(|c| c % (bytes.len() + 1)).collect();
    points.sort_unstable();
    points.push(bytes.len());
    for point in points {
        let end = point.max(at);
        let fed = reader.feed(&bytes[at..end], |e, _| {
            out.push((e.name.to_owned(), e.data.to_owned()));
        });
        at = end;
        if fed.is_err() {
            return out;
        }
    }
    reader.finish(|e, _| out.push((e.name.to_owned(), e.data.to_owned())));
    out
}

proptest! {
    #![proptest_config(config(512))]

    /// Any bytes, read in any pieces, give the same events as read at once — and never panic.
    #[test]
    fn the_sse_reader_reads_any_bytes_the_same_in_any_pieces(
        bytes in prop_oneof![
            prop::collection::vec(any::<u8>(), 0..512),
            prop::collection::vec(
                prop::sample::select(vec!["data: ", "event: ", ":", "\n", "\r", "\r\n",
                    "{\"a\":1}", "x", "id: 1", "retry: 5", "é", "\u{feff}"]),
                0..64,
            ).prop_map(|parts| parts.concat().into_bytes()),
        ],
        cuts in prop::collection::vec(any::<usize>(), 0..8),
    ) {
        let whole = events(&bytes, &[], usize::MAX);
        prop_assert_eq!(events(&bytes, &cuts, usize::MAX), whole);
        // A small limit refuses large events, never panics.
        let _ = events(&bytes, &cuts, 16);
    }
}

proptest! {
    #![proptest_config(config(256))]

    /// Any JSON body: every request and answer converter of every format returns (a value or
    /// a clear error), never panics.
    #[test]
    fn the_converters_take_any_json(value in json(), model in "\\PC{0,8}") {
        for w in WIRES {
            if let Ok(hub) = wire::to_hub_request(w, &value) {
                for to in WIRES {
                    let _ = wire::from_hub_request(to, &hub, &model, false);
                    let _ = wire::from_hub_request(to, &hub, &model, true);
                }
            }
            let hub = wire::to_hub_answer(w, &value);
            let _ = wire::hub_answer_text(&hub);
            let _ = wire::answer_usage(w, &value);
            for to in WIRES {
                let _ = wire::from_hub_answer(to, &value, &model);
                let _ = wire::from_hub_answer(to, &hub, &model);
                let _ = wire::from_hub_request(to, &value, &model, true);
            }
            let _ = tollgate::relay::measure::estimate::request(
                &value,
                tollgate::relay::measure::estimate::ImageRule::for_model(&model),
            );
        }
    }

    /// Any sequence of events: every stream decoder, and every encoder fed what it decoded,
    /// never panics.
    #[test]
    fn the_stream_decoders_and_encoders_take_any_events(
        events in prop::collection::vec(
            (
                prop::sample::select(vec!["", "message_start", "content_block_start",
                    "content_block_delta", "content_block_stop", "message_delta",
                    "message_stop", "error", "ping", "x"]),
                prop_oneof![json().prop_map(|v| v.to_string()), "\\PC{0,16}"],
            ),
            0..12,
        ),
    ) {
        for from in WIRES {
            let mut decoder = wire::decoder(from);
            let mut encoders: Vec<_> = WIRES
                .iter()
                .map(|to| {
                    wire::encoder(*to, EncodeCtx {
                        model: "m".into(),
                        prompt_estimate: 1,
                        include_usage: true,
                    })
                })
                .collect();
            let mut out = Vec::new();
            for (name, data) in &events {
                for piece in decoder.event(name, data) {
                    for encoder in &mut encoders {
                        encoder.piece(&piece, &mut out);
                    }
                }
                let _ = decoder.done();
            }
            for encoder in &mut encoders {
                encoder.end(&mut out);
            }
        }
    }

    /// Masking never panics, and no key of `keys` survives it whole.
    #[test]
    fn masking_takes_any_text_and_hides_every_key(
        text in "\\PC{0,64}",
        keys in prop::collection::vec("[A-Za-z0-9|:-]{0,24}", 0..3),
    ) {
        let with_keys = format!("{text} {} {text}", keys.join(" "));
        let masked = tollgate::relay::pipeline::redact::redact(&with_keys, keys.iter().map(String::as_str));
        for key in keys.iter().map(|k| k.trim()).filter(|k| k.len() >= 8) {
            prop_assert!(!masked.contains(key), "{key} in {masked}");
        }
    }

    /// Any value for any option: the validator answers (normalised, or a clear error), and a
    /// snapshot built from whatever the database holds (even values the validator would
    /// refuse) never panics.
    #[test]
    fn the_option_validators_take_any_value(
        value in prop_oneof![
            "\\PC{0,24}",
            json().prop_map(|v| v.to_string()),
            any::<i64>().prop_map(|n| n.to_string()),
            any::<f64>().prop_map(|n| n.to_string()),
        ],
        pick in any::<prop::sample::Index>(),
    ) {
        let keys: Vec<&str> = catalog::CATALOG.iter().map(|d| d.key).collect();
        let key = keys[pick.index(keys.len())];
        let _ = catalog::normalize(key, &value);
        let stored = keys.iter().map(|k| ((*k).to_owned(), value.clone())).collect();
        let snapshot = OptionsSnapshot::from_stored(stored);
        let _ = snapshot.prices().model("gpt-4o");
        let _ = snapshot.rate_limits().for_group("default");
        let _ = snapshot.sensitive_words().find(["hello"]);
        let _ = snapshot.group_usable("default", "vip");
    }
}
