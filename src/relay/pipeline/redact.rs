//! Upstream error text never carries a channel's key to the client, the log or the channel's
//! stored error: providers echo the key they were sent, whole ("invalid key sk-…") or masked in
//! their own way (OpenAI's "Incorrect API key provided: sk-abc1***…***wxyz"), and both are
//! recognisable. [`redact`] replaces every word of the text that shows a recognisable part of
//! a key with `*****`. It runs on error text only, never per event of an answer.

/// What replaces a word that shows part of a key.
pub const MASK: &str = "*****";

/// Consecutive key characters that identify it when they appear anywhere in a word.
const RUN: usize = 8;
/// Leading key characters that, with a masking character or the key's tail in the same word,
/// mark a provider's masked echo of it.
const HEAD: usize = 3;
/// Trailing key characters providers show after their mask.
const TAIL: usize = 4;
/// Keys shorter than this are not looked for.
const SHORTEST: usize = 4;

/// The parts of a channel key field worth looking for: each line, and each `|`- or
/// `:`-separated part of composite keys (e.g. `access_key|secret_key|region`).
fn parts<'a>(keys: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
    let mut out = Vec::new();
    for key in keys {
        let key = key.trim();
        // A key this short is a placeholder, not a secret a word could be recognised by.
        if key.len() < SHORTEST {
            continue;
        }
        out.push(key);
        if key.contains(['|', ':']) {
            out.extend(
                key.split(['|', ':'])
                    .map(str::trim)
                    .filter(|p| p.len() >= RUN),
            );
        }
    }
    out
}

/// Whether `word` shows a recognisable part of `key`.
fn shows(word: &str, key: &str) -> bool {
    if key.len() < RUN {
        // Too short to recognise in pieces: only the whole key.
        return word.contains(key);
    }
    let bytes = word.as_bytes();
    if bytes.len() >= RUN
        && bytes
            .windows(RUN)
            .any(|w| std::str::from_utf8(w).is_ok_and(|w| key.contains(w)))
    {
        return true;
    }
    let masked = word.contains(['*', '…']) || word.contains("...");
    let head = key.get(..HEAD).is_some_and(|h| word.starts_with(h));
    let tail = key
        .get(key.len() - TAIL..)
        .is_some_and(|t| word.ends_with(t));
    (masked && (head || tail)) || (head && tail)
}

/// `text` with every word that shows part of one of `keys` replaced by [`MASK`] (a word: a run
/// without whitespace, quotes or brackets, trailing punctuation aside).
pub fn redact<'a>(text: &str, keys: impl IntoIterator<Item = &'a str>) -> String {
    let keys = parts(keys);
    if keys.is_empty() {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while !rest.is_empty() {
        let start = rest.find(|c: char| !is_separator(c)).unwrap_or(rest.len());
        out.push_str(&rest[..start]);
        rest = &rest[start..];
        let end = rest.find(is_separator).unwrap_or(rest.len());
        let word = &rest[..end];
        // Sentence punctuation after a key is kept: "…wxyz." → "*****."
        let core = word.trim_end_matches(['.', ',', ';', '!', '?']);
        if keys.iter().any(|k| shows(core, k)) {
            out.push_str(MASK);
            out.push_str(&word[core.len()..]);
        } else {
            out.push_str(word);
        }
        rest = &rest[end..];
    }
    out
}

fn is_separator(c: char) -> bool {
    c.is_whitespace()
        || matches!(
            c,
            '"' | '\'' | '`' | '(' | ')' | '[' | ']' | '{' | '}' | '<' | '>' | '='
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "sk-abc123def456ghi789wxyz";

    #[test]
    fn whole_keys_are_masked() {
        assert_eq!(
            redact(&format!("Incorrect API key provided: {KEY}."), [KEY]),
            "Incorrect API key provided: *****."
        );
        assert_eq!(
            redact(&format!("key=\"{KEY}\" rejected"), [KEY]),
            "key=\"*****\" rejected"
        );
        assert_eq!(redact(&format!("Bearer{KEY}"), [KEY]), "*****");
    }

    #[test]
    fn masked_echoes_and_fragments_are_masked() {
        // OpenAI's shape: the key's head, asterisks, its last four characters.
        let openai = "Incorrect API key provided: sk-abc12*************wxyz. You can find your API key at https://platform.openai.com/account/api-keys.";
        let out = redact(openai, [KEY]);
        assert!(!out.contains("wxyz") && !out.contains("sk-abc"), "{out}");
        assert!(
            out.starts_with("Incorrect API key provided: *****."),
            "{out}"
        );
        assert!(
            out.contains("https://platform.openai.com/account/api-keys"),
            "{out}"
        );
        for echo in [
            "key sk-abc...wxyz is invalid",
            "key sk-a…wxyz is invalid",
            "key sk-abc123de is invalid",
            "key ghi789wxyz is invalid",
            "key sk-ab**** is invalid",
        ] {
            let out = redact(echo, [KEY]);
            assert_eq!(out, "key ***** is invalid", "{echo}");
        }
    }

    #[test]
    fn other_text_and_other_keys_are_kept() {
        let text = "The model `gpt-4o` does not exist or you do not have access to it.";
        assert_eq!(redact(text, [KEY]), text);
        assert_eq!(redact("rate limit: 3 RPM", [KEY]), "rate limit: 3 RPM");
        let multi = format!("bad key {KEY}");
        assert_eq!(redact(&multi, ["first-key-000000", KEY]), "bad key *****");
    }

    #[test]
    fn composite_keys_are_masked_part_by_part() {
        let composite = "AKIAEXAMPLE12345|secretSECRETsecret99|us-east-1";
        let out = redact(
            "The security token AKIAEXAMPLE12345 included in the request is invalid",
            [composite],
        );
        assert_eq!(
            out,
            "The security token ***** included in the request is invalid"
        );
    }
}
