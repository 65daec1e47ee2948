//! The dispatcher's route table (DESIGN.md §3). Unknown paths are 404, known paths with
//! the wrong method 405, both as JSON errors.

use crate::ApiError;
use kg_identity::Permission;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// Liveness: no credential, no details.
    HealthLive,
    /// Readiness: the graph, the LLM and the key-value store each checked (up/down,
    /// latency, a short reason); no credential, so orchestrators' probes can call it.
    HealthReady,
    /// What the web app needs to sign in (auth modes, the OIDC issuer and public client
    /// id): no credential, nothing secret.
    AuthConfig,
    Health,
    ListTools,
    CallTool {
        name: String,
    },
    ListActions,
    GetAction {
        entity_type: String,
        action: String,
    },
    ValidateAction {
        entity_type: String,
        action: String,
    },
    ExecuteAction {
        entity_type: String,
        action: String,
    },
    PlanAction {
        entity_type: String,
        action: String,
    },
    ActionLog,
    SetupActions,
    UndoAction {
        log_id: String,
    },
    ListDocuments,
    IngestDocument,
    DeleteDocument {
        id: String,
    },
    Search,
    Chat,
    ChatStream,
    /// A turn's kept events after `Last-Event-ID`, then the rest (issue #16 item 3).
    ChatStreamResume {
        turn_id: String,
    },
    ChatApprove,
    /// Seed 002's `/api/qa/query`, answered like `/chat` with a deprecation header.
    LegacyQuery,
    /// The caller's own conversations.
    ListConversations,
    GetConversation {
        id: String,
    },
    DeleteConversation {
        id: String,
    },
    /// RFC 9728 protected resource metadata for `/mcp` (MCP authorization's discovery):
    /// no credential, nothing secret.
    ResourceMetadata,
    /// The MCP endpoint (Streamable HTTP, stateless): POST only, so `GET` (a server
    /// stream) and `DELETE` (ending a session) are 405, as the specification allows.
    Mcp,
    /// This API's OpenAPI document (docs/openapi.json): no credential, nothing secret.
    OpenApi,
    /// The graph's visibility policy as declared (admins).
    GraphPolicy,
}

