//! The query tools' logic, free of Spin: each tool checks its arguments, builds
//! parameterised Cypher (labels quoted, and checked against the live schema: before the
//! statement, or only when a statement matching the label found nothing), runs it
//! in READ mode with a LIMIT, and shapes a compact result of at most 256 KiB.
//! `run_read_cypher` takes Cypher from outside behind the layered guard (`guard`,
//! `explain`).

mod args;
mod by_class;
mod byte_cap;
mod catalog;
mod cypher;
mod describe;
mod explain;
mod graph_error;
pub mod guard;
mod instance;
mod neighbors;
mod ontology;
mod path;
mod read_cypher;
mod schema;
mod search;
mod session;
#[cfg(test)]
mod session_tests;
mod spec_texts;
mod statistics;
mod visibility;

pub use byte_cap::MAX_RESULT_BYTES;
pub use catalog::{ToolOutput, call, call_in, hints, log_line, specs};
pub use cypher::quote_name;
pub use graph_error::graph_error;
pub use kg_graph_profile as profile;
pub use schema::close_matches;
pub use session::{Graph, Noted, SchemaNames, Session};
pub use spec_texts::SPEC_TEXTS;
