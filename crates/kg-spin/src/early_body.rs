//! A request body written whole before the request starts (see `EARLY_BODY_MAX`), with
//! as few host calls as the stream allows: the write permit, the writes, then the body
//! finished. spin-sdk's body sink, used before, also checked the permit after every
//! write and flushed and waited for the flush (nine host calls for one chunk instead of
//! six, four for an empty body instead of two). A flush is not needed: `finish` ends the
//! body after everything written to its stream (wasi:http), and the host sends it when
//! the request starts.

use spin_executor::CancelOnDropToken;
use spin_sdk::http::{OutgoingBody, OutgoingRequest, SendError};
use std::task::Poll;

/// Writes `body` as the whole body of `request`, which has not started yet.
pub(crate) async fn write_early(request: &OutgoingRequest, body: &[u8]) -> Result<(), SendError> {
    let outgoing = request
        .body()
        .map_err(|()| SendError::RequestConversion("the request body was already taken".into()))?;
    if !body.is_empty() {
        let stream = outgoing.write().map_err(|()| {
            SendError::RequestConversion("the request body stream was already taken".into())
        })?;
        let mut rest = body;
        // The stream's pollable while the host has no room (as spin-sdk's sink waited).
        let mut waiting: Option<CancelOnDropToken> = None;
        std::future::poll_fn(|cx| {
            loop {
                if rest.is_empty() {
                    return Poll::Ready(Ok(()));
                }
                match stream.check_write() {
                    Ok(0) => {
                        waiting = Some(
                            spin_executor::push_waker_and_get_token(
                                stream.subscribe(),
                                cx.waker().clone(),
                            )
                            .into(),
                        );
                        return Poll::Pending;
                    }
                    Ok(permit) => {
                        let n = usize::try_from(permit)
                            .unwrap_or(usize::MAX)
                            .min(rest.len());
                        if let Err(e) = stream.write(&rest[..n]) {
                            return Poll::Ready(Err(SendError::Io(e)));
                        }
                        rest = &rest[n..];
                    }
                    Err(e) => return Poll::Ready(Err(SendError::Io(e))),
                }
            }
        })
        .await?;
        drop(waiting);
        // The stream goes before the body is finished (wasi:http requires it).
        drop(stream);
    }
    // As spin-sdk's sink did, a failure to finish is not reported here: the request then
    // fails when it is sent.
    let _ = OutgoingBody::finish(outgoing, None);
    Ok(())
}
