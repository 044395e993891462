//! The dashboard (/detail) data: per-hour aggregates of consume logs (requests, quota, prompt and
//! completion tokens) by model, by user and by user and model, maintained by the log writer in
//! the transaction that inserts the rows ([`super::write::insert_batch`]), never recomputed.

use redb::ReadTransaction;

use super::keys;
use crate::Result;
use crate::tables::{DASH_BY_MODEL, DASH_BY_USER, DASH_BY_USER_MODEL};

/// One aggregate: an hour, and a user and/or a model (0 / empty when aggregated over).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DashRow {
    /// Start of the hour (unix seconds).
    pub hour: i64,
    /// User id, 0 for all users.
    pub user_id: i64,
    /// Model, empty for all models.
    pub model_name: String,
    /// Requests.
    pub count: u64,
    /// Quota charged.
    pub quota: i64,
    /// Prompt tokens.
    pub prompt_tokens: i64,
    /// Completion tokens.
    pub completion_tokens: i64,
}

/// Hours overlapping `[start, end]`, as a half-open range of hour starts.
fn hours(start: i64, end: i64) -> (i64, i64) {
    (
        keys::hour(start),
        keys::hour(end).saturating_add(keys::HOUR),
    )
}

/// Per hour and model, all users.
pub fn by_model(rtx: &ReadTransaction, start: i64, end: i64) -> Result<Vec<DashRow>> {
    let (lo, hi) = hours(start, end);
    let table = rtx.open_table(DASH_BY_MODEL)?;
    let mut out = Vec::new();
    if lo >= hi {
        return Ok(out);
    }
    for r in table.range((lo, "")..(hi, ""))? {
        let (k, v) = r?;
        let (hour, model) = k.value();
        let (count, quota, prompt, completion) = v.value();
        out.push(DashRow {
            hour,
            user_id: 0,
            model_name: model.to_owned(),
            count,
            quota,
            prompt_tokens: prompt,
            completion_tokens: completion,
        });
    }
    Ok(out)
}

/// Per hour and model, one user.
pub fn by_user_model(
    rtx: &ReadTransaction,
    user: i64,
    start: i64,
    end: i64,
) -> Result<Vec<DashRow>> {
    let (lo, hi) = hours(start, end);
    let table = rtx.open_table(DASH_BY_USER_MODEL)?;
    let mut out = Vec::new();
    if lo >= hi {
        return Ok(out);
    }
    for r in table.range((user, lo, "")..(user, hi, ""))? {
        let (k, v) = r?;
        let (user_id, hour, model) = k.value();
        let (count, quota, prompt, completion) = v.value();
        out.push(DashRow {
            hour,
            user_id,
            model_name: model.to_owned(),
            count,
            quota,
            prompt_tokens: prompt,
            completion_tokens: completion,
        });
    }
    Ok(out)
}

/// Per hour and user, all models.
pub fn by_user(rtx: &ReadTransaction, start: i64, end: i64) -> Result<Vec<DashRow>> {
    let (lo, hi) = hours(start, end);
    let table = rtx.open_table(DASH_BY_USER)?;
    let mut out = Vec::new();
    if lo >= hi {
        return Ok(out);
    }
    for r in table.range((lo, i64::MIN)..(hi, i64::MIN))? {
        let (k, v) = r?;
        let (hour, user_id) = k.value();
        let (count, quota, prompt, completion) = v.value();
        out.push(DashRow {
            hour,
            user_id,
            model_name: String::new(),
            count,
            quota,
            prompt_tokens: prompt,
            completion_tokens: completion,
        });
    }
    Ok(out)
}
