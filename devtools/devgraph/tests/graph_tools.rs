//! The statements of the index-backed graph tools (kg-graph-tools, and the search and key
//! indexes kg-graph-profile's set-up creates) on devgraph, against what Neo4j Community
//! 5.26.30 answered to the same statements on the same demo dataset (observed 28 Nov 2026:
//! `devtools/neo4j/run.sh --cypher <(devgraph --demo-cypher)`, the statements sent to its
//! Query API). Rows, scores, error codes and messages below are Neo4j's; where Neo4j's
//! answer has no fixed order (equal scores), sets are compared. The node ids of the demo
//! are the same on both (SUP-001 is node 18, PRD-001 node 28).

mod common;

use common::Devgraph;
use serde_json::{Value as Json, json};
use std::collections::BTreeSet;
use std::time::Duration;

impl Devgraph {
    fn request(&self, method: &str, path: &str, body: Option<Json>) -> (u16, Json) {
        let agent = ureq::Agent::new_with_config(
            ureq::Agent::config_builder()
                .http_status_as_error(false)
                .timeout_global(Some(Duration::from_secs(60)))
                .build(),
        );
        let request = ureq::http::Request::builder()
            .method(method)
            .uri(format!("{}{path}", self.base))
            .header("authorization", "Basic bmVvNGo6ZGV2Z3JhcGg=")
            .header("content-type", "application/json")
            .body(body.map(|b| b.to_string()).unwrap_or_default())
            .unwrap();
        let mut response = agent.run(request).unwrap();
        let status = response.status().as_u16();
        let text = response.body_mut().read_to_string().unwrap();
        (status, serde_json::from_str(&text).unwrap_or(Json::Null))
    }

    fn send(&self, statement: &str, parameters: Json, mode: &str) -> (u16, Json) {
        self.request(
            "POST",
            "",
            Some(json!({"statement": statement, "parameters": parameters, "accessMode": mode})),
        )
    }

    /// The rows of a statement that must succeed.
    fn rows(&self, statement: &str, parameters: Json, mode: &str) -> Vec<Json> {
        let (status, body) = self.send(statement, parameters, mode);
        assert_eq!(status, 202, "{statement}: {body}");
        body["data"]["values"].as_array().cloned().unwrap()
    }

    fn fields(&self, statement: &str, parameters: Json) -> Json {
        let (status, body) = self.send(statement, parameters, "READ");
        assert_eq!(status, 202, "{statement}: {body}");
        body["data"]["fields"].clone()
    }

    /// The code and message of a statement that must fail.
    fn error(&self, statement: &str, parameters: Json, mode: &str) -> (u16, String, String) {
        let (status, body) = self.send(statement, parameters, mode);
        let error = &body["errors"][0];
        assert!(error.is_object(), "{statement} should fail: {body}");
        (
            status,
            error["code"].as_str().unwrap().to_string(),
            error["message"].as_str().unwrap().to_string(),
        )
    }
}

const CREATE_SEARCH: &str = "CREATE FULLTEXT INDEX kg_graph_search IF NOT EXISTS FOR (n:`Supplier`|`Product`) ON EACH [n.`id`, n.`name`, n.`country`]";
const SEARCH: &str = "CALL db.index.fulltext.queryNodes($index, $query, {limit: $candidates}) YIELD node, score RETURN node.id, score";

fn search(g: &Devgraph, query: &str, candidates: i64) -> Vec<(String, f64)> {
    g.rows(
        SEARCH,
        json!({"index": "kg_graph_search", "query": query, "candidates": candidates}),
        "READ",
    )
    .iter()
    .map(|r| (r[0].as_str().unwrap().to_string(), r[1].as_f64().unwrap()))
    .collect()
}

fn ids(hits: &[(String, f64)]) -> BTreeSet<String> {
    hits.iter().map(|(id, _)| id.clone()).collect()
}

fn set(items: &[&str]) -> BTreeSet<String> {
    items.iter().map(|s| s.to_string()).collect()
}

fn close(actual: f64, neo4j: f64) -> bool {
    (actual - neo4j).abs() < 1e-3
}

