//! The tool catalog: specs for LLM tool calling and dispatch by name.

use crate::{by_class, neighbors, ontology, path, search, statistics};
use kg_wit::types::{Error, ErrorCode, GraphData};
use neo4j_client::{Client, Transport};
use serde_json::{Value as Json, json};

/// A tool's answer: compact JSON for the LLM and a one-line summary for people.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput {
    pub data: Json,
    pub summary: String,
    /// Present when the result is a subgraph, for the UI to draw.
    pub graph: Option<GraphData>,
    pub truncated: bool,
}

/// Tools the query-tools issue (#4) builds next; named so a call says so plainly.
const PLANNED: [&str; 2] = ["describe_class", "run_read_cypher"];

/// (name, description, JSON Schema of the arguments) of every implemented tool.
pub fn specs() -> Vec<(&'static str, &'static str, Json)> {
    let mut specs = vec![search::spec()];
    specs.push(by_class::spec());
    specs.push(neighbors::spec());
    specs.push(path::spec());
    specs.extend(ontology::specs());
    specs.push(statistics::spec());
    specs
}

pub fn call<T: Transport>(
    client: &Client<T>,
    name: &str,
    arguments: &str,
) -> Result<ToolOutput, Error> {
    match name {
        statistics::NAME => statistics::run(client, arguments),
        search::NAME => search::run(client, arguments),
        by_class::NAME => by_class::run(client, arguments),
        neighbors::NAME => neighbors::run(client, arguments),
        path::NAME => path::run(client, arguments),
        ontology::CLASSES => ontology::classes(client, arguments),
        ontology::RELATIONSHIPS => ontology::relationships(client, arguments),
        planned if PLANNED.contains(&planned) => {
            Err(Error::not_implemented(&format!("tool `{planned}`"), 4))
        }
        unknown => {
            let names: Vec<String> = specs()
                .iter()
                .map(|s| s.0.to_string())
                .chain(PLANNED.iter().map(|s| s.to_string()))
                .collect();
            let suggestions = crate::close_matches(unknown, &names);
            let mut e = Error::new(ErrorCode::NotFound, format!("no tool `{unknown}`"));
            e.detail = Some(json!({"did_you_mean": suggestions, "tools": names}).to_string());
            Err(e)
        }
    }
}
