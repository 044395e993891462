//! `AppState`: the handles every handler can reach. Cheap to clone; holds no locks of its own.

use std::sync::Arc;

use axum::extract::FromRef;
use axum_extra::extract::cookie::Key;
use tollgate_actors::channel_pool::ChannelPool;
use tollgate_actors::log_janitor::LogJanitor;
use tollgate_actors::options::Options;
use tollgate_actors::quota::QuotaBook;
use tollgate_actors::token_index::TokenIndex;
use tollgate_actors::user_directory::UserDirectory;
use tollgate_storage::Store;

use crate::config::Config;
use crate::console::service::health::ProbeCache;
use crate::console::service::oauth::state::StateRegistry;
use crate::console::service::password::Hasher;
use crate::console::service::two_factor::gate::TwoFactorGate;
use crate::http::critical_limiter::CriticalLimiter;
use crate::http::trusted_proxies::TrustedProxies;
use crate::relay::pipeline::body_budget::BodyBudget;
use crate::relay::pipeline::count_guard::CountGuard;
use crate::upstream::HttpClients;

/// Shared state of the HTTP layer: one pointer, so the clones axum makes for every extractor
/// and middleware of every request cost one atomic increment (the handles inside it are a
/// dozen `Arc`s and a channel sender).
#[derive(Clone)]
pub struct AppState(Arc<Shared>);

impl AppState {
    /// Wraps the handles.
    pub fn new(shared: Shared) -> AppState {
        AppState(Arc::new(shared))
    }
}

impl std::ops::Deref for AppState {
    type Target = Shared;

    fn deref(&self) -> &Shared {
        &self.0
    }
}

/// The handles inside [`AppState`].
pub struct Shared {
    /// The database.
    pub store: Store,
    /// Runtime options publisher (read its snapshot, never the database, on request paths).
    pub options: Options,
    /// The channel pool: owns channels and health, publishes the routing table.
    pub channel_pool: ChannelPool,
    /// Outbound HTTP clients (shared pool, per-proxy clients cached).
    pub http: HttpClients,
    /// Key that signs session cookies (from the configured or the persisted secret).
    pub cookie_key: Key,
    /// Startup configuration (immutable).
    pub config: Arc<Config>,
    /// API key → token facts for the relay; patched by every token change.
    pub tokens: TokenIndex,
    /// Key owners' facts for the relay; patched by every console change to a user.
    pub users: UserDirectory,
    /// Every user's balance and reservations; the only place balances are decided.
    pub quota: QuotaBook,
    /// The rate-limit engine: users', keys', channels' and rules' counters (P15).
    pub limits: tollgate_actors::limiter::Limiter,
    /// Deletes old logs in the background (admin request or automatic retention).
    pub janitor: LogJanitor,
    /// Third-party sign-ins in progress (each state redeemable once).
    pub oauth_states: StateRegistry,
    /// Sign-ins waiting for their two-factor code, and recent re-verifications.
    pub two_factor: TwoFactorGate,
    /// Per-IP budget of the abuse-prone routes.
    pub critical_limiter: CriticalLimiter,
    /// Whose forwarding headers name the client (`--trusted-proxies`).
    pub trusted_proxies: TrustedProxies,
    /// Per-key budget and worker slots of the free token-counting routes.
    pub count_guard: CountGuard,
    /// Bytes of relay request bodies in flight (RelayBodyBudgetMB).
    pub body_budget: BodyBudget,
    /// Unix seconds when this process started (reported by /api/status).
    pub started_at: i64,
    /// The password hashing thread.
    pub hasher: Hasher,
    /// Upstream calls that outlive their client: a relay request runs in a task of its own
    /// from the moment it is forwarded, so a client that leaves before the answer does not
    /// cancel a call the upstream bills; the task settles it (`partial`, `client_gone`).
    /// Shutdown waits for them (within the grace period).
    pub detached: tokio_util::task::TaskTracker,
    /// The one-time token first-run setup needs (printed in the log at start-up while the
    /// server is not set up) and when it is asked for.
    pub setup_gate: crate::console::service::setup_gate::SetupGate,
    /// The last database probe of GET /api/health (reused for a few seconds).
    pub health_probe: ProbeCache,
    /// What `/metrics` exposes (recorded by the relay; atomics only).
    pub metrics: crate::metrics::Metrics,
    /// The task poller (Midjourney, Suno, video tasks): woken when a task is made.
    pub task_poller: crate::task_poll::TaskPoller,
}

impl FromRef<AppState> for Key {
    fn from_ref(state: &AppState) -> Key {
        state.cookie_key.clone()
    }
}
