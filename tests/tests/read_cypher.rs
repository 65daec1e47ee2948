//! run_read_cypher and describe_class through the whole stack against devgraph, asserting
//! on values read straight from devgraph; devgraph's EXPLAIN answer; the result byte cap;
//! and the per-request deadline.

use kg_e2e::{AppHost, GRAPH_PASSWORD, Graph, Stack, app_manifest};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

async fn call(host: &AppHost, tool: &str, args: Value) -> (u16, Value) {
    host.send("POST", &format!("/tools/{tool}"), &args.to_string())
        .await
        .unwrap()
}

async fn cypher(host: &AppHost, args: Value) -> (u16, Value) {
    call(host, "run_read_cypher", args).await
}

#[tokio::test]
async fn run_read_cypher_answers_reads_with_the_graphs_values() {
    let stack = Stack::start().await.unwrap();
    let host = &stack.host;

    let statement = "MATCH (s:Supplier)-[:SUPPLIES]->(p:Product) RETURN s.id AS supplier, count(p) AS products ORDER BY supplier";
    let (status, r) = cypher(host, json!({"query": statement})).await;
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["data"]["fields"], json!(["supplier", "products"]));
    assert_eq!(
        r["data"]["statement"],
        format!("{statement} LIMIT 101"),
        "the default limit is enforced"
    );
    let truth = stack.graph.query(statement).await.unwrap();
    assert_eq!(r["data"]["rows"], json!(truth));
    assert_eq!(r["data"]["rows"].as_array().unwrap().len(), 10);
    assert_eq!(r["truncated"], false);

    // More rows than the limit: cut, flagged; a smaller LIMIT in the query stays.
    let (_, r) = cypher(
        host,
        json!({"query": "MATCH (p:Product) RETURN p.id AS id ORDER BY id", "limit": 5}),
    )
    .await;
    assert_eq!(
        r["data"]["rows"],
        json!([
            ["PRD-001"],
            ["PRD-002"],
            ["PRD-003"],
            ["PRD-004"],
            ["PRD-005"]
        ])
    );
    assert_eq!(r["truncated"], true);
    let (_, r) = cypher(
        host,
        json!({"query": "MATCH (p:Product) RETURN p.id AS id ORDER BY id LIMIT 3", "limit": 5}),
    )
    .await;
    assert_eq!(r["data"]["rows"].as_array().unwrap().len(), 3);
    assert_eq!(r["truncated"], false);

    // Values as parameters; nodes and relationships come back as a subgraph.
    let (status, r) = cypher(
        host,
        json!({"query": "MATCH (s:Supplier {id: $id})-[r:SUPPLIES]->(p:Product) RETURN s, r, p ORDER BY p.id", "parameters": {"id": "SUP-001"}}),
    )
    .await;
    assert_eq!(status, 200, "{r}");
    let supplied = stack
        .graph
        .query(
            "MATCH (:Supplier {id: 'SUP-001'})-[:SUPPLIES]->(p:Product) RETURN p.id ORDER BY p.id",
        )
        .await
        .unwrap();
    assert_eq!(r["data"]["rows"].as_array().unwrap().len(), supplied.len());
    let graph = &r["graph_data"];
    let captions: Vec<&str> = graph["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|n| n["caption"].as_str())
        .collect();
    assert!(captions.contains(&"ACME Industrial"), "{captions:?}");
    assert_eq!(graph["nodes"].as_array().unwrap().len(), supplied.len() + 1);
    assert_eq!(graph["edges"].as_array().unwrap().len(), supplied.len());
    assert!(
        graph["edges"]
            .as_array()
            .unwrap()
            .iter()
            .all(|e| e["type"] == "SUPPLIES")
    );

    // Allow-listed schema procedures.
    let (status, r) = cypher(
        host,
        json!({"query": "CALL db.labels() YIELD label RETURN label ORDER BY label"}),
    )
    .await;
    assert_eq!(status, 200, "{r}");
    assert!(
        r["data"]["rows"]
            .as_array()
            .unwrap()
            .contains(&json!(["Supplier"]))
    );
}

