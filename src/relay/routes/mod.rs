//! The relay's route families: each handler parses its request into a [`super::Plan`] and
//! hands it to [`super::run`]; [`plan`] decides which family serves a JSON request; `count`
//! answers token counts (unbilled) and `models` / `dashboard` answer from memory.

pub mod audio;
pub mod chat;
pub mod cohere;
pub mod convert;
pub mod count;
pub mod dashboard;
pub mod embed;
pub mod gemini;
pub mod messages;
pub mod models;
pub mod plan;
pub mod playground;
pub mod responses;
