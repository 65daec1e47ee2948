//! The query-tools component: binds `kg:query-tools/query-tools` to kg-graph-tools over the
//! Neo4j Query API, each request with a deadline (`timed_transport`).

mod timed_transport;

use kg_wit::types::{ComponentStatus, Error, ErrorCode, Json};
use neo4j_client::Client;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use timed_transport::TimedTransport;

wit_bindgen::generate!({
    path: "../../wit",
    world: "query-tools-component",
    with: { "kg:types/types@0.1.0": kg_wit::types },
});

use exports::kg::query_tools::query_tools::{Audience, Guest, ToolResult, ToolSpec};
use kg_graph_tools::profile::Audience as PolicyAudience;

/// Who this instance answers (`use-audience`); the narrowest audience until told. Kept
/// apart from the session, so a session renewed mid-request answers the same audience.
static AUDIENCE: Mutex<Option<PolicyAudience>> = Mutex::new(None);

/// Longest a session lives, should the host reuse an instance for several requests.
const SESSION_MAX_AGE: Duration = Duration::from_secs(30);

/// This instance's session: the schema lists its tool calls share, the notifications of
/// their statements, and the graph settings they use. Spin (like devhost) instantiates a
/// WASIp2 component, with the dispatcher it is composed into, once per incoming HTTP
/// request (Spin's `--max-instance-reuse-count` defaults to 1 for WASIp2), so the lists
/// are read at most once per request (once more for a name they lack) and never outlive
/// it, and the `neo4j_*` variables are read once per request instead of eight look-ups
/// (host calls) per tool call. Should a host be told to reuse instances, a session still
/// ends after [`SESSION_MAX_AGE`].
fn session() -> Arc<Session> {
    static SESSION: Mutex<Option<(Instant, Arc<Session>)>> = Mutex::new(None);
    let mut current = SESSION.lock().unwrap_or_else(|p| p.into_inner());
    match &*current {
        Some((started, session)) if started.elapsed() < SESSION_MAX_AGE => session.clone(),
        _ => {
            let declared = kg_spin::graph_profile::load();
            let graph = kg_graph_tools::Session::with_declared(
                declared
                    .as_ref()
                    .map(|l| l.declared.clone())
                    .unwrap_or_default(),
            );
            if let Some(audience) = &*AUDIENCE.lock().unwrap_or_else(|p| p.into_inner()) {
                graph.set_audience(audience);
            }
            let session = Arc::new(Session {
                graph,
                profile_error: declared.err(),
                // The query tools only read: the reader's credentials when the deployment
                // has one.
                config: kg_spin::graph_config(kg_spin::GraphUser::Reader),
                deadline: kg_spin::graph_request_deadline(),
                execution_limit: kg_spin::graph_execution_limit(),
            });
            *current = Some((Instant::now(), session.clone()));
            session
        }
    }
}

struct Session {
    graph: kg_graph_tools::Session,
    /// A declared graph profile that does not parse: every tool call says so (with its
    /// line) rather than run on a shape the deployment did not mean.
    profile_error: Option<String>,
    config: Result<neo4j_client::Config, String>,
    /// How long one graph request may take (`neo4j_query_timeout_ms`).
    deadline: Duration,
    /// The `maxExecutionTime` every statement carries.
    execution_limit: Duration,
}

struct QueryTools;

impl Guest for QueryTools {
    fn use_trace_context(traceparent: String) {
        kg_spin::telemetry::adopt(&traceparent, "query-tools");
    }

    fn take_spans() -> String {
        kg_spin::telemetry::take_spans()
    }

    fn status() -> ComponentStatus {
        let names = graph_names();
        let checks = vec![
            kg_spin::configuration_check(kg_spin::NEO4J_VARIABLES),
            kg_spin::graph_check(),
            kg_spin::graph_profile::check(
                names
                    .as_ref()
                    .map(|(l, t, p)| (l.as_slice(), t.as_slice(), p.as_slice())),
                None,
            ),
        ];
        kg_spin::status("query-tools", env!("CARGO_PKG_VERSION"), checks)
    }

    fn use_audience(audience: Audience) {
        let audience = PolicyAudience {
            roles: audience.roles,
            for_model: audience.for_model,
        };
        session().graph.set_audience(&audience);
        *AUDIENCE.lock().unwrap_or_else(|p| p.into_inner()) = Some(audience);
    }

    fn use_bookmarks(bookmarks: Vec<String>) {
        kg_spin::graph_bookmarks().replace(bookmarks);
    }

    fn graph_bookmarks() -> Vec<String> {
        kg_spin::graph_bookmarks().current()
    }

    fn list_tools() -> Vec<ToolSpec> {
        // Text written from the specs at build time (kg_graph_tools::SPEC_TEXTS): every
        // turn lists the tools, and building, printing and freeing the schemas' trees each
        // time cost half as much as the turn's four tool calls.
        kg_graph_tools::SPEC_TEXTS
            .iter()
            .map(|(name, description, schema)| ToolSpec {
                name: (*name).into(),
                description: (*description).into(),
                parameters_schema: (*schema).into(),
            })
            .collect()
    }

    fn call_tool(name: String, arguments: Json) -> Result<ToolResult, Error> {
        let session = session();
        if let Some(e) = &session.profile_error {
            return Err(Error::new(ErrorCode::Internal, e.clone()));
        }
        let config = session
            .config
            .clone()
            .map_err(|e| Error::new(ErrorCode::Internal, e))?;
        let deadline = session.deadline;
        // The graph stops the statement itself a second before the HTTP deadline, so a
        // statement too slow to finish is a 400 `query_too_expensive` naming the limit
        // (and stops using the graph), not a 504 while it runs on.
        let client = Client::new(config, TimedTransport { deadline })
            .with_max_execution_time(Some(session.execution_limit))
            .with_bookmarks(kg_spin::graph_bookmarks());
        let output = kg_graph_tools::call_in(
            &session.graph,
            &client,
            &TimedTransport { deadline },
            &name,
            &arguments,
        );
        // Deprecations and warnings go to the log, one line each (never parameter values).
        for noted in session.graph.take_notifications() {
            if let Some(line) = kg_graph_tools::log_line(&name, &noted) {
                eprintln!("query-tools: {line}");
            }
        }
        let output = output?;
        Ok(ToolResult {
            // Straight into a string (what `Display` prints, without `fmt::Formatter`).
            data: serde_json::to_string(&output.data).unwrap_or_default(),
            summary: output.summary,
            graph: output.graph,
            truncated: output.truncated,
        })
    }
}

/// The graph's labels, relationship types and property keys, all of them (the profile
/// check compares the policy's names with them), for the profile check's warnings; None
/// when the graph does not answer (the graph check says why).
fn graph_names() -> Option<kg_graph_tools::SchemaNames> {
    let client = kg_spin::graph_client().ok()?;
    let session = kg_graph_tools::Session::new();
    kg_graph_tools::Graph::new(&client, &session)
        .schema_names()
        .ok()
}

export!(QueryTools);
