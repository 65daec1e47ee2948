//! Spin-facing helpers shared by the components. Everything here is I/O through spin-sdk
//! (variables, outbound HTTP); the decisions live in plain crates.

pub mod clock;
mod early_body;
mod graph_probe;
pub mod graph_profile;
mod http_error;
mod llm;
mod llm_probe;
mod llm_stream;
mod neo4j;
mod sleep;
pub mod telemetry;
mod whole_response;

pub use graph_probe::{GRAPH_PROBE_TIMEOUT, graph_probe};
pub use llm::{
    LLM_CALL_TIMEOUT, SpinLlmTransport, llm_base_url, llm_check, llm_client, llm_config, llm_error,
    within, within_until,
};
pub use llm_probe::{LLM_PROBE_TIMEOUT, llm_models_url, llm_probe};
pub use llm_stream::{LlmStream, Pulled};
pub use neo4j::{
    DENIED, EARLY_BODY_MAX, GraphUser, LLM_READ_HEADERS, READ_HEADERS, SpinTransport,
    graph_bookmarks, graph_client, graph_config, graph_execution_limit, graph_request_deadline,
    is_denied, named_headers, send_async, send_reading,
};
pub use sleep::{Sleep, sleep};
pub use whole_response::send_whole;

use kg_wit::types::{Check, ComponentStatus};

/// Spin variables every graph-facing component needs (DESIGN.md §4).
pub const NEO4J_VARIABLES: &[&str] = &["neo4j_origin", "neo4j_database", "neo4j_user"];
/// Spin variables every LLM-facing component needs (DESIGN.md §7).
pub const LLM_VARIABLES: &[&str] = &["llm_origin", "llm_base_path", "llm_model"];

/// Reads a Spin variable, naming it in the error.
pub fn variable(name: &str) -> Result<String, String> {
    spin_sdk::variables::get(name).map_err(|e| format!("variable `{name}`: {e}"))
}

/// A whole-number variable; `default` when it is unset, empty or not a number.
pub fn number_variable(name: &str, default: u64) -> u64 {
    variable(name)
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .unwrap_or(default)
}

/// A check that the named variables resolve to non-empty values.
pub fn configuration_check(names: &[&str]) -> Check {
    let problems: Vec<String> = names
        .iter()
        .filter_map(|n| match variable(n) {
            Ok(v) if v.trim().is_empty() => Some(format!("variable `{n}` is empty")),
            Ok(_) => None,
            Err(e) => Some(e),
        })
        .collect();
    Check {
        name: "configuration".into(),
        ok: problems.is_empty(),
        detail: if problems.is_empty() {
            format!("{} resolved", names.join(", "))
        } else {
            problems.join("; ")
        },
    }
}

/// A check that reports which behaviour is not built yet, so `/health` says so plainly.
pub fn pending_check(what: &str, issue: u32) -> Check {
    Check {
        name: "capabilities".into(),
        ok: true,
        detail: format!("{what} not implemented yet (issue #{issue})"),
    }
}

/// Runs `RETURN 1` against the configured graph in READ mode: proves reachability,
/// credentials and the database name in one round trip.
pub fn graph_check() -> Check {
    let result = graph_client().and_then(|client| {
        client
            .run(
                "RETURN 1 AS ok",
                Default::default(),
                neo4j_client::AccessMode::Read,
            )
            .map_err(|e| e.to_string())
            .map(|_| client.config().origin.clone())
    });
    match result {
        Ok(origin) => Check {
            name: "graph".into(),
            ok: true,
            detail: format!("{origin} answered a READ query"),
        },
        Err(e) => Check {
            name: "graph".into(),
            ok: false,
            detail: format!("graph unreachable: {e}"),
        },
    }
}

/// A status whose readiness is the conjunction of its checks.
pub fn status(name: &str, version: &str, checks: Vec<Check>) -> ComponentStatus {
    ComponentStatus {
        name: name.into(),
        version: version.into(),
        ready: checks.iter().all(|c| c.ok),
        checks,
    }
}
