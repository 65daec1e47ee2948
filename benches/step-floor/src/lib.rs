//! The host's floor for one agent step (issue #18; `tests/benches/request_profile.rs`).
//!
//! An agent step needs two outbound requests: one to the LLM and one to the graph. This
//! component sends just those (as many as a turn of the application sends), each written
//! whole and read to its end, with the fewest WASI calls it can (no SDK, no executor, no
//! deadline timer, no request options, no parsing) and nothing else between them: no
//! routing, no JSON, no conversation state, no WIT calls. What a step of it costs at the
//! client, less its round trips, is what any component pays on the same host for a step's
//! I/O; the application's step beyond that is its own.
//!
//! The request says what to do, so one build serves any bench stack:
//! - `x-floor-llm-requests`, `x-floor-graph-requests`: how many of each to send, one LLM
//!   request then one graph request while both remain (a bench passes the counts of the
//!   application's turn it compares with);
//! - `x-floor-llm-url`, `x-floor-llm-bytes`: where the LLM request goes and how big its
//!   body is (the bench passes the size of the application's own requests);
//! - `x-floor-graph-url`, `x-floor-graph-authorization`: the Query API's URL and the
//!   `Authorization` it needs; the request's own body is the graph request's body.
//!
//! It answers in JSON, as the application does: 200 `{"requests": n}` with the number
//! sent; 400 `{"error": {"code": "bad_request", …}}` naming a missing, malformed or too
//! large header value; 502 `{"error": {"code": "upstream_failed", …}}` naming the request
//! that failed.

use serde_json::json;
use wasi::exports::http::incoming_handler::Guest;
use wasi::http::outgoing_handler;
use wasi::http::types::{
    Fields, IncomingBody, IncomingRequest, Method, OutgoingBody, OutgoingRequest, OutgoingResponse,
    ResponseOutparam, Scheme,
};
use wasi::io::streams::StreamError;

wasi::http::proxy::export!(StepFloor);

struct StepFloor;

/// Most LLM or graph requests one request may ask for (a bench's turn sends a few).
const MOST_REQUESTS: usize = 1_000;
/// Largest LLM request body one request may ask for (the application's are a few KiB).
const MOST_LLM_BYTES: usize = 16 << 20;

impl Guest for StepFloor {
    fn handle(request: IncomingRequest, response_out: ResponseOutparam) {
        let (status, body) = match run(&request) {
            Ok(sent) => (200, json!({ "requests": sent })),
            Err(failure) => (
                failure.status,
                json!({"error": {"code": failure.code, "message": failure.message}}),
            ),
        };
        respond(response_out, status, body.to_string().as_bytes());
    }
}

/// Why the floor could not do its work: the status and the error's code and message.
struct Failure {
    status: u16,
    code: &'static str,
    message: String,
}

/// The request itself is wrong: a header missing or malformed, or no body to read.
fn bad_request(message: String) -> Failure {
    Failure {
        status: 400,
        code: "bad_request",
        message,
    }
}

/// An LLM or graph request the floor sent failed.
fn upstream_failed(message: String) -> Failure {
    Failure {
        status: 502,
        code: "upstream_failed",
        message,
    }
}

struct Target {
    scheme: Scheme,
    authority: String,
    path: String,
    headers: Vec<(String, Vec<u8>)>,
}

fn run(request: &IncomingRequest) -> Result<usize, Failure> {
    let headers = request.headers();
    let header = |name: &str| -> Result<String, String> {
        let values = headers.get(&name.to_string());
        let value = values
            .first()
            .ok_or_else(|| format!("missing header {name}"))?;
        String::from_utf8(value.clone()).map_err(|_| format!("header {name} is not UTF-8"))
    };
    // A count or size within `most`: the floor is a benchmark, not a load generator.
    let number = |name: &str, most: usize| -> Result<usize, String> {
        let n: usize = header(name)?
            .parse()
            .map_err(|_| format!("{name} is not a number"))?;
        if n > most {
            return Err(format!("{name} is {n}, more than {most}"));
        }
        Ok(n)
    };
    let json = ("content-type".to_string(), b"application/json".to_vec());
    // Everything the request says, read before anything is sent.
    let read = || -> Result<_, String> {
        let counts = (
            number("x-floor-llm-requests", MOST_REQUESTS)?,
            number("x-floor-graph-requests", MOST_REQUESTS)?,
        );
        let llm_body = llm_body(number("x-floor-llm-bytes", MOST_LLM_BYTES)?);
        let llm = target(&header("x-floor-llm-url")?, vec![json.clone()])?;
        let graph = target(
            &header("x-floor-graph-url")?,
            vec![
                json.clone(),
                // What neo4j-client asks for (its `ACCEPT`): the typed answer, the one the
                // application's tools read.
                (
                    "accept".to_string(),
                    b"application/vnd.neo4j.query, application/json;q=0.9".to_vec(),
                ),
                (
                    "authorization".to_string(),
                    header("x-floor-graph-authorization")?.into_bytes(),
                ),
            ],
        )?;
        Ok((counts, llm_body, llm, graph))
    };
    let ((llm_requests, graph_requests), llm_body, llm, graph) = read().map_err(bad_request)?;
    drop(headers);
    let graph_body = read_request_body(request).map_err(bad_request)?;
    for i in 0..llm_requests.max(graph_requests) {
        if i < llm_requests {
            post(&llm, &llm_body).map_err(|e| upstream_failed(format!("LLM request {i}: {e}")))?;
        }
        if i < graph_requests {
            post(&graph, &graph_body)
                .map_err(|e| upstream_failed(format!("graph request {i}: {e}")))?;
        }
    }
    Ok(llm_requests + graph_requests)
}

