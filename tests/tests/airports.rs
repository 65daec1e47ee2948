//! The graph tools on a graph nobody here designed (issue #47): the world's airports from
//! PyPI's `airportsdata` (tests/src/airports.rs), keyed by the graph's own uniqueness
//! constraints (one composite), with no `id` property and no ontology nodes, and the
//! declared profile tests/data/airports/graph-profile.toml mounted at /catalog. Through
//! the HTTP API with an admin key, an MCP client and a scripted agent turn, every tool
//! answers with the true data, and an ambiguous name (twelve cities called Springfield)
//! is a 409 whose candidates the next call can name.
//!
//! Each test loads a graph of its own (a few seconds), so one wrong answer fails one test
//! and the others still say what works.

use kg_e2e::airports::{self, CATALOG};
use kg_e2e::llm_stub::{ScriptedLlm, call, text};
use kg_e2e::{AppHost, Graph, Stack, auth, mcp, workspace};
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, BTreeSet};

async fn stack() -> Stack {
    airports::stack(&[])
        .await
        .expect("the airports graph and the application")
        .0
}

async fn tool(host: &AppHost, name: &str, arguments: Value) -> (u16, Value) {
    host.send("POST", &format!("/tools/{name}"), &arguments.to_string())
        .await
        .unwrap()
}

/// A tool's answer that must be a 200.
async fn ok(host: &AppHost, name: &str, arguments: Value) -> Value {
    let (status, answer) = tool(host, name, arguments.clone()).await;
    assert_eq!(status, 200, "{name} {arguments}: {answer}");
    answer
}

