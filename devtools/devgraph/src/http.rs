//! The Query API v2 over HTTP: discovery at `/`, auto-commit at `/db/{db}/query/v2`,
//! explicit transactions under `/db/{db}/query/v2/tx`, Basic auth on every query route.

use crate::errors::Neo4jError;
use crate::graph::{AccessMode, Graph, Limits, Shape};
use crate::values::Format;
use base64::Engine;
use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::{Method, Request, Response, StatusCode};
use serde_json::{Map, Value as Json, json};
use std::sync::Arc;

const MAX_BODY: usize = 16 * 1024 * 1024;

pub struct Server {
    pub graph: Graph,
    pub database: String,
    pub user: String,
    pub password: String,
    /// Refuse a request for an explicit transaction that does not send back the
    /// `neo4j-cluster-affinity` its begin answered, as a cluster member that does not know
    /// the transaction would (on by default; `--affinity-check false`).
    pub affinity_check: bool,
}

impl Server {
    pub fn new(graph: Graph, database: &str, user: &str, password: &str) -> Server {
        Server {
            graph,
            database: database.into(),
            user: user.into(),
            password: password.into(),
            affinity_check: true,
        }
    }
}

/// The response header that ties an explicit transaction to the cluster member holding it.
pub const AFFINITY: &str = "neo4j-cluster-affinity";

pub type Body = Full<Bytes>;

/// A successful answer: status, body (none: empty) and the affinity header to send.
struct Answer {
    status: u16,
    body: Option<Json>,
    affinity: Option<String>,
}

pub async fn handle(
    server: Arc<Server>,
    request: Request<hyper::body::Incoming>,
) -> Response<Body> {
    let format = if request
        .headers()
        .get(hyper::header::ACCEPT)
        .and_then(|a| a.to_str().ok())
        .is_some_and(|a| a.contains("application/vnd.neo4j.query"))
    {
        Format::Typed
    } else {
        Format::Plain
    };
    // The whole body is read before anything is answered, as Neo4j's HTTP server does: a
    // 401 sent while the client is still writing its body makes the client's write fail
    // and hides the 401 from it.
    let (parts, body) = request.into_parts();
    let bytes = match Limited::new(body, MAX_BODY).collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(e) => {
            let error = Neo4jError::bad_request(format!("could not read the request body: {e}"));
            return respond(error.status, Some(&error.body()), Format::Plain, None);
        }
    };
    match route(server, Request::from_parts(parts, bytes), format).await {
        Ok(answer) => respond(
            answer.status,
            answer.body.as_ref(),
            format,
            answer.affinity.as_deref(),
        ),
        Err(e) => respond(e.status, Some(&e.body()), Format::Plain, None),
    }
}

fn respond(
    status: u16,
    body: Option<&Json>,
    format: Format,
    affinity: Option<&str>,
) -> Response<Body> {
    let content_type = match format {
        Format::Typed => "application/vnd.neo4j.query",
        Format::Plain => "application/json",
    };
    let text = body.map(Json::to_string).unwrap_or_default();
    let mut response = Response::new(Full::new(Bytes::from(text)));
    *response.status_mut() =
        StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    response.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static(content_type),
    );
    if let Some(value) = affinity.and_then(|a| hyper::header::HeaderValue::from_str(a).ok()) {
        response.headers_mut().insert(AFFINITY, value);
    }
    response
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    AutoCommit,
    Begin,
    Run,
    Commit,
    Rollback,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::AutoCommit => "auto-commit",
            Kind::Begin => "begin",
            Kind::Run => "run",
            Kind::Commit => "commit",
            Kind::Rollback => "rollback",
        }
    }
}

