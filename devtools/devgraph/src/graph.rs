//! The database side: auto-commit statements, explicit transactions with idle expiry, READ
//! enforcement. Everything here is synchronous; the HTTP layer calls it off the reactor.

use crate::errors::{Neo4jError, from_grafeo};
use crate::values::{Format, from_json, to_json};
use grafeo::GrafeoDB;
use grafeo::session::Session;
use serde_json::{Map, Value as Json, json};
use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime};

/// Like Neo4j's default `server.queries.transaction_idle_timeout`… shortened for development.
pub const TX_IDLE_TIMEOUT: Duration = Duration::from_secs(60);

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum AccessMode {
    Read,
    Write,
}

impl AccessMode {
    pub fn parse(text: Option<&str>) -> Result<AccessMode, Neo4jError> {
        match text.map(str::to_ascii_uppercase).as_deref() {
            None | Some("WRITE") => Ok(AccessMode::Write),
            Some("READ") => Ok(AccessMode::Read),
            Some(other) => Err(Neo4jError::bad_request(format!(
                "accessMode must be READ or WRITE, not {other}"
            ))),
        }
    }
}

struct OpenTx {
    session: Session,
    mode: AccessMode,
    expires: Instant,
    limits: Limits,
}

/// What a client asked to bound a statement with.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Limits {
    /// The Query API's `maxExecutionTime`, in seconds.
    pub max_execution_time: Option<f64>,
}

pub struct Graph {
    db: GrafeoDB,
    /// Auto-commit WRITE statements run one at a time. Neo4j makes a writer wait for the
    /// locks it needs; Grafeo instead aborts the later of two conflicting writers. Waiting
    /// here gives clients Neo4j's behaviour for hot nodes (an account many payments
    /// debit) instead of a storm of write conflicts.
    writes: Mutex<()>,
    transactions: Mutex<HashMap<String, OpenTx>>,
    next_tx: AtomicU64,
}

impl Graph {
    pub fn new(db: GrafeoDB) -> Self {
        Graph {
            db,
            writes: Mutex::new(()),
            transactions: Mutex::new(HashMap::new()),
            next_tx: AtomicU64::new(1),
        }
    }

    pub fn db(&self) -> &GrafeoDB {
        &self.db
    }

    /// Runs one statement in its own transaction; the result body of the Query API.
    pub fn run(
        &self,
        statement: &str,
        parameters: &Map<String, Json>,
        mode: AccessMode,
        format: Format,
    ) -> Result<Json, Neo4jError> {
        self.run_limited(statement, parameters, mode, format, Limits::default())
    }

    /// [`Graph::run`] bounded by the client's `limits`.
    pub fn run_limited(
        &self,
        statement: &str,
        parameters: &Map<String, Json>,
        mode: AccessMode,
        format: Format,
        limits: Limits,
    ) -> Result<Json, Neo4jError> {
        let started = std::time::Instant::now();
        let mut session = self.db.session();
        let _serialised = (mode == AccessMode::Write)
            .then(|| self.writes.lock().unwrap_or_else(|p| p.into_inner()));
        let Some(seconds) = limits
            .max_execution_time
            .filter(|_| mode == AccessMode::Write)
        else {
            return execute(&mut session, statement, parameters, mode, format, limits);
        };
        // A write with a time limit commits only within it, counted from its arrival (lock
        // waits included), as Neo4j's transaction timeout does: a statement that overran
        // (say, the process was frozen mid-statement) rolls back instead of committing
        // late. Clients rely on it to know when an unanswered write can no longer apply.
        session.begin_transaction().map_err(|e| from_grafeo(&e))?;
        let result = execute(&mut session, statement, parameters, mode, format, limits);
        if result.is_err() || started.elapsed().as_secs_f64() > seconds {
            let _ = session.rollback();
            return result.and(Err(Neo4jError::timed_out_by_client(seconds)));
        }
        session.commit().map_err(|e| from_grafeo(&e))?;
        result
    }

    pub fn begin(
        &self,
        mode: AccessMode,
        first: Option<(&str, &Map<String, Json>)>,
        format: Format,
    ) -> Result<Json, Neo4jError> {
        self.begin_limited(mode, first, format, Limits::default())
    }

