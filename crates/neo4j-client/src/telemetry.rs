//! Graph statement spans (OpenTelemetry database conventions: `db.system.name = neo4j`,
//! `db.operation.name`, `db.query.summary`; the statement text only when the recorder
//! allows it). Parameters are never recorded: values only ever travel as parameters, so
//! the text names no data, but a deployment may still consider its queries private.

use crate::client::QueryResult;
use crate::error::Neo4jError;
use kg_telemetry::{ActiveSpan, SpanKind, attr};

/// Clauses that make up a summary, longest first so `OPTIONAL MATCH` wins over `MATCH`.
const CLAUSES: [&str; 17] = [
    "OPTIONAL MATCH",
    "DETACH DELETE",
    "LOAD CSV",
    "MATCH",
    "CREATE",
    "MERGE",
    "DELETE",
    "SET",
    "REMOVE",
    "RETURN",
    "WITH",
    "UNWIND",
    "CALL",
    "FOREACH",
    "SHOW",
    "DROP",
    "FINISH",
];

/// Opens the span of one statement, named after its summary; `concurrent` for one sent
/// alongside others (see [`kg_telemetry::span_detached`]).
pub(crate) fn statement_span(
    statement: &str,
    database: &str,
    origin: &kg_url::Url,
    concurrent: bool,
) -> ActiveSpan {
    let mut span = if concurrent {
        kg_telemetry::span_detached("neo4j", SpanKind::Client)
    } else {
        kg_telemetry::span("neo4j", SpanKind::Client)
    };
    if !span.is_recording() {
        return span;
    }
    let (operation, summary) = summarise(statement);
    span.rename(&summary);
    span.set(attr::DB_SYSTEM_NAME, "neo4j");
    span.set(attr::DB_NAMESPACE, database);
    span.set(attr::DB_OPERATION_NAME, operation);
    span.set(attr::DB_QUERY_SUMMARY, summary);
    set_server(&mut span, origin);
    if kg_telemetry::capture_statements() {
        span.set(attr::DB_QUERY_TEXT, statement);
    }
    span
}

/// The span of a transaction step (`BEGIN`, `COMMIT`, `ROLLBACK`).
pub(crate) fn transaction_span(
    operation: &str,
    database: &str,
    origin: &kg_url::Url,
) -> ActiveSpan {
    let mut span = kg_telemetry::span(operation, SpanKind::Client);
    if span.is_recording() {
        span.set(attr::DB_SYSTEM_NAME, "neo4j");
        span.set(attr::DB_NAMESPACE, database);
        span.set(attr::DB_OPERATION_NAME, operation);
        set_server(&mut span, origin);
    }
    span
}

/// Adds W3C `traceparent` (and the caller's `tracestate`) naming the current span, so a
/// graph behind a tracing proxy joins the request's trace.
pub fn propagate(headers: &mut Vec<(String, String)>) {
    if let Some(parent) = kg_telemetry::current_traceparent() {
        headers.push(("traceparent".to_string(), parent));
        if let Some(state) = kg_telemetry::current_tracestate() {
            headers.push(("tracestate".to_string(), state));
        }
    }
}

/// Records how a statement ended: rows returned, or the error's Neo4j code.
pub fn finish(span: &mut ActiveSpan, result: &Result<QueryResult, Neo4jError>) {
    if !span.is_recording() {
        return;
    }
    match result {
        Ok(result) => span.set(attr::DB_RESPONSE_RETURNED_ROWS, result.rows.len()),
        Err(e) => fail(span, e),
    }
}

pub(crate) fn fail(span: &mut ActiveSpan, e: &Neo4jError) {
    if let Some(code) = &e.code {
        span.set(attr::DB_RESPONSE_STATUS_CODE, code.as_str());
    }
    let kind = e.code.clone().unwrap_or_else(|| format!("{:?}", e.kind));
    span.fail(&kind, &e.message);
}

fn set_server(span: &mut ActiveSpan, origin: &kg_url::Url) {
    if let Some((host, port)) = kg_url::server_address(origin) {
        span.set(attr::SERVER_ADDRESS, host);
        if let Some(port) = port {
            span.set(attr::SERVER_PORT, port);
        }
    }
}

