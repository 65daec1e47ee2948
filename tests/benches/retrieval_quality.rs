//! Retrieval quality on the labelled set in `tests/data/retrieval/` (24 documents, 50
//! questions, English and Chinese): recall@5, hit@5 and MRR at document level for vector
//! only, BM25 only and hybrid, with the deterministic embeddings stub (hashed words,
//! trigrams and CJK bigrams; not a semantic model). BM25 runs on the full-text index with
//! the `cjk` analyzer (devgraph: Grafeo's CJK bigram tokenizer).
//! Run: `cargo bench -p kg-e2e --bench retrieval_quality` (after scripts/setup.sh).

use kg_e2e::{AppHost, Graph, app_manifest, embedding_stub, workspace};
use serde_json::{Value, json};

const CUTOFF: usize = 5;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let data = workspace().join("tests/data/retrieval");
    let documents: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(data.join("documents.json"))?)?;
    let questions: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(data.join("questions.json"))?)?;

    let stub = embedding_stub::start().await;
    let graph = Graph::start_empty().await?;
    let dir = tempfile::tempdir()?;
    let mut variables = graph.variables();
    variables.push(("llm_origin", stub.uri()));
    let host = AppHost::start(&app_manifest(), &dir.path().join("kv.db"), &variables).await?;

    for d in &documents {
        let (status, r) = host
            .send(
                "POST",
                "/documents",
                &json!({
                    "id": d["id"], "title": d["title"], "text": d["text"],
                    "content_type": "markdown", "metadata": {"lang": d["lang"]},
                })
                .to_string(),
            )
            .await?;
        anyhow::ensure!(status == 201, "ingest {}: {r}", d["id"]);
    }

    println!(
        "{} documents, {} questions, top {CUTOFF} distinct documents per question",
        documents.len(),
        questions.len()
    );
    println!(
        "{:<12} {:>9} {:>7} {:>7}",
        "mode", "recall@5", "hit@5", "MRR"
    );
    for (mode, vector_weight, bm25_weight) in [
        ("vector", 1.0, 0.0),
        ("bm25", 0.0, 1.0),
        ("hybrid", 0.7, 0.3),
    ] {
        let (mut recall, mut hit, mut mrr) = (0.0, 0.0, 0.0);
        for q in &questions {
            let relevant: Vec<&str> = q["relevant"]
                .as_array()
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let (status, r) = host
                .send(
                    "POST",
                    "/search",
                    &json!({
                        "query": q["q"], "top_k": 30,
                        "vector_weight": vector_weight, "bm25_weight": bm25_weight,
                    })
                    .to_string(),
                )
                .await?;
            anyhow::ensure!(status == 200, "search {}: {r}", q["q"]);
            let ranked = distinct_documents(&r);
            let top: Vec<&String> = ranked.iter().take(CUTOFF).collect();
            let found = relevant
                .iter()
                .filter(|id| top.iter().any(|t| t == *id))
                .count();
            recall += found as f64 / relevant.len() as f64;
            hit += f64::from(u8::from(found > 0));
            mrr += ranked
                .iter()
                .position(|id| relevant.contains(&id.as_str()))
                .map_or(0.0, |i| 1.0 / (i + 1) as f64);
        }
        let n = questions.len() as f64;
        println!(
            "{mode:<12} {:>9.3} {:>7.3} {:>7.3}",
            recall / n,
            hit / n,
            mrr / n
        );
    }
    println!(
        "recall@5: share of a question's relevant documents in its top 5 (each question lists the English and the Chinese version, so a monolingual ranking tops out near 0.5); hit@5: share of questions with any relevant document in the top 5; MRR: mean 1/rank of the first relevant document"
    );
    host.stop().await?;
    graph.stop().await?;
    Ok(())
}

/// Document ids in the order of their best chunk.
fn distinct_documents(response: &Value) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for hit in response["hits"].as_array().into_iter().flatten() {
        if let Some(id) = hit["document_id"].as_str()
            && !out.iter().any(|o| o == id)
        {
            out.push(id.to_string());
        }
    }
    out
}