/// Resolves a method and a path (without query string) to a route.
pub fn route(method: &str, path: &str) -> Result<Route, ApiError> {
    let segments = segments(path)?;
    let s: Vec<&str> = segments.iter().map(String::as_str).collect();
    let owned = |i: usize| segments[i].clone();
    // Each arm lists the methods a path accepts, so a wrong method is a 405, not a 404.
    let (allowed, found): (&[&str], Option<Route>) = match s.as_slice() {
        ["health"] => (&["GET"], on(method, "GET", || Route::Health)),
        ["health", "live"] => (&["GET"], on(method, "GET", || Route::HealthLive)),
        ["health", "ready"] => (&["GET"], on(method, "GET", || Route::HealthReady)),
        ["auth", "config"] => (&["GET"], on(method, "GET", || Route::AuthConfig)),
        ["tools"] => (&["GET"], on(method, "GET", || Route::ListTools)),
        ["graph", "policy"] => (&["GET"], on(method, "GET", || Route::GraphPolicy)),
        ["tools", _] => (
            &["POST"],
            on(method, "POST", || Route::CallTool { name: owned(1) }),
        ),
        ["actions"] => (&["GET"], on(method, "GET", || Route::ListActions)),
        ["actions", "log"] => (&["GET"], on(method, "GET", || Route::ActionLog)),
        ["actions", "setup"] => (&["POST"], on(method, "POST", || Route::SetupActions)),
        ["actions", "log", _, "undo"] => (
            &["POST"],
            on(method, "POST", || Route::UndoAction { log_id: owned(2) }),
        ),
        ["actions", _, _] => (
            &["GET"],
            on(method, "GET", || Route::GetAction {
                entity_type: owned(1),
                action: owned(2),
            }),
        ),
        ["actions", _, _, "validate"] => (
            &["POST"],
            on(method, "POST", || Route::ValidateAction {
                entity_type: owned(1),
                action: owned(2),
            }),
        ),
        ["actions", _, _, "plan"] => (
            &["POST"],
            on(method, "POST", || Route::PlanAction {
                entity_type: owned(1),
                action: owned(2),
            }),
        ),
        ["actions", _, _, "execute"] => (
            &["POST"],
            on(method, "POST", || Route::ExecuteAction {
                entity_type: owned(1),
                action: owned(2),
            }),
        ),
        ["documents"] => match method {
            "GET" => (&["GET", "POST"], Some(Route::ListDocuments)),
            "POST" => (&["GET", "POST"], Some(Route::IngestDocument)),
            _ => (&["GET", "POST"], None),
        },
        ["documents", _] => (
            &["DELETE"],
            on(method, "DELETE", || Route::DeleteDocument { id: owned(1) }),
        ),
        ["search"] => (&["POST"], on(method, "POST", || Route::Search)),
        ["chat"] => (&["POST"], on(method, "POST", || Route::Chat)),
        ["chat", "stream"] => (&["POST"], on(method, "POST", || Route::ChatStream)),
        ["chat", "stream", _] => (
            &["GET"],
            on(method, "GET", || Route::ChatStreamResume {
                turn_id: owned(2),
            }),
        ),
        ["chat", "approve"] => (&["POST"], on(method, "POST", || Route::ChatApprove)),
        ["api", "qa", "query"] => (&["POST"], on(method, "POST", || Route::LegacyQuery)),
        ["conversations"] => (&["GET"], on(method, "GET", || Route::ListConversations)),
        ["mcp"] => (&["POST"], on(method, "POST", || Route::Mcp)),
        ["openapi.json"] => (&["GET"], on(method, "GET", || Route::OpenApi)),
        [".well-known", "oauth-protected-resource"]
        | [".well-known", "oauth-protected-resource", "mcp"] => {
            (&["GET"], on(method, "GET", || Route::ResourceMetadata))
        }
        ["conversations", _] => match method {
            "GET" => (
                &["GET", "DELETE"],
                Some(Route::GetConversation { id: owned(1) }),
            ),
            "DELETE" => (
                &["GET", "DELETE"],
                Some(Route::DeleteConversation { id: owned(1) }),
            ),
            _ => (&["GET", "DELETE"], None),
        },
        _ => {
            return Err(ApiError::not_found(format!("no route for {method} {path}")));
        }
    };
    // `detail.allow` becomes the 405's `Allow` header (RFC 9110 §15.5.6), with the CORS
    // preflight's OPTIONS, which every path answers.
    found.ok_or_else(|| {
        let mut allow: Vec<&str> = allowed.to_vec();
        allow.push("OPTIONS");
        ApiError::new(
            405,
            "method_not_allowed",
            format!(
                "{method} is not allowed on {path}; use {}",
                allowed.join(" or ")
            ),
        )
        .with_detail(serde_json::json!({ "allow": allow }))
    })
}

/// What a route needs from its caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// No credential (liveness, and the web app's sign-in settings).
    Public,
    /// A credential holding any of these permissions. Handlers that depend on the request
    /// (an execute with an approval token needs `actions:approve`, without one
    /// `actions:execute`) narrow it further.
    AnyOf(&'static [Permission]),
}

impl Route {
    /// The permission matrix applied to routes: the one place that says what each needs.
    pub fn access(&self) -> Access {
        use Permission::*;
        let any = |p: &'static [Permission]| Access::AnyOf(p);
        match self {
            Route::HealthLive
            | Route::HealthReady
            | Route::AuthConfig
            | Route::ResourceMetadata
            | Route::OpenApi => Access::Public,
            Route::Health => any(&[HealthRead]),
            Route::GraphPolicy => any(&[GraphPolicyRead]),
            Route::ListTools | Route::CallTool { .. } => any(&[ToolsUse]),
            Route::ListActions | Route::GetAction { .. } => any(&[ActionsRead]),
            Route::ValidateAction { .. } | Route::PlanAction { .. } => any(&[ActionsExecute]),
            Route::ExecuteAction { .. } => any(&[ActionsExecute, ActionsApprove]),
            Route::ActionLog => any(&[ActionLogRead]),
            Route::SetupActions => any(&[ActionsSetup]),
            Route::UndoAction { .. } => any(&[ActionsUndo]),
            Route::ListDocuments | Route::Search => any(&[DocumentsSearch]),
            Route::IngestDocument | Route::DeleteDocument { .. } => any(&[DocumentsWrite]),
            // Approving needs `actions:approve`; withdrawing one's own plan only `chat`
            // (the handler and the action-executor tell them apart).
            Route::Chat
            | Route::ChatStream
            | Route::ChatStreamResume { .. }
            | Route::ChatApprove
            | Route::LegacyQuery
            | Route::ListConversations
            | Route::GetConversation { .. }
            | Route::DeleteConversation { .. } => any(&[Chat]),
            // Any permission some MCP tool needs; each call is then checked against the
            // route it mirrors (kg-mcp), and the tool list holds only what may be called.
            Route::Mcp => any(&[
                ToolsUse,
                DocumentsSearch,
                ActionsRead,
                ActionLogRead,
                ActionsExecute,
                ActionsApprove,
                ActionsUndo,
            ]),
        }
    }
}

