//! The tool catalog: specs for LLM tool calling and dispatch by name. Every answer passes
//! the byte cap here, whatever the tool: data and graph together.

use crate::byte_cap::{ENVELOPE_RESERVE, MAX_RESULT_BYTES, cap_answer};
use crate::{by_class, describe, neighbors, ontology, path, read_cypher, search, statistics};
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

/// (name, description, JSON Schema of the arguments) of every tool.
pub fn specs() -> Vec<(&'static str, &'static str, Json)> {
    let mut specs = vec![search::spec()];
    specs.push(by_class::spec());
    specs.push(neighbors::spec());
    specs.push(path::spec());
    specs.extend(ontology::specs());
    specs.push(describe::spec());
    specs.push(statistics::spec());
    specs.push(read_cypher::spec());
    specs
}

/// Runs tool `name`. `transport` is the client's own transport, for the one request the
/// client does not model (run_read_cypher's `EXPLAIN` plan).
pub fn call<T: Transport>(
    client: &Client<T>,
    transport: &T,
    name: &str,
    arguments: &str,
) -> Result<ToolOutput, Error> {
    let mut output = match name {
        statistics::NAME => statistics::run(client, arguments),
        search::NAME => search::run(client, arguments),
        by_class::NAME => by_class::run(client, arguments),
        neighbors::NAME => neighbors::run(client, arguments),
        path::NAME => path::run(client, arguments),
        ontology::CLASSES => ontology::classes(client, arguments),
        ontology::RELATIONSHIPS => ontology::relationships(client, arguments),
        describe::NAME => describe::run(client, arguments),
        read_cypher::NAME => read_cypher::run(client, transport, arguments),
        unknown => {
            let names: Vec<String> = specs().iter().map(|s| s.0.to_string()).collect();
            let suggestions = crate::close_matches(unknown, &names);
            let mut e = Error::new(ErrorCode::NotFound, format!("no tool `{unknown}`"));
            e.detail = Some(json!({"did_you_mean": suggestions, "tools": names}).to_string());
            Err(e)
        }
    }?;
    // The whole answer, data and graph together, as the HTTP API sends it, fits in the
    // cap with room for what the dispatcher adds.
    if cap_answer(
        name,
        &mut output.data,
        &output.summary,
        &mut output.graph,
        MAX_RESULT_BYTES - ENVELOPE_RESERVE,
    ) {
        output.truncated = true;
        output
            .summary
            .push_str(" (cut to fit the result size limit)");
    }
    Ok(output)
}
