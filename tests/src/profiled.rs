//! A `neo4j_client::Transport` that measures what each statement costs the database: it
//! sends every request to the server as it is (blocking, over `ureq`), except that a
//! plain read sent to the Query API goes as `PROFILE <statement>`, and from the answer's
//! `profiledQueryPlan` it records the statement's database hits (summed over the plan's
//! operators) and rows. The plan is taken out of the answer before the client reads it,
//! so the code under test sees what it would have seen unprofiled.
//!
//! Neo4j 5.26's Query API answers a `PROFILE` with `profiledQueryPlan` beside `data`:
//! an operator tree whose nodes carry `operatorType`, `dbHits`, `records` (rows),
//! `pageCacheHits`, `time`, `arguments` and `children`, in plain and typed JSON alike;
//! `PROFILE` also works on a statement that begins an explicit transaction (`POST …/tx`).
//! Database hits are the unit of storage work Neo4j counts (a node, relationship or
//! property read, an index seek): unlike time, they do not depend on the machine or on
//! what else runs, so they compare one graph with another.
//!
//! Left unprofiled (recorded with `db_hits: None`): statements that already start with
//! `EXPLAIN` or `PROFILE`, `SHOW`, schema and administration commands (`CREATE`, `DROP`,
//! `ALTER`, `GRANT`, …, `CALL dbms.…`), statements sent in WRITE mode, and statements in
//! an explicit transaction not begun READ here. A read the server refuses to profile is
//! sent again as it was (an auto-commit statement, or one beginning a transaction: a
//! refused request has changed nothing); inside an open transaction it cannot be, as the
//! refusal ends the transaction, so there only transactions begun READ are profiled.

use neo4j_client::{
    HttpRequest, HttpResponse, Method, Transport, TransportError, TransportErrorKind,
};
use serde_json::Value;
use std::collections::HashSet;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

/// What one statement cost.
#[derive(Clone, Debug, PartialEq)]
pub struct Recorded {
    /// As the client sent it (without the `PROFILE` added here).
    pub statement: String,
    /// Database hits summed over every operator of the profiled plan; `None` when the
    /// statement was not profiled.
    pub db_hits: Option<u64>,
    /// Rows the statement returned (the plan's root `records`); `None` when not profiled.
    pub rows: Option<u64>,
    /// The error code the server answered with, if any.
    pub error: Option<String>,
}

/// The profiling transport; clones share their recordings (the client keeps one, the
/// tools get another, as `kg_graph_tools::call` takes both).
#[derive(Clone)]
pub struct Profiled {
    agent: ureq::Agent,
    state: Arc<Mutex<State>>,
    /// Whether reads go as `PROFILE`; [`Profiled::recording`] sends everything as it is.
    profiling: bool,
}

#[derive(Default)]
struct State {
    recorded: Vec<Recorded>,
    /// Explicit transactions begun READ through this transport: statements in them may be
    /// profiled.
    read_transactions: HashSet<String>,
}

/// How a Query API request runs its statement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Endpoint {
    /// `POST /db/{db}/query/v2`.
    AutoCommit,
    /// `POST /db/{db}/query/v2/tx`: begins a transaction, maybe with a statement.
    Begin,
    /// `POST /db/{db}/query/v2/tx/{id}`: a statement in an open transaction.
    InTransaction,
    /// Commit, rollback, anything else.
    Other,
}

impl Profiled {
    pub fn new() -> Profiled {
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            // No statement of the tools runs anywhere near this; a server that stops
            // answering ends the test instead of hanging it.
            .timeout_global(Some(Duration::from_secs(120)))
            .build()
            .into();
        Profiled {
            agent,
            state: Arc::default(),
            profiling: true,
        }
    }

    /// The same transport without `PROFILE`: every request goes as it is, and each
    /// statement is recorded with `db_hits: None` (a plain blocking transport that lists
    /// what was sent, for timing: `benches/graph_scale_latency.rs`).
    pub fn recording() -> Profiled {
        Profiled {
            profiling: false,
            ..Profiled::new()
        }
    }