/// The single column of a Cypher answer's rows, as strings.
async fn column(graph: &Graph, statement: &str) -> Vec<String> {
    graph
        .query(statement)
        .await
        .unwrap()
        .iter()
        .map(|row| match &row[0] {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .collect()
}

fn strings(values: &Value) -> Vec<String> {
    values
        .as_array()
        .unwrap_or_else(|| panic!("not an array: {values}"))
        .iter()
        .map(|v| v.as_str().unwrap_or_else(|| panic!("{v}")).to_string())
        .collect()
}

/// A City's key as the tools give it.
fn city_key(country: &str, subd: &str, name: &str) -> Value {
    json!({"country": country, "subd": subd, "name": name})
}

/// The profile file as kg-agent's own parser reads it: it parses, declares the four labels
/// and no key (every key must come from the graph's constraints).
#[test]
fn the_declared_profile_parses_and_leaves_keys_to_the_graph() {
    let text = std::fs::read_to_string(workspace().join(CATALOG).join("graph-profile.toml"))
        .expect("tests/data/airports/graph-profile.toml");
    let declared = kg_graph_tools::profile::Declared::parse(&text).unwrap();
    assert_eq!(
        declared.labels.keys().collect::<Vec<_>>(),
        ["Airport", "City", "Country", "MetroArea"]
    );
    for (label, entry) in &declared.labels {
        assert!(entry.key.is_empty(), "{label} declares a key");
        assert!(entry.description.is_some(), "{label} has no description");
    }
    assert_eq!(declared.labels["Airport"].text, ["name", "iata", "icao"]);
}

/// The subset holds what the other tests rely on, so a new `airportsdata` (or a wrong
/// subset) fails here first, saying which.
#[tokio::test]
async fn the_subset_keeps_the_ambiguities_of_a_real_graph() {
    let data = airports::dataset().await.unwrap();
    let springfields: BTreeSet<&str> = data
        .cities
        .iter()
        .filter(|c| c.name == "Springfield")
        .filter_map(|c| c.subd.as_deref())
        .collect();
    assert_eq!(springfields.len(), 12, "{springfields:?}");
    let mut names: BTreeMap<&str, usize> = BTreeMap::new();
    for a in &data.airports {
        *names.entry(&a.name).or_default() += 1;
    }
    assert_eq!(names["Springfield Municipal Airport"], 3);
    assert!(data.airports.len() > 7000 && data.cities.len() > 6000);
    // Four labels, three relationship types (their counts are checked by every load).
    let (nodes, relationships) = data.expected();
    assert_eq!(nodes.len(), 4);
    assert_eq!(relationships.len(), 3);
}

/// The nine tools, described by key, caption and element id (not by an
/// `id` property this graph does not have); the mounted catalog and profile are the ones
/// in use; set-up creates the search index from the profile.
#[tokio::test]
async fn the_tools_are_listed_and_set_up_makes_the_search_index_from_the_profile() {
    let stack = stack().await;
    let host = &stack.host;
    let (status, listed) = host.get("/tools").await.unwrap();
    assert_eq!(status, 200, "{listed}");
    let tools = listed["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
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
    for t in tools {
        let text = t.to_string();
        // What the descriptions said while every instance was addressed by its `id`.
        for id_only in ["by id or name", "instance's id", "name, id or"] {
            assert!(
                !text.contains(id_only),
                "{}: `{id_only}` in {text}",
                t["name"]
            );
        }
    }
    for (name, parameters) in [
        ("get_instance_neighbors", &["instance"][..]),
        ("find_path_between_instances", &["start", "end"][..]),
    ] {
        let t = tools.iter().find(|t| t["name"] == name).unwrap();
        let description = t["description"].as_str().unwrap().to_lowercase();
        for word in ["key", "caption", "element_id"] {
            assert!(description.contains(word), "{name}: {description}");
        }
        for parameter in parameters {
            let text = t["parameters"]["properties"][parameter]["description"]
                .as_str()
                .unwrap()
                .to_lowercase();
            for word in ["key", "caption", "element_id"] {
                assert!(text.contains(word), "{name}.{parameter}: {text}");
            }
        }
    }

    // The mounted files are the ones read: an empty action catalog, the airports' profile
    // with every declared label in the graph (no warning).
    let (_, health) = host.get("/health").await.unwrap();
    let check = |component: &str, name: &str| -> Value {
        health["components"]
            .as_array()
            .and_then(|all| all.iter().find(|c| c["name"] == component))
            .and_then(|c| c["checks"].as_array())
            .and_then(|checks| checks.iter().find(|k| k["name"] == name))
            .cloned()
            .unwrap_or_else(|| panic!("no {component} check `{name}` in {health}"))
    };
    let catalog = check("action-executor", "catalog");
    assert_eq!(catalog["ok"], true, "{catalog}");
    assert!(
        catalog["detail"]
            .as_str()
            .unwrap()
            .starts_with("0 actions on 0 entity types, from /catalog/actions.toml"),
        "{catalog}"
    );
    let profile = check("query-tools", "graph profile");
    assert_eq!(profile["ok"], true, "{profile}");
    assert_eq!(
        profile["detail"],
        "4 labels declared, from /catalog/graph-profile.toml"
    );

    let (status, setup) = host.send("POST", "/actions/setup", "{}").await.unwrap();
    assert_eq!(status, 200, "{setup}");
    let indexes = stack
        .graph
        .query("SHOW INDEXES YIELD name, type, labelsOrTypes, properties WHERE name = 'kg_graph_search' RETURN type, labelsOrTypes, properties")
        .await
        .unwrap();
    assert_eq!(indexes.len(), 1, "{setup}");
    assert_eq!(indexes[0][0], "FULLTEXT");
    let labels: BTreeSet<String> = strings(&indexes[0][1]).into_iter().collect();
    let properties: BTreeSet<String> = strings(&indexes[0][2]).into_iter().collect();
    // Every profiled label's text properties: the declared ones, and Country's key. (The
    // profile also has what set-up's own constraints key, ActionLog and ActionApproval,
    // so the index may cover them too.)
    for label in ["Airport", "City", "Country", "MetroArea"] {
        assert!(labels.contains(label), "{label} not in {labels:?}");
    }
    for property in ["code", "iata", "icao", "iso", "name"] {
        assert!(
            properties.contains(property),
            "{property} not in {properties:?}"
        );
    }
    eprintln!("airports: kg_graph_search covers {labels:?}, properties {properties:?}");
    // Setting up again is harmless.
    let (status, again) = host.send("POST", "/actions/setup", "{}").await.unwrap();
    assert_eq!(status, 200, "{again}");
}

/// Node statistics are the graph's true counts; the ontology tools, with no
/// ontology nodes, describe the schema.
#[tokio::test]
async fn statistics_and_the_ontology_tools_describe_the_graph_as_it_is() {
    let stack = stack().await;
    let (host, graph) = (&stack.host, &stack.graph);
    let stats = ok(host, "get_node_statistics", json!({})).await;
    let truth = graph
        .query("MATCH (n) UNWIND labels(n) AS label RETURN label, count(*) ORDER BY label")
        .await
        .unwrap();
    let counted: Vec<(String, i64)> = stats["data"]["labels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            (
                l["label"].as_str().unwrap().to_string(),
                l["count"].as_i64().unwrap(),
            )
        })
        .collect();
    let truth: Vec<(String, i64)> = truth
        .iter()
        .map(|r| (r[0].as_str().unwrap().to_string(), r[1].as_i64().unwrap()))
        .collect();
    assert_eq!(counted, truth);
    let total = graph.query("MATCH (n) RETURN count(n)").await.unwrap()[0][0].clone();
    assert_eq!(stats["data"]["total_nodes"], total);

    let classes = ok(host, "get_ontology_classes", json!({})).await;
    assert_eq!(classes["data"]["source"], "schema", "{classes}");
    let names: Vec<&str> = classes["data"]["classes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["Airport", "City", "Country", "MetroArea"]);
    let relationships = ok(host, "get_ontology_relationships", json!({})).await;
    assert_eq!(relationships["data"]["source"], "schema", "{relationships}");
    let mut seen: Vec<(String, String, String)> = relationships["data"]["relationships"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let text = |f: &str| r[f].as_str().unwrap_or_default().to_string();
            (text("name"), text("source"), text("target"))
        })
        .collect();
    seen.sort();
    let expected: Vec<(String, String, String)> = [
        ("IN_COUNTRY", "City", "Country"),
        ("PART_OF", "Airport", "MetroArea"),
        ("SERVES", "Airport", "City"),
    ]
    .iter()
    .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
    .collect();
    assert_eq!(seen, expected, "{relationships}");
}

/// describe_class on the label with the composite key.
#[tokio::test]
async fn describe_class_city_gives_its_properties_relationships_and_count() {
    let stack = stack().await;
    let (host, graph) = (&stack.host, &stack.graph);
    let city = ok(
        host,
        "describe_class",
        json!({"class_name": "City", "sample_size": 3}),
    )
    .await;
    let data = &city["data"];
    assert_eq!(data["class"], "City");
    let count = graph.query("MATCH (c:City) RETURN count(c)").await.unwrap()[0][0].clone();
    assert_eq!(data["instance_count"], count);
    let properties: BTreeSet<&str> = data["properties"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(properties, BTreeSet::from(["country", "name", "subd"]));
    let relationships: BTreeSet<(String, String, String)> = data["relationships"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let text = |f: &str| r[f].as_str().unwrap_or_default().to_string();
            (text("type"), text("direction"), text("other_class"))
        })
        .collect();
    assert_eq!(
        relationships,
        BTreeSet::from([
            ("IN_COUNTRY".into(), "out".into(), "Country".into()),
            ("SERVES".into(), "in".into(), "Airport".into()),
        ]),
        "{city}"
    );
    let samples = data["samples"].as_array().unwrap();
    assert_eq!(samples.len(), 3, "{city}");
    for sample in samples {
        assert_eq!(sample["caption"], sample["properties"]["name"], "{sample}");
    }
}

/// The profile's descriptions are "for the LLM" (docs/your-graph.md: the tools learn each
/// label's description from the profile); with no ontology nodes, the class tools are
/// where the model reads a class's description.
#[tokio::test]
async fn the_class_tools_give_the_profiles_descriptions() {
    let stack = stack().await;
    let host = &stack.host;
    let text =
        std::fs::read_to_string(workspace().join(CATALOG).join("graph-profile.toml")).unwrap();
    let declared = kg_graph_tools::profile::Declared::parse(&text).unwrap();
    let city = ok(host, "describe_class", json!({"class_name": "City"})).await;
    assert_eq!(
        city["data"]["description"].as_str(),
        declared.labels["City"].description.as_deref(),
        "describe_class City: {}",
        city["data"]
    );
    let classes = ok(host, "get_ontology_classes", json!({})).await;
    for class in classes["data"]["classes"].as_array().unwrap() {
        let label = class["name"].as_str().unwrap();
        assert_eq!(
            class["description"].as_str(),
            declared.labels[label].description.as_deref(),
            "get_ontology_classes: {class}"
        );
    }
}

/// Search, before set-up (a bounded scan, which says so) and after (the
/// full-text index over the profile's text properties): Springfield's cities first,
/// exact, then the airports whose names start with or contain it, each with its label,
/// key and caption.
#[tokio::test]
async fn search_finds_every_springfield_with_its_label_key_and_caption() {
    let stack = stack().await;
    let (host, graph) = (&stack.host, &stack.graph);
    let before = ok(
        host,
        "search_instances",
        json!({"search_term": "springfield", "limit": 50}),
    )
    .await;
    assert_eq!(
        before["data"]["index"]["missing"], "kg_graph_search",
        "{before}"
    );
    let (status, setup) = host.send("POST", "/actions/setup", "{}").await.unwrap();
    assert_eq!(status, 200, "{setup}");

    let after = ok(
        host,
        "search_instances",
        json!({"search_term": "springfield", "limit": 50}),
    )
    .await;
    assert!(after["data"].get("index").is_none(), "{after}");
    let matches = after["data"]["matches"].as_array().unwrap();
    // The truth: every node whose text properties (the profile's) contain the term.
    // Cities too: besides the twelve Springfields, "Springfield/Chicopee" and
    // "Westfield/Springfield" (Massachusetts).
    let cities = column(
        graph,
        "MATCH (c:City) WHERE toLower(c.name) CONTAINS 'springfield' RETURN elementId(c)",
    )
    .await;
    let airports = column(
        graph,
        "MATCH (a:Airport) WHERE toLower(a.name) CONTAINS 'springfield' RETURN elementId(a)",
    )
    .await;
    assert_eq!(cities.len(), 14);
    let found: BTreeSet<&str> = matches
        .iter()
        .map(|m| m["element_id"].as_str().unwrap())
        .collect();
    let expected: BTreeSet<&str> = cities.iter().chain(&airports).map(String::as_str).collect();
    assert_eq!(found, expected, "{after}");
    assert_eq!(after["truncated"], false);
    // Exact (the twelve cities), then prefix, then contains.
    let ranks: Vec<&str> = matches
        .iter()
        .map(|m| m["match"].as_str().unwrap())
        .collect();
    assert!(ranks[..12].iter().all(|r| *r == "exact"), "{ranks:?}");
    assert!(
        ranks.windows(2).all(|w| {
            let order = |r: &str| ["exact", "prefix", "contains"].iter().position(|x| *x == r);
            order(w[0]) <= order(w[1])
        }),
        "{ranks:?}"
    );
    for m in matches {
        for field in [
            "element_id",
            "labels",
            "label",
            "key",
            "caption",
            "match",
            "matched_properties",
            "properties",
        ] {
            assert!(m.get(field).is_some(), "no {field} in {m}");
        }
        let properties = &m["properties"];
        match m["label"].as_str().unwrap() {
            "City" => {
                assert_eq!(m["labels"], json!(["City"]));
                let name = properties["name"].as_str().unwrap();
                assert_eq!(
                    m["key"],
                    city_key(
                        properties["country"].as_str().unwrap(),
                        properties["subd"].as_str().unwrap(),
                        name
                    ),
                    "{m}"
                );
                assert_eq!(m["caption"], name);
                assert_eq!(m["match"] == "exact", name == "Springfield", "{m}");
                assert_eq!(m["matched_properties"], json!(["name"]));
            }
            "Airport" => {
                assert_eq!(m["key"], json!({"icao": properties["icao"]}), "{m}");
                assert_eq!(m["caption"], properties["name"], "{m}");
                assert_eq!(m["matched_properties"], json!(["name"]));
            }
            other => panic!("a {other} matched: {m}"),
        }
    }

    // An IATA code is searched too (a text property, though not a key).
    let sfo = ok(host, "search_instances", json!({"search_term": "SFO"})).await;
    let first = &sfo["data"]["matches"][0];
    assert_eq!(first["key"], json!({"icao": "KSFO"}), "{sfo}");
    assert_eq!(first["match"], "exact");
    // Its ICAO code, KSFO, contains the term too.
    assert_eq!(first["matched_properties"], json!(["iata", "icao"]));
}

/// Pages of airports in key (icao) order, each page continuing after the
/// previous one's `next`.
#[tokio::test]
async fn airports_are_paged_in_icao_order_after_next() {
    let stack = stack().await;
    let (host, graph) = (&stack.host, &stack.graph);
    let truth = column(
        graph,
        "MATCH (a:Airport) RETURN a.icao ORDER BY a.icao LIMIT 50",
    )
    .await;
    let page = |answer: &Value| -> Vec<String> {
        answer["data"]["instances"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| {
                assert_eq!(i["key"], json!({"icao": i["properties"]["icao"]}), "{i}");
                assert_eq!(i["caption"], i["properties"]["name"], "{i}");
                assert!(i["element_id"].is_string(), "{i}");
                i["properties"]["icao"].as_str().unwrap().to_string()
            })
            .collect()
    };
    let first = ok(
        host,
        "get_instances_by_class",
        json!({"class_name": "Airport", "limit": 25}),
    )
    .await;
    assert_eq!(page(&first), truth[..25]);
    assert_eq!(first["data"]["next"], truth[24]);
    assert_eq!(first["truncated"], true);
    let second = ok(
        host,
        "get_instances_by_class",
        json!({"class_name": "Airport", "limit": 25, "after": first["data"]["next"]}),
    )
    .await;
    assert_eq!(page(&second), truth[25..]);
    assert_eq!(second["data"]["next"], truth[49]);
}

/// An airport by its key (an ICAO code), by its caption in another case, and by
/// its IATA code (not a key: reported, not required).
#[tokio::test]
async fn an_airport_is_reached_by_its_icao_code_and_its_name() {
    let stack = stack().await;
    let (host, graph) = (&stack.host, &stack.graph);
    let element_id = column(
        graph,
        "MATCH (a:Airport {icao: 'KSFO'}) RETURN elementId(a)",
    )
    .await
    .remove(0);
    let sfo = ok(
        host,
        "get_instance_neighbors",
        json!({"instance": "KSFO", "hops": 2}),
    )
    .await;
    let data = &sfo["data"];
    assert_eq!(
        data["instance"],
        json!({"element_id": element_id, "label": "Airport", "key": {"icao": "KSFO"},
               "caption": "San Francisco International Airport"})
    );
    assert_eq!(data["degree"], json!({"SERVES": 1}), "{data}");
    let truth: BTreeSet<String> = column(
        graph,
        "MATCH (:Airport {icao: 'KSFO'})-[*1..2]-(m) RETURN DISTINCT elementId(m)",
    )
    .await
    .into_iter()
    .collect();
    let neighbors = data["neighbors"].as_array().unwrap();
    let found: BTreeSet<String> = neighbors
        .iter()
        .map(|n| n["element_id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(found, truth, "{data}");
    let san_francisco = neighbors
        .iter()
        .find(|n| n["label"] == "City")
        .unwrap_or_else(|| panic!("no City in {data}"));
    assert_eq!(
        san_francisco["key"],
        city_key("US", "California", "San Francisco")
    );
    assert_eq!(san_francisco["labels"], json!(["City"]));
    assert_eq!(san_francisco["distance"], 1);
    let us = neighbors
        .iter()
        .find(|n| n["label"] == "Country")
        .unwrap_or_else(|| panic!("no Country in {data}"));
    assert_eq!(us["key"], json!({"iso": "US"}));
    assert_eq!(us["distance"], 2);

    // The caption in any case.
    let by_name = ok(
        host,
        "get_instance_neighbors",
        json!({"instance": "san francisco international airport"}),
    )
    .await;
    assert_eq!(by_name["data"]["instance"]["element_id"], element_id);

    // The IATA code is a text property, not a key: whatever the tool makes of it is
    // reported; it must not be a server error or another airport.
    let (status, by_iata) = tool(host, "get_instance_neighbors", json!({"instance": "SFO"})).await;
    eprintln!("airports: get_instance_neighbors {{\"instance\": \"SFO\"}} → {status} {by_iata}");
    match status {
        200 => assert_eq!(by_iata["data"]["instance"]["key"], json!({"icao": "KSFO"})),
        404 | 409 => assert!(by_iata["error"]["message"].is_string(), "{by_iata}"),
        other => panic!("{other}: {by_iata}"),
    }
}

/// The contract of get_instance_neighbors (docs/your-graph.md, issue #47): every
/// neighbour carries element_id, labels, label, key, caption and distance, whatever its
/// label; here a City (whose key holds its caption) and a Country (no caption declared).
#[tokio::test]
async fn every_neighbour_carries_the_fields_of_the_contract() {
    let stack = stack().await;
    let answer = ok(
        &stack.host,
        "get_instance_neighbors",
        json!({"instance": "KSFO", "hops": 2}),
    )
    .await;
    for n in answer["data"]["neighbors"].as_array().unwrap() {
        for field in [
            "element_id",
            "labels",
            "label",
            "key",
            "caption",
            "distance",
        ] {
            assert!(
                n.get(field).is_some(),
                "get_instance_neighbors KSFO: neighbour without `{field}`: {n}"
            );
        }
    }
}

/// A path between two airports of one metropolitan area (London's Heathrow and
/// Gatwick), by key and by caption; and run_read_cypher on the graph's own shape.
#[tokio::test]
async fn two_london_airports_are_connected_and_cypher_reads_the_metro_area() {
    let stack = stack().await;
    let (host, graph) = (&stack.host, &stack.graph);
    let path = ok(
        host,
        "find_path_between_instances",
        json!({"start": "EGLL", "end": "EGKK"}),
    )
    .await;
    let data = &path["data"];
    assert_eq!(data["start"]["key"], json!({"icao": "EGLL"}), "{data}");
    assert_eq!(data["start"]["caption"], "London Heathrow Airport");
    assert_eq!(data["end"]["key"], json!({"icao": "EGKK"}));
    assert_eq!(data["end"]["label"], "Airport");
    let length = graph
        .query("MATCH p = shortestPath((:Airport {icao: 'EGLL'})-[*..4]-(:Airport {icao: 'EGKK'})) RETURN length(p)")
        .await
        .unwrap()[0][0]
        .clone();
    assert_eq!(length, 2);
    let paths = data["paths"].as_array().unwrap();
    assert!(!paths.is_empty(), "{data}");
    for p in paths {
        assert_eq!(p["length"], length, "{p}");
        let steps = p["steps"].as_array().unwrap();
        assert_eq!(steps.len(), 5, "{p}");
        assert_eq!(steps[0]["node"], "London Heathrow Airport");
        assert_eq!(steps[4]["node"], "London Gatwick Airport");
        // Through the City both serve or the metropolitan area both are part of.
        assert_eq!(steps[2]["node"], "London", "{p}");
    }
    // The same two by caption, with their class.
    let by_name = ok(
        host,
        "find_path_between_instances",
        json!({"start": "London Heathrow Airport", "start_class": "Airport",
               "end": "london gatwick airport", "end_class": "Airport"}),
    )
    .await;
    assert_eq!(by_name["data"]["start"], data["start"]);
    assert_eq!(by_name["data"]["end"], data["end"]);

    let cypher = ok(
        host,
        "run_read_cypher",
        json!({"query": "MATCH (a:Airport)-[:PART_OF]->(:MetroArea {code: 'LON'}) RETURN a.iata AS iata ORDER BY iata"}),
    )
    .await;
    let rows: Vec<Value> = cypher["data"]["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| match r {
            Value::Object(o) => o["iata"].clone(),
            Value::Array(a) => a[0].clone(),
            other => other.clone(),
        })
        .collect();
    assert_eq!(
        rows,
        ["LCY", "LGW", "LHR", "LTN", "STN"].map(Value::from),
        "{cypher}"
    );
    // Still read-only on this graph.
    let (status, refused) = tool(
        host,
        "run_read_cypher",
        json!({"query": "MATCH (a:Airport {icao: 'EGLL'}) SET a.name = 'x' RETURN a"}),
    )
    .await;
    assert!((400..500).contains(&status), "{status} {refused}");
}

/// The candidates of an ambiguous reference, checked against the contract: each has
/// element_id, label, labels, key and caption.
fn candidates(answer: &Value) -> Vec<Value> {
    let candidates = answer["error"]["detail"]["candidates"]
        .as_array()
        .unwrap_or_else(|| panic!("no candidates in {answer}"))
        .clone();
    for c in &candidates {
        for field in ["element_id", "label", "labels", "key", "caption"] {
            assert!(c.get(field).is_some(), "no {field} in {c}");
        }
    }
    candidates
}

/// "Springfield" names twelve cities: a 409 with candidates, each a City with its
/// composite key; a candidate's element id, or its key object, then answers, and its
/// neighbours are that Springfield's airports. Airports sharing a name are ambiguous the same way.
#[tokio::test]
async fn springfield_is_ambiguous_until_one_is_named_by_its_element_id() {
    let stack = stack().await;
    let (host, graph) = (&stack.host, &stack.graph);
    let (status, answer) = tool(
        host,
        "get_instance_neighbors",
        json!({"instance": "Springfield"}),
    )
    .await;
    assert_eq!(status, 409, "{answer}");
    assert_eq!(answer["error"]["code"], "conflict", "{answer}");
    let listed = candidates(&answer);
    let states: BTreeSet<String> =
        column(graph, "MATCH (c:City {name: 'Springfield'}) RETURN c.subd")
            .await
            .into_iter()
            .collect();
    assert_eq!(states.len(), 12);
    assert!(listed.len() >= 2, "{answer}");
    let mut seen = BTreeSet::new();
    for c in &listed {
        assert_eq!(c["label"], "City", "{c}");
        assert_eq!(c["labels"], json!(["City"]));
        assert_eq!(c["caption"], "Springfield");
        let subd = c["key"]["subd"].as_str().unwrap_or_else(|| panic!("{c}"));
        assert_eq!(c["key"], city_key("US", subd, "Springfield"));
        assert!(states.contains(subd), "{c}");
        assert!(seen.insert(subd.to_string()), "listed twice: {c}");
    }
    eprintln!(
        "airports: \"Springfield\" → 409 listing {} of {} cities: {}",
        listed.len(),
        states.len(),
        answer["error"]["message"]
    );

    // Each listed Springfield by its element id: that city, with its own airports.
    for c in &listed {
        let element_id = c["element_id"].as_str().unwrap();
        let chosen = ok(
            host,
            "get_instance_neighbors",
            json!({"instance": element_id}),
        )
        .await;
        let data = &chosen["data"];
        assert_eq!(data["instance"]["element_id"], element_id);
        assert_eq!(data["instance"]["key"], c["key"]);
        assert_eq!(data["instance"]["label"], "City");
        let airports: BTreeSet<String> = data["neighbors"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|n| n["label"] == "Airport")
            .map(|n| n["key"]["icao"].as_str().unwrap().to_string())
            .collect();
        let truth: BTreeSet<String> = column(
            graph,
            &format!(
                "MATCH (a:Airport)-[:SERVES]->(c:City {{country: 'US', subd: '{}', name: 'Springfield'}}) RETURN a.icao",
                c["key"]["subd"].as_str().unwrap()
            ),
        )
        .await
        .into_iter()
        .collect();
        assert!(!truth.is_empty());
        assert_eq!(airports, truth, "{data}");
        assert_eq!(data["degree"]["SERVES"], truth.len(), "{data}");
        assert_eq!(data["degree"]["IN_COUNTRY"], 1, "{data}");

        // Its composite key, as the candidate gave it (JSON text), names the same city;
        // so does a path from it to its country, by the country's key.
        let by_key = ok(
            host,
            "get_instance_neighbors",
            json!({"instance": c["key"].to_string(), "limit": 1}),
        )
        .await;
        assert_eq!(
            by_key["data"]["instance"]["element_id"], element_id,
            "{by_key}"
        );
        let path = ok(
            host,
            "find_path_between_instances",
            json!({"start": c["key"].to_string(), "end": "US", "end_class": "Country", "max_depth": 1}),
        )
        .await;
        assert_eq!(path["data"]["start"]["element_id"], element_id, "{path}");
        assert_eq!(path["data"]["paths"][0]["length"], 1, "{path}");
    }
    // A key object no class is keyed by is not found (not taken for a caption).
    let (status, answer) = tool(
        host,
        "get_instance_neighbors",
        json!({"instance": json!({"country": "US", "name": "Springfield"}).to_string()}),
    )
    .await;
    assert_eq!(status, 404, "{answer}");

    // Three airports are called "Springfield Municipal Airport": one by its key, or with
    // the class, or its element id.
    let (status, answer) = tool(
        host,
        "get_instance_neighbors",
        json!({"instance": "Springfield Municipal Airport"}),
    )
    .await;
    assert_eq!(status, 409, "{answer}");
    let icaos: BTreeSet<String> = candidates(&answer)
        .iter()
        .map(|c| {
            assert_eq!(c["label"], "Airport", "{c}");
            assert_eq!(c["caption"], "Springfield Municipal Airport");
            c["key"]["icao"].as_str().unwrap().to_string()
        })
        .collect();
    assert_eq!(
        icaos,
        ["K8V7", "KD42", "KY03"].map(String::from).into(),
        "{answer}"
    );
    let one = ok(
        host,
        "get_instance_neighbors",
        json!({"instance": "KD42", "class_name": "Airport"}),
    )
    .await;
    assert_eq!(
        one["data"]["instance"]["caption"],
        "Springfield Municipal Airport"
    );
    let city = &one["data"]["neighbors"][0];
    assert_eq!(
        city["key"],
        city_key("US", "Minnesota", "Springfield"),
        "{one}"
    );
}

/// No key value is shared across labels in this data (ICAO codes have four
/// characters, metropolitan area codes three, countries two), but a caption is: Dubai is
/// a City and a MetroArea. The class decides, and a metro area's code is its key.
#[tokio::test]
async fn a_name_shared_by_a_city_and_a_metro_area_is_decided_by_the_class() {
    let stack = stack().await;
    let (host, graph) = (&stack.host, &stack.graph);
    let clashes = graph
        .query("MATCH (m:MetroArea) MATCH (a:Airport) WHERE a.icao = m.code RETURN count(*)")
        .await
        .unwrap();
    assert_eq!(clashes[0][0], 0);

    let (status, answer) = tool(host, "get_instance_neighbors", json!({"instance": "Dubai"})).await;
    assert_eq!(status, 409, "{answer}");
    let labels: BTreeSet<String> = candidates(&answer)
        .iter()
        .map(|c| {
            assert_eq!(c["caption"], "Dubai", "{c}");
            c["label"].as_str().unwrap().to_string()
        })
        .collect();
    assert_eq!(labels, ["City", "MetroArea"].map(String::from).into());

    let metro = ok(
        host,
        "get_instance_neighbors",
        json!({"instance": "Dubai", "class_name": "MetroArea"}),
    )
    .await;
    assert_eq!(metro["data"]["instance"]["key"], json!({"code": "DXB"}));
    let airports: BTreeSet<&str> = metro["data"]["neighbors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["key"]["icao"].as_str().unwrap())
        .collect();
    assert_eq!(airports, BTreeSet::from(["OMDB", "OMDW"]), "{metro}");
    let city = ok(
        host,
        "get_instance_neighbors",
        json!({"instance": "Dubai", "class_name": "City"}),
    )
    .await;
    assert_eq!(
        city["data"]["instance"]["key"],
        city_key("AE", "Dubai", "Dubai")
    );

    // "DXB" is the metro area's key and Dubai International's IATA code (not a key): the
    // key decides. Reported, as it is what a user asking for the airport meets.
    let dxb = ok(host, "get_instance_neighbors", json!({"instance": "DXB"})).await;
    eprintln!(
        "airports: get_instance_neighbors {{\"instance\": \"DXB\"}} → {}",
        dxb["data"]["instance"]
    );
    assert_eq!(dxb["data"]["instance"]["label"], "MetroArea");
}

/// An MCP client (the official SDK) lists the tools and searches the graph.
#[tokio::test]
async fn an_mcp_client_searches_the_airports() {
    let stack = stack().await;
    let (status, setup) = stack
        .host
        .send("POST", "/actions/setup", "{}")
        .await
        .unwrap();
    assert_eq!(status, 200, "{setup}");
    let session = mcp::session(
        &stack.host,
        auth::ADMIN,
        &json!([
            {"op": "list_tools"},
            {"op": "call", "name": "search_instances", "arguments": {"search_term": "springfield", "class_name": "Airport"}},
        ]),
    )
    .await
    .unwrap();
    let results = session["results"].as_array().unwrap();
    let names: Vec<&str> = results[0]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("{session}"))
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"search_instances"), "{names:?}");
    assert!(names.contains(&"get_instance_neighbors"), "{names:?}");
    let search = &results[1];
    assert_eq!(search["isError"], false, "{search}");
    let matches = search["structured"]["data"]["matches"].as_array().unwrap();
    let truth = column(
        &stack.graph,
        "MATCH (a:Airport) WHERE toLower(a.name) CONTAINS 'springfield' RETURN a.icao",
    )
    .await;
    assert_eq!(matches.len(), truth.len().min(10), "{search}");
    for m in matches {
        assert_eq!(m["label"], "Airport", "{m}");
        assert!(
            truth.contains(&m["key"]["icao"].as_str().unwrap().to_string()),
            "{m}"
        );
    }
}

