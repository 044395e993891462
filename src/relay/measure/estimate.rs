//! The prompt estimate that sizes a request's reservation: an upper bound of its prompt tokens,
//! from every part of the request, made without a tokenizer and without fetching anything.
//!
//! - **Text**, anywhere in the body (messages, tool definitions and calls, Responses `input`
//!   and `instructions`, completions `prompt`, embeddings `input`, rerank `query`/`documents`):
//!   characters weighted per script ([`text`]); the weights over-estimate both o200k_base and
//!   cl100k_base on a multilingual sample (see the tests), CJK and the scripts that byte-level
//!   BPE splits finely included.
//! - **Images**: a base64 image is sized from its header (the `imagesize` crate) and counted by
//!   the provider's documented rule ([`ImageRule`], chosen from the model name); an image named
//!   by URL is never fetched here and counts as the provider's largest image.
//! - **Audio**: base64 audio counts 32 tokens per second (Gemini's rate, the highest of the
//!   providers), its duration bounded from its size (8 kB/s for WAV, 2 kB/s otherwise).
//! - **Files** (PDFs and other documents): 4,096 tokens each, new-api's figure; a long PDF can
//!   cost more, which the settlement charges (the reservation is not the price).
//! - Framing: 3 tokens per message and 8 per tool, as OpenAI counts them.
//!
//! The exact count (the model's tokenizer) is only made when an answer brings no usage.

use base64::Engine;
use serde_json::Value;

/// Tokens of an image the estimate cannot size (a URL, or an unreadable header), per rule.
const UNSIZED_IMAGE: [i64; 4] = [1_445, 48_169, 1_600, 4_128];

/// Tokens per message of chat framing (OpenAI's count).
const PER_MESSAGE: i64 = 3;

/// Tokens per tool definition beyond its text.
const PER_TOOL: i64 = 8;

/// Tokens counted for a file part (PDF or other document).
const PER_FILE: i64 = 4_096;

/// Audio tokens per second (Gemini's documented rate; OpenAI's is lower).
const AUDIO_TOKENS_PER_SECOND: i64 = 32;

/// How a provider counts image tokens, chosen from the model name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageRule {
    /// OpenAI's tiles: fit in 2048², shortest side ≤ 768, 170 per 512² tile + 85 (`detail:
    /// low`: 85).
    OpenAiTiles,
    /// The same tiles at gpt-4o-mini's price-parity multiplier: 5,667 per tile + 2,833.
    OpenAiMiniTiles,
    /// Anthropic: width × height / 750 after the long edge is fitted to 1,568, at most 1,600.
    Anthropic,
    /// Gemini: 258 for an image within 384², else 258 per 768² tile.
    Gemini,
}

impl ImageRule {
    /// The rule of `model`'s provider.
    pub fn for_model(model: &str) -> ImageRule {
        // Every request asks (before knowing whether it has images): no lowercased copy.
        let has = |part: &str| {
            model
                .as_bytes()
                .windows(part.len())
                .any(|w| w.eq_ignore_ascii_case(part.as_bytes()))
        };
        if has("claude") {
            ImageRule::Anthropic
        } else if has("gemini") || has("gemma") {
            ImageRule::Gemini
        } else if has("4o-mini") || has("4.1-nano") {
            ImageRule::OpenAiMiniTiles
        } else {
            ImageRule::OpenAiTiles
        }
    }

    fn largest(self) -> i64 {
        UNSIZED_IMAGE[self as usize]
    }

    /// Tokens of a `width` × `height` image (`low`: OpenAI's `detail: low`).
    pub fn tokens(self, width: u64, height: u64, low: bool) -> i64 {
        let (w, h) = (width.max(1) as f64, height.max(1) as f64);
        match self {
            ImageRule::OpenAiTiles | ImageRule::OpenAiMiniTiles => {
                let (base, tile) = if self == ImageRule::OpenAiTiles {
                    (85, 170)
                } else {
                    (2_833, 5_667)
                };
                if low {
                    return base;
                }
                let fit = (2048.0 / w.max(h)).min(1.0);
                let (w, h) = (w * fit, h * fit);
                let short = (768.0 / w.min(h)).min(1.0);
                let (w, h) = (w * short, h * short);
                let tiles = (w / 512.0).ceil() * (h / 512.0).ceil();
                base + tile * tiles as i64
            }
            ImageRule::Anthropic => {
                let fit = (1568.0 / w.max(h)).min(1.0);
                let tokens = (w * fit * h * fit / 750.0).ceil() as i64;
                tokens.min(1_600)
            }
            ImageRule::Gemini => {
                if w <= 384.0 && h <= 384.0 {
                    258
                } else {
                    258 * ((w / 768.0).ceil() * (h / 768.0).ceil()) as i64
                }
            }
        }
    }
}

