//! Server notifications: the warnings, deprecations and performance hints Neo4j attaches to
//! a successful answer. The Query API lists them under `notifications` (Neo4j's
//! Notification API: `code`, `title`, `description`, `severity`, `category`, `position`),
//! and newer servers (5.23+) may also send `gqlStatusObjects` (the GQL-status API:
//! `gqlStatus`, `statusDescription`, `classification`/`severity` or the same inside
//! `diagnosticRecord` as `_classification`/`_severity`/`_position`). Both are read
//! leniently: a field of an unexpected type is left empty, an entry that is not an object
//! is skipped, nothing here fails the answer.

use serde_json::Value as Json;

/// Where in the statement text a notification points (all 1-based but `offset`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Position {
    pub offset: u64,
    pub line: u64,
    pub column: u64,
}

/// One notification. `code` is the Neo4j code (`Neo.ClientNotification.…`) when the
/// server sent one, else the GQLSTATUS; `severity` (`WARNING`, `INFORMATION`) and
/// `category` (`PERFORMANCE`, `DEPRECATION`, `HINT`, `UNRECOGNIZED`, `UNSUPPORTED`,
/// `GENERIC`, `SECURITY`, `TOPOLOGY`, `SCHEMA`, …) are upper-case as the server sent them,
/// empty when absent.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Notification {
    pub code: String,
    pub gql_status: Option<String>,
    pub severity: String,
    pub category: String,
    pub title: String,
    pub description: String,
    pub position: Option<Position>,
}

impl Notification {
    pub fn is_performance(&self) -> bool {
        self.category.eq_ignore_ascii_case("PERFORMANCE")
    }

    pub fn is_deprecation(&self) -> bool {
        self.category.eq_ignore_ascii_case("DEPRECATION")
            || self
                .gql_status
                .as_deref()
                .is_some_and(|s| s.starts_with("01N0"))
    }

    pub fn is_warning(&self) -> bool {
        self.severity.eq_ignore_ascii_case("WARNING")
    }

    /// The code's last segment (`CartesianProduct` of
    /// `Neo.ClientNotification.Statement.CartesianProduct`), or the GQLSTATUS.
    pub fn short_code(&self) -> &str {
        self.code.rsplit('.').next().unwrap_or(&self.code)
    }
}

fn text(object: &serde_json::Map<String, Json>, key: &str) -> Option<String> {
    object.get(key).and_then(Json::as_str).map(str::to_string)
}

fn position(value: Option<&Json>) -> Option<Position> {
    let p = value?.as_object()?;
    let field = |k: &str| p.get(k).and_then(Json::as_u64);
    Some(Position {
        offset: field("offset")?,
        line: field("line").unwrap_or(0),
        column: field("column").unwrap_or(0),
    })
}

/// The notifications of an answer (`notifications`, and the `gqlStatusObjects` that are
/// notifications and not already listed there).
pub fn parse(answer: &Json) -> Vec<Notification> {
    let mut found: Vec<Notification> = answer
        .get("notifications")
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
        .filter_map(Json::as_object)
        .map(|n| Notification {
            code: text(n, "code").unwrap_or_default(),
            gql_status: text(n, "gqlStatus"),
            severity: text(n, "severity").unwrap_or_default(),
            category: text(n, "category").unwrap_or_default(),
            title: text(n, "title").unwrap_or_default(),
            description: text(n, "description").unwrap_or_default(),
            position: position(n.get("position")),
        })
        .collect();
    let gql = answer
        .get("gqlStatusObjects")
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
        .filter_map(Json::as_object)
        .filter_map(gql_notification)
        .collect::<Vec<_>>();
    // A server that sends both describes each condition twice; keep the Neo4j form (it has
    // the code and title) and add only GQL statuses it lacks (same category and position).
    for g in gql {
        let listed = found.iter().any(|n| {
            n.gql_status.as_deref() == g.gql_status.as_deref()
                || (n.category.eq_ignore_ascii_case(&g.category) && n.position == g.position)
        });
        if !listed {
            found.push(g);
        }
    }
    found
}

