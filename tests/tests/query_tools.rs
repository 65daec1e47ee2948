//! search_instances and the ontology tools through the whole stack against devgraph,
//! asserting on the demo data's actual values; and the schema fallback on a graph that
//! has no ontology.

use kg_e2e::{AppHost, Graph, Stack, app_manifest};
use serde_json::{Value, json};

async fn call(host: &AppHost, tool: &str, args: Value) -> (u16, Value) {
    host.send("POST", &format!("/tools/{tool}"), &args.to_string())
        .await
        .unwrap()
}

fn ids(result: &Value) -> Vec<String> {
    result["data"]["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            m["properties"]["id"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .collect()
}

#[tokio::test]
async fn search_ranks_exact_then_prefix_then_contains() {
    let stack = Stack::start().await.unwrap();
    let host = &stack.host;

    let (status, r) = call(host, "search_instances", json!({"search_term": "PO-0003"})).await;
    assert_eq!(status, 200, "{r}");
    let found = ids(&r);
    assert_eq!(found[0], "PO-0003", "exact first: {found:?}");
    assert_eq!(r["data"]["matches"][0]["match"], "exact");
    assert!(
        found[1..].iter().all(|id| id.starts_with("PO-0003-L")),
        "{found:?}"
    );
    assert!(
        r["data"]["matches"].as_array().unwrap()[1..]
            .iter()
            .all(|m| m["match"] == "prefix")
    );

    // Case-insensitive, any string property; ontology nodes are not instances.
    let (_, r) = call(host, "search_instances", json!({"search_term": "acme"})).await;
    assert_eq!(ids(&r), ["SUP-001"]);
    assert_eq!(
        r["data"]["matches"][0]["matched_properties"],
        json!(["name"])
    );
    assert_eq!(r["graph_data"]["nodes"][0]["caption"], "ACME Industrial");

    let (_, r) = call(
        host,
        "search_instances",
        json!({"search_term": "industrial"}),
    )
    .await;
    assert_eq!(r["data"]["matches"][0]["match"], "contains");

    // A class filter and a limit; more results than the limit are flagged.
    let (_, r) = call(
        host,
        "search_instances",
        json!({"search_term": "part 1", "class_name": "Product", "limit": 3}),
    )
    .await;
    assert_eq!(ids(&r), ["PRD-001", "PRD-010", "PRD-011"], "{r}");
    assert_eq!(r["truncated"], true);
    let truth = stack
        .graph
        .query("MATCH (p:Product) WHERE toLower(p.name) CONTAINS 'part 1' RETURN count(p)")
        .await
        .unwrap();
    let (_, all) = call(
        host,
        "search_instances",
        json!({"search_term": "part 1", "class_name": "Product", "limit": 100}),
    )
    .await;
    assert_eq!(ids(&all).len() as i64, truth[0][0].as_i64().unwrap());
    assert_eq!(all["truncated"], false);

    let (_, none) = call(
        host,
        "search_instances",
        json!({"search_term": "no such thing"}),
    )
    .await;
    assert_eq!(none["data"]["matches"], json!([]));
    assert_eq!(none["graph_data"], Value::Null);
}

#[tokio::test]
async fn search_refuses_bad_arguments_and_unknown_classes() {
    let stack = Stack::start().await.unwrap();
    let host = &stack.host;
    for bad in [
        json!({}),
        json!({"search_term": ""}),
        json!({"search_term": 5}),
        json!({"search_term": "a", "limit": 0}),
        json!({"search_term": "a", "limit": 101}),
        json!({"search_term": "a", "limit": -3}),
        json!({"search_term": "a".repeat(201)}),
        json!({"search_term": "a", "extra": true}),
    ] {
        let (status, e) = call(host, "search_instances", bad.clone()).await;
        assert_eq!(status, 400, "{bad}: {e}");
        assert_eq!(e["error"]["code"], "invalid_argument");
    }
    let (status, e) = call(
        host,
        "search_instances",
        json!({"search_term": "a", "class_name": "PurchaseOrders"}),
    )
    .await;
    assert_eq!(status, 404, "{e}");
    assert_eq!(e["error"]["detail"]["did_you_mean"][0], "PurchaseOrder");
    // Quotes and Cypher in the term are only ever a parameter value.
    let (status, r) = call(
        host,
        "search_instances",
        json!({"search_term": "' OR 1=1 WITH n DETACH DELETE n //"}),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(r["data"]["matches"], json!([]));
    let count = stack
        .graph
        .query("MATCH (n) RETURN count(n)")
        .await
        .unwrap();
    assert_eq!(count[0][0], 565);
}

#[tokio::test]
async fn ontology_tools_read_the_ontology_in_the_graph() {
    let stack = Stack::start().await.unwrap();
    let (status, r) = call(&stack.host, "get_ontology_classes", json!({})).await;
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["data"]["source"], "ontology");
    let classes = r["data"]["classes"].as_array().unwrap();
    let names: Vec<&str> = classes.iter().filter_map(|c| c["name"].as_str()).collect();
    assert_eq!(
        names,
        [
            "Account",
            "Invoice",
            "LineItem",
            "Payment",
            "Product",
            "PurchaseOrder",
            "Supplier"
        ]
    );
    let supplier = classes.iter().find(|c| c["name"] == "Supplier").unwrap();
    assert!(
        supplier["description"]
            .as_str()
            .unwrap()
            .contains("blocked")
    );
    assert!(
        supplier["properties"]
            .as_array()
            .unwrap()
            .contains(&json!({"name": "blocked", "type": "boolean"}))
    );

    let (status, r) = call(&stack.host, "get_ontology_relationships", json!({})).await;
    assert_eq!(status, 200, "{r}");
    let rels = r["data"]["relationships"].as_array().unwrap();
    assert_eq!(rels.len(), 9);
    assert!(rels.contains(&json!({"name": "PLACED_WITH", "source": "PurchaseOrder", "target": "Supplier", "description": "The supplier an order is placed with."})));

    let (status, e) = call(&stack.host, "get_ontology_classes", json!({"x": 1})).await;
    assert_eq!(
        (status, e["error"]["code"].as_str()),
        (400, Some("invalid_argument"))
    );
}

#[tokio::test]
async fn without_an_ontology_the_tools_fall_back_to_the_schema() {
    let graph = Graph::start_empty().await.unwrap();
    graph
        .write("CREATE (:Person {name: 'Ann', age: 31})-[:KNOWS]->(:Person {name: 'Bob'})-[:WORKS_AT]->(:Company {name: 'Initech'})")
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let host = AppHost::start(
        &app_manifest(),
        &dir.path().join("kv.db"),
        &graph.variables(),
    )
    .await
    .unwrap();

    let (status, r) = call(&host, "get_ontology_classes", json!({})).await;
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["data"]["source"], "schema");
    let person = r["data"]["classes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "Person")
        .unwrap()
        .clone();
    let keys: Vec<&str> = person["properties"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["name"].as_str())
        .collect();
    assert_eq!(keys, ["age", "name"]);

    let (status, r) = call(&host, "get_ontology_relationships", json!({})).await;
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["data"]["source"], "schema");
    let rels = r["data"]["relationships"].as_array().unwrap();
    assert!(rels.contains(
        &json!({"name": "KNOWS", "source": "Person", "target": "Person", "description": null})
    ));
    assert!(rels.contains(
        &json!({"name": "WORKS_AT", "source": "Person", "target": "Company", "description": null})
    ));
}

