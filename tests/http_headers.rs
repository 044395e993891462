//! Security headers (issue #22 item 6): console answers carry nosniff, a Referrer-Policy and a
//! Content-Security-Policy; the console's pages get one with no inline script, no framing and
//! frames only from the configured pages; the console's source page has no inline script.

mod common;

use common::{ROOT_PASS, ROOT_USER, TestServer};
use reqwest::StatusCode;
use serde_json::json;

fn header(resp: &reqwest::Response, name: &str) -> String {
    resp.headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test]
async fn console_answers_carry_the_security_headers() {
    let server = TestServer::start().await;
    for path in ["/api/status", "/api/no/such/route", "/api/option/"] {
        let resp = server
            .client
            .get(server.url(path))
            .send()
            .await
            .expect("sent");
        assert_eq!(header(&resp, "x-content-type-options"), "nosniff", "{path}");
        assert_eq!(
            header(&resp, "referrer-policy"),
            "strict-origin-when-cross-origin",
            "{path}"
        );
        let policy = header(&resp, "content-security-policy");
        assert!(policy.contains("default-src 'none'"), "{path}: {policy}");
        assert!(
            policy.contains("frame-ancestors 'none'"),
            "{path}: {policy}"
        );
    }
}

#[tokio::test]
async fn pages_get_a_policy_without_inline_script_with_the_configured_frames() {
    let server = TestServer::start().await;
    server.setup_root().await;
    let root = server.client_for(ROOT_USER, ROOT_PASS).await;
    server
        .set_option(
            &root,
            "HomePageContent",
            json!("https://home.example.org/start"),
        )
        .await;
    server
        .set_option(&root, "TurnstileCheckEnabled", json!(true))
        .await;
    let resp = server
        .client
        .get(server.url("/login"))
        .send()
        .await
        .expect("sent");
    let built = resp.status() == StatusCode::OK;
    let policy = header(&resp, "content-security-policy");
    if built {
        assert!(
            header(&resp, "content-type").starts_with("text/html"),
            "the console page"
        );
        let script = policy
            .split(';')
            .map(str::trim)
            .find(|d| d.starts_with("script-src "))
            .expect("a script-src");
        assert_eq!(
            script, "script-src 'self' https://challenges.cloudflare.com",
            "{policy}"
        );
        let frames = policy
            .split(';')
            .map(str::trim)
            .find(|d| d.starts_with("frame-src "))
            .expect("a frame-src");
        assert!(frames.contains("https://home.example.org"), "{policy}");
        assert!(policy.contains("frame-ancestors 'none'"), "{policy}");
    } else {
        assert_eq!(
            resp.status(),
            StatusCode::SERVICE_UNAVAILABLE,
            "console not built"
        );
        assert!(policy.contains("default-src 'none'"), "{policy}");
    }
}

#[test]
fn the_console_page_has_no_inline_script() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("web");
    for page in [root.join("index.html"), root.join("dist/index.html")] {
        let Ok(html) = std::fs::read_to_string(&page) else {
            assert!(
                page.ends_with("dist/index.html"),
                "{} is missing",
                page.display()
            );
            continue;
        };
        let lower = html.to_ascii_lowercase();
        let tags: Vec<&str> = lower.split("<script").skip(1).collect();
        assert!(!tags.is_empty(), "{} loads the console", page.display());
        for tag in tags {
            let (open, rest) = tag.split_once('>').expect("a closed tag");
            assert!(open.contains("src="), "{}: inline script", page.display());
            assert!(
                rest.trim_start().starts_with("</script"),
                "{}: a script element with content",
                page.display()
            );
        }
        for handler in ["onload=", "onerror=", "onclick="] {
            assert!(!lower.contains(handler), "{}: {handler}", page.display());
        }
    }
}