    /// [`Graph::begin`] with the client's `limits` on each statement of the transaction.
    pub fn begin_limited(
        &self,
        mode: AccessMode,
        first: Option<(&str, &Map<String, Json>)>,
        format: Format,
        limits: Limits,
    ) -> Result<Json, Neo4jError> {
        let mut session = self.db.session();
        session.begin_transaction().map_err(|e| from_grafeo(&e))?;
        let mut body = match first {
            Some((statement, parameters)) => {
                match execute(&mut session, statement, parameters, mode, format, limits) {
                    Ok(body) => body,
                    Err(e) => {
                        let _ = session.rollback();
                        return Err(e);
                    }
                }
            }
            None => json!({"data": {"fields": [], "values": []}, "bookmarks": []}),
        };
        let id = format!(
            "devgraph-tx-{}",
            self.next_tx.fetch_add(1, Ordering::Relaxed)
        );
        let expires = Instant::now() + TX_IDLE_TIMEOUT;
        body["transaction"] = json!({"id": id, "expires": expires_text()});
        self.lock().insert(
            id,
            OpenTx {
                session,
                mode,
                expires,
                limits,
            },
        );
        Ok(body)
    }

    /// Runs a statement in an open transaction; a failing statement rolls it back, as Neo4j does.
    pub fn run_in(
        &self,
        id: &str,
        statement: &str,
        parameters: &Map<String, Json>,
        format: Format,
    ) -> Result<Json, Neo4jError> {
        let mut transactions = self.lock();
        let tx = transactions
            .get_mut(id)
            .ok_or_else(|| Neo4jError::tx_not_found(id))?;
        let limits = tx.limits;
        match execute(
            &mut tx.session,
            statement,
            parameters,
            tx.mode,
            format,
            limits,
        ) {
            Ok(mut body) => {
                tx.expires = Instant::now() + TX_IDLE_TIMEOUT;
                body["transaction"] = json!({"id": id, "expires": expires_text()});
                Ok(body)
            }
            Err(e) => {
                if let Some(mut tx) = transactions.remove(id) {
                    let _ = tx.session.rollback();
                }
                Err(e)
            }
        }
    }

    pub fn commit(
        &self,
        id: &str,
        last: Option<(&str, &Map<String, Json>)>,
        format: Format,
    ) -> Result<Json, Neo4jError> {
        let mut tx = self
            .lock()
            .remove(id)
            .ok_or_else(|| Neo4jError::tx_not_found(id))?;
        let body = match last {
            Some((statement, parameters)) => {
                let limits = tx.limits;
                match execute(
                    &mut tx.session,
                    statement,
                    parameters,
                    tx.mode,
                    format,
                    limits,
                ) {
                    Ok(body) => body,
                    Err(e) => {
                        let _ = tx.session.rollback();
                        return Err(e);
                    }
                }
            }
            None => json!({"data": {"fields": [], "values": []}}),
        };
        tx.session.commit().map_err(|e| from_grafeo(&e))?;
        let mut body = body;
        body["bookmarks"] = json!([format!("FB:devgraph-{id}")]);
        Ok(body)
    }

    pub fn rollback(&self, id: &str) -> Result<Json, Neo4jError> {
        let mut tx = self
            .lock()
            .remove(id)
            .ok_or_else(|| Neo4jError::tx_not_found(id))?;
        tx.session.rollback().map_err(|e| from_grafeo(&e))?;
        Ok(json!({}))
    }

