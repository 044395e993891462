//! A SOCKS5 proxy for tests (fast-socks5), with or without a username/password, that counts
//! the connections it relays, so a test can prove a channel's traffic went through it.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use fast_socks5::Socks5Command;
use fast_socks5::server::{Socks5ServerProtocol, run_tcp_proxy};
use tokio::net::{TcpListener, TcpStream};

/// A running SOCKS5 proxy on 127.0.0.1.
pub struct SocksProxy {
    /// `127.0.0.1:<port>`.
    pub addr: String,
    relayed: Arc<AtomicUsize>,
    task: tokio::task::JoinHandle<()>,
}

impl SocksProxy {
    /// Starts a proxy; with `credentials`, clients must authenticate with them.
    #[expect(
        clippy::expect_used,
        reason = "a harness failure must fail the test loudly"
    )]
    pub async fn start(credentials: Option<(&str, &str)>) -> SocksProxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr").to_string();
        let relayed = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&relayed);
        let credentials = credentials.map(|(u, p)| (u.to_owned(), p.to_owned()));
        let task = tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                let counter = Arc::clone(&counter);
                let credentials = credentials.clone();
                tokio::spawn(async move {
                    // A refused handshake just ends this connection.
                    let _ = serve(socket, credentials, counter).await;
                });
            }
        });
        SocksProxy {
            addr,
            relayed,
            task,
        }
    }

    /// Connections relayed so far (after a successful handshake).
    pub fn relayed(&self) -> usize {
        self.relayed.load(Ordering::SeqCst)
    }
}

impl Drop for SocksProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn serve(
    socket: TcpStream,
    credentials: Option<(String, String)>,
    counter: Arc<AtomicUsize>,
) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let proto = match credentials {
        None => Socks5ServerProtocol::accept_no_auth(socket).await?,
        Some((user, pass)) => {
            Socks5ServerProtocol::accept_password_auth(socket, |u, p| u == user && p == pass)
                .await?
                .0
        }
    };
    let (proto, cmd, target) = proto.read_command().await?;
    if cmd != Socks5Command::TCPConnect {
        return Ok(());
    }
    counter.fetch_add(1, Ordering::SeqCst);
    run_tcp_proxy(proto, &target, Duration::from_secs(10), false).await?;
    Ok(())
}