/// `(db.operation.name, db.query.summary)`: the first clause, and the clauses in order
/// with the first label after each reading or writing clause (`MATCH Order SET RETURN`).
/// Words inside strings, comments and backticks are skipped; low cardinality by design.
pub fn summarise(statement: &str) -> (String, String) {
    let words = words(statement);
    let mut parts: Vec<String> = Vec::new();
    let mut operation = String::new();
    let mut i = 0;
    let mut want_label = false;
    while i < words.len() && parts.len() < 12 {
        let word = &words[i];
        if let Some(label) = word.strip_prefix(':') {
            if want_label && !label.is_empty() {
                parts.push(label.to_string());
                want_label = false;
            }
            i += 1;
            continue;
        }
        let upper = word.to_ascii_uppercase();
        let next = words.get(i + 1).map(|w| w.to_ascii_uppercase());
        let pair = next.as_ref().map(|n| format!("{upper} {n}"));
        let clause = CLAUSES
            .iter()
            .find(|c| pair.as_deref() == Some(**c) || (!c.contains(' ') && upper.as_str() == **c));
        match clause {
            Some(clause) => {
                if operation.is_empty() {
                    operation = clause.to_string();
                }
                if parts.last().map(String::as_str) != Some(*clause) {
                    parts.push(clause.to_string());
                }
                want_label = matches!(*clause, "MATCH" | "OPTIONAL MATCH" | "CREATE" | "MERGE");
                i += if clause.contains(' ') { 2 } else { 1 };
            }
            None => i += 1,
        }
    }
    if operation.is_empty() {
        operation = "QUERY".into();
    }
    let summary = if parts.is_empty() {
        operation.clone()
    } else {
        parts.join(" ")
    };
    (operation, summary.chars().take(255).collect())
}

/// Identifiers and `:Label`s outside string literals, comments and backticks.
fn words(statement: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = statement.chars().peekable();
    let mut current = String::new();
    let flush = |current: &mut String, out: &mut Vec<String>| {
        if !current.is_empty() {
            out.push(std::mem::take(current));
        }
    };
    while let Some(c) = chars.next() {
        match c {
            '\'' | '"' | '`' => {
                flush(&mut current, &mut out);
                let mut escaped = false;
                for d in chars.by_ref() {
                    if escaped {
                        escaped = false;
                    } else if d == '\\' {
                        escaped = true;
                    } else if d == c {
                        break;
                    }
                }
            }
            '/' if chars.peek() == Some(&'/') => {
                flush(&mut current, &mut out);
                for d in chars.by_ref() {
                    if d == '\n' {
                        break;
                    }
                }
            }
            ':' => {
                flush(&mut current, &mut out);
                current.push(':');
            }
            c if c.is_alphanumeric() || c == '_' => current.push(c),
            _ => flush(&mut current, &mut out),
        }
    }
    flush(&mut current, &mut out);
    // A lone `:` (a map entry, a relationship type without a name) is not a label.
    out.retain(|w| w != ":");
    out
}

#[cfg(test)]
mod tests {
    use super::summarise;

    #[test]
    fn summaries_name_clauses_and_first_labels() {
        assert_eq!(
            summarise("MATCH (o:Order {id: $id})-[:PLACED_BY]->(c:Customer) RETURN o, c"),
            ("MATCH".into(), "MATCH Order RETURN".into())
        );
        assert_eq!(
            summarise("optional match (n) where n.name = 'MATCH (x:Secret)' set n.x = 1 return n"),
            ("OPTIONAL MATCH".into(), "OPTIONAL MATCH SET RETURN".into())
        );
        assert_eq!(
            summarise(
                "UNWIND $rows AS row MERGE (p:Payment {id: row.id}) // CREATE (:Gone)\nRETURN count(*)"
            ),
            ("UNWIND".into(), "UNWIND MERGE Payment RETURN".into())
        );
        assert_eq!(
            summarise("RETURN 1 AS ok"),
            ("RETURN".into(), "RETURN".into())
        );
        assert_eq!(summarise("   "), ("QUERY".into(), "QUERY".into()));
    }
}
