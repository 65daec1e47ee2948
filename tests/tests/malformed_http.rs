//! Malformed HTTP over raw sockets (issue #14): broken chunking, bodies shorter than their
//! `Content-Length`, invalid UTF-8 and too-deep JSON, a declared body over the limit, on
//! every kind of route, authenticated as admin. Every answer is a JSON error (or the
//! route's own answer where the body is well framed and the route takes none), never a 5xx,
//! never a backtrace.
//!
//! Who answers what:
//! - the host (devhost or Spin, both hyper) parses the request head and frames the body;
//!   it hands the component the head at once and the body as a stream, and reports a
//!   framing error (a chunk size that is not hex, a connection that ends inside a chunk or
//!   before `Content-Length` bytes) on that stream when the component reads it;
//! - the dispatcher admits the request on its head (authentication, route, rate limit,
//!   permission), then reads the body, at most 1 MiB: a framing error is its 400
//!   `malformed_body`, a body over the limit its 413 `payload_too_large` (at once when
//!   `Content-Length` declares more); an unknown route is its 404 and an anonymous caller
//!   its 401 before any body byte is read;
//! - kg-http's JSON parser (every JSON route) answers invalid UTF-8 or JSON with 400
//!   `bad_request` and nesting past 32 levels with 400 `invalid_parameters`;
//! - the web component (`/`, `/assets/...`) drains the body too (at most 64 KiB) and
//!   answers the same JSON errors; a well-framed body it ignores.
//!
//! On devhost every case above reaches the component (checked: the JSON error). A host
//! that rejected some framing errors itself (a hyper-level 400 without a body, before the
//! component runs) would also be acceptable for those cases, so on Spin a bodiless 400 is
//! accepted there; a 5xx never is.

use kg_e2e::auth::ADMIN;
use kg_e2e::raw_http::{Connection, RawResponse, authority, exchange, head, keep_alive_head, leak};
use kg_e2e::{HostKind, Stack};
use serde_json::Value;

/// The routes tried: JSON routes of each family, a GET that takes no body, the web app,
/// and a path no route matches.
const ROUTES: [(&str, &str); 7] = [
    ("GET", "/health"),
    ("POST", "/tools/run_read_cypher"),
    ("POST", "/chat"),
    ("POST", "/actions/PurchaseOrder/makePayment/validate"),
    ("POST", "/documents"),
    ("GET", "/"),
    ("POST", "/no/such/route"),
];

#[derive(Debug, Clone, Copy, PartialEq)]
enum Case {
    /// `Transfer-Encoding: chunked` whose first chunk size is `zz`.
    BadChunkSize,
    /// A chunk announced as 64 bytes, 20 sent, then the write side closed.
    TruncatedChunks,
    /// `Content-Length: 100`, 20 bytes sent, then the write side closed.
    ShortBody,
    /// Well framed; a JSON string holding bytes that are not UTF-8.
    InvalidUtf8Json,
    /// Well framed; 64 levels of nesting.
    DeepJson,
    /// `Content-Length` of 2 MiB (over the limit); 10 bytes sent, then closed.
    DeclaredTooLarge,
}

fn nested(levels: usize) -> String {
    format!(
        "{{\"a\":{}1{}}}",
        "[".repeat(levels - 1),
        "]".repeat(levels - 1)
    )
}

/// The bytes of `case` on `method path`, and whether to half-close after them.
fn request(case: Case, method: &str, path: &str, host: &str, key: Option<&str>) -> (Vec<u8>, bool) {
    let bearer = key.map(|k| format!("Bearer {k}"));
    let mut headers: Vec<(&str, &str)> = vec![("content-type", "application/json")];
    if let Some(bearer) = &bearer {
        headers.push(("authorization", bearer));
    }
    let (framing, body, half_close): (String, Vec<u8>, bool) = match case {
        Case::BadChunkSize => ("chunked".into(), b"zz\r\nabc\r\n0\r\n\r\n".to_vec(), false),
        Case::TruncatedChunks => (
            "chunked".into(),
            b"40\r\n{\"query\": \"RETURN 1\"".to_vec(),
            true,
        ),
        Case::ShortBody => ("100".into(), b"{\"query\": \"RETURN 1\"".to_vec(), true),
        Case::InvalidUtf8Json => {
            let body = b"{\"query\": \"\xff\xfe\xfd\"}".to_vec();
            (body.len().to_string(), body, false)
        }
        Case::DeepJson => {
            let body = nested(64).into_bytes();
            (body.len().to_string(), body, false)
        }
        Case::DeclaredTooLarge => ("2097152".into(), b"{\"query\": ".to_vec(), true),
    };
    if framing == "chunked" {
        headers.push(("transfer-encoding", "chunked"));
    } else {
        headers.push(("content-length", &framing));
    }
    let mut bytes = head(method, path, host, &headers);
    bytes.extend_from_slice(&body);
    (bytes, half_close)
}

