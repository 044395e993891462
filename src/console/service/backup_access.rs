//! Who may take a backup of the running server (`GET /api/backup`), and the backup-only tokens
//! `tollgate backup` presents.
//!
//! A backup is the whole database: every user, balance and (sealed) secret. So:
//! - a root's browser session may take one;
//! - a root's system access token only after `POST /api/verify` with a two-factor code through
//!   that same token within the last 5 minutes (a leaked script token alone is not enough);
//! - a **backup token** (`tgb-…`), made by root after a second-factor check, shown once, stored
//!   as its SHA-256, good for `GET /api/backup` and nothing else, listed and revocable on the
//!   personal page. It stops working when its root is demoted, banned or deleted.
//!
//! Every backup appends an audit row (`backup.download`, naming how it was authorised), and a
//! backup token's use is recorded on it (`last_used_at`).

use std::net::IpAddr;

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use serde::Serialize;
use serde_json::json;
use tollgate_storage::backup_tokens::{self, BackupToken};
use tollgate_storage::users::{self, ROLE_ROOT, STATUS_ENABLED, User};

use super::audit::Auditor;
use super::secrets::{random_alnum, sha256_hex};
use super::two_factor;
use crate::clock::now_unix;
use crate::error::{ConsoleError, ErrorCode};
use crate::http::extract::{RootSession, Session, bearer_token};
use crate::state::AppState;

/// What every backup token starts with (tells it apart from a system access token).
pub const TOKEN_PREFIX: &str = "tgb-";
/// Random characters after the prefix (about 238 bits).
const TOKEN_LEN: usize = 40;
/// Longest token name, in characters.
const MAX_NAME_CHARS: usize = 64;

/// Who asked for a backup.
#[derive(Debug, Clone)]
pub enum BackupCaller {
    /// A root's session (a cookie, or a system access token verified within 5 minutes).
    Session(Session),
    /// A backup token, and its root.
    Token {
        /// The root who made the token.
        user: User,
        /// The token.
        token: BackupToken,
    },
}

impl BackupCaller {
    /// The root behind the backup.
    pub fn user(&self) -> &User {
        match self {
            BackupCaller::Session(session) => &session.user,
            BackupCaller::Token { user, .. } => user,
        }
    }

    /// How the backup was authorised, for its audit row.
    fn via(&self) -> serde_json::Value {
        match self {
            BackupCaller::Session(s) if s.via_access_token() => json!({"via": "access_token"}),
            BackupCaller::Session(_) => json!({"via": "session"}),
            BackupCaller::Token { token, .. } => {
                json!({"via": "backup_token", "token_id": token.id, "token_name": token.name})
            }
        }
    }
}

impl FromRequestParts<AppState> for BackupCaller {
    type Rejection = ConsoleError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        if let Some(bearer) = bearer_token(&parts.headers)
            && bearer.starts_with(TOKEN_PREFIX)
        {
            return by_backup_token(state, &bearer).await;
        }
        let RootSession(session) = RootSession::from_request_parts(parts, state).await?;
        if session.via_access_token() && !state.two_factor.is_verified(&session.key, now_unix()) {
            return Err(ConsoleError::of(ErrorCode::BackupNeedsVerify));
        }
        Ok(BackupCaller::Session(session))
    }
}

/// The backup token `bearer` and its root, who must still be an enabled root.
async fn by_backup_token(state: &AppState, bearer: &str) -> Result<BackupCaller, ConsoleError> {
    let hash = sha256_hex(bearer);
    let found = state
        .store
        .read(move |rtx| {
            let Some(token) = backup_tokens::find(rtx, &hash)? else {
                return Ok::<_, tollgate_storage::StorageError>(None);
            };
            Ok(users::get(rtx, token.user_id)?.map(|user| (user, token)))
        })
        .await?;
    match found {
        Some((user, token))
            if user.role >= ROLE_ROOT
                && user.status == STATUS_ENABLED
                && user.deleted_at.is_none() =>
        {
            Ok(BackupCaller::Token { user, token })
        }
        Some(_) => Err(ConsoleError::Forbidden),
        None => Err(ConsoleError::InvalidAccessToken),
    }
}

