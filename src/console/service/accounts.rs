//! Account rules shared by registration, user administration and personal settings:
//! username and password limits, invite codes, and the email address rules.

use tollgate_actors::options::OptionsSnapshot;
use tollgate_storage::WriteTransaction;
use tollgate_storage::{StorageError, users};

use super::secrets::random_alnum;
use crate::error::{ConsoleError, ErrorCode};

/// Longest username (spec 01 §5).
pub const MAX_USERNAME_LEN: usize = 12;
/// Shortest password (spec 01 §5).
pub const MIN_PASSWORD_LEN: usize = 8;
/// Longest password (spec 01 §5, "8 to 20").
pub const MAX_PASSWORD_LEN: usize = 20;
/// Length of generated invite codes.
const AFF_CODE_LEN: usize = 8;

/// Trims and checks a username: 1–12 characters, no whitespace or control characters.
pub fn validate_username(name: &str) -> Result<String, ConsoleError> {
    let name = name.trim();
    if name.is_empty() {
        return Err(ConsoleError::of(ErrorCode::UsernameRequired));
    }
    if name.chars().count() > MAX_USERNAME_LEN {
        return Err(ConsoleError::with_args(
            ErrorCode::UsernameTooLong,
            [MAX_USERNAME_LEN.to_string()],
        ));
    }
    if name.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(ConsoleError::of(ErrorCode::UsernameHasSpaces));
    }
    Ok(name.to_owned())
}

/// Checks a new password: 8–20 characters.
pub fn validate_password(password: &str) -> Result<(), ConsoleError> {
    let len = password.chars().count();
    if !(MIN_PASSWORD_LEN..=MAX_PASSWORD_LEN).contains(&len) {
        return Err(ConsoleError::with_args(
            ErrorCode::PasswordLength,
            [MIN_PASSWORD_LEN.to_string(), MAX_PASSWORD_LEN.to_string()],
        ));
    }
    Ok(())
}

/// A fresh invite code not used by anyone.
pub fn new_aff_code(wtx: &WriteTransaction) -> Result<String, StorageError> {
    loop {
        let code = random_alnum(AFF_CODE_LEN);
        if !users::aff_code_taken(wtx, &code)? {
            return Ok(code);
        }
    }
}

/// Domains where dots in the local part are ignored by the provider (so `a.b@` = `ab@`).
const DOT_INSENSITIVE_DOMAINS: &[&str] = &["gmail.com", "googlemail.com"];

/// Normalises an address and applies the admin's restrictions (pure):
/// - a basic shape check (`local@domain.tld`);
/// - `EmailDomainRestrictionEnabled`: the domain must be in `EmailDomainWhitelist`;
/// - `EmailAliasRestrictionEnabled`: no plus-addressing anywhere, and no dots in the local part
///   on providers that ignore dots (Gmail), so one inbox cannot farm many accounts.
pub fn check_email(email: &str, options: &OptionsSnapshot) -> Result<String, ConsoleError> {
    let email = email.trim().to_lowercase();
    let (local, domain) = email
        .split_once('@')
        .filter(|(l, d)| {
            !l.is_empty() && d.contains('.') && !d.starts_with('.') && !d.ends_with('.')
        })
        .ok_or_else(|| ConsoleError::of(ErrorCode::EmailInvalid))?;
    if email.chars().any(|c| c.is_whitespace() || c.is_control()) || domain.contains('@') {
        return Err(ConsoleError::of(ErrorCode::EmailInvalid));
    }
    if options.flag("EmailDomainRestrictionEnabled") {
        let allowed = options
            .text("EmailDomainWhitelist")
            .split(',')
            .map(|d| d.trim().to_lowercase())
            .any(|d| d == domain);
        if !allowed {
            return Err(ConsoleError::of(ErrorCode::EmailDomainNotAllowed));
        }
    }
    if options.flag("EmailAliasRestrictionEnabled")
        && (local.contains('+')
            || (local.contains('.') && DOT_INSENSITIVE_DOMAINS.contains(&domain)))
    {
        return Err(ConsoleError::of(ErrorCode::EmailAliasRefused));
    }
    Ok(email)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn options(pairs: &[(&str, &str)]) -> OptionsSnapshot {
        OptionsSnapshot::from_stored(
            pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect::<BTreeMap<_, _>>(),
        )
    }

    #[test]
    fn usernames_and_passwords() {
        assert_eq!(validate_username(" bob ").expect("ok"), "bob");
        assert!(validate_username("").is_err());
        assert!(validate_username("thirteenchars").is_err());
        assert!(validate_username("twelve_chars").is_ok());
        assert!(validate_username("a b").is_err());
        assert!(validate_password("1234567").is_err());
        assert!(validate_password("12345678").is_ok());
        assert!(validate_password("123456789012345678901").is_err());
    }

    #[test]
    fn email_shape_and_restrictions() {
        let open = options(&[]);
        assert_eq!(
            check_email(" A@Example.com ", &open).expect("ok"),
            "a@example.com"
        );
        for bad in ["", "a", "a@b", "@b.com", "a@.com", "a@b.com.", "a b@c.com"] {
            assert!(check_email(bad, &open).is_err(), "{bad:?}");
        }
        let whitelist = options(&[("EmailDomainRestrictionEnabled", "true")]);
        assert!(check_email("x@gmail.com", &whitelist).is_ok());
        assert!(check_email("x@evil.example", &whitelist).is_err());
        let alias = options(&[("EmailAliasRestrictionEnabled", "true")]);
        assert!(check_email("x+1@gmail.com", &alias).is_err());
        assert!(check_email("x+1@outlook.com", &alias).is_err());
        assert!(check_email("x.y@gmail.com", &alias).is_err());
        assert!(
            check_email("x.y@outlook.com", &alias).is_ok(),
            "dots are real on Outlook"
        );
    }
}
