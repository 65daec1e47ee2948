//! The database side: auto-commit statements, explicit transactions with idle expiry, READ
//! enforcement. Everything here is synchronous; the HTTP layer calls it off the reactor.

use crate::bookmarks::Bookmarks;
use crate::errors::{Neo4jError, from_grafeo};
use crate::requests::Requests;
use crate::values::{Format, from_json, from_typed_json, to_json};
use base64::Engine;
use grafeo::GrafeoDB;
use grafeo::session::Session;
use serde_json::{Map, Value as Json, json};
use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime};

/// Neo4j's default `server.queryapi.transaction_idle_timeout` (60 s).
pub const TX_IDLE_TIMEOUT: Duration = Duration::from_secs(60);
/// How long a request waits for a bookmark this server has not reached, by default.
pub const DEFAULT_BOOKMARK_TIMEOUT: Duration = Duration::from_secs(1);

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
    /// The `neo4j-cluster-affinity` every follow-up request must send back.
    affinity: String,
    /// The bookmarks the begin request sent.
    bookmarks_in: Vec<String>,
    /// A statement of it changed something: its commit gets a new bookmark.
    wrote: bool,
}

/// What a client asked to bound a statement with.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Limits {
    /// The Query API's `maxExecutionTime`, in seconds.
    pub max_execution_time: Option<f64>,
}

/// How a request is encoded and what its answer carries.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Shape {
    /// The answer's value format (`Accept`).
    pub format: Format,
    /// The request body is typed JSON (`Content-Type: application/vnd.neo4j.query…`): its
    /// parameters are decoded as typed values.
    pub typed_parameters: bool,
    /// `includeCounters: true`: the answer carries `counters`.
    pub include_counters: bool,
}

impl Shape {
    /// Plain parameters, counters included.
    pub fn of(format: Format) -> Shape {
        Shape {
            format,
            typed_parameters: false,
            include_counters: true,
        }
    }
}

/// What the HTTP layer needs to know about an open transaction.
#[derive(Clone, Debug)]
pub struct TxInfo {
    pub mode: AccessMode,
    pub affinity: String,
    pub bookmarks_in: Vec<String>,
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
    /// This process's name in affinities and bookmarks.
    nonce: u64,
    pub bookmarks: Bookmarks,
    pub requests: Requests,
    /// Where constraint DDL saves the constraints (with `--data`), see
    /// [`crate::constraints::save`].
    pub constraints_file: Option<std::path::PathBuf>,
    /// Neo4j's full-text indexes, which devgraph keeps itself.
    pub fulltext: crate::fulltext::Fulltext,
}