#[tokio::test]
async fn run_read_cypher_refuses_with_reasons() {
    let stack = Stack::start().await.unwrap();
    let host = &stack.host;
    let (status, e) = cypher(host, json!({"query": "MATCH (n:PurchaseOrders) RETURN n"})).await;
    assert_eq!(status, 404, "{e}");
    assert_eq!(e["error"]["detail"]["did_you_mean"][0], "PurchaseOrder");
    let (status, e) = cypher(host, json!({"query": "MATCH ()-[:SUPPLY]->(p) RETURN p"})).await;
    assert_eq!(status, 404, "{e}");
    assert_eq!(e["error"]["detail"]["did_you_mean"][0], "SUPPLIES");
    let (status, e) = cypher(host, json!({"query": "MATCH (n) DETACH DELETE n"})).await;
    assert_eq!(status, 400, "{e}");
    assert_eq!(e["error"]["code"], "invalid_argument");
    assert!(
        e["error"]["message"].as_str().unwrap().contains("DETACH"),
        "{e}"
    );
    let (status, e) = cypher(
        host,
        json!({"query": "CALL dbms.components() YIELD name RETURN name"}),
    )
    .await;
    assert_eq!(status, 400, "{e}");
    assert!(
        e["error"]["message"]
            .as_str()
            .unwrap()
            .contains("dbms.components")
    );
    // Past the guard, the graph's own parser has the last word.
    let (status, e) = cypher(host, json!({"query": "MATCH (n) WHERE n.x = = 1 RETURN n"})).await;
    assert_eq!(status, 400, "{e}");
    assert!(
        e["error"]["message"]
            .as_str()
            .unwrap()
            .contains("rejected by the graph"),
        "{e}"
    );
}

/// EXPLAIN answers as Neo4j 5.26 does (observed): no query type, a plan whose operators
/// show a write; the guard reads its verdict from them. Nothing runs.
#[tokio::test]
async fn explain_answers_with_a_plan_and_runs_nothing() {
    let stack = Stack::start().await.unwrap();
    let explain = |statement: &str, mode: &str| {
        reqwest::Client::new()
            .post(format!("{}/db/neo4j/query/v2", stack.graph.url))
            .basic_auth("neo4j", Some(GRAPH_PASSWORD))
            .json(&json!({"statement": format!("EXPLAIN {statement}"), "accessMode": mode}))
            .send()
    };
    let read: Value = explain("MATCH (n:Supplier) RETURN n", "READ")
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(read.get("queryType"), None, "{read}");
    assert_eq!(read["data"]["values"], json!([]));
    assert!(
        read["queryPlan"]["operatorType"]
            .as_str()
            .is_some_and(|op| op.starts_with("ProduceResults@")),
        "{read}"
    );
    for mode in ["READ", "WRITE"] {
        let write: Value = explain("CREATE (n:Explained) RETURN n", mode)
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(write.get("queryType"), None, "{write}");
        let child = &write["queryPlan"]["children"][0]["operatorType"];
        assert!(
            child.as_str().is_some_and(|op| op.starts_with("Create@")),
            "{write}"
        );
    }
    let created = stack
        .graph
        .query("MATCH (n:Explained) RETURN count(n)")
        .await
        .unwrap();
    assert_eq!(created[0][0], 0, "EXPLAIN ran nothing");
}

