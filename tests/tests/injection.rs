//! The injection corpus (`tests/data/cypher_injection.json`) through the whole stack
//! against devgraph: every case answers JSON, never a 5xx; every case the guard must refuse
//! is refused; and the graph is exactly as before (node and relationship counts, and every
//! node's and relationship's labels, type and properties).

use kg_e2e::{Devgraph, Stack, workspace};
use serde_json::Value;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

/// Everything a write could change, sorted so the comparison ignores row order.
async fn snapshot(graph: &Devgraph) -> (Vec<String>, Vec<String>) {
    let mut nodes: Vec<String> = graph
        .query("MATCH (n) RETURN n")
        .await
        .unwrap()
        .iter()
        .map(|row| {
            let n = &row[0];
            format!("{} {} {}", n["elementId"], n["labels"], n["properties"])
        })
        .collect();
    let mut relationships: Vec<String> = graph
        .query("MATCH (a)-[r]->(b) RETURN r")
        .await
        .unwrap()
        .iter()
        .map(|row| row[0].to_string())
        .collect();
    nodes.sort();
    relationships.sort();
    (nodes, relationships)
}

fn checksum(snapshot: &(Vec<String>, Vec<String>)) -> u64 {
    let mut hasher = DefaultHasher::new();
    snapshot.hash(&mut hasher);
    hasher.finish()
}

#[tokio::test]
async fn the_corpus_makes_no_write_and_no_crash() {
    let corpus: Value = serde_json::from_str(
        &std::fs::read_to_string(workspace().join("tests/data/cypher_injection.json")).unwrap(),
    )
    .unwrap();
    let cases = corpus["cases"].as_array().unwrap();
    assert!(cases.len() >= 60);

    let stack = Stack::start().await.unwrap();
    let before = snapshot(&stack.graph).await;
    assert_eq!(before.0.len(), 565, "the demo graph");
    assert!(!before.1.is_empty());

    let mut refused = 0;
    for case in cases {
        let tool = case["tool"].as_str().unwrap();
        let body = case["arguments"].to_string();
        let (status, answer) = stack
            .host
            .send("POST", &format!("/tools/{tool}"), &body)
            .await
            .unwrap();
        let id = &case["id"];
        assert!(status < 500, "case {id} ({tool} {body}): {status} {answer}");
        assert!(answer.is_object(), "case {id}: not JSON: {answer}");
        if case["expect"] == "refused" {
            assert!(
                (400..500).contains(&status) && answer["error"]["code"].is_string(),
                "case {id} was not refused: {status} {answer}"
            );
            refused += 1;
        } else if status != 200 {
            assert!(
                answer["error"]["message"].is_string(),
                "case {id}: {answer}"
            );
        }
    }
    let after = snapshot(&stack.graph).await;
    assert_eq!(before.0.len(), after.0.len(), "node count");
    assert_eq!(before.1.len(), after.1.len(), "relationship count");
    assert_eq!(
        checksum(&before),
        checksum(&after),
        "properties, labels, types"
    );
    assert!(before == after);
    println!(
        "{} cases ({refused} refused by the guard), graph checksum {:x} unchanged",
        cases.len(),
        checksum(&after)
    );
}
