//! Ingest, list and delete documents: `(:Document {id, title, meta_*, ingested_at,
//! chunk_count})-[:HAS_CHUNK]->(:Chunk {id, text, embedding, position, document_id})`,
//! chunks `-[:MENTIONS]->` the graph entities whose business key they contain.

use crate::chunking::{self, Format};
use crate::embeddings::Embed;
use crate::errors::{graph_error, invalid};
use crate::schema::{self, METADATA_PREFIX};
use kg_wit::kg::retriever::retriever::{
    ChunkingOptions, ContentType, DocumentInfo, DocumentInput, IngestReport,
};
use kg_wit::types::Error;
use neo4j_client::{AccessMode, Client, Neo4jError, QueryResult, Transaction, Transport, Value};
use serde_json::{Map, Value as Json, json};
use std::collections::BTreeMap;

pub const MAX_ID_CHARS: usize = 200;
/// Chunks written per statement: keeps each request body to a few MB with embeddings.
const CHUNKS_PER_STATEMENT: usize = 200;
/// `GET /documents` answers at most this many (the contract has no paging).
pub const MAX_LISTED: u32 = 1000;

/// Checks the input, naming the field at fault.
pub fn check_input(input: &DocumentInput) -> Result<(), Error> {
    let id = input.id.trim();
    if id.is_empty() || id != input.id || input.id.chars().count() > MAX_ID_CHARS {
        return Err(invalid(format!(
            "`id` must be 1-{MAX_ID_CHARS} characters without surrounding whitespace"
        )));
    }
    if input.id.chars().any(char::is_control) {
        return Err(invalid("`id` must not contain control characters"));
    }
    if input.text.trim().is_empty() {
        return Err(invalid("`text` must not be empty"));
    }
    for (key, _) in &input.metadata {
        if let Some(problem) = schema::metadata_key_problem(key) {
            return Err(invalid(format!("`metadata`: {problem}")));
        }
    }
    Ok(())
}

pub fn chunking_options(
    options: Option<ChunkingOptions>,
) -> Result<chunking::ChunkingOptions, Error> {
    let options = options.map_or_else(chunking::ChunkingOptions::default, |o| {
        chunking::ChunkingOptions {
            max_chars: o.max_chars as usize,
            overlap_chars: o.overlap_chars as usize,
        }
    });
    match options.problem() {
        Some(problem) => Err(invalid(format!("`chunking`: {problem}"))),
        None => Ok(options),
    }
}

/// Chunks, embeds (in batches) and stores a document, replacing an earlier version in the
/// same transaction. Embedding failure is not fatal: the chunks are stored without vectors
/// (found by BM25 only) and the report says so.
pub fn ingest<T: Transport, E: Embed>(
    graph: &Client<T>,
    embedder: &E,
    input: &DocumentInput,
    options: Option<ChunkingOptions>,
    ingested_at: &str,
) -> Result<IngestReport, Error> {
    check_input(input)?;
    let options = chunking_options(options)?;
    let format = match input.content_type {
        ContentType::Text => Format::Text,
        ContentType::Markdown => Format::Markdown,
    };
    let chunks = chunking::chunk(&input.text, format, options);
    let texts: Vec<String> = chunks.iter().map(|c| c.text.clone()).collect();
    let mut warnings = Vec::new();
    let embeddings = match embedder.embed(&texts) {
        Ok(vectors) => Some(vectors),
        Err(e) => {
            warnings.push(format!(
                "chunks stored without embeddings, so only full-text search finds them until the document is ingested again: {e}"
            ));
            None
        }
    };
    // Schema changes cannot share a transaction with data changes in Neo4j.
    let dimensions = embeddings.as_ref().and_then(|v| v.first()).map(Vec::len);
    let mut ddl = schema::lookup_index_ddl().to_vec();
    ddl.push(schema::fulltext_index_ddl());
    ddl.extend(dimensions.map(schema::vector_index_ddl));
    for statement in ddl {
        if let Err(e) = graph.run(&statement, Map::new(), AccessMode::Write) {
            warnings.push(format!("could not create a search index: {e}"));
        }
    }
    let rows: Vec<Json> = chunks
        .iter()
        .enumerate()
        .map(|(position, chunk)| {
            json!({
                "id": format!("{}#{position}", input.id),
                "text": chunk.text,
                "position": position,
                "embedding": embeddings.as_ref().and_then(|v| v.get(position)),
            })
        })
        .collect();
    let mut document = Map::new();
    document.insert("id".into(), json!(input.id));
    if let Some(title) = &input.title {
        document.insert("title".into(), json!(title));
    }
    document.insert("ingested_at".into(), json!(ingested_at));
    document.insert("chunk_count".into(), json!(chunks.len()));
    for (key, value) in &input.metadata {
        document.insert(format!("{METADATA_PREFIX}{key}"), json!(value));
    }
    let replaced = in_transaction(graph, |tx| {
        let removed = remove(graph, tx, &input.id)?;
        let mut params = Map::new();
        params.insert("props".into(), Json::Object(document.clone()));
        graph.run_in(tx, "CREATE (d:Document) SET d += $props RETURN count(d) AS created", params)?;
        for batch in rows.chunks(CHUNKS_PER_STATEMENT) {
            let mut params = Map::new();
            params.insert("id".into(), json!(input.id));
            params.insert("chunks".into(), Json::Array(batch.to_vec()));
            graph.run_in(
                tx,
                "MATCH (d:Document {id: $id}) UNWIND $chunks AS c \
                 CREATE (d)-[:HAS_CHUNK]->(:Chunk {id: c.id, text: c.text, embedding: c.embedding, position: c.position, document_id: $id}) \
                 RETURN count(*) AS created",
                params,
            )?;
        }
        link_mentions(graph, tx, &input.id, &input.text)?;
        Ok(removed)
    })
    .map_err(|e| graph_error("storing the document failed", &e))?;
    Ok(IngestReport {
        document_id: input.id.clone(),
        chunks: chunks.len() as u32,
        replaced,
        warnings,
    })
}

