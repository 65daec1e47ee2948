//! Retrieval throughput and latency at 10,000 chunks: ingest 100 documents of 100 chunks
//! each through `POST /documents` (chunking, embeddings from the deterministic stub, the
//! graph writes), then 200 `POST /search` queries per mode (hybrid, vector only, BM25 only).
//! Run: `cargo bench -p kg-e2e --bench retrieval` (after scripts/setup.sh).

use kg_e2e::{AppHost, Graph, app_manifest, embedding_stub};
use serde_json::json;
use std::time::{Duration, Instant};

const DOCUMENTS: usize = 100;
const PARAGRAPHS: usize = 100;
const QUERIES: usize = 200;

const WORDS: &[&str] = &[
    "order",
    "supplier",
    "invoice",
    "payment",
    "approval",
    "budget",
    "warehouse",
    "delivery",
    "contract",
    "price",
    "discount",
    "return",
    "credit",
    "audit",
    "quality",
    "product",
    "assembly",
    "part",
    "account",
    "transfer",
    "travel",
    "expense",
    "hotel",
    "laptop",
    "controller",
    "department",
    "manager",
    "deadline",
    "sanctions",
    "registration",
    "采购",
    "供应商",
    "发票",
    "付款",
    "审批",
    "预算",
    "仓库",
    "合同",
    "价格",
    "退货",
];

/// A deterministic pseudo-random stream (xorshift), so every run ingests the same text.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as usize
    }

    fn words(&mut self, n: usize) -> String {
        (0..n)
            .map(|_| WORDS[self.next() % WORDS.len()])
            .collect::<Vec<_>>()
            .join(" ")
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let stub = embedding_stub::start().await;
    let graph = Graph::start_empty().await?;
    let dir = tempfile::tempdir()?;
    let mut variables = graph.variables();
    variables.push(("llm_origin", stub.uri()));
    let host = AppHost::start(&app_manifest(), &dir.path().join("kv.db"), &variables).await?;
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);

    // Paragraphs of ~40 words (~300 characters) with max_chars 400: one chunk each.
    let mut chunks = 0u64;
    let started = Instant::now();
    for d in 0..DOCUMENTS {
        let text: Vec<String> = (0..PARAGRAPHS)
            .map(|_| format!("{}.", rng.words(40)))
            .collect();
        let body = json!({
            "id": format!("doc-{d:03}"), "text": text.join("\n\n"),
            "metadata": {"group": format!("g{}", d % 10)},
            "chunking": {"max_chars": 400, "overlap_chars": 0},
        });
        let (status, r) = host.send("POST", "/documents", &body.to_string()).await?;
        anyhow::ensure!(status == 201, "ingest doc-{d:03}: {r}");
        chunks += r["chunks"].as_u64().unwrap_or(0);
    }
    let ingest = started.elapsed();
    println!(
        "ingest: {chunks} chunks in {DOCUMENTS} documents, {:.1} s, {:.0} chunks/s",
        ingest.as_secs_f64(),
        chunks as f64 / ingest.as_secs_f64()
    );

    for (mode, vector_weight, bm25_weight) in [
        ("hybrid", 0.7, 0.3),
        ("vector only", 1.0, 0.0),
        ("bm25 only", 0.0, 1.0),
    ] {
        let mut samples = Vec::with_capacity(QUERIES);
        for _ in 0..QUERIES {
            let query = rng.words(3);
            let body = json!({"query": query, "top_k": 10, "vector_weight": vector_weight, "bm25_weight": bm25_weight});
            let t = Instant::now();
            let (status, r) = host.send("POST", "/search", &body.to_string()).await?;
            samples.push(t.elapsed());
            anyhow::ensure!(
                status == 200 && r["hits"].as_array().is_some_and(|h| !h.is_empty()),
                "search: {r}"
            );
        }
        samples.sort();
        println!(
            "search {mode:<11} over {chunks} chunks, {QUERIES} queries: median {:.2} ms, p90 {:.2} ms, p99 {:.2} ms",
            ms(samples[QUERIES / 2]),
            ms(samples[QUERIES * 9 / 10]),
            ms(samples[QUERIES * 99 / 100])
        );
    }
    host.stop().await?;
    graph.stop().await?;
    Ok(())
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}