/// Statements 1 and 3: the search index over several labels and properties, created
/// twice, listed, refused where Neo4j refuses it, dropped.
#[test]
fn the_search_index_is_created_listed_and_dropped_as_on_neo4j() {
    let g = Devgraph::start(&["--demo"]);
    assert!(g.rows(CREATE_SEARCH, json!({}), "WRITE").is_empty());
    assert!(g.rows(CREATE_SEARCH, json!({}), "WRITE").is_empty());
    assert_eq!(
        g.rows("SHOW FULLTEXT INDEXES YIELD name, type, entityType, labelsOrTypes, properties, indexProvider, owningConstraint RETURN *", json!({}), "READ"),
        vec![json!(["kg_graph_search", "FULLTEXT", "NODE", ["Supplier", "Product"], ["id", "name", "country"], "fulltext-1.0", null])]
    );
    // What the set-up reads to decide whether the index must be dropped and made again.
    assert_eq!(
        g.rows("SHOW INDEXES YIELD name, labelsOrTypes, properties WHERE name = 'kg_graph_search' RETURN labelsOrTypes, properties", json!({}), "READ"),
        vec![json!([["Supplier", "Product"], ["id", "name", "country"]])]
    );
    let (_, code, message) = g.error(
        &CREATE_SEARCH.replace(" IF NOT EXISTS", ""),
        json!({}),
        "WRITE",
    );
    assert_eq!(
        code,
        "Neo.ClientError.Schema.EquivalentSchemaRuleAlreadyExists"
    );
    assert_eq!(
        message,
        "An equivalent index already exists, 'Index( id=3, name='kg_graph_search', type='FULLTEXT', schema=(:Supplier:Product {id, name, country}), indexProvider='fulltext-1.0' )'."
    );
    let (_, code, message) = g.error(
        "CREATE FULLTEXT INDEX kg_graph_search FOR (n:`Supplier`) ON EACH [n.`id`]",
        json!({}),
        "WRITE",
    );
    assert_eq!(code, "Neo.ClientError.Schema.IndexWithNameAlreadyExists");
    assert_eq!(
        message,
        "There already exists an index called 'kg_graph_search'."
    );
    let (_, code, message) = g.error(
        "CREATE FULLTEXT INDEX other FOR (n:`Supplier`|`Product`) ON EACH [n.`id`, n.`name`, n.`country`]",
        json!({}),
        "WRITE",
    );
    assert_eq!(code, "Neo.ClientError.Schema.IndexAlreadyExists");
    assert_eq!(
        message,
        "There already exists an index (:Supplier:Product {id, name, country})."
    );
    // Another kind of index or a constraint named as it.
    let (_, code, _) = g.error(
        "CREATE INDEX kg_graph_search FOR (n:Supplier) ON (n.rating)",
        json!({}),
        "WRITE",
    );
    assert_eq!(code, "Neo.ClientError.Schema.IndexWithNameAlreadyExists");
    assert!(
        g.rows(
            "CREATE INDEX kg_graph_search IF NOT EXISTS FOR (n:Supplier) ON (n.rating)",
            json!({}),
            "WRITE"
        )
        .is_empty()
    );
    let (_, code, _) = g.error(
        "CREATE CONSTRAINT kg_graph_search IF NOT EXISTS FOR (n:Supplier) REQUIRE n.rating IS UNIQUE",
        json!({}),
        "WRITE",
    );
    assert_eq!(code, "Neo.ClientError.Schema.IndexWithNameAlreadyExists");
    // DDL is a write.
    let (_, code, _) = g.error(
        "CREATE FULLTEXT INDEX ro FOR (n:Supplier) ON EACH [n.name]",
        json!({}),
        "READ",
    );
    assert_eq!(code, "Neo.ClientError.Statement.AccessMode");

    assert!(
        g.rows("DROP INDEX kg_graph_search IF EXISTS", json!({}), "WRITE")
            .is_empty()
    );
    assert!(
        g.rows("DROP INDEX kg_graph_search IF EXISTS", json!({}), "WRITE")
            .is_empty()
    );
    assert!(
        g.rows("SHOW FULLTEXT INDEXES", json!({}), "READ")
            .is_empty()
    );
    // Statement 3: Neo4j's error for a missing index (Neo4j answers it with 202, after the
    // fields: see the README).
    let (_, code, message) = g.error(
        "CALL db.index.fulltext.queryNodes($index, $query, {limit: $candidates}) YIELD node, score RETURN node, score",
        json!({"index": "kg_graph_search", "query": "acme*", "candidates": 500}),
        "READ",
    );
    assert_eq!(code, "Neo.ClientError.Procedure.ProcedureCallFailed");
    assert_eq!(
        message,
        "Failed to invoke procedure `db.index.fulltext.queryNodes`: Caused by: java.lang.IllegalArgumentException: There is no such fulltext schema index: kg_graph_search"
    );
    let (status, code, message) = g.error("DROP INDEX kg_graph_search", json!({}), "WRITE");
    assert_eq!(
        (status, code.as_str(), message.as_str()),
        (
            500,
            "Neo.DatabaseError.Schema.IndexDropFailed",
            "Unable to drop index called `kg_graph_search`. There is no such index."
        )
    );
    // A constraint's index cannot be dropped, even with IF EXISTS.
    g.rows(
        "CREATE CONSTRAINT sup_id FOR (n:Supplier) REQUIRE n.id IS UNIQUE",
        json!({}),
        "WRITE",
    );
    let (status, code, message) = g.error("DROP INDEX sup_id IF EXISTS", json!({}), "WRITE");
    assert_eq!(
        (status, code.as_str(), message.as_str()),
        (
            500,
            "Neo.DatabaseError.Schema.IndexDropFailed",
            "Unable to drop index: Index belongs to constraint: `sup_id`"
        )
    );
}

