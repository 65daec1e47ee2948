//! Document ingest and hybrid search through devhost against devgraph, with the
//! deterministic embeddings stub: ingest, re-ingest, list, delete, hybrid scores and ranks,
//! filters, and each degradation path.

use kg_e2e::{AppHost, Graph, Stack, embedding_stub};
use serde_json::{Value, json};

/// An empty graph and devhost pointed at it and at `llm_origin`.
async fn stack(llm_origin: &str) -> Stack {
    stack_on(Graph::start_empty().await.unwrap(), llm_origin).await
}

async fn stack_on(graph: Graph, llm_origin: &str) -> Stack {
    let variables = [
        ("llm_origin", llm_origin.to_string()),
        ("llm_base_path", "/v1".to_string()),
        ("embedding_model", "stub-embedding".to_string()),
    ];
    Stack::start_with_graph(graph, &variables).await.unwrap()
}

async fn post(host: &AppHost, path: &str, body: Value) -> (u16, Value) {
    host.send("POST", path, &body.to_string()).await.unwrap()
}

const ORDERS: &str = "# Purchase orders\n\nA purchase order is approved by the department head \
before it is sent to the supplier.\n\n## Payment\n\nInvoices are paid within thirty days after \
the goods arrive.\n";
const WAREHOUSE: &str = "The warehouse receives deliveries from eight to four. Goods are \
checked against the delivery note and stored by product group.";
const TRAVEL: &str = "差旅报销需要在出差结束后十个工作日内提交，并附上发票和行程单。";

async fn ingest_corpus(host: &AppHost) {
    for (id, text, kind, meta) in [
        (
            "orders",
            ORDERS,
            "markdown",
            json!({"team": "finance", "lang": "en"}),
        ),
        (
            "warehouse",
            WAREHOUSE,
            "text",
            json!({"team": "logistics", "lang": "en"}),
        ),
        (
            "travel",
            TRAVEL,
            "text",
            json!({"team": "finance", "lang": "zh"}),
        ),
    ] {
        let (status, r) = post(
            host,
            "/documents",
            json!({"id": id, "title": id, "text": text, "content_type": kind, "metadata": meta}),
        )
        .await;
        assert_eq!(status, 201, "{r}");
        assert_eq!(r["warnings"], json!([]), "{r}");
    }
}

fn documents_of(r: &Value) -> Vec<String> {
    r["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["document_id"].as_str().unwrap().to_string())
        .collect()
}

async fn chunk_count(graph: &Graph, id: &str) -> i64 {
    let rows = graph
        .query(&format!(
            "MATCH (c:Chunk) WHERE c.document_id = '{id}' RETURN count(c)"
        ))
        .await
        .unwrap();
    rows[0][0].as_i64().unwrap()
}

/// The first ingests into an empty graph, several at once, each create the search indexes
/// and unique keys (`IF NOT EXISTS`): every one is stored without a warning, although on
/// Neo4j all but one of the concurrent creators of an index lose the race for it.
#[tokio::test]
async fn concurrent_first_ingests_get_their_indexes_without_warnings() {
    let stub = embedding_stub::start().await;
    let s = stack(&stub.uri()).await;
    let answers = futures::future::join_all((0..6).map(|i| {
        post(
            &s.host,
            "/documents",
            json!({"id": format!("doc-{i}"), "text": WAREHOUSE, "content_type": "text"}),
        )
    }))
    .await;
    for (status, r) in answers {
        assert_eq!(status, 201, "{r}");
        assert_eq!(r["warnings"], json!([]), "{r}");
    }
    let (status, r) = post(&s.host, "/search", json!({"query": "delivery note"})).await;
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["warnings"], json!([]), "{r}");
    assert_eq!(r["legs"], json!(["vector", "bm25"]), "{r}");
}