/// `(:Chunk)-[:MENTIONS]->(entity)` for every node whose `id` is a business key the chunk
/// contains. One scan for the keys, then this document's chunks by their indexed id.
fn link_mentions<T: Transport>(
    graph: &Client<T>,
    tx: &Transaction,
    id: &str,
    text: &str,
) -> Result<(), Neo4jError> {
    let keys = crate::mentions::candidate_keys(text);
    if keys.is_empty() {
        return Ok(());
    }
    let mut params = Map::new();
    params.insert("id".into(), json!(id));
    params.insert("keys".into(), json!(keys));
    graph.run_in(
        tx,
        "MATCH (e) WHERE e.id IN $keys AND NOT e:Chunk AND NOT e:Document \
         WITH e MATCH (c:Chunk {document_id: $id}) WHERE c.text CONTAINS e.id \
         MERGE (c)-[:MENTIONS]->(e) RETURN count(*) AS links",
        params,
    )?;
    Ok(())
}

/// Deletes a document and its chunks; false when there was none.
pub fn delete<T: Transport>(graph: &Client<T>, id: &str) -> Result<bool, Error> {
    in_transaction(graph, |tx| remove(graph, tx, id))
        .map_err(|e| graph_error("deleting the document failed", &e))
}

/// Documents by id, at most [`MAX_LISTED`].
pub fn list<T: Transport>(graph: &Client<T>) -> Result<Vec<DocumentInfo>, Error> {
    let mut params = Map::new();
    params.insert("limit".into(), json!(MAX_LISTED));
    let result = graph
        .run(
            "MATCH (d:Document) RETURN d ORDER BY d.id LIMIT $limit",
            params,
            AccessMode::Read,
        )
        .map_err(|e| graph_error("listing documents failed", &e))?;
    Ok(result
        .rows
        .iter()
        .filter_map(|row| row.first())
        .map(document_info)
        .collect())
}

/// The document node as the contract's record.
pub fn document_info(node: &Value) -> DocumentInfo {
    let empty = BTreeMap::new();
    let properties = match node {
        Value::Node { properties, .. } | Value::Map(properties) => properties,
        _ => &empty,
    };
    let text = |key: &str| match properties.get(key) {
        Some(Value::String(s)) => Some(s.clone()),
        _ => None,
    };
    DocumentInfo {
        id: text("id").unwrap_or_default(),
        title: text("title"),
        chunks: match properties.get("chunk_count") {
            Some(Value::Integer(n)) => u32::try_from(*n).unwrap_or(0),
            _ => 0,
        },
        metadata: metadata(properties),
        ingested_at: text("ingested_at").unwrap_or_default(),
    }
}

/// `meta_*` properties as metadata pairs, by key.
pub fn metadata(properties: &BTreeMap<String, Value>) -> Vec<(String, String)> {
    properties
        .iter()
        .filter_map(|(k, v)| {
            let key = k.strip_prefix(METADATA_PREFIX)?;
            match v {
                Value::String(s) => Some((key.to_string(), s.clone())),
                _ => None,
            }
        })
        .collect()
}

