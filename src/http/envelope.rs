//! The console's success shapes: `{success, message, data}` and `{items, page, page_size, total}`.

use axum::Json;
use axum::response::{IntoResponse, Response};
use serde::Serialize;

/// A successful console answer carrying `data`.
#[derive(Debug, Serialize)]
pub struct Envelope<T> {
    /// Always true (failures are [`crate::error::ConsoleError`]).
    pub success: bool,
    /// A human-readable note, usually empty.
    pub message: String,
    /// The payload.
    pub data: T,
}

/// One page of a list: `{items, page, page_size, total}`.
#[derive(Debug, Serialize)]
pub struct Page<T> {
    /// The page's items.
    pub items: Vec<T>,
    /// 1-based page number.
    pub page: usize,
    /// Items per page.
    pub page_size: usize,
    /// Items (or units, e.g. tags) matching before paging.
    pub total: usize,
}

/// Wraps `data` in a success envelope.
pub fn ok<T: Serialize>(data: T) -> Envelope<T> {
    Envelope {
        success: true,
        message: String::new(),
        data,
    }
}

/// A success envelope with a message and no data.
pub fn done(message: impl Into<String>) -> Envelope<()> {
    Envelope {
        success: true,
        message: message.into(),
        data: (),
    }
}

impl<T: Serialize> IntoResponse for Envelope<T> {
    fn into_response(self) -> Response {
        Json(self).into_response()
    }
}
