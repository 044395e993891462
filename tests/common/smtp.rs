//! A real SMTP server on loopback (mailin-embedded) that hands every received mail to the test.

use std::net::TcpListener;
use std::time::Duration;

use mailin_embedded::{Handler, Response, Server, SslConfig, response};
use tokio::sync::mpsc;

/// One received mail.
#[derive(Debug, Clone)]
pub struct Mail {
    /// RCPT TO addresses.
    pub to: Vec<String>,
    /// The message with quoted-printable soft breaks and escapes decoded.
    pub body: String,
}

#[derive(Clone)]
struct Sink {
    to: Vec<String>,
    data: Vec<u8>,
    tx: mpsc::UnboundedSender<Mail>,
}

impl Handler for Sink {
    fn data_start(&mut self, _domain: &str, _from: &str, _is8bit: bool, to: &[String]) -> Response {
        self.to = to.to_vec();
        self.data.clear();
        response::OK
    }

    fn data(&mut self, buf: &[u8]) -> std::io::Result<()> {
        self.data.extend_from_slice(buf);
        Ok(())
    }

    fn data_end(&mut self) -> Response {
        let raw = String::from_utf8_lossy(&self.data).into_owned();
        let _ = self.tx.send(Mail {
            to: std::mem::take(&mut self.to),
            body: decode_quoted_printable(&raw),
        });
        response::OK
    }
}

/// The running SMTP server.
pub struct SmtpServer {
    /// Port on 127.0.0.1.
    pub port: u16,
    rx: mpsc::UnboundedReceiver<Mail>,
}

impl SmtpServer {
    /// Starts the server on an ephemeral port (a background thread; it ends with the test
    /// process).
    pub fn start() -> SmtpServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind smtp");
        let port = listener.local_addr().expect("addr").port();
        let (tx, rx) = mpsc::unbounded_channel();
        let mut server = Server::new(Sink {
            to: Vec::new(),
            data: Vec::new(),
            tx,
        });
        server
            .with_name("smtp.test")
            .with_ssl(SslConfig::None)
            .expect("no tls")
            .with_tcp_listener(listener);
        std::thread::spawn(move || {
            let _ = server.serve();
        });
        SmtpServer { port, rx }
    }

    /// The next mail (fails the test after 10 s without one).
    pub async fn next_mail(&mut self) -> Mail {
        tokio::time::timeout(Duration::from_secs(10), self.rx.recv())
            .await
            .expect("a mail within 10 s")
            .expect("smtp server alive")
    }

    /// The next mail if one arrives within `wait` (to check that none is sent).
    pub async fn mail_within(&mut self, wait: Duration) -> Option<Mail> {
        tokio::time::timeout(wait, self.rx.recv())
            .await
            .ok()
            .flatten()
    }
}

/// Undoes quoted-printable: soft line breaks and `=XX` escapes (good enough for ASCII mails).
fn decode_quoted_printable(raw: &str) -> String {
    let joined = raw.replace("=\r\n", "").replace("=\n", "");
    let bytes = joined.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'='
            && i + 2 < bytes.len()
            && let Ok(b) = u8::from_str_radix(&joined[i + 1..i + 3], 16)
        {
            out.push(b);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}
