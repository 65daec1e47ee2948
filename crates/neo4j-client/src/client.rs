use crate::bookmarks::Bookmarks;
use crate::config::Config;
use crate::error::{ErrorKind, Neo4jError};
use crate::notifications::Notification;
use crate::transport::{HttpRequest, HttpResponse, Method, Transport, TransportErrorKind};
use crate::value::{Value, decode_plain, decode_typed};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value as Json, json};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Typed JSON keeps integers and temporal values exact; plain JSON answers are decoded too.
const ACCEPT: &str = "application/vnd.neo4j.query, application/json;q=0.9";
const AFFINITY: &str = "neo4j-cluster-affinity";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AccessMode {
    Read,
    Write,
}

impl AccessMode {
    fn as_str(self) -> &'static str {
        match self {
            AccessMode::Read => "READ",
            AccessMode::Write => "WRITE",
        }
    }
}

/// Update counters, as the Query API reports them with `includeCounters`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Counters {
    pub contains_updates: bool,
    pub nodes_created: u64,
    pub nodes_deleted: u64,
    pub properties_set: u64,
    pub relationships_created: u64,
    pub relationships_deleted: u64,
    pub labels_added: u64,
    pub labels_removed: u64,
    pub indexes_added: u64,
    pub indexes_removed: u64,
    pub constraints_added: u64,
    pub constraints_removed: u64,
    pub contains_system_updates: bool,
    pub system_updates: u64,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct QueryResult {
    pub fields: Vec<String>,
    pub rows: Vec<Vec<Value>>,
    pub counters: Option<Counters>,
    pub bookmarks: Vec<String>,
    /// The plan with its measured rows and times, for a statement run with `PROFILE`
    /// (the Query API's `profiledQueryPlan`), as the server sent it.
    pub profile: Option<Json>,
    /// The server's notifications about the statement (warnings, deprecations,
    /// performance hints), read leniently (`notifications.rs`).
    pub notifications: Vec<Notification>,
}

impl QueryResult {
    /// Rows as maps from field name to value.
    pub fn rows_as_maps(&self) -> Vec<std::collections::BTreeMap<String, Value>> {
        self.rows
            .iter()
            .map(|row| {
                self.fields
                    .iter()
                    .cloned()
                    .zip(row.iter().cloned())
                    .collect()
            })
            .collect()
    }
}

/// An open explicit transaction. Requests for it carry the server's cluster affinity.
#[derive(Debug, Clone, PartialEq)]
pub struct Transaction {
    pub id: String,
    pub expires: Option<String>,
    affinity: Option<String>,
    /// The bookmarks `begin` waited for: the commit's bookmark supersedes them.
    sent_bookmarks: Vec<String>,
}

pub struct Client<T> {
    config: Config,
    transport: T,
    /// `maxExecutionTime` (whole seconds) sent with every statement, if set.
    max_execution_time: Option<u64>,
    /// Set once the server refused the field (a Neo4j older than the Query API's
    /// transaction configuration): later requests go without it.
    max_execution_time_refused: AtomicBool,
    /// The causal chain every request waits for and every answer advances.
    bookmarks: Option<Bookmarks>,
    /// `config.auth`'s `Authorization` value, encoded once rather than per request.
    auth_header: Option<String>,
}

impl<T: Transport> Client<T> {
    pub fn new(config: Config, transport: T) -> Self {
        Client {
            auth_header: config.auth.header(),
            config,
            transport,
            max_execution_time: None,
            max_execution_time_refused: AtomicBool::new(false),
            bookmarks: None,
        }
    }

    /// Makes every request (auto-commit statements and `begin`) wait for `chain`'s
    /// bookmarks, and every answer advance it: reads see the writes made before them in
    /// the same chain, on whichever cluster member serves them.
    pub fn with_bookmarks(mut self, chain: Bookmarks) -> Self {
        self.bookmarks = Some(chain);
        self
    }