/// Statement 2: the tools' queries (lower-case prefixes joined by AND), with and without
/// a label filter, and Lucene's other forms, with Neo4j's matches and scores.
#[test]
fn search_queries_match_and_score_as_on_neo4j() {
    let g = Devgraph::start(&["--demo", "--affinity-check", "false"]);
    g.rows(CREATE_SEARCH, json!({}), "WRITE");
    // devgraph's indexes are online at once; a set-up may still wait for them.
    assert!(
        g.rows("CALL db.awaitIndexes(300)", json!({}), "WRITE")
            .is_empty()
    );

    // A prefix scores 1 for each property it matches in; clauses add up.
    assert_eq!(search(&g, "acme*", 500), vec![("SUP-001".to_string(), 1.0)]);
    let hits = search(&g, "part* AND 1*", 500);
    assert_eq!(
        ids(&hits),
        set(&[
            "PRD-001", "PRD-010", "PRD-011", "PRD-012", "PRD-013", "PRD-014", "PRD-015", "PRD-016",
            "PRD-017", "PRD-018", "PRD-019"
        ])
    );
    assert!(hits.iter().all(|(_, s)| *s == 2.0), "{hits:?}");
    let products = g.rows(
        "CALL db.index.fulltext.queryNodes($index, $query, {limit: $candidates}) YIELD node, score WHERE node:`Product` RETURN node.id, score",
        json!({"index": "kg_graph_search", "query": "de* OR part* AND 2*", "candidates": 500}),
        "READ",
    );
    assert_eq!(
        products
            .iter()
            .map(|r| r[0].as_str().unwrap().to_string())
            .collect::<BTreeSet<_>>(),
        set(&[
            "PRD-002", "PRD-020", "PRD-021", "PRD-022", "PRD-023", "PRD-024", "PRD-025", "PRD-026",
            "PRD-027", "PRD-028", "PRD-029"
        ])
    );
    assert!(products.iter().all(|r| r[1] == json!(2.0)));
    // `{limit: n}` caps the rows (Neo4j: 3 of SUP-001…SUP-009, in no fixed order).
    let hits = search(&g, "sup* AND 00*", 3);
    assert_eq!(hits.len(), 3);
    assert!(
        hits.iter()
            .all(|(id, s)| id.starts_with("SUP-00") && *s == 2.0)
    );
    assert!(search(&g, "acme*", 0).is_empty());
    assert_eq!(search(&g, "ACME*", 500), vec![("SUP-001".to_string(), 1.0)]);
    assert_eq!(
        search(&g, "name:acme*", 500),
        vec![("SUP-001".to_string(), 1.0)]
    );
    assert_eq!(
        ids(&search(&g, "de* OR se*", 500)),
        set(&["SUP-001", "SUP-002", "SUP-004", "SUP-009"])
    );
    assert_eq!(ids(&search(&g, "de* NOT delta*", 500)), set(&["SUP-001"]));
    assert_eq!(search(&g, "sup* AND NOT 001*", 500).len(), 9);
    assert_eq!(search(&g, "*cme", 500), vec![("SUP-001".to_string(), 1.0)]);
    assert_eq!(search(&g, "acm?", 500), vec![("SUP-001".to_string(), 1.0)]);
    // A PurchaseOrder is not in this index.
    assert!(search(&g, "po* AND 0003*", 500).is_empty());

    // Words and phrases: Lucene's BM25 (Neo4j's scores, to 1e-3).
    let hits = search(&g, "acme", 1);
    assert!(
        hits[0].0 == "SUP-001" && close(hits[0].1, 1.6094098),
        "{hits:?}"
    );
    let hits = search(&g, "industrial acme part", 5);
    assert!(
        hits[0].0 == "SUP-001" && close(hits[0].1, 3.2188196),
        "{hits:?}"
    );
    assert!(
        hits[1..]
            .iter()
            .all(|(id, s)| id.starts_with("PRD-") && close(*s, 0.16534834))
    );
    let hits = search(&g, "\"part 1\"", 500);
    assert!(
        hits.len() == 1 && hits[0].0 == "PRD-001" && close(hits[0].1, 1.7747581),
        "{hits:?}"
    );
    // `prd-001` is `prd` OR `001`.
    let hits = search(&g, "prd-001", 500);
    assert_eq!(hits.len(), 41);
    assert!(
        hits[0].0 == "PRD-001" && close(hits[0].1, 1.475481),
        "{hits:?}"
    );
    assert!(
        hits[1].0 == "SUP-001" && close(hits[1].1, 1.3706976),
        "{hits:?}"
    );
    assert!(hits[2..].iter().all(|(_, s)| close(*s, 0.104783475)));

    // YIELD as Neo4j takes it.
    assert_eq!(
        g.fields(
            "CALL db.index.fulltext.queryNodes('kg_graph_search', 'acme*')",
            json!({})
        ),
        json!(["node", "score"])
    );
    assert_eq!(
        g.rows("CALL db.index.fulltext.queryNodes('kg_graph_search', 'acme*') YIELD node AS n, score AS s RETURN n.id, s", json!({}), "READ"),
        vec![json!(["SUP-001", 1.0])]
    );
    let node = &g.rows(
        "CALL db.index.fulltext.queryNodes($index, $query, {limit: $candidates}) YIELD node, score RETURN node, score",
        json!({"index": "kg_graph_search", "query": "acme*", "candidates": 10}),
        "READ",
    )[0][0];
    assert_eq!(node["elementId"], "4:devgraph:18");
    assert_eq!(node["labels"], json!(["Supplier"]));
    assert_eq!(node["properties"]["name"], "ACME Industrial");

    // Lucene's parse errors.
    let (_, code, message) = g.error(
        "CALL db.index.fulltext.queryNodes('kg_graph_search', 'AND') YIELD node, score RETURN node",
        json!({}),
        "READ",
    );
    assert_eq!(code, "Neo.ClientError.Procedure.ProcedureCallFailed");
    assert!(
        message.starts_with("Failed to invoke procedure `db.index.fulltext.queryNodes`: Caused by: org.apache.lucene.queryparser.classic.ParseException: Encountered \" <AND> \"AND \"\" at line 1, column 0."),
        "{message}"
    );
    let (_, _, message) = g.error(
        "CALL db.index.fulltext.queryNodes('kg_graph_search', 'acme* AND') YIELD node, score RETURN node",
        json!({}),
        "READ",
    );
    assert!(
        message.contains("ParseException: Encountered \"<EOF>\" at line 1, column 9."),
        "{message}"
    );

    // The index follows writes: strings and lists of strings are indexed, other values
    // are not.
    g.rows(
        "CREATE (:Supplier {id: 42, name: ['Zeta Tools', 'zz top'], country: 'XX'})",
        json!({}),
        "WRITE",
    );
    assert!(search(&g, "42", 500).is_empty());
    let rows = g.rows(
        "CALL db.index.fulltext.queryNodes('kg_graph_search', 'zeta* OR zz') YIELD node, score RETURN node.id, score",
        json!({}),
        "READ",
    );
    assert!(
        rows.len() == 1 && rows[0][0] == 42 && close(rows[0][1].as_f64().unwrap(), 2.163095),
        "{rows:?}"
    );
    // Inside a transaction, the index sees the transaction's own writes (as Neo4j's).
    let (_, begun) = g.request(
        "POST",
        "/tx",
        Some(json!({"statement": "CREATE (:Supplier {id: 'SUP-777', name: 'Quokka Ltd'})"})),
    );
    let tx = begun["transaction"]["id"].as_str().unwrap().to_string();
    let (_, inside) = g.request(
        "POST",
        &format!("/tx/{tx}"),
        Some(json!({"statement": "CALL db.index.fulltext.queryNodes('kg_graph_search', 'quokka*') YIELD node, score RETURN node.id, score"})),
    );
    assert_eq!(
        inside["data"]["values"],
        json!([["SUP-777", 1.0]]),
        "{inside}"
    );
    g.request("DELETE", &format!("/tx/{tx}"), None);
    assert!(search(&g, "quokka*", 500).is_empty());

    // An index over PurchaseOrder finds the tools' example.
    g.rows("DROP INDEX kg_graph_search", json!({}), "WRITE");
    g.rows("CREATE FULLTEXT INDEX kg_graph_search IF NOT EXISTS FOR (n:`PurchaseOrder`|`Supplier`) ON EACH [n.`id`, n.`name`]", json!({}), "WRITE");
    assert_eq!(
        search(&g, "po* AND 0003*", 500),
        vec![("PO-0003".to_string(), 2.0)]
    );
}

