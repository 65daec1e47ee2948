//! The Query API v2 over HTTP: discovery at `/`, auto-commit at `/db/{db}/query/v2`,
//! explicit transactions under `/db/{db}/query/v2/tx`, Basic auth on every query route.

use crate::errors::Neo4jError;
use crate::graph::{AccessMode, Graph, Limits};
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
}

pub type Body = Full<Bytes>;

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
            return respond(error.status, &error.body(), Format::Plain);
        }
    };
    match route(server, Request::from_parts(parts, bytes), format).await {
        Ok((status, body)) => respond(status, &body, format),
        Err(e) => respond(e.status, &e.body(), Format::Plain),
    }
}

fn respond(status: u16, body: &Json, format: Format) -> Response<Body> {
    let content_type = match format {
        Format::Typed => "application/vnd.neo4j.query",
        Format::Plain => "application/json",
    };
    let mut response = Response::new(Full::new(Bytes::from(body.to_string())));
    *response.status_mut() =
        StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    response.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static(content_type),
    );
    response
}

async fn route(
    server: Arc<Server>,
    request: Request<Bytes>,
    format: Format,
) -> Result<(u16, Json), Neo4jError> {
    let method = request.method().clone();
    let path = request.uri().path().to_string();
    let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    if segments.is_empty() {
        return match method {
            Method::GET => Ok((200, discovery(&request))),
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
    let marked_test = crate::capture::marked_test(request.headers());
    let body = read_json(request).await?;
    let statement = body
        .get("statement")
        .and_then(Json::as_str)
        .map(str::to_string);
    let parameters = match body.get("parameters") {
        None | Some(Json::Null) => Map::new(),
        Some(Json::Object(p)) => p.clone(),
        Some(_) => return Err(Neo4jError::bad_request("parameters must be a JSON object")),
    };
    let mode = AccessMode::parse(body.get("accessMode").and_then(Json::as_str))?;
    if let Some(statement) = &statement {
        let read = mode == AccessMode::Read;
        let typed = format == Format::Typed;
        crate::capture::observe(
            statement,
            crate::capture::Received {
                read,
                marked_test,
                typed,
            },
        );
    }
    // The Query API's transaction configuration: `maxExecutionTime` in seconds.
    let limits = Limits {
        max_execution_time: match body.get("maxExecutionTime") {
            None | Some(Json::Null) => None,
            Some(Json::Number(n)) if n.as_f64().is_some_and(|s| s > 0.0 && s < 1e9) => n.as_f64(),
            Some(other) => {
                return Err(Neo4jError::bad_request(format!(
                    "maxExecutionTime must be a positive number of seconds, not {other}"
                )));
            }
        },
    };
    let rest: Vec<String> = rest.iter().map(|s| s.to_string()).collect();
    let tx_id = rest.get(1).cloned();
    let server2 = server.clone();
    // Grafeo is synchronous: keep its work off the reactor threads.
    let run = move || -> Result<(u16, Json), Neo4jError> {
        let graph = &server2.graph;
        graph.expire_idle();
        let first = statement.as_deref().map(|s| (s, &parameters));
        match (
            method,
            rest.iter()
                .map(String::as_str)
                .collect::<Vec<_>>()
                .as_slice(),
        ) {
            (Method::POST, []) => {
                let statement = statement
                    .as_deref()
                    .ok_or_else(|| Neo4jError::bad_request("a `statement` is required"))?;
                Ok((
                    202,
                    graph.run_limited(statement, &parameters, mode, format, limits)?,
                ))
            }
            (Method::POST, ["tx"]) => Ok((202, graph.begin_limited(mode, first, format, limits)?)),
            (Method::POST, ["tx", id]) => {
                let statement = statement
                    .as_deref()
                    .ok_or_else(|| Neo4jError::bad_request("a `statement` is required"))?;
                Ok((202, graph.run_in(id, statement, &parameters, format)?))
            }
            (Method::POST, ["tx", id, "commit"]) => Ok((202, graph.commit(id, first, format)?)),
            (Method::DELETE, ["tx", id]) => Ok((200, graph.rollback(id)?)),
            (method, _) => Err(Neo4jError::new(
                405,
                "Neo.ClientError.Request.Invalid",
                format!("{method} is not supported on this endpoint (tx: {tx_id:?})"),
            )),
        }
    };
    tokio::task::spawn_blocking(run).await.map_err(|e| {
        Neo4jError::new(500, "Neo.DatabaseError.General.UnknownError", e.to_string())
    })?
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
