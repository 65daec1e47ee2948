//! The dispatcher: kg-agent's HTTP API. It owns routing, authentication and permissions,
//! request parsing and the KV store, and reaches every other component through the WIT
//! interfaces spin.toml plugs in.

mod actions;
mod agent;
mod audience;
mod causal;
mod documents;
mod graph_policy;
mod headers;
mod health;
mod identity;
mod kv;
mod limits;
mod liveness;
mod mcp;
mod prompts;
mod readiness;
mod sse;
mod telemetry;
mod tools;

use identity::Principal;
use kg_http::routes::Access;
use kg_http::{ApiError, Route};
use spin_sdk::http::{IncomingRequest, Method, Request, Response, ResponseOutparam};
use spin_sdk::http_component;

/// The handler takes the response outparam so a batch can stream its progress (SSE);
/// every other route answers in one piece. It takes the request unread
/// (`IncomingRequest`) and reads the body itself, so a body the host cannot hand over
/// (malformed chunking, fewer bytes than `Content-Length`) is a 400 JSON error of ours
/// rather than spin-sdk's plain-text 500.
///
/// Order: the request is admitted (liveness, authentication, route, rate limit,
/// permission: see `admit`) on its method, path and headers alone, and only then is its
/// body read, at most `kg_http::body::MAX_BODY_BYTES` of it (more is 413). So an anonymous
/// or refused caller gets its 401/403/404/405/429 without the instance buffering a byte of
/// its body, and every admitted request, on every route, has its body read whole or
/// refused with a JSON error before its handler runs.
///
/// The request's URI is its path and query as the host hands them over: nothing here uses
/// its scheme or authority (and reading them costs host calls on every request).
#[http_component]
async fn handle(incoming: IncomingRequest, response_out: ResponseOutparam) {
    let method = incoming.method();
    let path_with_query = incoming
        .path_with_query()
        .unwrap_or_else(|| "/".to_string());
    let head = Request::builder()
        .method(method.clone())
        .uri(path_with_query.as_str())
        .build();
    if liveness::asked(&head, &method_name(&method)) {
        return liveness::answer(&incoming, response_out).await;
    }
    let mut request = Request::builder()
        .method(method)
        .uri(path_with_query)
        .headers(incoming.headers())
        .build();
    // wasi-http hands a request's authority apart from its headers (no `Host` field). The
    // MCP routes name the app's own URL in their authorization answers (RFC 9728), so
    // they, and only they, pay the host call that reads it.
    if mcp::names_own_url(request.path())
        && request.header("host").is_none()
        && let Some(authority) = incoming.authority()
    {
        request.set_header("host", authority.as_str());
    }
    let mut trace = telemetry::RequestTrace::begin(&request, &method_name(request.method()));
    let mut ctx = headers::Context {
        allowed_origin: headers::allowed_origin(&request),
        anonymous_mode: headers::anonymous_mode(),
        auth_ms: None,
    };
    if *request.method() == Method::Options {
        let response = Response::builder()
            .status(204)
            .headers(headers::preflight(&ctx))
            .build();
        trace.status(204);
        send(response_out, response);
        return trace.finish();
    }
    let (reply, unread) = match admit(&request, &mut ctx) {
        Ok((route, who)) => {
            trace.admitted(&who.caller.subject);
            let reply = match read_body(incoming, &request).await {
                Ok(body) => {
                    *request.body_mut() = body;
                    dispatch(&request, route, who)
                        .unwrap_or_else(|e| Reply::Full(error_response(&e)))
                }
                Err(e) => Reply::Full(error_response(&e)),
            };
            (reply, None)
        }
        Err(response) => (Reply::Full(response), Some(incoming)),
    };
    let mut extra = headers::common(&ctx);
    extra.extend(trace.response_headers());
    match reply {
        Reply::Full(mut response) => {
            for (name, value) in &extra {
                response.set_header(name.as_str(), value.as_str());
            }
            trace.status(*response.status());
            send(response_out, response)
        }
        Reply::Batch(execution, run) => {
            actions::drive(execution, run, actions::RouteEvents, &extra, response_out).await
        }
        Reply::Chat(body, who) => agent::stream(body, who, &extra, response_out).await,
        Reply::Approve(token, approve, who) => {
            agent::approve_stream(token, approve, who, &extra, response_out).await
        }
        Reply::Resume(resume) => agent::resume_stream(resume, &extra, response_out).await,
        Reply::McpBatch(batch) => mcp::stream_batch(*batch, &extra, response_out).await,
    }
    // After the response (a stream at its end): nothing here adds to the caller's wait,
    // and the request's logged latency ends before a refused body is drained.
    trace.finish();
    if let Some(incoming) = unread {
        drain_unread(incoming, &request).await;
    }
}