#[tokio::test]
async fn ingest_list_reingest_and_delete() {
    let stub = embedding_stub::start().await;
    let s = stack(&stub.uri()).await;
    let host = &s.host;

    // Before the first ingest there is no index: nothing found, and the reason.
    let (status, r) = post(host, "/search", json!({"query": "orders"})).await;
    assert_eq!(status, 200, "{r}");
    assert_eq!((&r["hits"], &r["legs"]), (&json!([]), &json!([])), "{r}");
    assert!(
        r["warnings"]
            .to_string()
            .contains("ingest a document first"),
        "{r}"
    );

    let (status, r) = post(
        host,
        "/documents",
        json!({"id": "orders", "title": "Orders", "text": ORDERS, "content_type": "markdown",
               "metadata": {"team": "finance"}, "chunking": {"max_chars": 60, "overlap_chars": 10}}),
    )
    .await;
    assert_eq!(status, 201, "{r}");
    assert_eq!(r["replaced"], false);
    let first_chunks = r["chunks"].as_i64().unwrap();
    assert!(
        first_chunks >= 3,
        "markdown sections and the size limit split it: {r}"
    );
    assert_eq!(chunk_count(&s.graph, "orders").await, first_chunks);
    // Every chunk has its embedding, position and document link.
    let rows = s
        .graph
        .query("MATCH (d:Document {id: 'orders'})-[:HAS_CHUNK]->(c:Chunk) RETURN c.position, size(c.embedding) ORDER BY c.position")
        .await
        .unwrap();
    assert_eq!(rows.len() as i64, first_chunks);
    assert!(
        rows.iter()
            .all(|r| r[1] == json!(embedding_stub::DIMENSIONS)),
        "{rows:?}"
    );
    assert_eq!(rows[0][0], json!(0));

    let (status, r) = host.get("/documents").await.unwrap();
    assert_eq!(status, 200, "{r}");
    let doc = &r["documents"][0];
    assert_eq!(doc["id"], "orders");
    assert_eq!(doc["title"], "Orders");
    assert_eq!(doc["chunks"], json!(first_chunks));
    assert_eq!(doc["metadata"], json!({"team": "finance"}));
    assert!(doc["ingested_at"].as_str().unwrap().ends_with('Z'), "{doc}");

    // Re-ingesting replaces every chunk.
    let (status, r) = post(
        host,
        "/documents",
        json!({"id": "orders", "text": WAREHOUSE}),
    )
    .await;
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["replaced"], true);
    assert_eq!(r["chunks"], 1);
    assert_eq!(chunk_count(&s.graph, "orders").await, 1);
    let (_, r) = host.get("/documents").await.unwrap();
    assert_eq!(r["documents"].as_array().unwrap().len(), 1);
    assert_eq!(
        r["documents"][0]["metadata"],
        json!({}),
        "old metadata went with it"
    );

    let (status, r) = host.send("DELETE", "/documents/orders", "").await.unwrap();
    assert_eq!((status, &r["deleted"]), (200, &json!(true)), "{r}");
    assert_eq!(chunk_count(&s.graph, "orders").await, 0);
    let (status, r) = host.send("DELETE", "/documents/orders", "").await.unwrap();
    assert_eq!(
        (status, r["error"]["code"].as_str()),
        (404, Some("not_found")),
        "{r}"
    );
    let (_, r) = host.get("/documents").await.unwrap();
    assert_eq!(r["documents"], json!([]));
}

#[tokio::test]
async fn hybrid_search_fuses_both_legs_with_scores_and_ranks() {
    let stub = embedding_stub::start().await;
    let s = stack(&stub.uri()).await;
    let host = &s.host;
    ingest_corpus(host).await;

    let (status, r) = post(
        host,
        "/search",
        json!({"query": "when are invoices paid", "top_k": 5}),
    )
    .await;
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["legs"], json!(["vector", "bm25"]), "{r}");
    assert_eq!(r["warnings"], json!([]));
    let top = &r["hits"][0];
    assert_eq!(top["document_id"], "orders", "{r}");
    assert!(
        top["text"].as_str().unwrap().contains("Invoices are paid"),
        "{top}"
    );
    assert_eq!(top["metadata"]["team"], "finance");
    let hits = r["hits"].as_array().unwrap();
    let fused: Vec<f64> = hits
        .iter()
        .map(|h| h["fused_score"].as_f64().unwrap())
        .collect();
    assert!(fused.windows(2).all(|w| w[0] >= w[1]), "{fused:?}");
    // The fused score follows RRF (k = 60, 0.7 / 0.3) from the reported ranks.
    for h in hits {
        let term = |rank: &Value, w: f64| rank.as_f64().map_or(0.0, |r| w / (60.0 + r));
        let expected = term(&h["vector_rank"], 0.7) + term(&h["bm25_rank"], 0.3);
        assert!(
            (h["fused_score"].as_f64().unwrap() - expected).abs() < 1e-6,
            "{h}"
        );
        assert_eq!(h["vector_rank"].is_null(), h["vector_score"].is_null());
        assert_eq!(h["bm25_rank"].is_null(), h["bm25_score"].is_null());
    }
    assert!(
        top["vector_rank"].is_number() && top["bm25_rank"].is_number(),
        "{top}"
    );
    let vector_score = top["vector_score"].as_f64().unwrap();
    assert!(
        vector_score > 0.5 && vector_score <= 1.0,
        "cosine score in [0, 1]: {top}"
    );

    // Chinese through the CJK analyzer and the stub's bigrams.
    let (_, r) = post(
        host,
        "/search",
        json!({"query": "出差报销什么时候提交", "top_k": 3}),
    )
    .await;
    assert_eq!(documents_of(&r)[0], "travel", "{r}");
    assert!(r["hits"][0]["bm25_rank"].is_number(), "{r}");

    // Weights change the fusion: BM25 alone ranks by its own rank only.
    let (_, r) = post(
        host,
        "/search",
        json!({"query": "goods", "top_k": 5, "vector_weight": 0.0, "bm25_weight": 1.0}),
    )
    .await;
    assert_eq!(
        r["legs"],
        json!(["bm25"]),
        "a zero-weight leg does not run: {r}"
    );
    for (i, h) in r["hits"].as_array().unwrap().iter().enumerate() {
        assert_eq!(h["bm25_rank"], json!(i + 1), "{r}");
    }
}

