//! Failures as the WIT contract's typed error.

use kg_wit::types::{Error, ErrorCode};
use neo4j_client::Neo4jError;

pub fn invalid(message: impl Into<String>) -> Error {
    Error::new(ErrorCode::InvalidArgument, message)
}

/// A graph failure, `context` first in the message (mapping in `Error::from_graph`).
pub fn graph_error(context: &str, e: &Neo4jError) -> Error {
    Error::from_graph(context, e)
}
