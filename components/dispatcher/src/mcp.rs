//! `POST /mcp`: kg-agent as an MCP server (kg-mcp holds the protocol). Each tool call is
//! answered by the HTTP route it mirrors, through `dispatch` itself: the same route table,
//! the same permission check and the same handler as a request to that route with this
//! caller's credential, so the two surfaces cannot drift apart.

use crate::identity::Principal;
use crate::{Reply, dispatch};
use kg_agent_core::toolbox::parse_json;
use kg_http::ApiError;
use kg_http::routes::Access;
use kg_mcp::{Backend, Mirror, QueryTool, server::Head};
use kg_wit::kg::query_tools::query_tools;
use serde_json::Value;
use spin_sdk::http::{Method, Request, Response};

pub fn handle(request: &Request, who: &Principal) -> Response {
    let head = Head {
        protocol_version: request
            .header("mcp-protocol-version")
            .and_then(|v| v.as_str()),
    };
    let answer = kg_mcp::handle_post(request.body(), head, &mut Mirrored { who });
    match answer.body {
        Some(body) => crate::json_response(answer.status, &body),
        None => Response::builder().status(answer.status).build(),
    }
}

struct Mirrored<'a> {
    who: &'a Principal,
}

impl Mirrored<'_> {
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
            let request = Request::builder()
                .method(method)
                .uri(mirror.path.as_str())
                .header("content-type", "application/json")
                .body(body)
                .build();
            match dispatch(&request, route, self.who.clone())? {
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
