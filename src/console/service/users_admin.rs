//! User administration (spec 01 §6): list, search, read, create, update and manage, with the
//! permission rules enforced here, on the server:
//! - an admin reads, updates and manages only users of a LOWER role (root may act on anyone);
//! - nobody creates a user of a role equal to or above their own;
//! - the super admin cannot be disabled, deleted or demoted;
//! - only the super admin promotes users to admin.

use serde::Deserialize;
use tollgate_actors::quota::Credit;
use tollgate_storage::audit;
use tollgate_storage::logs::{LOG_MANAGE, LogEntry};
use tollgate_storage::users::{
    self, NewUser, ROLE_ADMIN, ROLE_COMMON, ROLE_ROOT, STATUS_DISABLED, STATUS_ENABLED, User,
};
use tollgate_storage::{Quota, UserId};

use super::accounts::{new_aff_code, validate_password, validate_username};
use super::audit::{Auditor, REDACTED};
use super::redemptions::format_quota;
use super::register::log_credits;
use crate::clock::now_unix;
use crate::error::{ConsoleError, ErrorCode};
use crate::http::page::PageQuery;
use crate::state::AppState;

/// An action of POST /api/user/manage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ManageAction {
    /// Common → admin (root only).
    Promote,
    /// Admin → common.
    Demote,
    /// Ban.
    Disable,
    /// Unban.
    Enable,
    /// Deregister (soft delete; irreversible).
    Delete,
}

impl ManageAction {
    /// The action's name as the console sends it (and the audit log records it).
    pub fn as_str(self) -> &'static str {
        match self {
            ManageAction::Promote => "promote",
            ManageAction::Demote => "demote",
            ManageAction::Disable => "disable",
            ManageAction::Enable => "enable",
            ManageAction::Delete => "delete",
        }
    }
}

/// Whether `actor` may read or change `target`.
pub fn may_act_on(actor: &User, target: &User) -> bool {
    actor.role >= ROLE_ROOT || actor.role > target.role
}

/// Applies `action` to a copy of `target`, or says which rule forbids it (pure).
pub fn apply_manage(
    actor: &User,
    target: &User,
    action: ManageAction,
    now: i64,
) -> Result<User, ConsoleError> {
    if target.deleted_at.is_some() {
        return Err(ConsoleError::NotFound("user"));
    }
    if !may_act_on(actor, target) {
        return Err(ConsoleError::of(ErrorCode::CannotManagePeer));
    }
    let mut user = target.clone();
    match action {
        ManageAction::Promote => {
            if actor.role < ROLE_ROOT {
                return Err(ConsoleError::of(ErrorCode::PromoteNeedsRoot));
            }
            if user.role >= ROLE_ADMIN {
                return Err(ConsoleError::of(ErrorCode::AlreadyAdmin));
            }
            user.role = ROLE_ADMIN;
        }
        ManageAction::Demote => {
            if user.role >= ROLE_ROOT {
                return Err(ConsoleError::of(ErrorCode::RootCannotBeDemoted));
            }
            if user.role == ROLE_COMMON {
                return Err(ConsoleError::of(ErrorCode::AlreadyCommon));
            }
            user.role = ROLE_COMMON;
        }
        ManageAction::Disable => {
            if user.role >= ROLE_ROOT {
                return Err(ConsoleError::of(ErrorCode::RootCannotBeDisabled));
            }
            user.status = STATUS_DISABLED;
        }
        ManageAction::Enable => user.status = STATUS_ENABLED,
        ManageAction::Delete => {
            if user.role >= ROLE_ROOT {
                return Err(ConsoleError::of(ErrorCode::RootCannotBeDeleted));
            }
            user.deleted_at = Some(now);
            user.access_token_hash = None;
        }
    }
    Ok(user)
}

