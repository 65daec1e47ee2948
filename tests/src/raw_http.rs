//! HTTP/1.1 over a bare TCP socket, for requests no HTTP client would send (malformed
//! chunking, bodies shorter than their `Content-Length`, arbitrary bytes) and for reading
//! exactly what the server answers, or that it answered nothing.

use anyhow::{Context, Result, bail};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// How long to wait for an answer before giving up on it.
pub const READ_TIMEOUT: Duration = Duration::from_secs(20);

/// What came back on the connection.
#[derive(Debug, Clone)]
pub struct RawResponse {
    /// `None` when the server closed the connection (or timed out) without a status line.
    pub status: Option<u16>,
    /// Header names lower-cased, in order.
    pub headers: Vec<(String, String)>,
    /// The body, de-chunked when the response was chunked.
    pub body: Vec<u8>,
    /// Every byte received, for messages.
    pub raw: Vec<u8>,
    pub timed_out: bool,
}

impl RawResponse {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// The body as JSON, if it is.
    pub fn json(&self) -> Option<serde_json::Value> {
        serde_json::from_slice(&self.body).ok()
    }

    /// Everything received, lossily as text (for assertion messages).
    pub fn describe(&self) -> String {
        let raw = String::from_utf8_lossy(&self.raw);
        let cut: String = raw.chars().take(600).collect();
        format!(
            "status {:?}, timed out {}, {} bytes: {cut}",
            self.status,
            self.timed_out,
            self.raw.len()
        )
    }
}

/// `host:port` of a base URL such as `http://127.0.0.1:3000`.
pub fn authority(base_url: &str) -> Result<String> {
    let rest = base_url
        .split_once("://")
        .map_or(base_url, |(_, rest)| rest)
        .trim_end_matches('/');
    let authority = rest.split('/').next().unwrap_or(rest);
    if authority.is_empty() {
        bail!("no authority in {base_url}");
    }
    Ok(authority.to_string())
}

/// A request head: `method path HTTP/1.1`, `Host`, `Connection: close`, then `headers`,
/// then the blank line. The body (if any) is for the caller to append.
pub fn head(method: &str, path: &str, host: &str, headers: &[(&str, &str)]) -> Vec<u8> {
    let mut all = vec![("connection", "close")];
    all.extend_from_slice(headers);
    keep_alive_head(method, path, host, &all)
}

/// Sends `bytes` on a new connection to `base_url`'s host; with `half_close`, shuts the
/// write side afterwards (the server then sees the end of the stream). Reads the answer
/// until the server closes, a whole response has arrived, or [`READ_TIMEOUT`].
pub async fn exchange(base_url: &str, bytes: &[u8], half_close: bool) -> Result<RawResponse> {
    let mut connection = Connection::open(base_url).await?;
    // A server may answer (and close) before taking every byte: a failed write is not
    // an error here, what comes back is what the test judges.
    let _ = connection.send(bytes).await;
    if half_close {
        let _ = connection.stream.shutdown().await;
    }
    connection.response().await
}

/// One kept-alive connection for several requests in turn (heads without `Connection:
/// close`: build them with [`keep_alive_head`]).
pub struct Connection {
    stream: TcpStream,
    /// The bytes of the response being read. A caller waits for each answer before it
    /// sends the next request, so nothing of a later response arrives early; `response`
    /// takes them all.
    pending: Vec<u8>,
}

impl Connection {
    pub async fn open(base_url: &str) -> Result<Connection> {
        let address = authority(base_url)?;
        let stream = TcpStream::connect(&address)
            .await
            .with_context(|| format!("connecting to {address}"))?;
        Ok(Connection {
            stream,
            pending: Vec::new(),
        })
    }

    pub async fn send(&mut self, bytes: &[u8]) -> Result<()> {
        self.stream.write_all(bytes).await?;
        Ok(self.stream.flush().await?)
    }

    /// The next response: read until it is whole, the server closes (then `status` is
    /// `None` if nothing came), or [`READ_TIMEOUT`].
    pub async fn response(&mut self) -> Result<RawResponse> {
        let mut buffer = [0u8; 16 * 1024];
        let deadline = tokio::time::Instant::now() + READ_TIMEOUT;
        let mut timed_out = false;
        loop {
            if parse(&self.pending).is_some_and(|(_, complete)| complete) {
                break;
            }
            match tokio::time::timeout_at(deadline, self.stream.read(&mut buffer)).await {
                Err(_) => {
                    timed_out = true;
                    break;
                }
                // A reset after the answer (the server closing with our bytes unread) ends
                // the read like a close.
                Ok(Ok(0)) | Ok(Err(_)) => break,
                Ok(Ok(n)) => self.pending.extend_from_slice(&buffer[..n]),
            }
        }
        let (parsed, _) = parse(&self.pending).unwrap_or_default();
        let raw = std::mem::take(&mut self.pending);
        Ok(RawResponse {
            status: parsed.status,
            headers: parsed.headers,
            body: parsed.body,
            raw,
            timed_out,
        })
    }
}

