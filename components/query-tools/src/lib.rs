//! The query-tools component: binds `kg:agent/query-tools` to kg-graph-tools over the
//! Neo4j Query API (spin-sdk outbound HTTP).

use kg_wit::types::{ComponentStatus, Error, ErrorCode, Json};

wit_bindgen::generate!({
    path: "../../wit",
    world: "query-tools-component",
    with: { "kg:agent/types@0.1.0": kg_wit::types },
});

use exports::kg::agent::query_tools::{Guest, ToolResult, ToolSpec};

struct QueryTools;

impl Guest for QueryTools {
    fn status() -> ComponentStatus {
        let checks = vec![
            kg_spin::configuration_check(kg_spin::NEO4J_VARIABLES),
            kg_spin::graph_check(),
            kg_spin::pending_check("describe_class and read-only Cypher", 4),
        ];
        kg_spin::status("query-tools", env!("CARGO_PKG_VERSION"), checks)
    }

    fn list_tools() -> Vec<ToolSpec> {
        kg_graph_tools::specs()
            .into_iter()
            .map(|(name, description, schema)| ToolSpec {
                name: name.into(),
                description: description.into(),
                parameters_schema: schema.to_string(),
            })
            .collect()
    }

    fn call_tool(name: String, arguments: Json) -> Result<ToolResult, Error> {
        let client = kg_spin::graph_client().map_err(|e| Error::new(ErrorCode::Internal, e))?;
        let output = kg_graph_tools::call(&client, &name, &arguments)?;
        Ok(ToolResult {
            data: output.data.to_string(),
            summary: output.summary,
            graph: output.graph,
            truncated: output.truncated,
        })
    }
}

export!(QueryTools);