    /// The bookmarks the next request will send (empty without a chain).
    pub fn bookmarks_to_send(&self) -> Vec<String> {
        self.bookmarks
            .as_ref()
            .map(Bookmarks::current)
            .unwrap_or_default()
    }

    fn advance_bookmarks(&self, sent: &[String], result: &QueryResult) {
        if let Some(chain) = &self.bookmarks {
            chain.advance(sent, &result.bookmarks);
        }
    }

    /// Asks the server to stop each statement (auto-commit, or the transaction begun)
    /// after `limit`: the Query API's `maxExecutionTime`, in whole seconds (rounded down,
    /// at least 1). Neo4j answers a statement stopped by it with
    /// `Neo.ClientError.Transaction.TransactionTimedOutClientConfiguration`
    /// ([`Neo4jError::is_too_expensive`]). A server that refuses the field
    /// (`Neo.ClientError.Request.Invalid` naming it) gets the statement again without it.
    pub fn with_max_execution_time(mut self, limit: Option<Duration>) -> Self {
        self.max_execution_time = limit.map(|d| d.as_secs().max(1));
        self
    }

    /// For callers that send [`Client::run_request`]s themselves: true when `e` is the
    /// server refusing `maxExecutionTime`, which is then no longer sent (resend the
    /// statement; nothing ran).
    pub fn drop_refused_max_execution_time(&self, e: &Neo4jError) -> bool {
        let refused = self.max_execution_time().is_some() && refuses_max_execution_time(e);
        if refused {
            self.max_execution_time_refused
                .store(true, Ordering::Relaxed);
        }
        refused
    }

