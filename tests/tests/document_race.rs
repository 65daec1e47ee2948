//! Concurrent writes of one document id (issue #14): rounds of ingest, delete and another
//! ingest of the same id racing each other through devhost against devgraph. A write that
//! loses to a concurrent one is retried by the retriever and, past its retries, answered
//! 409 `conflict`; never a 5xx, always JSON. After each round the graph holds either one
//! whole version of the document (its node, every chunk of that version, each linked from
//! it) or nothing of it.

use kg_e2e::{Graph, Stack, embedding_stub};
use serde_json::{Value, json};
use std::collections::BTreeMap;

const ROUNDS: usize = 20;
const ID: &str = "race-doc";
/// Small chunks: each version has many chunks (several statements' worth of graph writes
/// and MENTIONS links to demo entities), so the writes overlap for longer.
const MAX_CHARS: u32 = 80;

/// Version `v` of the document: sections naming demo entities, each tagged with `v` so a
/// chunk tells which version it belongs to.
fn text(v: u32) -> String {
    let mut text = String::new();
    for section in 0..6 {
        text.push_str(&format!(
            "# Section {section} v{v}\n\nVersion v{v} of the race document: order PO-000{} \
             from supplier SUP-00{} with product PRD-00{}.\n\n",
            section + 1,
            section + 1,
            section + 1
        ));
    }
    text
}

fn body(v: u32) -> String {
    json!({
        "id": ID,
        "title": format!("v{v}"),
        "content_type": "markdown",
        "text": text(v),
        "metadata": {"version": format!("v{v}")},
        "chunking": {"max_chars": MAX_CHARS, "overlap_chars": 0},
    })
    .to_string()
}

/// The stack with the embeddings stub as its LLM endpoint (ingest embeds the chunks).
async fn stack(llm_origin: &str) -> Stack {
    Stack::start_with(&[
        ("llm_origin", llm_origin.to_string()),
        ("llm_base_path", "/v1".to_string()),
        ("embedding_model", "stub-embedding".to_string()),
    ])
    .await
    .unwrap()
}

/// Every status must be a success or a 4xx the request explains, with a JSON object body.
fn check(what: &str, status: u16, body: &Value, allowed: &[u16]) {
    assert!(
        body.is_object(),
        "{what}: every answer is a JSON object, got {status} {body}"
    );
    assert!(
        status < 500,
        "{what}: a race is never a 5xx: {status} {body}"
    );
    assert!(
        allowed.contains(&status),
        "{what}: unexpected {status} {body}"
    );
    if status == 409 {
        assert_eq!(body["error"]["code"], "conflict", "{what}: {body}");
    }
}

async fn rows(graph: &Graph, statement: &str) -> Vec<Value> {
    graph.query(statement).await.unwrap()
}

/// The chunk texts of version `v` by position, learned from a sequential ingest.
async fn chunks_of_version(s: &Stack, v: u32) -> Vec<String> {
    let (status, r) = s.host.send("POST", "/documents", &body(v)).await.unwrap();
    assert!(status == 200 || status == 201, "{status} {r}");
    let texts: Vec<String> = stored_chunks(&s.graph)
        .await
        .iter()
        .map(|c| c[2].as_str().unwrap().to_string())
        .collect();
    assert_eq!(texts.len() as i64, r["chunks"].as_i64().unwrap(), "{r}");
    texts
}

/// (id, position, text) of the id's chunks, by position.
async fn stored_chunks(graph: &Graph) -> Vec<Value> {
    rows(
        graph,
        &format!(
            "MATCH (c:Chunk) WHERE c.document_id = '{ID}' \
             RETURN c.id, c.position, c.text ORDER BY c.position"
        ),
    )
    .await
}

