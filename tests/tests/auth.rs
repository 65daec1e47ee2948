//! Authentication over real HTTP (issue #13): no route but liveness and the web app's
//! static files answers without a credential; missing, malformed, unknown and expired
//! credentials get 401 with `WWW-Authenticate: Bearer error="invalid_token"` and never reach
//! the graph or the LLM; `auth_mode=none` warns on every response; security headers and
//! CORS.

use kg_e2e::{AppHost, HostKind, Stack, app_manifest, auth, recording_server};
use reqwest::header::HeaderMap;
use serde_json::{Value, json};

/// Every route family of the API, as (method, path, body).
const ROUTES: &[(&str, &str, &str)] = &[
    ("GET", "/health", ""),
    ("GET", "/tools", ""),
    ("POST", "/tools/get_node_statistics", "{}"),
    ("GET", "/actions", ""),
    ("GET", "/actions/PurchaseOrder/makePayment", ""),
    (
        "POST",
        "/actions/PurchaseOrder/makePayment/validate",
        r#"{"entity_ids": ["PO-0001"]}"#,
    ),
    (
        "POST",
        "/actions/PurchaseOrder/makePayment/plan",
        r#"{"entity_ids": ["PO-0001"]}"#,
    ),
    (
        "POST",
        "/actions/PurchaseOrder/makePayment/execute",
        r#"{"entity_ids": ["PO-0001"]}"#,
    ),
    ("GET", "/actions/log", ""),
    ("POST", "/actions/setup", "{}"),
    ("POST", "/actions/log/LOG-1/undo", "{}"),
    ("GET", "/documents", ""),
    (
        "POST",
        "/documents",
        r#"{"id": "d", "title": "d", "text": "hello"}"#,
    ),
    ("DELETE", "/documents/d", ""),
    ("POST", "/search", r#"{"query": "orders"}"#),
    (
        "POST",
        "/chat",
        r#"{"message": "hello", "routing_mode": "rule"}"#,
    ),
    (
        "POST",
        "/chat/stream",
        r#"{"message": "hello", "routing_mode": "rule"}"#,
    ),
    ("POST", "/chat/approve", r#"{"approval_token": "t"}"#),
    (
        "POST",
        "/api/qa/query",
        r#"{"question": "hello", "routing_mode": "rule"}"#,
    ),
    ("GET", "/conversations/c0ffee", ""),
    ("DELETE", "/conversations/c0ffee", ""),
    ("GET", "/no/such/route", ""),
    ("POST", "/health", ""),
];

async fn decoded(response: reqwest::Response) -> (u16, HeaderMap, Value) {
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let text = response.text().await.unwrap();
    let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
    (status, headers, body)
}

async fn call(
    host: &AppHost,
    key: Option<&str>,
    method: &str,
    path: &str,
    body: &str,
) -> (u16, HeaderMap, Value) {
    decoded(host.request_as(key, method, path, body).await.unwrap()).await
}

/// A request with a raw `Authorization` header value (any bytes).
async fn with_authorization(host: &AppHost, value: &[u8], path: &str) -> (u16, HeaderMap, Value) {
    let value = reqwest::header::HeaderValue::from_bytes(value).unwrap();
    let response = reqwest::Client::new()
        .get(format!("{}{path}", host.url))
        .header(reqwest::header::AUTHORIZATION, value)
        .send()
        .await
        .unwrap();
    decoded(response).await
}

/// Spin's own refusal of a request with a header value that is not UTF-8: a 500 with an
/// empty body, and its log's `invalid utf-8 sequence` (the line may take a moment to
/// arrive from the host's stderr).
async fn spin_refused_non_utf8(host: &AppHost, status: u16, body: &Value) -> Result<(), String> {
    if status != 500 || body.as_str() != Some("") {
        return Err(format!(
            "Spin answered {status} {body}, not its bodiless 500: has Spin changed? then expect the 401"
        ));
    }
    for _ in 0..40 {
        let logged = host.stderr_lines().iter().any(|line| {
            line.contains("Error processing request") && line.contains("invalid utf-8")
        });
        if logged {
            return Ok(());
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    Err("a bodiless 500 without Spin's `invalid utf-8` log line: the component failed?".into())
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// A 401 as the issue specifies it: the JSON error with `code`, and the RFC 6750 challenge.
fn assert_401(what: &str, (status, headers, body): &(u16, HeaderMap, Value), code: &str) {
    assert_eq!(*status, 401, "{what}: {body}");
    assert_eq!(body["error"]["code"], code, "{what}: {body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .is_some_and(|m| !m.is_empty()),
        "{what}: {body}"
    );
    let challenge = header(headers, "www-authenticate").unwrap_or_default();
    assert!(
        challenge.contains("Bearer") && challenge.contains(r#"error="invalid_token""#),
        "{what}: WWW-Authenticate `{challenge}`"
    );
}

/// The application pointed at recorders for both the graph and the LLM: any request that
/// got past authentication to do real work would show up there.
async fn recorded_host() -> (
    AppHost,
    wiremock::MockServer,
    wiremock::MockServer,
    tempfile::TempDir,
) {
    let graph = recording_server().await;
    let llm = recording_server().await;
    let dir = tempfile::tempdir().unwrap();
    let host = AppHost::start(
        &app_manifest(),
        &dir.path().join("kv.db"),
        &[
            ("neo4j_origin", graph.uri()),
            ("neo4j_password", "devgraph".to_string()),
            ("llm_origin", llm.uri()),
        ],
    )
    .await
    .unwrap();
    (host, graph, llm, dir)
}

#[tokio::test]
async fn every_route_but_liveness_needs_a_credential_and_nothing_reaches_the_graph_or_llm() {
    let (host, graph, llm, _dir) = recorded_host().await;
    let unknown = "kga_unknownKey_0123456789abcdefghij";
    for (method, path, body) in ROUTES {
        let what = format!("{method} {path} without a credential");
        assert_401(
            &what,
            &call(&host, None, method, path, body).await,
            "unauthenticated",
        );
        let what = format!("{method} {path} with an unknown key");
        assert_401(
            &what,
            &call(&host, Some(unknown), method, path, body).await,
            "invalid_token",
        );
    }
    assert!(
        graph.received_requests().await.unwrap().is_empty(),
        "a rejected request reached the graph"
    );
    assert!(
        llm.received_requests().await.unwrap().is_empty(),
        "a rejected request reached the LLM"
    );

    // Liveness: no credential, no details, no graph query.
    let (status, headers, body) = call(&host, None, "GET", "/health/live", "").await;
    assert_eq!(status, 200, "{body}");
    for detail in ["components", "kv", "problems"] {
        assert!(
            body.get(detail).is_none(),
            "liveness shows {detail}: {body}"
        );
    }
    assert!(!body.to_string().contains(&graph.uri()), "{body}");
    assert!(header(&headers, "www-authenticate").is_none());
    assert!(graph.received_requests().await.unwrap().is_empty());
}

#[tokio::test]
async fn the_web_app_and_its_assets_need_no_credential() {
    let (host, _graph, _llm, _dir) = recorded_host().await;
    let (status, _, page) = call(&host, None, "GET", "/", "").await;
    assert_eq!(status, 200, "{page}");
    let html = page.as_str().unwrap().to_string();
    let asset = html
        .split('"')
        .find(|s| s.starts_with("/assets/"))
        .unwrap_or_else(|| panic!("no asset in {html}"));
    let (status, _, _) = call(&host, None, "GET", asset, "").await;
    assert_eq!(status, 200, "{asset}");
}

#[tokio::test]
async fn bad_credentials_are_401_never_5xx() {
    let expired = "kga_expiredKey_0123456789abcdefghij";
    let expired_rfc3339 = "kga_expiredKey3339_0123456789abcdef";
    let valid_until = "kga_validUntilKey_0123456789abcdefg";
    let valid_until_rfc3339 = "kga_validUntil3339_0123456789abcdef";
    let mut entries = auth::test_entries();
    entries.push(auth::entry(
        "expired",
        &["admin"],
        expired,
        Some("2020-01-01"),
    ));
    entries.push(auth::entry(
        "expired2",
        &["admin"],
        expired_rfc3339,
        Some("2020-01-01T00:00:00Z"),
    ));
    entries.push(auth::entry(
        "later",
        &["viewer"],
        valid_until,
        Some("2999-12-31"),
    ));
    entries.push(auth::entry(
        "later2",
        &["viewer"],
        valid_until_rfc3339,
        Some("2999-12-31T23:59:59Z"),
    ));
    // The shortest and the longest keys of the format: kga_ + 20 and + 196 characters.
    let shortest = format!("kga_{}", "a-_B".repeat(5));
    let longest = format!("kga_{}", "Zz9-_".repeat(39) + "x");
    assert_eq!((shortest.len(), longest.len()), (24, 200));
    entries.push(auth::entry("shortest", &["viewer"], &shortest, None));
    entries.push(auth::entry("longest", &["viewer"], &longest, None));
    let stack = Stack::start_with(&[("auth_api_keys", auth::api_keys(&entries))])
        .await
        .unwrap();
    let host = &stack.host;

    // Keys that have not expired yet work, in both date forms.
    for key in [
        valid_until,
        valid_until_rfc3339,
        &shortest,
        &longest,
        auth::VIEWER,
        auth::ADMIN,
    ] {
        let (status, _, body) = call(host, Some(key), "GET", "/tools", "").await;
        assert_eq!(status, 200, "{key}: {body}");
    }

    let long = format!("Bearer kga_{}", "A".repeat(16 * 1024));
    let mut near_miss = auth::ADMIN.to_string();
    near_miss.pop();
    near_miss.push('#');
    let mut one_off = auth::ADMIN.to_string();
    let last = one_off.pop().unwrap();
    one_off.push(if last == 'x' { 'y' } else { 'x' });
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("abc", b"Bearer abc".to_vec()),
        ("a.b.c", b"Bearer a.b.c".to_vec()),
        ("kga_short", b"Bearer kga_short".to_vec()),
        ("an empty token", b"Bearer ".to_vec()),
        ("the scheme alone", b"Bearer".to_vec()),
        (
            "non-ASCII (UTF-8)",
            "Bearer kga_ключ_0123456789abcdefghij".as_bytes().to_vec(),
        ),
        (
            "non-ASCII (Latin-1 byte)",
            b"Bearer kga_\xe9\xe9_0123456789abcdefghij".to_vec(),
        ),
        (
            "a key with a character outside the alphabet",
            format!("Bearer {near_miss}").into_bytes(),
        ),
        (
            "an admin key one character off",
            format!("Bearer {one_off}").into_bytes(),
        ),
        ("the key without a scheme", auth::ADMIN.as_bytes().to_vec()),
        ("Basic", b"Basic YWRtaW46YWRtaW4=".to_vec()),
        (
            "Basic with the key as password",
            format!("Basic {}", base64_of(&format!("admin:{}", auth::ADMIN))).into_bytes(),
        ),
        (
            "a JWT-shaped token (OIDC is off)",
            b"Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln".to_vec(),
        ),
        (
            "an unknown kga_ key",
            b"Bearer kga_unknownKey_0123456789abcdefghij".to_vec(),
        ),
        (
            "an expired key (YYYY-MM-DD)",
            format!("Bearer {expired}").into_bytes(),
        ),
        (
            "an expired key (RFC 3339)",
            format!("Bearer {expired_rfc3339}").into_bytes(),
        ),
    ];
    // No bearer credential the server can read (another scheme, none, or a header that is
    // not text): 401 either as missing (`unauthenticated`) or as bad (`invalid_token`).
    let unreadable = [
        "non-ASCII (Latin-1 byte)",
        "the key without a scheme",
        "Basic",
        "Basic with the key as password",
    ];
    // Every case is tried, then every departure reported at once.
    let mut wrong = Vec::new();
    for (what, value) in &cases {
        let (status, headers, body) = with_authorization(host, value, "/tools").await;
        if host.kind == HostKind::Spin && std::str::from_utf8(value).is_err() {
            // Spin's HTTP trigger (4.0.2, crates/trigger-http/src/headers.rs,
            // `prepare_request_headers`) turns every header value into a UTF-8 string
            // before it instantiates the component, and refuses the request with its own
            // bodiless 500 when one is not: the application never sees it (README
            // "Limits"). Asserted as Spin's behaviour, by its log line, so a Spin that
            // fixes it fails here and the case goes back to the 401 below.
            if let Err(departure) = spin_refused_non_utf8(host, status, &body).await {
                wrong.push(format!("{what}: {departure}"));
            }
            continue;
        }
        let challenge = header(&headers, "www-authenticate").unwrap_or_default();
        let code = body["error"]["code"].as_str().unwrap_or_default();
        let code_ok =
            code == "invalid_token" || (unreadable.contains(what) && code == "unauthenticated");
        if status != 401
            || !code_ok
            || !challenge.contains("Bearer")
            || !challenge.contains(r#"error="invalid_token""#)
        {
            wrong.push(format!(
                "{what}: {status} {body} (WWW-Authenticate `{challenge}`)"
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "not the expected 401:\n{}",
        wrong.join("\n")
    );
    // 16 KiB of header: the HTTP server may refuse it (431) before the application sees
    // it; either way it is no 5xx and no 200.
    let (status, headers, body) = with_authorization(host, long.as_bytes(), "/tools").await;
    eprintln!("a 16 KiB Authorization header: {status}");
    assert!(
        status == 401 || status == 431,
        "16 KiB header: {status} {body}"
    );
    if status == 401 {
        assert_401("16 KiB header", &(status, headers, body), "invalid_token");
    }
    // Still serving.
    let (status, _, _) = call(host, Some(auth::ADMIN), "GET", "/tools", "").await;
    assert_eq!(status, 200);
}

fn base64_of(text: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(text)
}

#[tokio::test]
async fn auth_mode_none_needs_no_credential_and_warns_on_every_response() {
    let open = Stack::start_with(&[("auth_mode", "none".to_string())])
        .await
        .unwrap();
    for (path, expected) in [
        ("/health", 200),
        ("/health/live", 200),
        ("/tools", 200),
        ("/no/such/route", 404),
    ] {
        let (status, headers, body) = call(&open.host, None, "GET", path, "").await;
        assert_eq!(status, expected, "{path}: {body}");
        let warning = header(&headers, "x-kg-auth-warning").unwrap_or_default();
        assert!(!warning.is_empty(), "{path}: no x-kg-auth-warning");
    }
    let (status, headers, _) = call(
        &open.host,
        None,
        "POST",
        "/tools/get_node_statistics",
        r#"{"label": "Supplier"}"#,
    )
    .await;
    assert_eq!(status, 200);
    assert!(header(&headers, "x-kg-auth-warning").is_some());

    // With default settings, no response carries it.
    let (host, _graph, _llm, _dir) = recorded_host().await;
    for (key, path) in [
        (None, "/health/live"),
        (None, "/tools"),
        (Some(auth::ADMIN), "/tools"),
        (Some(auth::ADMIN), "/no/such/route"),
    ] {
        let (_, headers, _) = call(&host, key, "GET", path, "").await;
        assert!(
            headers.get("x-kg-auth-warning").is_none(),
            "{path} warns without auth_mode=none"
        );
    }
}

#[tokio::test]
async fn every_response_is_nosniff_and_api_answers_are_not_cached() {
    let stack = Stack::start().await.unwrap();
    let host = &stack.host;
    let cases: [(Option<&str>, &str, &str, &str, u16); 7] = [
        (Some(auth::ADMIN), "GET", "/tools", "", 200),
        (Some(auth::ADMIN), "GET", "/actions", "", 200),
        (Some(auth::ADMIN), "GET", "/health", "", 200),
        (None, "GET", "/health/live", "", 200),
        (None, "GET", "/tools", "", 401),
        (Some(auth::ADMIN), "GET", "/no/such/route", "", 404),
        (
            Some(auth::ADMIN),
            "POST",
            "/tools/get_node_statistics",
            "{not json",
            400,
        ),
    ];
    for (key, method, path, body, expected) in cases {
        let (status, headers, json) = call(host, key, method, path, body).await;
        assert_eq!(status, expected, "{method} {path}: {json}");
        assert_eq!(
            header(&headers, "x-content-type-options"),
            Some("nosniff"),
            "{method} {path}"
        );
        if path != "/health/live" {
            let cache = header(&headers, "cache-control").unwrap_or_default();
            assert!(
                cache.contains("no-store"),
                "{method} {path} ({status}): cache-control `{cache}`"
            );
        }
    }
    // A streamed answer too.
    let response = host
        .request_as(
            Some(auth::ADMIN),
            "POST",
            "/actions/PurchaseOrder/approve/execute",
            &json!({"entity_ids": ["PO-9999"], "stream": true}).to_string(),
        )
        .await
        .unwrap();
    assert_eq!(
        header(response.headers(), "x-content-type-options"),
        Some("nosniff")
    );
    response.bytes().await.unwrap();
}

async fn preflight(host: &AppHost, origin: &str) -> (u16, HeaderMap) {
    let response = reqwest::Client::new()
        .request(reqwest::Method::OPTIONS, format!("{}/chat", host.url))
        .header("origin", origin)
        .header("access-control-request-method", "POST")
        .header(
            "access-control-request-headers",
            "authorization,content-type",
        )
        .send()
        .await
        .unwrap();
    (response.status().as_u16(), response.headers().clone())
}

#[tokio::test]
async fn cors_is_off_by_default_and_follows_the_allow_list() {
    let stack = Stack::start().await.unwrap();
    let response = reqwest::Client::new()
        .get(format!("{}/tools", stack.host.url))
        .bearer_auth(auth::ADMIN)
        .header("origin", "https://evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert!(
        response
            .headers()
            .get("access-control-allow-origin")
            .is_none()
    );
    let (_, headers) = preflight(&stack.host, "https://evil.example").await;
    assert!(headers.get("access-control-allow-origin").is_none());
    let (_, headers) = preflight(&stack.host, "https://app.example").await;
    assert!(
        headers.get("access-control-allow-origin").is_none(),
        "CORS is off by default"
    );

    let dir = tempfile::tempdir().unwrap();
    let mut variables = stack.graph.variables();
    variables.push(("cors_allowed_origins", "https://app.example".to_string()));
    let host = AppHost::start(&app_manifest(), &dir.path().join("kv.db"), &variables)
        .await
        .unwrap();
    let (status, headers) = preflight(&host, "https://app.example").await;
    assert_eq!(status, 204, "{headers:?}");
    assert_eq!(
        header(&headers, "access-control-allow-origin"),
        Some("https://app.example")
    );
    let allowed = header(&headers, "access-control-allow-headers")
        .unwrap_or_default()
        .to_ascii_lowercase();
    assert!(allowed.contains("authorization"), "{allowed}");
    let (_, headers) = preflight(&host, "https://evil.example").await;
    assert!(
        headers.get("access-control-allow-origin").is_none(),
        "{headers:?}"
    );
    // Liveness is answered before the request's other headers are read: its `Origin`
    // still decides CORS.
    for (origin, allowed) in [
        ("https://app.example", true),
        ("https://evil.example", false),
    ] {
        let response = reqwest::Client::new()
            .get(format!("{}/health/live", host.url))
            .header("origin", origin)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        assert_eq!(
            header(response.headers(), "access-control-allow-origin"),
            allowed.then_some(origin),
            "/health/live from {origin}"
        );
    }
}

/// `scripts/new-api-key.sh` mints a key and its entry; the service started with that entry
/// admits the key with the roles given, records its subject as the actor, and refuses the
/// key once its expiry has passed.
#[tokio::test]
async fn a_key_minted_by_the_script_works_end_to_end() {
    let mint = |args: &[&str]| {
        let output = std::process::Command::new("bash")
            .arg(kg_e2e::workspace().join("scripts/new-api-key.sh"))
            .args(args)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let stdout = String::from_utf8(output.stdout).unwrap();
        let field = |name: &str| {
            stdout
                .lines()
                .find_map(|l| l.strip_prefix(name))
                .unwrap_or_else(|| panic!("no `{name}` in {stdout}"))
                .trim()
                .to_string()
        };
        (field("key:"), field("entry:"))
    };
    let (key, entry) = mint(&["carol", "operator"]);
    let (old_key, old_entry) = mint(&["dave", "admin", "2020-01-01"]);
    assert!(key.starts_with("kga_") && !entry.contains(&key), "{entry}");
    // The entry is the documented format, computed independently here.
    assert_eq!(entry, auth::entry("carol", &["operator"], &key, None));
    assert_eq!(
        old_entry,
        auth::entry("dave", &["admin"], &old_key, Some("2020-01-01"))
    );
    let stack = Stack::start_with(&[("auth_api_keys", auth::api_keys(&[entry, old_entry]))])
        .await
        .unwrap();
    let host = &stack.host;
    let (status, _, body) = call(host, Some(&key), "GET", "/actions/log", "").await;
    assert_eq!(status, 200, "{body}");
    let (status, _, body) = call(host, Some(&key), "POST", "/actions/setup", "{}").await;
    assert_eq!(status, 403, "{body}");
    let (status, _, body) = call(
        host,
        Some(&key),
        "POST",
        "/actions/PurchaseOrder/approve/execute",
        &json!({"entity_ids": ["PO-9999"], "actor": "carol"}).to_string(),
    )
    .await;
    assert_eq!(status, 200, "carol may name herself as the actor: {body}");
    assert_401(
        "an expired minted key",
        &call(host, Some(&old_key), "GET", "/tools", "").await,
        "invalid_token",
    );
    // The fixed test keys are not configured on this instance.
    assert_401(
        "a key of another deployment",
        &call(host, Some(auth::ADMIN), "GET", "/tools", "").await,
        "invalid_token",
    );
}
