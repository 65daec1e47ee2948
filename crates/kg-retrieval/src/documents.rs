//! Ingest, list and delete documents: `(:Document {id, title, meta_*, ingested_at,
//! chunk_count})-[:HAS_CHUNK]->(:Chunk {id, text, embedding, position, document_id})`,
//! chunks `-[:MENTIONS]->` the graph entities whose business key they contain.

use crate::chunking::{self, Format};
use crate::embeddings::Embed;
use crate::errors::{graph_error, invalid};
use crate::retry;
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
/// (found by BM25 only) and the report says so. A transaction that loses to a concurrent
/// write of the same id is run again ([`retry`]); one that keeps losing is a 409.
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
    ensure_document_key(graph, &mut warnings);
    if let Err(e) = create_schema(graph, &schema::chunk_key_ddl()) {
        warnings.push(format!("could not create the unique key on chunk ids: {e}"));
    }
    let mut ddl = schema::lookup_index_ddl().to_vec();
    ddl.push(schema::fulltext_index_ddl());
    ddl.extend(dimensions.map(schema::vector_index_ddl));
    for statement in ddl {
        if let Err(e) = create_schema(graph, &statement) {
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
    // Concurrent writers of one id. Everything is one transaction, whatever the number of
    // chunk statements, so a reader or another writer sees the old version or the new one,
    // never a mix, and an attempt that fails leaves nothing behind (rolled back). Its first
    // statement upserts the document node, which locks the document for the rest of the
    // transaction: in Neo4j the node's write lock (or, for a new id, the unique key's lock
    // that MERGE takes), in Grafeo the first writer's claim on the node or the key. A
    // concurrent ingest or delete of the id therefore waits or conflicts before either
    // touches a chunk, and a conflict rolls the loser back whole and runs it again. No
    // delete can interleave with the chunk statements: the final state is that of the
    // writer that committed last, the whole new version, or nothing after a delete.
    let replaced = retry::with_retries(
        || {
            in_transaction(graph, |tx| {
                let mut params = Map::new();
                params.insert("id".into(), json!(input.id));
                params.insert("props".into(), Json::Object(document.clone()));
                // `SET d = $props` also drops the title and metadata of an earlier version.
                let upserted = graph.run_in(
                    tx,
                    "MERGE (d:Document {id: $id}) SET d = $props RETURN count(d) AS documents",
                    params,
                )?;
                let created = upserted.counters.as_ref().map_or(0, |c| c.nodes_created) > 0;
                remove_chunks(graph, tx, &input.id)?;
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
                Ok(!created)
            })
        },
        |n, e| retry::sleep("storing the document", n, e),
    )
    .map_err(|e| retry::write_error("storing the document failed", &e))?;
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

/// Deletes a document and its chunks; false when there was none. Retried like
/// [`ingest`] when it loses to a concurrent write of the id.
pub fn delete<T: Transport>(graph: &Client<T>, id: &str) -> Result<bool, Error> {
    retry::with_retries(
        || in_transaction(graph, |tx| remove(graph, tx, id)),
        |n, e| retry::sleep("deleting the document", n, e),
    )
    .map_err(|e| retry::write_error("deleting the document failed", &e))
}

/// Runs one schema command (all are `IF NOT EXISTS` or `IF EXISTS`, so safe to repeat).
/// Concurrent first ingests create the same indexes at once: the race for one rule is the
/// client's to settle (`run_schema`), and the deadlocks Neo4j breaks between them are
/// retried like any lost write.
fn create_schema<T: Transport>(
    graph: &Client<T>,
    statement: &str,
) -> Result<QueryResult, Neo4jError> {
    retry::with_retries(
        || graph.run_schema(statement),
        |n, e| retry::sleep("creating the search schema", n, e),
    )
}

/// The unique key on document ids ([`schema::DOCUMENT_KEY`]). Neo4j refuses it while the
/// plain index of earlier versions exists: that index is dropped and the key created
/// again; if the key still cannot be created, the plain index is kept and the report says
/// that concurrent first ingests of one id are not guarded.
fn ensure_document_key<T: Transport>(graph: &Client<T>, warnings: &mut Vec<String>) {
    let run = |statement: String| create_schema(graph, &statement);
    if run(schema::document_key_ddl()).is_ok() {
        return;
    }
    let migrated =
        run(schema::legacy_document_index_drop()).and_then(|_| run(schema::document_key_ddl()));
    if let Err(e) = migrated {
        let _ = run(schema::legacy_document_index_ddl());
        warnings.push(format!(
            "could not create the unique key on document ids, so two concurrent first ingests of one id may both be stored: {e}"
        ));
    }
}

/// Documents by id, at most [`MAX_LISTED`], read in order from the id's unique index (the
/// `IS NOT NULL` lets the planner take its order instead of sorting every document).
pub fn list<T: Transport>(graph: &Client<T>) -> Result<Vec<DocumentInfo>, Error> {
    let mut params = Map::new();
    params.insert("limit".into(), json!(MAX_LISTED));
    let result = graph
        .run(
            "MATCH (d:Document) WHERE d.id IS NOT NULL RETURN d ORDER BY d.id LIMIT $limit",
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

/// Removes the document and its chunks inside `tx`; true when the document existed. The
/// document node is written first (a property set and removed: no trace), which locks it
/// as [`ingest`]'s upsert does, so a concurrent writer of the id waits or conflicts on the
/// node before either deletes a chunk. Chunks of the id without a document go too.
fn remove<T: Transport>(graph: &Client<T>, tx: &Transaction, id: &str) -> Result<bool, Neo4jError> {
    let mut params = Map::new();
    params.insert("id".into(), json!(id));
    graph.run_in(
        tx,
        "MATCH (d:Document {id: $id}) SET d._kg_lock = true REMOVE d._kg_lock \
         RETURN count(d) AS locked",
        params.clone(),
    )?;
    remove_chunks(graph, tx, id)?;
    let result = graph.run_in(tx, "MATCH (d:Document {id: $id}) DETACH DELETE d", params)?;
    Ok(deleted(&result) > 0)
}

/// Deletes the chunks of document `id` (and their links) inside `tx`.
fn remove_chunks<T: Transport>(
    graph: &Client<T>,
    tx: &Transaction,
    id: &str,
) -> Result<(), Neo4jError> {
    let mut params = Map::new();
    params.insert("id".into(), json!(id));
    graph.run_in(
        tx,
        "MATCH (c:Chunk {document_id: $id}) DETACH DELETE c",
        params,
    )?;
    Ok(())
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
    use kg_wit::types::ErrorCode;
    use neo4j_client::{Auth, Config, HttpRequest, HttpResponse, Method, TransportError};
    use std::cell::{Cell, RefCell};

    /// Answers the Query API as a graph holding an earlier version (`existing`) would;
    /// chunk writes fail when `fail_chunks`; the next `conflicts` transactions lose a race
    /// (their first statement fails with a deadlock). Records (url, body) of every request.
    struct FakeGraph {
        existing: bool,
        fail_chunks: bool,
        conflicts: Cell<u32>,
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
            let first_in_tx = request.url.ends_with("/tx/7")
                && self
                    .requests
                    .borrow()
                    .iter()
                    .rev()
                    .nth(1)
                    .is_some_and(|(url, _, _)| url.ends_with("/tx"));
            let (status, answer) = if request.url.ends_with("/tx") {
                (202, json!({"transaction": {"id": "7"}}))
            } else if first_in_tx && self.conflicts.get() > 0 {
                self.conflicts.set(self.conflicts.get() - 1);
                (
                    400,
                    json!({"errors": [{"code": "Neo.TransientError.Transaction.DeadlockDetected", "message": "Write-write conflict"}]}),
                )
            } else if statement.starts_with("MERGE (d:Document") {
                (200, ok(json!({"nodesCreated": u64::from(!self.existing)})))
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
            conflicts: Cell::new(0),
            requests: RefCell::new(vec![]),
        }
    }

    fn client(g: &FakeGraph) -> Client<&FakeGraph> {
        Client::new(
            Config {
                origin: neo4j_client::Url::parse("http://graph:7474").expect("a URL"),
                database: "neo4j".into(),
                auth: Auth::None,
            },
            g,
        )
    }

    fn ingest_into(g: &FakeGraph, embeddings_up: bool) -> Result<IngestReport, Error> {
        let client = client(g);
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

    /// (begun, committed, rolled back) transactions.
    fn transactions(g: &FakeGraph) -> (usize, usize, usize) {
        let requests = g.requests.borrow();
        let count =
            |f: &dyn Fn(&(String, Method, Json)) -> bool| requests.iter().filter(|r| f(r)).count();
        (
            count(&|(url, _, _)| url.ends_with("/tx")),
            count(&|(url, _, _)| url.ends_with("/commit")),
            count(&|(url, method, _)| *method == Method::Delete && url.ends_with("/tx/7")),
        )
    }

    /// The statements sent inside transactions, in order.
    fn tx_statements(g: &FakeGraph) -> Vec<String> {
        g.requests
            .borrow()
            .iter()
            .filter(|(url, method, _)| url.ends_with("/tx/7") && *method == Method::Post)
            .map(|(_, _, b)| b["statement"].as_str().unwrap_or_default().to_string())
            .collect()
    }

    #[test]
    fn ingest_locks_the_document_first_and_retries_a_lost_race() {
        let g = fake(true, false);
        g.conflicts.set(2);
        let report = ingest_into(&g, true).unwrap();
        assert_eq!((report.chunks, report.replaced), (2, true));
        assert_eq!(
            transactions(&g),
            (3, 1, 2),
            "two rolled back, the third committed"
        );
        let in_tx = tx_statements(&g);
        let committed = &in_tx[2..];
        assert!(committed[0].starts_with("MERGE (d:Document {id: $id}) SET d = $props"));
        assert!(committed[1].contains("MATCH (c:Chunk {document_id: $id}) DETACH DELETE c"));
        assert!(committed[2].contains("UNWIND $chunks"));
        assert!(
            statements(&g)
                .iter()
                .any(|s| s.starts_with("CREATE CONSTRAINT document_id_unique IF NOT EXISTS"))
        );
        assert!(
            statements(&g)
                .iter()
                .any(|s| s.starts_with("CREATE CONSTRAINT chunk_id_unique IF NOT EXISTS"))
        );
    }

    #[test]
    fn an_ingest_that_keeps_losing_is_a_conflict_not_a_failed_dependency() {
        let g = fake(false, false);
        g.conflicts.set(10);
        let e = ingest_into(&g, true).unwrap_err();
        assert_eq!((e.code, e.code.http_status()), (ErrorCode::Conflict, 409));
        assert!(e.retryable);
        assert!(
            e.message.contains("storing the document failed")
                && e.message.contains("being changed concurrently; retry"),
            "{}",
            e.message
        );
        let attempts = 1 + retry::RETRIES as usize;
        assert_eq!(transactions(&g), (attempts, 0, attempts));
    }

    #[test]
    fn delete_locks_the_document_first_and_retries_a_lost_race() {
        let g = fake(true, false);
        g.conflicts.set(1);
        assert_eq!(delete(&client(&g), "d1"), Ok(true));
        assert_eq!(transactions(&g), (2, 1, 1));
        let statements = tx_statements(&g);
        assert_eq!(statements.len(), 1 + 3);
        assert!(statements[1].contains("SET d._kg_lock = true REMOVE d._kg_lock"));
        assert!(statements[2].contains("MATCH (c:Chunk {document_id: $id}) DETACH DELETE c"));
        assert!(statements[3].contains("MATCH (d:Document {id: $id}) DETACH DELETE d"));

        let g = fake(false, false);
        g.conflicts.set(10);
        let e = delete(&client(&g), "d1").unwrap_err();
        assert_eq!(e.code, ErrorCode::Conflict);
        assert!(
            e.message.contains("deleting the document failed"),
            "{}",
            e.message
        );
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
        drop(requests);
        assert_eq!(transactions(&g), (1, 0, 1), "a client error is not retried");
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
