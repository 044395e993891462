//! `App`: builds everything from a [`Config`] (storage → publishers → router) and serves it with
//! graceful shutdown.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::serve::ListenerExt;
use axum_extra::extract::cookie::Key;
use rand::RngCore;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tollgate_actors::ActorError;
use tollgate_actors::channel_pool::ChannelPool;
use tollgate_actors::limiter::Limiter;
use tollgate_actors::log_janitor::LogJanitor;
use tollgate_actors::log_writer::LogWriter;
use tollgate_actors::options::Options;
use tollgate_actors::quota::QuotaBook;
use tollgate_actors::token_index::TokenIndex;
use tollgate_actors::user_directory::UserDirectory;
use tollgate_storage::store::BackendWrap;
use tollgate_storage::{StorageError, Store, meta};

use crate::clock::now_unix;
use crate::config::{Config, MIN_SESSION_SECRET_LEN, read_keyring};
use crate::console::service::channel::probe::ChannelProber;
use crate::console::service::health::ProbeCache;
use crate::console::service::oauth::state::StateRegistry;
use crate::console::service::password::Hasher;
use crate::console::service::secrets::random_alnum;
use crate::console::service::setup_gate::SetupGate;
use crate::console::service::two_factor::gate::TwoFactorGate;
use crate::http::critical_limiter::CriticalLimiter;
use crate::http::listen;
use crate::http::trusted_proxies::TrustedProxies;
use crate::metrics::Metrics;
use crate::outbound::media::MediaFetcher;
use crate::outbound::{Guard, GuardedClient};
use crate::relay::pipeline::body_budget::BodyBudget;
use crate::relay::pipeline::count_guard::CountGuard;
use crate::reminder::QuotaReminder;
use crate::reminder::root_alerts::RootAlerts;
use crate::state::{AppState, Shared};
use crate::task_poll::{PollerDeps, TaskPoller};
use crate::upstream::HttpClients;

