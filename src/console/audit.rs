//! `GET /api/audit` (root only): the audit log, newest first, paged, filtered by action
//! (exact, or a prefix ending in `.` such as `user.`), actor, target and time.

use axum::extract::State;
use serde::Deserialize;
use tollgate_storage::audit::{self, AuditEntry, AuditFilter};

use crate::error::ConsoleError;
use crate::http::api::{Access, ApiRouter, get};
use crate::http::envelope::{Envelope, ok};
use crate::http::extract::{ApiQuery, RootSession};
use crate::http::page::{Page, PageQuery};
use crate::state::AppState;

/// Audit log routes.
pub fn routes() -> ApiRouter {
    ApiRouter::new().route("/api/audit", get(Access::Root, list_audit))
}

/// The filters of GET /api/audit (beside `p` and `page_size`).
#[derive(Debug, Default, Deserialize)]
struct AuditQuery {
    #[serde(default)]
    action: String,
    #[serde(default)]
    actor_id: Option<i64>,
    #[serde(default)]
    target: String,
    #[serde(default)]
    start_timestamp: Option<i64>,
    #[serde(default)]
    end_timestamp: Option<i64>,
}

impl AuditQuery {
    fn filter(self) -> AuditFilter {
        let text = |s: String| {
            let s = s.trim().to_owned();
            (!s.is_empty()).then_some(s)
        };
        AuditFilter {
            action: text(self.action),
            actor_id: self.actor_id,
            target: text(self.target),
            start: self.start_timestamp.filter(|t| *t > 0),
            end: self.end_timestamp.filter(|t| *t > 0),
        }
    }
}

async fn list_audit(
    State(state): State<AppState>,
    _root: RootSession,
    ApiQuery(page): ApiQuery<PageQuery>,
    ApiQuery(query): ApiQuery<AuditQuery>,
) -> Result<Envelope<Page<AuditEntry>>, ConsoleError> {
    let filter = query.filter();
    let (items, total) = state
        .store
        .read(move |rtx| audit::list(rtx, &filter, page.offset(), page.size()))
        .await?;
    Ok(ok(Page::new(page, items, total)))
}
