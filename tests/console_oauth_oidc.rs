//! OpenID Connect sign-in against a real provider on loopback (tests/common/oidc_provider.rs):
//! the state, first sign-in creating the account with invite rewards, sign-in, binding, the
//! refusals (bound elsewhere, banned, deleted, registration closed), no takeover by email,
//! and every way an ID token can be wrong.
#![expect(clippy::expect_used, reason = "test helpers fail the test loudly")]

mod common;

use common::oauth_browser::Browser;
use common::oidc_provider::{Account, CLIENT_ID, CLIENT_SECRET, OidcProvider, Spoil};
use common::{ROOT_PASS, ROOT_USER, TestServer};
use reqwest::StatusCode;
use serde_json::json;

const NEW_USER: i64 = 1_000;
const INVITEE: i64 = 200;
const INVITER: i64 = 30;

/// A server with root, OIDC configured against `idp`, and registration rewards.
async fn server_with(idp: &OidcProvider) -> (TestServer, i64) {
    server_with_clock(idp, tollgate::clock::Clock::default()).await
}

/// [`server_with`] on `clock`.
async fn server_with_clock(idp: &OidcProvider, clock: tollgate::clock::Clock) -> (TestServer, i64) {
    let server = TestServer::start_with(
        tempfile::tempdir().unwrap_or_else(|e| unreachable!("tempdir: {e}")),
        |c| c.clock = clock,
    )
    .await;
    let root = server.root().await;
    for (key, value) in [
        ("ServerAddress", server.base.clone()),
        ("oidc.enabled", "true".into()),
        ("oidc.client_id", CLIENT_ID.into()),
        ("oidc.client_secret", CLIENT_SECRET.into()),
        ("oidc.well_known", idp.well_known()),
        ("QuotaForNewUser", NEW_USER.to_string()),
        ("QuotaForInvitee", INVITEE.to_string()),
        ("QuotaForInviter", INVITER.to_string()),
    ] {
        server.set_option_as(root, key, &value).await;
    }
    (server, root)
}

async fn user_count(server: &TestServer, root: i64) -> i64 {
    let (_, body) = server.get_as(root, "/api/user/?p=1&page_size=100").await;
    body["data"]["total"].as_i64().expect("total")
}

#[tokio::test]
async fn first_sign_in_creates_the_account_with_invite_rewards_then_signs_it_in() {
    let idp = OidcProvider::start().await;
    let (server, root) = server_with(&idp).await;
    let admin = server.client_for(ROOT_USER, ROOT_PASS).await;
    let inviter_id = server.create_user(&admin, "inviter", "password123").await;
    let inviter = server.client_for("inviter", "password123").await;
    let (_, aff) = inviter.get("/api/user/aff").await;
    let aff = aff["data"].as_str().expect("aff code").to_owned();

    let mut browser = Browser::guest(&server);
    let url = browser.start("oidc", &aff).await;
    assert!(
        url.starts_with(&format!("{}/authorize?", idp.issuer)),
        "{url}"
    );
    let query = browser.approve(&url).await;
    let asked = idp.authorizations().pop().expect("one authorization");
    assert_eq!(asked["client_id"], CLIENT_ID);
    assert_eq!(asked["redirect_uri"], format!("{}/oauth/oidc", server.base));
    assert_eq!(asked["code_challenge_method"], "S256");
    assert!(asked["nonce"].len() >= 32 && asked["scope"].contains("openid"));
    assert_eq!(asked["state"], query["state"]);

    let (status, body) = browser.callback("oidc", &query).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let user = &body["data"];
    assert_eq!(user["username"], "alice");
    assert_eq!(user["display_name"], "alice (OIDC)");
    assert_eq!(user["email"], "alice@example.com", "verified and free");
    assert_eq!(user["oidc_id"], format!("{} sub-1", idp.issuer));
    assert_eq!(user["quota"], NEW_USER + INVITEE);
    assert_eq!(user["inviter_id"], inviter_id);
    browser.id = user["id"].as_i64().expect("id");
    let (status, me) = browser.get("/api/user/self").await;
    assert_eq!(
        status,
        StatusCode::OK,
        "the callback signed the browser in: {me}"
    );
    assert_eq!(me["data"]["username"], "alice");

    let (_, inv) = inviter.get("/api/user/self").await;
    assert_eq!(inv["data"]["aff_count"], 1);
    assert_eq!(inv["data"]["aff_quota"], INVITER);
    assert_eq!(inv["data"]["aff_history_quota"], INVITER);

    // The same identity again signs the same account in; nothing is created or credited.
    let users = user_count(&server, root).await;
    let mut again = Browser::guest(&server);
    let (status, body) = again.sign_in("oidc", &aff).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["data"]["id"], browser.id);
    assert_eq!(body["data"]["quota"], NEW_USER + INVITEE);
    assert_eq!(user_count(&server, root).await, users);
    let (_, inv) = inviter.get("/api/user/self").await;
    assert_eq!(inv["data"]["aff_count"], 1, "no second invite reward");
}

