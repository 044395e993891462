//! Unit tests of the lenient field types read from bytes.

use serde::Deserialize;
use serde_json::Value;

use super::{Present, Sorted, Verbatim, parse};

#[test]
fn sorted_writes_what_a_value_writes() {
    for text in [
        r#"{"z":1,"a":{"y":[{"b":1,"a":2}],"c":null},"m":"x\"y\u00e9"}"#,
        r#"{"k":1,"b":2,"k":3}"#,
        r#"[{"b":1,"a":{"d":1,"d":{"f":1,"e":2}}},2.5,-1,true,"s",null]"#,
        r#"{"a":1,"b":2}"#,
        "{}",
        "[]",
        "18446744073709551615",
    ] {
        let verbatim: Verbatim = serde_json::from_str(text).expect("JSON");
        let value: Value = serde_json::from_str(text).expect("JSON");
        assert_eq!(Sorted(&verbatim).to_json(), value.to_string(), "{text}");
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Holder {
    usage: Present<Counted>,
}

#[derive(Debug, Default, Deserialize, PartialEq)]
#[serde(default)]
struct Counted {
    n: Option<i64>,
}

#[test]
fn present_tells_absent_from_any_value() {
    let read = |text: &str| parse::<Holder>(text.as_bytes()).map(|h| h.usage.0);
    assert_eq!(
        read(r#"{"usage":{"n":3}}"#),
        Some(Some(Counted { n: Some(3) }))
    );
    for other in ["null", "5", "\"x\"", "[1]"] {
        let text = format!(r#"{{"usage":{other}}}"#);
        assert_eq!(read(&text), Some(Some(Counted::default())), "{text}");
    }
    assert_eq!(read("{}"), Some(None));
    // Not an object at all reads as the default; not JSON, or a repeated field, as nothing.
    assert_eq!(read("[1]"), Some(None));
    assert_eq!(read("{"), None);
    assert_eq!(read(r#"{"usage":1,"usage":2}"#), None);
}
