//! `POST /mcp`: kg-agent as an MCP server (kg-mcp holds the protocol). Each tool call is
//! answered by the HTTP route it mirrors, through `dispatch` itself: the same route table,
//! the same permission check and the same handler as a request to that route with this
//! caller's credential, so the two surfaces cannot drift apart.

use crate::actions::BatchFrames;
use crate::identity::Principal;
use crate::{Reply, dispatch};
use kg_agent_core::toolbox::parse_json;
use kg_http::ApiError;
use kg_http::actions::summary_json;
use kg_http::routes::Access;
use kg_mcp::{Backend, Handled, Mirror, QueryTool, server::Head};
use kg_wit::kg::action_executor::action_executor::{BatchRun, ExecutionRequest};
use kg_wit::kg::query_tools::query_tools;
use kg_wit::types::{BatchSummary, EntityOutcome};
use serde_json::Value;
use spin_sdk::http::{Method, Request, Response, ResponseOutparam};

/// What `/mcp` answers with: JSON, or a batch to stream.
pub enum Answer {
    Full(Response),
    Batch(Box<Batch>),
}

/// A streamed `action_execute`: the JSON-RPC id and progress token of the call, and the
/// batch the execute route started.
pub struct Batch {
    id: Value,
    progress_token: Value,
    modern: bool,
    execution: ExecutionRequest,
    run: BatchRun,
}

pub fn handle(request: &Request, who: &Principal) -> Answer {
    let header = |name: &str| request.header(name).and_then(|v| v.as_str());
    let head = Head {
        protocol_version: header("mcp-protocol-version"),
        method: header("mcp-method"),
        name: header("mcp-name"),
    };
    let mut backend = Mirrored { who };
    match kg_mcp::handle_post(request.body(), head, &mut backend) {
        Handled::Answer(answer) => Answer::Full(match answer.body {
            Some(body) => crate::json_response(answer.status, &body),
            None => Response::builder().status(answer.status).build(),
        }),
        Handled::Stream {
            id,
            progress_token,
            request,
            modern,
        } => match backend.start_batch(&request) {
            Ok((execution, run)) => Answer::Batch(Box::new(Batch {
                id,
                progress_token,
                modern,
                execution,
                run,
            })),
            Err((status, body)) => Answer::Full(crate::json_response(
                200,
                &kg_mcp::server::call_response(&id, status, body, modern),
            )),
        },
    }
}

/// Streams a batch as the MCP response of its call (`actions::drive`, framed by
/// [`McpFrames`]). A client that goes away cancels the chunks not yet started, as on
/// `POST /actions/…/execute` with SSE.
pub async fn stream_batch(batch: Batch, extra: &[(String, String)], out: ResponseOutparam) {
    let Batch {
        id,
        progress_token,
        modern,
        execution,
        run,
    } = batch;
    let frames = McpFrames {
        id,
        progress_token,
        modern,
    };
    crate::actions::drive(execution, run, frames, extra, out).await;
}

/// A streamed call's frames: a progress notification per entity that finished, then the
/// call's result, the batch's report.
struct McpFrames {
    id: Value,
    progress_token: Value,
    modern: bool,
}

impl McpFrames {
    fn end(&self, status: u16, body: Value) -> Vec<Vec<u8>> {
        let end = kg_mcp::server::call_response(&self.id, status, body, self.modern);
        vec![kg_mcp::server::sse_message(&end)]
    }
}

impl BatchFrames for McpFrames {
    fn started(&mut self, _: &ExecutionRequest, _: u32) -> Vec<Vec<u8>> {
        Vec::new()
    }

    fn progress(&mut self, outcome: &EntityOutcome, completed: u32, total: u32) -> Vec<Vec<u8>> {
        let message = match &outcome.failure {
            None => format!("{}: done", outcome.entity_id),
            Some(f) => format!("{}: failed: {}", outcome.entity_id, f.message),
        };
        let note = kg_mcp::server::progress(&self.progress_token, completed, total, &message);
        vec![kg_mcp::server::sse_message(&note)]
    }

    fn finished(&mut self, summary: &BatchSummary) -> Vec<Vec<u8>> {
        self.end(200, summary_json(summary))
    }

    fn failed(&mut self, error: &ApiError) -> Vec<Vec<u8>> {
        self.end(error.status, error.to_json())
    }
}

