//! Outbound HTTP from components (`wasi:http/outgoing-handler`), with keep-alive
//! connections pooled per origin as Spin 3.4+ does.
//!
//! Without the pool (`--outbound-pool off`) every request goes through
//! wasmtime-wasi-http's `default_send_request`: a new connection per request, closed with
//! the response. With it, the same connect, TLS and HTTP/1.1 steps and the same error
//! codes, but a connection whose response was read to its end goes back to a bounded
//! per-origin idle list (most recently used first, dropped after the idle timeout) and
//! carries the next request to that origin.
//!
//! A pooled connection can turn out dead (the server closed it, or was killed). A request
//! is retried on another connection only when hyper hands it back unsent — not one byte of
//! it was written, so the server cannot have seen it. Once anything was written, the error
//! is reported as it comes (`HttpProtocolError` and the like, never a connect error), since
//! the request may have reached the server.

use hyper::client::conn::http1::SendRequest;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::{Duration, Instant};
use tokio::net::TcpStream;
use tokio::time::timeout;
use wasmtime_wasi_http::bindings::http::types::{DnsErrorPayload, ErrorCode};
use wasmtime_wasi_http::body::HyperOutgoingBody;
use wasmtime_wasi_http::hyper_request_error;
use wasmtime_wasi_http::io::TokioIo;
use wasmtime_wasi_http::types::{
    HostFutureIncomingResponse, IncomingResponse, OutgoingRequestConfig, default_send_request,
};

/// Bounds of the pool.
#[derive(Debug, Clone, Copy)]
pub struct PoolSettings {
    /// Idle connections kept per origin (scheme, host, port); more are closed.
    pub max_idle_per_origin: usize,
    /// An idle connection unused for this long is closed.
    pub idle_timeout: Duration,
}

/// How components' outbound requests are sent; one per devhost, shared by all components.
pub struct Outbound {
    pool: Option<Arc<Pool>>,
}

impl Outbound {
    /// `None`: a new connection per request.
    pub fn new(pool: Option<PoolSettings>) -> Outbound {
        Outbound {
            pool: pool.map(|settings| {
                Arc::new(Pool {
                    settings,
                    idle: Mutex::new(HashMap::new()),
                    sweeper: OnceLock::new(),
                    tls: OnceLock::new(),
                })
            }),
        }
    }

    /// Sends a request already checked against the component's allowed hosts.
    pub fn send(
        &self,
        request: hyper::Request<HyperOutgoingBody>,
        config: OutgoingRequestConfig,
    ) -> HostFutureIncomingResponse {
        match &self.pool {
            None => default_send_request(request, config),
            Some(pool) => {
                let pool = pool.clone();
                HostFutureIncomingResponse::pending(wasmtime_wasi::runtime::spawn(async move {
                    Ok(pool.send(request, config).await)
                }))
            }
        }
    }
}

/// Scheme and `host:port` (default port filled in).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Origin {
    tls: bool,
    authority: String,
}

struct Idle {
    sender: SendRequest<HyperOutgoingBody>,
    since: Instant,
}

struct Pool {
    settings: PoolSettings,
    idle: Mutex<HashMap<Origin, Vec<Idle>>>,
    sweeper: OnceLock<()>,
    tls: OnceLock<tokio_rustls::TlsConnector>,
}

impl Pool {
    async fn send(
        self: Arc<Self>,
        mut request: hyper::Request<HyperOutgoingBody>,
        config: OutgoingRequestConfig,
    ) -> Result<IncomingResponse, ErrorCode> {
        let uri = request.uri();
        let Some(authority) = uri.authority() else {
            return Err(ErrorCode::HttpRequestUriInvalid);
        };
        let origin = Origin {
            tls: config.use_tls,
            authority: if authority.port().is_some() {
                authority.to_string()
            } else {
                format!("{authority}:{}", if config.use_tls { 443 } else { 80 })
            },
        };
        let host = uri.host().unwrap_or_default().to_string();
        // The request line carries the path only (the authority is in the Host header,
        // which wasmtime-wasi-http has set), as in default_send_request.
        *request.uri_mut() = hyper::Uri::builder()
            .path_and_query(request.uri().path_and_query().map_or("/", |p| p.as_str()))
            .build()
            .map_err(|_| ErrorCode::HttpRequestUriInvalid)?;

        while let Some(mut sender) = self.checkout(&origin) {
            match timeout(config.first_byte_timeout, sender.try_send_request(request)).await {
                Err(_) => return Err(ErrorCode::ConnectionReadTimeout),
                Ok(Ok(response)) => return Ok(self.received(origin, sender, response, &config)),
                Ok(Err(mut e)) => match e.take_message() {
                    // The connection closed before a byte of this request was written: the
                    // server never saw it, so the next connection may carry it.
                    Some(unsent) => request = unsent,
                    // Written (maybe in part): it may have reached the server.
                    None => return Err(hyper_request_error(e.into_error())),
                },
            }
        }

        let mut sender = self.connect(&origin, &host, &config).await?;
        let response = timeout(config.first_byte_timeout, sender.send_request(request))
            .await
            .map_err(|_| ErrorCode::ConnectionReadTimeout)?
            .map_err(hyper_request_error)?;
        Ok(self.received(origin, sender, response, &config))
    }

