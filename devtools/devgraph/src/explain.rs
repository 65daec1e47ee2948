//! `EXPLAIN <statement>`: plans without running, answered in the Query API's shape closely
//! enough for kg-agent's read-only guard. Neo4j answers an EXPLAIN with empty `data` and
//! the plan in `queryPlan` (`operatorType`, `arguments`, `identifiers`, `children`).
//! devgraph also reports the Bolt summary's query type at the top level as `queryType`:
//! `r` (reads only) or `rw` (writes), from Grafeo's own write analysis. The plan itself is
//! one operator whose `string-representation` is Grafeo's plan text (for reads only:
//! devgraph never hands a write to Grafeo's EXPLAIN, so nothing can run by accident).

use crate::errors::{Neo4jError, from_grafeo};
use crate::values::from_json;
use grafeo::session::Session;
use serde_json::{Map, Value as Json, json};
use std::collections::HashMap;

/// The statement after a leading `EXPLAIN` keyword, if there is one.
pub fn explained(statement: &str) -> Option<&str> {
    let trimmed = statement.trim_start();
    let head = trimmed.get(..7)?;
    let rest = &trimmed[7..];
    (head.eq_ignore_ascii_case("EXPLAIN") && rest.starts_with(char::is_whitespace))
        .then_some(rest.trim_start())
}

/// The statement after a leading `PROFILE` keyword, if there is one.
pub fn profiled(statement: &str) -> Option<&str> {
    let trimmed = statement.trim_start();
    let head = trimmed.get(..7)?;
    let rest = &trimmed[7..];
    (head.eq_ignore_ascii_case("PROFILE") && rest.starts_with(char::is_whitespace))
        .then_some(rest.trim_start())
}

/// Neo4j's `profiledQueryPlan` for a statement devgraph ran: one operator with the rows
/// it produced, the time it took (nanoseconds, as Neo4j reports `time`) and Grafeo's plan
/// text; devgraph counts no database hits or page cache use.
pub fn profile(
    session: &Session,
    statement: &str,
    parameters: &Map<String, Json>,
    rows: usize,
    elapsed: std::time::Duration,
    fields: Json,
) -> Json {
    let plan = answer(session, statement, parameters)
        .ok()
        .and_then(|a| {
            a["queryPlan"]["arguments"]["string-representation"]
                .as_str()
                .map(str::to_string)
        })
        .unwrap_or_default();
    let time = u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX);
    json!({
        "dbHits": 0,
        "records": rows,
        "hasPageCacheStats": false,
        "pageCacheHits": 0,
        "pageCacheMisses": 0,
        "pageCacheHitRatio": 0.0,
        "time": time,
        "operatorType": "ProduceResults@devgraph",
        "arguments": {"planner": "grafeo", "string-representation": plan, "Rows": rows, "Time": time, "DbHits": 0},
        "identifiers": fields,
        "children": [],
    })
}

pub fn answer(
    session: &Session,
    statement: &str,
    parameters: &Map<String, Json>,
) -> Result<Json, Neo4jError> {
    let writes = session
        .statement_writes(statement, "cypher")
        .map_err(|e| from_grafeo(&e))?;
    let plan_text = if writes {
        "(not planned: the statement writes)".to_string()
    } else {
        let params: HashMap<String, grafeo::Value> = parameters
            .iter()
            .map(|(k, v)| (k.clone(), from_json(v)))
            .collect();
        let result = session
            .execute_cypher_with_params(&format!("EXPLAIN {statement}"), params)
            .map_err(|e| from_grafeo(&e))?;
        result
            .rows()
            .iter()
            .map(|row| {
                row.iter()
                    .map(|v| match v {
                        grafeo::Value::String(s) => s.to_string(),
                        other => format!("{other:?}"),
                    })
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    let query_type = if writes { "rw" } else { "r" };
    Ok(json!({
        "data": {"fields": [], "values": []},
        "queryPlan": {
            "operatorType": "ProduceResults@devgraph",
            "arguments": {"planner": "grafeo", "string-representation": plan_text},
            "identifiers": [],
            "children": [],
        },
        "queryType": query_type,
        "bookmarks": [],
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_keyword() {
        assert_eq!(
            explained("EXPLAIN MATCH (n) RETURN n"),
            Some("MATCH (n) RETURN n")
        );
        assert_eq!(explained("  explain\nRETURN 1"), Some("RETURN 1"));
        assert_eq!(explained("EXPLAINED"), None);
        assert_eq!(explained("MATCH (n) RETURN n"), None);
        assert_eq!(explained("EXPLAİN x"), None);
        assert_eq!(profiled("profile\tRETURN 1"), Some("RETURN 1"));
        assert_eq!(profiled("PROFILED"), None);
    }
}