/// `?keyword=&group=` of GET /api/user/search.
#[derive(Debug, Default, Deserialize)]
pub struct SearchQuery {
    /// Matches id, username, display name or email (case-insensitive substring; id exact).
    #[serde(default)]
    pub keyword: String,
    /// Only users of this group.
    #[serde(default)]
    pub group: String,
}

/// Whether `user` matches the search (pure).
pub fn matches(user: &User, query: &SearchQuery) -> bool {
    let group_ok = query.group.is_empty() || user.group == query.group;
    let k = query.keyword.trim().to_lowercase();
    let keyword_ok = k.is_empty()
        || user.id.to_string() == k
        || user.username.to_lowercase().contains(&k)
        || user.display_name.to_lowercase().contains(&k)
        || user.email.to_lowercase().contains(&k);
    group_ok && keyword_ok
}

/// One page of users.
pub async fn list(state: &AppState, page: PageQuery) -> Result<(Vec<User>, u64), ConsoleError> {
    Ok(state
        .store
        .read(move |rtx| users::list(rtx, page.offset(), page.size()))
        .await?)
}

/// One page of search results.
pub async fn search(
    state: &AppState,
    query: SearchQuery,
    page: PageQuery,
) -> Result<(Vec<User>, u64), ConsoleError> {
    Ok(state
        .store
        .read(move |rtx| users::search(rtx, |u| matches(u, &query), page.offset(), page.size()))
        .await?)
}

/// Reads a user the actor may see.
pub async fn get(state: &AppState, actor: &User, id: UserId) -> Result<User, ConsoleError> {
    let user = state
        .store
        .read(move |rtx| users::get(rtx, id))
        .await?
        .ok_or(ConsoleError::NotFound("user"))?;
    if !may_act_on(actor, &user) && actor.id != user.id {
        return Err(ConsoleError::of(ErrorCode::CannotReadPeer));
    }
    Ok(user)
}

/// POST /api/user/ body.
#[derive(Debug, Deserialize)]
pub struct CreateUser {
    /// Login name.
    #[serde(default)]
    pub username: String,
    /// Display name (defaults to the username).
    #[serde(default)]
    pub display_name: String,
    /// Password.
    #[serde(default)]
    pub password: String,
    /// Role, default ordinary user.
    #[serde(default)]
    pub role: Option<i32>,
}

/// Creates a user on an admin's behalf.
pub async fn create(
    state: &AppState,
    actor: &User,
    req: CreateUser,
    auditor: Auditor,
) -> Result<User, ConsoleError> {
    if req.username.trim().is_empty() || req.password.is_empty() {
        return Err(ConsoleError::of(ErrorCode::UserFieldsRequired));
    }
    let username = validate_username(&req.username)?;
    validate_password(&req.password)?;
    let role = req.role.unwrap_or(ROLE_COMMON);
    if ![ROLE_COMMON, ROLE_ADMIN, ROLE_ROOT].contains(&role) {
        return Err(ConsoleError::of(ErrorCode::RoleInvalid));
    }
    if role >= actor.role {
        return Err(ConsoleError::of(ErrorCode::CannotCreatePeer));
    }
    let hash = state.hasher.hash(req.password).await?;
    let options = state.options.current();
    let quota = Quota(options.int("QuotaForNewUser"));
    let (per_unit, in_currency) = (
        options.int("QuotaPerUnit"),
        options.flag("DisplayInCurrencyEnabled"),
    );
    let display_name = req.display_name.trim().to_owned();
    state
        .store
        .write(move |wtx| {
            let user = users::insert(
                wtx,
                NewUser {
                    username,
                    display_name,
                    password_hash: hash,
                    email: String::new(),
                    role,
                    group: "default".into(),
                    quota,
                    aff_code: new_aff_code(wtx)?,
                    inviter_id: 0,
                    created_at: now_unix(),
                },
            )?;
            log_credits(
                wtx,
                &user,
                &[(quota.0, "new user reward")],
                per_unit,
                in_currency,
            )?;
            let entry = auditor.entry(
                "user.create",
                format!("user:{}", user.id.0),
                &serde_json::Value::Null,
                &serde_json::json!({"username": user.username, "role": user.role,
                    "group": user.group, "quota": user.quota.0}),
            );
            audit::append(wtx, entry)?;
            Ok::<_, ConsoleError>(user)
        })
        .await
}

