//! First-run setup: creates the root user and records the usage mode, exactly once.
//!
//! "Exactly once" is decided inside the write transaction that creates the root (redb
//! serialises writers), so two concurrent POSTs create one root and the loser is refused.

use axum::http::HeaderMap;
use serde::{Deserialize, Serialize};
use tollgate_actors::options::catalog;
use tollgate_storage::users::{self, NewUser, ROLE_ROOT};
use tollgate_storage::{Quota, StorageError, meta, options};

use crate::clock::now_unix;
use crate::error::{ConsoleError, ErrorCode};
use crate::state::AppState;

/// Shortest accepted root password.
pub const MIN_PASSWORD_LEN: usize = 8;
/// Longest accepted password (bounds the hashing work an anonymous caller can ask for).
pub const MAX_PASSWORD_LEN: usize = 128;
/// Longest accepted username.
pub const MAX_USERNAME_LEN: usize = 12;

/// GET /api/setup answer.
#[derive(Debug, Serialize)]
pub struct SetupInfo {
    /// True once setup is complete.
    pub status: bool,
    /// True when a super admin exists.
    pub root_init: bool,
    /// Always "redb" (embedded database).
    pub database_type: &'static str,
    /// True when setup needs the one-time token printed in the server log (see
    /// [`super::setup_gate`]).
    pub token_required: bool,
}

/// POST /api/setup body (the console's field names).
#[derive(Debug, Deserialize)]
pub struct SetupRequest {
    /// Root username.
    #[serde(default)]
    pub username: String,
    /// Root password.
    #[serde(default)]
    pub password: String,
    /// Must equal `password`.
    #[serde(default, rename = "confirmPassword")]
    pub confirm_password: String,
    /// Self-use mode (no registration, no pricing needed).
    #[serde(default, rename = "SelfUseModeEnabled")]
    pub self_use_mode: bool,
    /// Demo-site mode.
    #[serde(default, rename = "DemoSiteEnabled")]
    pub demo_site: bool,
    /// The one-time setup token from the server log (see [`super::setup_gate`]).
    #[serde(default)]
    pub token: String,
    /// The address users reach the console at (the setup page sends the browser's origin);
    /// stored as the `ServerAddress` option. Absent: the option keeps its default.
    #[serde(default, rename = "ServerAddress")]
    pub server_address: Option<String>,
}

/// Validated root credentials.
#[derive(Debug, PartialEq)]
struct RootCredentials {
    username: String,
    password: String,
}

/// The setup rules of spec 01 §5, applied to the credentials.
fn validate_root(req: &SetupRequest) -> Result<RootCredentials, ConsoleError> {
    let username = req.username.trim();
    if username.is_empty() {
        return Err(ConsoleError::of(ErrorCode::AdminUsernameRequired));
    }
    if username.chars().count() > MAX_USERNAME_LEN {
        return Err(ConsoleError::with_args(
            ErrorCode::UsernameTooLong,
            [MAX_USERNAME_LEN.to_string()],
        ));
    }
    let len = req.password.chars().count();
    if len < MIN_PASSWORD_LEN {
        return Err(ConsoleError::of(ErrorCode::PasswordTooShort));
    }
    if len > MAX_PASSWORD_LEN {
        return Err(ConsoleError::with_args(
            ErrorCode::PasswordTooLong,
            [MAX_PASSWORD_LEN.to_string()],
        ));
    }
    if req.password != req.confirm_password {
        return Err(ConsoleError::of(ErrorCode::PasswordsDiffer));
    }
    Ok(RootCredentials {
        username: username.to_owned(),
        password: req.password.clone(),
    })
}

/// Reads the setup state, as a request with `headers` sees it. The data file's path is not
/// told: this route is public, and a path says more about the host than a stranger needs.
pub async fn info(state: &AppState, headers: &HeaderMap) -> Result<SetupInfo, ConsoleError> {
    let (setup, root_init) = read_state(state).await?;
    Ok(SetupInfo {
        status: setup,
        root_init,
        database_type: "redb",
        token_required: !setup && state.setup_gate.required(headers),
    })
}

/// `(setup done, root user exists)`.
pub async fn read_state(state: &AppState) -> Result<(bool, bool), ConsoleError> {
    Ok(state
        .store
        .read(|rtx| Ok::<_, StorageError>((meta::setup_state(rtx)?.done, users::root_exists(rtx)?)))
        .await?)
}