impl Route {
    /// The method and path template of the route, as docs/openapi.json names its
    /// operation: span names and log fields use it (low cardinality, never an id), and
    /// `tests::openapi` checks the document against it, both ways. The exhaustive match
    /// makes a new route a compile error here until it has a template.
    pub fn template(&self) -> (&'static str, &'static str) {
        match self {
            Route::HealthLive => ("GET", "/health/live"),
            Route::HealthReady => ("GET", "/health/ready"),
            Route::AuthConfig => ("GET", "/auth/config"),
            Route::Health => ("GET", "/health"),
            Route::GraphPolicy => ("GET", "/graph/policy"),
            Route::ListTools => ("GET", "/tools"),
            Route::CallTool { .. } => ("POST", "/tools/{name}"),
            Route::ListActions => ("GET", "/actions"),
            Route::GetAction { .. } => ("GET", "/actions/{entity_type}/{action}"),
            Route::ValidateAction { .. } => ("POST", "/actions/{entity_type}/{action}/validate"),
            Route::ExecuteAction { .. } => ("POST", "/actions/{entity_type}/{action}/execute"),
            Route::PlanAction { .. } => ("POST", "/actions/{entity_type}/{action}/plan"),
            Route::ActionLog => ("GET", "/actions/log"),
            Route::SetupActions => ("POST", "/actions/setup"),
            Route::UndoAction { .. } => ("POST", "/actions/log/{log_id}/undo"),
            Route::ListDocuments => ("GET", "/documents"),
            Route::IngestDocument => ("POST", "/documents"),
            Route::DeleteDocument { .. } => ("DELETE", "/documents/{id}"),
            Route::Search => ("POST", "/search"),
            Route::Chat => ("POST", "/chat"),
            Route::ChatStream => ("POST", "/chat/stream"),
            Route::ChatStreamResume { .. } => ("GET", "/chat/stream/{turn_id}"),
            Route::ChatApprove => ("POST", "/chat/approve"),
            Route::LegacyQuery => ("POST", "/api/qa/query"),
            Route::ListConversations => ("GET", "/conversations"),
            Route::GetConversation { .. } => ("GET", "/conversations/{id}"),
            Route::DeleteConversation { .. } => ("DELETE", "/conversations/{id}"),
            Route::ResourceMetadata => ("GET", "/.well-known/oauth-protected-resource/mcp"),
            Route::Mcp => ("POST", "/mcp"),
            Route::OpenApi => ("GET", "/openapi.json"),
        }
    }
}

fn on(method: &str, expected: &str, make: impl FnOnce() -> Route) -> Option<Route> {
    (method == expected).then(make)
}

