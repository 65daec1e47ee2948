use kg_wit::types::Error;
use neo4j_client::Neo4jError;

/// A Neo4j failure of a tool's own query as the tools' typed error (mapping in
/// `Error::from_graph`).
pub fn graph_error(e: Neo4jError) -> Error {
    Error::from_graph("graph query failed", &e)
}
