//! The answer to a request refused by a budget window (P15 item 2): a 429 naming the window,
//! whose budget it is (the user's or the key's), what was spent and when it resets, with a
//! `Retry-After` of the seconds until then. A balance exhausted stays a 403 (not here).

use tollgate_actors::quota::budget::WindowState;

use crate::error::RelayError;

/// The relay error of a budget refusal.
pub(in crate::relay) fn reached(
    key: bool,
    state: &WindowState,
    reserved: i64,
    retry_after: i64,
) -> RelayError {
    let whose = if key { "this API key" } else { "this user" };
    let held = if reserved > 0 {
        format!(" ({reserved} more held by running requests)")
    } else {
        String::new()
    };
    RelayError::BudgetReached {
        message: format!(
            "the {} budget of {whose} is reached: {} of {} spent{held}; it resets at {}",
            state.name(),
            state.spent,
            state.window.limit,
            state.resets_at_text(),
        ),
        retry_after,
    }
}
