//! neo4j-client's transport over Spin outbound HTTP, and a client configured from the
//! Spin variables.

use crate::variable;
use neo4j_client::{
    Auth, Bookmarks, Client, Config, HttpRequest, HttpResponse, Method, Transport, TransportError,
    TransportErrorKind,
};
use spin_sdk::http::conversions::TryIntoOutgoingRequest;
use spin_sdk::http::{ErrorCode, Fields, IncomingResponse, OutgoingRequest, Scheme, SendError};
use std::sync::OnceLock;
use std::time::Duration;

pub struct SpinTransport;

impl Transport for SpinTransport {
    fn send(&self, request: HttpRequest) -> Result<HttpResponse, TransportError> {
        spin_sdk::http::run(send_async(request))
    }
}

/// Sends a request without blocking the component, so several can be in flight at once
/// (drive them with `spin_sdk::http::run`). The response carries the headers any client
/// of this crate reads ([`READ_HEADERS`]).
pub async fn send_async(request: HttpRequest) -> Result<HttpResponse, TransportError> {
    send_reading(request, READ_HEADERS).await
}

/// The response headers the clients sent through this crate read: neo4j-client the
/// content type and the cluster affinity, llm-client the content type (and `retry-after`,
/// which [`head_of`] adds to every non-2xx answer). A header not named here is not in the
/// `HttpResponse` a send returns: a client that starts reading another one must add it.
pub const READ_HEADERS: &[&str] = &["content-type", "neo4j-cluster-affinity"];

/// What llm-client reads of a response (with `retry-after` on a non-2xx answer).
pub const LLM_READ_HEADERS: &[&str] = &["content-type"];

/// [`send_async`], the response carrying only the headers named in `read` (see
/// [`head_of`]).
pub async fn send_reading(
    request: HttpRequest,
    read: &[&str],
) -> Result<HttpResponse, TransportError> {
    let (outgoing, body) = outgoing(request).map_err(transport_error)?;
    let response: IncomingResponse = send_built(outgoing, body).await.map_err(transport_error)?;
    // Read straight from the WASI response: spin-sdk's `Response` would first copy every
    // header into a map of its own, then the body.
    let head = head_of(&response, read);
    let body = response.into_body().await.map_err(|e| TransportError {
        kind: TransportErrorKind::Other,
        message: format!("reading the answer failed: {}", e.to_debug_string()),
    })?;
    Ok(HttpResponse { body, ..head })
}

/// Status and the headers named in `read`, plus `retry-after` on a non-2xx answer,
/// without the body. Each is fetched by name: listing every header (`entries`) costs two
/// host-call transitions plus two per header (the host calls into the component's
/// allocator for each name and each value), a lookup two plus one per value found.
pub(crate) fn head_of(response: &IncomingResponse, read: &[&str]) -> HttpResponse {
    let status = response.status();
    let fields = response.headers();
    HttpResponse {
        status,
        headers: named_headers(headers_to_read(status, read), |name| fields.get(name)),
        body: Vec::new(),
    }
}

/// The values of the headers `names`, each fetched by name with `get` (a WASI
/// `fields.get`, of whichever binding the caller holds), as `(name, value)` pairs: a
/// header's values keep their order, so `HttpResponse::header` finds the same first one.
pub fn named_headers<'a>(
    names: impl IntoIterator<Item = &'a str>,
    get: impl Fn(&str) -> Vec<Vec<u8>>,
) -> Vec<(String, String)> {
    let mut headers = Vec::new();
    for name in names {
        for value in get(name) {
            headers.push((
                name.to_string(),
                String::from_utf8_lossy(&value).into_owned(),
            ));
        }
    }
    headers
}

