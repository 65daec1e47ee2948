//! Neo4j 5's vector and full-text index DDL and procedures on devgraph, as kg-retrieval
//! sends them: creation, maintenance on write, READ-mode queries with the rest of the
//! statement, Neo4j's error for a missing index, and DROP INDEX.

use devgraph::graph::{AccessMode, Graph};
use devgraph::values::Format;
use serde_json::{Map, Value as Json, json};

fn graph() -> Graph {
    Graph::new(grafeo::GrafeoDB::new_in_memory())
}

fn run(g: &Graph, statement: &str, params: Json, mode: AccessMode) -> Result<Vec<Json>, String> {
    let params: Map<String, Json> = params.as_object().cloned().unwrap_or_default();
    g.run(statement, &params, mode, Format::Plain)
        .map(|body| {
            body["data"]["values"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .map_err(|e| format!("{}: {}", e.code, e.message))
}

/// A 16-dimensional one-hot-ish vector (16 = the shortest list devgraph stores as a vector).
fn vector(hot: usize) -> Vec<f64> {
    (0..16).map(|i| if i == hot { 1.0 } else { 0.05 }).collect()
}

fn setup() -> Graph {
    let g = graph();
    run(&g, "CREATE VECTOR INDEX chunk_embedding IF NOT EXISTS FOR (c:Chunk) ON c.embedding OPTIONS {indexConfig: {`vector.dimensions`: 16, `vector.similarity_function`: 'cosine'}}", json!({}), AccessMode::Write).unwrap();
    run(&g, "CREATE FULLTEXT INDEX chunk_text IF NOT EXISTS FOR (c:Chunk) ON EACH [c.text] OPTIONS {indexConfig: {`fulltext.analyzer`: 'cjk'}}", json!({}), AccessMode::Write).unwrap();
    // Idempotent, as IF NOT EXISTS promises.
    run(&g, "CREATE FULLTEXT INDEX chunk_text IF NOT EXISTS FOR (c:Chunk) ON EACH [c.text] OPTIONS {indexConfig: {`fulltext.analyzer`: 'cjk'}}", json!({}), AccessMode::Write).unwrap();
    let chunks = json!([
        {"id": "a", "text": "invoices are paid within thirty days", "embedding": vector(0)},
        {"id": "b", "text": "the warehouse accepts deliveries", "embedding": vector(1)},
        {"id": "c", "text": "差旅报销需要发票", "embedding": vector(2)},
    ]);
    run(&g, "UNWIND $chunks AS c CREATE (:Document {id: c.id})-[:HAS_CHUNK]->(:Chunk {id: c.id, text: c.text, embedding: c.embedding})", json!({"chunks": chunks}), AccessMode::Write).unwrap();
    g
}

#[test]
fn vector_query_nodes_ranks_by_cosine_in_read_mode() {
    let g = setup();
    let rows = run(
        &g,
        "CALL db.index.vector.queryNodes($index, $k, $embedding) YIELD node, score \
         MATCH (d:Document)-[:HAS_CHUNK]->(node) RETURN node.id, score, d.id ORDER BY score DESC LIMIT 2",
        json!({"index": "chunk_embedding", "k": 3, "embedding": vector(1)}),
        AccessMode::Read,
    )
    .unwrap();
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert_eq!(rows[0][0], "b");
    assert_eq!(rows[0][2], "b");
    let best = rows[0][1].as_f64().unwrap();
    assert!(
        (best - 1.0).abs() < 1e-4,
        "identical vectors score 1: {best}"
    );
    assert!(rows[1][1].as_f64().unwrap() < best);
}

#[test]
fn fulltext_query_nodes_scores_words_and_cjk_bigrams() {
    let g = setup();
    let q = "CALL db.index.fulltext.queryNodes('chunk_text', $query) YIELD node, score RETURN node.id, score ORDER BY score DESC LIMIT 10";
    let rows = run(
        &g,
        q,
        json!({"query": "when are invoices paid"}),
        AccessMode::Read,
    )
    .unwrap();
    assert_eq!(rows[0][0], "a", "{rows:?}");
    assert!(rows[0][1].as_f64().unwrap() > 0.0);
    let limited = "CALL db.index.fulltext.queryNodes('chunk_text', $query, {limit: 1}) YIELD node, score RETURN node.id";
    let rows = run(
        &g,
        limited,
        json!({"query": "invoices deliveries"}),
        AccessMode::Read,
    )
    .unwrap();
    assert_eq!(rows.len(), 1, "{rows:?}");
    let rows = run(&g, q, json!({"query": "报销"}), AccessMode::Read).unwrap();
    assert_eq!(
        rows.iter().map(|r| r[0].clone()).collect::<Vec<_>>(),
        vec![json!("c")]
    );
}

#[test]
fn a_new_chunk_is_searchable_and_a_dropped_index_is_a_procedure_error() {
    let g = setup();
    run(
        &g,
        "CREATE (:Chunk {id: 'd', text: 'late deliveries', embedding: $e})",
        json!({"e": vector(3)}),
        AccessMode::Write,
    )
    .unwrap();
    let rows = run(&g, "CALL db.index.vector.queryNodes('chunk_embedding', 1, $e) YIELD node, score RETURN node.id", json!({"e": vector(3)}), AccessMode::Read).unwrap();
    assert_eq!(rows, vec![json!(["d"])]);

    run(&g, "DROP INDEX chunk_text", json!({}), AccessMode::Write).unwrap();
    let e = run(
        &g,
        "CALL db.index.fulltext.queryNodes('chunk_text', 'x') YIELD node, score RETURN node",
        json!({}),
        AccessMode::Read,
    )
    .unwrap_err();
    assert!(
        e.starts_with("Neo.ClientError.Procedure.ProcedureCallFailed"),
        "{e}"
    );
    assert!(
        e.contains("no such fulltext schema index: chunk_text"),
        "{e}"
    );
    // DDL is a write.
    let e = run(
        &g,
        "CREATE FULLTEXT INDEX t FOR (c:Chunk) ON EACH [c.text]",
        json!({}),
        AccessMode::Read,
    )
    .unwrap_err();
    assert!(e.starts_with("Neo.ClientError.Statement.AccessMode"), "{e}");
}