async fn send(
    stack: &Stack,
    case: Case,
    method: &str,
    path: &str,
    key: Option<&str>,
) -> RawResponse {
    let host = authority(&stack.host.url).unwrap();
    let (bytes, half_close) = request(case, method, path, &host, key);
    exchange(&stack.host.url, &bytes, half_close).await.unwrap()
}

/// No 5xx, no backtrace or internal type name anywhere in what came back.
fn assert_clean(r: &RawResponse, what: &str) {
    let status = r
        .status
        .unwrap_or_else(|| panic!("{what}: no answer: {}", r.describe()));
    assert!(status < 500, "{what}: {}", r.describe());
    if let Some(marker) = leak(&String::from_utf8_lossy(&r.raw)) {
        panic!("{what}: the answer leaks `{marker}`: {}", r.describe());
    }
}

/// A JSON error `{"error": {"code", "message"}}` with `status` and `code`.
fn assert_json_error(r: &RawResponse, status: u16, code: &str, what: &str) {
    assert_clean(r, what);
    assert_eq!(r.status, Some(status), "{what}: {}", r.describe());
    let body: Value = r
        .json()
        .unwrap_or_else(|| panic!("{what}: not JSON: {}", r.describe()));
    assert_eq!(body["error"]["code"], code, "{what}: {body}");
    assert!(body["error"]["message"].is_string(), "{what}: {body}");
    assert!(
        r.header("content-type")
            .is_some_and(|t| t.starts_with("application/json")),
        "{what}: {}",
        r.describe()
    );
}

/// The framing cases: the component's 400 `malformed_body` (a host's own bodiless 400
/// is accepted on Spin, see the module comment).
fn assert_malformed(r: &RawResponse, kind: HostKind, what: &str) {
    assert_clean(r, what);
    if kind == HostKind::Spin && r.status == Some(400) && r.body.is_empty() {
        eprintln!("{what}: the host answered 400 itself");
        return;
    }
    assert_json_error(r, 400, "malformed_body", what);
}

#[tokio::test]
async fn broken_framing_is_a_json_400_on_every_route() {
    let stack = Stack::start().await.unwrap();
    let kind = stack.host.kind;
    for (method, path) in ROUTES {
        for case in [Case::BadChunkSize, Case::TruncatedChunks, Case::ShortBody] {
            let r = send(&stack, case, method, path, Some(ADMIN)).await;
            let what = format!("{method} {path} {case:?}");
            if path == "/no/such/route" {
                // Routes resolve on the head: an unknown path is a 404 before any body read.
                assert_json_error(&r, 404, "not_found", &what);
            } else {
                assert_malformed(&r, kind, &what);
            }
        }
    }
}

#[tokio::test]
async fn invalid_utf8_and_deep_json_are_400s_wherever_json_is_read() {
    let stack = Stack::start().await.unwrap();
    for (method, path) in ROUTES {
        for (case, code) in [
            (Case::InvalidUtf8Json, "bad_request"),
            (Case::DeepJson, "invalid_parameters"),
        ] {
            let r = send(&stack, case, method, path, Some(ADMIN)).await;
            let what = format!("{method} {path} {case:?}");
            match path {
                "/no/such/route" => assert_json_error(&r, 404, "not_found", &what),
                // Well framed, and these routes read no JSON: they answer as usual.
                "/health" | "/" => {
                    assert_clean(&r, &what);
                    assert_eq!(r.status, Some(200), "{what}: {}", r.describe());
                }
                _ => assert_json_error(&r, 400, code, &what),
            }
        }
    }
}

#[tokio::test]
async fn a_declared_body_over_the_limit_is_413_without_reading_it() {
    let stack = Stack::start().await.unwrap();
    for (method, path) in ROUTES {
        let r = send(&stack, Case::DeclaredTooLarge, method, path, Some(ADMIN)).await;
        let what = format!("{method} {path}");
        if path == "/no/such/route" {
            assert_json_error(&r, 404, "not_found", &what);
        } else {
            assert_json_error(&r, 413, "payload_too_large", &what);
        }
    }
}

/// Authentication comes first: an anonymous caller is refused on the head, whatever its
/// body; liveness needs no credential and reads no body.
#[tokio::test]
async fn an_anonymous_caller_gets_401_before_its_body_is_read() {
    let stack = Stack::start().await.unwrap();
    for (method, path) in ROUTES.into_iter().filter(|(_, p)| *p != "/") {
        for case in [Case::BadChunkSize, Case::ShortBody, Case::DeclaredTooLarge] {
            let r = send(&stack, case, method, path, None).await;
            let what = format!("anonymous {method} {path} {case:?}");
            assert_json_error(&r, 401, "unauthenticated", &what);
            assert!(
                r.header("www-authenticate").is_some(),
                "{what}: {}",
                r.describe()
            );
        }
    }
    let r = send(&stack, Case::BadChunkSize, "GET", "/health/live", None).await;
    assert_clean(&r, "liveness");
    assert_eq!(r.status, Some(200), "{}", r.describe());
}

