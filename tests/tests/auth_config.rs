//! `GET /auth/config` (issue #19): what the web app needs to sign in with the OpenID
//! Connect provider, answered without a credential and holding nothing secret; and the web
//! component's Content-Security-Policy, which lets the page reach that issuer (discovery
//! and the token endpoint) only when browser sign-in is configured.

use kg_e2e::oidc::{Issuer, SigningKey};
use kg_e2e::{AppHost, Stack, auth};
use serde_json::json;

/// Status, `cache-control` and JSON body of an anonymous `GET /auth/config`.
async fn config(host: &AppHost) -> (u16, String, serde_json::Value) {
    let response = host
        .request_as(None, "GET", "/auth/config", "")
        .await
        .unwrap();
    let status = response.status().as_u16();
    let cache = response
        .headers()
        .get("cache-control")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    (status, cache, response.json().await.unwrap())
}

async fn csp(host: &AppHost) -> String {
    let response = reqwest::get(format!("{}/", host.url)).await.unwrap();
    assert_eq!(response.status(), 200);
    response.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_string()
}

#[tokio::test]
async fn api_keys_only_by_default_and_no_issuer_in_the_csp() {
    let stack = Stack::start().await.unwrap();
    let (status, cache, body) = config(&stack.host).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(cache, "no-store");
    assert_eq!(body, json!({"modes": ["api_key"], "oidc": null}));
    // Only GET is open (like /health/live): anything else needs a credential first.
    let (status, _) = stack.host.get_as(None, "/health").await.unwrap();
    assert_eq!(status, 401);
    let (status, e) = stack
        .host
        .send_as(None, "POST", "/auth/config", "{}")
        .await
        .unwrap();
    assert_eq!(status, 401, "{e}");
    let policy = csp(&stack.host).await;
    assert!(policy.contains("connect-src 'self';"), "{policy}");
}

#[tokio::test]
async fn the_issuer_and_public_client_are_told_and_the_page_may_reach_the_issuer() {
    let key = SigningKey::es256("es-1");
    let issuer = Issuer::start(&[&key]).await;
    let mut variables = issuer.variables("api_key,oidc");
    variables.extend([
        ("oidc_client_id", "kg-web".to_string()),
        ("oidc_scopes", "openid profile".to_string()),
        (
            "oidc_hs_secret",
            "do-not-leak-this-secret-0123456789abcdef".to_string(),
        ),
    ]);
    let stack = Stack::start_with(&variables).await.unwrap();
    let (status, _, body) = config(&stack.host).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body,
        json!({"modes": ["api_key", "oidc"], "oidc": {
            "issuer": issuer.url(),
            "client_id": "kg-web",
            "scopes": "openid profile",
            "audience": kg_e2e::oidc::AUDIENCE,
        }})
    );
    let text = body.to_string();
    assert!(!text.contains("do-not-leak"));
    let policy = csp(&stack.host).await;
    assert!(
        policy.contains(&format!("connect-src 'self' {};", issuer.url())),
        "{policy}"
    );
    // A token from that issuer is what the browser then sends.
    let token = key.sign(&issuer.claims("alice", &["viewer"]));
    let (status, tools) = stack.host.get_as(Some(&token), "/tools").await.unwrap();
    assert_eq!(status, 200, "{tools}");
    let (status, _) = stack
        .host
        .get_as(Some(auth::ADMIN), "/tools")
        .await
        .unwrap();
    assert_eq!(status, 200);
}

#[tokio::test]
async fn no_browser_sign_in_without_a_client_id() {
    let key = SigningKey::es256("es-1");
    let issuer = Issuer::start(&[&key]).await;
    let stack = Stack::start_with(&issuer.variables("oidc")).await.unwrap();
    let (status, _, body) = config(&stack.host).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body, json!({"modes": ["oidc"], "oidc": null}));
    let policy = csp(&stack.host).await;
    assert!(policy.contains("connect-src 'self';"), "{policy}");
}