    /// Rolls back transactions idle past their expiry.
    pub fn expire_idle(&self) {
        let now = Instant::now();
        let mut transactions = self.lock();
        let expired: Vec<String> = transactions
            .iter()
            .filter(|(_, t)| t.expires <= now)
            .map(|(id, _)| id.clone())
            .collect();
        for id in expired {
            if let Some(mut tx) = transactions.remove(&id) {
                let _ = tx.session.rollback();
            }
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, OpenTx>> {
        // A panic while holding the lock leaves the map usable: recover it.
        self.transactions.lock().unwrap_or_else(|p| p.into_inner())
    }
}

fn expires_text() -> String {
    let at = SystemTime::now() + TX_IDLE_TIMEOUT;
    let secs = at
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    format!("{secs}")
}

fn execute(
    session: &mut Session,
    statement: &str,
    parameters: &Map<String, Json>,
    mode: AccessMode,
    format: Format,
    limits: Limits,
) -> Result<Json, Neo4jError> {
    if let Some(planned) = crate::explain::explained(statement) {
        return crate::explain::answer(session, planned, parameters);
    }
    if let Some(profiled) = crate::explain::profiled(statement) {
        // Neo4j's PROFILE: the rows, and the plan with what running it measured.
        let started = Instant::now();
        let mut body = execute(session, profiled, parameters, mode, format, limits)?;
        let elapsed = started.elapsed();
        let rows = body["data"]["values"].as_array().map_or(0, Vec::len);
        let fields = body["data"]["fields"].clone();
        body["profiledQueryPlan"] =
            crate::explain::profile(session, profiled, parameters, rows, elapsed, fields);
        return Ok(body);
    }
    if statement.trim().is_empty() {
        return Err(Neo4jError::bad_request("statement is empty"));
    }
    // Injected transient errors (`--inject-transient`, see faults), before anything applies.
    if let Some(answer) = crate::faults::intercept(session, statement, mode == AccessMode::Write) {
        return answer;
    }
    let mut parameters = std::borrow::Cow::Borrowed(parameters);
    // Neo4j's schema procedures, which Grafeo does not have.
    let schema = crate::schema::rewrite(session, statement)?;
    if let Some((_, rows)) = &schema {
        parameters
            .to_mut()
            .insert(crate::schema::ROWS_PARAMETER.into(), rows.clone());
    }
    let statement = schema.as_ref().map_or(statement, |(s, _)| s.as_str());
    // Neo4j's vector and full-text index DDL and procedures, on Grafeo's own indexes.
    let rewritten = crate::indexes::rewrite(session, statement, &parameters)?;
    let statement = rewritten.as_deref().unwrap_or(statement);
    if mode == AccessMode::Read
        && session
            .statement_writes(statement, "cypher")
            .map_err(|e| from_grafeo(&e))?
    {
        return Err(Neo4jError::access_mode());
    }
    let mut params: HashMap<String, grafeo::Value> = parameters
        .iter()
        .map(|(k, v)| (k.clone(), from_json(v)))
        .collect();
    crate::indexes::store_vectors(&mut params);
    if let Some(seconds) = limits.max_execution_time {
        session.set_query_timeout(Some(Duration::from_secs_f64(seconds)));
    }
    // The memory budget counts from here: the statement, its rows and their JSON.
    let budget = crate::budget::QueryScope::begin();
    let out_of_memory = || {
        Neo4jError::out_of_memory(format!(
            "The allocation of more memory would use more than the limit of {} MiB a statement may use in devgraph: the statement needs more memory than it may use. Bound it (a smaller range, a LIMIT, fewer hops) or aggregate.",
            crate::budget::query_limit() / (1024 * 1024)
        ))
    };
    let result = session.execute_cypher_with_params(statement, params);
    let result = match result {
        Err(_) if budget.exceeded() => return Err(out_of_memory()),
        Err(e) => {
            let error = from_grafeo(&e);
            return Err(match limits.max_execution_time {
                Some(seconds)
                    if error.code == "Neo.ClientError.Transaction.TransactionTimedOut" =>
                {
                    Neo4jError::timed_out_by_client(seconds)
                }
                _ => error,
            });
        }
        Ok(result) => result,
    };
    let mut values: Vec<Json> = Vec::with_capacity(result.rows().len());
    for row in result.rows() {
        if budget.exceeded() {
            return Err(out_of_memory());
        }
        values.push(Json::Array(
            row.iter().map(|v| to_json(v, format)).collect(),
        ));
    }
    if budget.exceeded() {
        return Err(out_of_memory());
    }
    let c = &result.counters;
    let counters = json!({
        "containsUpdates": c.contains_updates(),
        "nodesCreated": c.nodes_created,
        "nodesDeleted": c.nodes_deleted,
        "propertiesSet": c.properties_set,
        "relationshipsCreated": c.edges_created,
        "relationshipsDeleted": c.edges_deleted,
        "labelsAdded": c.labels_added,
        "labelsRemoved": c.labels_removed,
        "indexesAdded": 0, "indexesRemoved": 0, "constraintsAdded": 0, "constraintsRemoved": 0,
        "containsSystemUpdates": false, "systemUpdates": 0,
    });
    Ok(json!({
        "data": {"fields": result.columns, "values": values},
        "counters": counters,
        "bookmarks": [],
    }))
}
