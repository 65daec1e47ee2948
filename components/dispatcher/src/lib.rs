//! The dispatcher: kg-agent's HTTP API. It owns routing, request parsing and the KV store,
//! and reaches every other component through the WIT interfaces spin.toml plugs in.

mod actions;
mod agent;
mod documents;
mod health;
mod tools;

use kg_http::{ApiError, Route};
use spin_sdk::http::{Method, Request, Response, ResponseOutparam};
use spin_sdk::http_component;

/// The handler takes the response outparam so a batch can stream its progress (SSE);
/// every other route answers in one piece.
#[http_component]
async fn handle(request: Request, response_out: ResponseOutparam) {
    let reply = match dispatch(&request) {
        Ok(reply) => reply,
        Err(error) => Reply::Full(json_response(error.status, &error.to_json())),
    };
    match reply {
        Reply::Full(response) => send(response_out, response).await,
        Reply::Batch(execution, run) => actions::stream(execution, run, response_out).await,
        Reply::Chat(body) => agent::stream(body, response_out).await,
    }
}

enum Reply {
    Full(Response),
    Batch(
        kg_wit::kg::action_executor::action_executor::ExecutionRequest,
        kg_wit::kg::action_executor::action_executor::BatchRun,
    ),
    Chat(kg_http::chat::ChatBody),
}

async fn send(out: ResponseOutparam, mut response: Response) {
    let body = std::mem::take(response.body_mut());
    match spin_sdk::http::OutgoingResponse::try_from(response) {
        Ok(outgoing) => {
            if let Err(e) = out.set_with_body(outgoing, body).await {
                eprintln!("dispatcher: could not send the response: {e}");
            }
        }
        Err(e) => eprintln!("dispatcher: could not build the response: {e}"),
    }
}

fn dispatch(request: &Request) -> Result<Reply, ApiError> {
    let method = method_name(request.method());
    let full = Reply::Full;
    Ok(match kg_http::route(&method, request.path())? {
        Route::Health => full(health::handle()),
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
        } => full(actions::validate(&entity_type, &action, request.body())?),
        Route::ExecuteAction {
            entity_type,
            action,
        } => match actions::execute(request, &entity_type, &action)? {
            actions::Execution::Done(response) => full(response),
            actions::Execution::Stream(execution, run) => Reply::Batch(execution, run),
        },
        Route::ActionLog => full(actions::log(request.query())?),
        Route::SetupActions => full(actions::setup()?),
        Route::UndoAction { log_id } => full(actions::undo(&log_id, request.body())?),
        Route::ListDocuments => full(documents::list()?),
        Route::IngestDocument => full(documents::ingest(request.body())?),
        Route::DeleteDocument { id } => full(documents::delete(&id)?),
        Route::Search => full(documents::search(request.body())?),
        Route::Chat => full(agent::chat(request)?),
        Route::LegacyQuery => full(agent::legacy_query(request)?),
        Route::ChatStream => Reply::Chat(agent::prepare_stream(request)?),
        Route::ChatApprove => full(agent::approve(request)?),
        Route::GetConversation { id } => full(agent::get_conversation(&id)?),
        Route::DeleteConversation { id } => full(agent::delete_conversation(&id)?),
    })
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
    Response::builder()
        .status(status)
        .header("content-type", "application/json")
        .body(body.to_string())
        .build()
}