#[tokio::test]
async fn describe_class_reports_what_the_graph_holds() {
    let stack = Stack::start().await.unwrap();
    let host = &stack.host;
    let (status, r) = call(host, "describe_class", json!({"class_name": "Supplier"})).await;
    assert_eq!(status, 200, "{r}");
    let d = &r["data"];
    assert_eq!(d["class"], "Supplier");
    assert!(d["description"].as_str().unwrap().contains("blocked"));
    assert_eq!(d["instance_count"], 10);
    assert!(d.as_object().unwrap().contains_key("available_actions"));
    // Merged in by the dispatcher from the action catalog.
    let actions: Vec<&str> = d["available_actions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap())
        .collect();
    assert_eq!(actions, ["blockSupplier", "unblockSupplier"]);
    let blocked = d["properties"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "blocked")
        .unwrap();
    assert_eq!(blocked["declared_type"], "boolean");
    assert_eq!(blocked["observed_types"], json!(["boolean"]));
    assert_eq!(blocked["present_in_sample"], 10);
    let rating = d["properties"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "rating")
        .unwrap();
    assert_eq!(rating["observed_types"], json!(["integer"]));

    let supplies = stack
        .graph
        .query("MATCH (:Supplier)-[:SUPPLIES]->(:Product) RETURN count(*)")
        .await
        .unwrap();
    let placed = stack
        .graph
        .query("MATCH (:PurchaseOrder)-[:PLACED_WITH]->(:Supplier) RETURN count(*)")
        .await
        .unwrap();
    let rels = d["relationships"].as_array().unwrap();
    assert!(
        rels.contains(&json!({"direction": "out", "type": "SUPPLIES", "other_class": "Product", "count": supplies[0][0], "description": "The supplier delivers this product."})),
        "{rels:?}"
    );
    assert!(
        rels.contains(&json!({"direction": "in", "type": "PLACED_WITH", "other_class": "PurchaseOrder", "count": placed[0][0], "description": "The supplier an order is placed with."})),
        "{rels:?}"
    );
    let samples = d["samples"].as_array().unwrap();
    assert_eq!(samples.len(), 3);
    assert_eq!(samples[0]["properties"]["id"], "SUP-001");
    assert_eq!(r["graph_data"]["nodes"].as_array().unwrap().len(), 3);

    let (status, r) = call(
        host,
        "describe_class",
        json!({"class_name": "Product", "sample_size": 0}),
    )
    .await;
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["data"]["instance_count"], 40);
    assert_eq!(r["data"]["samples"], json!([]));
    let (status, e) = call(host, "describe_class", json!({"class_name": "Suppliers"})).await;
    assert_eq!(status, 404, "{e}");
    assert_eq!(e["error"]["detail"]["did_you_mean"][0], "Supplier");
}

#[tokio::test]
async fn results_are_capped_at_256_kib() {
    let stack = Stack::start().await.unwrap();
    let (status, r) = cypher(
        &stack.host,
        json!({"query": "UNWIND range(1, 1000) AS i RETURN i, $pad AS pad", "parameters": {"pad": "x".repeat(1000)}, "limit": 1000}),
    )
    .await;
    assert_eq!(
        status,
        200,
        "{}",
        r.to_string().chars().take(500).collect::<String>()
    );
    assert_eq!(r["truncated"], true);
    let rows = r["data"]["rows"].as_array().unwrap();
    assert!(rows.len() > 100 && rows.len() < 1000, "{}", rows.len());
    assert_eq!(rows[0][0], 1);
    assert!(r.to_string().len() <= 256 * 1024);
    assert!(r["summary"].as_str().unwrap().contains("cut"));
    assert_eq!(r["data"]["truncation"]["rows"]["kept"], rows.len());
    assert_eq!(r["data"]["truncation"]["rows"]["total"], 1000);
}

