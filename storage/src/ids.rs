//! Typed ids and the `Quota` money type.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// A user's id (1-based; the root user created at setup is 1).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Default,
)]
#[serde(transparent)]
pub struct UserId(pub i64);

impl fmt::Display for UserId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl FromStr for UserId {
    type Err = std::num::ParseIntError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        s.trim().parse().map(UserId)
    }
}

/// An API token's id.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Default,
)]
#[serde(transparent)]
pub struct TokenId(pub i64);

impl fmt::Display for TokenId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// A channel's id (1-based, allocated from the `channels` sequence).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Default,
)]
#[serde(transparent)]
pub struct ChannelId(pub i64);

impl fmt::Display for ChannelId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl FromStr for ChannelId {
    type Err = std::num::ParseIntError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        s.trim().parse().map(ChannelId)
    }
}

/// A redemption code's id.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Default,
)]
#[serde(transparent)]
pub struct RedemptionId(pub i64);

impl fmt::Display for RedemptionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// An online top-up order's id.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Default,
)]
#[serde(transparent)]
pub struct TopUpId(pub i64);

impl fmt::Display for TopUpId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// An amount of quota in integer units (`QuotaPerUnit` units = US$1).
///
/// Arithmetic is checked: callers get `None` on overflow instead of a wrapped balance.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Default,
)]
#[serde(transparent)]
pub struct Quota(pub i64);

impl Quota {
    /// Zero units.
    pub const ZERO: Quota = Quota(0);

    /// `self + rhs`, or `None` on overflow.
    pub fn checked_add(self, rhs: Quota) -> Option<Quota> {
        self.0.checked_add(rhs.0).map(Quota)
    }

    /// `self - rhs`, or `None` on overflow.
    pub fn checked_sub(self, rhs: Quota) -> Option<Quota> {
        self.0.checked_sub(rhs.0).map(Quota)
    }
}

impl fmt::Display for Quota {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quota_arithmetic_is_checked() {
        assert_eq!(Quota(2).checked_add(Quota(3)), Some(Quota(5)));
        assert_eq!(Quota(i64::MAX).checked_add(Quota(1)), None);
        assert_eq!(Quota(i64::MIN).checked_sub(Quota(1)), None);
    }

    #[test]
    fn user_id_parses_and_displays() {
        assert_eq!(" 42".parse::<UserId>().expect("parse"), UserId(42));
        assert!("x".parse::<UserId>().is_err());
        assert_eq!(UserId(7).to_string(), "7");
    }
}