#[tokio::test]
async fn instances_by_class_filter_and_page() {
    let stack = Stack::start().await.unwrap();
    let host = &stack.host;
    let count = |rows: Vec<Value>| rows[0][0].as_i64().unwrap();

    let approved = json!({"class_name": "PurchaseOrder", "filters": [{"property": "status", "value": "approved"}], "limit": 100});
    let (status, r) = call(host, "get_instances_by_class", approved).await;
    assert_eq!(status, 200, "{r}");
    let truth = count(
        stack
            .graph
            .query("MATCH (o:PurchaseOrder {status: 'approved'}) RETURN count(o)")
            .await
            .unwrap(),
    );
    assert_eq!(
        r["data"]["instances"].as_array().unwrap().len() as i64,
        truth
    );
    assert!(
        r["data"]["instances"]
            .as_array()
            .unwrap()
            .iter()
            .all(|i| i["properties"]["status"] == "approved")
    );

    let big = json!({"class_name": "PurchaseOrder", "limit": 100, "filters": [
        {"property": "status", "value": "approved"}, {"property": "amount", "op": "gt", "value": 5000}]});
    let (_, r) = call(host, "get_instances_by_class", big).await;
    let truth = count(
        stack.graph.query("MATCH (o:PurchaseOrder) WHERE o.status = 'approved' AND o.amount > 5000 RETURN count(o)").await.unwrap(),
    );
    assert_eq!(
        r["data"]["instances"].as_array().unwrap().len() as i64,
        truth
    );
    assert!(truth > 0);

    let (_, r) = call(host, "get_instances_by_class", json!({"class_name": "Supplier", "filters": [{"property": "name", "op": "contains", "value": "METAL"}]})).await;
    let found: Vec<&str> = r["data"]["instances"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|i| i["properties"]["id"].as_str())
        .collect();
    assert_eq!(found, ["SUP-007"]);

    // Pages follow the key: disjoint, ordered, and the cursor says when more exist.
    let (_, first) = call(
        host,
        "get_instances_by_class",
        json!({"class_name": "Product", "limit": 30}),
    )
    .await;
    assert_eq!(first["data"]["next"], "PRD-030", "{first}");
    let (_, second) = call(
        host,
        "get_instances_by_class",
        json!({"class_name": "Product", "limit": 30, "after": first["data"]["next"]}),
    )
    .await;
    assert_eq!(first["truncated"], true);
    assert_eq!(second["truncated"], false);
    assert_eq!(second["data"]["next"], Value::Null);
    let ids = |r: &Value| -> Vec<String> {
        r["data"]["instances"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["properties"]["id"].as_str().unwrap().to_string())
            .collect()
    };
    let (a, b) = (ids(&first), ids(&second));
    assert_eq!((a.len(), b.len()), (30, 10));
    assert_eq!(a[0], "PRD-001");
    assert!(a.iter().all(|id| !b.contains(id)));

    for bad in [
        json!({}),
        json!({"class_name": "Product", "limit": 0}),
        json!({"class_name": "Product", "after": [1]}),
        json!({"class_name": "Product", "filters": {"status": "x"}}),
        json!({"class_name": "Product", "filters": [{"property": "x", "op": "regex", "value": ".*"}]}),
    ] {
        let (status, e) = call(host, "get_instances_by_class", bad.clone()).await;
        assert_eq!(status, 400, "{bad}: {e}");
    }
    let (status, e) = call(
        host,
        "get_instances_by_class",
        json!({"class_name": "Products"}),
    )
    .await;
    assert_eq!(status, 404, "{e}");
}

