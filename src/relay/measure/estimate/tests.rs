use serde_json::json;
use tiktoken_rs::{cl100k_base_singleton, o200k_base_singleton};

use super::*;

/// A multilingual sample: prose in Latin, Cyrillic, Greek, Arabic, Hebrew, Devanagari, Thai,
/// Chinese, Japanese and Korean, plus code, numbers, an identifier soup and emoji.
const SAMPLE: &[&str] = &[
    "The quick brown fox jumps over the lazy dog. Pricing is per token, billed monthly.",
    "Съешь же ещё этих мягких французских булок, да выпей чаю. Тарифы указаны за токен.",
    "Ξεσκεπάζω την ψυχοφθόρα βδελυγμία. Η χρέωση γίνεται ανά μονάδα.",
    "نص حكيم له سر قاطع وذو شأن عظيم مكتوب على ثوب أخضر ومغلف بجلد أزرق",
    "דג סקרן שט בים מאוכזב ולפתע מצא חברה נחמדה",
    "ऋषियों को सताने वाले दुष्ट राक्षसों के राजा रावण का सर्वनाश करने वाले विष्णुवतार भगवान श्रीराम",
    "เป็นมนุษย์สุดประเสริฐเลิศคุณค่า กว่าบรรดาฝูงสัตว์เดรัจฉาน",
    "我能吞下玻璃而不伤身体。价格按每个词元计费，每月结算。龘靐齉爩",
    "いろはにほへと ちりぬるを わかよたれそ つねならむ。料金はトークン単位です。",
    "키스의 고유조건은 입술끼리 만나야 하고 특별한 기술은 필요치 않다.",
    "fn main() {\n    let total: i64 = items.iter().map(|x| x.price * 1_000).sum();\n}",
    "3.14159265358979 2718281828 1234567890 0xDEADBEEF 192.168.001.254",
    "aZ9_x-Q7kP2mVt8LwR4s_JhN3cB6yU1eD5fG0iO-XqW",
    "Emoji 😀🎉🚀👍🏽 and symbols ∑∫√≈≠≤≥ ← → ✓",
];

#[test]
fn the_text_estimate_over_estimates_o200k_and_cl100k_on_every_script() {
    let (o200k, cl100k) = (o200k_base_singleton(), cl100k_base_singleton());
    for sample in SAMPLE {
        let estimate = text(sample);
        let o = i64::try_from(o200k.encode_ordinary(sample).len()).expect("fits");
        let c = i64::try_from(cl100k.encode_ordinary(sample).len()).expect("fits");
        assert!(
            estimate >= o && estimate >= c,
            "{sample:?}: estimate {estimate} < o200k {o} / cl100k {c}"
        );
        assert!(
            estimate <= 3 * o.max(c) + 4,
            "{sample:?}: estimate {estimate} is far above o200k {o} / cl100k {c}"
        );
    }
}

fn png(width: u32, height: u32) -> String {
    // A PNG signature and IHDR chunk are all a header reader needs.
    let mut bytes = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
    bytes.extend_from_slice(&width.to_be_bytes());
    bytes.extend_from_slice(&height.to_be_bytes());
    bytes.extend_from_slice(&[8, 2, 0, 0, 0, 0, 0, 0, 0]);
    let b64 = base64::engine::general_purpose::STANDARD.encode(bytes);
    format!("data:image/png;base64,{b64}")
}

