use crate::types::{Error, ErrorCode};
use neo4j_client::{ErrorKind, Neo4jError};

impl Error {
    /// A graph failure as the contract's error, `context` first in the message:
    /// unreachable → unavailable (503), server trouble → upstream (502), our own Cypher
    /// rejected → internal (500). Retryable when the graph says so.
    pub fn from_graph(context: &str, e: &Neo4jError) -> Self {
        let code = match e.kind {
            // A duplicate key: the request conflicts with what the graph holds (409).
            _ if e.is_constraint_violation() => ErrorCode::Conflict,
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

    /// A typed error for contract functions whose behaviour a later issue builds.
    pub fn not_implemented(what: &str, issue: u32) -> Self {
        Error {
            code: ErrorCode::NotImplemented,
            message: format!("{what} is not implemented yet (issue #{issue})"),
            retryable: false,
            detail: None,
        }
    }

    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Error {
            code,
            message: message.into(),
            retryable: false,
            detail: None,
        }
    }
}

impl ErrorCode {
    /// The stable, snake_case code used in JSON error bodies.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InvalidArgument => "invalid_argument",
            ErrorCode::NotFound => "not_found",
            ErrorCode::NotImplemented => "not_implemented",
            ErrorCode::Unavailable => "unavailable",
            ErrorCode::Upstream => "upstream",
            ErrorCode::Denied => "denied",
            ErrorCode::Conflict => "conflict",
            ErrorCode::Timeout => "timeout",
            ErrorCode::Internal => "internal",
        }
    }

    /// The HTTP status that fits the error class.
    pub fn http_status(self) -> u16 {
        match self {
            ErrorCode::InvalidArgument => 400,
            ErrorCode::Denied => 403,
            ErrorCode::NotFound => 404,
            ErrorCode::Conflict => 409,
            ErrorCode::Internal => 500,
            ErrorCode::NotImplemented => 501,
            ErrorCode::Upstream => 502,
            ErrorCode::Unavailable => 503,
            ErrorCode::Timeout => 504,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn not_implemented_names_the_issue() {
        let e = Error::not_implemented("route", 6);
        assert_eq!(e.code, ErrorCode::NotImplemented);
        assert!(e.message.contains("issue #6"), "{}", e.message);
        assert!(!e.retryable);
    }

    #[test]
    fn every_code_has_a_distinct_name_and_an_error_status() {
        use ErrorCode::*;
        let all = [
            InvalidArgument,
            NotFound,
            NotImplemented,
            Unavailable,
            Upstream,
            Denied,
            Conflict,
            Timeout,
            Internal,
        ];
        let names: std::collections::HashSet<_> = all.iter().map(|c| c.as_str()).collect();
        assert_eq!(names.len(), all.len());
        assert!(all.iter().all(|c| (400..600).contains(&c.http_status())));
    }

    #[test]
    fn a_broken_constraint_is_a_conflict_not_a_server_error() {
        for code in [
            "Neo.ClientError.Schema.ConstraintValidationFailed",
            "Neo.ClientError.Schema.ConstraintCreationFailed",
        ] {
            let e = Error::from_graph("ingest", &Neo4jError::from_code(code, "already exists"));
            assert_eq!(e.code, ErrorCode::Conflict, "{code}");
            assert_eq!(e.code.http_status(), 409);
            assert!(!e.retryable);
        }
        let syntax = Neo4jError::from_code("Neo.ClientError.Statement.SyntaxError", "bad");
        assert_eq!(Error::from_graph("x", &syntax).code, ErrorCode::Internal);
    }
}
