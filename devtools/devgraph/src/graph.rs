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
        let session = self.db.session();
        let _serialised = (mode == AccessMode::Write)
            .then(|| self.writes.lock().unwrap_or_else(|p| p.into_inner()));
        execute(&session, statement, parameters, mode, format)
    }

    pub fn begin(
        &self,
        mode: AccessMode,
        first: Option<(&str, &Map<String, Json>)>,
        format: Format,
    ) -> Result<Json, Neo4jError> {
        let mut session = self.db.session();
        session.begin_transaction().map_err(|e| from_grafeo(&e))?;
        let mut body = match first {
            Some((statement, parameters)) => {
                match execute(&session, statement, parameters, mode, format) {
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
        match execute(&tx.session, statement, parameters, tx.mode, format) {
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
                match execute(&tx.session, statement, parameters, tx.mode, format) {
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
    session: &Session,
    statement: &str,
    parameters: &Map<String, Json>,
    mode: AccessMode,
    format: Format,
) -> Result<Json, Neo4jError> {
    if let Some(planned) = crate::explain::explained(statement) {
        return crate::explain::answer(session, planned, parameters);
    }
    if statement.trim().is_empty() {
        return Err(Neo4jError::bad_request("statement is empty"));
    }
    // Neo4j's vector and full-text index DDL and procedures, on Grafeo's own indexes.
    let rewritten = crate::indexes::rewrite(session, statement, parameters)?;
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
    let result = session
        .execute_cypher_with_params(statement, params)
        .map_err(|e| from_grafeo(&e))?;
    let values: Vec<Json> = result
        .rows()
        .iter()
        .map(|row| Json::Array(row.iter().map(|v| to_json(v, format)).collect()))
        .collect();
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
