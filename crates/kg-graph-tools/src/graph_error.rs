use kg_wit::types::{Error, ErrorCode};
use neo4j_client::{ErrorKind, Neo4jError};

/// A Neo4j failure as the tools' typed error: unreachable → unavailable (503), server
/// trouble → upstream (502), our own bad Cypher → internal.
pub fn graph_error(e: Neo4jError) -> Error {
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
    let mut error = Error::new(code, format!("graph query failed: {e}"));
    error.retryable = e.is_retryable();
    error
}
