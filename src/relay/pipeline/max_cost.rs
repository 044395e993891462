//! A client's spend ceiling per request (P15 item 3): `max_cost` in the JSON body, or the
//! `X-Max-Cost` header, which wins — US dollars whatever the console's display currency.
//!
//! It is Tollgate's, not the upstream's (OpenAI and Anthropic refuse unknown parameters): the
//! route that parses the body takes it out ([`take`], [`strip`]) before anything is forwarded,
//! and admission ([`crate::relay::pipeline::admission::admit`]) turns it into units. There it
//! lowers the output limit in the reservation's critical section, as the balance does
//! ([`tollgate_actors::quota::OutputAsk::max_units`]), and caps the one mid-stream ceiling at
//! min(reservation + DebtAllowance, max_cost): no second mechanism. A request is refused (403)
//! only when its prompt estimate alone costs more.
//!
//! Cost when absent: one header lookup per request, and a field the body's one parse already
//! reads; a body is re-serialised only when it carries `max_cost`.

use axum::body::Bytes;
use axum::http::HeaderMap;
use serde_json::Value;

use crate::error::RelayError;

/// The header that sets a request's spend ceiling (it wins over the body's `max_cost`).
pub const HEADER: &str = "x-max-cost";

/// The body field that sets a request's spend ceiling.
pub const FIELD: &str = "max_cost";

/// A ceiling in US dollars: a finite number ≥ 0.
fn checked(dollars: f64) -> Result<f64, RelayError> {
    if dollars.is_finite() && dollars >= 0.0 {
        Ok(dollars)
    } else {
        Err(RelayError::BadRequest(
            "max_cost must be a number of US dollars, 0 or more".into(),
        ))
    }
}

/// The `X-Max-Cost` header's ceiling, if sent.
pub fn from_header(headers: &HeaderMap) -> Result<Option<f64>, RelayError> {
    let Some(value) = headers.get(HEADER) else {
        return Ok(None);
    };
    let dollars = value
        .to_str()
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .ok_or_else(|| {
            RelayError::BadRequest("X-Max-Cost must be a number of US dollars, 0 or more".into())
        })?;
    checked(dollars).map(Some)
}

/// The ceiling of a body's `max_cost` value.
pub fn from_value(value: &Value) -> Result<f64, RelayError> {
    value.as_f64().map_or_else(
        || {
            Err(RelayError::BadRequest(
                "max_cost must be a number of US dollars, 0 or more".into(),
            ))
        },
        checked,
    )
}

/// Takes `max_cost` out of a parsed body and, when it was there, re-writes `body` (the bytes
/// forwarded as received) without it.
pub fn take(parsed: &mut Value, body: &mut Bytes) -> Result<Option<f64>, RelayError> {
    let Some(value) = parsed.as_object_mut().and_then(|map| map.remove(FIELD)) else {
        return Ok(None);
    };
    let dollars = from_value(&value)?;
    *body = serde_json::to_vec(parsed)
        .map(Bytes::from)
        .map_err(|e| RelayError::Internal(e.to_string()))?;
    Ok(Some(dollars))
}

/// `body` without its `max_cost` (the OpenAI path, whose body is otherwise forwarded as
/// received; called only when the body has one).
pub fn strip(body: &Bytes) -> Result<Bytes, RelayError> {
    let mut parsed: Value = serde_json::from_slice(body)
        .map_err(|e| RelayError::BadRequest(format!("the request body is not valid JSON: {e}")))?;
    let mut body = body.clone();
    take(&mut parsed, &mut body)?;
    Ok(body)
}

/// A ceiling in quota units (rounded down: the ceiling is never passed by rounding).
pub fn units(dollars: f64, quota_per_unit: i64) -> i64 {
    let units = (dollars * quota_per_unit.max(0) as f64).floor();
    if units >= 9.0e18 {
        i64::MAX
    } else if units > 0.0 {
        #[expect(clippy::cast_possible_truncation, reason = "range checked just above")]
        let whole = units as i64;
        whole
    } else {
        0
    }
}

/// The refusal of a request whose prompt alone (`prompt_units`) costs more than its ceiling.
pub fn refused(prompt_units: i64, dollars: f64, quota_per_unit: i64) -> RelayError {
    let prompt = prompt_units as f64 / quota_per_unit.max(1) as f64;
    RelayError::Forbidden(format!(
        "this request's prompt alone costs about ${prompt:.6}, more than its max_cost of \
         ${dollars}"
    ))
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;
    use serde_json::json;

    use super::*;

    #[test]
    fn the_field_is_taken_out_and_the_body_rewritten_only_when_present() {
        let mut parsed = json!({"model": "m", "max_cost": 0.02, "messages": []});
        let mut body = Bytes::from(parsed.to_string());
        assert_eq!(take(&mut parsed, &mut body).ok(), Some(Some(0.02)));
        let sent: Value = serde_json::from_slice(&body).unwrap_or_default();
        assert_eq!(sent, json!({"model": "m", "messages": []}));
        let raw = Bytes::from_static(br#"{"model":"m",  "messages":[]}"#);
        let (mut parsed, mut body) = (json!({"model": "m", "messages": []}), raw.clone());
        assert_eq!(take(&mut parsed, &mut body).ok(), Some(None));
        assert_eq!(body, raw, "the client's bytes, untouched");
        let mut bad = json!({"max_cost": "cheap"});
        assert!(take(&mut bad, &mut Bytes::new()).is_err());
        assert!(from_value(&json!(-1)).is_err());
    }

    #[test]
    fn the_header_is_a_number_of_dollars() {
        let mut headers = HeaderMap::new();
        assert_eq!(from_header(&headers).ok(), Some(None));
        headers.insert(HEADER, HeaderValue::from_static(" 0.5 "));
        assert_eq!(from_header(&headers).ok(), Some(Some(0.5)));
        for bad in ["x", "-1", "NaN", "inf"] {
            headers.insert(HEADER, HeaderValue::from_static(bad));
            assert!(from_header(&headers).is_err(), "{bad}");
        }
        assert_eq!(units(0.02, 500_000), 10_000);
        assert_eq!(units(0.000_001, 500_000), 0);
        assert_eq!(units(1e300, 500_000), i64::MAX);
    }
}