#[tokio::test]
async fn a_signed_in_user_binds_and_an_identity_bound_elsewhere_is_refused() {
    let idp = OidcProvider::start().await;
    let (server, _root) = server_with(&idp).await;
    let admin = server.client_for(ROOT_USER, ROOT_PASS).await;
    let bob_id = server.create_user(&admin, "bob", "password123").await;
    server.create_user(&admin, "carol", "password123").await;

    idp.sign_in_as(Account::new("sub-bob", "bobby", "bob@example.com"));
    let mut bob = Browser::signed_in(&server, "bob", "password123").await;
    let (status, body) = bob.sign_in("oidc", "").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["message"], "bind");
    assert_eq!(body["data"]["id"], bob_id);
    assert_eq!(body["data"]["oidc_id"], format!("{} sub-bob", idp.issuer));
    assert_eq!(
        body["data"]["email"], "",
        "binding does not take the provider's email"
    );

    // A guest with that identity now signs in as bob.
    let mut guest = Browser::guest(&server);
    let (status, body) = guest.sign_in("oidc", "").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["data"]["id"], bob_id);

    // Carol cannot bind bob's identity.
    let mut carol = Browser::signed_in(&server, "carol", "password123").await;
    let (status, body) = carol.sign_in("oidc", "").await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert!(
        body["message"]
            .as_str()
            .expect("message")
            .contains("already bound")
    );
    let (_, me) = carol.get("/api/user/self").await;
    assert_eq!(me["data"]["oidc_id"], "");
}

#[tokio::test]
async fn an_email_never_links_or_signs_into_an_existing_account() {
    let idp = OidcProvider::start().await;
    let (server, root) = server_with(&idp).await;
    idp.sign_in_as(Account::new("sub-a", "dave", "dave@example.com"));
    let mut first = Browser::guest(&server);
    let (status, a) = first.sign_in("oidc", "").await;
    assert_eq!(status, StatusCode::OK, "{a}");
    assert_eq!(a["data"]["email"], "dave@example.com");

    // Another subject claiming the same (verified) address gets its own account, without it.
    idp.sign_in_as(Account::new("sub-b", "dave", "dave@example.com"));
    let mut second = Browser::guest(&server);
    let (status, b) = second.sign_in("oidc", "").await;
    assert_eq!(status, StatusCode::OK, "{b}");
    assert_ne!(b["data"]["id"], a["data"]["id"], "no takeover by email");
    assert_eq!(b["data"]["email"], "", "a taken address is not copied");
    let name = b["data"]["username"].as_str().expect("name");
    assert!(
        name.starts_with("oidc_"),
        "username taken, so generated: {name}"
    );

    // An unverified address is not kept either.
    let mut unverified = Account::new("sub-c", "erin", "erin@example.com");
    unverified.email_verified = false;
    idp.sign_in_as(unverified);
    let mut third = Browser::guest(&server);
    let (status, c) = third.sign_in("oidc", "").await;
    assert_eq!(status, StatusCode::OK, "{c}");
    assert_eq!(c["data"]["username"], "erin");
    assert_eq!(c["data"]["email"], "");
    assert_eq!(user_count(&server, root).await, 4);
}