/// The reader handles real chunked bodies: a well-formed one in several chunks is read
/// whole.
#[tokio::test]
async fn a_well_formed_chunked_body_is_read_whole() {
    let stack = Stack::start().await.unwrap();
    let host = authority(&stack.host.url).unwrap();
    let bearer = format!("Bearer {ADMIN}");
    let mut bytes = head(
        "POST",
        "/tools/run_read_cypher",
        &host,
        &[
            ("authorization", &bearer),
            ("content-type", "application/json"),
            ("transfer-encoding", "chunked"),
        ],
    );
    for part in [r#"{"query": "#, r#""RETURN 40 + 2 AS n""#, "}"] {
        bytes.extend_from_slice(format!("{:x}\r\n{part}\r\n", part.len()).as_bytes());
    }
    bytes.extend_from_slice(b"0\r\n\r\n");
    let r = exchange(&stack.host.url, &bytes, false).await.unwrap();
    assert_clean(&r, "chunked");
    assert_eq!(r.status, Some(200), "{}", r.describe());
    assert!(r.text().contains("42"), "{}", r.describe());
}

/// A body the application never reads (an anonymous caller is refused on the head) does
/// not cost the connection, even when its bytes arrive after the answer: the next request
/// on it is answered. devhost reads such a body to its end itself
/// (devtools/devhost/src/request_body.rs); before, hyper found the body unread when the
/// handler ended and closed the connection after the answer, and a client reusing it saw
/// its next request fail. On Spin the test is skipped: how Spin's HTTP trigger treats an
/// unread body is its own.
#[tokio::test]
async fn a_late_unread_body_keeps_the_connection_for_the_next_request() {
    if HostKind::from_env() == HostKind::Spin {
        eprintln!("skipped on Spin: this checks devhost's connection handling");
        return;
    }
    let stack = Stack::start().await.unwrap();
    let host = authority(&stack.host.url).unwrap();
    let body = br#"{"question":"who?"}"#;
    let length = body.len().to_string();
    let mut connection = Connection::open(&stack.host.url).await.unwrap();
    let refused_head = keep_alive_head(
        "POST",
        "/chat",
        &host,
        &[
            ("content-type", "application/json"),
            ("content-length", &length),
        ],
    );
    connection.send(&refused_head).await.unwrap();
    let refused = connection.response().await.unwrap();
    assert_eq!(refused.status, Some(401), "{}", refused.describe());
    // The body only now, then the next request on the same connection.
    connection.send(body).await.unwrap();
    connection
        .send(&keep_alive_head("GET", "/health/live", &host, &[]))
        .await
        .unwrap();
    let next = connection.response().await.unwrap();
    assert_eq!(next.status, Some(200), "{}", next.describe());
}

/// A request refused on its head (anonymous) whose body is already on its way does not
/// cost the connection, on either host: the dispatcher reads such a body to its end after
/// answering. Spin's server closes a connection whose request body is left unread past
/// what it buffers itself, without saying so (no `Connection: close`), and a client that
/// reused it for its next request found it closed (the fuzz test saw one such
/// `IncompleteMessage` in 10,000 requests on Spin). A body past the 1 MiB limit is not
/// read: that connection may close.
#[tokio::test]
async fn a_refused_request_with_a_large_body_keeps_the_connection() {
    let stack = Stack::start().await.unwrap();
    let host = authority(&stack.host.url).unwrap();
    let body = format!("{{\"message\": \"{}\"}}", "x".repeat(200 * 1024));
    let length = body.len().to_string();
    let mut connection = Connection::open(&stack.host.url).await.unwrap();
    for round in 0..3 {
        let mut request = keep_alive_head(
            "POST",
            "/chat",
            &host,
            &[
                ("content-type", "application/json"),
                ("content-length", &length),
            ],
        );
        request.extend_from_slice(body.as_bytes());
        connection.send(&request).await.unwrap();
        let refused = connection.response().await.unwrap();
        assert_eq!(
            refused.status,
            Some(401),
            "round {round}: {}",
            refused.describe()
        );
        connection
            .send(&keep_alive_head("GET", "/health/live", &host, &[]))
            .await
            .unwrap();
        let next = connection.response().await.unwrap();
        assert_eq!(next.status, Some(200), "round {round}: {}", next.describe());
    }
}
