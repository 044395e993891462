//! Business rules behind the console handlers. Pure where possible; handlers stay thin.

pub mod accounts;
pub mod audit;
pub mod channel;
pub mod dashboard;
pub mod epay;
pub mod health;
pub mod key_guard;
pub mod login;
pub mod logs;
pub mod mail_codes;
pub mod oauth;
pub mod option_access;
pub mod password;
pub mod personal;
pub mod pricing;
pub mod redemptions;
pub mod register;
pub mod secrets;
pub mod session;
pub mod setup;
pub mod status;
pub mod tokens;
pub mod topup;
pub mod turnstile;
pub mod user_view;
pub mod users_admin;