#[tokio::test]
async fn missing_foreign_and_replayed_states_are_refused() {
    let idp = OidcProvider::start().await;
    let (server, root) = server_with(&idp).await;
    let users = user_count(&server, root).await;

    // A callback in a browser that never started a sign-in (login CSRF).
    let victim = Browser::guest(&server);
    let attacker = Browser::guest(&server);
    let query = attacker.approve(&attacker.start("oidc", "").await).await;
    let (status, body) = victim.callback("oidc", &query).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(body["code"], "code_invalid");
    assert!(
        body["message"].as_str().expect("m").contains("missing"),
        "{body}"
    );

    // A browser with its own sign-in in progress, handed someone else's state.
    let _ = victim.start("oidc", "").await;
    let (status, body) = victim.callback("oidc", &query).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(
        body["message"]
            .as_str()
            .expect("m")
            .contains("does not match"),
        "{body}"
    );

    // A callback works once; replaying it with the very same cookie is refused.
    let raw = reqwest::Client::new();
    let resp = raw
        .get(server.url("/api/oauth/state?provider=oidc"))
        .send()
        .await
        .expect("state");
    let cookie = resp
        .headers()
        .get("set-cookie")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .expect("state cookie")
        .to_owned();
    let body: serde_json::Value = resp.json().await.expect("json");
    let query = attacker
        .approve(body["authorize_url"].as_str().expect("url"))
        .await;
    let callback = server.url(&format!(
        "/api/oauth/oidc?code={}&state={}",
        query["code"], query["state"]
    ));
    let first = raw
        .get(&callback)
        .header("cookie", &cookie)
        .send()
        .await
        .expect("callback");
    assert_eq!(first.status(), StatusCode::OK);
    let replay = raw
        .get(&callback)
        .header("cookie", &cookie)
        .send()
        .await
        .expect("replay");
    assert_eq!(replay.status(), StatusCode::BAD_REQUEST);
    let body: serde_json::Value = replay.json().await.expect("json");
    assert!(
        body["message"]
            .as_str()
            .expect("m")
            .contains("already used"),
        "{body}"
    );
    assert_eq!(user_count(&server, root).await, users + 1);

    // A state for one provider is not accepted by another's callback.
    let query = attacker.approve(&attacker.start("oidc", "").await).await;
    let (status, body) = attacker.callback("github", &query).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
}

#[tokio::test]
async fn id_tokens_wrong_in_any_way_are_refused() {
    let idp = OidcProvider::start().await;
    let (server, root) = server_with(&idp).await;
    for (spoil, why) in [
        (Spoil::Signature, "bad signature"),
        (Spoil::Issuer, "wrong issuer"),
        (Spoil::Audience, "wrong audience"),
        (Spoil::Expired, "expired"),
        (Spoil::Nonce, "wrong nonce"),
    ] {
        idp.spoil(spoil);
        let mut browser = Browser::guest(&server);
        let (status, body) = browser.sign_in("oidc", "").await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{spoil:?}: {body}");
        let message = body["message"].as_str().expect("message");
        assert!(message.contains(why), "{spoil:?}: {message}");
        let (status, _) = browser.get("/api/user/self").await;
        assert_eq!(
            status,
            StatusCode::UNAUTHORIZED,
            "{spoil:?} signed nobody in"
        );
    }
    assert_eq!(user_count(&server, root).await, 1, "no account was created");
    assert!(
        idp.refusals().is_empty(),
        "the token requests themselves were right"
    );
    idp.spoil(Spoil::Nothing);
    let (status, body) = Browser::guest(&server).sign_in("oidc", "").await;
    assert_eq!(status, StatusCode::OK, "{body}");
}