impl Graph {
    pub fn new(db: GrafeoDB) -> Self {
        let nonce = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64)
            ^ (u64::from(std::process::id()) << 32);
        Graph {
            db,
            writes: Mutex::new(()),
            transactions: Mutex::new(HashMap::new()),
            next_tx: AtomicU64::new(1),
            nonce,
            bookmarks: Bookmarks::new(nonce, DEFAULT_BOOKMARK_TIMEOUT),
            requests: Requests::default(),
            constraints_file: None,
            fulltext: crate::fulltext::Fulltext::default(),
        }
    }

    /// Waits this long for a bookmark not reached yet (default [`DEFAULT_BOOKMARK_TIMEOUT`]).
    pub fn with_bookmark_timeout(mut self, timeout: Duration) -> Self {
        self.bookmarks.timeout = timeout;
        self
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
        self.run_limited(
            statement,
            parameters,
            mode,
            Shape::of(format),
            Limits::default(),
        )
    }

    /// [`Graph::run`] bounded by the client's `limits`.
    pub fn run_limited(
        &self,
        statement: &str,
        parameters: &Map<String, Json>,
        mode: AccessMode,
        shape: Shape,
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
            let (body, changed) = execute(
                self,
                &mut session,
                statement,
                parameters,
                mode,
                shape,
                limits,
            )?;
            return Ok(self.with_bookmark(body, changed));
        };
        // A write with a time limit commits only within it, counted from its arrival (lock
        // waits included), as Neo4j's transaction timeout does: a statement that overran
        // (say, the process was frozen mid-statement) rolls back instead of committing
        // late. Clients rely on it to know when an unanswered write can no longer apply.
        session.begin_transaction().map_err(|e| from_grafeo(&e))?;
        let result = execute(
            self,
            &mut session,
            statement,
            parameters,
            mode,
            shape,
            limits,
        );
        if result.is_err() || started.elapsed().as_secs_f64() > seconds {
            let _ = session.rollback();
            return result.and(Err(Neo4jError::timed_out_by_client(seconds)));
        }
        session.commit().map_err(|e| from_grafeo(&e))?;
        let (body, changed) = result?;
        Ok(self.with_bookmark(body, changed))
    }

    /// An auto-commit answer with its bookmark: a new one when it changed something.
    fn with_bookmark(&self, mut body: Json, changed: bool) -> Json {
        let bookmark = if changed {
            self.bookmarks.committed()
        } else {
            self.bookmarks.current()
        };
        body["bookmarks"] = json!([bookmark]);
        body
    }

    pub fn begin(
        &self,
        mode: AccessMode,
        first: Option<(&str, &Map<String, Json>)>,
        format: Format,
    ) -> Result<Json, Neo4jError> {
        self.begin_limited(mode, first, Shape::of(format), Limits::default(), &[])
    }

    /// [`Graph::begin`] with the client's `limits` on each statement of the transaction,
    /// remembering the `bookmarks` the request sent.
    pub fn begin_limited(
        &self,
        mode: AccessMode,
        first: Option<(&str, &Map<String, Json>)>,
        shape: Shape,
        limits: Limits,
        bookmarks: &[String],
    ) -> Result<Json, Neo4jError> {
        let mut session = self.db.session();
        session.begin_transaction().map_err(|e| from_grafeo(&e))?;
        let (mut body, wrote) = match first {
            Some((statement, parameters)) => {
                match execute(
                    self,
                    &mut session,
                    statement,
                    parameters,
                    mode,
                    shape,
                    limits,
                ) {
                    Ok((body, changed)) => (body, changed),
                    Err(e) => {
                        let _ = session.rollback();
                        return Err(e);
                    }
                }
            }
            // Neo4j answers a begin without a statement with the transaction only.
            None => (json!({}), false),
        };
        let id = format!(
            "devgraph-tx-{}",
            self.next_tx.fetch_add(1, Ordering::Relaxed)
        );
        let affinity = base64::engine::general_purpose::STANDARD
            .encode(format!("devgraph-{:016x}:{id}", self.nonce));
        let expires = Instant::now() + TX_IDLE_TIMEOUT;
        strip_bookmarks(&mut body);
        body["transaction"] = json!({"id": id, "expires": expires_text()});
        self.lock().insert(
            id,
            OpenTx {
                session,
                mode,
                expires,
                limits,
                affinity,
                bookmarks_in: bookmarks.to_vec(),
                wrote,
            },
        );
        Ok(body)
    }

    /// The mode, affinity and bookmarks of an open transaction.
    pub fn tx_info(&self, id: &str) -> Option<TxInfo> {
        self.lock().get(id).map(|tx| TxInfo {
            mode: tx.mode,
            affinity: tx.affinity.clone(),
            bookmarks_in: tx.bookmarks_in.clone(),
        })
    }

    /// Runs a statement in an open transaction; a failing statement rolls it back, as Neo4j does.
    pub fn run_in(
        &self,
        id: &str,
        statement: Option<(&str, &Map<String, Json>)>,
        shape: Shape,
    ) -> Result<Json, Neo4jError> {
        let mut transactions = self.lock();
        let tx = transactions
            .get_mut(id)
            .ok_or_else(|| Neo4jError::tx_not_found(id))?;
        let limits = tx.limits;
        // A request without a statement keeps the transaction alive.
        let result = match statement {
            Some((statement, parameters)) => execute(
                self,
                &mut tx.session,
                statement,
                parameters,
                tx.mode,
                shape,
                limits,
            ),
            None => Ok((json!({}), false)),
        };
        match result {
            Ok((mut body, changed)) => {
                tx.wrote |= changed;
                tx.expires = Instant::now() + TX_IDLE_TIMEOUT;
                strip_bookmarks(&mut body);
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
        shape: Shape,
    ) -> Result<Json, Neo4jError> {
        let mut tx = self
            .lock()
            .remove(id)
            .ok_or_else(|| Neo4jError::tx_not_found(id))?;
        let body = match last {
            Some((statement, parameters)) => {
                let limits = tx.limits;
                match execute(
                    self,
                    &mut tx.session,
                    statement,
                    parameters,
                    tx.mode,
                    shape,
                    limits,
                ) {
                    Ok((body, changed)) => {
                        tx.wrote |= changed;
                        body
                    }
                    Err(e) => {
                        let _ = tx.session.rollback();
                        return Err(e);
                    }
                }
            }
            // Neo4j answers a commit without a statement with the bookmarks only.
            None => json!({}),
        };
        // Commits that wrote are ordered with the auto-commit writes.
        let _serialised = tx
            .wrote
            .then(|| self.writes.lock().unwrap_or_else(|p| p.into_inner()));
        tx.session.commit().map_err(|e| from_grafeo(&e))?;
        let mut body = body;
        let bookmark = if tx.wrote {
            self.bookmarks.committed()
        } else {
            self.bookmarks.current()
        };
        body["bookmarks"] = json!([bookmark]);
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

/// Answers inside an explicit transaction carry no bookmarks (Neo4j's
/// `DriverResultSerializer` writes them on commit only).
fn strip_bookmarks(body: &mut Json) {
    if let Some(object) = body.as_object_mut() {
        object.remove("bookmarks");
    }
}

/// When a transaction idle from now expires, as Neo4j writes it: an ISO-8601 instant in
/// UTC to the second (`2024-10-22T15:48:29Z`, Java's `Instant.toString()`).
fn expires_text() -> String {
    let at = SystemTime::now() + TX_IDLE_TIMEOUT;
    let secs = at
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    rfc3339(secs)
}

/// `secs` since the Unix epoch as `YYYY-MM-DDTHH:MM:SSZ`.
pub fn rfc3339(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rest = secs % 86_400;
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rest / 3_600,
        rest % 3_600 / 60,
        rest % 60
    )
}

/// Runs one statement in `session`: the answer body (without bookmarks) and whether it
/// changed anything (data or schema).
fn execute(
    graph: &Graph,
    session: &mut Session,
    statement: &str,
    parameters: &Map<String, Json>,
    mode: AccessMode,
    shape: Shape,
    limits: Limits,
) -> Result<(Json, bool), Neo4jError> {
    let format = shape.format;
    if let Some(planned) = crate::explain::explained(statement) {
        // Planned as it would run: with devgraph's element ids (and their seeks).
        if let Some(rewritten) = crate::element_ids::rewrite(planned, parameters) {
            let mut parameters = parameters.clone();
            parameters.extend(rewritten.parameters);
            return crate::explain::answer(session, &rewritten.statement, &parameters)
                .map(|b| (b, false));
        }
        return crate::explain::answer(session, planned, parameters).map(|b| (b, false));
    }
    if let Some(profiled) = crate::explain::profiled(statement) {
        // Neo4j's PROFILE: the rows, and the plan with what running it measured.
        let started = Instant::now();
        let (mut body, changed) =
            execute(graph, session, profiled, parameters, mode, shape, limits)?;
        let elapsed = started.elapsed();
        let rows = body["data"]["values"].as_array().map_or(0, Vec::len);
        let fields = body["data"]["fields"].clone();
        body["profiledQueryPlan"] =
            crate::explain::profile(session, profiled, parameters, rows, elapsed, fields);
        return Ok((body, changed));
    }
    if statement.trim().is_empty() {
        return Err(Neo4jError::bad_request("statement is empty"));
    }
    // Injected transient errors (`--inject-transient`, see faults), before anything applies.
    if let Some(answer) = crate::faults::intercept(session, statement, mode == AccessMode::Write) {
        return answer.map(|b| (b, false));
    }
    let mut parameters = std::borrow::Cow::Borrowed(parameters);
    // Full-text index DDL, DROP INDEX, and other indexes named as a full-text one.
    if let Some(changed) = crate::fulltext::ddl(
        &graph.fulltext,
        session,
        statement,
        &parameters,
        mode == AccessMode::Read,
    )? {
        let mut body = json!({"data": {"fields": [], "values": []}});
        if shape.include_counters {
            body["counters"] = counters_json(&NoCounters, 0, 0);
        }
        return Ok((body, changed));
    }
    // Rows devgraph computes itself (procedures Grafeo lacks, SHOW CONSTRAINTS), answered
    // by a statement over them so YIELD / WHERE / RETURN after the call work.
    let mut computed: Option<(String, Json)> = None;
    // A plain CREATE INDEX that Neo4j's schema rules let through, as Grafeo's DDL.
    let mut checked_ddl: Option<String> = None;
    match crate::constraints::parse(statement)? {
        Some(crate::constraints::Ddl::ShowIndexes { kind, rest }) => {
            let full_text = graph
                .fulltext
                .list()
                .iter()
                .map(crate::fulltext::FulltextIndex::show_row)
                .collect();
            computed = Some(crate::schema_rules::show(session, kind, &rest, full_text)?);
        }
        Some(ddl @ crate::constraints::Ddl::Show { .. }) => {
            if let crate::constraints::Done::Show { statement, rows } =
                crate::constraints::run(session, &ddl)?
            {
                computed = Some((statement, rows));
            }
        }
        Some(ddl) => {
            if mode == AccessMode::Read {
                return Err(Neo4jError::access_mode());
            }
            let (added, removed) = match crate::constraints::run(session, &ddl)? {
                crate::constraints::Done::Counted { added, removed } => (added, removed),
                // Grafeo runs it below.
                crate::constraints::Done::Run { statement } => {
                    checked_ddl = Some(statement);
                    (0, 0)
                }
                crate::constraints::Done::Show { .. } => {
                    return Err(Neo4jError::bad_request("not constraint DDL"));
                }
            };
            if checked_ddl.is_none() {
                if added > 0 {
                    crate::constraints::ensure_backing_indexes(graph.db(), session)?;
                }
                if added + removed > 0
                    && let Some(file) = &graph.constraints_file
                {
                    crate::constraints::save(session, file)?;
                }
                let mut body = json!({"data": {"fields": [], "values": []}});
                if shape.include_counters {
                    body["counters"] = counters_json(&NoCounters, added, removed);
                }
                return Ok((body, added + removed > 0));
            }
        }
        None => {}
    }
    if let Some((name, _)) = crate::schema::called(statement)
        && name.eq_ignore_ascii_case("db.awaitIndexes")
    {
        // devgraph's indexes are online from the moment they are created.
        let mut body = json!({"data": {"fields": [], "values": []}});
        if shape.include_counters {
            body["counters"] = counters_json(&NoCounters, 0, 0);
        }
        return Ok((body, false));
    }
    if computed.is_none()
        && let Some((name, rest)) = crate::schema::called(statement)
    {
        let answer = |columns: &[&str], rows: Json| -> Result<_, Neo4jError> {
            let rest = crate::schema::no_arguments(&name, rest)?;
            Ok(Some((
                crate::schema::rows_statement(&name, columns, rest)?,
                rows,
            )))
        };
        computed = match name.to_ascii_lowercase().as_str() {
            // Neo4j 5's `CALL db.ping()`: is the database reachable.
            "db.ping" => answer(&["success"], json!([{"success": true}]))?,
            "devgraph.requests" => {
                answer(crate::requests::COLUMNS, Json::Array(graph.requests.rows()))?
            }
            "devgraph.requests.clear" => {
                answer(&["cleared"], json!([{"cleared": graph.requests.clear()}]))?
            }
            _ => None,
        };
    }
    // Neo4j's schema procedures, which Grafeo does not have.
    if computed.is_none() {
        computed = crate::schema::rewrite(session, statement)?;
    }
    if let Some((_, rows)) = &computed {
        parameters
            .to_mut()
            .insert(crate::schema::ROWS_PARAMETER.into(), rows.clone());
    }
    let statement = computed.as_ref().map_or(statement, |(s, _)| s.as_str());
    let statement = checked_ddl.as_deref().unwrap_or(statement);
    // Neo4j's vector index DDL, and the vector and full-text index procedures.
    let rewritten = crate::indexes::rewrite(graph, session, statement, &mut parameters)?;
    let statement = rewritten.as_deref().unwrap_or(statement);
    // Neo4j-shaped element ids (`4:devgraph:<id>`), and seeks by them.
    let with_element_ids = crate::element_ids::rewrite(statement, &parameters);
    if let Some(rewritten) = &with_element_ids {
        parameters
            .to_mut()
            .extend(rewritten.parameters.iter().cloned());
    }
    let statement = with_element_ids
        .as_ref()
        .map_or(statement, |r| r.statement.as_str());
    if mode == AccessMode::Read
        && session
            .statement_writes(statement, "cypher")
            .map_err(|e| from_grafeo(&e))?
    {
        return Err(Neo4jError::access_mode());
    }
    let mut params: HashMap<String, grafeo::Value> = HashMap::with_capacity(parameters.len());
    for (name, value) in parameters.iter() {
        // devgraph's own parameters (`__devgraph_…`) are plain JSON.
        let value = if shape.typed_parameters && !name.starts_with("__devgraph_") {
            let temporal = |function: &str, text: &str| typed_temporal(session, function, text);
            from_typed_json(value, &temporal).map_err(|why| {
                Neo4jError::bad_request(format!("The typed parameter `{name}` is invalid: {why}"))
            })?
        } else {
            from_json(value)
        };
        params.insert(name.clone(), value);
    }
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
    let changed = result.counters.contains_updates();
    let fields: Vec<String> = if with_element_ids.is_some() {
        result
            .columns
            .iter()
            .map(|c| crate::element_ids::column_name(c))
            .collect()
    } else {
        result.columns.clone()
    };
    let mut body = json!({"data": {"fields": fields, "values": values}});
    if shape.include_counters {
        body["counters"] = counters_json(&result.counters, 0, 0);
    }
    Ok((body, changed))
}

/// The Query API's `counters` object.
fn counters_json<C: CounterSource>(
    c: &C,
    constraints_added: u64,
    constraints_removed: u64,
) -> Json {
    let (
        nodes_created,
        nodes_deleted,
        properties_set,
        edges_created,
        edges_deleted,
        labels_added,
        labels_removed,
    ) = c.numbers();
    let contains_updates = nodes_created
        + nodes_deleted
        + properties_set
        + edges_created
        + edges_deleted
        + labels_added
        + labels_removed
        + constraints_added
        + constraints_removed
        > 0;
    json!({
        "containsUpdates": contains_updates,
        "nodesCreated": nodes_created,
        "nodesDeleted": nodes_deleted,
        "propertiesSet": properties_set,
        "relationshipsCreated": edges_created,
        "relationshipsDeleted": edges_deleted,
        "labelsAdded": labels_added,
        "labelsRemoved": labels_removed,
        "indexesAdded": 0, "indexesRemoved": 0,
        "constraintsAdded": constraints_added, "constraintsRemoved": constraints_removed,
        "containsSystemUpdates": false, "systemUpdates": 0,
    })
}

/// Grafeo's counters, or none (constraint DDL).
trait CounterSource {
    fn numbers(&self) -> (u64, u64, u64, u64, u64, u64, u64);
}

#[derive(Default)]
struct NoCounters;

impl CounterSource for NoCounters {
    fn numbers(&self) -> (u64, u64, u64, u64, u64, u64, u64) {
        (0, 0, 0, 0, 0, 0, 0)
    }
}

impl CounterSource for grafeo_core::execution::operators::WriteCounters {
    fn numbers(&self) -> (u64, u64, u64, u64, u64, u64, u64) {
        (
            self.nodes_created,
            self.nodes_deleted,
            self.properties_set,
            self.edges_created,
            self.edges_deleted,
            self.labels_added,
            self.labels_removed,
        )
    }
}

/// A temporal text as a Grafeo value, by Grafeo's own parser (`RETURN date($v)`).
fn typed_temporal(session: &Session, function: &str, text: &str) -> Option<grafeo::Value> {
    let mut params = HashMap::new();
    params.insert("v".to_string(), grafeo::Value::from(text));
    let result = session
        .execute_cypher_with_params(&format!("RETURN {function}($v) AS v"), params)
        .ok()?;
    result
        .rows()
        .first()?
        .first()
        .cloned()
        .filter(|v| !matches!(v, grafeo::Value::Null))
}