async fn route(
    server: Arc<Server>,
    request: Request<Bytes>,
    format: Format,
) -> Result<Answer, Neo4jError> {
    let method = request.method().clone();
    let path = request.uri().path().to_string();
    let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    if segments.is_empty() {
        return match method {
            Method::GET => Ok(Answer {
                status: 200,
                body: Some(discovery(&request)),
                affinity: None,
            }),
            _ => Err(Neo4jError::new(
                405,
                "Neo.ClientError.Request.Invalid",
                "use GET on /",
            )),
        };
    }
    let ["db", database, "query", "v2", rest @ ..] = segments.as_slice() else {
        return Err(Neo4jError::new(
            404,
            "Neo.ClientError.Request.Invalid",
            format!("no such endpoint: {path}"),
        ));
    };
    authorize(&server, &request)?;
    let database = percent_decode(database);
    if database != server.database {
        return Err(Neo4jError::new(
            404,
            "Neo.ClientError.Database.DatabaseNotFound",
            format!("Database does not exist. Database name: '{database}'."),
        ));
    }
    let (kind, tx_id) = match (&method, rest) {
        (&Method::POST, []) => (Kind::AutoCommit, None),
        (&Method::POST, ["tx"]) => (Kind::Begin, None),
        (&Method::POST, ["tx", id]) => (Kind::Run, Some(percent_decode(id))),
        (&Method::POST, ["tx", id, "commit"]) => (Kind::Commit, Some(percent_decode(id))),
        (&Method::DELETE, ["tx", id]) => (Kind::Rollback, Some(percent_decode(id))),
        (method, _) => {
            return Err(Neo4jError::new(
                405,
                "Neo.ClientError.Request.Invalid",
                format!("{method} is not supported on {path}"),
            ));
        }
    };
    let marked_test = crate::capture::marked_test(request.headers());
    let typed_parameters = request
        .headers()
        .get(hyper::header::CONTENT_TYPE)
        .and_then(|c| c.to_str().ok())
        .is_some_and(|c| c.contains("application/vnd.neo4j.query"));
    let affinity_sent = request
        .headers()
        .get(AFFINITY)
        .and_then(|a| a.to_str().ok())
        .map(str::to_string);
    let body = read_json(request).await?;
    let statement = match body.get("statement") {
        None | Some(Json::Null) => None,
        Some(Json::String(s)) => Some(s.clone()),
        Some(_) => return Err(Neo4jError::bad_request("statement must be a string")),
    };
    let parameters = match body.get("parameters") {
        None | Some(Json::Null) => Map::new(),
        Some(Json::Object(p)) => p.clone(),
        Some(_) => return Err(Neo4jError::bad_request("parameters must be a JSON object")),
    };
    let include_counters = match body.get("includeCounters") {
        None | Some(Json::Null) => false,
        Some(Json::Bool(b)) => *b,
        Some(other) => {
            return Err(Neo4jError::bad_request(format!(
                "includeCounters must be true or false, not {other}"
            )));
        }
    };
    let bookmarks: Vec<String> = match body.get("bookmarks") {
        None | Some(Json::Null) => Vec::new(),
        Some(Json::Array(items)) => items
            .iter()
            .map(|b| {
                b.as_str().map(str::to_string).ok_or_else(|| {
                    Neo4jError::bad_request(format!("bookmarks must be strings, not {b}"))
                })
            })
            .collect::<Result<_, _>>()?,
        Some(other) => {
            return Err(Neo4jError::bad_request(format!(
                "bookmarks must be a list of strings, not {other}"
            )));
        }
    };
    let requested_mode = AccessMode::parse(body.get("accessMode").and_then(Json::as_str))?;
    // The Query API's transaction configuration: `maxExecutionTime` in seconds. Neo4j
    // 5.26.30 (observed) takes any number, and enforces it only on a transaction begun
    // with it (`POST …/tx`): an auto-commit request's is accepted and ignored (a statement
    // that runs 8 s under `maxExecutionTime: 2` completes), as are 0 and negative values.
    let limit = match body.get("maxExecutionTime") {
        None | Some(Json::Null) => None,
        Some(Json::Number(n)) => n.as_f64().filter(|s| *s > 0.0 && *s < 1e9),
        Some(other) => {
            return Err(Neo4jError::bad_request(format!(
                "maxExecutionTime must be a number of seconds, not {other}"
            )));
        }
    };
    let limits = Limits {
        max_execution_time: limit.filter(|_| kind == Kind::Begin),
    };
    let shape = Shape {
        format,
        typed_parameters,
        include_counters,
    };
    // A request for an explicit transaction: the transaction's mode and bookmarks, and the
    // affinity it must carry. A request without the right one reached "another cluster
    // member", which does not know the transaction.
    let tx = tx_id.as_deref().and_then(|id| server.graph.tx_info(id));
    if let (Some(id), Some(info)) = (&tx_id, &tx)
        && server.affinity_check
        && affinity_sent.as_deref() != Some(info.affinity.as_str())
    {
        return Err(Neo4jError::tx_not_found(id));
    }
    let mode = tx.as_ref().map_or(requested_mode, |t| t.mode);
    let statement = statement.filter(|s| kind == Kind::AutoCommit || !s.trim().is_empty());
    if let Some(statement) = &statement {
        crate::capture::observe(
            statement,
            crate::capture::Received {
                read: mode == AccessMode::Read,
                marked_test,
                typed: format == Format::Typed,
            },
        );
    }
    let bookmarks_in = match &tx {
        Some(info) => info.bookmarks_in.clone(),
        None => bookmarks.clone(),
    };
    let observation = statement
        .as_deref()
        .is_some_and(crate::requests::is_observation);
    let server2 = server.clone();
    let statement2 = statement.clone();
    let tx_id2 = tx_id.clone();
    // Grafeo is synchronous: keep its work off the reactor threads.
    let run = move || -> Result<(u16, Json), Neo4jError> {
        let graph = &server2.graph;
        graph.expire_idle();
        let first = statement2.as_deref().map(|s| (s, &parameters));
        let id = tx_id2.as_deref().unwrap_or_default();
        match kind {
            Kind::AutoCommit => {
                let statement = statement2
                    .as_deref()
                    .filter(|s| !s.is_empty())
                    .ok_or_else(|| Neo4jError::bad_request("statement cannot be null or empty"))?;
                graph.bookmarks.wait_for(&bookmarks, &server2.database)?;
                Ok((
                    202,
                    graph.run_limited(statement, &parameters, mode, shape, limits)?,
                ))
            }
            Kind::Begin => {
                graph.bookmarks.wait_for(&bookmarks, &server2.database)?;
                Ok((
                    202,
                    graph.begin_limited(mode, first, shape, limits, &bookmarks)?,
                ))
            }
            Kind::Run => Ok((202, graph.run_in(id, first, shape)?)),
            Kind::Commit => Ok((202, graph.commit(id, first, shape)?)),
            Kind::Rollback => Ok((200, graph.rollback(id)?)),
        }
    };
    let result = tokio::task::spawn_blocking(run)
        .await
        .map_err(|e| Neo4jError::new(500, "Neo.DatabaseError.General.UnknownError", e.to_string()));
    let result = result.and_then(|r| r);
    let transaction = match (&result, &tx_id) {
        (_, Some(id)) => Some(id.clone()),
        (Ok((_, body)), None) => body["transaction"]["id"].as_str().map(str::to_string),
        _ => None,
    };
    if !observation {
        let (status, error, bookmark_out) = match &result {
            Ok((status, body)) => (
                *status,
                None,
                body["bookmarks"][0].as_str().map(str::to_string),
            ),
            Err(e) => (e.status, Some(e.code.to_string()), None),
        };
        let row = server.graph.requests.record(crate::requests::Entry {
            kind: kind.name(),
            statement,
            access_mode: match mode {
                AccessMode::Read => "READ",
                AccessMode::Write => "WRITE",
            },
            transaction: transaction.clone().filter(|_| kind != Kind::AutoCommit),
            bookmarks_in,
            bookmark_out,
            status,
            error,
        });
        crate::capture::record_request(&row);
    }
    let (status, body) = result?;
    // Every answer about an open (or just finished) transaction names its member.
    let affinity = match kind {
        Kind::AutoCommit => None,
        Kind::Begin => transaction
            .as_deref()
            .and_then(|id| server.graph.tx_info(id))
            .map(|t| t.affinity),
        _ => tx.map(|t| t.affinity),
    };
    Ok(Answer {
        status,
        body: (kind != Kind::Rollback).then_some(body),
        affinity,
    })
}

