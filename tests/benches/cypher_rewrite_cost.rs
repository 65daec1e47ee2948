//! What the read-only guard's traversal rewrite (issue #56) costs a statement: realistic
//! reads of the procurement domain, each sent as the guard sends it without a policy and
//! as it rewrites it under one (hiding the action log's label and types, as every policy
//! does, so that both return the same rows and the difference is the predicates alone),
//! alternating on one graph. Prints, per statement, Neo4j's database hits (`PROFILE`, summed
//! over the plan) and the p50 of each, and the ratio.
//!
//! ```sh
//! # the demo, on Neo4j (or devgraph, which reports no plan: hits are `-`)
//! KG_E2E_GRAPH=neo4j cargo bench -p kg-e2e --bench cypher_rewrite_cost
//! # the scale-10 graph (graph_scale_latency.rs says how to load it)
//! KG_BENCH_NEO4J=http://127.0.0.1:17474 KG_BENCH_LABEL="scale 10" cargo bench -p kg-e2e --bench cypher_rewrite_cost
//! ```
//!
//! `KG_BENCH_NEO4J_PASSWORD` (default `devgraph`), `KG_BENCH_ITERATIONS` (timed runs of
//! each form, default 30, after 2 untimed).

use anyhow::{Result, anyhow};
use kg_e2e::{GRAPH_PASSWORD, Graph};
use kg_graph_tools::guard;
use kg_graph_tools::profile::View;
use serde_json::{Map, Value, json};
use std::time::{Duration, Instant};

const STATEMENTS: [(&str, &str); 9] = [
    (
        "suppliers by products",
        "MATCH (s:Supplier)-[:SUPPLIES]->(p:Product) RETURN s.name, count(p) AS n ORDER BY n DESC LIMIT 10",
    ),
    (
        "one supplier's orders by status",
        "MATCH (o:PurchaseOrder)-[:PLACED_WITH]->(s:Supplier {id: 'SUP-001'}) RETURN o.status, count(*) AS n",
    ),
    (
        "products on approved orders",
        "MATCH (o:PurchaseOrder {status: 'approved'})-[:HAS_LINE]->(l:LineItem)-[:FOR_PRODUCT]->(p:Product) RETURN p.name, count(l) AS lines ORDER BY lines DESC LIMIT 20",
    ),
    (
        "orders per account",
        "MATCH (o:PurchaseOrder)-[:CHARGED_TO]->(a:Account) RETURN a.id, count(o) AS n",
    ),
    (
        "unpaid invoices",
        "MATCH (i:Invoice)-[:BILLS]->(o:PurchaseOrder) WHERE NOT EXISTS { (:Payment)-[:PAYS]->(o) } RETURN count(i) AS n",
    ),
    (
        "two hops from a supplier",
        "MATCH (s:Supplier {id: 'SUP-002'})-[*1..2]-(x) RETURN count(x) AS n",
    ),
    (
        "supplier degrees",
        "MATCH (s:Supplier) RETURN s.id, COUNT { (s)--() } AS degree ORDER BY degree DESC LIMIT 5",
    ),
    (
        "an anonymous neighbour",
        "MATCH (:Supplier {id: 'SUP-001'})<--(o) RETURN count(o) AS n",
    ),
    ("every node, unlabelled", "MATCH (n) RETURN count(n) AS n"),
];

struct Neo {
    http: reqwest::Client,
    url: String,
    password: String,
}

impl Neo {
    async fn run(&self, statement: &str, parameters: &Map<String, Value>) -> Result<Value> {
        let answer: Value = self
            .http
            .post(&self.url)
            .basic_auth("neo4j", Some(&self.password))
            .json(&json!({"statement": statement, "parameters": parameters, "accessMode": "READ"}))
            .send()
            .await?
            .json()
            .await?;
        if let Some(error) = answer["errors"].as_array().and_then(|e| e.first()) {
            return Err(anyhow!("{statement}: {error}"));
        }
        Ok(answer)
    }

    /// The p50 of `iterations` runs, and the runs' answer rows (to check both forms agree).
    async fn time(
        &self,
        statement: &str,
        parameters: &Map<String, Value>,
        timings: &mut Vec<Duration>,
    ) -> Result<Value> {
        let started = Instant::now();
        let answer = self.run(statement, parameters).await?;
        timings.push(started.elapsed());
        Ok(answer["data"]["values"].clone())
    }
}

