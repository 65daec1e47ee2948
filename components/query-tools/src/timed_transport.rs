//! neo4j-client's transport over WASI HTTP with a deadline per query: it sends through
//! `wasi:http/outgoing-handler` itself and awaits the answer and each chunk of its body
//! against the deadline with one monotonic-clock timer, which bounds connecting, the first
//! byte and every byte after it on any host. Dropping the pending response when the timer
//! fires ends the request (wasmtime-wasi-http, hence Spin and devhost, aborts its task).
//! No `request-options` are passed: their three timeouts would only repeat the deadline,
//! and setting them cost four host calls a request (about 10 µs on devhost).
//!
//! The graph also stops each statement itself: every request carries the Query API's
//! `maxExecutionTime` (see `lib.rs`), three seconds under this deadline, and Neo4j stops any
//! statement at its `db.transaction.timeout`. This deadline is the backstop for a graph
//! that does not answer at all (or ignores the field): the tool then answers 504.

use neo4j_client::{
    HttpRequest, HttpResponse, Method, Transport, TransportError, TransportErrorKind,
};
use std::time::Duration;
use wasi::clocks::monotonic_clock;
use wasi::http::outgoing_handler;
use wasi::http::types::{
    ErrorCode, Fields, IncomingBody, Method as WasiMethod, OutgoingBody, OutgoingRequest, Scheme,
};
use wasi::io::poll::{Pollable, poll};
use wasi::io::streams::StreamError;

/// Most bytes one `blocking-write-and-flush` takes (wasi:io).
const BODY_WRITE_MAX: usize = 4096;

pub struct TimedTransport {
    pub deadline: Duration,
}

impl Transport for TimedTransport {
    fn send(&self, request: HttpRequest) -> Result<HttpResponse, TransportError> {
        let deadline_ns = kg_spin::clock::nanos(self.deadline);
        // One timer for the whole request, started now (the host adds the duration to its
        // clock: no clock reading of our own), every wait below polls it (a timer per wait
        // cost three more host calls each).
        let deadline = monotonic_clock::subscribe_duration(deadline_ns);
        let (scheme, target) = split_url(&request.url)?;
        let headers: Vec<(String, Vec<u8>)> = request
            .headers
            .iter()
            .map(|(k, v)| (k.clone(), v.clone().into_bytes()))
            .collect();
        let fields = Fields::from_list(&headers)
            .map_err(|e| other(format!("invalid request header: {e:?}")))?;
        let outgoing = OutgoingRequest::new(fields);
        let method = match request.method {
            Method::Get => WasiMethod::Get,
            Method::Post => WasiMethod::Post,
            Method::Delete => WasiMethod::Delete,
        };
        let set =
            |ok: Result<(), ()>, what: &str| ok.map_err(|()| other(format!("invalid {what}")));
        set(outgoing.set_method(&method), "method")?;
        set(outgoing.set_scheme(Some(&scheme)), "scheme")?;
        set(outgoing.set_authority(Some(&target.authority)), "authority")?;
        set(
            outgoing.set_path_with_query(Some(&target.path_with_query)),
            "path",
        )?;
        let body = outgoing
            .body()
            .map_err(|()| other("request body unavailable".into()))?;

        // A small body is written before the request starts, so the host sends headers and
        // body together (see kg_spin::EARLY_BODY_MAX: ~40 ms per request otherwise). A
        // larger one goes after the request has started, as spin-sdk does: it could
        // otherwise block on the host's buffer before anything is sent.
        //
        // Only what one `blocking-write-and-flush` takes (4096 bytes) goes first: before the
        // request starts nothing drains the host's body channel (wasmtime-wasi-http holds
        // two writes), so the flush of a second piece waited forever — a `run_read_cypher`
        // call of more than 4 KiB (a plan naming 400 ids) hung.
        let body_first = request.body.as_ref().map_or(0, Vec::len)
            <= kg_spin::EARLY_BODY_MAX.min(BODY_WRITE_MAX);
        let mut pending = Some(outgoing);
        let mut started_future = None;
        if !body_first && let Some(outgoing) = pending.take() {
            started_future =
                Some(outgoing_handler::handle(outgoing, None).map_err(transport_error)?);
        }

        // A server may
        // answer before it has read the body (Neo4j and devgraph send 401 for bad
        // credentials at once) and close the connection: a failed write is then only
        // reported if no answer comes.
        let mut write_error = None;
        {
            let stream = body
                .write()
                .map_err(|()| other("request body stream unavailable".into()))?;
            for chunk in request
                .body
                .as_deref()
                .unwrap_or_default()
                .chunks(BODY_WRITE_MAX)
            {
                if let Err(e) = stream.blocking_write_and_flush(chunk) {
                    write_error = Some(TransportError {
                        kind: TransportErrorKind::Connect,
                        message: format!(
                            "request body could not be sent: {e:?} (the connection closed, or the host is not in allowed_outbound_hosts)"
                        ),
                    });
                    break;
                }
            }
        }
        if write_error.is_none() {
            OutgoingBody::finish(body, None).map_err(transport_error)?;
        } else {
            drop(body);
        }
        let future = match (started_future, pending) {
            (Some(future), _) => future,
            (None, Some(outgoing)) => {
                outgoing_handler::handle(outgoing, None).map_err(transport_error)?
            }
            (None, None) => return Err(other("the request was already sent".into())),
        };

        // Wait for the answer or the deadline, whichever comes first: this holds even on
        // a host that ignores the request options.
        if !ready_in_time(&future.subscribe(), &deadline) {
            return Err(write_error.unwrap_or_else(|| timeout(deadline_ns)));
        }
        let response = match future.get() {
            Some(Ok(Ok(response))) => response,
            Some(Ok(Err(code))) => return Err(write_error.unwrap_or_else(|| transport_error(code))),
            Some(Err(())) | None => return Err(other("the response was already taken".into())),
        };
        let status = response.status();
        let headers = read_headers(&response.headers());
        let incoming = response
            .consume()
            .map_err(|()| other("response body unavailable".into()))?;
        let body = read_body(&incoming, &deadline, deadline_ns)?;
        drop(IncomingBody::finish(incoming));
        Ok(HttpResponse {
            status,
            headers,
            body,
        })
    }
}

