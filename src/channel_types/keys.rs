//! Key formats: checking a channel's key text against its type's [`KeyFormat`] on save, and
//! turning it into the stored form — one key per line, which is how every reader splits it
//! (the routing table's key rotation, batch creation, the channel test, redaction).
//!
//! Line formats are stored as entered (trimmed lines). JSON keys are parsed whole, never split
//! by lines: one object, an array of objects, or objects one after another; each object is
//! stored as one compact line (JSON escapes the newlines inside a private key).
//!
//! Error messages name the key by its position and say what is wrong; they never contain any
//! part of the key.

use serde_json::Value;

use super::kinds::KeyFormat;

/// Why a key text was refused (the text never includes the key).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct KeyError(pub String);

/// One AWS credential line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AwsKey<'a> {
    /// An access key pair, its region and an optional session token (SigV4).
    AccessKey {
        /// Access key id.
        access_key: &'a str,
        /// Secret access key.
        secret_key: &'a str,
        /// Region, e.g. `us-east-1`.
        region: &'a str,
        /// Session token of temporary credentials.
        session_token: Option<&'a str>,
    },
    /// A Bedrock API key (sent as a bearer token) and its region.
    ApiKey {
        /// The API key.
        key: &'a str,
        /// Region.
        region: &'a str,
    },
}

/// Whether `region` looks like an AWS region (`us-east-1`, `us-gov-west-1`, …).
fn is_region(region: &str) -> bool {
    let mut parts = region.split('-');
    let first = parts.next().unwrap_or_default();
    let rest: Vec<&str> = parts.collect();
    let Some((number, middle)) = rest.split_last() else {
        return false;
    };
    let word = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_lowercase());
    word(first)
        && !middle.is_empty()
        && middle.iter().all(|s| word(s))
        && !number.is_empty()
        && number.bytes().all(|b| b.is_ascii_digit())
}

/// Parses one AWS key line: `AK|SK|region[|session token]` or `APIKey|region`.
pub fn parse_aws(line: &str) -> Result<AwsKey<'_>, KeyError> {
    let parts: Vec<&str> = line.split('|').map(str::trim).collect();
    if parts.iter().any(|p| p.is_empty()) {
        return Err(KeyError("a part is empty".into()));
    }
    let key = match *parts.as_slice() {
        [key, region] => AwsKey::ApiKey { key, region },
        [access_key, secret_key, region] => AwsKey::AccessKey {
            access_key,
            secret_key,
            region,
            session_token: None,
        },
        [access_key, secret_key, region, token] => AwsKey::AccessKey {
            access_key,
            secret_key,
            region,
            session_token: Some(token),
        },
        _ => {
            return Err(KeyError(format!(
                "expected AK|SK|region[|session token] or APIKey|region, found {} parts",
                parts.len()
            )));
        }
    };
    let region = match &key {
        AwsKey::AccessKey { region, .. } | AwsKey::ApiKey { region, .. } => *region,
    };
    if !is_region(region) {
        return Err(KeyError(
            "the region part is not an AWS region such as us-east-1".into(),
        ));
    }
    Ok(key)
}

/// The fields a service-account key must have (Google's key file has them all).
const SERVICE_ACCOUNT_FIELDS: [&str; 3] = ["client_email", "private_key", "project_id"];

/// Checks one service-account object; `Err` names the missing fields.
fn check_service_account(value: &Value) -> Result<(), String> {
    let Value::Object(map) = value else {
        return Err("is not a JSON object".into());
    };
    let missing: Vec<&str> = SERVICE_ACCOUNT_FIELDS
        .iter()
        .copied()
        .filter(|f| {
            map.get(*f)
                .and_then(Value::as_str)
                .is_none_or(str::is_empty)
        })
        .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(format!("lacks {}", missing.join(", ")))
    }
}

/// The JSON values of `text`: one value, or several one after another. The error tells where
/// the JSON breaks, never what is there.
fn json_values(text: &str) -> Result<Vec<Value>, KeyError> {
    serde_json::Deserializer::from_str(text)
        .into_iter::<Value>()
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| {
            KeyError(format!(
                "the key is not valid JSON (line {}, column {})",
                e.line(),
                e.column()
            ))
        })
}

/// Service-account keys: parsed whole, one compact object per line.
fn service_account_lines(text: &str) -> Result<Vec<String>, KeyError> {
    if !text.is_empty() && !text.starts_with(['{', '[']) {
        // Most likely an express-mode API key pasted with the default key type.
        return Err(KeyError(
            "the key is not a service-account JSON key; for Vertex AI express-mode API keys \
             set the key type (setting vertex_key_type) to api_key"
                .into(),
        ));
    }
    let mut objects = Vec::new();
    for value in json_values(text)? {
        match value {
            Value::Array(items) => objects.extend(items),
            other => objects.push(other),
        }
    }
    if objects.is_empty() {
        return Err(KeyError("the key holds no service-account JSON".into()));
    }
    let many = objects.len() > 1;
    objects
        .iter()
        .enumerate()
        .map(|(i, object)| {
            check_service_account(object).map_err(|why| {
                let which = if many {
                    format!("service-account key {}", i + 1)
                } else {
                    "the service-account key".to_owned()
                };
                KeyError(format!(
                    "{which} {why} (paste the whole JSON key file of a service account)"
                ))
            })?;
            Ok(object.to_string())
        })
        .collect()
}

/// Checks `text` (the key field as entered) against `format` and returns the keys to store,
/// one per line. `Err` says what is wrong and where, without any part of the key.
pub fn normalize(format: KeyFormat, text: &str) -> Result<Vec<String>, KeyError> {
    let text = text.trim();
    if format == KeyFormat::ServiceAccountJson {
        return service_account_lines(text);
    }
    if text.starts_with('{') || text.starts_with('[') {
        return Err(KeyError(
            "this channel type takes keys one per line, not JSON".into(),
        ));
    }
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let many = lines.len() > 1;
    let at = |i: usize| {
        if many {
            format!("key line {}: ", i + 1)
        } else {
            String::new()
        }
    };
    for (i, line) in lines.iter().enumerate() {
        match format {
            KeyFormat::Lines | KeyFormat::ServiceAccountJson => {}
            KeyFormat::Parts(names) => {
                let found = line.split('|').map(str::trim).collect::<Vec<_>>();
                if found.len() != names.len() || found.iter().any(|p| p.is_empty()) {
                    return Err(KeyError(format!(
                        "{}expected {} ({} parts separated by |)",
                        at(i),
                        names.join("|"),
                        names.len()
                    )));
                }
            }
            KeyFormat::Aws => {
                parse_aws(line).map_err(|e| KeyError(format!("{}{}", at(i), e.0)))?;
            }
            KeyFormat::IdSecret => {
                let two = line.split_once('.').is_some_and(|(id, secret)| {
                    !id.is_empty() && !secret.is_empty() && !secret.contains('.')
                });
                if !two {
                    return Err(KeyError(format!(
                        "{}expected id.secret (the API key as Zhipu's console shows it: two \
                         parts separated by a dot)",
                        at(i)
                    )));
                }
            }
        }
    }
    Ok(lines.into_iter().map(str::to_owned).collect())
}
