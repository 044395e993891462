//! Unit tests of the lenient field types read from bytes.

use serde::Deserialize;
use serde_json::Value;

use super::{Obj, Present, Sorted, Verbatim, parse};

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
    usage: Present<Obj<Counted>>,
}

#[derive(Debug, Default, Deserialize, PartialEq)]
#[serde(default)]
struct Counted {
    n: Option<i64>,
}

#[test]
fn present_tells_absent_from_any_value() {
    let read = |text: &str| parse::<Holder>(text.as_bytes()).map(|h| h.usage.0.map(|o| o.0));
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

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Tool<'a> {
    #[serde(borrow)]
    schema: Present<Verbatim<'a>>,
}

#[test]
fn present_verbatim_tells_null_from_absent_and_reads_strings_as_str_does() {
    let read = |text: &'static str| parse::<Tool>(text.as_bytes()).expect("JSON").schema;
    let absent = read("{}");
    assert_eq!((absent.0.is_none(), absent.value()), (true, None));
    let null = read(r#"{"schema":null}"#);
    assert_eq!(
        (null.0.as_ref(), null.value()),
        (Some(&Verbatim::Null), None)
    );
    let number = read(r#"{"schema":5}"#);
    assert_eq!((number.get(), number.or_empty()), (None, ""));
    assert_eq!(number.value().map(Verbatim::to_json).as_deref(), Some("5"));
    let text = read(r#"{"schema":"s"}"#);
    assert_eq!((text.get(), text.non_empty()), (Some("s"), Some("s")));
    assert_eq!(read(r#"{"schema":""}"#).non_empty(), None);
}

#[test]
fn tagged_reads_the_type_beside_the_other_fields() {
    #[derive(Debug, Default, Deserialize)]
    #[serde(default)]
    struct Fields<'a> {
        #[serde(borrow)]
        name: super::Str<'a>,
        n: super::Int,
    }
    type T<'a> = super::Tagged<'a, Fields<'a>>;
    // From bytes (a key spelt with escapes included) and from a parsed value alike.
    for text in [
        r#"{"name":"f","type":"function","n":2}"#,
        r#"{"\u0074ype":"function","name":"f","n":2,"other":[1]}"#,
    ] {
        let read = parse::<T>(text.as_bytes()).expect("read");
        assert_eq!(
            (read.kind.get(), read.name.get(), read.n.0),
            (Some("function"), Some("f"), Some(2))
        );
        let value: Value = serde_json::from_str(text).expect("JSON");
        let view: T = super::view(&value);
        assert_eq!(
            (view.kind.get(), view.name.get()),
            (Some("function"), Some("f"))
        );
    }
    // A `type` of another JSON type reads as absent; so does every field of a non-object.
    let read = parse::<T>(br#"{"type":5,"name":"f"}"#).expect("read");
    assert_eq!((read.kind.get(), read.name.get()), (None, Some("f")));
    let read: super::List<T> = serde_json::from_slice(br#"[5, {"type": "x"}]"#).expect("read");
    let kinds: Vec<_> = read.iter().map(|t| t.kind.get()).collect();
    assert_eq!(kinds, [None, Some("x")]);
    // A repeated field, `type` or another, refuses the object as a derived view does.
    assert!(parse::<T>(br#"{"type":"a","type":"b"}"#).is_none());
    assert!(parse::<T>(br#"{"name":"a","name":"b"}"#).is_none());
}
