//! Failures as the WIT contract's typed error.

use kg_wit::types::{Error, ErrorCode};
use neo4j_client::{ErrorKind, Neo4jError};

pub fn invalid(message: impl Into<String>) -> Error {
    Error::new(ErrorCode::InvalidArgument, message)
}

/// A graph failure: unreachable → unavailable (503), server trouble → upstream (502), our
/// own Cypher rejected → internal.
pub fn graph_error(context: &str, e: &Neo4jError) -> Error {
    let code = match e.kind {
        ErrorKind::Unavailable | ErrorKind::Transient => ErrorCode::Unavailable,
        ErrorKind::Timeout => ErrorCode::Timeout,
        ErrorKind::Denied | ErrorKind::Forbidden | ErrorKind::ReadOnlyViolation => {
            ErrorCode::Denied
        }
        ErrorKind::Authentication
        | ErrorKind::Database
        | ErrorKind::Protocol
        | ErrorKind::NotFound => ErrorCode::Upstream,
        ErrorKind::Syntax | ErrorKind::Client => ErrorCode::Internal,
    };
    let mut error = Error::new(code, format!("{context}: {e}"));
    error.retryable = e.is_retryable();
    error
}
