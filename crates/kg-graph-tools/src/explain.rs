//! Second layer of the read-only guard: the graph itself plans `EXPLAIN <statement>` in
//! READ mode (nothing runs) and must say the query only reads.
//!
//! Where the verdict is read from, most specific first:
//! 1. a query type `r` (`rw`, `w` and `s` are refused) at `queryType`, under `summary` or
//!    in the plan's `arguments`, for servers that report the Bolt summary's query type
//!    there (Neo4j 5.26.30 does not, observed; nor does devgraph, which answers as it does);
//! 2. otherwise the plan (`queryPlan` or `plan`): no operator of the plan may write
//!    (`Create`, `Merge`, `Set…`, `Delete`, `Remove…`, `Foreach`, `LoadCSV`,
//!    `Transaction…`);
//! 3. an answer with neither is refused: no verdict, no query.
//!
//! neo4j-client does not model the plan, so this sends its one request itself.

use crate::graph_error::graph_error;
use kg_wit::types::{Error, ErrorCode};
use neo4j_client::{Config, HttpRequest, Method, Neo4jError, Transport};
use serde_json::{Map, Value as Json, json};

/// Plan operators that write (or read files), by the name before Neo4j's `@runtime`.
const WRITE_OPERATORS: [&str; 9] = [
    "Create",
    "Merge",
    "Set",
    "Delete",
    "DetachDelete",
    "Remove",
    "Foreach",
    "LoadCSV",
    "Transaction",
];

pub fn require_read_only<T: Transport>(
    transport: &T,
    config: &Config,
    statement: &str,
    parameters: &Map<String, Json>,
) -> Result<(), Error> {
    let mut headers = vec![
        ("accept".to_string(), "application/json".to_string()),
        ("content-type".to_string(), "application/json".to_string()),
    ];
    if let Some(auth) = config.auth.header() {
        headers.push(("authorization".to_string(), auth));
    }
    let body = json!({
        "statement": format!("EXPLAIN {statement}"),
        "parameters": parameters,
        "accessMode": "READ",
    });
    let response = transport
        .send(HttpRequest {
            method: Method::Post,
            url: config.query_url(),
            headers,
            body: Some(body.to_string().into_bytes()),
        })
        .map_err(|e| graph_error(Neo4jError::from(e)))?;
    let answer: Json = serde_json::from_slice(&response.body).map_err(|_| {
        Error::new(
            ErrorCode::Upstream,
            format!(
                "EXPLAIN: the graph answered HTTP {} without JSON",
                response.status
            ),
        )
    })?;
    verdict(&answer)
}

/// Reads the verdict from the answer to `EXPLAIN` (see the module comment).
pub fn verdict(answer: &Json) -> Result<(), Error> {
    if let Some(error) = answer["errors"].as_array().and_then(|e| e.first()) {
        let code = error["code"].as_str().unwrap_or_default();
        let message = error["message"].as_str().unwrap_or_default();
        return Err(if code.contains("AccessMode") {
            not_read_only("the graph refused to plan it in READ mode")
        } else if code.starts_with("Neo.ClientError.Statement") {
            Error::new(
                ErrorCode::InvalidArgument,
                format!("`query` was rejected by the graph: {message}"),
            )
        } else {
            graph_error(Neo4jError::from_code(code, message))
        });
    }
    let query_type = [
        &answer["queryType"],
        &answer["summary"]["queryType"],
        &answer["queryPlan"]["arguments"]["queryType"],
        &answer["plan"]["arguments"]["queryType"],
    ]
    .into_iter()
    .find_map(Json::as_str);
    if let Some(query_type) = query_type {
        return match query_type.to_ascii_lowercase().as_str() {
            "r" | "read" | "read_only" => Ok(()),
            other => Err(not_read_only(&format!(
                "the graph plans it as query type `{other}`"
            ))),
        };
    }
    let plan = match (&answer["queryPlan"], &answer["plan"]) {
        (Json::Object(_), _) => &answer["queryPlan"],
        (_, Json::Object(_)) => &answer["plan"],
        _ => {
            return Err(not_read_only(
                "the graph's EXPLAIN answer has neither a query type nor a plan",
            ));
        }
    };
    let mut writers = Vec::new();
    write_operators(plan, &mut writers);
    match writers.first() {
        None => Ok(()),
        Some(op) => Err(not_read_only(&format!(
            "its plan has the write operator `{op}`"
        ))),
    }
}

fn write_operators(plan: &Json, into: &mut Vec<String>) {
    if let Some(op) = plan["operatorType"].as_str() {
        let name = op.split('@').next().unwrap_or(op);
        if WRITE_OPERATORS.iter().any(|w| name.starts_with(w)) {
            into.push(name.to_string());
        }
    }
    for child in plan["children"].as_array().into_iter().flatten() {
        write_operators(child, into);
    }
}

fn not_read_only(why: &str) -> Error {
    Error::new(
        ErrorCode::Denied,
        format!("`query` is not read-only: {why}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_query_type_first() {
        assert!(verdict(&json!({"queryType": "r", "data": {"fields": [], "values": []}})).is_ok());
        assert!(verdict(&json!({"queryType": "rw"})).is_err());
        assert!(verdict(&json!({"summary": {"queryType": "s"}})).is_err());
        assert!(verdict(&json!({"queryPlan": {"arguments": {"queryType": "w"}, "operatorType": "ProduceResults@neo4j"}})).is_err());
    }

    #[test]
    fn falls_back_to_the_plan_operators() {
        let read = json!({"queryPlan": {"operatorType": "ProduceResults@neo4j", "children": [{"operatorType": "NodeByLabelScan@neo4j", "children": []}]}});
        assert!(verdict(&read).is_ok());
        let write = json!({"queryPlan": {"operatorType": "ProduceResults@neo4j", "children": [{"operatorType": "EmptyResult@neo4j", "children": [{"operatorType": "DetachDelete@neo4j"}]}]}});
        let e = verdict(&write).unwrap_err();
        assert_eq!(e.code, ErrorCode::Denied);
        assert!(e.message.contains("DetachDelete"), "{}", e.message);
        assert!(
            verdict(&json!({"data": {}})).is_err(),
            "no verdict, no query"
        );
    }

    #[test]
    fn graph_errors_keep_their_meaning() {
        let access =
            json!({"errors": [{"code": "Neo.ClientError.Statement.AccessMode", "message": "no"}]});
        assert_eq!(verdict(&access).unwrap_err().code, ErrorCode::Denied);
        let syntax = json!({"errors": [{"code": "Neo.ClientError.Statement.SyntaxError", "message": "bad"}]});
        assert_eq!(
            verdict(&syntax).unwrap_err().code,
            ErrorCode::InvalidArgument
        );
    }
}
