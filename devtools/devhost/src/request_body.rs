//! The request body as a component gets it, read to its end when the component leaves it.
//!
//! A component may answer without reading the body (a 401, a 404, a bad route). hyper
//! keeps the connection open for the next request only if it can skip the rest of the
//! body at once when the body is dropped; the handler runs in the connection's task
//! (src/driven.rs) and often ends, dropping the body, before the body's bytes have even
//! been read from the socket, so hyper would close the connection after the response, and
//! a client reusing it would see its next request fail. Dropped unread, the rest is read
//! to its end on a task of its own instead (at most `DRAIN_LIMIT` bytes within
//! `DRAIN_TIMEOUT`; beyond that hyper closes the connection, as it would have).

use bytes::Bytes;
use http_body_util::{BodyExt, Limited};
use hyper::body::{Body, Frame, Incoming, SizeHint};
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

const DRAIN_LIMIT: usize = 1 << 20;
const DRAIN_TIMEOUT: Duration = Duration::from_secs(10);

pub struct RequestBody(Option<Incoming>);

impl RequestBody {
    pub fn new(body: Incoming) -> Self {
        RequestBody(Some(body))
    }
}

impl Body for RequestBody {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
        match &mut self.get_mut().0 {
            Some(body) => Pin::new(body).poll_frame(cx),
            None => Poll::Ready(None),
        }
    }

    fn is_end_stream(&self) -> bool {
        self.0.as_ref().is_none_or(Body::is_end_stream)
    }

    fn size_hint(&self) -> SizeHint {
        self.0.as_ref().map(Body::size_hint).unwrap_or_default()
    }
}

impl Drop for RequestBody {
    fn drop(&mut self) {
        let Some(body) = self.0.take().filter(|b| !b.is_end_stream()) else {
            return;
        };
        if tokio::runtime::Handle::try_current().is_err() {
            return;
        }
        tokio::task::spawn(async move {
            let _ = tokio::time::timeout(DRAIN_TIMEOUT, Limited::new(body, DRAIN_LIMIT).collect())
                .await;
        });
    }
}
