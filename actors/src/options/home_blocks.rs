//! The shapes of the home page's JSON blocks (spec 02 §3: Providers, CustemNavLinks,
//! TypingList, Advantages, ModelDescriptions), checked on save so that the public
//! `GET /api/option/get*` routes only ever serve what the console can render.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde::de::DeserializeOwned;

/// A home page block stored as JSON text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Block {
    /// `[{id?, name, icon?, includes?: [model]}]`.
    Providers,
    /// `[{text, item_key, url}]`.
    NavLinks,
    /// `[text]`.
    TypingList,
    /// `[{id?, title, description, icon?, color?}]`.
    Advantages,
    /// `{model: text}`.
    ModelDescriptions,
}

/// An id the console accepts: a number or a string.
#[derive(Deserialize)]
#[serde(untagged)]
enum Id {
    Number(#[expect(dead_code, reason = "read only to check the shape")] f64),
    Text(#[expect(dead_code, reason = "read only to check the shape")] String),
}

#[derive(Deserialize)]
#[expect(dead_code, reason = "read only to check the shape")]
struct Provider {
    id: Option<Id>,
    name: String,
    icon: Option<String>,
    includes: Option<Vec<String>>,
}

#[derive(Deserialize)]
#[expect(dead_code, reason = "read only to check the shape")]
struct NavLink {
    text: String,
    item_key: String,
    url: String,
}

#[derive(Deserialize)]
#[expect(dead_code, reason = "read only to check the shape")]
struct Advantage {
    id: Option<Id>,
    title: String,
    description: String,
    icon: Option<String>,
    color: Option<String>,
}

/// Where and why `value` does not have `block`'s shape (`[1].title: missing field ...`);
/// `Ok` when it has. Fields beyond the shape are allowed (the console ignores them).
pub fn check(block: Block, value: &str) -> Result<(), String> {
    match block {
        Block::Providers => shape::<Vec<Provider>>(value),
        Block::NavLinks => shape::<Vec<NavLink>>(value),
        Block::TypingList => shape::<Vec<String>>(value),
        Block::Advantages => shape::<Vec<Advantage>>(value),
        Block::ModelDescriptions => shape::<BTreeMap<String, String>>(value),
    }
}

fn shape<T: DeserializeOwned>(value: &str) -> Result<(), String> {
    let de = &mut serde_json::Deserializer::from_str(value);
    match serde_path_to_error::deserialize::<_, T>(de) {
        Ok(_) => Ok(()),
        Err(e) => {
            let path = e.path().to_string();
            let inner = e.into_inner();
            // serde_json's own message ends with "at line L column C": the path says where.
            let reason = inner.to_string();
            let reason = reason.split(" at line ").next().unwrap_or(&reason);
            Err(if path == "." {
                reason.to_owned()
            } else {
                format!("{path}: {reason}")
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shapes_the_console_renders_pass() {
        let cases = [
            (
                Block::Providers,
                r#"[{"id":1,"name":"OpenAI","icon":"openai","includes":["gpt-4o"]},{"name":"Anthropic"}]"#,
            ),
            (
                Block::NavLinks,
                r#"[{"text":"Docs","item_key":"docs","url":"https://docs.example.com"}]"#,
            ),
            (Block::TypingList, r#"["fast","cheap"]"#),
            (
                Block::Advantages,
                r#"[{"id":"a","title":"Fast","description":"Rust","icon":"zap","color":"red","extra":1}]"#,
            ),
            (
                Block::ModelDescriptions,
                r#"{"gpt-4o":"OpenAI's flagship"}"#,
            ),
            (Block::Providers, "[]"),
            (Block::ModelDescriptions, "{}"),
        ];
        for (block, value) in cases {
            assert_eq!(check(block, value), Ok(()), "{block:?} {value}");
        }
    }

    #[test]
    fn a_wrong_shape_names_where_it_is_wrong() {
        assert_eq!(
            check(
                Block::Advantages,
                r#"[{"title":"a","description":"b"},{"title":"c"}]"#
            ),
            Err("[1]: missing field `description`".to_owned())
        );
        assert_eq!(
            check(Block::TypingList, r#"["a",2]"#),
            Err("[1]: invalid type: integer `2`, expected a string".to_owned())
        );
        assert!(check(Block::Providers, r#"{"name":"x"}"#).is_err());
        assert!(check(Block::NavLinks, r#"[{"text":"x","url":"https://a"}]"#).is_err());
        assert!(check(Block::ModelDescriptions, r#"{"m":["not text"]}"#).is_err());
        assert!(check(Block::Providers, r#"[{"name":"x","id":true}]"#).is_err());
    }
}