fn authorize(server: &Server, request: &Request<Bytes>) -> Result<(), Neo4jError> {
    let header = request
        .headers()
        .get(hyper::header::AUTHORIZATION)
        .and_then(|h| h.to_str().ok())
        .ok_or_else(Neo4jError::unauthorized)?;
    let encoded = header
        .strip_prefix("Basic ")
        .ok_or_else(Neo4jError::unauthorized)?;
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(encoded.trim())
        .ok()
        .and_then(|d| String::from_utf8(d).ok())
        .ok_or_else(Neo4jError::unauthorized)?;
    match decoded.split_once(':') {
        Some((user, password)) if user == server.user && password == server.password => Ok(()),
        _ => Err(Neo4jError::unauthorized()),
    }
}

async fn read_json(request: Request<Bytes>) -> Result<Map<String, Json>, Neo4jError> {
    let bytes = request.into_body();
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(Map::new());
    }
    match serde_json::from_slice::<Json>(&bytes) {
        Ok(Json::Object(map)) => Ok(map),
        Ok(_) => Err(Neo4jError::bad_request(
            "the request body must be a JSON object",
        )),
        Err(e) => Err(Neo4jError::bad_request(format!(
            "the request body is not valid JSON: {e}"
        ))),
    }
}

fn percent_decode(segment: &str) -> String {
    let bytes = segment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(hex) = segment.get(i + 1..i + 3)
            && let Ok(b) = u8::from_str_radix(hex, 16)
        {
            out.push(b);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Neo4j's discovery document, pointing at this server.
fn discovery(request: &Request<Bytes>) -> Json {
    let host = request
        .headers()
        .get(hyper::header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("localhost:7474");
    json!({
        "query": format!("http://{host}/db/{{databaseName}}/query/v2"),
        "neo4j_version": "5.26.0",
        "neo4j_edition": "devgraph (Grafeo)",
    })
}
