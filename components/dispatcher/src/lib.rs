//! The dispatcher: kg-agent's HTTP API. It owns routing, request parsing and the KV store,
//! and reaches every other component through the WIT interfaces spin.toml plugs in.

mod documents;
mod health;
mod tools;

use kg_http::{ApiError, Route};
use kg_wit::types::Error;
use spin_sdk::http::{Method, Request, Response};
use spin_sdk::http_component;

#[http_component]
fn handle(request: Request) -> Response {
    match dispatch(&request) {
        Ok(response) => response,
        Err(error) => json_response(error.status, &error.to_json()),
    }
}

fn dispatch(request: &Request) -> Result<Response, ApiError> {
    let method = method_name(request.method());
    match kg_http::route(&method, request.path())? {
        Route::Health => Ok(health::handle()),
        Route::ListTools => Ok(tools::list()),
        Route::CallTool { name } => tools::call(&name, request.body()),
        // The rest of the API is routed so clients get a precise answer, but its behaviour
        // belongs to later issues.
        Route::ListActions
        | Route::GetAction { .. }
        | Route::ValidateAction { .. }
        | Route::ExecuteAction { .. }
        | Route::ActionLog
        | Route::UndoAction { .. } => Err(Error::not_implemented("the action endpoints", 5).into()),
        Route::ListDocuments => documents::list(),
        Route::IngestDocument => documents::ingest(request.body()),
        Route::DeleteDocument { id } => documents::delete(&id),
        Route::Search => documents::search(request.body()),
        Route::Chat
        | Route::ChatStream
        | Route::ChatApprove
        | Route::GetConversation { .. }
        | Route::DeleteConversation { .. } => {
            Err(Error::not_implemented("the agent endpoints", 6).into())
        }
    }
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
