//! The yardstick of index-backed graph tools: a tool whose statements find their start
//! through an index and stop at a limit costs about the same on a large graph as on a
//! small one; one that scans a label, or every node, costs in proportion to the graph.
//!
//! On a real Neo4j (`KG_E2E_GRAPH=neo4j`; devgraph has no `PROFILE`), with the
//! application's own indexes (`POST /actions/setup`), each of a fixed set of realistic
//! tool calls on demo entities runs natively (`kg_graph_tools::call_in`, with the declared
//! graph profile, as the query-tools component calls it) through a transport that
//! profiles every read statement (`kg_e2e::profiled`) and sums its database hits: once on
//! the demo graph, then again after the same graph has grown by [`SCALE`] (about ten times
//! the demo's 565 nodes, the demo's hubs ACME and ACC-MAIN growing too;
//! `kg_e2e::scale_graph`). It prints, per call, the statements and the hits on both, and
//! fails when a call's hits grew beyond [`within_budget`], or when a call fails.
//!
//! `KG_E2E_GRAPH=neo4j cargo test --release -p kg-e2e --test graph_scale -- --nocapture`
//! (add `KG_E2E_GRAPH_SCALE=1` to grow by half a million nodes instead).

use kg_e2e::profiled::{Profiled, Recorded};
use kg_e2e::scale_graph::{self, Target};
use kg_e2e::{GRAPH_PASSWORD, Graph, GraphKind, Stack};
use kg_graph_tools::profile::Declared;
use neo4j_client::{Auth, Client, Config, Url};
use std::time::{Duration, Instant};

/// How much the graph grows: about 5,000 nodes, ten times the demo, which is enough to
/// tell a scan from a seek and keeps the test within seconds. `KG_E2E_GRAPH_SCALE`
/// overrides it for a longer look (1 is about 500,000 nodes, a minute and a half of
/// loading here).
const SCALE: f64 = 0.01;

fn scale() -> f64 {
    match std::env::var("KG_E2E_GRAPH_SCALE") {
        Ok(text) if !text.is_empty() => text
            .parse()
            .unwrap_or_else(|_| panic!("KG_E2E_GRAPH_SCALE={text}: not a number")),
        _ => SCALE,
    }
}

