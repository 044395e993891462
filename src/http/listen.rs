//! Binding the public listener with an accept backlog sized for bursts of new connections.
//!
//! `TcpListener::bind` asks the kernel for a backlog of 128. A gateway sees bursts far larger
//! than that (a batch job opening a thousand streams at once); past the backlog the kernel drops
//! the handshake and the client retries one second later, a full second of added latency.

use std::net::SocketAddr;

use tokio::net::{TcpListener, TcpSocket};

/// The accept backlog asked for; the kernel caps it at `net.core.somaxconn` (4096 by default
/// since Linux 5.4).
pub const LISTEN_BACKLOG: u32 = 4096;

/// Binds `addr` (with `SO_REUSEADDR`, as `TcpListener::bind` does) and listens with
/// [`LISTEN_BACKLOG`].
pub fn bind(addr: SocketAddr) -> std::io::Result<TcpListener> {
    let socket = if addr.is_ipv4() {
        TcpSocket::new_v4()?
    } else {
        TcpSocket::new_v6()?
    };
    #[cfg(unix)]
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(LISTEN_BACKLOG)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn binds_an_ephemeral_port_and_accepts() -> std::io::Result<()> {
        let listener = bind(SocketAddr::from(([127, 0, 0, 1], 0)))?;
        let addr = listener.local_addr()?;
        assert_ne!(addr.port(), 0);
        let (client, accepted) =
            tokio::join!(tokio::net::TcpStream::connect(addr), listener.accept());
        assert_eq!(client?.local_addr()?, accepted?.1);
        Ok(())
    }

    #[tokio::test]
    async fn a_taken_port_is_an_error() -> std::io::Result<()> {
        let first = bind(SocketAddr::from(([127, 0, 0, 1], 0)))?;
        assert!(bind(first.local_addr()?).is_err());
        Ok(())
    }
}