/// Why Tollgate could not start (or stopped with an error).
#[derive(Debug, thiserror::Error)]
pub enum StartupError {
    /// The database could not be opened.
    #[error(transparent)]
    Storage(#[from] StorageError),
    /// Options could not be loaded.
    #[error(transparent)]
    Actor(#[from] ActorError),
    /// A setting is invalid.
    #[error("invalid configuration: {0}")]
    Config(String),
    /// The listen address could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
    /// Serving failed.
    #[error("server error: {0}")]
    Serve(std::io::Error),
    /// The outbound HTTP client could not be built.
    #[error("cannot build the HTTP client: {0}")]
    Http(#[from] reqwest::Error),
    /// A startup task panicked.
    #[error("startup task failed: {0}")]
    Join(#[from] tokio::task::JoinError),
}

/// A built, bound, not yet serving Tollgate.
pub struct App {
    /// Shared state handed to every handler.
    state: AppState,
    /// The bound listener (bound in `build`, so callers know the port before serving).
    listener: TcpListener,
    /// Completes when the channel pool actor has stopped (awaited at the end of `serve`).
    pool_task: JoinHandle<()>,
    /// The log writer's thread (joined at the end of `serve`, after the final flush).
    writer_thread: std::thread::JoinHandle<()>,
    /// Automatic log retention (aborted at shutdown).
    retention_task: JoinHandle<()>,
    /// Alerts root when storage faults and recovers.
    alert_task: JoinHandle<()>,
    /// The task poller (aborted at shutdown; its leases are returned at the next start).
    poll_task: JoinHandle<()>,
    /// The `--metrics-listen` listener, if configured.
    metrics_listener: Option<TcpListener>,
    /// Drops idle key entries and ledgers (aborted at shutdown).
    sweep_task: JoinHandle<()>,
}

/// Every `period`, drops the API key entries no request used during the whole period that
/// ended (their keys' digests stay: the next request reads the entry back) and the ledgers
/// of users idle that long (rebuilt exactly on their next request).
fn spawn_idle_sweep(
    tokens: TokenIndex,
    quota: QuotaBook,
    period: std::time::Duration,
) -> JoinHandle<()> {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(period);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        tick.tick().await;
        loop {
            tick.tick().await;
            let index = tokens.clone();
            match tokio::task::spawn_blocking(move || index.sweep()).await {
                Ok(keys) if keys > 0 => tracing::debug!(keys, "idle key entries dropped"),
                Ok(_) => {}
                Err(e) => tracing::warn!(error = %e, "sweeping idle key entries failed"),
            }
            let ledgers = quota.evict_idle(period).await;
            if ledgers > 0 {
                tracing::debug!(ledgers, "idle ledgers dropped");
            }
        }
    })
}

impl App {
    /// Opens the database, loads the options, derives the session key and binds the listener.
    pub async fn build(config: Config) -> Result<App, StartupError> {
        App::build_on(config, None).await
    }

    /// [`App::build`] with the database's file backend wrapped by `wrap`: how tests inject
    /// storage faults (not reachable from the command line).
    #[doc(hidden)]
    pub async fn build_on(config: Config, wrap: Option<BackendWrap>) -> Result<App, StartupError> {
        let data_dir = config.data_dir.clone();
        let cache = config.db_cache();
        let (key_file, key) = (config.secret_key_file.clone(), config.secret_key.clone());
        let store = tokio::task::spawn_blocking(move || {
            let keyring =
                read_keyring(key_file.as_deref(), key.as_deref()).map_err(StartupError::Config)?;
            Ok::<_, StartupError>(Store::open_dir_wrapped(&data_dir, cache, wrap, keyring)?)
        })
        .await??;
        if store.keyring().is_sealing() {
            tracing::info!("secrets in the database are encrypted with the configured secret key");
        } else {
            tracing::warn!(
                "no secret key configured (--secret-key-file or TOLLGATE_SECRET_KEY): channel \
                 keys, API keys and stored secrets are kept in the database in plain text"
            );
        }
        let secret = session_secret(&config, &store).await?;
        let setup_gate = setup_gate(&config, &store).await?;
        let options = {
            let store = store.clone();
            tokio::task::spawn_blocking(move || Options::load(store)).await??
        };
        let tokens = {
            let store = store.clone();
            tokio::task::spawn_blocking(move || TokenIndex::load(&store)).await??
        };
        let (writer, writer_thread) = {
            let (store, options, interval) =
                (store.clone(), options.clone(), config.commit_interval());
            tokio::task::spawn_blocking(move || {
                LogWriter::spawn_with(store, Some(options), interval)
            })
            .await?
            .map_err(|e| StartupError::Config(format!("cannot start the log writer: {e}")))?
        };
        let writer_stats = Arc::clone(writer.stats());
        let quota = QuotaBook::new(store.clone(), writer);
        {
            let clock = config.clock.clone();
            quota.use_budget_env(options.clone(), Arc::new(move || clock.now_unix()));
        }
        let limits = {
            let store = store.clone();
            tokio::task::spawn_blocking(move || {
                Limiter::load(&store, Arc::new(tollgate_actors::limiter::system_millis))
            })
            .await??
        };
        let users = UserDirectory::new(store.clone());
        // User webhooks: guarded (loopback only with --webhook-allow-loopback-http), no redirects.
        let webhooks = GuardedClient::new(
            Guard::new(
                Arc::clone(&config.outbound_overrides),
                config.webhook_allow_loopback_http,
            ),
            0,
        )?;
        let reminder = QuotaReminder::new(
            store.clone(),
            options.clone(),
            users.clone(),
            webhooks.clone(),
        );
        quota.watch_settlements(Arc::new(reminder));
        let media = MediaFetcher::new(
            Guard::new(Arc::clone(&config.outbound_overrides), false),
            config.media_fetch_max_mb,
            config.media_fetch_timeout_secs,
        )?;
        let http = HttpClients::new()?.with_media(media);
        let prober = Arc::new(ChannelProber { http: http.clone() });
        let (channel_pool, pool_task) = ChannelPool::spawn(
            store.clone(),
            options.clone(),
            prober,
            crate::channel_types::serve::mask,
        )
        .await?;
        let alerts = RootAlerts::new(store.clone(), options.clone(), webhooks);
        channel_pool.watch_channels(Arc::new(alerts.clone()));
        let alert_task = alerts.watch_storage(quota.storage_health().clone());
        let listener = listen::bind(config.listen).map_err(|source| StartupError::Bind {
            addr: config.listen,
            source,
        })?;
        let metrics_listener = match config.metrics_listen {
            Some(addr) => {
                Some(listen::bind(addr).map_err(|source| StartupError::Bind { addr, source })?)
            }
            None => None,
        };
        let (task_poller, poll_task) = TaskPoller::spawn(PollerDeps {
            store: store.clone(),
            quota: quota.clone(),
            options: options.clone(),
            http: http.clone(),
            interval: config.task_poll_interval(),
            clock: now_unix,
        });
        let metrics = Metrics::with_tasks(
            channel_pool.table().clone(),
            writer_stats,
            Arc::clone(task_poller.stats()),
            limits.clone(),
            crate::metrics::ResidentCollector {
                tokens: tokens.clone(),
                quota: Some(quota.clone()),
            },
        );
        let janitor = LogJanitor::new(store.clone());
        let retention_task = janitor.spawn_auto(options.clone(), now_unix);
        let sweep_task = spawn_idle_sweep(tokens.clone(), quota.clone(), config.idle_evict());
        let hash_queue = config.password_hash_queue;
        let state = AppState::new(Shared {
            janitor,
            store,
            options,
            tokens,
            users,
            quota,
            limits,
            critical_limiter: CriticalLimiter::new(config.critical_rate_limit),
            trusted_proxies: TrustedProxies::new(config.trusted_proxies.clone()),
            oauth_states: StateRegistry::default(),
            two_factor: TwoFactorGate::new(config.clock.clone()),
            count_guard: CountGuard::default(),
            body_budget: BodyBudget::default(),
            channel_pool,
            http,
            cookie_key: Key::derive_from(&secret),
            config: Arc::new(config),
            started_at: now_unix(),
            hasher: Hasher::with_queue(hash_queue).map_err(|e| {
                StartupError::Config(format!("cannot start the password hashing thread: {e}"))
            })?,
            detached: tokio_util::task::TaskTracker::new(),
            setup_gate,
            health_probe: ProbeCache::default(),
            metrics,
            task_poller,
        });
        Ok(App {
            state,
            listener,
            pool_task,
            writer_thread,
            retention_task,
            sweep_task,
            alert_task,
            poll_task,
            metrics_listener,
        })
    }

    /// The address actually bound (useful with port 0).
    pub fn local_addr(&self) -> Result<SocketAddr, StartupError> {
        self.listener.local_addr().map_err(StartupError::Serve)
    }

    /// The address `/metrics` is served on alone (`--metrics-listen`), if configured.
    pub fn metrics_addr(&self) -> Option<SocketAddr> {
        self.metrics_listener
            .as_ref()
            .and_then(|l| l.local_addr().ok())
    }

    /// The shared state (tests use it to reach the channel pool and the store).
    pub fn state(&self) -> &AppState {
        &self.state
    }

    /// The router, for in-process tests without a socket.
    pub fn router(&self) -> Router {
        crate::http::router(self.state.clone())
    }

    /// Serves until `shutdown` resolves, then lets in-flight requests finish (up to the
    /// configured timeout) and closes the database.
    pub async fn serve(
        self,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), StartupError> {
        let addr = self.local_addr()?;
        let grace = self.state.config.shutdown_timeout();
        let router = self.router();
        tracing::info!(%addr, data = %self.state.store.path().display(), "Tollgate is serving");
        let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
        // TCP_NODELAY: without it a streamed answer's last chunk waits for the client's delayed
        // ACK (~40 ms, DESIGN.md "Facts measured").
        let listener = self.listener.tap_io(|tcp| {
            if let Err(e) = tcp.set_nodelay(true) {
                tracing::debug!(error = %e, "set_nodelay failed");
            }
        });
        let metrics_task = self.metrics_listener.map(|listener| {
            let mut stop = stop_rx.clone();
            let router = crate::metrics::serve::router(self.state.metrics.clone());
            tokio::spawn(
                axum::serve(listener, router)
                    .with_graceful_shutdown(async move {
                        let _ = stop.wait_for(|stop| *stop).await;
                    })
                    .into_future(),
            )
        });
        let mut graceful_rx = stop_rx.clone();
        let service = router.into_make_service_with_connect_info::<SocketAddr>();
        let server = axum::serve(listener, service).with_graceful_shutdown(async move {
            let _ = graceful_rx.wait_for(|stop| *stop).await;
        });
        let mut server = std::pin::pin!(server.into_future());
        tokio::select! {
            result = &mut server => return result.map_err(StartupError::Serve),
            () = shutdown => {}
        }
        let _ = stop_tx.send(true);
        match tokio::time::timeout(grace, server).await {
            Ok(result) => result.map_err(StartupError::Serve)?,
            Err(_) => tracing::warn!(?grace, "in-flight requests did not finish in time; closing"),
        }
        if let Some(task) = metrics_task {
            // A scrape is quick; one still running at the end of the grace period is cut.
            if tokio::time::timeout(grace, task).await.is_err() {
                tracing::warn!("the metrics listener did not stop in time");
            }
        }
        // Upstream calls whose clients left settle before the books close.
        self.state.detached.close();
        if tokio::time::timeout(grace, self.state.detached.wait())
            .await
            .is_err()
        {
            tracing::warn!(
                ?grace,
                "detached upstream calls did not finish in time; closing"
            );
        }
        // Log deletion holds store handles: stop it (after its current batch).
        self.retention_task.abort();
        let _ = self.retention_task.await;
        self.alert_task.abort();
        let _ = self.alert_task.await;
        self.sweep_task.abort();
        let _ = self.sweep_task.await;
        // The poller holds store handles: it ends after its current round (whose writes must
        // finish before the file closes); a round still waiting on an upstream at the end of
        // the grace period is cut, leaving leases the next start returns.
        self.state.task_poller.stop();
        let mut poll_task = self.poll_task;
        if tokio::time::timeout(grace, &mut poll_task).await.is_err() {
            poll_task.abort();
            let _ = poll_task.await;
        }
        self.state.janitor.stop().await;
        // The pool actor holds a store handle: stop it and wait, so the file is closed on return.
        self.state.channel_pool.stop();
        if let Err(e) = self.pool_task.await {
            tracing::warn!(error = %e, "the channel pool did not stop cleanly");
        }
        // Final flush: every settlement queued so far is committed before the file closes. The
        // writer thread ends once the last handle (inside the state) is dropped.
        if let Err(e) = self.state.quota.flush().await {
            tracing::error!(error = %e, "the final flush failed");
        }
        drop(self.state);
        if tokio::task::spawn_blocking(move || self.writer_thread.join())
            .await
            .is_err()
        {
            tracing::warn!("the log writer did not stop cleanly");
        }
        tracing::info!("Tollgate stopped; database closed");
        Ok(())
    }
}

/// The one-time token first-run setup needs (anyone who reaches a fresh install could
/// otherwise make themselves root; see [`SetupGate`] for when it is asked for): drawn at
/// start-up while the server is not set up and printed in the server log, which only the
/// operator reads.
async fn setup_gate(config: &Config, store: &Store) -> Result<SetupGate, StartupError> {
    let always = !config.listen.ip().is_loopback() || !config.trusted_proxies.is_empty();
    let done = store.read(meta::setup_state).await?.done;
    if done {
        return Ok(SetupGate::new(None, always));
    }
    let token = random_alnum(SETUP_TOKEN_LEN);
    if always {
        tracing::warn!(
            setup_token = %token,
            "Tollgate is not set up yet and listens beyond loopback or behind a proxy: first-run \
             setup needs this one-time token (open /setup?token=<token> in the console, or \
             enter it on the setup page)"
        );
    } else {
        tracing::info!(
            setup_token = %token,
            "Tollgate is not set up yet: setup from this machine needs no token; through a \
             reverse proxy it needs this one-time token (open /setup?token=<token>)"
        );
    }
    Ok(SetupGate::new(Some(token), always))
}

/// Length of the first-run setup token.
const SETUP_TOKEN_LEN: usize = 32;

/// The operator's secret, or the one generated on first start and kept in the database.
async fn session_secret(config: &Config, store: &Store) -> Result<Vec<u8>, StartupError> {
    if let Some(secret) = &config.session_secret {
        if secret.len() < MIN_SESSION_SECRET_LEN {
            return Err(StartupError::Config(format!(
                "the session secret must be at least {MIN_SESSION_SECRET_LEN} characters"
            )));
        }
        return Ok(secret.as_bytes().to_vec());
    }
    Ok(store
        .write(|wtx| {
            meta::session_secret_or_init(wtx, || {
                let mut bytes = vec![0u8; meta::SESSION_SECRET_LEN];
                rand::rng().fill_bytes(&mut bytes);
                bytes
            })
        })
        .await?)
}
