//! Security headers of the console and its pages (not of the relay's `/v1` answers, which no
//! browser renders): `X-Content-Type-Options: nosniff`, a `Referrer-Policy`, and a
//! Content-Security-Policy.
//!
//! The console's pages get a policy with no inline script at all (the built console has none),
//! so admin-written HTML (footer, notice, home, about) can never run script even if the
//! sanitiser missed something; `frame-ancestors 'none'` stops clickjacking; frames may show
//! only the origins the options name (chat links, a home or about page that is a URL), and the
//! Turnstile and Telegram widgets are allowed only while those options are on; forms may post
//! to the console itself and to the payment gateway `PayAddress` names (the Epay checkout is a
//! form the browser submits there), read from the options on every page, so a new address
//! takes effect without a restart. JSON answers get a policy that allows nothing.

use axum::extract::{Request, State};
use axum::http::{HeaderValue, header};
use axum::middleware::Next;
use axum::response::Response;
use tollgate_actors::options::OptionsSnapshot;

use crate::state::AppState;

/// The policy of everything that is not an HTML page.
const NON_HTML_CSP: &str = "default-src 'none'; frame-ancestors 'none'";

/// Cloudflare Turnstile's script and frame origin.
const TURNSTILE_ORIGIN: &str = "https://challenges.cloudflare.com";
/// Telegram's login widget script origin.
const TELEGRAM_SCRIPT_ORIGIN: &str = "https://telegram.org";
/// Telegram's login widget frame origin.
const TELEGRAM_FRAME_ORIGIN: &str = "https://oauth.telegram.org";

/// Adds the security headers to a console response.
pub async fn apply(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let mut response = next.run(req).await;
    let html = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/html"));
    let policy = if html {
        HeaderValue::from_str(&page_policy(&state.options.current()))
            .unwrap_or_else(|_| HeaderValue::from_static(NON_HTML_CSP))
    } else {
        HeaderValue::from_static(NON_HTML_CSP)
    };
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_SECURITY_POLICY, policy);
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("strict-origin-when-cross-origin"),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    response
}

/// The origin (`scheme://host[:port]`) of an http(s) address, if it is one.
fn origin(address: &str) -> Option<String> {
    let url = reqwest::Url::parse(address.trim()).ok()?;
    if !matches!(url.scheme(), "http" | "https") {
        return None;
    }
    let origin = url.origin().ascii_serialization();
    // A CSP source must not carry separators that would end or split the directive.
    (!origin.contains([';', ',', ' ', '\'']) && origin != "null").then_some(origin)
}

/// The chat link templates of the `Chats` option (`[{"name": "url template"}, …]`).
fn chat_templates(chats: &str) -> Vec<String> {
    let parsed: serde_json::Value = serde_json::from_str(chats).unwrap_or_default();
    parsed
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|entry| entry.as_object())
        .flat_map(|entry| entry.values())
        .filter_map(|v| v.as_str().map(str::to_owned))
        .collect()
}