    pub fn max_execution_time(&self) -> Option<u64> {
        self.max_execution_time
            .filter(|_| !self.max_execution_time_refused.load(Ordering::Relaxed))
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Runs one statement in its own (auto-commit) transaction.
    pub fn run(
        &self,
        statement: &str,
        parameters: Map<String, Json>,
        mode: AccessMode,
    ) -> Result<QueryResult, Neo4jError> {
        let mut span = self.statement_span(statement);
        let result = self.run_unrecorded(statement, parameters, mode);
        crate::telemetry::finish(&mut span, &result);
        result
    }

    /// Runs one schema command (`CREATE INDEX|CONSTRAINT … IF NOT EXISTS`, `DROP … IF
    /// EXISTS`) in its own transaction. `IF NOT EXISTS` is not atomic in Neo4j: two
    /// transactions creating the same rule at once can both pass the check, and the second
    /// to commit is refused (see [`Neo4jError::is_schema_creation_race`]). The command is
    /// then run again, once the winner's rule is visible, so concurrent set-ups (two
    /// instances starting, two admins) all succeed; a refusal that is not that race, or
    /// that survives the second attempt, is returned.
    pub fn run_schema(&self, statement: &str) -> Result<QueryResult, Neo4jError> {
        match self.run(statement, Map::new(), AccessMode::Write) {
            Err(e) if e.is_schema_creation_race() => {
                self.run(statement, Map::new(), AccessMode::Write)
            }
            other => other,
        }
    }

    fn run_unrecorded(
        &self,
        statement: &str,
        parameters: Map<String, Json>,
        mode: AccessMode,
    ) -> Result<QueryResult, Neo4jError> {
        let (request, sent) = self.prepare_run(statement, parameters.clone(), mode);
        let answer = match self.transport.send(request) {
            // A read is safe to send again. A connection that closed under the request
            // (`Other`: Spin's `HttpProtocolError`, a kept-alive connection the server had
            // closed) is tried once more; the load runs of issue #49 met it about once in
            // thousands of requests. A write is never re-sent here: the first may have
            // committed (the action executor settles such writes by their idempotency keys).
            Err(e) if mode == AccessMode::Read && e.kind == TransportErrorKind::Other => {
                let (request, _) = self.prepare_run(statement, parameters.clone(), mode);
                self.transport.send(request)?
            }
            answer => answer?,
        };
        match self.finish_run(&sent, &answer) {
            Err(e) if self.drop_refused_max_execution_time(&e) => {
                let (request, sent) = self.prepare_run(statement, parameters, mode);
                self.finish_run(&sent, &self.transport.send(request)?)
            }
            other => other,
        }
    }

    /// The span of one statement (see `telemetry`): open it before the request is built so
    /// the request's `traceparent` names it.
    pub fn statement_span(&self, statement: &str) -> kg_telemetry::ActiveSpan {
        crate::telemetry::statement_span(
            statement,
            &self.config.database,
            &self.config.origin,
            false,
        )
    }

    /// The span of a statement sent concurrently with others (through
    /// [`Client::prepare_run`]): it does not parent the spans opened after it. Send its
    /// [`kg_telemetry::ActiveSpan::traceparent`] with the request and record the answer
    /// with [`crate::record_statement`].
    pub fn concurrent_statement_span(&self, statement: &str) -> kg_telemetry::ActiveSpan {
        crate::telemetry::statement_span(
            statement,
            &self.config.database,
            &self.config.origin,
            true,
        )
    }

    fn transaction_span(&self, operation: &str) -> kg_telemetry::ActiveSpan {
        crate::telemetry::transaction_span(operation, &self.config.database, &self.config.origin)
    }

    /// The HTTP request [`Client::run`] sends, for callers that send it themselves (e.g.
    /// several statements concurrently); decode the answer with [`parse_run_response`].
    pub fn run_request(
        &self,
        statement: &str,
        parameters: Map<String, Json>,
        mode: AccessMode,
    ) -> HttpRequest {
        self.prepare_run(statement, parameters, mode).0
    }

    /// [`Client::run_request`] and the bookmarks it sends: pass both to
    /// [`Client::finish_run`] with the answer, so the chain advances past them.
    pub fn prepare_run(
        &self,
        statement: &str,
        parameters: Map<String, Json>,
        mode: AccessMode,
    ) -> (HttpRequest, Vec<String>) {
        let sent = self.bookmarks_to_send();
        let body = RunBody {
            statement,
            parameters: &parameters,
            access_mode: mode.as_str(),
            // A READ transaction cannot write, so its counters are all zero: asking for
            // them only lengthens the answer (a count query's 120 bytes become 420, read
            // on every tool call).
            include_counters: matches!(mode, AccessMode::Write).then_some(true),
            max_execution_time: self.max_execution_time(),
            bookmarks: &sent,
        };
        // Written straight into bytes, without a `Value` tree of the body first; a map of
        // `Value`s always serialises.
        let body = serde_json::to_vec(&body).unwrap_or_default();
        let request = self.request_bytes(Method::Post, self.config.query_url(), Some(body), None);
        (request, sent)
    }

    /// Decodes the answer to a [`Client::prepare_run`] request and advances the bookmark
    /// chain past `sent`.
    pub fn finish_run(
        &self,
        sent: &[String],
        response: &HttpResponse,
    ) -> Result<QueryResult, Neo4jError> {
        let result = parse_result(response)?;
        self.advance_bookmarks(sent, &result);
        Ok(result)
    }

    /// Runs one statement so that the server enforces `maxExecutionTime`: Neo4j 5.26's
    /// Query API accepts the field on an auto-commit request and ignores it (observed: a
    /// statement ran 8 s under a 2 s limit), and enforces it on a transaction begun with
    /// it. So the statement begins a transaction (`POST …/tx`, one round trip, as
    /// auto-commit), and the transaction is then closed: rolled back for a READ (nothing
    /// to keep), committed for a WRITE. One round trip more than [`Client::run`], so it is
    /// for statements whose cost is not ours to bound (`run_read_cypher`'s); without a
    /// limit it is [`Client::run`].
    pub fn run_bounded(
        &self,
        statement: &str,
        parameters: Map<String, Json>,
        mode: AccessMode,
    ) -> Result<QueryResult, Neo4jError> {
        if self.max_execution_time().is_none() {
            return self.run(statement, parameters, mode);
        }
        let mut span = self.statement_span(statement);
        // The auto-commit request's body (limit included), sent to begin a transaction.
        let (mut request, sent) = self.prepare_run(statement, parameters, mode);
        request.url = format!("{}/tx", self.config.query_url());
        let answer = self.transport.send(request).map_err(Neo4jError::from);
        let result = answer.as_ref().map_err(Clone::clone).and_then(parse_result);
        crate::telemetry::finish(&mut span, &result);
        // A failed statement ends its transaction on the server; a successful one left it
        // open, and it is closed now (a failure to close is the server's to expire).
        if let (Ok(response), Ok(_)) = (&answer, &result)
            && let Some(tx) = begun_transaction(response, sent.clone())
        {
            match mode {
                AccessMode::Read => {
                    let _ = self.rollback(tx);
                }
                AccessMode::Write => {
                    let committed = self.commit(tx)?;
                    let mut result = result?;
                    result.bookmarks = committed.bookmarks;
                    return Ok(result);
                }
            }
        }
        result
    }

    /// Opens an explicit transaction.
    pub fn begin(&self, mode: AccessMode) -> Result<Transaction, Neo4jError> {
        let mut span = self.transaction_span("BEGIN");
        let tx = self.begin_unrecorded(mode);
        if let Err(e) = &tx {
            crate::telemetry::fail(&mut span, e);
        }
        tx
    }

    fn begin_unrecorded(&self, mode: AccessMode) -> Result<Transaction, Neo4jError> {
        let mut body = json!({ "accessMode": mode.as_str() });
        if let Some(seconds) = self.max_execution_time() {
            body["maxExecutionTime"] = json!(seconds);
        }
        let sent = self.bookmarks_to_send();
        if !sent.is_empty() {
            body["bookmarks"] = json!(sent);
        }
        let url = format!("{}/tx", self.config.query_url());
        let response = self.send(Method::Post, url, Some(body), None)?;
        let json = parse_body(&response)?;
        let tx = json
            .get("transaction")
            .ok_or_else(|| protocol("no `transaction` in the answer to begin"))?;
        let id = match tx.get("id") {
            Some(Json::String(s)) => s.clone(),
            Some(Json::Number(n)) => n.to_string(),
            _ => return Err(protocol("no transaction id in the answer to begin")),
        };
        Ok(Transaction {
            id,
            expires: tx.get("expires").and_then(Json::as_str).map(str::to_string),
            affinity: response.header(AFFINITY).map(str::to_string),
            sent_bookmarks: sent,
        })
    }

    pub fn run_in(
        &self,
        tx: &Transaction,
        statement: &str,
        parameters: Map<String, Json>,
    ) -> Result<QueryResult, Neo4jError> {
        let body =
            json!({ "statement": statement, "parameters": parameters, "includeCounters": true });
        let url = format!("{}/tx/{}", self.config.query_url(), tx.id);
        let mut span = self.statement_span(statement);
        let result = self
            .send(Method::Post, url, Some(body), Some(tx))
            .and_then(|response| parse_result(&response));
        crate::telemetry::finish(&mut span, &result);
        result
    }

    pub fn commit(&self, tx: Transaction) -> Result<QueryResult, Neo4jError> {
        let url = format!("{}/tx/{}/commit", self.config.query_url(), tx.id);
        let mut span = self.transaction_span("COMMIT");
        let result = self
            .send(Method::Post, url, Some(json!({})), Some(&tx))
            .and_then(|response| parse_result(&response));
        crate::telemetry::finish(&mut span, &result);
        let result = result?;
        self.advance_bookmarks(&tx.sent_bookmarks, &result);
        Ok(result)
    }

    pub fn rollback(&self, tx: Transaction) -> Result<(), Neo4jError> {
        let url = format!("{}/tx/{}", self.config.query_url(), tx.id);
        let mut span = self.transaction_span("ROLLBACK");
        let result = self
            .send(Method::Delete, url, None, Some(&tx))
            .and_then(|response| parse_body(&response).map(drop));
        if let Err(e) = &result {
            crate::telemetry::fail(&mut span, e);
        }
        result
    }

    fn send(
        &self,
        method: Method,
        url: String,
        body: Option<Json>,
        tx: Option<&Transaction>,
    ) -> Result<HttpResponse, Neo4jError> {
        let request = self.request(method, url, body, tx);
        Ok(self.transport.send(request)?)
    }

    fn request(
        &self,
        method: Method,
        url: String,
        body: Option<Json>,
        tx: Option<&Transaction>,
    ) -> HttpRequest {
        // Straight into bytes (the same compact JSON `Display` prints, without going
        // through `fmt::Formatter` a piece at a time); a `Value` always serialises.
        let body = body.map(|b| serde_json::to_vec(&b).unwrap_or_default());
        self.request_bytes(method, url, body, tx)
    }

    /// A request carrying `body`, JSON already written.
    fn request_bytes(
        &self,
        method: Method,
        url: String,
        body: Option<Vec<u8>>,
        tx: Option<&Transaction>,
    ) -> HttpRequest {
        let mut headers = vec![("accept".to_string(), ACCEPT.to_string())];
        if body.is_some() {
            headers.push(("content-type".to_string(), "application/json".to_string()));
        }
        if let Some(auth) = &self.auth_header {
            headers.push(("authorization".to_string(), auth.clone()));
        }
        if let Some(affinity) = tx.and_then(|t| t.affinity.clone()) {
            headers.push((AFFINITY.to_string(), affinity));
        }
        crate::telemetry::propagate(&mut headers);
        HttpRequest {
            method,
            url,
            headers,
            body,
        }
    }
}

/// The transaction an answer to `POST …/tx` opened, if it names one.
fn begun_transaction(response: &HttpResponse, sent_bookmarks: Vec<String>) -> Option<Transaction> {
    #[derive(serde::Deserialize)]
    struct Begun {
        transaction: Option<BegunTransaction>,
    }
    #[derive(serde::Deserialize)]
    struct BegunTransaction {
        id: Json,
        expires: Option<String>,
    }
    let begun: Begun = serde_json::from_slice(&response.body).ok()?;
    let tx = begun.transaction?;
    let id = match tx.id {
        Json::String(s) => s,
        Json::Number(n) => n.to_string(),
        _ => return None,
    };
    Some(Transaction {
        id,
        expires: tx.expires,
        affinity: response.header(AFFINITY).map(str::to_string),
        sent_bookmarks,
    })
}

/// The body of an auto-commit statement (Query API `POST /db/{name}/query/v2`), in the
/// field names the API documents.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RunBody<'a> {
    statement: &'a str,
    parameters: &'a Map<String, Json>,
    access_mode: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    include_counters: Option<bool>,
    /// Whole seconds (`Client::max_execution_time`).
    #[serde(skip_serializing_if = "Option::is_none")]
    max_execution_time: Option<u64>,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    bookmarks: &'a [String],
}

