//! Budgets on the prepaid wallet in the console (P15 items 2 and 5): what a key's owner or a
//! user's admin reads and sets. A change is stored with its audit row in one transaction
//! (`token.budget`, `user.budget`) and then applied to the quota book, so the relay decides the
//! next request by it; what each window has left is read from the book (settled charges
//! included, even those the log writer has not committed yet).

use serde::Serialize;
use serde_json::json;
use tollgate_actors::quota::budget::WindowState;
use tollgate_storage::budgets::{self, Budgets, Owner, Period};
use tollgate_storage::users::User;
use tollgate_storage::{TokenId, UserId};

use super::audit::Auditor;
use super::users_admin::{self, may_act_on};
use crate::error::{ConsoleError, ErrorCode};
use crate::state::AppState;

/// One window as the console shows it.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct WindowView {
    /// `day`, `week` or `month`.
    pub period: Period,
    /// Rolling (the last 24 hours, 7 or 30 days) rather than calendar-aligned.
    pub rolling: bool,
    /// Units that may be spent in it.
    pub limit: i64,
    /// Units charged in it so far.
    pub spent: i64,
    /// What is left (never below 0).
    pub remaining: i64,
    /// When it resets (Unix seconds).
    pub resets_at: i64,
}

impl From<&WindowState> for WindowView {
    fn from(w: &WindowState) -> WindowView {
        WindowView {
            period: w.window.period,
            rolling: w.window.rolling,
            limit: w.window.limit,
            spent: w.spent,
            remaining: w.left(0).max(0),
            resets_at: w.resets_at,
        }
    }
}

/// A user's or key's budgets and the windows in force now.
#[derive(Debug, Clone, Serialize)]
pub struct BudgetView {
    /// What is set (the windows and the override).
    pub budgets: Budgets,
    /// The windows in force now (the override's while it lasts), with their spend.
    pub windows: Vec<WindowView>,
    /// The time zone calendar windows begin in (BudgetTimeZone).
    pub time_zone: String,
}

fn view(state: &AppState, budgets: Budgets, windows: &[WindowState]) -> BudgetView {
    BudgetView {
        budgets,
        windows: windows.iter().map(WindowView::from).collect(),
        time_zone: state.options.current().text("BudgetTimeZone").to_owned(),
    }
}

/// The windows of `user` (and of `token`) in force now, from the quota book.
pub async fn windows(
    state: &AppState,
    user: UserId,
    token: Option<TokenId>,
) -> Result<tollgate_actors::quota::BudgetView, ConsoleError> {
    Ok(state.quota.budget_view(user, token).await?)
}

async fn stored(state: &AppState, owner: Owner) -> Result<Budgets, ConsoleError> {
    Ok(state
        .store
        .read(move |rtx| budgets::get(rtx, owner))
        .await?)
}

/// Stores `budgets` for `owner` (of `user`) with its audit row, then tells the quota book.
async fn replace(
    state: &AppState,
    user: UserId,
    owner: Owner,
    budgets: Budgets,
    action: &'static str,
    target: String,
    auditor: Auditor,
) -> Result<(), ConsoleError> {
    budgets
        .validate()
        .map_err(|e| ConsoleError::with_args(ErrorCode::BudgetInvalid, [e]))?;
    let after = json!(budgets);
    state
        .store
        .write(move |wtx| {
            budgets::replace(wtx, owner, &budgets, |before| {
                auditor.entry(action, target, &json!(before), &after)
            })
        })
        .await?;
    state.quota.budgets_changed(user, owner).await?;
    Ok(())
}

/// The budgets of `user`'s key `id` (others' keys read as not found).
pub async fn token_budget(
    state: &AppState,
    user: &User,
    id: TokenId,
) -> Result<BudgetView, ConsoleError> {
    let token = super::tokens::get(state, user, id).await?;
    let set = stored(state, Owner::Token(token.id)).await?;
    let now = windows(state, user.id, Some(token.id)).await?;
    Ok(view(state, set, &now.key))
}

/// Sets the budgets of `user`'s key `id`.
pub async fn set_token_budget(
    state: &AppState,
    user: &User,
    id: TokenId,
    budgets: Budgets,
    auditor: Auditor,
) -> Result<BudgetView, ConsoleError> {
    let token = super::tokens::get(state, user, id).await?;
    let target = format!("token {} ({})", token.id, token.name);
    replace(
        state,
        user.id,
        Owner::Token(token.id),
        budgets,
        "token.budget",
        target,
        auditor,
    )
    .await?;
    token_budget(state, user, id).await
}

/// The budgets of user `id`, for an admin who may read them.
pub async fn user_budget(
    state: &AppState,
    actor: &User,
    id: UserId,
) -> Result<BudgetView, ConsoleError> {
    let user = users_admin::get(state, actor, id).await?;
    let set = stored(state, Owner::User(user.id)).await?;
    let now = windows(state, user.id, None).await?;
    Ok(view(state, set, &now.user))
}

/// Sets the budgets of user `id`, for an admin who may change them.
pub async fn set_user_budget(
    state: &AppState,
    actor: &User,
    id: UserId,
    budgets: Budgets,
    auditor: Auditor,
) -> Result<BudgetView, ConsoleError> {
    let user = users_admin::get(state, actor, id).await?;
    if !may_act_on(actor, &user) {
        return Err(ConsoleError::with_args(ErrorCode::CannotManagePeer, []));
    }
    let target = format!("user {} ({})", user.id, user.username);
    replace(
        state,
        user.id,
        Owner::User(user.id),
        budgets,
        "user.budget",
        target,
        auditor,
    )
    .await?;
    user_budget(state, actor, id).await
}