/// Statement 4, in READ mode.
#[test]
fn uniqueness_constraints_are_listed_for_the_profile() {
    let g = Devgraph::start(&["--demo"]);
    let statement = "SHOW CONSTRAINTS YIELD type, entityType, labelsOrTypes, properties WHERE entityType = 'NODE' AND type IN ['UNIQUENESS', 'NODE_KEY'] RETURN labelsOrTypes, properties, type";
    assert!(g.rows(statement, json!({}), "READ").is_empty());
    g.rows(
        "CREATE CONSTRAINT sup_id IF NOT EXISTS FOR (n:Supplier) REQUIRE n.id IS UNIQUE",
        json!({}),
        "WRITE",
    );
    assert_eq!(
        g.rows(statement, json!({}), "READ"),
        vec![json!([["Supplier"], ["id"], "UNIQUENESS"])]
    );
}

/// Statements 5 and 6: look-ups by element id (a seek, not a scan), and relationship
/// counts by COUNT subqueries in UNION ALL parts.
#[test]
fn element_ids_find_their_node_and_count_its_relationships() {
    let g = Devgraph::start(&["--demo"]);
    let lookup = "MATCH (n) WHERE elementId(n) = $id RETURN n LIMIT 2";
    let rows = g.rows(lookup, json!({"id": "4:devgraph:18"}), "READ");
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0][0]["elementId"], "4:devgraph:18");
    assert_eq!(rows[0][0]["properties"]["id"], "SUP-001");
    // Neo4j: no rows and no error for an unknown or malformed id, or one of another type.
    for id in [
        json!("abc"),
        json!("4:devgraph:999999"),
        json!("4:00000000-0000-0000-0000-000000000000:18"),
        json!("5:devgraph:18"),
        json!(123),
        json!(null),
    ] {
        assert!(
            g.rows(lookup, json!({ "id": id }), "READ").is_empty(),
            "{id}"
        );
    }
    // A seek by id, not a scan of every node.
    let (_, plan) = g.send(
        &format!("EXPLAIN {lookup}"),
        json!({"id": "4:devgraph:18"}),
        "READ",
    );
    let text = plan["queryPlan"]["arguments"]["string-representation"]
        .as_str()
        .unwrap();
    assert!(text.contains("[seek: id]"), "{text}");
    // elementId() answers the ids the nodes carry, in a column named as written.
    let (_, body) = g.send(
        "MATCH (n:Supplier {id: 'SUP-001'})-[r:SUPPLIES]->(m) RETURN elementId(n), elementId(r) AS r, elementId(m) ORDER BY elementId(m) LIMIT 1",
        json!({}),
        "READ",
    );
    assert_eq!(
        body["data"]["fields"],
        json!(["elementId(n)", "r", "elementId(m)"])
    );
    let row = &body["data"]["values"][0];
    assert_eq!(row[0], "4:devgraph:18");
    assert!(row[1].as_str().unwrap().starts_with("5:devgraph:"));
    let r = row[1].clone();
    assert_eq!(
        g.rows(
            "MATCH ()-[r]->() WHERE elementId(r) = $id RETURN type(r)",
            json!({ "id": r }),
            "READ"
        ),
        vec![json!(["SUPPLIES"])]
    );

    let counts = "MATCH (n) WHERE elementId(n) = $id RETURN 'SUPPLIES' AS type, 'out' AS direction, COUNT { (n)-[:`SUPPLIES`]->() } AS count UNION ALL MATCH (n) WHERE elementId(n) = $id RETURN 'SUPPLIES' AS type, 'in' AS direction, COUNT { (n)<-[:`SUPPLIES`]-() } AS count";
    assert_eq!(
        g.rows(counts, json!({"id": "4:devgraph:18"}), "READ"),
        vec![json!(["SUPPLIES", "out", 3]), json!(["SUPPLIES", "in", 0])]
    );
    assert_eq!(
        g.rows(counts, json!({"id": "4:devgraph:28"}), "READ"),
        vec![json!(["SUPPLIES", "out", 0]), json!(["SUPPLIES", "in", 1])]
    );
    assert!(g.rows(counts, json!({"id": "abc"}), "READ").is_empty());
}