/// The graph holds one whole version of the document or none of it.
async fn assert_whole_or_nothing(
    graph: &Graph,
    expected: &BTreeMap<String, Vec<String>>,
    round: usize,
) {
    let documents = rows(
        graph,
        &format!("MATCH (d:Document) WHERE d.id = '{ID}' RETURN d.title, d.chunk_count"),
    )
    .await;
    let chunks = stored_chunks(graph).await;
    let linked = rows(
        graph,
        &format!("MATCH (d:Document)-[:HAS_CHUNK]->(c:Chunk) WHERE d.id = '{ID}' RETURN count(c)"),
    )
    .await;
    let linked = linked[0][0].as_i64().unwrap();
    match documents.as_slice() {
        [] => assert!(
            chunks.is_empty() && linked == 0,
            "round {round}: no document, yet {} chunk(s) remain: {chunks:?}",
            chunks.len()
        ),
        [document] => {
            let version = document[0].as_str().unwrap().to_string();
            let count = document[1].as_i64().unwrap();
            let texts = &expected[&version];
            assert_eq!(
                count,
                texts.len() as i64,
                "round {round}: chunk_count of {version}"
            );
            assert_eq!(
                (chunks.len() as i64, linked),
                (count, count),
                "round {round}: {version} should have exactly its {count} chunks, all linked: {chunks:?}"
            );
            for (position, chunk) in chunks.iter().enumerate() {
                assert_eq!(chunk[0], json!(format!("{ID}#{position}")), "round {round}");
                assert_eq!(chunk[1], json!(position), "round {round}");
                assert_eq!(
                    chunk[2].as_str().unwrap(),
                    texts[position],
                    "round {round}: chunk {position} is not {version}'s"
                );
            }
        }
        more => panic!(
            "round {round}: {} document nodes with one id: {more:?}",
            more.len()
        ),
    }
}

#[tokio::test]
async fn concurrent_ingest_and_delete_of_one_id_never_5xx_and_leave_whole_or_nothing() {
    let stub = embedding_stub::start().await;
    let s = stack(&stub.uri()).await;
    let host = &s.host;

    let mut expected = BTreeMap::new();
    for v in [1, 2] {
        expected.insert(format!("v{v}"), chunks_of_version(&s, v).await);
    }
    assert!(
        expected.values().all(|texts| texts.len() >= 6),
        "each version spans many chunks: {expected:?}"
    );

    let mut statuses: BTreeMap<String, usize> = BTreeMap::new();
    let mut count = |what: &str, status: u16| {
        *statuses.entry(format!("{what} {status}")).or_default() += 1;
    };
    for round in 0..ROUNDS {
        // Odd rounds start from an empty id, even rounds from a stored version.
        if round % 2 == 1 {
            let _ = host
                .send("DELETE", &format!("/documents/{ID}"), "")
                .await
                .unwrap();
        }
        let (path, v1, v2) = (format!("/documents/{ID}"), body(1), body(2));
        let (first, deleted, second) = tokio::join!(
            host.send("POST", "/documents", &v1),
            host.send("DELETE", &path, ""),
            host.send("POST", "/documents", &v2),
        );
        let (status, r) = first.unwrap();
        check("ingest v1", status, &r, &[200, 201, 409]);
        count("ingest", status);
        let (status, r) = deleted.unwrap();
        check("delete", status, &r, &[200, 404, 409]);
        count("delete", status);
        let (status, r) = second.unwrap();
        check("ingest v2", status, &r, &[200, 201, 409]);
        count("ingest", status);
        assert_whole_or_nothing(&s.graph, &expected, round).await;
    }
    eprintln!("document race: {ROUNDS} rounds, statuses {statuses:?}");

    // Settled: the id can be written and read again as usual.
    let (status, r) = host.send("POST", "/documents", &body(2)).await.unwrap();
    assert!(status == 200 || status == 201, "{status} {r}");
    assert_whole_or_nothing(&s.graph, &expected, ROUNDS).await;
    let (status, r) = host.get("/documents").await.unwrap();
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["documents"][0]["id"], ID, "{r}");
}
