//! The first tool end to end: HTTP → dispatcher → query-tools (WIT) → Neo4j Query API →
//! devgraph, asserting on the demo data's true counts.

use kg_e2e::{AppHost, GRAPH_PASSWORD, Graph, Stack, app_manifest};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

async fn stack() -> (Graph, AppHost, tempfile::TempDir) {
    let Stack { graph, host, dir } = Stack::start().await.unwrap();
    (graph, host, dir)
}

fn count_of(result: &Value, label: &str) -> i64 {
    result["data"]["labels"]
        .as_array()
        .and_then(|all| all.iter().find(|l| l["label"] == label))
        .and_then(|l| l["count"].as_i64())
        .unwrap_or_else(|| panic!("no {label} in {result}"))
}

#[tokio::test]
async fn get_node_statistics_returns_the_graphs_true_counts() {
    let (graph, host, _dir) = stack().await;
    let (status, result) = host
        .send("POST", "/tools/get_node_statistics", "{}")
        .await
        .unwrap();
    assert_eq!(status, 200, "{result}");
    assert_eq!(result["tool"], "get_node_statistics");
    // The truth, asked of devgraph directly.
    let truth = graph
        .query("MATCH (n) UNWIND labels(n) AS label RETURN label, count(*) AS n")
        .await
        .unwrap();
    assert!(truth.len() >= 9, "{truth:?}");
    for row in &truth {
        assert_eq!(
            count_of(&result, row[0].as_str().unwrap()),
            row[1].as_i64().unwrap(),
            "{row:?}"
        );
    }
    // And the demo dataset's documented shape.
    assert_eq!(count_of(&result, "Supplier"), 10);
    assert_eq!(count_of(&result, "Product"), 40);
    assert_eq!(count_of(&result, "PurchaseOrder"), 96);
    let total = graph.query("MATCH (n) RETURN count(n)").await.unwrap()[0][0]
        .as_i64()
        .unwrap();
    assert_eq!(result["data"]["total_nodes"], total);
    assert_eq!(result["truncated"], false);
    for label in result["data"]["labels"].as_array().unwrap() {
        let expected = label["count"].as_u64().unwrap().min(3) as usize;
        assert_eq!(
            label["samples"].as_array().unwrap().len(),
            expected,
            "{label}"
        );
    }
    assert!(
        result["summary"]
            .as_str()
            .unwrap()
            .contains(&format!("{total} nodes")),
        "{result}"
    );
}

#[tokio::test]
async fn one_label_with_samples_and_bad_arguments() {
    let (_graph, host, _dir) = stack().await;
    let (status, result) = host
        .send(
            "POST",
            "/tools/get_node_statistics",
            r#"{"label": "Supplier", "sample_size": 2}"#,
        )
        .await
        .unwrap();
    assert_eq!(status, 200, "{result}");
    assert_eq!(result["data"]["labels"].as_array().unwrap().len(), 1);
    assert_eq!(result["data"]["labels"][0]["count"], 10);
    let samples = result["data"]["labels"][0]["samples"].as_array().unwrap();
    assert_eq!(samples.len(), 2);
    assert!(
        samples[0]["properties"]["id"]
            .as_str()
            .unwrap()
            .starts_with("SUP-")
    );
    assert_eq!(result["summary"], "Supplier: 10 nodes");

    let (status, error) = host
        .send(
            "POST",
            "/tools/get_node_statistics",
            r#"{"label": "PurchaseOrders"}"#,
        )
        .await
        .unwrap();
    assert_eq!(status, 404, "{error}");
    assert_eq!(error["error"]["detail"]["did_you_mean"][0], "PurchaseOrder");

    for bad in [
        r#"{"sample_size": -1}"#,
        r#"{"sample_size": 11}"#,
        r#"{"sample_size": "3"}"#,
        r#"{"label": 7}"#,
        r#"{"lable": "Supplier"}"#,
    ] {
        let (status, error) = host
            .send("POST", "/tools/get_node_statistics", bad)
            .await
            .unwrap();
        assert_eq!(status, 400, "{bad}: {error}");
        assert_eq!(error["error"]["code"], "invalid_argument", "{bad}");
    }
    // A label that tries to break out of its quoting is just an unknown label.
    let (status, _) = host
        .send(
            "POST",
            "/tools/get_node_statistics",
            &json!({"label": "Supplier`) DETACH DELETE n //"}).to_string(),
        )
        .await
        .unwrap();
    assert_eq!(status, 404);
}

#[tokio::test]
async fn unknown_tools_get_suggestions_and_all_nine_are_listed() {
    let (_graph, host, _dir) = stack().await;
    let (status, error) = host
        .send("POST", "/tools/get_node_statistic", "{}")
        .await
        .unwrap();
    assert_eq!(status, 404, "{error}");
    assert_eq!(
        error["error"]["detail"]["did_you_mean"][0],
        "get_node_statistics"
    );
    let (status, error) = host
        .send("POST", "/tools/describe_class", "{}")
        .await
        .unwrap();
    assert_eq!(status, 400, "{error}");
    let (status, tools) = host.get("/tools").await.unwrap();
    assert_eq!(status, 200);
    let names: Vec<&str> = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(
        names,
        [
            "search_instances",
            "get_instances_by_class",
            "get_instance_neighbors",
            "find_path_between_instances",
            "get_ontology_classes",
            "get_ontology_relationships",
            "describe_class",
            "get_node_statistics",
            "run_read_cypher"
        ]
    );
    assert!(
        tools["tools"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t["parameters"]["type"] == "object")
    );
}

#[tokio::test]
async fn graph_down_is_a_quick_503_not_a_hang() {
    let dir = tempfile::tempdir().unwrap();
    let vars = vec![
        ("neo4j_origin", "http://127.0.0.1:9".to_string()),
        ("neo4j_password", GRAPH_PASSWORD.to_string()),
    ];
    let host = AppHost::start(&app_manifest(), &dir.path().join("kv.db"), &vars)
        .await
        .unwrap();
    let started = Instant::now();
    let (status, error) = host
        .send("POST", "/tools/get_node_statistics", "{}")
        .await
        .unwrap();
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(status, 503, "{error}");
    assert_eq!(error["error"]["code"], "unavailable");
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap()
            .contains("graph"),
        "{error}"
    );
    // The app's own refusal says when to come back (issue #49), like a rate limit does.
    let response = host
        .request_as(
            host.key.as_deref(),
            "POST",
            "/tools/get_node_statistics",
            "{}",
        )
        .await
        .unwrap();
    assert_eq!(response.status(), 503);
    assert_eq!(
        response.headers().get("retry-after").map(|v| v.as_bytes()),
        Some(&b"5"[..])
    );
}
