//! ns per answer read: the one-pass reading (`parse_run_response`) against the reading
//! through a `serde_json::Value` tree it replaced (`parse_result_via_tree`), on typed
//! answers shaped like the query tools' (`cargo bench -p neo4j-client --bench parse`).
//! Each figure is the median of 15 rounds; rounds alternate between the two readings so
//! both see the same machine load.

use neo4j_client::{HttpResponse, QueryResult, parse_result_via_tree, parse_run_response};
use std::hint::black_box;
use std::time::Instant;

fn node(i: usize) -> String {
    format!(
        r#"{{"$type":"Node","_value":{{"_element_id":"4:2f1c9e0a-6d3b-4b8e-9f1a-0c7d5e3b2a11:{i}","_labels":["Supplier"],"_properties":{{"name":{{"$type":"String","_value":"Supplier {i}"}},"country":{{"$type":"String","_value":"DE"}},"rating":{{"$type":"Float","_value":"4.{i}"}},"since":{{"$type":"Date","_value":"2019-03-0{}"}}}}}}}}"#,
        i % 9 + 1
    )
}

fn answer(fields: &[&str], rows: Vec<String>) -> HttpResponse {
    let fields: Vec<String> = fields.iter().map(|f| format!("\"{f}\"")).collect();
    let body = format!(
        r#"{{"data":{{"fields":[{}],"values":[{}]}},"counters":{{"containsUpdates":false,"nodesCreated":0,"nodesDeleted":0,"propertiesSet":0,"relationshipsCreated":0,"relationshipsDeleted":0,"labelsAdded":0,"labelsRemoved":0,"indexesAdded":0,"indexesRemoved":0,"constraintsAdded":0,"constraintsRemoved":0,"containsSystemUpdates":false,"systemUpdates":0}},"bookmarks":["FB:kcwQx4mF3J0mTzKsA4k6Vb2GUQmQ"]}}"#,
        fields.join(","),
        rows.join(",")
    );
    HttpResponse {
        status: 202,
        headers: vec![("content-type".into(), "application/vnd.neo4j.query".into())],
        body: body.into_bytes(),
    }
}

/// One row of five fields: a count, a name, a score, a node, a list of labels.
fn one_row() -> HttpResponse {
    let row = format!(
        r#"[{{"$type":"Integer","_value":"1280"}},{{"$type":"String","_value":"ACME Corp"}},{{"$type":"Float","_value":"0.875"}},{},{{"$type":"List","_value":[{{"$type":"String","_value":"Supplier"}},{{"$type":"String","_value":"Product"}}]}}]"#,
        node(1)
    );
    answer(&["total", "name", "score", "s", "labels"], vec![row])
}

/// Fifty rows of four fields: a node, a relationship type, a count, a node.
fn fifty_rows() -> HttpResponse {
    let rows = (0..50)
        .map(|i| {
            format!(
                r#"[{},{{"$type":"String","_value":"SUPPLIES"}},{{"$type":"Integer","_value":"{i}"}},{}]"#,
                node(i),
                node(i + 100)
            )
        })
        .collect();
    answer(&["s", "rel", "n", "p"], rows)
}

fn ns_per_read(
    read: fn(&HttpResponse) -> Result<QueryResult, neo4j_client::Neo4jError>,
    answer: &HttpResponse,
    iterations: u32,
) -> f64 {
    let start = Instant::now();
    for _ in 0..iterations {
        black_box(read(black_box(answer)).ok());
    }
    start.elapsed().as_nanos() as f64 / f64::from(iterations)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    // `cargo test --benches` runs this too: a short run there.
    let iterations = if std::env::args().any(|a| a == "--bench") {
        2_000
    } else {
        20
    };
    println!(
        "{:<22} {:>7} {:>12} {:>12} {:>7}",
        "answer", "bytes", "tree ns", "one-pass ns", "ratio"
    );
    for (name, answer) in [
        ("1 row x 5 fields", one_row()),
        ("50 rows x 4 fields", fifty_rows()),
    ] {
        // Both readings agree, or the numbers mean nothing.
        assert_eq!(
            format!("{:?}", parse_run_response(&answer)),
            format!("{:?}", parse_result_via_tree(&answer))
        );
        let iterations = if answer.body.len() > 10_000 {
            iterations / 10
        } else {
            iterations
        };
        let (mut tree, mut one_pass) = (Vec::new(), Vec::new());
        for _ in 0..15 {
            tree.push(ns_per_read(parse_result_via_tree, &answer, iterations));
            one_pass.push(ns_per_read(parse_run_response, &answer, iterations));
        }
        let (tree, one_pass) = (median(tree), median(one_pass));
        println!(
            "{name:<22} {:>7} {tree:>12.0} {one_pass:>12.0} {:>6.2}x",
            answer.body.len(),
            tree / one_pass
        );
    }
}