/// The Content-Security-Policy of the console's pages under `options`.
pub fn page_policy(options: &OptionsSnapshot) -> String {
    let turnstile = options.flag("TurnstileCheckEnabled");
    let telegram = options.flag("TelegramOAuthEnabled");
    let mut scripts = vec!["'self'".to_owned()];
    let mut frames: Vec<String> = Vec::new();
    if turnstile {
        scripts.push(TURNSTILE_ORIGIN.into());
        frames.push(TURNSTILE_ORIGIN.into());
    }
    if telegram {
        scripts.push(TELEGRAM_SCRIPT_ORIGIN.into());
        frames.push(TELEGRAM_FRAME_ORIGIN.into());
    }
    let pages = [options.text("HomePageContent"), options.text("About")];
    let framed = chat_templates(options.text("Chats"))
        .into_iter()
        .chain(pages.iter().map(|p| (*p).to_owned()))
        .filter_map(|address| origin(&address));
    for source in framed {
        if !frames.contains(&source) {
            frames.push(source);
        }
    }
    let frame_src = if frames.is_empty() {
        "'none'".to_owned()
    } else {
        frames.join(" ")
    };
    let mut forms = vec!["'self'".to_owned()];
    forms.extend(origin(options.text("PayAddress")));
    format!(
        "default-src 'self'; script-src {scripts}; style-src 'self' 'unsafe-inline'; \
         img-src * data: blob:; font-src 'self' data:; media-src * data: blob:; \
         connect-src 'self'; frame-src {frame_src}; frame-ancestors 'none'; \
         object-src 'none'; base-uri 'self'; form-action {forms}",
        scripts = scripts.join(" "),
        forms = forms.join(" "),
    )
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn snapshot(pairs: &[(&str, &str)]) -> OptionsSnapshot {
        OptionsSnapshot::from_stored(
            pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect::<BTreeMap<_, _>>(),
        )
    }

    fn directive<'p>(policy: &'p str, name: &str) -> &'p str {
        policy
            .split(';')
            .map(str::trim)
            .find(|d| d.starts_with(&format!("{name} ")))
            .unwrap_or_default()
    }

    #[test]
    fn the_default_policy_allows_no_inline_script_and_no_frames() {
        let policy = page_policy(&OptionsSnapshot::defaults());
        assert_eq!(directive(&policy, "script-src"), "script-src 'self'");
        assert_eq!(directive(&policy, "frame-src"), "frame-src 'none'");
        assert_eq!(
            directive(&policy, "frame-ancestors"),
            "frame-ancestors 'none'"
        );
        assert!(!policy.contains("unsafe-eval"));
        assert!(!directive(&policy, "script-src").contains("unsafe-inline"));
        assert_eq!(directive(&policy, "form-action"), "form-action 'self'");
    }

    #[test]
    fn the_music_log_may_play_songs_from_the_upstreams_addresses() {
        // A finished Suno task's song and a video task's result live on the provider's CDN,
        // as a drawing's image does (img-src *): the task log plays them where they are.
        let policy = page_policy(&OptionsSnapshot::defaults());
        assert_eq!(directive(&policy, "media-src"), "media-src * data: blob:");
    }

    #[test]
    fn forms_may_post_to_the_payment_gateway_only() {
        let policy = page_policy(&snapshot(&[(
            "PayAddress",
            "https://pay.example.com/epay/",
        )]));
        assert_eq!(
            directive(&policy, "form-action"),
            "form-action 'self' https://pay.example.com"
        );
        let odd = page_policy(&snapshot(&[("PayAddress", "javascript:alert(1)")]));
        assert_eq!(directive(&odd, "form-action"), "form-action 'self'");
    }

    #[test]
    fn frames_come_from_the_configured_pages_and_widgets_from_their_switches() {
        let policy = page_policy(&snapshot(&[
            (
                "Chats",
                r#"[{"Next":"https://chat.example.com/#/?settings={\"key\":\"{key}\"}"}]"#,
            ),
            ("HomePageContent", "https://home.example.org/welcome"),
            ("About", "# About us\nplain markdown"),
            ("TurnstileCheckEnabled", "true"),
            ("TelegramOAuthEnabled", "true"),
        ]));
        let frames = directive(&policy, "frame-src");
        assert!(frames.contains("https://chat.example.com"), "{frames}");
        assert!(frames.contains("https://home.example.org"), "{frames}");
        assert!(frames.contains(TURNSTILE_ORIGIN) && frames.contains(TELEGRAM_FRAME_ORIGIN));
        assert!(!frames.contains("About"));
        let scripts = directive(&policy, "script-src");
        assert_eq!(
            scripts,
            format!("script-src 'self' {TURNSTILE_ORIGIN} {TELEGRAM_SCRIPT_ORIGIN}")
        );
    }
}