/// The server's answer when it does not know `maxExecutionTime` (a Neo4j before the
/// Query API's transaction configuration).
fn refuses_max_execution_time(e: &Neo4jError) -> bool {
    e.code
        .as_deref()
        .is_some_and(|c| c.starts_with("Neo.ClientError.Request."))
        && e.message.contains("maxExecutionTime")
}

fn protocol(message: &str) -> Neo4jError {
    Neo4jError::new(ErrorKind::Protocol, message)
}

/// The JSON body of a successful answer, or the error it (or its status) carries.
fn parse_body(response: &HttpResponse) -> Result<Json, Neo4jError> {
    let json: Option<Json> = serde_json::from_slice(&response.body).ok();
    if let Some(error) = json
        .as_ref()
        .and_then(|j| j.get("errors"))
        .and_then(Json::as_array)
        .and_then(|e| e.first())
    {
        let code = error
            .get("code")
            .and_then(Json::as_str)
            .unwrap_or("Neo.DatabaseError.General.UnknownError");
        let message = error
            .get("message")
            .and_then(Json::as_str)
            .unwrap_or_default();
        let mut e = Neo4jError::from_code(code, message);
        // The status wins where it is more specific than the code: Neo4j answers an expired
        // or unknown transaction with 404 and `Neo.ClientError.Request.Invalid`.
        match response.status {
            401 => e.kind = ErrorKind::Authentication,
            404 => e.kind = ErrorKind::NotFound,
            _ => {}
        }
        return Err(e);
    }
    let status_error =
        |kind, what: &str| Neo4jError::new(kind, format!("HTTP {}: {what}", response.status));
    match (response.status, json) {
        (200..=299, Some(json)) => Ok(json),
        (200..=299, None) if response.body.is_empty() => Ok(Json::Object(Map::new())),
        (200..=299, None) => Err(protocol("the answer is not JSON")),
        (401, _) => Err(status_error(
            ErrorKind::Authentication,
            "authentication failed",
        )),
        (403, _) => Err(status_error(ErrorKind::Forbidden, "forbidden")),
        (404, _) => Err(status_error(
            ErrorKind::NotFound,
            "no such database or transaction",
        )),
        (408 | 504, _) => Err(status_error(ErrorKind::Timeout, "gateway timeout")),
        (502 | 503, _) => Err(status_error(ErrorKind::Unavailable, "Neo4j is unavailable")),
        (status, _) if status >= 500 => Err(status_error(ErrorKind::Database, "server error")),
        _ => Err(status_error(ErrorKind::Protocol, "unexpected answer")),
    }
}