/// Reads to its end, after the answer, the body of a request refused on its head, so the
/// client's connection stays usable. Spin's HTTP server (hyper) closes a connection whose
/// request body is left unread past what it buffers itself (tens of KiB), without a
/// `Connection: close` (a component cannot send one): a client that reuses the connection
/// for its next request then finds it closed. Bounded like an admitted body (a body
/// declared or read past `MAX_BODY_BYTES` is left, and the connection with it) and in
/// time: a caller refused on its head must not hold an instance, and its share of Spin's
/// instance pool, by trickling a body, so the drain gives up after `DRAIN_DEADLINE`.
async fn drain_unread(incoming: IncomingRequest, head: &Request) {
    use futures::StreamExt;
    let declared = head.header("content-length").and_then(|v| v.as_str());
    if kg_http::body::BodyReader::new(declared).is_err() {
        return;
    }
    let drain = async {
        let mut read = 0usize;
        let mut stream = std::pin::pin!(incoming.into_body_stream());
        while let Some(Ok(chunk)) = stream.next().await {
            read = read.saturating_add(chunk.len());
            if read > kg_http::body::MAX_BODY_BYTES {
                return;
            }
        }
    };
    let deadline = kg_spin::sleep(DRAIN_DEADLINE);
    futures::future::select(std::pin::pin!(drain), std::pin::pin!(deadline)).await;
}

/// How long a refused request's body may take to arrive before the instance stops reading
/// it. A body the client sent with its head arrives within it over any usable link; a
/// slower one costs that client its connection, never the pool a slot for longer.
const DRAIN_DEADLINE: std::time::Duration = std::time::Duration::from_millis(500);

/// The request's body, read to its end: 413 past `MAX_BODY_BYTES` (at once when
/// `Content-Length` declares more), 400 `malformed_body` when the host reports the body
/// broken. The host's error is logged (its first line: the rest is the host's own
/// backtrace), never answered: it names internal types.
async fn read_body(incoming: IncomingRequest, head: &Request) -> Result<Vec<u8>, ApiError> {
    use futures::StreamExt;
    let declared = head.header("content-length").and_then(|v| v.as_str());
    let mut reader = kg_http::body::BodyReader::new(declared)?;
    let mut stream = std::pin::pin!(incoming.into_body_stream());
    while let Some(chunk) = stream.next().await {
        match chunk {
            Ok(chunk) => reader.push(&chunk)?,
            Err(e) => {
                eprintln!(
                    "dispatcher: the request body could not be read: {}",
                    e.to_debug_string().lines().next().unwrap_or_default()
                );
                return Err(kg_http::body::malformed_body());
            }
        }
    }
    Ok(reader.finish())
}

/// The SSE `Last-Event-ID` a reconnecting client sends.
fn last_event_id(request: &Request) -> Option<&str> {
    request.header("last-event-id").and_then(|v| v.as_str())
}

pub(crate) enum Reply {
    Full(Response),
    Batch(
        kg_wit::kg::action_executor::action_executor::ExecutionRequest,
        kg_wit::kg::action_executor::action_executor::BatchRun,
    ),
    Chat(kg_http::chat::ChatBody, Principal),
    /// `/chat/approve` asked with `Accept: text/event-stream`: token, approve, caller.
    Approve(String, bool, Principal),
    /// A turn's stream picked up again after `Last-Event-ID`.
    Resume(agent::Resume),
    /// An MCP `action_execute` that asked for progress.
    McpBatch(Box<mcp::Batch>),
}

