use crate::transport::{TransportError, TransportErrorKind};

/// Error classes of Neo4j status codes and of the HTTP exchange around them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// `Neo.ClientError.*` not covered below.
    Client,
    /// `Neo.ClientError.Statement.SyntaxError`
    Syntax,
    /// `Neo.ClientError.Statement.AccessMode`: a write sent in READ mode.
    ReadOnlyViolation,
    /// HTTP 401 or `Neo.ClientError.Security.Unauthorized`.
    Authentication,
    /// HTTP 403 or `Neo.ClientError.Security.Forbidden`.
    Forbidden,
    /// Unknown transaction or database (`...TransactionNotFound`, `...DatabaseNotFound`).
    NotFound,
    /// `Neo.TransientError.*`, e.g. deadlocks: the same call may succeed later.
    Transient,
    /// `Neo.DatabaseError.*`
    Database,
    /// Neo4j could not be reached, or a gateway said so (502/503/504).
    Unavailable,
    Timeout,
    /// Reached the platform's outbound policy, not Neo4j.
    Denied,
    /// The answer was not what the Query API documents.
    Protocol,
}

/// Neo4j status codes of a statement stopped for its cost: time
/// (`TransactionTimedOutClientConfiguration`: the client's `maxExecutionTime`;
/// `TransactionTimedOut`: the server's `db.transaction.timeout`) or memory
/// (`MemoryPoolOutOfMemoryError`: `dbms.memory.transaction.total.max`;
/// `TransactionOutOfMemoryError`: `db.memory.transaction.max`).
pub const TOO_EXPENSIVE: [&str; 4] = [
    "Neo.ClientError.Transaction.TransactionTimedOutClientConfiguration",
    "Neo.ClientError.Transaction.TransactionTimedOut",
    "Neo.TransientError.General.MemoryPoolOutOfMemoryError",
    "Neo.ClientError.General.TransactionOutOfMemoryError",
];

/// Neo4j status codes of a schema command whose index or constraint already exists: the
/// same rule (`EquivalentSchemaRuleAlreadyExists`) or one of the same name.
pub const SCHEMA_ALREADY_EXISTS: [&str; 3] = [
    "Neo.ClientError.Schema.EquivalentSchemaRuleAlreadyExists",
    "Neo.ClientError.Schema.IndexAlreadyExists",
    "Neo.ClientError.Schema.ConstraintAlreadyExists",
];

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}{message}", code.as_deref().map(|c| format!("{c}: ")).unwrap_or_default())]
pub struct Neo4jError {
    pub kind: ErrorKind,
    /// The Neo4j status code, when the server sent one.
    pub code: Option<String>,
    pub message: String,
}

impl Neo4jError {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Neo4jError {
            kind,
            code: None,
            message: message.into(),
        }
    }

    /// Classifies a Neo4j status code (`Neo.<Classification>.<Category>.<Title>`).
    pub fn from_code(code: &str, message: impl Into<String>) -> Self {
        let kind = match code {
            // The statement itself is too expensive: running it again fails again, so
            // these are client errors, not transient ones (see `is_too_expensive`).
            c if TOO_EXPENSIVE.contains(&c) => ErrorKind::Client,
            "Neo.ClientError.Statement.SyntaxError" => ErrorKind::Syntax,
            "Neo.ClientError.Statement.AccessMode" => ErrorKind::ReadOnlyViolation,
            "Neo.ClientError.Security.Unauthorized" => ErrorKind::Authentication,
            "Neo.ClientError.Security.Forbidden" => ErrorKind::Forbidden,
            "Neo.ClientError.Transaction.TransactionNotFound"
            | "Neo.ClientError.Database.DatabaseNotFound" => ErrorKind::NotFound,
            c if c.starts_with("Neo.TransientError.") => ErrorKind::Transient,
            c if c.starts_with("Neo.DatabaseError.") => ErrorKind::Database,
            _ => ErrorKind::Client,
        };
        Neo4jError {
            kind,
            code: Some(code.to_string()),
            message: message.into(),
        }
    }

    /// True when the statement stopped because it needed more time or memory than the
    /// server allows it (`maxExecutionTime`, `db.transaction.timeout`,
    /// `db.memory.transaction.max`, `dbms.memory.transaction.total.max`): the request
    /// caused it, and the same statement will fail the same way.
    pub fn is_too_expensive(&self) -> bool {
        self.code
            .as_deref()
            .is_some_and(|c| TOO_EXPENSIVE.contains(&c))
    }

    /// True when the statement broke a uniqueness (or other) constraint, or a constraint
    /// could not be created over data that already breaks it: a conflict with the graph's
    /// state, which the statement rolled back whole.
    pub fn is_constraint_violation(&self) -> bool {
        self.code.as_deref().is_some_and(|c| {
            c == "Neo.ClientError.Schema.ConstraintValidationFailed"
                || c == "Neo.ClientError.Schema.ConstraintCreationFailed"
        })
    }

    /// True when a schema command lost a race: another transaction created the same index
    /// or constraint between this one's `IF NOT EXISTS` check and its commit (Neo4j checks
    /// the name and the schema before it takes the schema lock; neo4j/neo4j#6823). The
    /// rule the command asked for exists, and running it again answers "nothing to do".
    pub fn is_schema_creation_race(&self) -> bool {
        self.code
            .as_deref()
            .is_some_and(|c| SCHEMA_ALREADY_EXISTS.contains(&c))
    }

    /// True when retrying the same request may succeed: transient server states,
    /// unreachable servers and timeouts; never a client error.
    pub fn is_retryable(&self) -> bool {
        matches!(
            self.kind,
            ErrorKind::Transient | ErrorKind::Unavailable | ErrorKind::Timeout
        )
    }
}

impl From<TransportError> for Neo4jError {
    fn from(e: TransportError) -> Self {
        let kind = match e.kind {
            TransportErrorKind::Connect => ErrorKind::Unavailable,
            TransportErrorKind::Timeout => ErrorKind::Timeout,
            TransportErrorKind::Denied => ErrorKind::Denied,
            TransportErrorKind::Other => ErrorKind::Unavailable,
        };
        Neo4jError::new(kind, e.message)
    }
}