fn neighbor_ids(result: &Value, label: &str) -> Vec<String> {
    let nodes = result["graph_data"]["nodes"].as_array().unwrap();
    let mut ids: Vec<String> = result["data"]["neighbors"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n["labels"][0] == label)
        .filter_map(|n| {
            let node = nodes.iter().find(|g| g["id"] == n["element_id"])?;
            node["properties"]["id"].as_str().map(str::to_string)
        })
        .collect();
    ids.sort();
    ids
}

fn column(rows: Vec<Value>) -> Vec<String> {
    let mut v: Vec<String> = rows
        .iter()
        .map(|r| r[0].as_str().unwrap().to_string())
        .collect();
    v.sort();
    v
}

#[tokio::test]
async fn neighbors_answer_which_suppliers_deliver_parts_of_a_product() {
    let stack = Stack::start().await.unwrap();
    let host = &stack.host;

    let (status, r) = call(
        host,
        "get_instance_neighbors",
        json!({"instance": "PRD-036", "direction": "in", "relationship_types": ["COMPONENT_OF"]}),
    )
    .await;
    assert_eq!(status, 200, "{r}");
    let parts = column(
        stack
            .graph
            .query("MATCH (p:Product)-[:COMPONENT_OF]->(:Product {id: 'PRD-036'}) RETURN p.id")
            .await
            .unwrap(),
    );
    assert_eq!(neighbor_ids(&r, "Product"), parts);
    assert_eq!(
        r["graph_data"]["edges"].as_array().unwrap().len(),
        parts.len()
    );
    assert!(
        r["graph_data"]["edges"]
            .as_array()
            .unwrap()
            .iter()
            .all(|e| e["type"] == "COMPONENT_OF")
    );

    // Two hops, inbound, along SUPPLIES and COMPONENT_OF: the suppliers of its parts.
    let (status, r) = call(
        host,
        "get_instance_neighbors",
        json!({"instance": "Assembly 36", "hops": 2, "direction": "in", "relationship_types": ["COMPONENT_OF", "SUPPLIES"], "limit": 200}),
    )
    .await;
    assert_eq!(status, 200, "{r}");
    let suppliers = column(
        stack
            .graph
            .query("MATCH (s:Supplier)-[:SUPPLIES]->(:Product)-[:COMPONENT_OF]->(:Product {id: 'PRD-036'}) RETURN DISTINCT s.id")
            .await
            .unwrap(),
    );
    assert!(!suppliers.is_empty());
    assert_eq!(neighbor_ids(&r, "Supplier"), suppliers);
    assert!(
        r["data"]["neighbors"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|n| n["labels"][0] == "Supplier")
            .all(|n| n["distance"] == 2)
    );
}

