//! The components' stdout and stderr, written a line at a time.
//!
//! A guest's `eprintln!` of a `serde_json::Value` reaches the host as one write per JSON
//! token (Rust's stderr is unbuffered and `Display` for a value writes it piecewise), and
//! wasmtime-wasi's inherited stdio makes each write a `write(2)`: the dispatcher's one log
//! line per request was 67 system calls (about 0.2 ms of a 0.5 ms `/health/live`), and
//! lines of requests running at the same time interleaved mid-line. Here writes collect
//! per request and stream until a newline; whole lines go out in one `write(2)`, as Spin
//! writes its components' output a line at a time. A guest's `flush` does not force out
//! a partial line (Rust flushes after every piece); what is left without a newline goes
//! out when the request's store is dropped, or once it exceeds `MAX_PENDING`.

use bytes::Bytes;
use std::future::Future;
use std::io::Write;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use wasmtime_wasi::cli::{IsTerminal, StdoutStream};
use wasmtime_wasi::p2::{OutputStream, Pollable, StreamResult};

/// A partial line longer than this is written out without waiting for its newline.
const MAX_PENDING: usize = 64 * 1024;

pub enum Target {
    Stdout,
    Stderr,
    /// Each write kept apart, to test what goes out in one write.
    #[cfg(test)]
    Memory(Arc<Mutex<Vec<Vec<u8>>>>),
}

impl Target {
    fn write(&self, bytes: &[u8]) {
        // Like wasmtime-wasi's inherited stdio, a failed write of the guest's output is
        // not the guest's error to handle: it is dropped.
        let _ = match self {
            Target::Stdout => std::io::stdout().lock().write_all(bytes),
            Target::Stderr => std::io::stderr().lock().write_all(bytes),
            #[cfg(test)]
            Target::Memory(writes) => {
                writes.lock().unwrap().push(bytes.to_vec());
                Ok(())
            }
        };
    }
}

/// One request's stdout or stderr: every stream the guest opens on it shares the pending
/// partial line.
pub struct LineBuffered(Arc<Pending>);

impl LineBuffered {
    pub fn new(target: Target) -> Self {
        LineBuffered(Arc::new(Pending {
            target,
            bytes: Mutex::new(Vec::new()),
        }))
    }
}

struct Pending {
    target: Target,
    bytes: Mutex<Vec<u8>>,
}

impl Pending {
    fn write(&self, bytes: &[u8]) {
        let mut pending = self.bytes.lock().unwrap_or_else(|p| p.into_inner());
        if pending.is_empty() && bytes.ends_with(b"\n") {
            return self.target.write(bytes);
        }
        pending.extend_from_slice(bytes);
        let complete = match pending.iter().rposition(|&b| b == b'\n') {
            Some(newline) => newline + 1,
            None if pending.len() > MAX_PENDING => pending.len(),
            None => return,
        };
        self.target.write(&pending[..complete]);
        pending.drain(..complete);
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        let pending = self.bytes.get_mut().unwrap_or_else(|p| p.into_inner());
        if !pending.is_empty() {
            self.target.write(pending);
        }
    }
}

impl IsTerminal for LineBuffered {
    fn is_terminal(&self) -> bool {
        match self.0.target {
            Target::Stdout => std::io::IsTerminal::is_terminal(&std::io::stdout()),
            Target::Stderr => std::io::IsTerminal::is_terminal(&std::io::stderr()),
            #[cfg(test)]
            Target::Memory(_) => false,
        }
    }
}

impl StdoutStream for LineBuffered {
    fn p2_stream(&self) -> Box<dyn OutputStream> {
        Box::new(Stream(self.0.clone()))
    }

    fn async_stream(&self) -> Box<dyn tokio::io::AsyncWrite + Send + Sync> {
        Box::new(Stream(self.0.clone()))
    }
}

/// A stream the guest opened (`get-stdout`, `get-stderr`).
struct Stream(Arc<Pending>);

impl OutputStream for Stream {
    fn write(&mut self, bytes: Bytes) -> StreamResult<()> {
        self.0.write(&bytes);
        Ok(())
    }

    fn flush(&mut self) -> StreamResult<()> {
        Ok(())
    }

    fn check_write(&mut self) -> StreamResult<usize> {
        Ok(1024 * 1024)
    }
}

// Always ready (`Pollable` is an `async_trait`; its method spelled out).
impl Pollable for Stream {
    fn ready<'a, 'b>(&'a mut self) -> Pin<Box<dyn Future<Output = ()> + Send + 'b>>
    where
        'a: 'b,
        Self: 'b,
    {
        Box::pin(std::future::ready(()))
    }
}

impl tokio::io::AsyncWrite for Stream {
    fn poll_write(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        self.0.write(buf);
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(pieces: &[&str]) -> Vec<String> {
        let writes = Arc::new(Mutex::new(Vec::new()));
        {
            let stdio = LineBuffered::new(Target::Memory(writes.clone()));
            // Two streams of one request, as a guest gets from two `get-stderr` calls.
            let mut streams = [stdio.p2_stream(), stdio.p2_stream()];
            for (i, piece) in pieces.iter().enumerate() {
                let stream = &mut streams[i % 2];
                stream.write(Bytes::from(piece.to_string())).unwrap();
                stream.flush().unwrap();
            }
        }
        let writes = writes.lock().unwrap();
        writes
            .iter()
            .map(|w| String::from_utf8_lossy(w).into_owned())
            .collect()
    }

    #[test]
    fn pieces_of_a_line_go_out_as_one_write() {
        assert_eq!(
            written(&["{", "\"a\"", ":", "1", "}", "\n", "{}\n"]),
            ["{\"a\":1}\n", "{}\n"]
        );
    }

    #[test]
    fn a_write_with_several_lines_keeps_its_unfinished_tail_for_later() {
        assert_eq!(written(&["a\nb\nc", "d\n"]), ["a\nb\n", "cd\n"]);
    }

    #[test]
    fn a_partial_line_goes_out_when_the_request_ends() {
        assert_eq!(written(&["no newline"]), ["no newline"]);
    }

    #[test]
    fn a_partial_line_past_the_bound_goes_out_at_once() {
        let long = "x".repeat(MAX_PENDING + 1);
        assert_eq!(written(&[&long, "y"]), [long.clone(), "y".to_string()]);
    }
}