/// PUT /api/user/ body: the fields an admin may change.
#[derive(Debug, Deserialize)]
pub struct UpdateUser {
    /// Which user.
    pub id: UserId,
    /// New login name.
    #[serde(default)]
    pub username: Option<String>,
    /// New display name.
    #[serde(default)]
    pub display_name: Option<String>,
    /// New password (empty keeps the old one).
    #[serde(default)]
    pub password: Option<String>,
    /// New group (must exist in GroupRatio).
    #[serde(default)]
    pub group: Option<String>,
    /// New balance (≥ 0, or equal to the current balance when that is a debt).
    #[serde(default)]
    pub quota: Option<i64>,
    /// The balance the editor showed when it loaded: the server applies `quota - quota_before`,
    /// so spending between reading and saving is not erased. Absent: `quota` is absolute.
    #[serde(default)]
    pub quota_before: Option<i64>,
}

/// Updates a user an admin may change.
pub async fn update(
    state: &AppState,
    actor: &User,
    req: UpdateUser,
    ip: Option<std::net::IpAddr>,
) -> Result<User, ConsoleError> {
    let auditor = Auditor::user(actor, ip);
    let username = req.username.as_deref().map(validate_username).transpose()?;
    let group = match req.group.as_deref().map(str::trim) {
        Some(g) if !g.is_empty() => {
            let ratios: serde_json::Map<String, serde_json::Value> =
                serde_json::from_str(state.options.current().text("GroupRatio"))
                    .unwrap_or_default();
            if !ratios.contains_key(g) {
                return Err(ConsoleError::with_args(
                    ErrorCode::GroupUnknown,
                    [g.to_string()],
                ));
            }
            Some(g.to_owned())
        }
        _ => None,
    };
    let hash = match req.password.filter(|p| !p.is_empty()) {
        Some(p) => {
            validate_password(&p)?;
            Some(state.hasher.hash(p).await?)
        }
        None => None,
    };
    let editor = actor.clone();
    let (id, display_name, quota) = (req.id, req.display_name, req.quota);
    let audit = auditor.clone();
    let mut user = state
        .store
        .write(move |wtx| {
            let mut user = users::get_rw(wtx, id)?
                .filter(|u| u.deleted_at.is_none())
                .ok_or(ConsoleError::NotFound("user"))?;
            if !may_act_on(&editor, &user) {
                return Err(ConsoleError::of(ErrorCode::CannotUpdatePeer));
            }
            if let Some(username) = username {
                user.username = username;
            }
            if let Some(display_name) = display_name {
                user.display_name = display_name.trim().to_owned();
            }
            // A group prices the user's requests; a password is a secret: both audited.
            let mut before = serde_json::Map::new();
            let mut after = serde_json::Map::new();
            if let Some(group) = group.filter(|g| *g != user.group) {
                before.insert("group".into(), user.group.clone().into());
                after.insert("group".into(), group.clone().into());
                user.group = group;
            }
            if let Some(hash) = hash {
                user.password_hash = hash;
                before.insert("password".into(), REDACTED.into());
                after.insert("password".into(), REDACTED.into());
            }
            users::update(wtx, &user)?;
            if !after.is_empty() {
                let entry = audit.entry(
                    "user.update",
                    format!("user:{}", user.id.0),
                    &before.into(),
                    &after.into(),
                );
                audit::append(wtx, entry)?;
            }
            Ok(user)
        })
        .await?;
    if let Some(quota) = quota {
        user.quota =
            Quota(set_quota(state, &auditor, actor, &user, quota, req.quota_before).await?);
    }
    state.users.upsert(&user);
    Ok(user)
}