/// Estimated tokens of `text`. ASCII is cut into the pieces byte-level BPE makes of it (words
/// of up to 4 lower-case letters, 2 capitals or 3 digits; each punctuation mark; a run of
/// spaces), plus an eighth for safety; every other character is weighted by its script.
pub fn text(text: &str) -> i64 {
    let mut ascii = AsciiPieces::default();
    // Hundredths of a token, non-ASCII characters.
    let mut hundredths: u64 = 0;
    for c in text.chars() {
        if c.is_ascii() {
            ascii.push(c);
        } else {
            ascii.pieces += u64::from(ascii.run > 0);
            ascii.run = 0;
            ascii.class = Class::Other;
            hundredths += char_weight(c);
        }
    }
    let pieces = ascii.pieces + u64::from(ascii.run > 0);
    let tokens = pieces + pieces.div_ceil(8) + hundredths.div_ceil(100);
    i64::try_from(tokens).unwrap_or(i64::MAX)
}

/// The class of an ASCII character, for cutting pieces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Class {
    #[default]
    Other,
    Lower,
    Upper,
    Digit,
    Space,
}

/// Pieces of ASCII text counted so far, and the piece being read.
#[derive(Debug, Default)]
struct AsciiPieces {
    /// Finished pieces.
    pieces: u64,
    /// Characters in the current piece (0: none open).
    run: u32,
    /// Class of the previous character.
    class: Class,
}

impl AsciiPieces {
    fn push(&mut self, c: char) {
        let class = match c {
            'a'..='z' => Class::Lower,
            'A'..='Z' => Class::Upper,
            '0'..='9' => Class::Digit,
            ' ' | '\t' => Class::Space,
            _ => Class::Other,
        };
        let (continues, max) = match (self.class, class) {
            // A capital starts a word that goes on in lower case ("Pricing").
            (Class::Lower | Class::Upper, Class::Lower) => (true, 4),
            (Class::Upper, Class::Upper) => (true, 2),
            (Class::Digit, Class::Digit) => (true, 3),
            // A single space joins the word after it; a run of them is one piece.
            (Class::Space, Class::Space) => (true, u32::MAX),
            (Class::Space, Class::Lower | Class::Upper | Class::Digit) => (self.run == 1, 4),
            _ => (false, 1),
        };
        if continues && self.run < max {
            self.run += 1;
        } else {
            self.pieces += u64::from(self.run > 0);
            self.run = 1;
        }
        self.class = class;
    }
}

/// Hundredths of a token one non-ASCII character may cost in o200k_base or cl100k_base,
/// whichever is more. Byte-level BPE never spends more than one token per UTF-8 byte; the
/// scripts it learned well cost much less.
fn char_weight(c: char) -> u64 {
    match u32::from(c) {
        // Latin-1 and Latin Extended (accents).
        0x80..=0x24F => 70,
        // Cyrillic.
        0x400..=0x52F => 80,
        // Arabic.
        0x600..=0x6FF | 0x750..=0x77F => 110,
        // Greek, Armenian, Hebrew: cl100k spends about a token per letter.
        0x370..=0x3FF | 0x530..=0x5FF => 130,
        // Indic scripts, Thai, Lao, Tibetan, Myanmar, Georgian and others byte-split often.
        0x900..=0x10FF => 130,
        // Hangul jamo and syllables.
        0x1100..=0x11FF | 0xAC00..=0xD7AF => 150,
        // CJK punctuation, kana, CJK ideographs and full-width forms: rare ideographs take
        // two or three tokens in cl100k.
        0x3000..=0x30FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF => 150,
        0xFF00..=0xFFEF => 150,
        // Everything else (emoji, symbols, other scripts): up to a token per byte.
        _ => 100 * c.len_utf8() as u64,
    }
}

/// The prompt estimate of an OpenAI-style request body (chat, completions, embeddings,
/// responses, rerank, or a hub request converted from another wire) for a model whose images
/// count by `rule`.
pub fn request(body: &Value, rule: ImageRule) -> i64 {
    let mut estimate = Estimate::new(rule);
    if let Value::Object(map) = body {
        for (key, value) in map {
            estimate.field(key, value);
        }
    }
    estimate.total()
}

/// A prompt estimate built field by field (for callers that parsed only some fields).
#[derive(Debug, Clone, Copy)]
pub struct Estimate {
    rule: ImageRule,
    tokens: i64,
}

