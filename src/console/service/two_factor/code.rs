//! The codes themselves: TOTP (RFC 6238: SHA-1, 6 digits, 30-second steps, one step of clock
//! skew either way, via `totp-rs`) and recovery codes. Pure functions of a record, a code and
//! the time, so the rules (replay, single use) are unit-tested without a server.

use rand::Rng;
use tollgate_storage::two_factor::TwoFactor;
use totp_rs::{Builder, Secret, Totp};

use crate::console::service::secrets::sha256_hex;

/// How many recovery codes a user gets at a time.
pub const RECOVERY_CODES: usize = 10;

/// Characters of a recovery code: lower-case letters and digits without the look-alikes
/// (0/o, 1/l/i), so a code copied by hand from paper still works.
const RECOVERY_ALPHABET: &[u8] = b"abcdefghjkmnpqrstuvwxyz23456789";

/// Characters per recovery code (about 49 bits), shown as two groups of five.
const RECOVERY_LEN: usize = 10;

/// Bytes of a TOTP secret (160 bits, RFC 4226's recommendation).
const SECRET_BYTES: usize = 20;

/// What a code proved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Accepted {
    /// A TOTP code of this time step.
    Totp(u64),
    /// The recovery code at this index of the record's list.
    Recovery(usize),
}

/// A fresh TOTP secret, base32 without padding.
pub fn new_secret() -> String {
    let mut bytes = [0u8; SECRET_BYTES];
    rand::rng().fill(&mut bytes);
    Secret::from(bytes).to_base32()
}

/// The authenticator-app URI (`otpauth://totp/Issuer:account?secret=…&issuer=…`) of `secret`.
/// Colons are not allowed in the issuer or account name, so they become spaces.
pub fn uri(secret: &str, issuer: &str, account: &str) -> Option<String> {
    let clean = |s: &str| s.replace(':', " ").trim().to_owned();
    let issuer = Some(clean(issuer)).filter(|s| !s.is_empty());
    Builder::new()
        .with_secret(Secret::try_from_base32(secret).ok()?)
        .with_issuer(issuer)
        .with_account_name(clean(account))
        .build()
        .ok()?
        .to_url()
        .ok()
}

/// The TOTP of a stored secret (`None` for a secret that does not decode).
fn totp(secret: &str) -> Option<Totp> {
    let secret = Secret::try_from_base32(secret).ok()?;
    Builder::new().with_secret(secret).build().ok()
}

/// [`RECOVERY_CODES`] fresh recovery codes as shown to the user (`abcde-fghjk`), and their
/// digests for the record.
pub fn new_recovery_codes() -> (Vec<String>, Vec<String>) {
    let mut rng = rand::rng();
    let shown: Vec<String> = (0..RECOVERY_CODES)
        .map(|_| {
            let raw: String = (0..RECOVERY_LEN)
                .map(|_| {
                    let i = rng.random_range(0..RECOVERY_ALPHABET.len());
                    char::from(RECOVERY_ALPHABET.get(i).copied().unwrap_or(b'a'))
                })
                .collect();
            let (a, b) = raw.split_at(RECOVERY_LEN / 2);
            format!("{a}-{b}")
        })
        .collect();
    let digests = shown.iter().map(|c| recovery_digest(c)).collect();
    (shown, digests)
}

/// The stored digest of a recovery code as typed: case, spaces and dashes do not matter.
fn recovery_digest(code: &str) -> String {
    let normal: String = code
        .chars()
        .filter(|c| !c.is_whitespace() && *c != '-')
        .flat_map(char::to_lowercase)
        .collect();
    sha256_hex(&normal)
}

