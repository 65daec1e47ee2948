//! A component's handler run by the connection's own task instead of a task of its own.
//!
//! With a task per handler, every hand-over between the guest and hyper crossed tasks: the
//! guest set its response (or wrote a body frame) and woke the connection's task, which
//! tokio put in the worker's LIFO slot, where it waited until the handler's task stopped
//! running (other workers cannot steal that slot). `GET /health/live` spent about half its
//! handler time there ("response queued" in `--server-timing`).
//!
//! Here the connection's task polls the handler while it waits for the response, then the
//! response body polls it again before each frame, so a hand-over is a plain return.
//! hyper drops the body when the client goes away or once the body has ended; a handler
//! still running then is moved to a task of its own and finishes there, as it did before
//! (it may still have state to write).
//!
//! What an ended handler leaves (its store: the instance, its memory back to the pool, the
//! pool slot) is freed on a task of its own once hyper is done with the response, not in
//! the poll that ended the handler: freeing an instance takes 0.06–0.15 ms (its memories
//! and tables reset for the pool), which the response's bytes would otherwise wait for.
//! Spin frees it on the handler's own task, after the response too.

use anyhow::Result;
use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::body::{Body, Frame, SizeHint};
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::task::{Context, Poll};
use wasmtime_wasi_http::bindings::http::types::ErrorCode;
use wasmtime_wasi_http::body::HyperOutgoingBody;

/// What a handler leaves behind when it ends (its store and pool slot), dropped later.
pub type Remains = Box<dyn Send>;

type Handler = Pin<Box<dyn Future<Output = (Result<()>, Remains)> + Send>>;

/// The handler of one request and, once it ends, how it ended and what it left.
pub struct Running {
    component: String,
    handler: Option<Handler>,
    ended: Option<Result<()>>,
    remains: Option<Remains>,
}

impl Running {
    pub fn new(
        component: &str,
        handler: impl Future<Output = (Result<()>, Remains)> + Send + 'static,
    ) -> Self {
        Running {
            component: component.to_string(),
            handler: Some(Box::pin(handler)),
            ended: None,
            remains: None,
        }
    }

    /// Runs the handler until it must wait or ends; true once it has ended. A panic in
    /// the host's side of the handler ends it with an error instead of taking the
    /// connection's task down (as a task of its own would have).
    pub fn poll_handler(&mut self, cx: &mut Context<'_>) -> bool {
        if let Some(handler) = &mut self.handler {
            let polled = std::panic::catch_unwind(AssertUnwindSafe(|| handler.as_mut().poll(cx)));
            let ended = match polled {
                Ok(Poll::Pending) => None,
                Ok(Poll::Ready((result, remains))) => {
                    self.remains = Some(remains);
                    Some(result)
                }
                Err(panic) => Some(Err(anyhow::anyhow!(
                    "devhost panicked running the handler: {}",
                    panic_message(panic.as_ref())
                ))),
            };
            if ended.is_some() {
                self.handler = None;
                self.ended = ended;
            }
        }
        self.handler.is_none()
    }

    /// How the handler ended (once, for the error of a request without a response).
    pub fn take_result(&mut self) -> Option<Result<()>> {
        self.ended.take()
    }