/// Database hits summed over a profiled plan, None when the graph sent no plan.
fn db_hits(plan: &Value) -> Option<u64> {
    let own = plan["dbHits"].as_u64()?;
    let children: u64 = plan["children"]
        .as_array()
        .map(|c| c.iter().filter_map(db_hits).sum())
        .unwrap_or(0);
    Some(own + children)
}

fn p50(timings: &mut [Duration]) -> f64 {
    timings.sort();
    timings
        .get(timings.len() / 2)
        .map_or(f64::NAN, |d| d.as_secs_f64() * 1000.0)
}

#[tokio::main]
async fn main() -> Result<()> {
    let iterations: usize = std::env::var("KG_BENCH_ITERATIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(30);
    let label = std::env::var("KG_BENCH_LABEL").unwrap_or_else(|_| "demo".into());
    // The graph named, or one started with the demo (kept until the end).
    let (origin, _started) = match std::env::var("KG_BENCH_NEO4J") {
        Ok(origin) => (origin, None),
        Err(_) => {
            let graph = Graph::start().await?;
            (graph.url.clone(), Some(graph))
        }
    };
    let neo = Neo {
        http: reqwest::Client::new(),
        url: format!("{}/db/neo4j/query/v2", origin.trim_end_matches('/')),
        password: std::env::var("KG_BENCH_NEO4J_PASSWORD")
            .unwrap_or_else(|_| GRAPH_PASSWORD.into()),
    };
    // What every policy hides from those it restricts: the action log's records.
    let view = View {
        hidden_labels: ["ActionLog".to_string()].into(),
        hidden_types: ["CHANGED".to_string(), "UNDOES".to_string()].into(),
        restricts_anything: true,
        ..View::default()
    };
    println!(
        "cypher_rewrite_cost ({label}, {iterations} runs each, alternating): hits and p50 ms, without a policy / rewritten"
    );
    println!(
        "{:<34} {:>12} {:>12} {:>9} {:>9} {:>6}",
        "statement", "hits", "hits rw", "p50", "p50 rw", "x"
    );
    for (name, statement) in STATEMENTS {
        let plain = guard::check(statement, 1000).map_err(|e| anyhow!("{}", e.message()))?;
        let rewritten =
            guard::check_for(statement, 1000, &view).map_err(|e| anyhow!("{}", e.message()))?;
        let none = Map::new();
        let hits = |answer: &Value| db_hits(&answer["profiledQueryPlan"]);
        let plain_hits = hits(
            &neo.run(&format!("PROFILE {}", plain.statement), &none)
                .await?,
        );
        let rewritten_hits = hits(
            &neo.run(
                &format!("PROFILE {}", rewritten.statement),
                &rewritten.parameters,
            )
            .await?,
        );
        let (mut a, mut b) = (Vec::new(), Vec::new());
        let (mut rows_a, mut rows_b) = (Value::Null, Value::Null);
        for i in 0..iterations + 2 {
            let (ta, tb) = if i < 2 {
                (&mut Vec::new(), &mut Vec::new())
            } else {
                (&mut a, &mut b)
            };
            // Alternate which goes first, so neither always meets a warmer cache.
            if i % 2 == 0 {
                rows_a = neo.time(&plain.statement, &none, ta).await?;
                rows_b = neo
                    .time(&rewritten.statement, &rewritten.parameters, tb)
                    .await?;
            } else {
                rows_b = neo
                    .time(&rewritten.statement, &rewritten.parameters, tb)
                    .await?;
                rows_a = neo.time(&plain.statement, &none, ta).await?;
            }
        }
        if rows_a != rows_b {
            return Err(anyhow!(
                "{name}: the rewritten statement answered otherwise: {rows_a} vs {rows_b}"
            ));
        }
        let show = |h: Option<u64>| h.map_or("-".to_string(), |h| h.to_string());
        let (pa, pb) = (p50(&mut a), p50(&mut b));
        println!(
            "{name:<34} {:>12} {:>12} {pa:>9.2} {pb:>9.2} {:>6.2}",
            show(plain_hits),
            show(rewritten_hits),
            pb / pa
        );
    }
    Ok(())
}