#[tokio::test]
async fn search_filters_by_document_and_metadata() {
    let stub = embedding_stub::start().await;
    let s = stack(&stub.uri()).await;
    let host = &s.host;
    ingest_corpus(host).await;

    let (status, r) = post(
        host,
        "/search",
        json!({"query": "goods delivery supplier", "top_k": 10, "document_ids": ["warehouse"]}),
    )
    .await;
    assert_eq!(status, 200, "{r}");
    let docs = documents_of(&r);
    assert!(
        !docs.is_empty() && docs.iter().all(|d| d == "warehouse"),
        "{r}"
    );

    let (_, r) = post(host, "/search", json!({"query": "goods delivery supplier invoices", "top_k": 10, "metadata_filter": {"team": "finance"}})).await;
    let docs = documents_of(&r);
    assert!(!docs.is_empty(), "{r}");
    assert!(docs.iter().all(|d| d == "orders" || d == "travel"), "{r}");

    let (_, r) = post(host, "/search", json!({"query": "goods", "top_k": 10, "metadata_filter": {"team": "finance", "lang": "fr"}})).await;
    assert_eq!(r["hits"], json!([]), "{r}");
}

#[tokio::test]
async fn missing_fulltext_index_leaves_vector_only_and_missing_vector_index_bm25_only() {
    let stub = embedding_stub::start().await;
    let s = stack(&stub.uri()).await;
    let host = &s.host;
    ingest_corpus(host).await;

    s.graph.write("DROP INDEX chunk_text").await.unwrap();
    let (status, r) = post(
        host,
        "/search",
        json!({"query": "warehouse deliveries", "top_k": 3}),
    )
    .await;
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["legs"], json!(["vector"]), "{r}");
    assert!(r["warnings"].to_string().contains("full-text"), "{r}");
    assert_eq!(documents_of(&r)[0], "warehouse");
    assert!(r["hits"][0]["bm25_rank"].is_null());

    // Ingest creates the missing index again; then the vector index goes.
    let (status, _) = post(
        host,
        "/documents",
        json!({"id": "warehouse", "text": WAREHOUSE}),
    )
    .await;
    assert_eq!(status, 200);
    s.graph.write("DROP INDEX chunk_embedding").await.unwrap();
    let (status, r) = post(
        host,
        "/search",
        json!({"query": "warehouse deliveries", "top_k": 3}),
    )
    .await;
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["legs"], json!(["bm25"]), "{r}");
    assert!(r["warnings"].to_string().contains("vector"), "{r}");
    assert_eq!(documents_of(&r)[0], "warehouse");
}

#[tokio::test]
async fn embeddings_down_means_bm25_only_with_a_warning() {
    // A port nothing listens on.
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", listener.local_addr().unwrap())
    };
    let s = stack(&closed).await;
    let host = &s.host;

    let (status, r) = post(host, "/documents", json!({"id": "travel", "text": TRAVEL})).await;
    assert_eq!(status, 201, "{r}");
    assert!(
        r["warnings"].to_string().contains("without embeddings"),
        "{r}"
    );
    let rows = s
        .graph
        .query("MATCH (c:Chunk) RETURN c.embedding IS NULL")
        .await
        .unwrap();
    assert_eq!(rows, vec![json!([true])]);

    let (status, r) = post(host, "/search", json!({"query": "报销 发票", "top_k": 3})).await;
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["legs"], json!(["bm25"]), "{r}");
    assert!(
        r["warnings"].to_string().contains("embeddings unavailable"),
        "{r}"
    );
    assert_eq!(documents_of(&r), vec!["travel"]);
}