impl Estimate {
    /// An empty estimate for a model whose images count by `rule`.
    pub fn new(rule: ImageRule) -> Estimate {
        Estimate { rule, tokens: 0 }
    }

    fn add(&mut self, tokens: i64) {
        self.tokens = self.tokens.saturating_add(tokens);
    }

    /// Adds the chat messages `messages`, framing included.
    pub fn messages(&mut self, messages: &[Value]) {
        self.add(PER_MESSAGE.saturating_mul(messages.len() as i64 + 1));
        for message in messages {
            self.add(value_tokens(message, self.rule));
        }
    }

    /// Adds the top-level field `key` of a request.
    pub fn field(&mut self, key: &str, value: &Value) {
        match (key, value) {
            ("model" | "user" | "metadata" | "stream_options", _) => {}
            ("messages", Value::Array(messages)) => self.messages(messages),
            // Tool definitions are mostly keys (property names) and schema: all of it.
            ("tools" | "functions", _) => {
                let count = value.as_array().map_or(0, Vec::len) as i64;
                self.add(PER_TOOL.saturating_mul(count));
                self.add(text(&value.to_string()));
            }
            _ => self.add(value_tokens(value, self.rule)),
        }
    }

    /// The estimate.
    pub fn total(self) -> i64 {
        self.tokens
    }
}

/// Tokens of every string in `value`, media parts counted as media.
fn value_tokens(value: &Value, rule: ImageRule) -> i64 {
    match value {
        Value::String(s) => text(s),
        Value::Array(items) => items
            .iter()
            .fold(0i64, |n, v| n.saturating_add(value_tokens(v, rule))),
        Value::Object(map) => {
            if let Some(tokens) = media_tokens(map, rule) {
                return tokens;
            }
            map.values()
                .fold(0i64, |n, v| n.saturating_add(value_tokens(v, rule)))
        }
        _ => 0,
    }
}

/// Tokens of a media part (`image_url`, `input_image`, `input_audio`, `file`/`input_file`),
/// `None` for any other object.
fn media_tokens(part: &serde_json::Map<String, Value>, rule: ImageRule) -> Option<i64> {
    let kind = part.get("type").and_then(Value::as_str).unwrap_or("");
    match kind {
        "image_url" | "input_image" | "image" => {
            let (url, low) = match part.get("image_url") {
                Some(Value::Object(o)) => (
                    o.get("url").and_then(Value::as_str),
                    o.get("detail").and_then(Value::as_str) == Some("low"),
                ),
                Some(Value::String(url)) => (
                    Some(url.as_str()),
                    part.get("detail").and_then(Value::as_str) == Some("low"),
                ),
                _ => (None, false),
            };
            Some(url.map_or(rule.largest(), |u| image_tokens(u, rule, low)))
        }
        "input_audio" => {
            let audio = part.get("input_audio");
            let data = audio.and_then(|a| a.get("data")).and_then(Value::as_str);
            let wav = audio.and_then(|a| a.get("format")).and_then(Value::as_str) == Some("wav");
            Some(data.map_or(0, |d| audio_tokens(d, wav)))
        }
        "file" | "input_file" => Some(PER_FILE),
        _ => None,
    }
}

/// Tokens of an image given as a URL: a `data:` URL is sized from its header, anything else
/// counts as the rule's largest image (never fetched).
fn image_tokens(url: &str, rule: ImageRule, low: bool) -> i64 {
    let Some((_, data)) = url
        .strip_prefix("data:")
        .and_then(|rest| rest.split_once(";base64,"))
    else {
        return if low && matches!(rule, ImageRule::OpenAiTiles | ImageRule::OpenAiMiniTiles) {
            rule.tokens(1, 1, true)
        } else {
            rule.largest()
        };
    };
    // The header of every common format sits in its first 64 KiB (JPEG's after EXIF).
    let head = &data.as_bytes()[..data.len().min(87_384) / 4 * 4];
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(head)
        .unwrap_or_default();
    match imagesize::blob_size(&bytes) {
        Ok(size) => rule.tokens(size.width as u64, size.height as u64, low),
        Err(_) => rule.largest(),
    }
}

/// Tokens of base64 audio: its duration bounded from its decoded size.
fn audio_tokens(data: &str, wav: bool) -> i64 {
    let bytes = (data.len() as i64 / 4).saturating_mul(3);
    let bytes_per_second = if wav { 8_000 } else { 2_000 };
    let seconds = bytes / bytes_per_second + 1;
    seconds.saturating_mul(AUDIO_TOKENS_PER_SECOND)
}

#[cfg(test)]
mod tests;