/// `GET /.well-known/oauth-protected-resource/mcp` (RFC 9728): the resource `/mcp` and,
/// when OpenID Connect is on, the issuer that grants tokens for it.
pub fn resource_metadata(request: &Request) -> Response {
    let Some(origin) = origin(request) else {
        return crate::json_response(
            404,
            &ApiError::not_found(
                "no public origin: set the `public_url` variable (the request's Host is not a host name)",
            )
            .to_json(),
        );
    };
    let settings = kg_http::auth_config::auth_config(&|name| kg_spin::variable(name).ok());
    let issuer = settings["oidc"]["issuer"].as_str();
    let scopes: Vec<&str> = settings["oidc"]["scopes"]
        .as_str()
        .map(|s| s.split_whitespace().collect())
        .unwrap_or_default();
    crate::json_response(
        200,
        &kg_mcp::authorization::metadata(&origin, issuer, &scopes),
    )
}

/// Adds `resource_metadata="…"` (MCP authorization) to a `401`'s challenge.
pub fn add_resource_metadata(challenge: &mut String, request: &Request) {
    if let Some(origin) = origin(request) {
        challenge.push_str(", ");
        challenge.push_str(&kg_mcp::authorization::challenge_parameter(&origin));
    }
}

/// Whether a path's answers may name the app's own URL (see `origin`).
pub fn names_own_url(path: &str) -> bool {
    path.trim_end_matches('/') == "/mcp" || path.starts_with("/.well-known/")
}

fn origin(request: &Request) -> Option<String> {
    let header = |name: &str| request.header(name).and_then(|v| v.as_str());
    let configured = kg_spin::variable("public_url").ok();
    kg_mcp::authorization::origin(
        configured.as_deref(),
        header("host"),
        header("x-forwarded-proto"),
    )
}

struct Mirrored<'a> {
    who: &'a Principal,
}

impl Mirrored<'_> {
    /// The execute route, asked for a stream: the batch it started, or its refusal
    /// (status and JSON error) exactly as the route answers it.
    fn start_batch(&self, mirror: &Mirror) -> Result<(ExecutionRequest, BatchRun), (u16, Value)> {
        let refused = |e: ApiError| (e.status, e.to_json());
        let route = self.admit(mirror).map_err(refused)?;
        let kg_http::Route::ExecuteAction {
            entity_type,
            action,
        } = route
        else {
            return Err(refused(ApiError::new(
                500,
                "internal",
                "only an execute streams",
            )));
        };
        let request = mirrored_request(mirror, Some(kg_http::sse::CONTENT_TYPE));
        match crate::actions::execute(&request, self.who, &entity_type, &action).map_err(refused)? {
            crate::actions::Execution::Stream(execution, run) => Ok((execution, run)),
            crate::actions::Execution::Done(response) => Err((
                *response.status(),
                serde_json::from_slice(response.body()).unwrap_or(Value::Null),
            )),
        }
    }

    fn admit(&self, mirror: &Mirror) -> Result<kg_http::Route, ApiError> {
        let path = mirror.path.split('?').next().unwrap_or_default();
        let route = kg_http::route(mirror.method, path)?;
        if let Access::AnyOf(permissions) = route.access() {
            self.who.require_any(permissions)?;
        }
        Ok(route)
    }
}

impl Backend for Mirrored<'_> {
    fn query_tools(&mut self) -> Result<Vec<QueryTool>, String> {
        Ok(query_tools::list_tools()
            .into_iter()
            .map(|t| QueryTool {
                name: t.name,
                description: t.description,
                input_schema: parse_json(&t.parameters_schema),
            })
            .collect())
    }

    fn permitted(&mut self, route: &Mirror) -> bool {
        self.admit(route).is_ok()
    }

    fn call(&mut self, mirror: &Mirror) -> (u16, Value) {
        let answer = self.admit(mirror).and_then(|route| {
            let request = mirrored_request(mirror, None);
            // An MCP client is a model's host: its answers are for the model.
            match crate::audience::for_model(|| dispatch(&request, route, self.who.clone()))? {
                Reply::Full(response) => Ok(response),
                // No mirrored request asks for a stream (kg-mcp refuses `stream`, and no
                // `Accept: text/event-stream` is set).
                _ => Err(ApiError::new(
                    500,
                    "internal",
                    "the route answered with a stream, which this tool cannot relay",
                )),
            }
        });
        match answer {
            Ok(response) => (
                *response.status(),
                serde_json::from_slice(response.body()).unwrap_or(Value::Null),
            ),
            Err(e) => (e.status, e.to_json()),
        }
    }
}

/// The HTTP request a tool call mirrors, with `accept` when the route is to stream.
fn mirrored_request(mirror: &Mirror, accept: Option<&str>) -> Request {
    let method = if mirror.method == "GET" {
        Method::Get
    } else {
        Method::Post
    };
    let body = mirror
        .body
        .as_ref()
        .map(|b| b.to_string().into_bytes())
        .unwrap_or_default();
    let mut request = Request::builder()
        .method(method)
        .uri(mirror.path.as_str())
        .header("content-type", "application/json")
        .body(body)
        .build();
    if let Some(accept) = accept {
        request.set_header("accept", accept);
    }
    request
}