#[tokio::test]
async fn bad_requests_name_the_field() {
    let stub = embedding_stub::start().await;
    let s = stack(&stub.uri()).await;
    let host = &s.host;
    for (path, body, field) in [
        ("/search", json!({}), "query"),
        ("/search", json!({"query": "  "}), "query"),
        ("/search", json!({"query": "x", "top_k": 0}), "top_k"),
        ("/search", json!({"query": "x", "top_k": "5"}), "top_k"),
        (
            "/search",
            json!({"query": "x", "vector_weight": -1}),
            "vector_weight",
        ),
        (
            "/search",
            json!({"query": "x", "document_ids": "a"}),
            "document_ids",
        ),
        (
            "/search",
            json!({"query": "x", "metadata_filter": {"a b": "c"}}),
            "metadata_filter",
        ),
        ("/documents", json!({"text": "x"}), "id"),
        ("/documents", json!({"id": "a"}), "text"),
        (
            "/documents",
            json!({"id": "a", "text": "x", "content_type": "pdf"}),
            "content_type",
        ),
        (
            "/documents",
            json!({"id": "a", "text": "x", "metadata": {"k": 1}}),
            "metadata.k",
        ),
        (
            "/documents",
            json!({"id": "a", "text": "x", "chunking": {"max_chars": 10}}),
            "max_chars",
        ),
    ] {
        let (status, r) = post(host, path, body.clone()).await;
        assert_eq!(status, 400, "{path} {body}: {r}");
        let message = r["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains(field), "{path} {body}: {message}");
    }
    // Nothing reached the graph.
    assert_eq!(
        s.graph.query("MATCH (n) RETURN count(n)").await.unwrap(),
        vec![json!([0])]
    );
}

#[tokio::test]
async fn graph_down_is_a_503_not_an_empty_answer() {
    let stub = embedding_stub::start().await;
    let Stack {
        graph,
        host,
        dir: _dir,
    } = stack(&stub.uri()).await;
    let (status, _) = post(&host, "/documents", json!({"id": "travel", "text": TRAVEL})).await;
    assert_eq!(status, 201);
    graph.stop().await.unwrap();
    let (status, r) = post(&host, "/search", json!({"query": "报销"})).await;
    assert_eq!(
        (status, r["error"]["code"].as_str()),
        (503, Some("unavailable")),
        "{r}"
    );
    let (status, r) = host.get("/documents").await.unwrap();
    assert_eq!(status, 503, "{r}");
}

#[tokio::test]
async fn chunks_link_to_the_entities_they_mention() {
    let stub = embedding_stub::start().await;
    let s = stack_on(Graph::start().await.unwrap(), &stub.uri()).await;
    let text = "Order PO-0003 from SUP-001 was paid twice.\n\nPRD-036 is back-ordered; XYZ-999 is unknown.";
    let (status, r) = post(
        &s.host,
        "/documents",
        json!({"id": "memo", "text": text, "chunking": {"max_chars": 60, "overlap_chars": 0}}),
    )
    .await;
    assert_eq!(status, 201, "{r}");
    let rows = s
        .graph
        .query("MATCH (c:Chunk)-[:MENTIONS]->(e) RETURN c.position, e.id ORDER BY e.id")
        .await
        .unwrap();
    assert_eq!(
        rows,
        vec![
            json!([0, "PO-0003"]),
            json!([1, "PRD-036"]),
            json!([0, "SUP-001"])
        ]
    );
    // Deleting the document removes its links, not the entities.
    let (status, _) = s.host.send("DELETE", "/documents/memo", "").await.unwrap();
    assert_eq!(status, 200);
    let rows = s
        .graph
        .query("MATCH ()-[m:MENTIONS]->() RETURN count(m)")
        .await
        .unwrap();
    assert_eq!(rows, vec![json!([0])]);
    let rows = s
        .graph
        .query("MATCH (p {id: 'PO-0003'}) RETURN count(p)")
        .await
        .unwrap();
    assert_eq!(rows, vec![json!([1])]);
}