/// A GQL-status object as a notification, or None for the statuses of plain success
/// (class `00`) and no data (class `02`), which are not notifications.
fn gql_notification(g: &serde_json::Map<String, Json>) -> Option<Notification> {
    let status = text(g, "gqlStatus")?;
    if g.get("isNotification").and_then(Json::as_bool) == Some(false)
        || status.starts_with("00")
        || status.starts_with("02")
    {
        return None;
    }
    let diagnostic = g.get("diagnosticRecord").and_then(Json::as_object);
    let from_record = |k: &str| diagnostic.and_then(|d| text(d, k));
    let description = text(g, "statusDescription").unwrap_or_default();
    Some(Notification {
        code: status.clone(),
        gql_status: Some(status),
        severity: text(g, "severity")
            .filter(|s| s != "UNKNOWN")
            .or_else(|| from_record("_severity"))
            .unwrap_or_default(),
        category: text(g, "classification")
            .filter(|s| s != "UNKNOWN")
            .or_else(|| from_record("_classification"))
            .unwrap_or_default(),
        // GQL has no title: the description's first sentence serves.
        title: description
            .split_once(". ")
            .map_or(description.as_str(), |(first, _)| first)
            .trim_end_matches('.')
            .to_string(),
        description,
        position: position(g.get("position"))
            .or_else(|| position(diagnostic.and_then(|d| d.get("_position")))),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The example answer of the Query API documentation ("Server notifications",
    /// query.adoc in neo4j/docs-query-api), `data` left out as there.
    #[test]
    fn the_documented_query_api_example() {
        let answer = json!({
          "data": {"fields": [], "values": []},
          "notifications": [
            {
              "code": "Neo.ClientNotification.Statement.UnboundedVariableLengthPattern",
              "description": "Using shortest path with an unbounded pattern will likely result in long execution times. It is recommended to use an upper limit to the number of node hops in your pattern.",
              "severity": "INFORMATION",
              "title": "The provided pattern is unbounded, consider adding an upper limit to the number of node hops.",
              "position": {"offset": 21, "line": 1, "column": 22},
              "category": "PERFORMANCE"
            }
          ]
        });
        let found = parse(&answer);
        assert_eq!(found.len(), 1);
        let n = &found[0];
        assert_eq!(
            n.code,
            "Neo.ClientNotification.Statement.UnboundedVariableLengthPattern"
        );
        assert_eq!(n.short_code(), "UnboundedVariableLengthPattern");
        assert_eq!(n.severity, "INFORMATION");
        assert_eq!(n.category, "PERFORMANCE");
        assert!(n.is_performance() && !n.is_warning() && !n.is_deprecation());
        assert!(n.title.starts_with("The provided pattern is unbounded"));
        assert!(n.description.starts_with("Using shortest path"));
        assert_eq!(
            n.position,
            Some(Position {
                offset: 21,
                line: 1,
                column: 22
            })
        );
    }

    /// GQL-status objects as the status-codes documentation describes them (the
    /// cartesian-product example, GQLSTATUS 03N90), next to the success status every
    /// answer carries, which is no notification.
    #[test]
    fn gql_status_objects() {
        let answer = json!({
          "gqlStatusObjects": [
            {"gqlStatus": "00000", "statusDescription": "note: successful completion",
             "diagnosticRecord": {"OPERATION": "", "OPERATION_CODE": "0", "CURRENT_SCHEMA": "/"},
             "severity": "UNKNOWN", "classification": "UNKNOWN", "isNotification": false},
            {"gqlStatus": "03N90",
             "statusDescription": "info: cartesian product. The disconnected patterns `(c:Child), (p:Parent)` build a cartesian product. A cartesian product may produce a large amount of data and slow down query processing.",
             "diagnosticRecord": {"OPERATION": "", "OPERATION_CODE": "0", "CURRENT_SCHEMA": "/",
               "_severity": "INFORMATION", "_classification": "PERFORMANCE",
               "_position": {"offset": 0, "line": 1, "column": 1}}},
            {"gqlStatus": "01N00", "statusDescription": "warn: feature deprecated. CALL subquery without a variable scope clause is deprecated.",
             "severity": "WARNING", "classification": "DEPRECATION"}
          ]
        });
        let found = parse(&answer);
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!(found[0].code, "03N90");
        assert_eq!(found[0].severity, "INFORMATION");
        assert!(found[0].is_performance());
        assert_eq!(found[0].title, "info: cartesian product");
        assert_eq!(found[0].position.map(|p| p.line), Some(1));
        assert!(found[1].is_deprecation() && found[1].is_warning());
    }

    #[test]
    fn both_apis_describe_one_condition_once() {
        let answer = json!({
          "notifications": [{"code": "Neo.ClientNotification.Statement.CartesianProduct", "gqlStatus": "03N90",
            "severity": "INFORMATION", "category": "PERFORMANCE", "title": "t", "description": "d",
            "position": {"offset": 0, "line": 1, "column": 1}}],
          "gqlStatusObjects": [{"gqlStatus": "03N90", "statusDescription": "info: cartesian product.",
            "severity": "INFORMATION", "classification": "PERFORMANCE",
            "position": {"offset": 0, "line": 1, "column": 1}}]
        });
        let found = parse(&answer);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].short_code(), "CartesianProduct");
    }

    #[test]
    fn unknown_shapes_are_skipped_not_fatal() {
        for answer in [
            json!({}),
            json!({"notifications": null}),
            json!({"notifications": "none"}),
            json!({"notifications": [1, "x", null, []]}),
            json!({"gqlStatusObjects": [{"statusDescription": "no status"}, 3]}),
            json!({"gqlStatusObjects": {"gqlStatus": "03N90"}}),
        ] {
            assert!(parse(&answer).is_empty(), "{answer}");
        }
        // Fields of the wrong type are left empty; the entry is kept.
        let found = parse(&json!({"notifications": [{"code": 7, "severity": "WARNING",
            "position": {"offset": "0"}, "future": {"x": 1}}]}));
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].code, "");
        assert!(found[0].is_warning());
        assert_eq!(found[0].position, None);
    }
}
