//! The query-tools component: binds `kg:agent/query-tools`. The tools arrive with issues
//! #3 and #4; `status` already probes the graph so `/health` reports its reachability.

use kg_wit::types::{ComponentStatus, Error, Json};

wit_bindgen::generate!({
    path: "../../wit",
    world: "query-tools-component",
    with: { "kg:agent/types@0.1.0": kg_wit::types },
});

use exports::kg::agent::query_tools::{Guest, ToolResult, ToolSpec};

struct QueryTools;

impl Guest for QueryTools {
    fn status() -> ComponentStatus {
        let mut checks = vec![kg_spin::configuration_check(kg_spin::NEO4J_VARIABLES)];
        match kg_spin::variable("neo4j_origin") {
            // Neo4j answers its discovery document at the origin root.
            Ok(origin) => checks.push(kg_spin::reachability_check(
                "graph",
                &format!("{}/", origin.trim_end_matches('/')),
            )),
            Err(e) => checks.push(kg_wit::types::Check {
                name: "graph".into(),
                ok: false,
                detail: e,
            }),
        }
        checks.push(kg_spin::pending_check("graph query tools", 4));
        kg_spin::status("query-tools", env!("CARGO_PKG_VERSION"), checks)
    }

    /// No tool is implemented yet, so none is offered.
    fn list_tools() -> Vec<ToolSpec> {
        Vec::new()
    }

    fn call_tool(name: String, _arguments: Json) -> Result<ToolResult, Error> {
        Err(Error::not_implemented(&format!("tool `{name}`"), 4))
    }
}

export!(QueryTools);
