//! Streamed answers: waiting for the upstream's next piece with the idle timeout, and sending
//! keep-alive pings to the client meanwhile (general_setting.ping_interval_enabled /
//! ping_interval_seconds) so proxies and clients do not drop a slow stream — e.g. a reasoning
//! model thinking for minutes before its first token. Pings are SSE comments (`: PING`) for
//! OpenAI and Gemini clients, which every SSE parser skips, and Anthropic's own `ping` event
//! for Anthropic clients.

use std::time::Duration;

use futures_util::{Stream, StreamExt};
use tokio::time::Instant;
use tollgate_actors::options::relay::RelayOptions;

/// An SSE comment line: ignored by every SSE client.
pub const COMMENT_PING: &[u8] = b": PING\n\n";
/// Anthropic's keep-alive event.
pub const ANTHROPIC_PING: &[u8] = b"event: ping\ndata: {\"type\": \"ping\"}\n\n";

/// The ping interval, `None` when pings are off.
pub fn interval(options: &RelayOptions) -> Option<Duration> {
    if !options.ping_enabled {
        return None;
    }
    let secs = u64::try_from(options.ping_seconds).unwrap_or(0);
    (secs > 0).then(|| Duration::from_secs(secs))
}

/// What waiting for the upstream produced.
pub enum Next<T> {
    /// The upstream's next item (`None`: it ended).
    Item(Option<T>),
    /// Time for a keep-alive ping (the upstream is quiet, but not idle for too long yet).
    Ping,
    /// The upstream sent nothing for the whole idle timeout.
    Idle,
}

/// Keeps the clock of a stream: when the upstream last sent something.
#[derive(Debug, Clone, Copy)]
pub struct Clock {
    idle: Duration,
    ping: Option<Duration>,
    last_upstream: Instant,
}

impl Clock {
    /// A clock with the idle timeout and the ping interval, started now.
    pub fn new(idle: Duration, ping: Option<Duration>) -> Clock {
        Clock {
            idle,
            ping,
            last_upstream: Instant::now(),
        }
    }

    /// Waits for the next item of `stream`, at most until the next ping is due.
    pub async fn next<S>(&mut self, stream: &mut S) -> Next<S::Item>
    where
        S: Stream + Unpin,
    {
        let idle_left = self.idle.saturating_sub(self.last_upstream.elapsed());
        let wait = self.ping.map_or(idle_left, |p| p.min(idle_left));
        match tokio::time::timeout(wait, stream.next()).await {
            Ok(item) => {
                self.last_upstream = Instant::now();
                Next::Item(item)
            }
            Err(_) if self.last_upstream.elapsed() >= self.idle => Next::Idle,
            Err(_) => Next::Ping,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn pings_while_quiet_then_idles_out() {
        let mut quiet = futures_util::stream::pending::<u8>();
        let mut clock = Clock::new(Duration::from_secs(10), Some(Duration::from_secs(4)));
        assert!(matches!(clock.next(&mut quiet).await, Next::Ping));
        assert!(matches!(clock.next(&mut quiet).await, Next::Ping));
        // 8 s gone: the third wait is cut to the 2 s left of the idle timeout.
        assert!(matches!(clock.next(&mut quiet).await, Next::Idle));
        let mut one = futures_util::stream::iter([7u8]);
        let mut clock = Clock::new(Duration::from_secs(10), None);
        assert!(matches!(clock.next(&mut one).await, Next::Item(Some(7))));
        assert!(matches!(clock.next(&mut one).await, Next::Item(None)));
    }
}