fn send(out: ResponseOutparam, mut response: Response) {
    let body = std::mem::take(response.body_mut());
    match spin_sdk::http::OutgoingResponse::try_from(response) {
        Ok(outgoing) => kg_spin::send_whole(out, outgoing, &body),
        Err(e) => eprintln!("dispatcher: could not build the response: {e}"),
    }
}

/// Liveness, readiness and the sign-in settings (`GET /auth/config`) answer anyone; every other
/// request is authenticated first (before its route is even resolved, so an unknown path
/// tells an anonymous caller nothing), counted against its subject's limit, and checked
/// against the permission its route needs. `Err` is the response that refuses it.
fn admit(request: &Request, ctx: &mut headers::Context) -> Result<(Route, Principal), Response> {
    let method = method_name(request.method());
    let route = kg_http::route(&method, request.path());
    match route {
        Ok(Route::HealthLive) => return Err(liveness::response()),
        Ok(Route::HealthReady) => return Err(readiness::handle()),
        Ok(Route::AuthConfig) => return Err(auth_config()),
        Ok(Route::ResourceMetadata) => return Err(mcp::resource_metadata(request)),
        Ok(Route::OpenApi) => return Err(openapi_document()),
        _ => {}
    }
    let config = identity::config().map_err(|e| error_response(&e))?;
    let started = wasi::clocks::monotonic_clock::now();
    let who = identity::authenticate(request, &config);
    ctx.auth_ms =
        Some(wasi::clocks::monotonic_clock::now().saturating_sub(started) as f64 / 1_000_000.0);
    let who = who.map_err(|refusal| {
        let mut response = error_response(&refusal.error);
        if let Some(mut challenge) = refusal.www_authenticate {
            if matches!(route, Ok(Route::Mcp)) {
                mcp::add_resource_metadata(&mut challenge, request);
            }
            response.set_header("www-authenticate", challenge.as_str());
        }
        response
    })?;
    let route = route.map_err(|e| error_response(&e))?;
    limits::count_request(&who.caller.subject).map_err(|e| error_response(&e))?;
    if let Access::AnyOf(permissions) = route.access() {
        who.require_any(permissions)
            .map_err(|e| error_response(&e))?;
    }
    Ok((route, who))
}