/// Runs setup: validates, creates the root (unless one exists), stores the usage mode and marks
/// setup done, all in one transaction; then republishes the options.
pub async fn run(
    state: &AppState,
    req: SetupRequest,
    headers: &HeaderMap,
) -> Result<(), ConsoleError> {
    let (done, root_init) = read_state(state).await?;
    if done {
        return Err(ConsoleError::AlreadyInitialized);
    }
    state.setup_gate.check(headers, &req.token)?;
    if req.self_use_mode && req.demo_site {
        return Err(ConsoleError::of(ErrorCode::UsageModesExclusive));
    }
    let root = if root_init {
        None
    } else {
        let creds = validate_root(&req)?;
        let hash = state.hasher.hash(creds.password).await?;
        Some((creds.username, hash))
    };
    let server_address = server_address(req.server_address.as_deref())?;
    let (self_use, demo) = (req.self_use_mode, req.demo_site);
    state
        .store
        .write(move |wtx| {
            if meta::setup_state_rw(wtx)?.done {
                return Err(ConsoleError::AlreadyInitialized);
            }
            let now = now_unix();
            if let Some((username, password_hash)) = root
                && !users::root_exists_rw(wtx)?
            {
                users::insert(
                    wtx,
                    NewUser {
                        username,
                        display_name: "Root User".into(),
                        password_hash,
                        email: String::new(),
                        role: ROLE_ROOT,
                        group: "default".into(),
                        quota: Quota(100_000_000),
                        aff_code: String::new(),
                        inviter_id: 0,
                        created_at: now,
                    },
                )?;
            }
            options::put(wtx, "SelfUseModeEnabled", bool_text(self_use))?;
            options::put(wtx, "DemoSiteEnabled", bool_text(demo))?;
            if let Some(address) = &server_address {
                options::put(wtx, "ServerAddress", address)?;
            }
            meta::set_setup_state(
                wtx,
                meta::SetupState {
                    done: true,
                    at: now,
                },
            )?;
            Ok(())
        })
        .await?;
    state.options.reload().await?;
    tracing::info!(self_use, demo, "setup completed");
    Ok(())
}

/// The `ServerAddress` sent with setup, normalised as the settings page's would be (trailing
/// slashes removed); it must be an http(s) address with a host. `None` or blank: not sent.
fn server_address(sent: Option<&str>) -> Result<Option<String>, ConsoleError> {
    let Some(sent) = sent.map(str::trim).filter(|s| !s.is_empty()) else {
        return Ok(None);
    };
    let address = catalog::normalize("ServerAddress", sent)?;
    let parsed = reqwest::Url::parse(&address).ok();
    let usable = parsed.as_ref().is_some_and(|u| {
        matches!(u.scheme(), "http" | "https") && u.host().is_some() && u.query().is_none()
    });
    if usable {
        Ok(Some(address))
    } else {
        Err(ConsoleError::of(ErrorCode::ServerAddressNotHttp))
    }
}

fn bool_text(b: bool) -> &'static str {
    if b { "true" } else { "false" }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(username: &str, password: &str, confirm: &str) -> SetupRequest {
        SetupRequest {
            username: username.into(),
            password: password.into(),
            confirm_password: confirm.into(),
            self_use_mode: false,
            demo_site: false,
            token: String::new(),
            server_address: None,
        }
    }

    #[test]
    fn root_credentials_rules() {
        assert!(
            validate_root(&req("", "password1", "password1")).is_err(),
            "username required"
        );
        assert!(
            validate_root(&req("   ", "password1", "password1")).is_err(),
            "blank username"
        );
        assert!(
            validate_root(&req("root", "short", "short")).is_err(),
            "password < 8"
        );
        assert!(
            validate_root(&req("root", "password1", "password2")).is_err(),
            "mismatch"
        );
        assert!(validate_root(&req("averyverylongname", "password1", "password1")).is_err());
        let ok = validate_root(&req(" root ", "password1", "password1")).expect("valid");
        assert_eq!(ok.username, "root", "username is trimmed");
        assert!(
            validate_root(&req("root", "密码密码密码密码", "密码密码密码密码")).is_ok(),
            "8 chars, not bytes"
        );
    }

    #[test]
    fn the_server_address_sent_with_setup_is_an_http_origin() {
        assert_eq!(server_address(None).ok(), Some(None));
        assert_eq!(server_address(Some("  ")).ok(), Some(None));
        assert_eq!(
            server_address(Some(" https://gw.example.com/ ")).ok(),
            Some(Some("https://gw.example.com".into()))
        );
        for bad in [
            "javascript:alert(1)",
            "gw.example.com",
            "ftp://gw.example.com",
            "https://",
        ] {
            assert!(server_address(Some(bad)).is_err(), "{bad}");
        }
    }
}
