//! neo4j-client's [`Transport`], plus an optional bound on one attempt.

use neo4j_client::{HttpRequest, HttpResponse, Transport, TransportError};
use std::time::Duration;

/// What the client sends through. Any [`Transport`] qualifies with an empty `impl`; a
/// transport that can stop waiting (Spin's, racing a timer) overrides [`send_within`].
///
/// [`send_within`]: LlmTransport::send_within
pub trait LlmTransport: Transport {
    /// Sends, giving up (with a `Timeout` error) after `timeout` when the transport can.
    /// The default waits as long as the transport does; the client still refuses to start
    /// a retry past the call's deadline.
    fn send_within(
        &self,
        request: HttpRequest,
        timeout: Duration,
    ) -> Result<HttpResponse, TransportError> {
        let _ = timeout;
        self.send(request)
    }
}
