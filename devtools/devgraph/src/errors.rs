//! Grafeo errors as Neo4j status codes, with the HTTP status the Query API uses for them.

use grafeo::Error;

#[derive(Debug, Clone, PartialEq)]
pub struct Neo4jError {
    pub status: u16,
    pub code: &'static str,
    pub message: String,
}

impl Neo4jError {
    pub fn new(status: u16, code: &'static str, message: impl Into<String>) -> Self {
        Neo4jError {
            status,
            code,
            message: message.into(),
        }
    }

    pub fn body(&self) -> serde_json::Value {
        serde_json::json!({"errors": [{"code": self.code, "message": self.message}]})
    }

    pub fn unauthorized() -> Self {
        Self::new(
            401,
            "Neo.ClientError.Security.Unauthorized",
            "The client is unauthorized due to authentication failure.",
        )
    }

    pub fn access_mode() -> Self {
        Self::new(
            400,
            "Neo.ClientError.Statement.AccessMode",
            "Writing in read access mode not allowed.",
        )
    }

    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(400, "Neo.ClientError.Request.Invalid", message)
    }

    /// A statement that needed more memory than devgraph allows one (Neo4j's answer when
    /// a transaction's memory pool is exhausted).
    pub fn out_of_memory(detail: impl Into<String>) -> Self {
        Self::new(
            400,
            "Neo.TransientError.General.MemoryPoolOutOfMemoryError",
            detail,
        )
    }

    /// A statement stopped at the `maxExecutionTime` the client asked for.
    pub fn timed_out_by_client(seconds: f64) -> Self {
        Self::new(
            400,
            "Neo.ClientError.Transaction.TransactionTimedOutClientConfiguration",
            format!(
                "The transaction has not completed within the timeout specified at its start by the client (maxExecutionTime {seconds} s). You may want to retry with a longer timeout."
            ),
        )
    }

    /// Neo4j's answer (`QueryController.transactionNotFoundResponse`) to a request for a
    /// transaction this server does not know: expired, finished, or opened on another
    /// cluster member (a request without the right `neo4j-cluster-affinity`).
    pub fn tx_not_found(id: &str) -> Self {
        Self::new(
            404,
            "Neo.ClientError.Request.Invalid",
            format!(
                "Transaction with Id: \"{id}\" was not found. It may have timed out and therefore rolled back or the routing header 'neo4j-cluster-affinity' was not provided."
            ),
        )
    }

    /// A bookmark this server did not issue and cannot read (a client error, HTTP 400).
    pub fn invalid_bookmark(bookmark: &str, why: &str) -> Self {
        Self::new(
            400,
            "Neo.ClientError.Transaction.InvalidBookmark",
            format!("Supplied bookmark [{bookmark}] is not valid: {why}"),
        )
    }
}

pub fn from_grafeo(e: &Error) -> Neo4jError {
    let error = classify(e);
    // Grafeo reports some runtime failures (division by zero) outside its query kinds.
    if error.status == 500 && error.message.contains("by zero") {
        return Neo4jError::new(
            400,
            "Neo.ClientError.Statement.ArithmeticError",
            error.message,
        );
    }
    error
}

fn classify(e: &Error) -> Neo4jError {
    let message = e.to_string();
    let debug = format!("{e:?}");
    // Grafeo's error kinds are matched by name so a new variant degrades to UnknownError.
    let (status, code) = if let Error::Query(q) = e {
        let kind = format!("{:?}", q.kind);
        match kind.as_str() {
            "Lexer" | "Syntax" => (400, "Neo.ClientError.Statement.SyntaxError"),
            "Semantic" | "InvalidReference" | "Unsupported" => {
                (400, "Neo.ClientError.Statement.SemanticError")
            }
            "Timeout" => (400, "Neo.ClientError.Transaction.TransactionTimedOut"),
            // Neo4j: `RETURN 1/0` fails with ArithmeticError ("/ by zero"), a client error.
            _ if message.contains("by zero") => {
                return Neo4jError::new(400, "Neo.ClientError.Statement.ArithmeticError", message);
            }
            // Grafeo's own memory cap on one path search (`MATCH p=(a)-[*]-(b)`): the
            // statement asked for too much, as Neo4j's memory pool error says.
            _ if message.contains("of memory a path search may use") => {
                (400, "Neo.TransientError.General.MemoryPoolOutOfMemoryError")
            }
            // A write that lost a race with a transaction committed after this one's
            // snapshot (Grafeo checks conflicts only against transactions still open;
            // its `no_dangling_edges` test calls it a known issue). Nothing was written,
            // and Neo4j would have made the writer wait or aborted it as a deadlock.
            _ if message.contains("does not exist, or the writer does not see it") => {
                (400, "Neo.TransientError.Transaction.DeadlockDetected")
            }
            _ => (500, "Neo.DatabaseError.Statement.ExecutionFailed"),
        }
    } else if debug.starts_with("Transaction(") {
        if message.contains("committed after this one began wrote the same value of the key") {
            // Another transaction committed the same value of a unique key first: Neo4j's
            // writer would have waited for it and then failed the uniqueness check.
            (400, "Neo.ClientError.Schema.ConstraintValidationFailed")
        } else if debug.contains("ReadOnly") {
            (400, "Neo.ClientError.Statement.AccessMode")
        } else if debug.contains("Conflict")
            || debug.contains("Deadlock")
            || debug.contains("Serialization")
        {
            (400, "Neo.TransientError.Transaction.DeadlockDetected")
        } else {
            (400, "Neo.ClientError.Transaction.InvalidState")
        }
    } else if debug.starts_with("TypeMismatch") {
        (400, "Neo.ClientError.Statement.TypeError")
    } else if debug.starts_with("InvalidValue") {
        (400, "Neo.ClientError.Statement.ArgumentError")
    } else if debug.starts_with("Constraint") {
        (400, "Neo.ClientError.Schema.ConstraintValidationFailed")
    } else {
        (500, "Neo.DatabaseError.General.UnknownError")
    };
    Neo4jError::new(status, code, message)
}
