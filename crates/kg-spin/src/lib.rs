//! Spin-facing helpers shared by the components. Everything here is I/O through spin-sdk
//! (variables, outbound HTTP); the decisions live in plain crates.

use kg_wit::types::{Check, ComponentStatus};

/// Spin variables every graph-facing component needs (DESIGN.md §4).
pub const NEO4J_VARIABLES: &[&str] = &["neo4j_origin", "neo4j_database", "neo4j_user"];
/// Spin variables every LLM-facing component needs (DESIGN.md §7).
pub const LLM_VARIABLES: &[&str] = &["llm_origin", "llm_base_path", "llm_model"];

/// Reads a Spin variable, naming it in the error.
pub fn variable(name: &str) -> Result<String, String> {
    spin_sdk::variables::get(name).map_err(|e| format!("variable `{name}`: {e}"))
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

/// Sends `GET url` and reports whether an HTTP answer came back (any status counts as
/// reachable; the status is in the detail).
pub fn reachability_check(name: &str, url: &str) -> Check {
    let request = spin_sdk::http::Request::get(url).build();
    let result: Result<spin_sdk::http::Response, _> =
        spin_sdk::http::run(spin_sdk::http::send(request));
    match result {
        Ok(response) => Check {
            name: name.into(),
            ok: true,
            detail: format!("{url} answered HTTP {}", response.status()),
        },
        Err(e) => Check {
            name: name.into(),
            ok: false,
            detail: format!("{url} unreachable: {e}"),
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