/// Statements 7 and 8: key look-ups and counts across labels in one UNION ALL statement.
#[test]
fn look_ups_and_counts_across_labels_in_one_statement() {
    let g = Devgraph::start(&["--demo"]);
    let lookup = "MATCH (n:`Supplier`) WHERE n.`id` IN $values RETURN n AS node, 'Supplier' AS label, 0 AS how LIMIT 11 UNION ALL MATCH (n:`Product`) WHERE n.`name` = $ref RETURN n AS node, 'Product' AS label, 1 AS how LIMIT 11";
    let rows = g.rows(
        lookup,
        json!({"values": ["SUP-001", 123], "ref": "Part 1"}),
        "READ",
    );
    let found: Vec<(Json, Json, Json)> = rows
        .iter()
        .map(|r| (r[0]["properties"]["id"].clone(), r[1].clone(), r[2].clone()))
        .collect();
    assert_eq!(
        found,
        vec![
            (json!("SUP-001"), json!("Supplier"), json!(0)),
            (json!("PRD-001"), json!("Product"), json!(1))
        ]
    );
    assert!(
        g.rows(
            lookup,
            json!({"values": ["123", 123], "ref": "nothing"}),
            "READ"
        )
        .is_empty()
    );
    // Neo4j answers no row for a label without nodes (a grouping key over no rows).
    let counts = "MATCH (n:`Supplier`) RETURN 'Supplier' AS label, count(n) AS count UNION ALL MATCH (n:`Product`) RETURN 'Product' AS label, count(n) AS count UNION ALL MATCH (n:`Nothing`) RETURN 'Nothing' AS label, count(n) AS count";
    assert_eq!(
        g.rows(counts, json!({}), "READ"),
        vec![json!(["Supplier", 10]), json!(["Product", 40])]
    );
    // A hundred parts, as the tools send for a large profile.
    let labels: Vec<String> = ["Supplier", "Product", "PurchaseOrder"]
        .iter()
        .map(|s| s.to_string())
        .chain((0..97).map(|i| format!("L{i}")))
        .collect();
    let hundred = labels
        .iter()
        .map(|l| format!("MATCH (n:`{l}`) RETURN '{l}' AS label, count(n) AS count"))
        .collect::<Vec<_>>()
        .join(" UNION ALL ");
    assert_eq!(
        g.rows(&hundred, json!({}), "READ"),
        vec![
            json!(["Supplier", 10]),
            json!(["Product", 40]),
            json!(["PurchaseOrder", 96])
        ]
    );
}

