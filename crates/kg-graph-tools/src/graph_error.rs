use kg_wit::types::{Error, ErrorCode};
use neo4j_client::Neo4jError;
use serde_json::json;

/// A Neo4j failure of a tool's own query as the tools' typed error (mapping in
/// `Error::from_graph`), except a statement the graph stopped for its cost (time or
/// memory, [`Neo4jError::is_too_expensive`]): the request caused that, so it is a 400
/// `query_too_expensive`, not a failed dependency.
pub fn graph_error(e: Neo4jError) -> Error {
    if e.is_too_expensive() {
        return too_expensive_by_graph(&e);
    }
    Error::from_graph("graph query failed", &e)
}

/// A statement the graph stopped because it needed more time or memory than allowed.
pub fn too_expensive_by_graph(e: &Neo4jError) -> Error {
    let code = e.code.as_deref().unwrap_or_default();
    let limit = cost_limit(code);
    let what = if limit == "time" {
        "took longer than the graph allows a statement"
    } else {
        "needed more memory than the graph allows a statement"
    };
    too_expensive(
        format!(
            "the query is too expensive: it {what} ({e}); narrow it (a label, a WHERE, fewer hops, a smaller LIMIT) or aggregate"
        ),
        json!({"limit": limit, "graph_code": code}),
    )
}

/// Which of the graph's limits stopped a statement, from its status code: `time` or
/// `memory` (see [`Neo4jError::is_too_expensive`]).
fn cost_limit(code: &str) -> &'static str {
    if code.contains("Timed") {
        "time"
    } else {
        "memory"
    }
}

/// `invalid-argument` with the detail code `query_too_expensive` (HTTP 400) and `extra`
/// merged into the detail.
pub fn too_expensive(message: String, extra: serde_json::Value) -> Error {
    let mut detail = json!({"code": "query_too_expensive"});
    if let (Some(d), serde_json::Value::Object(extra)) = (detail.as_object_mut(), extra) {
        d.extend(extra);
    }
    let mut error = Error::new(ErrorCode::InvalidArgument, message);
    error.detail = Some(detail.to_string());
    error
}

/// A failure of Cypher from outside while the graph has a visibility policy, in
/// kg-agent's own words: the graph's message can quote a value the statement read (Neo4j's
/// `date()` quotes the text it could not parse), so only its status code and the
/// functions the statement calls are named. A statement stopped for its cost keeps its own
/// answer, which quotes nothing.
pub fn withheld_graph_error(e: &Neo4jError, functions: &[String]) -> Error {
    let code = e.code.as_deref().unwrap_or_default();
    if e.is_too_expensive() {
        let limit = cost_limit(code);
        return too_expensive(
            format!(
                "the query is too expensive: the graph stopped it at its {limit} limit; narrow it (a label, a WHERE, fewer hops, a smaller LIMIT) or aggregate"
            ),
            json!({"limit": limit, "graph_code": code}),
        );
    }
    let title = code.rsplit('.').next().unwrap_or_default();
    let what = match title {
        "ArgumentError" => {
            "a function or operator was given a value it cannot take (a text that is not a date, a number out of range…)"
        }
        "TypeError" => {
            "a value had a type the expression cannot use (a text where a number is needed, a list index that is not an integer…)"
        }
        "ArithmeticError" => "an arithmetic operation failed (a division by zero, an overflow…)",
        "SyntaxError" => {
            "a text could not be read as the value a function needs (a date, a time, a duration…), or the graph could not parse the statement"
        }
        "SemanticError" => "the graph could not compile it",
        "ExecutionFailed" => {
            "a function or operator failed on a value (a negative index, a value of the wrong type…)"
        }
        "EntityNotFound" => "it read something deleted while it ran",
        _ => "the graph could not run it",
    };
    let calls = if functions.is_empty() {
        String::new()
    } else {
        format!(
            "; it calls {}",
            functions
                .iter()
                .map(|f| format!("{f}()"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    // Neo4j reports a text a function could not parse as a SyntaxError while the
    // statement runs, and some failures of a function's arguments as
    // `DatabaseError.Statement.ExecutionFailed`: the statement's fault, not the graph's.
    let statement_failed = code.starts_with("Neo.DatabaseError.Statement.");
    let kind = match e.kind {
        neo4j_client::ErrorKind::Syntax | neo4j_client::ErrorKind::Client => {
            ErrorCode::InvalidArgument
        }
        neo4j_client::ErrorKind::Database if statement_failed => ErrorCode::InvalidArgument,
        _ => {
            return Error::from_graph(
                "graph query failed",
                &Neo4jError {
                    kind: e.kind,
                    code: e.code.clone(),
                    message: "the graph's message is withheld under the visibility policy".into(),
                },
            );
        }
    };
    let mut error = Error::new(
        kind,
        format!(
            "`query` was rejected by the graph: {what} ({code}){calls}. The graph's own message is withheld while the graph has a visibility policy, as it can quote the values the query read"
        ),
    );
    error.detail = Some(json!({"code": "graph_rejected", "graph_code": code}).to_string());
    error
}

#[cfg(test)]
mod tests {
    use super::*;
    use kg_wit::types::ErrorCode;

    /// What Neo4j 5.26 answered for functions that failed on a value (observed).
    const ECHOES: [(&str, &str); 5] = [
        (
            "Neo.ClientError.Statement.SyntaxError",
            "Text cannot be parsed to a Date\n\"Ada Varga\"\n ^",
        ),
        (
            "Neo.ClientError.Statement.TypeError",
            "Invalid input for end value in function 'range()': Expected a numeric value but got: String(\"Ada Varga\")",
        ),
        (
            "Neo.ClientError.Statement.ArgumentError",
            "Cannot assign String(\"Ada Varga\") to field 'Ada Varga'",
        ),
        (
            "Neo.DatabaseError.Statement.ExecutionFailed",
            "year must be an integer value, but was Ada Varga",
        ),
        ("Neo.DatabaseError.General.UnknownError", "Ada Varga"),
    ];

    #[test]
    fn an_error_under_a_policy_names_its_kind_and_functions_never_the_graphs_message() {
        for (code, message) in ECHOES {
            let e = Neo4jError::from_code(code, message);
            let error = withheld_graph_error(&e, &["date".into(), "range".into()]);
            assert!(!error.message.contains("Ada"), "{code}: {}", error.message);
            assert!(
                !error.detail.clone().unwrap_or_default().contains("Ada"),
                "{code}"
            );
            if code.contains("Statement") {
                assert_eq!(error.code, ErrorCode::InvalidArgument, "{code}");
                assert!(
                    error.message.contains("date(), range()"),
                    "{}",
                    error.message
                );
                assert!(error.message.contains(code), "{}", error.message);
            }
        }
    }

    #[test]
    fn a_statement_stopped_for_its_cost_stays_too_expensive() {
        let e = Neo4jError::from_code(
            "Neo.ClientError.Transaction.TransactionTimedOutClientConfiguration",
            "The transaction has been terminated. Ada Varga",
        );
        let error = withheld_graph_error(&e, &[]);
        assert!(!error.message.contains("Ada"), "{}", error.message);
        assert!(
            error
                .detail
                .unwrap_or_default()
                .contains("query_too_expensive")
        );
    }
}