/// The calls measured: realistic arguments on the demo's entities (ACME is `SUP-001`,
/// `PRD-036` an assembly, `ACC-MAIN` the account every demo order is charged to).
const CALLS: [(&str, &str); 12] = [
    ("get_node_statistics", r#"{}"#),
    ("get_node_statistics", r#"{"label": "PurchaseOrder"}"#),
    ("search_instances", r#"{"search_term": "acme"}"#),
    ("search_instances", r#"{"search_term": "PO-0003"}"#),
    (
        "get_instances_by_class",
        r#"{"class_name": "PurchaseOrder", "filters": [{"property": "status", "value": "approved"}], "limit": 25}"#,
    ),
    ("get_instance_neighbors", r#"{"instance": "SUP-001"}"#),
    (
        "get_instance_neighbors",
        r#"{"instance": "ACC-MAIN", "limit": 50}"#,
    ),
    (
        "find_path_between_instances",
        r#"{"start": "PRD-036", "end": "SUP-001"}"#,
    ),
    ("describe_class", r#"{"class_name": "Supplier"}"#),
    ("get_ontology_classes", r#"{}"#),
    (
        "run_read_cypher",
        r#"{"query": "MATCH (s:Supplier {id: 'SUP-001'}) RETURN s.name"}"#,
    ),
    // The ninth tool, so that every tool is measured.
    ("get_ontology_relationships", r#"{}"#),
];

/// The pass rule. A call's database hits on the grown graph may be at most twice its hits
/// on the demo plus 200. A statement that seeks its start through an index and stops at a
/// limit stays well inside that (an index a level deeper, a hub's few more relationships
/// read before the limit, a page of results the demo could not fill), while a scan of a
/// label or of every node grows with the graph, about tenfold at the default scale.
/// A sample bounded by a large limit (`WITH n LIMIT 100`, `LIMIT 10000`) that the demo
/// does not fill also fails it: its cost does stop growing, but only once the graph
/// fills the sample, so at ten times the demo it is indistinguishable from a scan.
fn within_budget(demo_hits: u64, grown_hits: u64) -> bool {
    grown_hits <= 2 * demo_hits + 200
}

/// One call on one graph: its statements as recorded, or its error.
struct Measured {
    statements: Vec<Recorded>,
    error: Option<String>,
}

impl Measured {
    fn hits(&self) -> u64 {
        self.statements.iter().filter_map(|s| s.db_hits).sum()
    }

    fn unprofiled(&self) -> usize {
        self.statements
            .iter()
            .filter(|s| s.db_hits.is_none())
            .count()
    }
}

/// Runs every call of `CALLS` against the graph at `origin`, each in a session of its
/// own (so each pays for the schema lookups a request's first call makes).
fn measure(origin: &str, declared: &Declared) -> Vec<Measured> {
    let transport = Profiled::new();
    let config = Config {
        origin: Url::parse(origin).expect("the graph's URL parses"),
        database: "neo4j".into(),
        auth: Auth::Basic {
            user: "neo4j".into(),
            password: GRAPH_PASSWORD.into(),
        },
    };
    // As the component builds it: with a statement time limit, run_read_cypher's
    // statement runs in a transaction begun with the limit (which is profiled too).
    let client = Client::new(config, transport.clone())
        .with_max_execution_time(Some(Duration::from_secs(30)));
    CALLS
        .iter()
        .map(|(tool, arguments)| {
            transport.take();
            let session = kg_graph_tools::Session::with_declared(declared.clone());
            let result = kg_graph_tools::call_in(&session, &client, &transport, tool, arguments);
            Measured {
                statements: transport.take(),
                error: result
                    .err()
                    .map(|e| format!("{}: {}", e.code.as_str(), e.message)),
            }
        })
        .collect()
}

async fn measure_on(origin: &str, declared: &Declared) -> Vec<Measured> {
    let (origin, declared) = (origin.to_string(), declared.clone());
    tokio::task::spawn_blocking(move || measure(&origin, &declared))
        .await
        .expect("measuring the calls")
}

/// The statement on one line, shortened.
fn short(statement: &str) -> String {
    let line = statement.split_whitespace().collect::<Vec<_>>().join(" ");
    match line.char_indices().nth(140) {
        Some((at, _)) => format!("{}…", &line[..at]),
        None => line,
    }
}

fn hits_text(recorded: &Recorded) -> String {
    match (recorded.db_hits, &recorded.error) {
        (_, Some(code)) => format!("error {code}"),
        (Some(hits), None) => format!("{hits} hits, {} rows", recorded.rows.unwrap_or(0)),
        (None, None) => "not profiled".to_string(),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn tool_costs_do_not_grow_with_the_graph() {
    if GraphKind::from_env() != GraphKind::Neo4j {
        kg_e2e::not_on_neo4j(
            "SKIPPED (Neo4j only): database hits come from Neo4j's PROFILE, which devgraph \
             does not have; run with KG_E2E_GRAPH=neo4j",
        );
        return;
    }
    let started = Instant::now();
    let declared = Declared::parse(
        &std::fs::read_to_string(kg_e2e::workspace().join("catalog/graph-profile.toml"))
            .expect("reading catalog/graph-profile.toml"),
    )
    .expect("the declared graph profile parses");

    // The application's own set-up, so the graph has the indexes it creates.
    let graph = Graph::start().await.expect("leasing a Neo4j with the demo");
    let stack = Stack::start_with_graph(graph, &[])
        .await
        .expect("starting the application on it");
    let (status, body) = stack
        .host
        .send("POST", "/actions/setup", "{}")
        .await
        .expect("POST /actions/setup");
    assert_eq!(status, 200, "set-up: {body}");
    stack
        .graph
        .write("CALL db.awaitIndexes(300)")
        .await
        .expect("waiting for the indexes");
    let set_up = started.elapsed();

    let demo = measure_on(&stack.graph.url, &declared).await;

    let target = Target::new(&stack.graph.url, GRAPH_PASSWORD);
    let scale = scale();
    let report = scale_graph::grow(&target, scale, |_| {})
        .await
        .expect("growing the graph");
    println!("graph_scale: grew the demo by scale {scale}: {report}");
    // Fresh plans for the grown graph, as a server that has run a while would have
    // (Neo4j replans a cached statement once the statistics moved enough).
    for statement in ["CALL db.awaitIndexes(300)", "CALL db.clearQueryCaches()"] {
        stack
            .graph
            .write(statement)
            .await
            .unwrap_or_else(|e| panic!("{statement}: {e:#}"));
    }

    let grown = measure_on(&stack.graph.url, &declared).await;

    println!(
        "\ngraph_scale: database hits per call, demo (565 nodes) vs grown by scale {scale} \
         (+{} nodes); rule: grown ≤ 2 × demo + 200\n",
        report.nodes
    );
    println!("| tool | arguments | statements (demo/grown) | demo hits | grown hits | ratio | |");
    println!("|---|---|---|---|---|---|---|");
    let mut failures = Vec::new();
    for (((tool, arguments), before), after) in CALLS.iter().zip(&demo).zip(&grown) {
        let (d, g) = (before.hits(), after.hits());
        let ratio = if d == 0 {
            "-".to_string()
        } else {
            format!("{:.2}", g as f64 / d as f64)
        };
        let unprofiled = match (before.unprofiled(), after.unprofiled()) {
            (0, 0) => String::new(),
            (a, b) => format!(" ({a}/{b} not profiled)"),
        };
        let verdict = if before.error.is_some() || after.error.is_some() {
            failures.push(format!(
                "{tool} {arguments}: failed: demo: {:?}; grown: {:?}",
                before.error, after.error
            ));
            "ERROR"
        } else if within_budget(d, g) {
            "ok"
        } else {
            failures.push(format!(
                "{tool} {arguments}: {g} hits on the grown graph, over 2 × {d} + 200"
            ));
            "GREW"
        };
        println!(
            "| {tool} | `{arguments}` | {}/{}{unprofiled} | {d} | {g} | {ratio} | {verdict} |",
            before.statements.len(),
            after.statements.len()
        );
    }

    // Each statement of a call that grew or failed, on both graphs, for whoever fixes it.
    for (((tool, arguments), before), after) in CALLS.iter().zip(&demo).zip(&grown) {
        let ok = before.error.is_none()
            && after.error.is_none()
            && within_budget(before.hits(), after.hits());
        if ok {
            continue;
        }
        println!("\n{tool} {arguments}:");
        for (name, measured) in [("demo", before), ("grown", after)] {
            if let Some(error) = &measured.error {
                println!("  {name}: ERROR {error}");
            }
            for s in &measured.statements {
                println!("  {name}: {:>24}  {}", hits_text(s), short(&s.statement));
            }
        }
    }
    println!(
        "\ngraph_scale: set-up {:.1} s, generator {:.0} nodes/s, whole test {:.1} s",
        set_up.as_secs_f64(),
        report.nodes_per_second(),
        started.elapsed().as_secs_f64()
    );
    assert!(
        failures.is_empty(),
        "{} of {} calls grew with the graph or failed:\n{}",
        failures.len(),
        CALLS.len(),
        failures.join("\n")
    );
}
