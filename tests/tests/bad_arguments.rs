//! Bad arguments for every tool — wrong types, negative limits, hops > 3, missing required
//! fields, unknown fields, ~1 MB strings — answer 400 `invalid_argument` with a message
//! naming the argument, and never reach the graph.

use kg_e2e::Stack;
use serde_json::{Value, json};

#[tokio::test]
async fn every_tool_names_the_bad_argument() {
    let stack = Stack::start().await.unwrap();
    // Just under the dispatcher's 1 MiB body limit, so the tool sees it.
    let mb = "x".repeat(1_000_000);
    let cases: Vec<(&str, Value, &str)> = vec![
        ("search_instances", json!({}), "search_term"),
        ("search_instances", json!({"search_term": 5}), "search_term"),
        (
            "search_instances",
            json!({"search_term": "a", "limit": -1}),
            "limit",
        ),
        (
            "search_instances",
            json!({"search_term": "a", "limit": "5"}),
            "limit",
        ),
        (
            "search_instances",
            json!({"search_term": "a", "class_name": 7}),
            "class_name",
        ),
        (
            "search_instances",
            json!({"search_term": mb}),
            "search_term",
        ),
        (
            "search_instances",
            json!({"search_term": "a", "bogus": 1}),
            "bogus",
        ),
        ("get_instances_by_class", json!({}), "class_name"),
        (
            "get_instances_by_class",
            json!({"class_name": mb}),
            "class_name",
        ),
        (
            "get_instances_by_class",
            json!({"class_name": "Supplier", "limit": -5}),
            "limit",
        ),
        (
            "get_instances_by_class",
            json!({"class_name": "Supplier", "after": {"id": 1}}),
            "after",
        ),
        (
            "get_instances_by_class",
            json!({"class_name": "Supplier", "filters": "status=approved"}),
            "filters",
        ),
        (
            "get_instances_by_class",
            json!({"class_name": "Supplier", "filters": [{"property": "name", "value": mb}]}),
            "filters[0].value",
        ),
        (
            "get_instances_by_class",
            json!({"class_name": "Supplier", "filters": [{"property": "name", "op": "like", "value": "a"}]}),
            "filters[0].op",
        ),
        ("get_instance_neighbors", json!({}), "instance"),
        (
            "get_instance_neighbors",
            json!({"instance": "SUP-001", "hops": 4}),
            "hops",
        ),
        (
            "get_instance_neighbors",
            json!({"instance": "SUP-001", "hops": 0}),
            "hops",
        ),
        (
            "get_instance_neighbors",
            json!({"instance": "SUP-001", "hops": 1.5}),
            "hops",
        ),
        (
            "get_instance_neighbors",
            json!({"instance": "SUP-001", "direction": "up"}),
            "direction",
        ),
        (
            "get_instance_neighbors",
            json!({"instance": "SUP-001", "relationship_types": "SUPPLIES"}),
            "relationship_types",
        ),
        (
            "get_instance_neighbors",
            json!({"instance": "SUP-001", "relationship_types": [mb]}),
            "relationship_types",
        ),
        (
            "get_instance_neighbors",
            json!({"instance": "SUP-001", "limit": -1}),
            "limit",
        ),
        (
            "get_instance_neighbors",
            json!({"instance": mb}),
            "instance",
        ),
        (
            "find_path_between_instances",
            json!({"start": "SUP-001"}),
            "end",
        ),
        (
            "find_path_between_instances",
            json!({"end": "PRD-001"}),
            "start",
        ),
        (
            "find_path_between_instances",
            json!({"start": "SUP-001", "end": "PRD-001", "max_depth": 7}),
            "max_depth",
        ),
        (
            "find_path_between_instances",
            json!({"start": "SUP-001", "end": "PRD-001", "limit": -2}),
            "limit",
        ),
        (
            "find_path_between_instances",
            json!({"start": mb, "end": "PRD-001"}),
            "start",
        ),
        ("get_ontology_classes", json!({"verbose": true}), "verbose"),
        ("get_ontology_relationships", json!({"limit": 5}), "limit"),
        ("describe_class", json!({}), "class_name"),
        (
            "describe_class",
            json!({"class_name": ["Supplier"]}),
            "class_name",
        ),
        (
            "describe_class",
            json!({"class_name": "Supplier", "sample_size": -1}),
            "sample_size",
        ),
        (
            "describe_class",
            json!({"class_name": "Supplier", "sample_size": 11}),
            "sample_size",
        ),
        ("describe_class", json!({"class_name": mb}), "class_name"),
        ("get_node_statistics", json!({"label": 5}), "label"),
        (
            "get_node_statistics",
            json!({"sample_size": 11}),
            "sample_size",
        ),
        ("get_node_statistics", json!({"label": mb}), "label"),
        ("run_read_cypher", json!({}), "query"),
        ("run_read_cypher", json!({"query": 5}), "query"),
        (
            "run_read_cypher",
            json!({"query": "MATCH (n) RETURN n", "limit": 0}),
            "limit",
        ),
        (
            "run_read_cypher",
            json!({"query": "MATCH (n) RETURN n", "limit": 1001}),
            "limit",
        ),
        (
            "run_read_cypher",
            json!({"query": "MATCH (n) RETURN n", "limit": -1}),
            "limit",
        ),
        (
            "run_read_cypher",
            json!({"query": "MATCH (n) RETURN n", "parameters": [1]}),
            "parameters",
        ),
        ("run_read_cypher", json!({"query": mb}), "query"),
    ];
    let mut tools_covered = std::collections::BTreeSet::new();
    for (tool, args, field) in &cases {
        let body = args.to_string();
        let (status, e) = stack
            .host
            .send("POST", &format!("/tools/{tool}"), &body)
            .await
            .unwrap();
        let shown: String = body.chars().take(120).collect();
        assert_eq!(status, 400, "{tool} {shown}: {e}");
        assert_eq!(e["error"]["code"], "invalid_argument", "{tool} {shown}");
        let message = e["error"]["message"].as_str().unwrap();
        assert!(
            message.contains(field),
            "{tool} {shown}: the message does not name `{field}`: {message}"
        );
        assert!(message.len() < 500, "{tool}: the message echoes the input");
        tools_covered.insert(*tool);
    }
    let (_, listed) = stack.host.get("/tools").await.unwrap();
    assert_eq!(
        tools_covered.len(),
        listed["tools"].as_array().unwrap().len(),
        "every tool is covered"
    );
}
