//! The dispatcher's error contract over real HTTP: JSON errors with a stable code for
//! unknown routes, wrong methods, malformed bodies, and behaviour not built yet.

use kg_e2e::{AppHost, app_manifest};

async fn start() -> (AppHost, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let host = AppHost::start(&app_manifest(), &dir.path().join("kv.db"), &[])
        .await
        .unwrap();
    (host, dir)
}

#[tokio::test]
async fn errors_are_json_with_a_code_and_the_fitting_status() {
    let (host, _dir) = start().await;
    let cases = [
        ("GET", "/no/such/route", "", 404, "not_found"),
        ("POST", "/health", "", 405, "method_not_allowed"),
        (
            "POST",
            "/tools/get_node_statistics",
            "{not json",
            400,
            "bad_request",
        ),
        (
            "POST",
            "/tools/get_node_statistics",
            "[1,2]",
            400,
            "bad_request",
        ),
        (
            "POST",
            "/tools/describe_class",
            "{}",
            400,
            "invalid_argument",
        ),
        ("GET", "/actions/PurchaseOrder/nope", "", 404, "not_found"),
        (
            "POST",
            "/actions/PurchaseOrder/makePayment/execute",
            "[]",
            400,
            "bad_request",
        ),
        ("POST", "/chat", "{}", 400, "bad_request"),
        ("GET", "/conversations/%ff", "", 400, "bad_request"),
    ];
    for (method, path, body, status, code) in cases {
        let (got, json) = host.send(method, path, body).await.unwrap();
        assert_eq!(got, status, "{method} {path}: {json}");
        assert_eq!(json["error"]["code"], code, "{method} {path}: {json}");
        assert!(
            json["error"]["message"]
                .as_str()
                .is_some_and(|m| !m.is_empty())
        );
    }
}

#[tokio::test]
async fn a_misspelt_field_is_a_400_naming_it_on_every_json_body() {
    let (host, _dir) = start().await;
    let cases = [
        (
            "/documents",
            r#"{"id": "d", "text": "t", "titel": "x"}"#,
            "unknown field `titel`",
        ),
        (
            "/documents",
            r#"{"id": "d", "text": "t", "chunking": {"max_chars": 500, "overlap": 10}}"#,
            "`chunking`: unknown field `overlap` (allowed: max_chars, overlap_chars)",
        ),
        (
            "/search",
            r#"{"query": "q", "top-k": 3}"#,
            "unknown field `top-k`",
        ),
        (
            "/chat/approve",
            r#"{"approval_token": "t", "approved": false}"#,
            "unknown field `approved` (allowed: approval_token, approve)",
        ),
        (
            "/actions/log/log-1/undo",
            r#"{"reason": "mistake"}"#,
            "unknown field `reason` (allowed: actor)",
        ),
    ];
    for (path, body, says) in cases {
        let (status, json) = host.send("POST", path, body).await.unwrap();
        assert_eq!(status, 400, "{path} {body}: {json}");
        assert_eq!(json["error"]["code"], "bad_request", "{json}");
        let message = json["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains(says), "{path}: {message}");
    }
}

#[tokio::test]
async fn oversized_bodies_are_refused_with_413() {
    let (host, _dir) = start().await;
    let big = format!("{{\"x\":\"{}\"}}", "a".repeat(1024 * 1024 + 10));
    let (status, json) = host
        .send("POST", "/tools/get_node_statistics", &big)
        .await
        .unwrap();
    assert_eq!(status, 413, "{json}");
    assert_eq!(json["error"]["code"], "payload_too_large");
}

#[tokio::test]
async fn a_wrong_method_names_the_allowed_ones_in_allow() {
    let (host, _dir) = start().await;
    let client = reqwest::Client::new();
    for (method, path, allow) in [
        (reqwest::Method::POST, "/health", "GET, OPTIONS"),
        (reqwest::Method::PUT, "/documents", "GET, POST, OPTIONS"),
        (reqwest::Method::GET, "/mcp", "POST, OPTIONS"),
    ] {
        let response = client
            .request(method.clone(), format!("{}{path}", host.url))
            .bearer_auth(kg_e2e::auth::ADMIN)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 405, "{method} {path}");
        assert_eq!(
            response
                .headers()
                .get("allow")
                .and_then(|v| v.to_str().ok()),
            Some(allow),
            "{method} {path}"
        );
    }
}

#[tokio::test]
async fn the_openapi_document_is_served_to_anyone_as_kept_in_docs() {
    let (host, _dir) = start().await;
    let response = reqwest::get(format!("{}/openapi.json", host.url))
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(
        response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok()),
        Some("application/json")
    );
    let served: serde_json::Value = response.json().await.unwrap();
    let kept: serde_json::Value =
        serde_json::from_str(include_str!("../../docs/openapi.json")).unwrap();
    assert_eq!(served, kept);
    assert_eq!(served["openapi"], "3.1.0");
}