/// Issue #14: `data` and `graph_data` together fit in the cap (paths bring both).
#[tokio::test]
async fn the_whole_answer_with_its_graph_is_capped() {
    let stack = Stack::start().await.unwrap();
    let (status, body) = stack
        .host
        .send(
            "POST",
            "/tools/run_read_cypher",
            &json!({"query": "MATCH p=(a)-[*1..3]-(b) RETURN p", "limit": 1000}).to_string(),
        )
        .await
        .unwrap();
    assert_eq!(
        status,
        200,
        "{}",
        body.to_string().chars().take(500).collect::<String>()
    );
    let size = body.to_string().len();
    println!("answer: {size} bytes");
    assert!(size <= 256 * 1024, "{size}");
    assert_eq!(body["truncated"], true);
    let t = &body["data"]["truncation"];
    let nodes = body["graph_data"]["nodes"].as_array().map_or(0, Vec::len);
    let rows = body["data"]["rows"].as_array().unwrap().len();
    assert_eq!(t["rows"]["kept"], rows, "{t}");
    if let Some(total) = t["nodes"]["total"].as_u64() {
        assert_eq!(t["nodes"]["kept"], nodes);
        assert!(nodes as u64 <= total);
    }
    assert!(rows > 0 && nodes > 0, "both parts keep something: {t}");
}

/// Issue #14: the resource bombs of the hostile-input run are refused before the graph
/// sees them, naming the construct; bounded ones still run.
#[tokio::test]
async fn resource_bombs_are_refused_naming_the_construct() {
    let stack = Stack::start().await.unwrap();
    let host = &stack.host;
    for (query, construct) in [
        ("RETURN size(range(1, 100000000)) AS s", "range"),
        (
            "RETURN reduce(s = 0, x IN range(1, 100000000) | s + x) AS s",
            "range",
        ),
        ("RETURN range(1, 20000000) AS r", "range"),
        (
            "MATCH p=(a)-[*]-(b) RETURN count(p)",
            "variable_length_relationship",
        ),
        (
            "MATCH p=(a)-[*]-(b) RETURN p",
            "variable_length_relationship",
        ),
        ("MATCH (a)-[:SUPPLIES]->{1,}(b) RETURN b", "quantified_path"),
    ] {
        let started = Instant::now();
        let (status, e) = cypher(host, json!({"query": query})).await;
        let took = started.elapsed();
        println!("{query}: {status} in {took:?}");
        assert_eq!(status, 400, "{query}: {e}");
        assert_eq!(e["error"]["code"], "query_too_expensive", "{query}: {e}");
        assert_eq!(e["error"]["detail"]["construct"], construct, "{query}: {e}");
        assert!(took < Duration::from_secs(2), "{query}: {took:?}");
    }
    let (status, r) = cypher(host, json!({"query": "RETURN range(1, 10) AS r"})).await;
    assert_eq!(
        (status, &r["data"]["rows"]),
        (200, &json!([[[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]]]))
    );
    let (status, r) = cypher(
        host,
        json!({"query": "MATCH p=(a:Supplier {id: 'SUP-001'})-[*1..3]-(b) RETURN count(p) AS n"}),
    )
    .await;
    assert_eq!(status, 200, "{r}");
    assert!(r["data"]["rows"][0][0].as_u64().unwrap() > 0);
}

/// Issue #14: what passes the guard but is still too big for the graph (its memory
/// budget, its path limit) is the request's fault: 400 `query_too_expensive`, not 5xx.
#[tokio::test]
async fn the_graphs_memory_limit_is_a_client_error() {
    // A long time limit, so a loaded machine cannot hit it before the memory limit.
    let stack = Stack::start_with(&[("neo4j_query_timeout_ms", "60000".to_string())])
        .await
        .unwrap();
    let mut queries = vec!["MATCH (a), (b), (c) WITH collect(a) AS x RETURN size(x) AS n"];
    // Counting paths takes memory on devgraph (Grafeo builds them); Neo4j streams them in
    // constant memory, so there it is only a matter of time (the next test's limit).
    if kg_e2e::GraphKind::from_env() == kg_e2e::GraphKind::Devgraph {
        queries.insert(0, "MATCH p=(a)-[*1..10]-(b) RETURN count(p) AS n");
    } else {
        kg_e2e::not_on_neo4j(
            "not asked `MATCH p=(a)-[*1..10]-(b) RETURN count(p)`: Neo4j streams it in constant memory, so only its time is limited (the next test)",
        );
    }
    for query in queries {
        let started = Instant::now();
        let (status, e) = cypher(&stack.host, json!({"query": query})).await;
        println!("{query}: {status} in {:?}", started.elapsed());
        assert_eq!(status, 400, "{query}: {e}");
        assert_eq!(e["error"]["code"], "query_too_expensive", "{query}: {e}");
        assert_eq!(e["error"]["detail"]["limit"], "memory", "{query}: {e}");
    }
    // The graph is still there and answers.
    let (status, _) = cypher(
        &stack.host,
        json!({"query": "MATCH (s:Supplier) RETURN count(s) AS n"}),
    )
    .await;
    assert_eq!(status, 200);
}