/// Checks `code` against `record` at unix time `now`: a 6-digit code is a TOTP code, accepted
/// for the current step or one step either side, and only for a step later than any accepted
/// before (so a code is good once); anything else is looked up among the unused recovery
/// codes. Does not change the record ([`apply`] does).
pub fn check(record: &TwoFactor, code: &str, now: u64) -> Option<Accepted> {
    let code = code.trim();
    if code.is_empty() {
        return None;
    }
    let digits: String = code.chars().filter(|c| !c.is_whitespace()).collect();
    if digits.len() == 6 && digits.bytes().all(|b| b.is_ascii_digit()) {
        let step = totp(&record.secret)?.check(&digits, now)?;
        return (step > record.last_step).then_some(Accepted::Totp(step));
    }
    let digest = recovery_digest(code);
    record
        .recovery
        .iter()
        .position(|d| d == &digest)
        .map(Accepted::Recovery)
}

/// Records the use of what [`check`] accepted: the step becomes the latest accepted one, or
/// the recovery code is struck off.
pub fn apply(record: &mut TwoFactor, accepted: Accepted) {
    match accepted {
        Accepted::Totp(step) => record.last_step = step,
        Accepted::Recovery(i) => {
            if i < record.recovery.len() {
                record.recovery.remove(i);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tollgate_storage::UserId;

    fn record(secret: &str, recovery: Vec<String>) -> TwoFactor {
        TwoFactor {
            user_id: UserId(1),
            secret: secret.to_owned(),
            enabled: true,
            recovery,
            last_step: 0,
            created_at: 0,
            enabled_at: 0,
        }
    }

    fn code_at(secret: &str, time: u64) -> String {
        totp(secret)
            .map(|t| t.generate(time).to_string())
            .unwrap_or_default()
    }

    #[test]
    fn a_totp_code_is_accepted_once_and_older_steps_never_after_it() {
        let secret = new_secret();
        let mut rec = record(&secret, Vec::new());
        let now = 1_000_000_020; // step 33_333_334
        let code = code_at(&secret, now);
        let first = check(&rec, &code, now);
        assert_eq!(first, Some(Accepted::Totp(now / 30)));
        apply(&mut rec, first.unwrap_or(Accepted::Totp(0)));
        assert_eq!(check(&rec, &code, now), None, "replay of the same step");
        let previous = code_at(&secret, now - 30);
        assert_eq!(
            check(&rec, &previous, now),
            None,
            "an older step after a newer one"
        );
        let next = code_at(&secret, now + 30);
        assert_eq!(
            check(&rec, &next, now),
            Some(Accepted::Totp(now / 30 + 1)),
            "skew +1"
        );
        assert_eq!(
            check(&rec, &code_at(&secret, now + 90), now),
            None,
            "outside the skew"
        );
        assert_eq!(check(&rec, "000000x", now), None);
        assert_eq!(check(&rec, "", now), None);
    }

    #[test]
    fn a_recovery_code_works_once_in_any_case_and_spacing() {
        let (shown, digests) = new_recovery_codes();
        assert_eq!(shown.len(), RECOVERY_CODES);
        assert!(
            shown
                .iter()
                .all(|c| c.len() == RECOVERY_LEN + 1 && c.as_bytes()[5] == b'-')
        );
        let mut rec = record(&new_secret(), digests);
        let typed = format!(" {} ", shown[3].to_uppercase().replace('-', " "));
        let accepted = check(&rec, &typed, 0);
        assert_eq!(accepted, Some(Accepted::Recovery(3)));
        apply(&mut rec, Accepted::Recovery(3));
        assert_eq!(rec.recovery.len(), RECOVERY_CODES - 1);
        assert_eq!(check(&rec, &shown[3], 0), None, "used once");
        assert_eq!(check(&rec, &shown[4], 0), Some(Accepted::Recovery(3)));
        assert_eq!(check(&rec, "abcde-fghjk", 0), None);
    }

    #[test]
    fn the_uri_names_the_issuer_and_account_and_carries_the_secret() {
        let secret = new_secret();
        let uri = uri(&secret, "My:Gate", "alice").unwrap_or_default();
        assert!(uri.starts_with("otpauth://totp/"), "{uri}");
        assert!(uri.contains(&format!("secret={secret}")), "{uri}");
        assert!(uri.contains("alice"), "{uri}");
        assert!(uri.contains("issuer=My%20Gate"), "{uri}");
    }
}