#[tokio::test]
async fn banned_and_deleted_accounts_cannot_sign_in_and_closed_registration_is_kept() {
    let idp = OidcProvider::start().await;
    let (server, root) = server_with(&idp).await;
    let (status, body) = Browser::guest(&server).sign_in("oidc", "").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let id = body["data"]["id"].as_i64().expect("id");

    let (status, _) = server
        .post_as(
            root,
            "/api/user/manage",
            json!({"id": id, "action": "disable"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let (status, body) = Browser::guest(&server).sign_in("oidc", "").await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(body["code"], "user_disabled");

    let (status, _) = server
        .post_as(
            root,
            "/api/user/manage",
            json!({"id": id, "action": "delete"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let (status, body) = Browser::guest(&server).sign_in("oidc", "").await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert!(
        body["message"].as_str().expect("m").contains("deleted"),
        "{body}"
    );

    server.set_option_as(root, "RegisterEnabled", "false").await;
    idp.sign_in_as(Account::new("sub-new", "newbie", "n@example.com"));
    let (status, body) = Browser::guest(&server).sign_in("oidc", "").await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(body["code"], "feature_disabled");

    server.set_option_as(root, "oidc.enabled", "false").await;
    let (status, body) = Browser::guest(&server)
        .get("/api/oauth/state?provider=oidc")
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
}

#[tokio::test]
async fn root_keeps_password_sign_in_when_it_is_turned_off() {
    let server = TestServer::start().await;
    let root = server.root().await;
    let admin = server.client_for(ROOT_USER, ROOT_PASS).await;
    server.create_user(&admin, "plain", "password123").await;
    server
        .set_option_as(root, "PasswordLoginEnabled", "false")
        .await;
    let login = |user: &'static str, pass: &'static str| {
        let client = common::new_client();
        let url = server.url("/api/user/login");
        async move {
            let resp = client
                .post(url)
                .json(&json!({"username": user, "password": pass}))
                .send()
                .await
                .expect("sent");
            let status = resp.status();
            (
                status,
                resp.json::<serde_json::Value>().await.expect("json"),
            )
        }
    };
    let (status, body) = login(ROOT_USER, ROOT_PASS).await;
    assert_eq!(status, StatusCode::OK, "root still signs in: {body}");
    let (status, body) = login("plain", "password123").await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(body["code"], "password_login_disabled");
    let (_, wrong) = login(ROOT_USER, "wrong-password").await;
    assert_eq!(
        wrong["code"], "password_login_disabled",
        "says nothing about the password"
    );
}

#[tokio::test]
async fn root_reads_the_discovery_document_through_the_server() {
    let idp = OidcProvider::start().await;
    let server = TestServer::start().await;
    let root = server.root().await;
    let (status, body) = server
        .post_as(
            root,
            "/api/option/oidc_discovery",
            json!({"well_known": idp.well_known()}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        body["data"],
        json!({
            "authorization_endpoint": format!("{}/authorize", idp.issuer),
            "token_endpoint": format!("{}/token", idp.issuer),
            "user_info_endpoint": format!("{}/userinfo", idp.issuer),
        })
    );

    // Not an http(s) URL: refused before any request.
    let (status, body) = server
        .post_as(
            root,
            "/api/option/oidc_discovery",
            json!({"well_known": "ftp://idp.example/.well-known/openid-configuration"}),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(body["success"], false);

    // Nothing listening: a failure, not a 500.
    let (status, body) = server
        .post_as(
            root,
            "/api/option/oidc_discovery",
            json!({"well_known": "http://127.0.0.1:1/.well-known/openid-configuration"}),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_GATEWAY, "{body}");
    assert_eq!(body["success"], false);
}

#[tokio::test]
async fn only_root_may_read_a_discovery_document() {
    let idp = OidcProvider::start().await;
    let server = TestServer::start().await;
    let _ = server.root().await;
    let root = server.client_for(ROOT_USER, ROOT_PASS).await;
    let id = server.create_user(&root, "adm", "password123").await;
    let (status, body) = root
        .post("/api/user/manage", json!({"id": id, "action": "promote"}))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let admin = server.client_for("adm", "password123").await;
    let (status, body) = admin
        .post(
            "/api/option/oidc_discovery",
            json!({"well_known": idp.well_known()}),
        )
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(body["success"], false);
}

#[tokio::test]
async fn a_third_party_sign_in_of_an_account_with_two_factor_needs_the_code_too() {
    let idp = OidcProvider::start().await;
    let (server, _root) = server_with(&idp).await;
    idp.sign_in_as(Account::new("sub-dave", "dave", "dave@example.com"));
    let mut first = Browser::guest(&server);
    let (status, body) = first.sign_in("oidc", "").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let dave = common::two_factor::actor(
        &server,
        &first.client,
        body["data"]["id"].as_i64().expect("id"),
    );
    let (_, codes) = common::two_factor::turn_on(&dave).await;

    let mut again = Browser::guest(&server);
    let (status, body) = again.sign_in("oidc", "").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["data"]["require_2fa"], true, "{body}");
    again.id = dave.id;
    let (status, _) = again.get("/api/user/self").await;
    assert_eq!(
        status,
        StatusCode::UNAUTHORIZED,
        "the provider alone signs nobody in"
    );
    let (status, body) = common::two_factor::second_step(&server, &again.client, &codes[0]).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["data"]["id"], dave.id);
    let (status, _) = again.get("/api/user/self").await;
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test]
async fn an_account_without_password_or_two_factor_is_deleted_only_after_a_fresh_sign_in() {
    let idp = OidcProvider::start().await;
    let clock = tollgate::clock::Clock::default();
    let (server, _root) = server_with_clock(&idp, clock.clone()).await;
    idp.sign_in_as(Account::new("sub-erin", "erin", "erin@example.com"));
    let mut first = Browser::guest(&server);
    let (status, body) = first.sign_in("oidc", "").await;
    assert_eq!(status, StatusCode::OK, "{body}");

    // Six minutes later the session is still good, but not for deleting the account.
    clock.advance(6 * 60);
    let (status, body) = first.delete("/api/user/self").await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(body["code"], "reauth_required", "{body}");
    assert!(
        body["message"]
            .as_str()
            .unwrap_or_default()
            .contains("sign in again"),
        "{body}"
    );
    let (status, _) = first.get("/api/user/self").await;
    assert_eq!(status, StatusCode::OK, "not deleted");

    // Signed in again through the provider, it is.
    let mut again = Browser::guest(&server);
    let (status, body) = again.sign_in("oidc", "").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) = again.delete("/api/user/self").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, _) = again.get("/api/user/self").await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "deleted");
}