    /// The statements recorded since the last call, in the order they were sent.
    pub fn take(&self) -> Vec<Recorded> {
        std::mem::take(&mut self.lock().recorded)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn http(
        &self,
        request: &HttpRequest,
        body: Option<&[u8]>,
    ) -> Result<HttpResponse, TransportError> {
        let mut builder = ureq::http::Request::builder()
            .method(match request.method {
                Method::Get => "GET",
                Method::Post => "POST",
                Method::Delete => "DELETE",
            })
            .uri(&request.url);
        for (name, value) in &request.headers {
            builder = builder.header(name, value);
        }
        let built = builder
            .body(body.unwrap_or_default().to_vec())
            .map_err(|e| error(TransportErrorKind::Other, e))?;
        let mut response = self.agent.run(built).map_err(|e| {
            let kind = match e {
                ureq::Error::Timeout(_) => TransportErrorKind::Timeout,
                ureq::Error::Io(_) | ureq::Error::HostNotFound | ureq::Error::ConnectionFailed => {
                    TransportErrorKind::Connect
                }
                _ => TransportErrorKind::Other,
            };
            error(kind, e)
        })?;
        let status = response.status().as_u16();
        let headers = response
            .headers()
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_str().unwrap_or_default().to_string()))
            .collect();
        let body = response
            .body_mut()
            .with_config()
            .limit(256 * 1024 * 1024)
            .read_to_vec()
            .map_err(|e| error(TransportErrorKind::Other, e))?;
        Ok(HttpResponse {
            status,
            headers,
            body,
        })
    }

    fn record(&self, statement: &str, plan: Option<&Value>, response: &HttpResponse) {
        let error = serde_json::from_slice::<Value>(&response.body)
            .ok()
            .and_then(|body| body["errors"][0]["code"].as_str().map(str::to_string));
        self.lock().recorded.push(Recorded {
            statement: statement.to_string(),
            db_hits: plan.map(db_hits),
            rows: plan.and_then(|p| p["records"].as_u64()),
            error,
        });
    }

    /// A transaction a READ begin opened, remembered so statements in it may be profiled.
    fn remember_read_transaction(&self, answer: &Value) {
        let id = match &answer["transaction"]["id"] {
            Value::String(id) => id.clone(),
            Value::Number(id) => id.to_string(),
            _ => return,
        };
        self.lock().read_transactions.insert(id);
    }
}

impl Default for Profiled {
    fn default() -> Self {
        Profiled::new()
    }
}

