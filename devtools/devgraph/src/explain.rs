//! `EXPLAIN <statement>`: plans without running, answered in the Query API's shape closely
//! enough for kg-agent's read-only guard. Neo4j answers an EXPLAIN with empty `data` and
//! the plan in `queryPlan` (`operatorType`, `arguments`, `identifiers`, `children`).
//! Like Neo4j 5.26 (observed), the answer has no query type: whether a statement writes is
//! read from its plan's operators. devgraph's plan is one `ProduceResults@devgraph`
//! operator whose `string-representation` is Grafeo's plan text; for a statement that
//! writes (Grafeo's own write analysis) it has one child, the write operator Neo4j would
//! show for the statement's first write clause (`Create`, `Merge`, `SetProperty`, …), and
//! no plan text: devgraph never hands a write to Grafeo's EXPLAIN, so nothing can run by
//! accident.

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
    let children = if writes {
        vec![json!({
            "operatorType": format!("{}@devgraph", write_operator(statement)),
            "arguments": {},
            "identifiers": [],
            "children": [],
        })]
    } else {
        Vec::new()
    };
    Ok(json!({
        "data": {"fields": [], "values": []},
        "queryPlan": {
            "operatorType": "ProduceResults@devgraph",
            "arguments": {"planner": "grafeo", "string-representation": plan_text},
            "identifiers": [],
            "children": children,
        },
        "bookmarks": [],
    }))
}

/// The operator Neo4j's plan shows for a statement's first write clause (a word-level
/// reading, good enough to name it: Grafeo has already said the statement writes).
fn write_operator(statement: &str) -> &'static str {
    let words: Vec<String> = statement
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_ascii_uppercase)
        .collect();
    for (i, word) in words.iter().enumerate() {
        let next = words.get(i + 1).map(String::as_str);
        match (word.as_str(), next) {
            ("CREATE", _) => return "Create",
            ("MERGE", _) => return "Merge",
            ("DETACH", Some("DELETE")) => return "DetachDelete",
            ("DELETE", _) => return "Delete",
            ("SET", _) => return "SetProperty",
            ("REMOVE", _) => return "RemoveLabels",
            ("FOREACH", _) => return "Foreach",
            ("LOAD", Some("CSV")) => return "LoadCSV",
            _ => {}
        }
    }
    "Create"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_the_first_write_clause_as_neo4j_plans_it() {
        assert_eq!(write_operator("CREATE (n:X) RETURN n"), "Create");
        assert_eq!(write_operator("MATCH (n) DETACH DELETE n"), "DetachDelete");
        assert_eq!(write_operator("MATCH (n) SET n.x = 1"), "SetProperty");
        assert_eq!(write_operator("MERGE (n:X {id: 1})"), "Merge");
        assert_eq!(write_operator("LOAD CSV FROM 'f' AS r RETURN r"), "LoadCSV");
    }

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