/// Removes the document and its chunks inside `tx`; true when the document existed.
fn remove<T: Transport>(graph: &Client<T>, tx: &Transaction, id: &str) -> Result<bool, Neo4jError> {
    let mut params = Map::new();
    params.insert("id".into(), json!(id));
    graph.run_in(
        tx,
        "MATCH (c:Chunk {document_id: $id}) DETACH DELETE c",
        params.clone(),
    )?;
    let result = graph.run_in(tx, "MATCH (d:Document {id: $id}) DETACH DELETE d", params)?;
    Ok(deleted(&result) > 0)
}

fn deleted(result: &QueryResult) -> u64 {
    result.counters.as_ref().map_or(0, |c| c.nodes_deleted)
}

/// Runs `work` in a write transaction: committed if it succeeds, rolled back otherwise.
fn in_transaction<T: Transport, R>(
    graph: &Client<T>,
    work: impl FnOnce(&Transaction) -> Result<R, Neo4jError>,
) -> Result<R, Neo4jError> {
    let tx = graph.begin(AccessMode::Write)?;
    match work(&tx) {
        Ok(value) => {
            graph.commit(tx)?;
            Ok(value)
        }
        Err(e) => {
            // The server may already have rolled back; the first error is the one to report.
            let _ = graph.rollback(tx);
            Err(e)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embeddings::EmbeddingError;
    use neo4j_client::{Auth, Config, HttpRequest, HttpResponse, Method, TransportError};
    use std::cell::RefCell;

    /// Answers the Query API as a graph holding an earlier version (`existing`) would;
    /// chunk writes fail when `fail_chunks`. Records (url, body) of every request.
    struct FakeGraph {
        existing: bool,
        fail_chunks: bool,
        requests: RefCell<Vec<(String, Method, Json)>>,
    }

    impl Transport for &FakeGraph {
        fn send(&self, request: HttpRequest) -> Result<HttpResponse, TransportError> {
            let body: Json = serde_json::from_slice(request.body.as_deref().unwrap_or_default())
                .unwrap_or_default();
            let statement = body["statement"].as_str().unwrap_or_default().to_string();
            self.requests
                .borrow_mut()
                .push((request.url.clone(), request.method, body));
            let ok = |counters: Json| json!({"data": {"fields": [], "values": []}, "counters": counters});
            let (status, answer) = if request.url.ends_with("/tx") {
                (202, json!({"transaction": {"id": "7"}}))
            } else if statement.contains(":Chunk {id: c.id") && self.fail_chunks {
                (
                    400,
                    json!({"errors": [{"code": "Neo.ClientError.Statement.TypeError", "message": "bad"}]}),
                )
            } else if statement.contains("MATCH (d:Document {id: $id}) DETACH DELETE d") {
                (200, ok(json!({"nodesDeleted": u64::from(self.existing)})))
            } else {
                (200, ok(json!({})))
            };
            Ok(HttpResponse {
                status,
                headers: vec![],
                body: answer.to_string().into_bytes(),
            })
        }
    }

    struct FakeEmbedder(bool);

    impl Embed for FakeEmbedder {
        fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbeddingError> {
            if self.0 {
                Ok(texts
                    .iter()
                    .map(|t| vec![t.len() as f32, 1.0, 0.5])
                    .collect())
            } else {
                Err(EmbeddingError {
                    unavailable: true,
                    message: "connection refused".into(),
                })
            }
        }
    }

    fn fake(existing: bool, fail_chunks: bool) -> FakeGraph {
        FakeGraph {
            existing,
            fail_chunks,
            requests: RefCell::new(vec![]),
        }
    }

    fn ingest_into(g: &FakeGraph, embeddings_up: bool) -> Result<IngestReport, Error> {
        let client = Client::new(
            Config {
                origin: "http://graph:7474".into(),
                database: "neo4j".into(),
                auth: Auth::None,
            },
            g,
        );
        let mut doc = input("d1", "# A\n\none.\n\n# B\n\ntwo.\n", &[("lang", "en")]);
        doc.content_type = ContentType::Markdown;
        doc.title = Some("T".into());
        ingest(
            &client,
            &FakeEmbedder(embeddings_up),
            &doc,
            None,
            "2026-01-01T00:00:00Z",
        )
    }

    fn statements(g: &FakeGraph) -> Vec<String> {
        g.requests
            .borrow()
            .iter()
            .map(|(_, _, b)| b["statement"].as_str().unwrap_or_default().to_string())
            .collect()
    }

    #[test]
    fn ingest_creates_indexes_then_replaces_in_one_transaction() {
        let g = fake(true, false);
        let report = ingest_into(&g, true).unwrap();
        assert_eq!((report.chunks, report.replaced), (2, true));
        assert!(report.warnings.is_empty(), "{:?}", report.warnings);
        let statements = statements(&g);
        assert!(
            statements
                .iter()
                .any(|s| s.contains("CREATE FULLTEXT INDEX chunk_text"))
        );
        assert!(
            statements
                .iter()
                .any(|s| s.contains("`vector.dimensions`: 3"))
        );
        let requests = g.requests.borrow();
        let chunks = requests
            .iter()
            .find(|(_, _, b)| b["parameters"]["chunks"].is_array())
            .unwrap();
        assert!(
            chunks.0.ends_with("/tx/7"),
            "chunks are written inside the transaction"
        );
        assert_eq!(chunks.2["parameters"]["chunks"][1]["id"], "d1#1");
        assert_eq!(
            chunks.2["parameters"]["chunks"][1]["embedding"]
                .as_array()
                .map(Vec::len),
            Some(3)
        );
        let props = requests
            .iter()
            .find(|(_, _, b)| b["parameters"]["props"].is_object())
            .unwrap();
        assert_eq!(props.2["parameters"]["props"]["meta_lang"], "en");
        assert_eq!(props.2["parameters"]["props"]["title"], "T");
        assert!(requests.last().unwrap().0.ends_with("/tx/7/commit"));
    }

    #[test]
    fn embeddings_down_stores_chunks_without_vectors_and_says_so() {
        let g = fake(false, false);
        let report = ingest_into(&g, false).unwrap();
        assert!(!report.replaced);
        assert!(
            report.warnings[0].contains("without embeddings"),
            "{:?}",
            report.warnings
        );
        assert!(!statements(&g).iter().any(|s| s.contains("VECTOR INDEX")));
        let requests = g.requests.borrow();
        let chunks = requests
            .iter()
            .find(|(_, _, b)| b["parameters"]["chunks"].is_array())
            .unwrap();
        assert!(chunks.2["parameters"]["chunks"][0]["embedding"].is_null());
    }

    #[test]
    fn a_failed_write_rolls_back_and_keeps_the_old_version() {
        let g = fake(true, true);
        let e = ingest_into(&g, true).unwrap_err();
        assert!(
            e.message.contains("storing the document failed"),
            "{}",
            e.message
        );
        let requests = g.requests.borrow();
        let last = requests.last().unwrap();
        assert_eq!(
            (last.1, last.0.ends_with("/tx/7")),
            (Method::Delete, true),
            "rollback"
        );
        assert!(!requests.iter().any(|(url, _, _)| url.ends_with("/commit")));
    }

    fn input(id: &str, text: &str, metadata: &[(&str, &str)]) -> DocumentInput {
        DocumentInput {
            id: id.into(),
            title: None,
            content_type: ContentType::Text,
            text: text.into(),
            metadata: metadata
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        }
    }

    #[test]
    fn bad_input_names_the_field() {
        let cases = [
            (input("", "t", &[]), "`id`"),
            (input(" x", "t", &[]), "`id`"),
            (input(&"x".repeat(201), "t", &[]), "`id`"),
            (input("x", " \n", &[]), "`text`"),
            (input("x", "t", &[("bad key", "v")]), "`metadata`"),
        ];
        for (doc, field) in cases {
            let e = check_input(&doc).unwrap_err();
            assert!(e.message.contains(field), "{}: {}", field, e.message);
        }
        assert!(check_input(&input("doc-1", "t", &[("lang", "en")])).is_ok());
        let e = chunking_options(Some(ChunkingOptions {
            max_chars: 10,
            overlap_chars: 0,
        }))
        .unwrap_err();
        assert!(e.message.contains("`chunking`") && e.message.contains("max_chars"));
    }

    #[test]
    fn document_nodes_become_records() {
        let mut props = BTreeMap::new();
        props.insert("id".to_string(), Value::String("d1".into()));
        props.insert("chunk_count".to_string(), Value::Integer(3));
        props.insert("meta_lang".to_string(), Value::String("zh".into()));
        props.insert(
            "ingested_at".to_string(),
            Value::String("2026-01-01T00:00:00Z".into()),
        );
        let info = document_info(&Value::Node {
            element_id: "4:x:1".into(),
            labels: vec![],
            properties: props,
        });
        assert_eq!(info.id, "d1");
        assert_eq!(info.chunks, 3);
        assert_eq!(info.metadata, vec![("lang".to_string(), "zh".to_string())]);
        assert_eq!(info.title, None);
    }
}