    /// The response for the guest; its connection returns to the pool once the body has
    /// been read to its end (it closes instead if the guest drops the body early or the
    /// server said `Connection: close`).
    fn received(
        self: &Arc<Self>,
        origin: Origin,
        mut sender: SendRequest<HyperOutgoingBody>,
        response: hyper::Response<hyper::body::Incoming>,
        config: &OutgoingRequestConfig,
    ) -> IncomingResponse {
        let pool = Arc::downgrade(self);
        tokio::spawn(async move {
            if sender.ready().await.is_ok()
                && let Some(pool) = pool.upgrade()
            {
                pool.put(origin, sender);
            }
        });
        IncomingResponse {
            resp: response.map(|body| {
                use http_body_util::BodyExt;
                body.map_err(hyper_request_error).boxed_unsync()
            }),
            // The connection's task is not tied to this response: it outlives it.
            worker: None,
            between_bytes_timeout: config.between_bytes_timeout,
        }
    }

    /// The most recently used live idle connection to `origin`.
    fn checkout(&self, origin: &Origin) -> Option<SendRequest<HyperOutgoingBody>> {
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        let list = idle.get_mut(origin)?;
        while let Some(connection) = list.pop() {
            if connection.since.elapsed() < self.settings.idle_timeout
                && connection.sender.is_ready()
                && !connection.sender.is_closed()
            {
                return Some(connection.sender);
            }
        }
        None
    }

    fn put(self: &Arc<Self>, origin: Origin, sender: SendRequest<HyperOutgoingBody>) {
        if self.settings.max_idle_per_origin == 0 || self.settings.idle_timeout.is_zero() {
            return;
        }
        {
            let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
            let list = idle.entry(origin).or_default();
            list.retain(|c| !c.sender.is_closed());
            if list.len() >= self.settings.max_idle_per_origin {
                // Dropping the last handle closes the connection.
                return;
            }
            list.push(Idle {
                sender,
                since: Instant::now(),
            });
        }
        self.sweeper.get_or_init(|| {
            let pool: Weak<Pool> = Arc::downgrade(self);
            let period = (self.settings.idle_timeout / 4)
                .clamp(Duration::from_millis(50), Duration::from_secs(5));
            tokio::spawn(async move {
                let mut tick = tokio::time::interval(period);
                loop {
                    tick.tick().await;
                    let Some(pool) = pool.upgrade() else { break };
                    pool.sweep();
                }
            });
        });
    }

    /// Closes idle connections past the idle timeout or closed by the server.
    fn sweep(&self) {
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        for list in idle.values_mut() {
            list.retain(|c| {
                c.since.elapsed() < self.settings.idle_timeout && !c.sender.is_closed()
            });
        }
        idle.retain(|_, list| !list.is_empty());
    }

    /// A new connection, with default_send_request's steps, timeouts and error codes.
    async fn connect(
        &self,
        origin: &Origin,
        host: &str,
        config: &OutgoingRequestConfig,
    ) -> Result<SendRequest<HyperOutgoingBody>, ErrorCode> {
        let tcp = timeout(
            config.connect_timeout,
            TcpStream::connect(&origin.authority),
        )
        .await
        .map_err(|_| ErrorCode::ConnectionTimeout)?
        .map_err(connect_error)?;
        if origin.tls {
            let host = host.trim_start_matches('[').trim_end_matches(']');
            let domain = rustls::pki_types::ServerName::try_from(host)
                .map_err(|_| dns_error("invalid dns name"))?
                .to_owned();
            let stream = self
                .tls
                .get_or_init(|| {
                    let roots = rustls::RootCertStore {
                        roots: webpki_roots::TLS_SERVER_ROOTS.into(),
                    };
                    let tls = rustls::ClientConfig::builder()
                        .with_root_certificates(roots)
                        .with_no_client_auth();
                    tokio_rustls::TlsConnector::from(Arc::new(tls))
                })
                .connect(domain, tcp)
                .await
                .map_err(|_| ErrorCode::TlsProtocolError)?;
            handshake(TokioIo::new(stream), config).await
        } else {
            handshake(TokioIo::new(tcp), config).await
        }
    }
}

async fn handshake<I>(
    io: I,
    config: &OutgoingRequestConfig,
) -> Result<SendRequest<HyperOutgoingBody>, ErrorCode>
where
    I: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    let (sender, connection) = timeout(
        config.connect_timeout,
        hyper::client::conn::http1::handshake(io),
    )
    .await
    .map_err(|_| ErrorCode::ConnectionTimeout)?
    .map_err(hyper_request_error)?;
    // Drives the connection until it closes; its errors reach the request or the body.
    tokio::spawn(async move {
        let _ = connection.await;
    });
    Ok(sender)
}

/// As default_send_request maps a failed TCP connect.
fn connect_error(e: std::io::Error) -> ErrorCode {
    if e.kind() == std::io::ErrorKind::AddrNotAvailable
        || e.to_string()
            .starts_with("failed to lookup address information")
    {
        dns_error("address not available")
    } else {
        ErrorCode::ConnectionRefused
    }
}

fn dns_error(rcode: &str) -> ErrorCode {
    ErrorCode::DnsError(DnsErrorPayload {
        rcode: Some(rcode.to_string()),
        info_code: Some(0),
    })
}
