//! Each graph tool's latency on a graph of a given size, beside its floor: p50 and p99 of
//! a fixed set of realistic calls on the demo's entities, each run natively
//! (`kg_graph_tools::call_in`, a new session per call as a request has, the declared
//! graph profile) against a Neo4j, next to the floor: the one index-backed statement that
//! answers the same question, written by hand and sent straight to the Query API over the
//! same kind of connection. Then a four-tool agent turn's graph time (search, neighbours,
//! a filtered class page, a path, in one session as one request's calls share it: what
//! the agent does for "who supplies the parts of product X, and what is open with them").
//!
//! The same bench on the demo (565 nodes) and on the demo grown by `scale-graph` to scale
//! 1 (≈ 500,000 nodes) and 10 (≈ 5 million) gives the cost-growth table of
//! `docs/performance.md`. Targets (issue #47): at scale 10, each tool's p50 within 2× its
//! floor plus 5 ms, and within 2× its own p50 on the demo. The first is checked here on
//! every run; the second when `KG_BENCH_BASELINE` names a demo run's JSON.
//!
//! ```sh
//! # a Neo4j sized for the graph, with the demo, grown (scale 10: about 10 min here)
//! NEO4J_HEAP=4g NEO4J_PASSWORD=devgraph devtools/neo4j/run.sh --cypher target/neo4j/demo.cypher \
//!     --http-port 17474 --page-cache-mb 8192 &
//! target/release/scale-graph --origin http://127.0.0.1:17474 --password devgraph --scale 10
//! KG_BENCH_NEO4J=http://127.0.0.1:17474 KG_BENCH_LABEL="scale 10" \
//!     KG_BENCH_BASELINE=target/bench-demo.json cargo bench -p kg-e2e --bench graph_scale_latency
//! ```
//!
//! - `KG_BENCH_NEO4J`: the graph's origin; without it a graph with the demo is started
//!   (`KG_E2E_GRAPH=neo4j` for Neo4j, else devgraph), which is the demo-size run.
//! - `KG_BENCH_NEO4J_PASSWORD` (default `devgraph`), `KG_BENCH_LABEL` (the run's name),
//!   `KG_BENCH_ITERATIONS` (timed calls per row, default 100, after 5 untimed).
//! - `KG_BENCH_JSON`: writes the run's p50s there; `KG_BENCH_BASELINE`: a demo run's file
//!   to compare with; `KG_BENCH_SHOW=1` prints each call's statements to stderr.
//!
//! Before timing, the profile's indexes are created as `POST /actions/setup` creates them
//! (`IF NOT EXISTS`) and awaited, and the query caches cleared once.

use anyhow::{Context, Result, bail};
use kg_e2e::profiled::Profiled;
use kg_e2e::{GRAPH_PASSWORD, Graph};
use kg_graph_tools::profile::{
    CONSTRAINTS_STATEMENT, Declared, Profile, key_index_statements, keys_from_constraint_rows,
    search_index_statement,
};
use kg_graph_tools::quote_name as quoted;
use neo4j_client::{AccessMode, Auth, Client, Config, Url};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// One measured call: a tool with its arguments, and its floor.
struct Call {
    /// The row's name in the table.
    name: &'static str,
    tool: &'static str,
    arguments: &'static str,
    /// The equal-work statement and its parameters.
    floor: (String, Map<String, Value>),
}

/// What the floors are written with: the graph's labels and relationship types, and its
/// profile (keys and captions), known to whoever writes a statement by hand (the tools
/// look them up).
struct Schema {
    labels: Vec<String>,
    types: Vec<String>,
    profile: Profile,
}

fn params(json: &str) -> Map<String, Value> {
    serde_json::from_str(json).expect("a floor's parameters are a JSON object")
}

/// The full-text query and the exact key and caption look-ups the search ranks: a seek
/// per keyed label and per captioned label of the profile.
fn search_floor(schema: &Schema, query: &str, term: &str) -> (String, Map<String, Value>) {
    let mut text = String::from(
        "CALL db.index.fulltext.queryNodes('kg_graph_search', $q, {limit: 500}) YIELD node RETURN node",
    );
    let keys = schema.profile.keyed_labels();
    let captions = schema
        .profile
        .labels
        .iter()
        .filter_map(|(label, l)| Some((label.as_str(), l.caption.as_deref()?)));
    for (label, property) in keys.into_iter().chain(captions) {
        text.push_str(&format!(
            " UNION ALL MATCH (n:{}) WHERE n.{} = $term RETURN n AS node",
            quoted(label),
            quoted(property)
        ));
    }
    let mut map = Map::new();
    map.insert("q".into(), Value::from(query));
    map.insert("term".into(), Value::from(term));
    (text, map)
}

