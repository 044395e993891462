//! `/api/*`: the console API. One module per resource, each exposing `routes()` with only
//! `.route(...)` lines and thin handlers; the rules live in [`service`].

pub mod account;
pub mod audit;
pub mod auth;
pub mod backup;
pub mod budget;
pub mod channel;
pub mod content;
pub mod data;
pub mod health;
pub mod limits;
pub mod log;
pub mod oauth;
pub mod oidc_discovery;
pub mod option;
pub mod personal;
pub mod pricing;
pub mod redemption;
pub mod service;
pub mod setup;
pub mod status;
pub mod task;
pub mod token;
pub mod topup;
pub mod two_factor;
pub mod user;

use crate::http::api::ApiRouter;

/// Every console route.
pub fn routes() -> ApiRouter {
    ApiRouter::new()
        .merge(setup::routes())
        .merge(status::routes())
        .merge(backup::routes())
        .merge(health::routes())
        .merge(content::routes())
        .merge(option::routes())
        .merge(auth::routes())
        .merge(two_factor::routes())
        .merge(oauth::routes())
        .merge(oidc_discovery::routes())
        .merge(user::routes())
        .merge(account::routes())
        .merge(personal::routes())
        .merge(token::routes())
        .merge(budget::routes())
        .merge(limits::routes())
        .merge(channel::routes())
        .merge(redemption::routes())
        .merge(topup::routes())
        .merge(pricing::routes())
        .merge(log::routes())
        .merge(task::routes())
        .merge(data::routes())
        .merge(audit::routes())
}