/// The headers neo4j-client reads (`kg_spin::READ_HEADERS`), fetched by name: listing
/// them all (`entries`) costs two host-call transitions plus two per header (the host
/// calls into our allocator for each name and value), a lookup two plus one per value.
fn read_headers(fields: &Fields) -> Vec<(String, String)> {
    kg_spin::named_headers(kg_spin::READ_HEADERS.iter().copied(), |name| {
        fields.get(&name.to_string())
    })
}

/// The body to its end. A read comes first: what has arrived is taken without a wait (a
/// small answer is usually all there with its headers); only an empty read waits, on the
/// stream's one pollable, against the request's deadline.
fn read_body(
    incoming: &IncomingBody,
    deadline: &Pollable,
    deadline_ns: u64,
) -> Result<Vec<u8>, TransportError> {
    let stream = incoming
        .stream()
        .map_err(|()| other("response body stream unavailable".into()))?;
    let mut readable = None;
    let mut body = Vec::new();
    loop {
        match stream.read(64 * 1024) {
            Ok(chunk) if chunk.is_empty() => {
                let readable = readable.get_or_insert_with(|| stream.subscribe());
                if !ready_in_time(readable, deadline) {
                    return Err(timeout(deadline_ns));
                }
            }
            Ok(chunk) => body.extend_from_slice(&chunk),
            Err(StreamError::Closed) => return Ok(body),
            Err(StreamError::LastOperationFailed(e)) => {
                return Err(other(format!(
                    "reading the answer failed: {}",
                    e.to_debug_string()
                )));
            }
        }
    }
}

/// Waits until `pollable` is ready or the `deadline` timer fires; true when it is ready.
fn ready_in_time(pollable: &Pollable, deadline: &Pollable) -> bool {
    poll(&[pollable, deadline]).contains(&0) || pollable.ready()
}

fn timeout(deadline_ns: u64) -> TransportError {
    TransportError {
        kind: TransportErrorKind::Timeout,
        message: format!(
            "the graph did not answer within {} ms",
            deadline_ns / 1_000_000
        ),
    }
}

/// `scheme://authority/path?query` → its parts (`kg_url::request_target`), the scheme
/// as this crate's WASI binding names it.
fn split_url(url: &str) -> Result<(Scheme, kg_url::RequestTarget), TransportError> {
    let target =
        kg_url::request_target(url).ok_or_else(|| other(format!("not an absolute URL: {url}")))?;
    let scheme = match target.scheme.as_str() {
        "http" => Scheme::Http,
        "https" => Scheme::Https,
        other => Scheme::Other(other.to_string()),
    };
    Ok((scheme, target))
}

fn other(message: String) -> TransportError {
    TransportError {
        kind: TransportErrorKind::Other,
        message,
    }
}

/// `kg_spin::is_denied` for the `wasi` crate's ErrorCode (the same WIT type, bound twice).
fn is_denied(code: &ErrorCode) -> bool {
    match code {
        ErrorCode::HttpRequestDenied => true,
        ErrorCode::InternalError(Some(message)) => message.contains("is not permitted"),
        _ => false,
    }
}

fn transport_error(code: ErrorCode) -> TransportError {
    let kind = match &code {
        code if is_denied(code) => TransportErrorKind::Denied,
        ErrorCode::DnsTimeout
        | ErrorCode::ConnectionTimeout
        | ErrorCode::ConnectionReadTimeout
        | ErrorCode::ConnectionWriteTimeout
        | ErrorCode::HttpResponseTimeout => TransportErrorKind::Timeout,
        ErrorCode::DnsError(_)
        | ErrorCode::DestinationNotFound
        | ErrorCode::DestinationUnavailable
        | ErrorCode::DestinationIpProhibited
        | ErrorCode::DestinationIpUnroutable
        | ErrorCode::ConnectionRefused
        | ErrorCode::ConnectionTerminated
        | ErrorCode::ConnectionLimitReached => TransportErrorKind::Connect,
        _ => TransportErrorKind::Other,
    };
    let message = match code {
        code if is_denied(&code) => kg_spin::DENIED.to_string(),
        code => format!("{code:?}"),
    };
    TransportError { kind, message }
}
