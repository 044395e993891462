//! Outgoing mail over SMTP (lettre), configured by the SMTP* options at send time, so an admin's
//! change applies to the next mail without a restart.
//!
//! `SMTPSSLEnabled` selects implicit TLS (usually port 465); otherwise the connection is plain
//! and upgraded with STARTTLS when the server offers it. `SMTPAccount`/`SMTPToken` authenticate
//! when an account is set. The SMTP password never appears in errors or logs.

use lettre::message::{Mailbox, header::ContentType};
use lettre::transport::smtp::authentication::Credentials;
use lettre::transport::smtp::client::{Tls, TlsParameters};
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};
use tollgate_actors::options::OptionsSnapshot;

use crate::error::ConsoleError;

/// Seconds to wait for the SMTP server before giving up.
const SMTP_TIMEOUT_SECS: u64 = 15;

/// Sends one HTML mail to `to`.
pub async fn send(
    options: &OptionsSnapshot,
    to: &str,
    subject: &str,
    html: String,
) -> Result<(), ConsoleError> {
    let server = options.text("SMTPServer");
    if server.is_empty() {
        return Err(ConsoleError::Mail(
            "the administrator has not configured SMTP, so no mail can be sent".into(),
        ));
    }
    let account = options.text("SMTPAccount");
    let from_text = match options.text("SMTPFrom") {
        "" => account,
        from => from,
    };
    let from: Mailbox = format!("{} <{from_text}>", options.text("SystemName"))
        .parse()
        .or_else(|_| from_text.parse())
        .map_err(|_| ConsoleError::Mail("SMTPFrom is not a valid address".into()))?;
    let to: Mailbox = to
        .parse()
        .map_err(|_| ConsoleError::Invalid("not a valid email address".into()))?;
    let message = Message::builder()
        .from(from)
        .to(to)
        .subject(subject)
        .header(ContentType::TEXT_HTML)
        .body(html)
        .map_err(|e| ConsoleError::Mail(format!("cannot build the mail: {e}")))?;

    let port = u16::try_from(options.int("SMTPPort")).unwrap_or(587);
    let tls_params = TlsParameters::new(server.to_owned())
        .map_err(|e| ConsoleError::Mail(format!("SMTP TLS setup failed: {e}")))?;
    let tls = if options.flag("SMTPSSLEnabled") {
        Tls::Wrapper(tls_params)
    } else {
        Tls::Opportunistic(tls_params)
    };
    let mut builder = AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous(server)
        .port(port)
        .tls(tls)
        .timeout(Some(std::time::Duration::from_secs(SMTP_TIMEOUT_SECS)));
    if !account.is_empty() {
        builder = builder.credentials(Credentials::new(
            account.to_owned(),
            options.text("SMTPToken").to_owned(),
        ));
    }
    builder.build().send(message).await.map_err(|e| {
        tracing::warn!(server, port, error = %e, "sending mail failed");
        ConsoleError::Mail("sending the mail failed; ask the administrator to check SMTP".into())
    })?;
    Ok(())
}