/// A request head like [`head`]'s, without `Connection: close`.
pub fn keep_alive_head(method: &str, path: &str, host: &str, headers: &[(&str, &str)]) -> Vec<u8> {
    let mut text = format!("{method} {path} HTTP/1.1\r\nhost: {host}\r\n");
    for (name, value) in headers {
        text.push_str(&format!("{name}: {value}\r\n"));
    }
    text.push_str("\r\n");
    text.into_bytes()
}

#[derive(Default)]
struct Parsed {
    status: Option<u16>,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

/// The response in `raw` so far, and whether it is complete (by `Content-Length` or the
/// last chunk); `None` before the head has arrived. Interim (1xx) responses are skipped.
fn parse(raw: &[u8]) -> Option<(Parsed, bool)> {
    let mut raw = raw;
    loop {
        let end = raw.windows(4).position(|w| w == b"\r\n\r\n")?;
        let head = String::from_utf8_lossy(&raw[..end]).into_owned();
        let rest = &raw[end + 4..];
        let mut lines = head.split("\r\n");
        let status = lines
            .next()
            .and_then(|line| line.split_whitespace().nth(1))
            .and_then(|code| code.parse::<u16>().ok());
        if status.is_some_and(|s| (100..200).contains(&s)) {
            raw = rest;
            continue;
        }
        let headers: Vec<(String, String)> = lines
            .filter_map(|line| line.split_once(':'))
            .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
            .collect();
        let find = |name: &str| {
            headers
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.clone())
        };
        let chunked = find("transfer-encoding").is_some_and(|v| v.contains("chunked"));
        let (body, complete) = if chunked {
            dechunk(rest)
        } else if let Some(length) = find("content-length").and_then(|v| v.parse::<usize>().ok()) {
            let body = rest[..rest.len().min(length)].to_vec();
            let complete = body.len() == length;
            (body, complete)
        } else {
            (rest.to_vec(), false)
        };
        return Some((
            Parsed {
                status,
                headers,
                body,
            },
            complete,
        ));
    }
}

/// The data of a chunked body so far, and whether its last chunk has arrived.
fn dechunk(mut rest: &[u8]) -> (Vec<u8>, bool) {
    let mut body = Vec::new();
    loop {
        let Some(line_end) = rest.windows(2).position(|w| w == b"\r\n") else {
            return (body, false);
        };
        let size_text = String::from_utf8_lossy(&rest[..line_end]);
        let size_text = size_text.split(';').next().unwrap_or("").trim();
        let Ok(size) = usize::from_str_radix(size_text, 16) else {
            return (body, false);
        };
        rest = &rest[line_end + 2..];
        if size == 0 {
            return (body, true);
        }
        if rest.len() < size {
            body.extend_from_slice(rest);
            return (body, false);
        }
        body.extend_from_slice(&rest[..size]);
        rest = rest.get(size + 2..).unwrap_or_default();
    }
}

/// Marks of a leaked panic or internal type in a response: a backtrace, a panic message,
/// Rust module paths or the host's error types. (Chosen so that no echo of a test's own
/// input can contain them.)
pub const LEAK_MARKERS: [&str; 12] = [
    "stack backtrace",
    "panicked at",
    "rust_begin_unwind",
    "RUST_BACKTRACE",
    "core::",
    "std::",
    "alloc::",
    "spin_sdk",
    "wasmtime",
    "wit_bindgen",
    "anyhow",
    "ErrorCode",
];

/// The first leak marker in `text`, if any.
pub fn leak(text: &str) -> Option<&'static str> {
    LEAK_MARKERS.into_iter().find(|m| text.contains(m))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_fixed_and_chunked_responses() {
        let (p, complete) =
            parse(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 2\r\n\r\n{}").unwrap();
        assert_eq!(
            (p.status, p.body.as_slice(), complete),
            (Some(400), &b"{}"[..], true)
        );
        let (p, complete) = parse(
            b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n1\r\nc\r\n0\r\n\r\n",
        )
        .unwrap();
        assert_eq!(
            (p.status, p.body.as_slice(), complete),
            (Some(200), &b"abc"[..], true)
        );
        assert!(parse(b"HTTP/1.1 200 OK\r\n").is_none());
    }

    #[test]
    fn authority_of_a_base_url() {
        assert_eq!(
            authority("http://127.0.0.1:3000").unwrap(),
            "127.0.0.1:3000"
        );
        assert_eq!(
            authority("http://127.0.0.1:3000/").unwrap(),
            "127.0.0.1:3000"
        );
    }
}
