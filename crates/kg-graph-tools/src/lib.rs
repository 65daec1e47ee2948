//! The query tools' logic, free of Spin: each tool checks its arguments, builds
//! parameterised Cypher (labels only after checking them against the live schema), runs it
//! in READ mode with a LIMIT, and shapes a compact result.

mod args;
mod by_class;
mod catalog;
mod cypher;
mod graph_error;
mod instance;
mod neighbors;
mod ontology;
mod path;
mod schema;
mod search;
mod statistics;

pub use catalog::{ToolOutput, call, specs};
pub use graph_error::graph_error;
pub use schema::close_matches;