    /// The response's body, which runs the rest of the handler as hyper reads it.
    pub fn into_body(mut self, body: HyperOutgoingBody) -> HyperOutgoingBody {
        if let Some(Err(e)) = self.ended.take() {
            log_late_failure(&self.component, &e);
        }
        DrivenBody {
            body,
            running: self,
        }
        .boxed_unsync()
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(remains) = self.remains.take() {
            tokio::task::spawn(async move { drop(remains) });
        }
        let Some(handler) = self.handler.take() else {
            return;
        };
        let component = std::mem::take(&mut self.component);
        // Dropping a handler mid-way would cancel the guest between two host calls; it
        // finishes on its own task instead (its writes to a gone body fail, as in Spin).
        tokio::task::spawn(async move {
            if let (Err(e), _) = handler.await {
                log_late_failure(&component, &e);
            }
        });
    }
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> &str {
    panic
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(no message)")
}

fn log_late_failure(component: &str, error: &anyhow::Error) {
    eprintln!("devhost: component `{component}` failed after setting its response: {error:?}");
}

/// The guest's response body, with its handler driven before each frame is read.
struct DrivenBody {
    body: HyperOutgoingBody,
    running: Running,
}

impl Body for DrivenBody {
    type Data = Bytes;
    type Error = ErrorCode;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, ErrorCode>>> {
        let me = self.get_mut();
        if me.running.poll_handler(cx)
            && let Some(Err(e)) = me.running.take_result()
        {
            log_late_failure(&me.running.component, &e);
        }
        Pin::new(&mut me.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    type Frames = tokio::sync::mpsc::Sender<Result<Frame<Bytes>, ErrorCode>>;

    /// A body fed by a bounded channel, like wasmtime-wasi-http's outgoing body.
    struct ChannelBody(tokio::sync::mpsc::Receiver<Result<Frame<Bytes>, ErrorCode>>);

    impl Body for ChannelBody {
        type Data = Bytes;
        type Error = ErrorCode;
        fn poll_frame(
            mut self: Pin<&mut Self>,
            cx: &mut Context<'_>,
        ) -> Poll<Option<Result<Frame<Bytes>, ErrorCode>>> {
            self.0.poll_recv(cx)
        }
    }

    fn channel_body() -> (Frames, HyperOutgoingBody) {
        let (sender, receiver) = tokio::sync::mpsc::channel(1);
        (sender, ChannelBody(receiver).boxed_unsync())
    }

    /// A handler's end with nothing left behind.
    fn ended(result: Result<()>) -> (Result<()>, Remains) {
        (result, Box::new(()))
    }

    /// Left behind by a handler: says when it is dropped.
    struct Remnant(Option<tokio::sync::oneshot::Sender<()>>);

    impl Drop for Remnant {
        fn drop(&mut self) {
            if let Some(dropped) = self.0.take() {
                let _ = dropped.send(());
            }
        }
    }

    #[tokio::test]
    async fn the_body_runs_the_handler_that_writes_it() {
        let (sender, body) = channel_body();
        let running = Running::new("test", async move {
            for chunk in ["a", "b", "c"] {
                if sender
                    .send(Ok(Frame::data(Bytes::from(chunk))))
                    .await
                    .is_err()
                {
                    return ended(Err(anyhow::anyhow!("gone")));
                }
            }
            ended(Ok(()))
        });
        let collected = running.into_body(body).collect().await;
        let bytes = collected.map(|c| c.to_bytes()).ok();
        assert_eq!(bytes.as_deref(), Some(&b"abc"[..]));
    }

    #[test]
    fn a_panicking_handler_ends_with_an_error() {
        let mut running = Running::new("test", async {
            if true {
                panic!("boom");
            }
            ended(Ok(()))
        });
        let waker = std::task::Waker::noop();
        assert!(running.poll_handler(&mut Context::from_waker(waker)));
        let error = running.take_result().and_then(Result::err);
        assert!(
            error.is_some_and(|e| e.to_string().contains("boom")),
            "a panic is an error naming it"
        );
    }

    #[tokio::test]
    async fn a_dropped_body_lets_its_handler_finish() {
        let finished = Arc::new(AtomicBool::new(false));
        let (done, done_received) = tokio::sync::oneshot::channel();
        let flag = finished.clone();
        let (_sender, body) = channel_body();
        let running = Running::new("test", async move {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            flag.store(true, Ordering::SeqCst);
            let _ = done.send(());
            ended(Ok(()))
        });
        drop(running.into_body(body));
        tokio::time::timeout(std::time::Duration::from_secs(5), done_received)
            .await
            .ok();
        assert!(finished.load(Ordering::SeqCst));
    }

    #[tokio::test]
    async fn what_an_ended_handler_leaves_goes_after_its_response() {
        let (dropped, was_dropped) = tokio::sync::oneshot::channel();
        let mut running = Running::new("test", async move {
            (Ok(()), Box::new(Remnant(Some(dropped))) as Remains)
        });
        let waker = std::task::Waker::noop();
        assert!(running.poll_handler(&mut Context::from_waker(waker)));
        let mut was_dropped = std::pin::pin!(was_dropped);
        assert!(
            was_dropped
                .as_mut()
                .poll(&mut Context::from_waker(waker))
                .is_pending(),
            "the store went in the poll that ended the handler, before its response"
        );
        let (_sender, body) = channel_body();
        drop(running.into_body(body));
        let gone = tokio::time::timeout(std::time::Duration::from_secs(5), was_dropped).await;
        assert!(
            matches!(gone, Ok(Ok(()))),
            "the store stays after the response"
        );
    }
}