/// The text of the tool result answering `call_id` among an LLM request's messages.
fn tool_result(request: &Value, call_id: &str) -> String {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool" && m["tool_call_id"] == call_id)
        .and_then(|m| m["content"].as_str())
        .unwrap_or_else(|| panic!("no result for {call_id} in {request}"))
        .to_string()
}

/// An agent turn meets the ambiguity as a model would: it asks for "Springfield",
/// gets the candidates, names one by its element id and reads that city's airports.
#[tokio::test]
async fn an_agent_turn_resolves_springfield_through_the_candidates() {
    let llm = ScriptedLlm::start().await;
    let (stack, _) = airports::stack(&llm.variables()).await.unwrap();
    let (host, graph) = (&stack.host, &stack.graph);
    // The script is written before the turn, so the candidate its second call names is
    // taken from the same call made here first (the same statement on the same graph):
    // Springfield, Illinois when listed, else the first.
    let (status, direct) = tool(
        host,
        "get_instance_neighbors",
        json!({"instance": "Springfield"}),
    )
    .await;
    assert_eq!(status, 409, "{direct}");
    let listed = candidates(&direct);
    let chosen = listed
        .iter()
        .find(|c| c["key"]["subd"] == "Illinois")
        .unwrap_or(&listed[0])
        .clone();
    let element_id = chosen["element_id"].as_str().unwrap().to_string();
    let airports: BTreeMap<String, String> = graph
        .query(&format!(
            "MATCH (a:Airport)-[:SERVES]->(c:City) WHERE elementId(c) = '{element_id}' RETURN a.icao, a.name"
        ))
        .await
        .unwrap()
        .iter()
        .map(|r| (r[0].as_str().unwrap().into(), r[1].as_str().unwrap().into()))
        .collect();
    assert!(!airports.is_empty());
    let named = airports.values().cloned().collect::<Vec<_>>().join(", ");
    let answer_text = format!(
        "Springfield, {} is served by {named}.",
        chosen["key"]["subd"].as_str().unwrap()
    );
    llm.then([
        call("get_instance_neighbors", json!({"instance": "Springfield"})),
        call("get_instance_neighbors", json!({"instance": element_id})),
        text(&answer_text),
        text(&answer_text),
    ]);
    let (status, answer) = host
        .send(
            "POST",
            "/chat",
            &json!({"message": "Which airports serve Springfield?", "routing_mode": "rule"})
                .to_string(),
        )
        .await
        .unwrap();
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["route"]["intent"], "query", "{answer}");
    assert_eq!(answer["answer"], answer_text, "{answer}");
    let requests = llm.requests();
    assert_eq!(requests.len(), 4, "{requests:?}");
    // The second call's result, as the model read it: that Springfield and its airports,
    // by key and caption.
    let second: Value = serde_json::from_str(&tool_result(&requests[2], "call-2-0"))
        .unwrap_or_else(|e| panic!("the second tool result is not JSON: {e}"));
    assert_eq!(second["instance"]["element_id"], element_id, "{second}");
    assert_eq!(second["instance"]["key"], chosen["key"]);
    let served: BTreeMap<String, String> = second["neighbors"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n["label"] == "Airport")
        .map(|n| {
            (
                n["key"]["icao"].as_str().unwrap().into(),
                n["caption"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert_eq!(served, airports, "{second}");

    // The first call's result, as the model read it: the ambiguity with its candidates,
    // the one named next among them (the message alone leaves a model nothing to name).
    let first = tool_result(&requests[1], "call-1-0");
    assert!(first.contains("Springfield"), "{first}");
    let first: Value = serde_json::from_str(&first).unwrap();
    // The toolbox gives the model the message followed by the error's detail as JSON.
    let error = first["error"].as_str().unwrap_or_default();
    let detail: Value = error
        .find('{')
        .and_then(|at| serde_json::from_str(&error[at..]).ok())
        .unwrap_or(Value::Null);
    let seen = detail["candidates"]
        .as_array()
        .unwrap_or_else(|| {
            panic!("the model got no candidates from the 409 of get_instance_neighbors \"Springfield\": {first}")
        });
    assert_eq!(seen, &listed, "{first}");
    assert!(seen.iter().any(|c| c["element_id"] == element_id.as_str()));
}

/// Every property on the graph is one the loader wrote: no `id` anywhere (what kg-agent
/// used to assume), no ontology nodes.
#[tokio::test]
async fn the_graph_has_no_id_property_and_no_ontology() {
    let graph = Graph::start_empty().await.unwrap();
    airports::load(&graph).await.unwrap();
    let keys: BTreeSet<String> = column(&graph, "MATCH (n) UNWIND keys(n) AS k RETURN DISTINCT k")
        .await
        .into_iter()
        .collect();
    let expected: BTreeSet<String> = [
        "code",
        "country",
        "elevation",
        "iata",
        "icao",
        "iso",
        "lat",
        "lon",
        "name",
        "subd",
        "tz",
    ]
    .map(String::from)
    .into();
    assert_eq!(keys, expected);
    let labels = column(
        &graph,
        "MATCH (n) UNWIND labels(n) AS l RETURN DISTINCT l ORDER BY l",
    )
    .await;
    assert_eq!(labels, ["Airport", "City", "Country", "MetroArea"]);
    let constraints: Map<String, Value> = graph
        .query("SHOW CONSTRAINTS YIELD labelsOrTypes, properties RETURN labelsOrTypes, properties")
        .await
        .unwrap()
        .iter()
        .map(|r| (r[0][0].as_str().unwrap().to_string(), r[1].clone()))
        .collect();
    assert_eq!(
        Value::Object(constraints),
        json!({"Airport": ["icao"], "City": ["country", "subd", "name"], "Country": ["iso"], "MetroArea": ["code"]})
    );
}