/// Non-empty, percent-decoded path segments. A segment that is not UTF-8 after decoding
/// is a 400, not a panic.
fn segments(path: &str) -> Result<Vec<String>, ApiError> {
    path.split('/')
        .filter(|s| !s.is_empty())
        .map(|s| {
            percent_encoding::percent_decode_str(s)
                .decode_utf8()
                .map(|c| c.into_owned())
                .map_err(|_| ApiError::bad_request(format!("path segment `{s}` is not UTF-8")))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn resolves_every_documented_route() {
        let cases = [
            ("GET", "/health", Route::Health),
            ("GET", "/health/live", Route::HealthLive),
            ("GET", "/health/ready", Route::HealthReady),
            ("GET", "/auth/config", Route::AuthConfig),
            (
                "POST",
                "/actions/PurchaseOrder/cancel/plan",
                Route::PlanAction {
                    entity_type: "PurchaseOrder".into(),
                    action: "cancel".into(),
                },
            ),
            ("GET", "/tools", Route::ListTools),
            (
                "POST",
                "/tools/get_node_statistics",
                Route::CallTool {
                    name: "get_node_statistics".into(),
                },
            ),
            ("GET", "/actions", Route::ListActions),
            ("GET", "/actions/log", Route::ActionLog),
            (
                "POST",
                "/actions/log/42/undo",
                Route::UndoAction {
                    log_id: "42".into(),
                },
            ),
            (
                "GET",
                "/actions/PurchaseOrder/makePayment",
                Route::GetAction {
                    entity_type: "PurchaseOrder".into(),
                    action: "makePayment".into(),
                },
            ),
            (
                "POST",
                "/actions/PurchaseOrder/makePayment/validate",
                Route::ValidateAction {
                    entity_type: "PurchaseOrder".into(),
                    action: "makePayment".into(),
                },
            ),
            (
                "POST",
                "/actions/PurchaseOrder/makePayment/execute",
                Route::ExecuteAction {
                    entity_type: "PurchaseOrder".into(),
                    action: "makePayment".into(),
                },
            ),
            ("GET", "/documents", Route::ListDocuments),
            ("POST", "/documents", Route::IngestDocument),
            (
                "DELETE",
                "/documents/policy%201",
                Route::DeleteDocument {
                    id: "policy 1".into(),
                },
            ),
            ("POST", "/search", Route::Search),
            ("POST", "/chat", Route::Chat),
            ("POST", "/chat/stream", Route::ChatStream),
            (
                "GET",
                "/chat/stream/t-1",
                Route::ChatStreamResume {
                    turn_id: "t-1".into(),
                },
            ),
            ("POST", "/chat/approve", Route::ChatApprove),
            ("POST", "/api/qa/query", Route::LegacyQuery),
            ("GET", "/conversations", Route::ListConversations),
            ("POST", "/mcp", Route::Mcp),
            (
                "GET",
                "/.well-known/oauth-protected-resource/mcp",
                Route::ResourceMetadata,
            ),
            (
                "GET",
                "/conversations/c1",
                Route::GetConversation { id: "c1".into() },
            ),
            (
                "DELETE",
                "/conversations/c1/",
                Route::DeleteConversation { id: "c1".into() },
            ),
        ];
        for (method, path, expected) in cases {
            assert_eq!(route(method, path), Ok(expected), "{method} {path}");
        }
    }

    #[test]
    fn unknown_path_is_404_and_wrong_method_is_405() {
        assert_eq!(route("GET", "/nope").unwrap_err().status, 404);
        assert_eq!(route("GET", "/").unwrap_err().status, 404);
        let e = route("POST", "/health").unwrap_err();
        assert_eq!((e.status, e.code.as_str()), (405, "method_not_allowed"));
        assert!(e.message.contains("GET"), "{}", e.message);
        assert_eq!(
            e.detail,
            Some(serde_json::json!({"allow": ["GET", "OPTIONS"]}))
        );
        assert_eq!(route("PUT", "/documents").unwrap_err().status, 405);
        assert_eq!(route("GET", "/mcp").unwrap_err().status, 405);
        assert_eq!(route("DELETE", "/mcp").unwrap_err().status, 405);
    }

    #[test]
    fn only_liveness_readiness_and_sign_in_settings_are_public() {
        assert_eq!(Route::HealthLive.access(), Access::Public);
        assert_eq!(Route::HealthReady.access(), Access::Public);
        assert_eq!(Route::AuthConfig.access(), Access::Public);
        assert_eq!(
            Route::UndoAction { log_id: "x".into() }.access(),
            Access::AnyOf(&[Permission::ActionsUndo])
        );
        let everything = [
            Route::Health,
            Route::ListTools,
            Route::ActionLog,
            Route::SetupActions,
            Route::ListDocuments,
            Route::IngestDocument,
            Route::Search,
            Route::Chat,
            Route::ChatStream,
            Route::ChatApprove,
            Route::LegacyQuery,
            Route::Mcp,
        ];
        for route in everything {
            assert_ne!(route.access(), Access::Public, "{route:?}");
        }
    }

    #[test]
    fn undecodable_segment_is_400() {
        assert_eq!(route("GET", "/conversations/%ff").unwrap_err().status, 400);
    }

    proptest! {
        #[test]
        fn never_panics(method in "[A-Z]{1,7}", path in "(/[a-zA-Z0-9%_.-]{0,12}){0,6}") {
            if let Err(e) = route(&method, &path) {
                prop_assert!([400, 404, 405].contains(&e.status));
            }
        }
    }
}
