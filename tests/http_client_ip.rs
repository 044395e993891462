//! The client's address behind reverse proxies (issue #22 item 4): forwarding headers count
//! only from `--trusted-proxies`; the sign-in limiter keys IPv6 by /64 and is shared by every
//! route it protects; API keys' allowed IPs see the same address.

#![expect(clippy::expect_used, reason = "test helpers fail the test loudly")]

mod common;

use common::relay_fixture::new_key;
use common::{ROOT_PASS, ROOT_USER, TestServer};
use reqwest::StatusCode;
use serde_json::json;

/// One sign-in attempt (wrong password) that says it is forwarded for `client`.
async fn attempt(server: &TestServer, client: &str) -> StatusCode {
    reqwest::Client::new()
        .post(server.url("/api/user/login"))
        .header("X-Forwarded-For", client)
        .json(&json!({"username": "nobody", "password": "wrongpass1"}))
        .send()
        .await
        .expect("sent")
        .status()
}

#[tokio::test]
async fn forwarding_headers_do_not_buy_a_new_budget_from_an_untrusted_peer() {
    let server = TestServer::start_with(tempfile::tempdir().expect("dir"), |c| {
        c.critical_rate_limit = 2;
    })
    .await;
    assert_ne!(
        attempt(&server, "198.51.100.1").await,
        StatusCode::TOO_MANY_REQUESTS
    );
    assert_ne!(
        attempt(&server, "198.51.100.2").await,
        StatusCode::TOO_MANY_REQUESTS
    );
    assert_eq!(
        attempt(&server, "198.51.100.3").await,
        StatusCode::TOO_MANY_REQUESTS,
        "every attempt is the TCP peer's"
    );
}

#[tokio::test]
async fn behind_a_trusted_proxy_each_client_has_its_own_budget_and_ipv6_counts_per_64() {
    let server = TestServer::start_with(tempfile::tempdir().expect("dir"), |c| {
        c.critical_rate_limit = 2;
        c.trusted_proxies = vec!["127.0.0.1/32".parse().expect("cidr")];
    })
    .await;
    // The attacker, as the proxy reports them, whatever they put in the header themselves.
    assert_ne!(
        attempt(&server, "6.6.6.6, 198.51.100.1").await,
        StatusCode::TOO_MANY_REQUESTS
    );
    assert_ne!(
        attempt(&server, "7.7.7.7, 198.51.100.1").await,
        StatusCode::TOO_MANY_REQUESTS
    );
    assert_eq!(
        attempt(&server, "8.8.8.8, 198.51.100.1").await,
        StatusCode::TOO_MANY_REQUESTS,
        "the attacker is limited"
    );
    assert_ne!(
        attempt(&server, "198.51.100.2").await,
        StatusCode::TOO_MANY_REQUESTS,
        "another client behind the same proxy is not locked out"
    );

    assert_ne!(
        attempt(&server, "2001:db8:0:1::1").await,
        StatusCode::TOO_MANY_REQUESTS
    );
    assert_ne!(
        attempt(&server, "2001:db8:0:1::2").await,
        StatusCode::TOO_MANY_REQUESTS
    );
    assert_eq!(
        attempt(&server, "2001:db8:0:1:ffff::3").await,
        StatusCode::TOO_MANY_REQUESTS,
        "a fresh address in the same /64 is the same client"
    );

    // Shared by every protected route: the limited client cannot register either.
    let (status, body) = server
        .send(
            reqwest::Client::new()
                .post(server.url("/api/user/register"))
                .header("X-Forwarded-For", "198.51.100.1")
                .json(&json!({"username": "eve", "password": "evepass123"})),
        )
        .await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{body}");
}

#[tokio::test]
async fn allowed_ips_of_a_key_see_the_client_behind_a_trusted_proxy() {
    // Set up first: behind trusted proxies setup needs the one-time token.
    let server = TestServer::start_with(TestServer::set_up_dir().await, |c| {
        c.trusted_proxies = vec!["127.0.0.0/8".parse().expect("cidr")];
    })
    .await;
    let root = server.client_for(ROOT_USER, ROOT_PASS).await;
    server.create_user(&root, "payer", "password1").await;
    let payer = server.client_for("payer", "password1").await;
    let key = new_key(&payer, 1_000, json!({"allow_ips": "203.0.113.0/24"})).await;
    let chat = |from: &'static str| {
        let req = reqwest::Client::new()
            .post(server.url("/v1/chat/completions"))
            .bearer_auth(&key)
            .header("X-Forwarded-For", from)
            .json(&json!({"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]}));
        server.send(req)
    };
    let (status, body) = chat("198.51.100.9").await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert!(
        body.to_string().contains("198.51.100.9"),
        "refused for the client's address: {body}"
    );
    let (status, body) = chat("203.0.113.5").await;
    assert!(
        !body.to_string().contains("may not be used from"),
        "an allowed client passes the IP check ({status}): {body}"
    );
}