pub(crate) fn dispatch(request: &Request, route: Route, who: Principal) -> Result<Reply, ApiError> {
    let full = Reply::Full;
    audience::caller(&who.caller.roles);
    // A turn that would send the LLM a prompt starts only when every template parses.
    if matches!(
        route,
        Route::Chat | Route::ChatStream | Route::ChatApprove | Route::LegacyQuery
    ) {
        prompts::check()?;
    }
    Ok(match route {
        Route::HealthLive => full(liveness::response()),
        Route::HealthReady => full(readiness::handle()),
        Route::AuthConfig => full(auth_config()),
        Route::ResourceMetadata => full(mcp::resource_metadata(request)),
        Route::OpenApi => full(openapi_document()),
        Route::Health => full(health::handle()),
        Route::GraphPolicy => full(graph_policy::handle()?),
        Route::ListTools => full(tools::list()),
        Route::CallTool { name } => full(tools::call(&name, request.body())?),
        Route::ListActions => full(actions::list(request.query())?),
        Route::GetAction {
            entity_type,
            action,
        } => full(actions::get(&entity_type, &action)?),
        Route::ValidateAction {
            entity_type,
            action,
        } => full(actions::validate(
            &who,
            &entity_type,
            &action,
            request.body(),
        )?),
        Route::PlanAction {
            entity_type,
            action,
        } => full(actions::plan(&who, &entity_type, &action, request.body())?),
        Route::ExecuteAction {
            entity_type,
            action,
        } => match actions::execute(request, &who, &entity_type, &action)? {
            actions::Execution::Done(response) => full(response),
            actions::Execution::Stream(execution, run) => Reply::Batch(execution, run),
        },
        Route::ActionLog => full(actions::log(&who, request.query())?),
        Route::SetupActions => full(actions::setup(&who)?),
        Route::UndoAction { log_id } => full(actions::undo(&who, &log_id, request.body())?),
        Route::ListDocuments => full(documents::list()?),
        Route::IngestDocument => full(documents::ingest(request.body())?),
        Route::DeleteDocument { id } => full(documents::delete(&id)?),
        Route::Search => full(documents::search(request.body())?),
        Route::Chat => full(agent::chat(request, &who)?),
        Route::LegacyQuery => full(agent::legacy_query(request, &who)?),
        Route::ChatStream => match last_event_id(request) {
            Some(id) => Reply::Resume(agent::prepare_resume(None, Some(id), &who)?),
            None => Reply::Chat(agent::prepare_stream(request, &who)?, who),
        },
        Route::ChatStreamResume { turn_id } => Reply::Resume(agent::prepare_resume(
            Some(&turn_id),
            last_event_id(request),
            &who,
        )?),
        Route::ChatApprove => {
            let stream = kg_http::sse::accepts_event_stream(
                request.header("accept").and_then(|v| v.as_str()),
            );
            match agent::approve(request, &who, stream)? {
                agent::Approval::Done(response) => full(response),
                agent::Approval::Stream(token, approve) => Reply::Approve(token, approve, who),
            }
        }
        Route::ListConversations => full(agent::list_conversations(&who)?),
        Route::GetConversation { id } => full(agent::get_conversation(&id, &who)?),
        Route::DeleteConversation { id } => full(agent::delete_conversation(&id, &who)?),
        Route::Mcp => match mcp::handle(request, &who) {
            mcp::Answer::Full(response) => full(response),
            mcp::Answer::Batch(batch) => Reply::McpBatch(batch),
        },
    })
}

/// `GET /auth/config`: the auth modes and the browser's OpenID Connect client (issuer,
/// public client id, scopes); nothing secret, no credential needed.
fn auth_config() -> Response {
    json_response(
        200,
        &kg_http::auth_config::auth_config(&|name| kg_spin::variable(name).ok()),
    )
}

/// `GET /openapi.json`: the API's description, public like `/auth/config` because it holds
/// nothing a deployment keeps secret (routes, shapes, the demo dataset's examples); a
/// client generator or a tester reads it before it has a credential. Compiled in (compact,
/// build.rs), so it is the document this build's route table was tested against
/// (crates/kg-http/tests/openapi.rs).
fn openapi_document() -> Response {
    Response::builder()
        .status(200)
        .header("content-type", "application/json")
        .header("cache-control", "no-cache")
        .body(include_str!(concat!(env!("OUT_DIR"), "/openapi.json")))
        .build()
}

fn method_name(method: &Method) -> String {
    match method {
        Method::Get => "GET".into(),
        Method::Post => "POST".into(),
        Method::Put => "PUT".into(),
        Method::Delete => "DELETE".into(),
        Method::Patch => "PATCH".into(),
        Method::Head => "HEAD".into(),
        Method::Options => "OPTIONS".into(),
        Method::Connect => "CONNECT".into(),
        Method::Trace => "TRACE".into(),
        Method::Other(other) => other.clone(),
    }
}

pub(crate) fn json_response(status: u16, body: &serde_json::Value) -> Response {
    let mut response = Response::builder()
        .status(status)
        .header("content-type", "application/json")
        .body(body.to_string())
        .build();
    if let Some(retry) = kg_http::error::retry_after(status, body) {
        response.set_header("retry-after", retry.to_string().as_str());
    }
    if let (405, Some(allow)) = (status, body["error"]["detail"]["allow"].as_array()) {
        let allow: Vec<&str> = allow.iter().filter_map(|m| m.as_str()).collect();
        response.set_header("allow", allow.join(", ").as_str());
    }
    response
}

fn error_response(error: &ApiError) -> Response {
    json_response(error.status, &error.to_json())
}