/// Issue #14: every read carries `maxExecutionTime` (three seconds under the deadline,
/// at least one): the graph stops a slow statement itself, and the tool says it was too
/// expensive (400) instead of waiting for its own deadline (504).
#[tokio::test]
async fn the_graph_stops_a_slow_read_at_its_time_limit() {
    let stack = Stack::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut variables = stack.graph.variables();
    variables.push(("neo4j_query_timeout_ms", "4000".to_string()));
    let host = AppHost::start(&app_manifest(), &dir.path().join("kv.db"), &variables)
        .await
        .unwrap();
    let started = Instant::now();
    let (status, e) = cypher(
        &host,
        json!({"query": "MATCH (a), (b), (c) RETURN count(*) AS n"}),
    )
    .await;
    let took = started.elapsed();
    println!("stopped by the graph after {took:?}");
    assert_eq!(status, 400, "{e}");
    assert_eq!(e["error"]["code"], "query_too_expensive", "{e}");
    assert_eq!(e["error"]["detail"]["limit"], "time", "{e}");
    // The limit is 1 s (4 s less 3); devgraph stops at it, Neo4j up to its 2 s check
    // interval later (2.7–3.2 s measured for a 2 s limit); before the tool's 4 s deadline.
    assert!(
        took >= Duration::from_millis(900) && took < Duration::from_millis(4000),
        "{took:?}"
    );
}

/// Issue #14: parameters nested past the limit are the caller's mistake.
#[tokio::test]
async fn deeply_nested_parameters_are_invalid_parameters() {
    let stack = Stack::start().await.unwrap();
    for levels in [40, 64, 100] {
        let deep = (0..levels).fold(json!(1), |inner, _| json!({"a": inner}));
        let (status, e) = cypher(
            &stack.host,
            json!({"query": "RETURN $p AS p", "parameters": {"p": deep}}),
        )
        .await;
        assert_eq!(status, 400, "{levels}: {e}");
        assert!(e["error"]["code"].is_string(), "{levels}: {e}");
        if levels <= 100 {
            assert_eq!(e["error"]["code"], "invalid_parameters", "{levels}: {e}");
        }
    }
    let ok = (0..10).fold(json!(1), |inner, _| json!([inner]));
    let (status, r) = cypher(
        &stack.host,
        json!({"query": "RETURN $p AS p", "parameters": {"p": ok}}),
    )
    .await;
    assert_eq!(status, 200, "{r}");
}