/// The headers [`head_of`] fetches for an answer with `status`: `read`, and `retry-after`
/// when the answer is not a success (llm-client's backoff reads it only then).
fn headers_to_read<'a>(status: u16, read: &'a [&'a str]) -> impl Iterator<Item = &'a str> {
    let retry = (!(200..300).contains(&status)).then_some("retry-after");
    read.iter().copied().chain(retry)
}

/// A request built for the host with the body spin-sdk writes after starting it.
struct WithLateBody(OutgoingRequest, Vec<u8>);

impl TryIntoOutgoingRequest for WithLateBody {
    type Error = std::convert::Infallible;
    fn try_into_outgoing_request(self) -> Result<(OutgoingRequest, Option<Vec<u8>>), Self::Error> {
        Ok((self.0, Some(self.1)))
    }
}

/// Sends a request built by [`outgoing`], its body first when small (see
/// [`EARLY_BODY_MAX`]); `O` is the whole response or, to read the body as it arrives,
/// `spin_sdk::http::IncomingResponse`.
pub(crate) async fn send_built<O>(request: OutgoingRequest, body: Vec<u8>) -> Result<O, SendError>
where
    O: spin_sdk::http::conversions::TryFromIncomingResponse,
    O::Error: Into<Box<dyn std::error::Error + Send + Sync>> + 'static,
{
    if body.len() <= EARLY_BODY_MAX {
        crate::early_body::write_early(&request, &body).await?;
        spin_sdk::http::send(request).await
    } else {
        spin_sdk::http::send(WithLateBody(request, body)).await
    }
}

/// The WASI request for `request` (in the request's trace), and its body. Built directly
/// (method, scheme, authority, path, one header list): spin-sdk's `Request` parsed the
/// URL with `http`'s parser and kept the headers in a map, only to take both apart again.
pub(crate) fn outgoing(request: HttpRequest) -> Result<(OutgoingRequest, Vec<u8>), SendError> {
    let invalid = |what: String| SendError::RequestConversion(what.into());
    let (scheme, target) = split_url(&request.url)
        .ok_or_else(|| invalid(format!("not an absolute http(s) URL: {}", request.url)))?;
    // Every outbound call joins the request's trace; the clients add their own span's
    // context, anything else (JWKS, embeddings) the innermost open span's.
    let traced = request
        .headers
        .iter()
        .any(|(name, _)| name.eq_ignore_ascii_case("traceparent"));
    let mut headers: Vec<(String, Vec<u8>)> = request
        .headers
        .into_iter()
        .map(|(name, value)| (name, value.into_bytes()))
        .collect();
    if !traced && let Some(parent) = kg_telemetry::current_traceparent() {
        headers.push(("traceparent".into(), parent.into_bytes()));
    }
    let fields = Fields::from_list(&headers)
        .map_err(|e| invalid(format!("invalid request header: {e:?}")))?;
    let outgoing = OutgoingRequest::new(fields);
    let method = match request.method {
        Method::Get => spin_sdk::http::Method::Get,
        Method::Post => spin_sdk::http::Method::Post,
        Method::Delete => spin_sdk::http::Method::Delete,
    };
    let set = |ok: Result<(), ()>, what: &str| ok.map_err(|()| invalid(format!("invalid {what}")));
    set(outgoing.set_method(&method), "method")?;
    set(outgoing.set_scheme(Some(&scheme)), "scheme")?;
    set(outgoing.set_authority(Some(&target.authority)), "authority")?;
    set(
        outgoing.set_path_with_query(Some(&target.path_with_query)),
        "path",
    )?;
    Ok((outgoing, request.body.unwrap_or_default()))
}

/// `http(s)://authority/path?query` → its parts (`kg_url::request_target`: the URL
/// Standard's parsing; the path `/` when there is none).
fn split_url(url: &str) -> Option<(Scheme, kg_url::RequestTarget)> {
    let target = kg_url::request_target(url)?;
    let scheme = match target.scheme.as_str() {
        "http" => Scheme::Http,
        "https" => Scheme::Https,
        _ => return None,
    };
    Some((scheme, target))
}

/// Bodies up to this size are written before the request starts. spin-sdk starts the
/// request and then writes the body, so the host sends headers and body in two TCP
/// writes; with Nagle's algorithm on the host's socket and delayed ACKs on the server's,
/// every POST then waits ~40 ms (measured on Spin 4.0.2: a tool call took 47 ms, 4 ms
/// with the body first). Larger bodies keep spin-sdk's order: the host buffers about
/// 1 MiB before the request starts, and a body beyond that would wait forever.
pub const EARLY_BODY_MAX: usize = 64 * 1024;

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
        origin: kg_url::http_origin("neo4j_origin", &variable("neo4j_origin")?)
            .map_err(|e| e.to_string())?,
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

/// The `maxExecutionTime` every statement carries: three seconds under the request
/// deadline (whole seconds, at least one), so the graph stops a statement itself, and says
/// so, before the host gives up on the answer and leaves it running. Three, not one:
/// Neo4j looks for transactions past their limit every `db.transaction.monitor.check.interval`
/// (2 s by default), so it stops one up to 2 s late (observed on 5.26.30: a 2 s limit
/// stopped a query after 2.7–3.2 s), and the answer needs the last second.
pub fn graph_execution_limit() -> Duration {
    execution_limit_under(graph_request_deadline())
}

/// [`graph_execution_limit`] for a given deadline.
pub fn execution_limit_under(deadline: Duration) -> Duration {
    Duration::from_secs(deadline.as_secs().saturating_sub(3).max(1))
}

/// This instance's bookmark chain. A component instance lives for one incoming request,
/// so the chain is that request's causal session: set by the dispatcher through
/// `use-bookmarks`, advanced by every graph answer, read back through `graph-bookmarks`.
pub fn graph_bookmarks() -> Bookmarks {
    static CHAIN: OnceLock<Bookmarks> = OnceLock::new();
    CHAIN.get_or_init(Bookmarks::default).clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_execution_limit_leaves_neo4js_check_interval_and_a_second() {
        let limit = |ms| execution_limit_under(Duration::from_millis(ms)).as_secs();
        assert_eq!(limit(10_000), 7);
        assert_eq!(limit(5_000), 2);
        assert_eq!(limit(4_000), 1);
        assert_eq!(limit(3_000), 1, "at least a second");
        assert_eq!(limit(500), 1);
    }

    #[test]
    fn retry_after_is_read_from_every_answer_but_a_success() {
        let names = |status| headers_to_read(status, READ_HEADERS).collect::<Vec<_>>();
        for status in [200, 201, 299] {
            assert_eq!(names(status), READ_HEADERS, "{status}");
        }
        for status in [199, 300, 429, 500, 503] {
            assert_eq!(names(status).last(), Some(&"retry-after"), "{status}");
            assert_eq!(names(status).len(), READ_HEADERS.len() + 1, "{status}");
        }
        assert_eq!(
            headers_to_read(200, LLM_READ_HEADERS).collect::<Vec<_>>(),
            ["content-type"]
        );
    }

    #[test]
    fn urls_split_into_scheme_authority_and_path() {
        let parts = |url| {
            split_url(url)
                .map(|(s, t)| (matches!(s, Scheme::Https), t.authority, t.path_with_query))
        };
        let some = |tls, authority: &str, path: &str| Some((tls, authority.into(), path.into()));
        assert_eq!(
            parts("http://127.0.0.1:7474/db/neo4j/query/v2?x=1"),
            some(false, "127.0.0.1:7474", "/db/neo4j/query/v2?x=1")
        );
        assert_eq!(
            parts("HTTPS://api.example/v1/chat"),
            some(true, "api.example", "/v1/chat")
        );
        assert_eq!(parts("https://api.example"), some(true, "api.example", "/"));
        assert_eq!(
            parts("http://[::1]:7474/db/a%20b/query/v2"),
            some(false, "[::1]:7474", "/db/a%20b/query/v2")
        );
        // `http:///path` is the host `path` to the URL Standard (as to browsers).
        for bad in [
            "api.example/v1",
            "ftp://x/y",
            "http://",
            "http://u:p@h/",
            "",
        ] {
            assert_eq!(parts(bad), None, "{bad}");
        }
    }
}
