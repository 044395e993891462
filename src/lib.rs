//! Tollgate: a single-binary AI model API gateway with a browser console.
//!
//! Map of the crate:
//! - [`config`]: command-line flags and environment variables ([`Config`]).
//! - [`app`]: [`App::build`] wires storage → publishers → HTTP; [`App::serve`] runs it.
//! - [`state`]: [`state::AppState`], what every handler can reach.
//! - [`http`]: the router, layers, extractors, the response envelope and the embedded console.
//! - [`console`]: `/api/*` handlers (thin) and their services (business rules).
//! - [`relay`]: `/v1/*`, the OpenAI-compatible hot path.
//! - [`error`]: the two error types mapped once to the two wire shapes.
//! - [`channel_types`]: channel type ids, default base URLs, built-in model lists.
//! - [`upstream`]: the shared outbound HTTP clients.
//! - [`task_poll`]: the poller of asynchronous tasks (Midjourney, Suno, video): status calls,
//!   timeouts and refunds.
//! - [`ops`]: `tollgate backup | restore | admin reset-password`.
//! - [`google_auth`]: Google service-account keys made into OAuth2 access tokens (Vertex AI).
//! - [`shutdown`], [`telemetry`]: signals and logging.

pub mod allocator;
pub mod app;
pub mod channel_types;
pub mod clock;
pub mod config;
pub mod console;
pub mod error;
pub mod google_auth;
pub mod http;
pub mod huge_pages;
pub mod import;
pub mod mail;
pub mod metrics;
pub mod ops;
pub mod outbound;
pub mod rate_limit;
pub mod relay;
pub mod reminder;
pub mod shutdown;
pub mod state;
pub mod sticky;
pub mod task_poll;
pub mod task_relay;
pub mod telemetry;
pub mod upstream;

pub use app::{App, StartupError};
pub use config::Config;
