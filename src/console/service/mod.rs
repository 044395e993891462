//! Business rules behind the console handlers. Pure where possible; handlers stay thin.

pub mod channel;
pub mod login;
pub mod password;
pub mod session;
pub mod setup;
pub mod status;