/// Decodes the answer to a [`Client::run_request`] request.
pub fn parse_run_response(response: &HttpResponse) -> Result<QueryResult, Neo4jError> {
    parse_result(response)
}

/// Typed JSON (`application/vnd.neo4j.query`) or plain JSON, as the answer says.
fn is_typed(response: &HttpResponse) -> bool {
    response
        .header("content-type")
        .is_some_and(|c| c.contains("vnd.neo4j.query"))
}

fn parse_result(response: &HttpResponse) -> Result<QueryResult, Neo4jError> {
    // A successful answer is read in one pass (`result_de.rs`); one that reading does not
    // expect, and every error answer, the old way, which gives the same result.
    if (200..=299).contains(&response.status)
        && let Some(result) = crate::result_de::parse(&response.body, is_typed(response))
    {
        return Ok(result);
    }
    parse_result_via_tree(response)
}

/// The reading of an answer through a `serde_json::Value` tree: the fallback of
/// [`parse_run_response`], and the reference the one-pass reading is tested and measured
/// against (not part of the API).
#[doc(hidden)]
pub fn parse_result_via_tree(response: &HttpResponse) -> Result<QueryResult, Neo4jError> {
    let json = parse_body(response)?;
    let typed = is_typed(response);
    let decode = if typed { decode_typed } else { decode_plain };
    let data = json.get("data");
    let fields = data
        .and_then(|d| d.get("fields"))
        .and_then(Json::as_array)
        .map(|f| {
            f.iter()
                .filter_map(|x| x.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    let rows = data
        .and_then(|d| d.get("values"))
        .and_then(Json::as_array)
        .map(|rows| {
            rows.iter()
                .map(|row| {
                    row.as_array()
                        .map(|r| r.iter().map(decode).collect())
                        .unwrap_or_default()
                })
                .collect()
        })
        .unwrap_or_default();
    let counters = json
        .get("counters")
        .and_then(|c| serde_json::from_value(c.clone()).ok());
    let bookmarks = json
        .get("bookmarks")
        .and_then(Json::as_array)
        .map(|b| {
            b.iter()
                .filter_map(|x| x.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    let profile = json
        .get("profiledQueryPlan")
        .filter(|p| p.is_object())
        .cloned();
    Ok(QueryResult {
        fields,
        rows,
        counters,
        bookmarks,
        profile,
        notifications: crate::notifications::parse(&json),
    })
}