/// Appends the audit row of a backup of `bytes` bytes (and marks the token used), before the
/// copy is sent.
pub async fn record_backup(
    state: &AppState,
    caller: &BackupCaller,
    bytes: u64,
    ip: Option<IpAddr>,
) -> Result<(), ConsoleError> {
    let mut after = caller.via();
    after["bytes"] = json!(bytes);
    let entry = Auditor::user(caller.user(), ip).entry(
        "backup.download",
        "database".into(),
        &serde_json::Value::Null,
        &after,
    );
    let token = match caller {
        BackupCaller::Token { token, .. } => Some(token.id),
        BackupCaller::Session(_) => None,
    };
    let now = now_unix();
    state
        .store
        .write(move |wtx| {
            if let Some(id) = token {
                backup_tokens::touch(wtx, id, now)?;
            }
            tollgate_storage::audit::append(wtx, entry)?;
            Ok::<_, ConsoleError>(())
        })
        .await
}

/// A backup token as listed (never the token).
#[derive(Debug, Serialize)]
pub struct TokenView {
    /// Id (for revoking).
    pub id: i64,
    /// Its name.
    pub name: String,
    /// Unix seconds of creation.
    pub created_at: i64,
    /// Unix seconds of the last backup made with it (0: never).
    pub last_used_at: i64,
}

impl From<BackupToken> for TokenView {
    fn from(t: BackupToken) -> TokenView {
        TokenView {
            id: t.id,
            name: t.name,
            created_at: t.created_at,
            last_used_at: t.last_used_at,
        }
    }
}

/// A new backup token: the only time the token itself is shown.
#[derive(Debug, Serialize)]
pub struct Created {
    /// The token as listed.
    #[serde(flatten)]
    pub view: TokenView,
    /// The token (`tgb-…`).
    pub token: String,
}

/// `user`'s backup tokens.
pub async fn list(state: &AppState, user: &User) -> Result<Vec<TokenView>, ConsoleError> {
    let id = user.id;
    let tokens = state
        .store
        .read(move |rtx| backup_tokens::list(rtx, id))
        .await?;
    Ok(tokens.into_iter().map(TokenView::from).collect())
}

/// Makes a backup token for root `user` after checking a second-factor `code` (audited).
pub async fn create(
    state: &AppState,
    user: &User,
    name: &str,
    code: &str,
    ip: Option<IpAddr>,
) -> Result<Created, ConsoleError> {
    let name = name.trim();
    let name = if name.is_empty() { "backup" } else { name };
    if name.chars().count() > MAX_NAME_CHARS {
        return Err(ConsoleError::with_args(
            ErrorCode::BackupTokenNameTooLong,
            [MAX_NAME_CHARS.to_string()],
        ));
    }
    if !two_factor::is_enabled(state, user.id).await? {
        return Err(ConsoleError::of(ErrorCode::BackupTokenNeedsTwoFactor));
    }
    let code = code.trim();
    if code.is_empty() {
        return Err(ConsoleError::of(ErrorCode::TwoFactorCodeRequired));
    }
    two_factor::prove(state, user.id, code.to_owned()).await?;
    let token = format!("{TOKEN_PREFIX}{}", random_alnum(TOKEN_LEN));
    let (hash, owner, name) = (sha256_hex(&token), user.id, name.to_owned());
    let auditor = Auditor::user(user, ip);
    let record = state
        .store
        .write(move |wtx| {
            let record = backup_tokens::create(wtx, owner, name, hash, now_unix())?;
            let entry = auditor.entry(
                "backup_token.create",
                format!("backup_token:{}", record.id),
                &serde_json::Value::Null,
                &json!({"name": record.name}),
            );
            tollgate_storage::audit::append(wtx, entry)?;
            Ok::<_, ConsoleError>(record)
        })
        .await?;
    Ok(Created {
        view: record.into(),
        token,
    })
}

/// Revokes `user`'s backup token `id` (audited).
pub async fn revoke(
    state: &AppState,
    user: &User,
    id: i64,
    ip: Option<IpAddr>,
) -> Result<(), ConsoleError> {
    let (owner, auditor) = (user.id, Auditor::user(user, ip));
    state
        .store
        .write(move |wtx| {
            if !backup_tokens::revoke(wtx, owner, id)? {
                return Err(ConsoleError::NotFound("backup token"));
            }
            let entry = auditor.entry(
                "backup_token.revoke",
                format!("backup_token:{id}"),
                &serde_json::Value::Null,
                &serde_json::Value::Null,
            );
            tollgate_storage::audit::append(wtx, entry)?;
            Ok(())
        })
        .await
}