/// Statements 9 and 10: the key index, and cursor pages over it.
#[test]
fn key_indexes_and_cursor_pages() {
    let g = Devgraph::start(&["--demo"]);
    let create = "CREATE INDEX kg_key_Supplier_name IF NOT EXISTS FOR (n:`Supplier`) ON (n.`name`)";
    assert!(g.rows(create, json!({}), "WRITE").is_empty());
    assert!(g.rows(create, json!({}), "WRITE").is_empty());
    assert_eq!(
        g.rows(
            "SHOW RANGE INDEXES YIELD name, labelsOrTypes, properties RETURN name, labelsOrTypes, properties",
            json!({}),
            "READ"
        ),
        vec![json!(["kg_key_Supplier_name", ["Supplier"], ["name"]])]
    );
    let next = g.rows(
        "MATCH (n:`PurchaseOrder`) WHERE n.`id` > $after AND n.`status` = $v0 RETURN n ORDER BY n.`id` LIMIT $limit",
        json!({"after": "PO-0010", "v0": "approved", "limit": 3}),
        "READ",
    );
    assert_eq!(
        next.iter()
            .map(|r| r[0]["properties"]["id"].clone())
            .collect::<Vec<_>>(),
        vec![json!("PO-0011"), json!("PO-0012"), json!("PO-0025")]
    );
    let first = g.rows(
        "MATCH (n:`PurchaseOrder`) WHERE n.`id` IS NOT NULL RETURN n ORDER BY n.`id` LIMIT $limit",
        json!({"limit": 3}),
        "READ",
    );
    assert_eq!(
        first
            .iter()
            .map(|r| r[0]["properties"]["id"].clone())
            .collect::<Vec<_>>(),
        vec![json!("PO-0001"), json!("PO-0002"), json!("PO-0003")]
    );
}

