//! Unit tests of the output limit written into bodies.

use super::*;

fn written(wire: Wire, body: Value, model: &str) -> Result<Value, LimitError> {
    let mut body = body;
    write(wire, &mut body, 500, model).map(|()| body)
}

#[test]
fn each_wire_gets_its_field() -> Result<(), LimitError> {
    let b = written(Wire::OpenAi, json!({"model": "gpt-4o"}), "gpt-4o")?;
    assert_eq!(b, json!({"model": "gpt-4o", "max_tokens": 500}));
    let b = written(Wire::OpenAi, json!({"max_tokens": 9000}), "o3-mini")?;
    assert_eq!(b["max_tokens"], 500);
    let b = written(Wire::OpenAi, json!({}), "o3-mini")?;
    assert_eq!(b, json!({"max_completion_tokens": 500}));
    let b = written(
        Wire::OpenAi,
        json!({"max_completion_tokens": 9000}),
        "gpt-4o",
    )?;
    assert_eq!(b, json!({"max_completion_tokens": 500}));
    let b = written(Wire::Responses, json!({}), "m")?;
    assert_eq!(b, json!({"max_output_tokens": 500}));
    let b = written(
        Wire::Gemini,
        json!({"generationConfig": {"temperature": 1}}),
        "m",
    )?;
    assert_eq!(
        b,
        json!({"generationConfig": {"temperature": 1, "maxOutputTokens": 500}})
    );
    let b = written(Wire::Converse, json!({}), "m")?;
    assert_eq!(b, json!({"inferenceConfig": {"maxTokens": 500}}));
    let b = written(Wire::Cohere, json!({"max_tokens": 9000}), "m")?;
    assert_eq!(b, json!({"max_tokens": 500}));
    Ok(())
}

#[test]
fn anthropic_thinking_fits_below_the_limit_or_is_refused() -> Result<(), LimitError> {
    let mut body =
        json!({"max_tokens": 64000, "thinking": {"type": "enabled", "budget_tokens": 32000}});
    write(Wire::Anthropic, &mut body, 5000, "claude")?;
    assert_eq!(
        body,
        json!({"max_tokens": 5000, "thinking": {"type": "enabled", "budget_tokens": 4999}})
    );
    let mut small =
        json!({"max_tokens": 64000, "thinking": {"type": "enabled", "budget_tokens": 2000}});
    assert_eq!(
        write(Wire::Anthropic, &mut small, 1000, "claude"),
        Err(LimitError::ThinkingBudget {
            needed: 1025,
            covered: 1000
        })
    );
    Ok(())
}