/// Applies an admin's balance edit of `user` to `target` (`before`: what the editor showed) as
/// one change with its type-3 log row, and returns the balance after it. Balances are decided
/// by the quota book, never written around it.
async fn set_quota(
    state: &AppState,
    auditor: &Auditor,
    actor: &User,
    user: &User,
    target: i64,
    before: Option<i64>,
) -> Result<i64, ConsoleError> {
    let current = state
        .quota
        .current_balance(user.id)
        .await
        .map_err(|e| ConsoleError::Internal(format!("reading the balance: {e}")))?;
    let before = before.unwrap_or(current);
    if target < 0 && target != before {
        return Err(ConsoleError::of(ErrorCode::QuotaNegative));
    }
    let delta = target
        .checked_sub(before)
        .ok_or_else(|| ConsoleError::of(ErrorCode::QuotaOutOfRange))?;
    if delta == 0 {
        return Ok(current);
    }
    let options = state.options.current();
    let (per_unit, in_currency) = (
        options.int("QuotaPerUnit"),
        options.flag("DisplayInCurrencyEnabled"),
    );
    let other = serde_json::json!({
        "admin_info": {"admin_id": actor.id, "admin_username": actor.username},
        "quota_before": before,
        "quota_after": target,
        "delta": delta,
    });
    let log = LogEntry {
        created_at: now_unix(),
        log_type: LOG_MANAGE,
        user_id: user.id,
        username: user.username.clone(),
        group: user.group.clone(),
        quota: delta,
        content: format!(
            "admin {} changed the balance from {} to {}",
            actor.username,
            format_quota(before, per_unit, in_currency),
            format_quota(target, per_unit, in_currency),
        ),
        other: other.to_string(),
        ..LogEntry::default()
    };
    // The balance the server holds is "before", not the editor's `quota_before` (which may be
    // stale, or made up): the row must show what the change did.
    let after = current
        .checked_add(delta)
        .ok_or_else(|| ConsoleError::of(ErrorCode::QuotaOutOfRange))?;
    let entry = auditor.entry(
        "user.quota",
        format!("user:{}", user.id.0),
        &serde_json::json!({"quota": current}),
        &serde_json::json!({"quota": after, "delta": delta, "editor_quota_before": before,
            "editor_quota": target}),
    );
    state
        .quota
        .credit_with(user.id, move |wtx| {
            audit::append(wtx, entry)?;
            Ok::<_, ConsoleError>(((), Some(Credit { amount: delta, log })))
        })
        .await?;
    tracing::info!(user = %user.id, admin = %actor.id, delta, "balance changed by an admin");
    Ok(after)
}

/// POST /api/user/manage: applies the action and returns the stored user.
pub async fn manage(
    state: &AppState,
    actor: &User,
    id: UserId,
    action: ManageAction,
    ip: Option<std::net::IpAddr>,
) -> Result<User, ConsoleError> {
    let auditor = Auditor::user(actor, ip);
    let actor = actor.clone();
    let user = state
        .store
        .write(move |wtx| {
            let target = users::get_rw(wtx, id)?.ok_or(ConsoleError::NotFound("user"))?;
            let changed = apply_manage(&actor, &target, action, now_unix())?;
            users::update(wtx, &changed)?;
            let side = |u: &User| {
                serde_json::json!({"role": u.role, "status": u.status, "deleted_at": u.deleted_at})
            };
            let entry = auditor.entry(
                &format!("user.{}", action.as_str()),
                format!("user:{}", changed.id.0),
                &side(&target),
                &side(&changed),
            );
            audit::append(wtx, entry)?;
            Ok::<_, ConsoleError>(changed)
        })
        .await?;
    state.users.upsert(&user);
    Ok(user)
}

#[cfg(test)]
mod tests;