/// Statement 11: the bounded scans used when the search index is missing.
#[test]
fn bounded_scans_without_the_search_index() {
    let g = Devgraph::start(&["--demo"]);
    let rows = g.rows(
        "MATCH (n:`Product`) WITH n LIMIT $scan WHERE CASE WHEN n.`name` STARTS WITH '' THEN toLower(n.`name`) END = $lower RETURN n LIMIT 11",
        json!({"scan": 10000, "lower": "part 1"}),
        "READ",
    );
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0][0]["properties"]["id"], "PRD-001");
    let rows = g.rows(
        "MATCH (n) WITH n LIMIT $scan WHERE NOT n:`OntologyClass` AND NOT n:`OntologyRelationship` WITH n, [k IN keys(n) WHERE CASE WHEN n[k] STARTS WITH '' THEN toLower(n[k]) END CONTAINS $term] AS matched WHERE size(matched) > 0 RETURN n, matched LIMIT $limit",
        json!({"scan": 10000, "term": "acme", "limit": 10}),
        "READ",
    );
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0][0]["properties"]["id"], "SUP-001");
    assert_eq!(rows[0][1], json!(["name"]));
}

/// With `--data`, the full-text indexes come back after a restart.
#[test]
fn full_text_indexes_persist_with_the_graph_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("graph.grafeo");
    let file = file.to_str().unwrap();
    {
        let g = Devgraph::start(&["--data", file]);
        g.rows(CREATE_SEARCH, json!({}), "WRITE");
    }
    let g = Devgraph::start(&["--data", file]);
    // (The test kills devgraph, which may lose the last writes: the node is made now.)
    g.rows(
        "CREATE (:Supplier {id: 'SUP-001', name: 'ACME Industrial'})",
        json!({}),
        "WRITE",
    );
    assert_eq!(
        g.rows(
            "SHOW FULLTEXT INDEXES YIELD name, labelsOrTypes RETURN *",
            json!({}),
            "READ"
        ),
        vec![json!(["kg_graph_search", ["Supplier", "Product"]])]
    );
    assert_eq!(search(&g, "acme*", 10), vec![("SUP-001".to_string(), 1.0)]);
}
