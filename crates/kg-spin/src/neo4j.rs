//! neo4j-client's transport over Spin outbound HTTP, and a client configured from the
//! Spin variables.

use crate::variable;
use neo4j_client::{
    Auth, Bookmarks, Client, Config, HttpRequest, HttpResponse, Method, Transport, TransportError,
    TransportErrorKind,
};
use spin_sdk::http::{ErrorCode, SendError};
use std::sync::OnceLock;
use std::time::Duration;

pub struct SpinTransport;

impl Transport for SpinTransport {
    fn send(&self, request: HttpRequest) -> Result<HttpResponse, TransportError> {
        spin_sdk::http::run(send_async(request))
    }
}

/// Sends a request without blocking the component, so several can be in flight at once
/// (drive them with `spin_sdk::http::run`).
pub async fn send_async(request: HttpRequest) -> Result<HttpResponse, TransportError> {
    let (builder, body) = outgoing(request);
    let result: Result<spin_sdk::http::Response, SendError> = send_built(builder, body).await;
    match result {
        Ok(response) => Ok(HttpResponse {
            status: *response.status(),
            headers: response
                .headers()
                .map(|(k, v)| (k.to_string(), v.as_str().unwrap_or_default().to_string()))
                .collect(),
            body: response.into_body(),
        }),
        Err(e) => Err(transport_error(e)),
    }
}

/// Sends a request built by [`outgoing`], its body first when small (see
/// [`EARLY_BODY_MAX`]); `O` is the whole response or, to read the body as it arrives,
/// `spin_sdk::http::IncomingResponse`.
pub(crate) async fn send_built<O>(
    mut builder: spin_sdk::http::RequestBuilder,
    body: Vec<u8>,
) -> Result<O, SendError>
where
    O: spin_sdk::http::conversions::TryFromIncomingResponse,
    O::Error: Into<Box<dyn std::error::Error + Send + Sync>> + 'static,
{
    if body.len() <= EARLY_BODY_MAX {
        send_body_first(builder.build(), body).await
    } else {
        builder.body(body);
        spin_sdk::http::send(builder.build()).await
    }
}

/// The Spin request for `request` (in the request's trace), and its body.
pub(crate) fn outgoing(request: HttpRequest) -> (spin_sdk::http::RequestBuilder, Vec<u8>) {
    let method = match request.method {
        Method::Get => spin_sdk::http::Method::Get,
        Method::Post => spin_sdk::http::Method::Post,
        Method::Delete => spin_sdk::http::Method::Delete,
    };
    let mut builder = spin_sdk::http::Request::builder();
    builder.method(method).uri(request.url);
    // Every outbound call joins the request's trace; the clients add their own span's
    // context, anything else (JWKS, embeddings) the innermost open span's.
    let traced = request
        .headers
        .iter()
        .any(|(name, _)| name.eq_ignore_ascii_case("traceparent"));
    for (name, value) in request.headers {
        builder.header(name, value);
    }
    if !traced && let Some(parent) = kg_telemetry::current_traceparent() {
        builder.header("traceparent", parent);
    }
    let body = request.body.unwrap_or_default();
    (builder, body)
}

/// Bodies up to this size are written before the request starts. spin-sdk starts the
/// request and then writes the body, so the host sends headers and body in two TCP
/// writes; with Nagle's algorithm on the host's socket and delayed ACKs on the server's,
/// every POST then waits ~40 ms (measured on Spin 4.0.2: a tool call took 47 ms, 4 ms
/// with the body first). Larger bodies keep spin-sdk's order: the host buffers about
/// 1 MiB before the request starts, and a body beyond that would wait forever.
pub const EARLY_BODY_MAX: usize = 64 * 1024;

/// The request with its whole body written and finished before it is handed to the host.
async fn send_body_first<O>(request: spin_sdk::http::Request, body: Vec<u8>) -> Result<O, SendError>
where
    O: spin_sdk::http::conversions::TryFromIncomingResponse,
    O::Error: Into<Box<dyn std::error::Error + Send + Sync>> + 'static,
{
    use futures::SinkExt;
    use spin_sdk::http::conversions::TryIntoOutgoingRequest;
    let (outgoing, _) = request
        .try_into_outgoing_request()
        .map_err(|e| SendError::RequestConversion(e.into()))?;
    {
        let mut sink = outgoing.take_body();
        if !body.is_empty() {
            sink.send(body).await.map_err(SendError::Io)?;
        }
        // Dropping the sink finishes the body.
    }
    spin_sdk::http::send(outgoing).await
}

