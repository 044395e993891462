//! Outgoing mail over SMTP (lettre), configured by the SMTP* options at send time, so an admin's
//! change applies to the next mail without a restart.
//!
//! `SMTPSSLEnabled` selects implicit TLS (usually port 465); otherwise the connection is
//! upgraded with STARTTLS, which is required (a server that does not offer it gets no mail, so
//! the password and reset links never cross the network in the clear) unless the operator
//! turns on `SMTPAllowPlaintext`. `SMTPAccount`/`SMTPToken` authenticate
//! when an account is set. The SMTP password never appears in errors or logs.

use lettre::message::{Mailbox, header::ContentType};
use lettre::transport::smtp::authentication::Credentials;
use lettre::transport::smtp::client::{Tls, TlsParameters};
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};
use tollgate_actors::options::OptionsSnapshot;

use crate::error::{ConsoleError, ErrorCode};

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
        return Err(ConsoleError::of(ErrorCode::SmtpNotConfigured));
    }
    let account = options.text("SMTPAccount");
    let from_text = match options.text("SMTPFrom") {
        "" => account,
        from => from,
    };
    let from: Mailbox = format!("{} <{from_text}>", options.text("SystemName"))
        .parse()
        .or_else(|_| from_text.parse())
        .map_err(|_| ConsoleError::of(ErrorCode::SmtpFromInvalid))?;
    let to: Mailbox = to
        .parse()
        .map_err(|_| ConsoleError::of(ErrorCode::EmailInvalid))?;
    let message = Message::builder()
        .from(from)
        .to(to)
        .subject(subject)
        .header(ContentType::TEXT_HTML)
        .body(html)
        .map_err(|e| ConsoleError::with_args(ErrorCode::MailBuildFailed, [e.to_string()]))?;

    let port = u16::try_from(options.int("SMTPPort")).unwrap_or(587);
    let tls_params = TlsParameters::new(server.to_owned())
        .map_err(|e| ConsoleError::with_args(ErrorCode::SmtpTlsFailed, [e.to_string()]))?;
    let tls = tls_mode(
        options.flag("SMTPSSLEnabled"),
        options.flag("SMTPAllowPlaintext"),
        tls_params,
    );
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
        ConsoleError::of(ErrorCode::MailSendFailed)
    })?;
    Ok(())
}

/// The TLS mode: implicit TLS when `ssl`, else STARTTLS, required unless `allow_plaintext`.
fn tls_mode(ssl: bool, allow_plaintext: bool, params: TlsParameters) -> Tls {
    match (ssl, allow_plaintext) {
        (true, _) => Tls::Wrapper(params),
        (false, false) => Tls::Required(params),
        (false, true) => Tls::Opportunistic(params),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn starttls_is_required_unless_the_operator_allows_plain_text() {
        let params = || {
            TlsParameters::new("smtp.example.com".into()).unwrap_or_else(|e| unreachable!("{e}"))
        };
        assert!(matches!(tls_mode(false, false, params()), Tls::Required(_)));
        assert!(matches!(
            tls_mode(false, true, params()),
            Tls::Opportunistic(_)
        ));
        assert!(matches!(tls_mode(true, false, params()), Tls::Wrapper(_)));
    }
}
