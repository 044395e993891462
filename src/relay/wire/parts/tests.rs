//! Unit tests of the content-part checks.

use serde_json::json;

use super::*;

fn hub(part: Value) -> Value {
    json!({"messages": [{"role": "system", "content": "be brief"},
        {"role": "user", "content": [{"type": "text", "text": "look"}, part]}]})
}

#[test]
fn each_wire_refuses_what_it_cannot_take_and_names_the_part() {
    let pdf = json!({"type": "file", "file": {"filename": "report.pdf",
        "file_data": "data:application/pdf;base64,JVBERi0="}});
    let audio = json!({"type": "input_audio", "input_audio": {"data": "UklG", "format": "wav"}});
    let by_id = json!({"type": "file", "file": {"file_id": "file-abc"}});
    let xml = json!({"type": "file", "file": {"file_data": "data:application/xml;base64,PA=="}});
    let marker = unsupported("a document given by Files API id (file_011)".into());
    let taken = |wire: Wire, part: &Value| check(wire, &hub(part.clone())).is_ok();
    for wire in [
        Wire::OpenAi,
        Wire::Responses,
        Wire::Anthropic,
        Wire::Gemini,
        Wire::Converse,
    ] {
        assert!(taken(wire, &pdf), "{wire:?} takes a PDF");
    }
    assert!(!taken(Wire::Cohere, &pdf));
    assert!(taken(Wire::OpenAi, &audio) && taken(Wire::Gemini, &audio));
    for wire in [
        Wire::Responses,
        Wire::Anthropic,
        Wire::Converse,
        Wire::Cohere,
    ] {
        assert!(!taken(wire, &audio), "{wire:?} takes no audio");
    }
    assert!(taken(Wire::OpenAi, &by_id) && !taken(Wire::Gemini, &by_id));
    assert!(taken(Wire::Gemini, &xml) && !taken(Wire::Converse, &xml));
    assert!(!taken(Wire::Anthropic, &xml));
    for wire in [Wire::OpenAi, Wire::Anthropic, Wire::Gemini] {
        assert!(!taken(wire, &marker));
    }
    let e = check(Wire::Cohere, &hub(pdf)).err().map(|e| e.0);
    assert_eq!(
        e.as_deref(),
        Some(
            "messages[1].content[1]: a file part (\"report.pdf\", application/pdf) cannot be \
             sent to a Cohere model: Cohere's chat takes only text and images (its documents \
             field takes text, not files)"
        )
    );
    let e = check(Wire::Anthropic, &hub(marker)).err().map(|e| e.0);
    assert!(
        e.as_deref()
            .is_some_and(|e| e.contains("a document given by Files API id (file_011)")),
        "{e:?}"
    );
}