#[test]
fn images_are_sized_from_their_header_by_the_providers_rule() {
    // OpenAI: 1024 × 1024 → shortest side 768 → 768 × 768 → 4 tiles: 85 + 4 × 170 = 765.
    assert_eq!(ImageRule::OpenAiTiles.tokens(1024, 1024, false), 765);
    assert_eq!(ImageRule::OpenAiTiles.tokens(4096, 4096, true), 85);
    // 2048 × 4096 → fit 1024 × 2048 → 768 × 1536 → 2 × 3 tiles = 85 + 6 × 170 = 1105.
    assert_eq!(ImageRule::OpenAiTiles.tokens(2048, 4096, false), 1_105);
    // Anthropic: 1000 × 1000 / 750 = 1334; large images stop at 1600.
    assert_eq!(ImageRule::Anthropic.tokens(1000, 1000, false), 1_334);
    assert_eq!(ImageRule::Anthropic.tokens(8000, 8000, false), 1_600);
    // Gemini: small images 258, else 258 per 768² tile.
    assert_eq!(ImageRule::Gemini.tokens(300, 200, false), 258);
    assert_eq!(ImageRule::Gemini.tokens(1000, 1000, false), 4 * 258);

    let body = |url: String| {
        json!({"model": "gpt-4o", "messages": [{"role": "user", "content": [
            {"type": "image_url", "image_url": {"url": url}}]}]})
    };
    let framing = 2 * PER_MESSAGE + text("user");
    assert_eq!(
        request(&body(png(1024, 1024)), ImageRule::OpenAiTiles),
        765 + framing,
        "a base64 image is sized, not counted as text"
    );
    assert_eq!(
        request(
            &body("https://example.com/a.png".into()),
            ImageRule::OpenAiTiles
        ),
        1_445 + framing,
        "a URL image counts as the largest image, unfetched"
    );
    assert_eq!(
        request(
            &body("data:image/png;base64,AAAA".into()),
            ImageRule::Anthropic
        ),
        1_600 + framing,
        "an unreadable header counts as the largest image"
    );
}

#[test]
fn every_part_of_a_request_counts() {
    let plain = json!({"model": "gpt-4o", "messages": [{"role": "user", "content": "hello"}]});
    let base = request(&plain, ImageRule::OpenAiTiles);
    let tools = json!({"model": "gpt-4o", "messages": [{"role": "user", "content": "hello"}],
        "tools": [{"type": "function", "function": {"name": "get_weather",
            "description": "Weather of a city", "parameters": {"type": "object",
            "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]});
    assert!(
        request(&tools, ImageRule::OpenAiTiles) >= base + PER_TOOL + 20,
        "tool definitions count"
    );
    let responses = json!({"model": "gpt-4o", "instructions": "Answer in French, briefly.",
        "input": [{"role": "user", "content": [{"type": "input_text", "text": "hello"}]}]});
    assert!(
        request(&responses, ImageRule::OpenAiTiles) >= text("Answer in French, briefly.") + 2,
        "Responses instructions and input count"
    );
    // 16 kB of base64 MP3 → 12 kB → 6 s (+1) × 32 = 224 tokens.
    let audio = json!({"model": "gpt-4o-audio-preview", "messages": [{"role": "user", "content": [
        {"type": "input_audio", "input_audio": {"data": "A".repeat(16_000), "format": "mp3"}}]}]});
    assert_eq!(
        request(&audio, ImageRule::OpenAiTiles),
        224 + 2 * PER_MESSAGE + text("user")
    );
    let file = json!({"model": "claude-x", "messages": [{"role": "user", "content": [
        {"type": "file", "file": {"file_data": "JVBERi0xLjQK"}}]}]});
    assert_eq!(
        request(&file, ImageRule::Anthropic),
        PER_FILE + 2 * PER_MESSAGE + text("user")
    );
}

#[test]
fn the_rule_follows_the_model_name() {
    assert_eq!(
        ImageRule::for_model("claude-sonnet-4-5"),
        ImageRule::Anthropic
    );
    assert_eq!(ImageRule::for_model("gemini-2.5-pro"), ImageRule::Gemini);
    assert_eq!(
        ImageRule::for_model("gpt-4o-mini"),
        ImageRule::OpenAiMiniTiles
    );
    assert_eq!(ImageRule::for_model("gpt-4o"), ImageRule::OpenAiTiles);
    // Whatever the case, and a name shorter than what is looked for.
    assert_eq!(ImageRule::for_model("Claude-3-Opus"), ImageRule::Anthropic);
    assert_eq!(
        ImageRule::for_model("GPT-4O-MINI"),
        ImageRule::OpenAiMiniTiles
    );
    assert_eq!(ImageRule::for_model("Gemma-3"), ImageRule::Gemini);
    assert_eq!(ImageRule::for_model("o1"), ImageRule::OpenAiTiles);
}