/// Whether the host refused the request: `HttpRequestDenied` for an origin outside
/// `allowed_outbound_hosts`, or, from Spin's deny adapter for a dependency that was not
/// granted outbound HTTP, an internal error saying the interface "is not permitted".
pub fn is_denied(code: &ErrorCode) -> bool {
    match code {
        ErrorCode::HttpRequestDenied => true,
        ErrorCode::InternalError(Some(message)) => message.contains("is not permitted"),
        _ => false,
    }
}

/// What a request the host refused means, in the words of the manifest.
pub const DENIED: &str = "the host denied the request: its origin is not in allowed_outbound_hosts, or this component was not granted outbound HTTP";

pub(crate) fn transport_error(e: SendError) -> TransportError {
    let kind = match &e {
        SendError::Http(code) if is_denied(code) => TransportErrorKind::Denied,
        SendError::Http(code) => match code {
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
            | ErrorCode::ConnectionLimitReached => TransportErrorKind::Connect,
            // The connection closed after the request may have been sent: not `Connect`,
            // which promises nothing reached the graph (the action executor relies on it).
            _ => TransportErrorKind::Other,
        },
        _ => TransportErrorKind::Other,
    };
    let message = match e {
        // spin-sdk writes the body after starting the request; a request the host refused
        // (or a connection that dropped) only shows up as a closed body stream.
        SendError::Io(io) => format!(
            "request body could not be sent ({io}): the connection closed, or the host is not in allowed_outbound_hosts"
        ),
        // Spin answers a refused request with this code before anything is sent.
        SendError::Http(code) if is_denied(&code) => DENIED.to_string(),
        SendError::Http(code) => crate::http_error::describe(&code),
        other => other.to_string(),
    };
    TransportError { kind, message }
}

/// Whose credentials a client uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GraphUser {
    /// `neo4j_user`/`neo4j_password`, or `neo4j_token`: everything that writes.
    Writer,
    /// `neo4j_reader_user`/`neo4j_reader_password` when set (a user with Neo4j's `reader`
    /// role), else the writer's: the query tools, which only ever read.
    Reader,
}

/// An optional variable: empty when it is not declared or not set.
fn optional(name: &str) -> String {
    variable(name).unwrap_or_default()
}

/// Where the graph is and how to authenticate, from the `neo4j_*` variables. A non-empty
/// `neo4j_token` is sent as a bearer token, as given (Neo4j SSO: the identity provider's
/// JWT, not re-encoded); else a non-empty user authenticates with basic auth.
pub fn graph_config(user: GraphUser) -> Result<Config, String> {
    let reader = optional("neo4j_reader_user");
    let auth = if user == GraphUser::Reader && !reader.is_empty() {
        Auth::from_settings(&reader, &optional("neo4j_reader_password"), "")
            .map_err(|e| format!("variable `neo4j_reader_user`: {e}"))?
    } else {
        Auth::from_settings(
            &variable("neo4j_user")?,
            &variable("neo4j_password")?,
            &optional("neo4j_token"),
        )
        .map_err(|e| format!("variable `neo4j_token`: {e}"))?
    };
    Ok(Config {
        origin: variable("neo4j_origin")?,
        database: variable("neo4j_database")?,
        auth,
    })
}

/// A client for the graph named by the `neo4j_*` variables, with the writer's
/// credentials, this request's bookmark chain and the execution limit.
pub fn graph_client() -> Result<Client<SpinTransport>, String> {
    Ok(Client::new(graph_config(GraphUser::Writer)?, SpinTransport)
        .with_bookmarks(graph_bookmarks())
        .with_max_execution_time(Some(graph_execution_limit())))
}

/// How long one graph request may take from this host's side: `neo4j_query_timeout_ms`
/// (10 s by default).
pub fn graph_request_deadline() -> Duration {
    match crate::number_variable("neo4j_query_timeout_ms", 0) {
        0 => Duration::from_secs(10),
        ms => Duration::from_millis(ms),
    }
}

/// The `maxExecutionTime` every statement carries: a second under the request deadline
/// (whole seconds, at least one), so the graph stops a statement itself, and says so,
/// before the host gives up on the answer and leaves it running.
pub fn graph_execution_limit() -> Duration {
    Duration::from_secs(graph_request_deadline().as_secs().saturating_sub(1).max(1))
}

/// This instance's bookmark chain. A component instance lives for one incoming request,
/// so the chain is that request's causal session: set by the dispatcher through
/// `use-bookmarks`, advanced by every graph answer, read back through `graph-bookmarks`.
pub fn graph_bookmarks() -> Bookmarks {
    static CHAIN: OnceLock<Bookmarks> = OnceLock::new();
    CHAIN.get_or_init(Bookmarks::default).clone()
}