impl Transport for Profiled {
    fn send(&self, request: HttpRequest) -> Result<HttpResponse, TransportError> {
        let endpoint = endpoint(&request);
        let parsed: Option<Value> = match (&request.body, endpoint) {
            (Some(body), Endpoint::AutoCommit | Endpoint::Begin | Endpoint::InTransaction) => {
                serde_json::from_slice(body).ok()
            }
            _ => None,
        };
        let Some(body) = parsed.filter(|b| b["statement"].is_string()) else {
            let response = self.http(&request, request.body.as_deref())?;
            if request.method == Method::Delete || request.url.ends_with("/commit") {
                // A transaction ended: forget it (ids are not reused, but keep the set small).
                let id = transaction_id(&request.url);
                self.lock()
                    .read_transactions
                    .retain(|t| Some(t.as_str()) != id);
            }
            return Ok(response);
        };
        let statement = body["statement"].as_str().unwrap_or_default().to_string();
        let read = match endpoint {
            Endpoint::AutoCommit | Endpoint::Begin => body["accessMode"] == "READ",
            Endpoint::InTransaction => transaction_id(&request.url)
                .is_some_and(|id| self.lock().read_transactions.contains(id)),
            Endpoint::Other => false,
        };
        if !(self.profiling && read && is_plain_read(&statement)) {
            let response = self.http(&request, request.body.as_deref())?;
            if endpoint == Endpoint::Begin
                && body["accessMode"] == "READ"
                && let Ok(answer) = serde_json::from_slice::<Value>(&response.body)
            {
                self.remember_read_transaction(&answer);
            }
            self.record(&statement, None, &response);
            return Ok(response);
        }

        let mut profiled_body = body.clone();
        profiled_body["statement"] = Value::String(format!("PROFILE {statement}"));
        let profiled_bytes = serde_json::to_vec(&profiled_body).unwrap_or_default();
        let response = self.http(&request, Some(&profiled_bytes))?;
        let answer: Option<Value> = serde_json::from_slice(&response.body).ok();
        let refused = answer
            .as_ref()
            .is_none_or(|a| a["errors"].as_array().is_some_and(|e| !e.is_empty()));
        if refused && endpoint != Endpoint::InTransaction {
            // Perhaps the statement cannot be profiled; a refused request changed nothing,
            // so it goes again as it was, and its own answer (success or error) stands.
            let response = self.http(&request, request.body.as_deref())?;
            if endpoint == Endpoint::Begin
                && let Ok(answer) = serde_json::from_slice::<Value>(&response.body)
            {
                self.remember_read_transaction(&answer);
            }
            self.record(&statement, None, &response);
            return Ok(response);
        }
        let Some(mut answer) = answer else {
            self.record(&statement, None, &response);
            return Ok(response);
        };
        if endpoint == Endpoint::Begin {
            self.remember_read_transaction(&answer);
        }
        let plan = answer
            .as_object_mut()
            .and_then(|a| a.remove("profiledQueryPlan"));
        self.record(&statement, plan.as_ref(), &response);
        // The answer without the plan, as the unprofiled statement would have had it.
        let body = serde_json::to_vec(&answer).unwrap_or(response.body);
        Ok(HttpResponse {
            status: response.status,
            headers: response.headers,
            body,
        })
    }
}

fn error(kind: TransportErrorKind, e: impl std::fmt::Display) -> TransportError {
    TransportError {
        kind,
        message: e.to_string(),
    }
}

/// Which Query API endpoint `request` goes to (see [`Endpoint`]).
fn endpoint(request: &HttpRequest) -> Endpoint {
    if request.method != Method::Post {
        return Endpoint::Other;
    }
    let path = request.url.split('?').next().unwrap_or_default();
    let Some((_, rest)) = path.split_once("/query/v2") else {
        return Endpoint::Other;
    };
    match rest.trim_end_matches('/') {
        "" => Endpoint::AutoCommit,
        "/tx" => Endpoint::Begin,
        tx if tx.starts_with("/tx/") && !tx.ends_with("/commit") => Endpoint::InTransaction,
        _ => Endpoint::Other,
    }
}

/// The transaction id in a `…/query/v2/tx/{id}[/commit]` URL.
fn transaction_id(url: &str) -> Option<&str> {
    let path = url.split('?').next()?;
    let (_, rest) = path.split_once("/query/v2/tx/")?;
    rest.split('/').next().filter(|id| !id.is_empty())
}

/// Keywords that begin a statement `PROFILE` cannot or should not wrap: plans and
/// profiles already, and schema, administration and server commands.
const NOT_PROFILED: [&str; 16] = [
    "EXPLAIN",
    "PROFILE",
    "SHOW",
    "CREATE",
    "DROP",
    "ALTER",
    "GRANT",
    "DENY",
    "REVOKE",
    "START",
    "STOP",
    "TERMINATE",
    "RENAME",
    "ENABLE",
    "DEALLOCATE",
    "REALLOCATE",
];

/// True for a statement to profile: its first keyword (after any `CYPHER` options) is not
/// one of [`NOT_PROFILED`] and it is not a `CALL dbms.…` administration procedure.
pub fn is_plain_read(statement: &str) -> bool {
    let mut words = strip_leading_comments(statement)
        .split(|c: char| c.is_whitespace() || c == '(')
        .filter(|w| !w.is_empty())
        .peekable();
    // `CYPHER 5 runtime=slotted MATCH …`: options are a version and `key=value` pairs.
    if words
        .peek()
        .is_some_and(|w| w.eq_ignore_ascii_case("CYPHER"))
    {
        words.next();
        while words
            .peek()
            .is_some_and(|w| w.contains('=') || w.chars().all(|c| c.is_ascii_digit() || c == '.'))
        {
            words.next();
        }
    }
    let Some(first) = words.next() else {
        return false;
    };
    if NOT_PROFILED.iter().any(|k| first.eq_ignore_ascii_case(k)) {
        return false;
    }
    let admin_procedure = first.eq_ignore_ascii_case("CALL")
        && words
            .next()
            .is_some_and(|p| p.to_ascii_lowercase().starts_with("dbms."));
    !admin_procedure
}