/// A chat-completion request of `size` bytes (at least its skeleton).
fn llm_body(size: usize) -> Vec<u8> {
    let head = br#"{"model":"stub","messages":[{"role":"user","content":""#;
    let tail = br#""}]}"#;
    let mut body = head.to_vec();
    body.resize(size.saturating_sub(tail.len()).max(head.len()), b'x');
    body.extend_from_slice(tail);
    body
}

fn target(url: &str, headers: Vec<(String, Vec<u8>)>) -> Result<Target, String> {
    let (scheme, rest) = url
        .split_once("://")
        .ok_or_else(|| format!("not an absolute URL: {url}"))?;
    let scheme = match scheme {
        "http" => Scheme::Http,
        "https" => Scheme::Https,
        other => return Err(format!("unsupported scheme {other}")),
    };
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    Ok(Target {
        scheme,
        authority: authority.to_string(),
        path: if path.is_empty() { "/" } else { path }.to_string(),
        headers,
    })
}

/// Sends `body` to `target` and reads the answer to its end; fails on a status outside
/// 2xx (the Query API answers 202).
fn post(target: &Target, body: &[u8]) -> Result<(), String> {
    let fields = Fields::from_list(&target.headers).map_err(|e| format!("{e:?}"))?;
    let request = OutgoingRequest::new(fields);
    let invalid = |what: &str| format!("invalid {what}");
    request
        .set_method(&Method::Post)
        .map_err(|()| invalid("method"))?;
    request
        .set_scheme(Some(&target.scheme))
        .map_err(|()| invalid("scheme"))?;
    request
        .set_authority(Some(&target.authority))
        .map_err(|()| invalid("authority"))?;
    request
        .set_path_with_query(Some(&target.path))
        .map_err(|()| invalid("path"))?;
    let outgoing = request.body().map_err(|()| "no request body".to_string())?;
    // The whole body goes before the request starts, so headers and body leave together
    // (as the application's transports send bodies up to kg_spin::EARLY_BODY_MAX; after
    // the start, Nagle's algorithm and delayed ACKs cost ~40 ms a request).
    let stream = outgoing.write().map_err(|()| "no body stream")?;
    write_all(&stream, body)?;
    drop(stream);
    OutgoingBody::finish(outgoing, None).map_err(|e| format!("{e:?}"))?;
    let future = outgoing_handler::handle(request, None).map_err(|e| format!("{e:?}"))?;
    future.subscribe().block();
    let response = match future.get() {
        Some(Ok(Ok(response))) => response,
        Some(Ok(Err(code))) => return Err(format!("{code:?}")),
        Some(Err(())) | None => return Err("no response".into()),
    };
    let status = response.status();
    let incoming = response.consume().map_err(|()| "no response body")?;
    let read = read_to_end(&incoming)?;
    if !(200..300).contains(&status) {
        return Err(format!(
            "status {status}: {}",
            String::from_utf8_lossy(&read)
        ));
    }
    Ok(())
}

/// Writes as much as the host takes each time, without a flush (`finish` ends the body
/// after everything written), waiting only when it has no room.
fn write_all(stream: &wasi::io::streams::OutputStream, body: &[u8]) -> Result<(), String> {
    let mut rest = body;
    while !rest.is_empty() {
        let permit = stream
            .check_write()
            .map_err(|e| format!("writing the body: {e:?}"))?;
        if permit == 0 {
            stream.subscribe().block();
            continue;
        }
        let n = usize::try_from(permit)
            .unwrap_or(usize::MAX)
            .min(rest.len());
        stream
            .write(&rest[..n])
            .map_err(|e| format!("writing the body: {e:?}"))?;
        rest = &rest[n..];
    }
    Ok(())
}

fn read_to_end(body: &IncomingBody) -> Result<Vec<u8>, String> {
    let stream = body.stream().map_err(|()| "no body stream")?;
    let mut read = Vec::new();
    loop {
        match stream.blocking_read(64 * 1024) {
            Ok(chunk) => read.extend_from_slice(&chunk),
            Err(StreamError::Closed) => return Ok(read),
            Err(StreamError::LastOperationFailed(e)) => return Err(e.to_debug_string()),
        }
    }
}

fn read_request_body(request: &IncomingRequest) -> Result<Vec<u8>, String> {
    let body = request.consume().map_err(|()| "no request body")?;
    read_to_end(&body)
}

fn respond(response_out: ResponseOutparam, status: u16, text: &[u8]) {
    let headers = Fields::from_list(&[("content-type".to_string(), b"application/json".to_vec())])
        .unwrap_or_else(|_| Fields::new());
    let response = OutgoingResponse::new(headers);
    // 200, 400 and 502 are valid statuses: the host cannot refuse them.
    let _ = response.set_status_code(status);
    let Ok(body) = response.body() else { return };
    ResponseOutparam::set(response_out, Ok(response));
    if let Ok(stream) = body.write() {
        let _ = write_all(&stream, text);
    }
    let _ = OutgoingBody::finish(body, None);
}