/// Issue #14: `PROFILE <read>` runs with its measured plan; the schema procedures on the
/// allow-list answer with Neo4j's columns.
#[tokio::test]
async fn profile_and_schema_procedures_work() {
    let stack = Stack::start().await.unwrap();
    let host = &stack.host;
    let (status, r) = cypher(
        host,
        json!({"query": "PROFILE MATCH (s:Supplier) RETURN s.id AS id ORDER BY id", "limit": 3}),
    )
    .await;
    assert_eq!(status, 200, "{r}");
    assert_eq!(
        r["data"]["rows"],
        json!([["SUP-001"], ["SUP-002"], ["SUP-003"]])
    );
    assert!(
        r["data"]["statement"]
            .as_str()
            .unwrap()
            .starts_with("PROFILE MATCH")
    );
    assert_eq!(
        r["data"]["profile"]["records"], 4,
        "LIMIT 4 = 3 + the one that says more exist"
    );
    let (status, e) = cypher(
        host,
        json!({"query": "PROFILE MATCH (n) SET n.x = 1 RETURN n"}),
    )
    .await;
    assert_eq!(status, 400, "{e}");

    let (status, r) = cypher(
        host,
        json!({"query": "CALL db.schema.visualization() YIELD nodes, relationships RETURN nodes, relationships"}),
    )
    .await;
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["data"]["fields"], json!(["nodes", "relationships"]));
    let captions: Vec<&str> = r["graph_data"]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|n| n["labels"][0].as_str())
        .collect();
    assert!(captions.contains(&"Supplier"), "{captions:?}");
    assert!(!r["graph_data"]["edges"].as_array().unwrap().is_empty());
    let (status, r) = cypher(
        host,
        json!({"query": "CALL db.schema.nodeTypeProperties() YIELD nodeType, propertyName, propertyTypes, mandatory WHERE nodeType = ':`Supplier`' AND propertyName = 'name' RETURN nodeType, propertyName, propertyTypes, mandatory"}),
    )
    .await;
    assert_eq!(status, 200, "{r}");
    assert_eq!(
        r["data"]["rows"],
        json!([[":`Supplier`", "name", ["String"], true]])
    );
    let (status, r) = cypher(
        host,
        json!({"query": "CALL db.schema.relTypeProperties() YIELD relType, propertyName RETURN relType, propertyName"}),
    )
    .await;
    assert_eq!(status, 200, "{r}");
    assert!(
        r["data"]["rows"]
            .as_array()
            .unwrap()
            .contains(&json!([":`COMPONENT_OF`", "quantity"]))
    );
}

#[tokio::test]
async fn a_slow_query_meets_the_deadline() {
    let stack = Stack::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut variables = stack.graph.variables();
    variables.push(("neo4j_query_timeout_ms", "300".to_string()));
    let host = AppHost::start(&app_manifest(), &dir.path().join("kv.db"), &variables)
        .await
        .unwrap();
    let slow = "MATCH (a:LineItem), (b:LineItem), (c:LineItem) RETURN count(*) AS n";
    let started = Instant::now();
    let (status, e) = cypher(&host, json!({"query": slow})).await;
    let took = started.elapsed();
    assert_eq!(status, 504, "{e}");
    assert_eq!(e["error"]["code"], "timeout");
    assert!(took < Duration::from_secs(3), "{took:?}");
    // Quick queries are unaffected.
    let (status, r) = call(
        &host,
        "get_node_statistics",
        json!({"label": "Supplier", "sample_size": 0}),
    )
    .await;
    assert_eq!(status, 200, "{r}");
}

#[tokio::test]
async fn describe_class_without_an_ontology_reads_the_data() {
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
    let (status, r) = call(&host, "describe_class", json!({"class_name": "Person"})).await;
    assert_eq!(status, 200, "{r}");
    let d = &r["data"];
    assert_eq!(d["description"], Value::Null);
    assert_eq!(d["instance_count"], 2);
    assert_eq!(
        d["properties"],
        json!([
            {"name": "age", "declared_type": null, "observed_types": ["integer"], "present_in_sample": 1},
            {"name": "name", "declared_type": null, "observed_types": ["string"], "present_in_sample": 2}
        ])
    );
    let rels = d["relationships"].as_array().unwrap();
    assert!(
        rels.contains(
            &json!({"direction": "out", "type": "KNOWS", "other_class": "Person", "count": 1})
        ),
        "{rels:?}"
    );
    assert!(
        rels.contains(
            &json!({"direction": "in", "type": "KNOWS", "other_class": "Person", "count": 1})
        ),
        "{rels:?}"
    );
    assert!(
        rels.contains(
            &json!({"direction": "out", "type": "WORKS_AT", "other_class": "Company", "count": 1})
        ),
        "{rels:?}"
    );
    assert_eq!(rels.len(), 3);
}