fn strip_leading_comments(mut text: &str) -> &str {
    loop {
        text = text.trim_start();
        if let Some(rest) = text.strip_prefix("//") {
            text = rest.split_once('\n').map_or("", |(_, after)| after);
        } else if let Some(rest) = text.strip_prefix("/*") {
            text = rest.split_once("*/").map_or("", |(_, after)| after);
        } else {
            return text;
        }
    }
}

/// `dbHits` summed over a profiled plan's operator tree.
pub fn db_hits(plan: &Value) -> u64 {
    plan["dbHits"].as_u64().unwrap_or(0)
        + plan["children"]
            .as_array()
            .map(|children| children.iter().map(db_hits).sum())
            .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn plain_reads_are_profiled_and_commands_are_not() {
        for read in [
            "MATCH (n) RETURN n",
            "  // a comment\nMATCH (n) RETURN n",
            "CALL db.labels() YIELD label RETURN label",
            "CYPHER 5 MATCH (n) RETURN n",
            "CYPHER runtime=slotted MATCH (n) RETURN n",
            "WITH 1 AS x RETURN x",
            "UNWIND [1] AS x RETURN x",
        ] {
            assert!(is_plain_read(read), "{read}");
        }
        for command in [
            "EXPLAIN MATCH (n) RETURN n",
            "profile MATCH (n) RETURN n",
            "SHOW CONSTRAINTS YIELD *",
            "CREATE INDEX x FOR (n:A) ON (n.b)",
            "DROP INDEX x IF EXISTS",
            "CYPHER 5 EXPLAIN MATCH (n) RETURN n",
            "CALL dbms.components()",
            "/* c */ SHOW INDEXES",
            "",
        ] {
            assert!(!is_plain_read(command), "{command}");
        }
    }

    #[test]
    fn endpoints_and_transaction_ids() {
        let post = |url: &str| HttpRequest {
            method: Method::Post,
            url: url.to_string(),
            headers: vec![],
            body: None,
        };
        let base = "http://127.0.0.1:7474/db/neo4j/query/v2";
        assert_eq!(endpoint(&post(base)), Endpoint::AutoCommit);
        assert_eq!(endpoint(&post(&format!("{base}/tx"))), Endpoint::Begin);
        assert_eq!(
            endpoint(&post(&format!("{base}/tx/ab12"))),
            Endpoint::InTransaction
        );
        assert_eq!(
            endpoint(&post(&format!("{base}/tx/ab12/commit"))),
            Endpoint::Other
        );
        assert_eq!(endpoint(&post("http://h/db/neo4j/tx")), Endpoint::Other);
        assert_eq!(
            transaction_id(&format!("{base}/tx/ab12/commit")),
            Some("ab12")
        );
        assert_eq!(transaction_id(&format!("{base}/tx")), None);
    }

    /// The shape Neo4j 5.26 answered with (trimmed): hits on every level count.
    #[test]
    fn hits_are_summed_over_the_operator_tree() {
        let plan = json!({
            "operatorType": "ProduceResults@neo4j", "dbHits": 0, "records": 1,
            "children": [{
                "operatorType": "Expand(All)@neo4j", "dbHits": 28, "records": 24,
                "children": [{
                    "operatorType": "Filter@neo4j", "dbHits": 10, "records": 1,
                    "children": [{"operatorType": "NodeByLabelScan@neo4j", "dbHits": 11, "records": 10, "children": []}]
                }]
            }]
        });
        assert_eq!(db_hits(&plan), 49);
    }
}