/// A page of neighbours (51 one-hop paths) and the degree per type, from a key seek.
fn neighbours_floor(schema: &Schema, label: &str, id: &str) -> (String, Map<String, Value>) {
    let degrees: Vec<String> = schema
        .types
        .iter()
        .map(|t| format!("COUNT {{ (n)-[:{}]-() }}", quoted(t)))
        .collect();
    let text = format!(
        "MATCH (n:{label} {{id: $id}}) \
         CALL (n) {{ MATCH p = (n)--() WITH p LIMIT 51 RETURN collect(p) AS paths }} \
         RETURN paths, [{}] AS degrees",
        degrees.join(", ")
    );
    let mut map = Map::new();
    map.insert("id".into(), Value::from(id));
    (text, map)
}

/// The calls of `tests/tests/graph_scale.rs` (the PROFILE test), on the demo's entities:
/// ACME is `SUP-001`, `PRD-036` an assembly, `ACC-MAIN` the account most orders are
/// charged to (both hubs grow with the scale). Each floor is the tool's work written by
/// hand as one statement by someone who knows the schema: the same counts, samples,
/// candidates, pages and paths, without the look-ups the tool makes to learn the graph's
/// shape (labels, types, constraints) or the instance's element id.
fn calls(schema: &Schema) -> Vec<Call> {
    let statistics: Vec<String> = schema
        .labels
        .iter()
        .map(|l| {
            let l = quoted(l);
            format!(
                "MATCH (n:{l}) WITH count(n) AS count \
                 CALL () {{ MATCH (s:{l}) RETURN s LIMIT 3 }} RETURN count, collect(s) AS samples"
            )
        })
        .chain(std::iter::once(
            "MATCH (n) WITH count(n) AS count RETURN count, [] AS samples".to_string(),
        ))
        .collect();
    let relationship_counts: Vec<String> = schema
        .types
        .iter()
        .flat_map(|t| {
            let t = quoted(t);
            [
                format!("COUNT {{ (:Supplier)-[:{t}]->() }}"),
                format!("COUNT {{ (:Supplier)<-[:{t}]-() }}"),
            ]
        })
        .collect();
    vec![
        Call {
            name: "statistics, all labels",
            tool: "get_node_statistics",
            arguments: r#"{}"#,
            floor: (statistics.join(" UNION ALL "), Map::new()),
        },
        Call {
            name: "statistics, one label",
            tool: "get_node_statistics",
            arguments: r#"{"label": "PurchaseOrder"}"#,
            floor: (
                "MATCH (n:PurchaseOrder) WITH count(n) AS count \
                 CALL () { MATCH (s:PurchaseOrder) RETURN s LIMIT 3 } \
                 RETURN count, collect(s) AS samples"
                    .into(),
                Map::new(),
            ),
        },
        Call {
            name: "search `acme`",
            tool: "search_instances",
            arguments: r#"{"search_term": "acme"}"#,
            floor: search_floor(schema, "acme*", "acme"),
        },
        Call {
            name: "search `PO-0003`",
            tool: "search_instances",
            arguments: r#"{"search_term": "PO-0003"}"#,
            floor: search_floor(schema, "po* AND 0003*", "PO-0003"),
        },
        Call {
            name: "class page, filtered",
            tool: "get_instances_by_class",
            arguments: r#"{"class_name": "PurchaseOrder", "filters": [{"property": "status", "value": "approved"}], "limit": 25}"#,
            floor: (
                "MATCH (n:PurchaseOrder) WHERE n.status = $status AND n.id IS NOT NULL \
                 RETURN n ORDER BY n.id LIMIT 26"
                    .into(),
                params(r#"{"status": "approved"}"#),
            ),
        },
        Call {
            name: "neighbours of SUP-001",
            tool: "get_instance_neighbors",
            arguments: r#"{"instance": "SUP-001"}"#,
            floor: neighbours_floor(schema, "Supplier", "SUP-001"),
        },
        Call {
            name: "neighbours of ACC-MAIN",
            tool: "get_instance_neighbors",
            arguments: r#"{"instance": "ACC-MAIN", "limit": 50}"#,
            floor: neighbours_floor(schema, "Account", "ACC-MAIN"),
        },
        Call {
            name: "path PRD-036 → SUP-001",
            tool: "find_path_between_instances",
            arguments: r#"{"start": "PRD-036", "end": "SUP-001"}"#,
            floor: (
                "MATCH (a:Product {id: $a}), (b:Supplier {id: $b}) \
                 MATCH p = shortestPath((a)-[*..4]-(b)) RETURN p"
                    .into(),
                params(r#"{"a": "PRD-036", "b": "SUP-001"}"#),
            ),
        },
        Call {
            name: "describe Supplier",
            tool: "describe_class",
            arguments: r#"{"class_name": "Supplier"}"#,
            floor: (
                format!(
                    "MATCH (n:Supplier) WITH count(n) AS count \
                     CALL () {{ MATCH (p:Supplier) WITH p LIMIT 20 UNWIND keys(p) AS key RETURN collect([key, p[key]]) AS observed }} \
                     CALL () {{ MATCH (s:Supplier) WHERE s.id IS NOT NULL WITH s ORDER BY s.id LIMIT 3 RETURN collect(s) AS samples }} \
                     CALL () {{ MATCH (:Supplier)-[:SUPPLIES]->(m) WITH m LIMIT 20 RETURN collect(DISTINCT labels(m)) AS supplies }} \
                     CALL () {{ MATCH (:Supplier)<-[:PLACED_WITH]-(m) WITH m LIMIT 20 RETURN collect(DISTINCT labels(m)) AS placed }} \
                     CALL () {{ OPTIONAL MATCH (c:OntologyClass {{name: 'Supplier'}}) RETURN c.description AS description }} \
                     RETURN count, observed, samples, supplies, placed, description, [{}] AS relationships",
                    relationship_counts.join(", ")
                ),
                Map::new(),
            ),
        },
        Call {
            name: "ontology classes",
            tool: "get_ontology_classes",
            arguments: r#"{}"#,
            floor: (
                "MATCH (c:OntologyClass) RETURN c.name, c.description, c.properties ORDER BY c.name LIMIT 500"
                    .into(),
                Map::new(),
            ),
        },
        Call {
            name: "ontology relationships",
            tool: "get_ontology_relationships",
            arguments: r#"{}"#,
            floor: (
                "MATCH (r:OntologyRelationship) RETURN r.name, r.source, r.target, r.description ORDER BY r.name LIMIT 500"
                    .into(),
                Map::new(),
            ),
        },
        Call {
            name: "read-only Cypher",
            tool: "run_read_cypher",
            arguments: r#"{"query": "MATCH (s:Supplier {id: 'SUP-001'}) RETURN s.name"}"#,
            floor: (
                "MATCH (s:Supplier {id: 'SUP-001'}) RETURN s.name LIMIT 101".into(),
                Map::new(),
            ),
        },
    ]
}

/// The agent turn: four calls, in order, each a request of its own.
const TURN: [(&str, &str); 4] = [
    ("search_instances", r#"{"search_term": "acme"}"#),
    ("get_instance_neighbors", r#"{"instance": "SUP-001"}"#),
    (
        "get_instances_by_class",
        r#"{"class_name": "PurchaseOrder", "filters": [{"property": "status", "value": "approved"}], "limit": 25}"#,
    ),
    (
        "find_path_between_instances",
        r#"{"start": "PRD-036", "end": "SUP-001"}"#,
    ),
];

const WARM_UP: usize = 5;

struct Bench {
    client: Client<Profiled>,
    transport: Profiled,
    declared: Declared,
}

impl Bench {
    /// Runs the call in a session of its own (a request with one tool call, as
    /// `POST /tools/{name}` or an MCP call is); the statements it sent.
    fn tool(&self, tool: &str, arguments: &str) -> Result<Vec<String>> {
        let session = kg_graph_tools::Session::with_declared(self.declared.clone());
        self.tool_in(&session, tool, arguments)
    }

    /// Runs the call in `session`: an agent turn's calls share the request's session, so
    /// the profile and the schema lists are read once per turn.
    fn tool_in(
        &self,
        session: &kg_graph_tools::Session,
        tool: &str,
        arguments: &str,
    ) -> Result<Vec<String>> {
        self.transport.take();
        kg_graph_tools::call_in(session, &self.client, &self.transport, tool, arguments).map_err(
            |e| anyhow::anyhow!("{tool} {arguments}: {}: {}", e.code.as_str(), e.message),
        )?;
        Ok(self
            .transport
            .take()
            .into_iter()
            .map(|r| r.statement)
            .collect())
    }

    fn statement(&self, text: &str, params: &Map<String, Value>) -> Result<()> {
        self.client
            .run(text, params.clone(), AccessMode::Read)
            .with_context(|| format!("floor statement {text}"))?;
        Ok(())
    }
}

/// p50 and p99 (nearest rank) of `samples`, in ms.
fn percentiles(samples: &mut [Duration]) -> (f64, f64) {
    samples.sort();
    let at = |q: f64| {
        let rank = ((q * samples.len() as f64).ceil() as usize).clamp(1, samples.len());
        samples[rank - 1].as_secs_f64() * 1e3
    };
    (at(0.50), at(0.99))
}

fn timed(iterations: usize, mut run: impl FnMut() -> Result<()>) -> Result<(f64, f64)> {
    for _ in 0..WARM_UP {
        run()?;
    }
    let mut samples = Vec::with_capacity(iterations);
    for _ in 0..iterations {
        let started = Instant::now();
        run()?;
        samples.push(started.elapsed());
    }
    Ok(percentiles(&mut samples))
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

fn main() -> Result<()> {
    let runtime = tokio::runtime::Runtime::new()?;
    // Without an origin, a graph with the demo of our own (kept alive to the end).
    let (origin, _graph) = match env("KG_BENCH_NEO4J") {
        Some(origin) => (origin, None),
        None => {
            let graph = runtime.block_on(Graph::start())?;
            (graph.url.clone(), Some(graph))
        }
    };
    let password = env("KG_BENCH_NEO4J_PASSWORD").unwrap_or_else(|| GRAPH_PASSWORD.to_string());
    let label = env("KG_BENCH_LABEL").unwrap_or_else(|| "demo".to_string());
    let iterations: usize = match env("KG_BENCH_ITERATIONS") {
        Some(text) => text
            .parse()
            .with_context(|| format!("KG_BENCH_ITERATIONS={text}"))?,
        None => 100,
    };
    if iterations == 0 {
        bail!("KG_BENCH_ITERATIONS must be at least 1");
    }
    let declared = Declared::parse(
        &std::fs::read_to_string(kg_e2e::workspace().join("catalog/graph-profile.toml"))
            .context("reading catalog/graph-profile.toml")?,
    )
    .map_err(|e| anyhow::anyhow!("catalog/graph-profile.toml: {e}"))?;
    let transport = Profiled::recording();
    let config = Config {
        origin: Url::parse(&origin).with_context(|| format!("KG_BENCH_NEO4J={origin}"))?,
        database: "neo4j".into(),
        auth: Auth::Basic {
            user: "neo4j".into(),
            password,
        },
    };
    let client = Client::new(config, transport.clone())
        .with_max_execution_time(Some(Duration::from_secs(60)));
    let bench = Bench {
        client,
        transport,
        declared,
    };

    let (nodes, profile) = set_up(&bench)?;
    println!(
        "graph_scale_latency: {label}: {origin}, {nodes} nodes; {iterations} timed calls per row after {WARM_UP} untimed\n"
    );

    let schema = schema(&bench, profile)?;
    let mut p50s = BTreeMap::new();
    let baseline = match env("KG_BENCH_BASELINE") {
        Some(path) => {
            let text = std::fs::read_to_string(&path).with_context(|| format!("reading {path}"))?;
            Some(serde_json::from_str::<BTreeMap<String, f64>>(&text)?)
        }
        None => None,
    };
    println!(
        "| call | statements | tool p50 ms | tool p99 ms | floor p50 ms | floor p99 ms | ≤ 2×floor+5 | {} |",
        if baseline.is_some() {
            "≤ 2×demo p50"
        } else {
            "-"
        }
    );
    println!("|---|---|---|---|---|---|---|---|");
    let mut misses = Vec::new();
    for call in calls(&schema) {
        let sent = bench.tool(call.tool, call.arguments)?;
        if env("KG_BENCH_SHOW").is_some() {
            for statement in &sent {
                let line = statement.split_whitespace().collect::<Vec<_>>().join(" ");
                eprintln!("{}: {line}", call.name);
            }
        }
        let statements = sent.len();
        let (tool_p50, tool_p99) = timed(iterations, || {
            bench.tool(call.tool, call.arguments).map(|_| ())
        })?;
        let (text, params) = &call.floor;
        let (floor_p50, floor_p99) = timed(iterations, || bench.statement(text, params))?;
        let near_floor = tool_p50 <= 2.0 * floor_p50 + 5.0;
        if !near_floor {
            misses.push(format!(
                "{}: p50 {tool_p50:.1} ms > 2 × {floor_p50:.1} + 5",
                call.name
            ));
        }
        let versus_demo = match baseline.as_ref().and_then(|b| b.get(call.name)) {
            Some(demo) => {
                let ok = tool_p50 <= 2.0 * demo;
                if !ok {
                    misses.push(format!(
                        "{}: p50 {tool_p50:.1} ms > 2 × demo {demo:.1}",
                        call.name
                    ));
                }
                format!("{} (demo {demo:.1})", if ok { "yes" } else { "NO" })
            }
            None => "-".to_string(),
        };
        println!(
            "| {} | {statements} | {tool_p50:.1} | {tool_p99:.1} | {floor_p50:.1} | {floor_p99:.1} | {} | {versus_demo} |",
            call.name,
            if near_floor { "yes" } else { "NO" }
        );
        p50s.insert(call.name.to_string(), tool_p50);
        let _ = kg_e2e::bench_results::record(
            &format!("graph_scale {label} {} p50 ms", call.name),
            tool_p50,
        );
    }

    // The agent turn: the four calls back to back in one request's session.
    let mut turn_statements = 0;
    let (turn_p50, turn_p99) = timed(iterations, || {
        let session = kg_graph_tools::Session::with_declared(bench.declared.clone());
        turn_statements = 0;
        for (tool, arguments) in TURN {
            turn_statements += bench.tool_in(&session, tool, arguments)?.len();
        }
        Ok(())
    })?;
    println!(
        "\ngraph_scale_latency: a 4-tool agent turn's graph time (search, neighbours, class page, path; {turn_statements} statements): p50 {turn_p50:.1} ms, p99 {turn_p99:.1} ms"
    );
    p50s.insert("agent turn".to_string(), turn_p50);
    let _ = kg_e2e::bench_results::record(&format!("graph_scale {label} turn p50 ms"), turn_p50);

    if let Some(path) = env("KG_BENCH_JSON") {
        std::fs::write(&path, serde_json::to_string_pretty(&p50s)?)
            .with_context(|| format!("writing {path}"))?;
    }
    if misses.is_empty() {
        println!("graph_scale_latency: {label}: every call within its targets");
    } else {
        println!(
            "graph_scale_latency: {label}: {} miss(es):\n  {}",
            misses.len(),
            misses.join("\n  ")
        );
    }
    Ok(())
}

/// The profile's indexes, as the set-up creates them, awaited; the graph's node count and
/// its profile.
fn set_up(bench: &Bench) -> Result<(u64, Profile)> {
    let rows = bench
        .client
        .run(CONSTRAINTS_STATEMENT, Map::new(), AccessMode::Read)
        .context("SHOW CONSTRAINTS")?
        .rows;
    let rows: Vec<Vec<Value>> = rows
        .iter()
        .map(|row| row.iter().map(neo4j_client::Value::to_plain_json).collect())
        .collect();
    let profile = Profile::merge(&bench.declared, &keys_from_constraint_rows(&rows));
    let started = Instant::now();
    for statement in key_index_statements(&profile)
        .into_iter()
        .chain(search_index_statement(&profile))
    {
        bench
            .client
            .run_schema(&statement)
            .with_context(|| statement.clone())?;
    }
    for statement in ["CALL db.awaitIndexes(3600)", "CALL db.clearQueryCaches()"] {
        bench
            .client
            .run(statement, Map::new(), AccessMode::Write)
            .with_context(|| statement.to_string())?;
    }
    println!(
        "graph_scale_latency: indexes ready in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let count = bench
        .client
        .run("MATCH (n) RETURN count(n)", Map::new(), AccessMode::Read)?;
    let nodes = count
        .rows
        .first()
        .and_then(|r| r.first())
        .and_then(neo4j_client::Value::as_i64)
        .unwrap_or(0)
        .max(0) as u64;
    Ok((nodes, profile))
}

/// The graph's labels and relationship types, with its profile, for the floors.
fn schema(bench: &Bench, profile: Profile) -> Result<Schema> {
    let names = |statement: &str| -> Result<Vec<String>> {
        Ok(bench
            .client
            .run(statement, Map::new(), AccessMode::Read)?
            .rows
            .iter()
            .filter_map(|r| r.first().and_then(neo4j_client::Value::as_str))
            .map(str::to_string)
            .collect())
    };
    let labels = names("CALL db.labels() YIELD label RETURN label ORDER BY label")?;
    if labels.is_empty() {
        bail!("the graph has no labels");
    }
    Ok(Schema {
        labels,
        types: names(
            "CALL db.relationshipTypes() YIELD relationshipType RETURN relationshipType ORDER BY relationshipType",
        )?,
        profile,
    })
}