#[tokio::test]
async fn neighbors_refuse_ambiguity_unknowns_and_bad_arguments() {
    let stack = Stack::start().await.unwrap();
    let host = &stack.host;
    stack
        .graph
        .write("CREATE (:Supplier {id: 'SUP-900', name: 'ACME Industrial'})")
        .await
        .unwrap();

    let (status, e) = call(
        host,
        "get_instance_neighbors",
        json!({"instance": "acme industrial"}),
    )
    .await;
    assert_eq!(status, 409, "{e}");
    // Each candidate carries its label, key and caption, so the next call can name it.
    let candidates = e["error"]["detail"]["candidates"].as_array().unwrap();
    let keys: Vec<&str> = candidates
        .iter()
        .filter_map(|c| c["key"]["id"].as_str())
        .collect();
    assert_eq!(keys, ["SUP-001", "SUP-900"]);
    assert!(
        candidates
            .iter()
            .all(|c| c["label"] == "Supplier" && c["caption"] == "ACME Industrial"),
        "{e}"
    );
    // By key, or by the element id a candidate gave, it is unambiguous.
    let (status, _) = call(
        host,
        "get_instance_neighbors",
        json!({"instance": "SUP-001"}),
    )
    .await;
    assert_eq!(status, 200);
    let (status, r) = call(
        host,
        "get_instance_neighbors",
        json!({"instance": candidates[1]["element_id"]}),
    )
    .await;
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["data"]["instance"]["key"]["id"], "SUP-900");

    let (status, e) = call(
        host,
        "get_instance_neighbors",
        json!({"instance": "nobody"}),
    )
    .await;
    assert_eq!(status, 404, "{e}");
    let (status, e) = call(
        host,
        "get_instance_neighbors",
        json!({"instance": "SUP-001", "relationship_types": ["SUPPLY"]}),
    )
    .await;
    assert_eq!(status, 404, "{e}");
    assert_eq!(e["error"]["detail"]["did_you_mean"][0], "SUPPLIES");
    for bad in [
        json!({}),
        json!({"instance": "SUP-001", "hops": 4}),
        json!({"instance": "SUP-001", "hops": 0}),
        json!({"instance": "SUP-001", "direction": "up"}),
        json!({"instance": "SUP-001", "relationship_types": "SUPPLIES"}),
        json!({"instance": "SUP-001", "limit": 201}),
    ] {
        let (status, e) = call(host, "get_instance_neighbors", bad.clone()).await;
        assert_eq!(status, 400, "{bad}: {e}");
    }
}

#[tokio::test]
async fn paths_between_instances() {
    let stack = Stack::start().await.unwrap();
    let host = &stack.host;
    let (status, r) = call(
        host,
        "find_path_between_instances",
        json!({"start": "ACME Industrial", "end": "ACC-MAIN"}),
    )
    .await;
    assert_eq!(status, 200, "{r}");
    let truth = stack
        .graph
        .query("MATCH (a:Supplier {id: 'SUP-001'}), (b:Account {id: 'ACC-MAIN'}) MATCH p = shortestPath((a)-[*..4]-(b)) RETURN length(p) LIMIT 1")
        .await
        .unwrap();
    let path = &r["data"]["paths"][0];
    assert_eq!(path["length"], truth[0][0]);
    assert_eq!(path["length"], 2);
    let steps = path["steps"].as_array().unwrap();
    assert_eq!(steps.first().unwrap()["node"], "ACME Industrial");
    assert_eq!(steps.last().unwrap()["node"], "Main operating account");
    assert_eq!(steps[1]["relationship"], "PLACED_WITH");
    assert_eq!(steps[3]["relationship"], "CHARGED_TO");
    assert_eq!(r["graph_data"]["edges"].as_array().unwrap().len(), 2);

    let (status, r) = call(
        host,
        "find_path_between_instances",
        json!({"start": "SUP-001", "end": "ACC-MAIN", "max_depth": 1}),
    )
    .await;
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["data"]["paths"], json!([]));
    assert!(r["summary"].as_str().unwrap().starts_with("no path"));

    for bad in [
        json!({"start": "SUP-001"}),
        json!({"start": "SUP-001", "end": "ACC-MAIN", "max_depth": 7}),
        json!({"start": "SUP-001", "end": "acme industrial"}),
    ] {
        let (status, e) = call(host, "find_path_between_instances", bad.clone()).await;
        assert_eq!(status, 400, "{bad}: {e}");
    }
    let (status, _) = call(
        host,
        "find_path_between_instances",
        json!({"start": "SUP-001", "end": "nobody"}),
    )
    .await;
    assert_eq!(status, 404);
}
