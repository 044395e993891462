//! The public content the console's home, about and notice read, and the home page's JSON
//! blocks: GET /api/notice, /api/about, /api/home_page_content and /api/option/get*.
//!
//! Everything here is admin-authored text shown to guests; the console sanitises any HTML in it
//! before rendering. The JSON blocks were validated as JSON when saved; a stored value that no
//! longer parses (an older import) reads as the block's empty default rather than an error.

use crate::http::api::{Access, ApiRouter, get};
use axum::extract::State;
use serde_json::Value;

use crate::http::envelope::{Envelope, ok};
use crate::http::extract::RootSession;
use crate::state::AppState;

/// Content routes.
pub fn routes() -> ApiRouter {
    ApiRouter::new()
        .route(
            "/api/notice",
            get(Access::Public, |State(s): State<AppState>| async move {
                text(&s, "Notice")
            }),
        )
        .route(
            "/api/about",
            get(Access::Public, |State(s): State<AppState>| async move {
                text(&s, "About")
            }),
        )
        .route(
            "/api/home_page_content",
            get(Access::Public, |State(s): State<AppState>| async move {
                text(&s, "HomePageContent")
            }),
        )
        .route(
            "/api/option/getModelProviders",
            get(Access::Public, |State(s): State<AppState>| async move {
                json(&s, "Providers", "[]")
            }),
        )
        .route(
            "/api/option/getCustomNavLinks",
            get(Access::Public, |State(s): State<AppState>| async move {
                json(&s, "CustemNavLinks", "[]")
            }),
        )
        .route(
            "/api/option/getTypingList",
            get(Access::Public, |State(s): State<AppState>| async move {
                json(&s, "TypingList", "[]")
            }),
        )
        .route(
            "/api/option/getAdvantages",
            get(Access::Public, |State(s): State<AppState>| async move {
                json(&s, "Advantages", "[]")
            }),
        )
        .route(
            "/api/option/getModelDescriptions",
            get(Access::Public, |State(s): State<AppState>| async move {
                json(&s, "ModelDescriptions", "{}")
            }),
        )
        .route(
            "/api/option/getImageReadProxy",
            get(Access::Root, image_read_proxy),
        )
}

fn text(state: &AppState, key: &'static str) -> Envelope<String> {
    ok(state.options.current().text(key).to_owned())
}

fn json(state: &AppState, key: &'static str, empty: &'static str) -> Envelope<Value> {
    let snapshot = state.options.current();
    let value = serde_json::from_str(snapshot.text(key))
        .or_else(|_| serde_json::from_str(empty))
        .unwrap_or(Value::Null);
    ok(value)
}

/// The media fetcher's proxy is operational detail (its URL may carry credentials): root only,
/// like every option outside the admins' read-only subset.
async fn image_read_proxy(State(state): State<AppState>, _root: RootSession) -> Envelope<String> {
    ok(state.options.current().text("ImageReadProxy").to_owned())
}
