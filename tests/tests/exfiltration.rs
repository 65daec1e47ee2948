//! What may leave the graph (issue #48): on the company graph of tests/src/hr.rs, under the
//! visibility policy of tests/data/hr/graph-profile.toml, each role tries to read what it
//! may not through every graph tool over the HTTP API, through MCP, through the agent (a
//! scripted model that asks for it by every tool) and through the read-only Cypher with a
//! corpus of evasions. Passing means no hidden value in any response body, model request,
//! log line or span, and no answer that changes when only hidden values change.
//!
//! Each test prints its counts (`exfiltration: <route> <role>: N attempts, L leaks`) for
//! docs/security.md.

use kg_e2e::hr::{self, EMPLOYEES, Reader, leaks};
use kg_e2e::llm_stub::{Reply, ScriptedLlm, text};
use kg_e2e::{AppHost, GraphKind, auth, mcp};
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// The roles tried, with their keys and who they are as readers.
const ROLES: [(&str, &str, Reader); 4] = [
    ("viewer", auth::VIEWER, Reader::Person),
    ("operator", auth::OPERATOR, Reader::Person),
    ("approver", auth::APPROVER, Reader::Person),
    ("admin", auth::ADMIN, Reader::Admin),
];

/// Graph tool calls aimed at what the policy hides: every tool, with the hidden label, the
/// hidden type, filters on hidden properties and search terms that are hidden values.
fn tool_attempts() -> Vec<(&'static str, Value)> {
    let (ada, _, _, salary, national_id, _) = EMPLOYEES[0];
    vec![
        ("get_node_statistics", json!({})),
        ("get_node_statistics", json!({"sample_size": 10})),
        (
            "get_node_statistics",
            json!({"label": "Employee", "sample_size": 10}),
        ),
        (
            "get_node_statistics",
            json!({"label": "Review", "sample_size": 10}),
        ),
        ("search_instances", json!({"search_term": national_id})),
        (
            "search_instances",
            json!({"search_term": salary.to_string()}),
        ),
        ("search_instances", json!({"search_term": "REVIEW-SECRET"})),
        ("search_instances", json!({"search_term": "Hometown"})),
        (
            "search_instances",
            json!({"search_term": "Ada", "class_name": "Employee"}),
        ),
        (
            "search_instances",
            json!({"search_term": "R-0", "class_name": "Review"}),
        ),
        (
            "get_instances_by_class",
            json!({"class_name": "Employee", "limit": 100}),
        ),
        ("get_instances_by_class", json!({"class_name": "Review"})),
        (
            "get_instances_by_class",
            json!({"class_name": "Employee", "filters": [{"property": "salary", "op": "gt", "value": 8000000}]}),
        ),
        (
            "get_instances_by_class",
            json!({"class_name": "Employee", "filters": [{"property": "national_id", "op": "starts_with", "value": "NID-7Q2X-000"}]}),
        ),
        ("get_instance_neighbors", json!({"instance": ada})),
        (
            "get_instance_neighbors",
            json!({"instance": "E-06", "hops": 2}),
        ),
        (
            "get_instance_neighbors",
            json!({"instance": "E-03", "relationship_types": ["MENTORS"]}),
        ),
        (
            "get_instance_neighbors",
            json!({"instance": "D-ENG", "hops": 3}),
        ),
        ("get_instance_neighbors", json!({"instance": "R-0"})),
        (
            "find_path_between_instances",
            json!({"start": "E-01", "end": "E-06"}),
        ),
        (
            "find_path_between_instances",
            json!({"start": "E-01", "end": "R-0"}),
        ),
        (
            "describe_class",
            json!({"class_name": "Employee", "sample_size": 10}),
        ),
        ("describe_class", json!({"class_name": "Review"})),
        (
            "describe_class",
            json!({"class_name": "Department", "sample_size": 10}),
        ),
        ("get_ontology_classes", json!({})),
        ("get_ontology_relationships", json!({})),
    ]
}

/// Read-only Cypher written to get around the guard: aliases, quoting, escapes, dynamic
/// keys, whole nodes and paths, one-bit oracles, ordering oracles, subqueries, unions,
/// existential subqueries and procedures.
const EVASIONS: [&str; 44] = [
    "MATCH (e:Employee) RETURN e",
    "MATCH (e:Employee) RETURN collect(e) AS all",
    "MATCH p = (e:Employee)-[*1..2]-(m) RETURN p",
    "MATCH (e:Employee)-[w:WORKS_IN]->(d) RETURN e, w, d",
    "MATCH (n) RETURN n",
    "MATCH (n)-[r]-(m) RETURN r",
    "MATCH (e:Employee) RETURN e.salary",
    "MATCH (e:Employee) RETURN e.`salary` AS pay",
    "MATCH (e:Employee) RETURN e.national_id",
    "MATCH (e:Employee) RETURN e{.name, .national_id}",
    "MATCH (e:Employee) RETURN e{.*}",
    "MATCH (e:Employee) RETURN properties(e)",
    "MATCH (e:Employee) RETURN keys(e)",
    "MATCH (e:Employee) UNWIND keys(e) AS k RETURN k, e[k]",
    "MATCH (e:Employee) RETURN e['national_id']",
    "MATCH (e:Employee) RETURN e['national' + '_id']",
    "MATCH (e:Employee) RETURN e[$k]",
    "MATCH (e:Employee) WITH e, 'salary' AS k RETURN e[k]",
    "MATCH (e:Employee) RETURN e.`national\\u005fid`",
    "MATCH (e:Employee) WHERE e.salary > 8000000 RETURN e.name",
    "MATCH (e:Employee) WHERE e.national_id STARTS WITH 'NID-7Q2X-0001' RETURN count(*)",
    "MATCH (e:Employee) RETURN e.name ORDER BY e.salary DESC",
    "MATCH (e:Employee) RETURN e.name, CASE WHEN e.salary > 8000000 THEN 1 ELSE 0 END AS rich",
    "MATCH (e:Employee) RETURN sum(e.salary) AS payroll",
    "MATCH (e:Employee) RETURN [x IN [e] | x.national_id]",
    "MATCH (e:Employee) RETURN [(e)-[w:WORKS_IN]->() | w.bonus]",
    "MATCH (e:Employee) CALL (e) { RETURN e.salary AS s } RETURN s",
    "MATCH (e:Employee) RETURN e.name AS x UNION MATCH (e:Employee) RETURN e.national_id AS x",
    "MATCH (e:Employee) WHERE EXISTS { MATCH (e) WHERE e.salary > 9000000 } RETURN e.name",
    "MATCH (e:Employee {national_id: 'NID-7Q2X-0001'}) RETURN e.name",
    "MATCH (e:Employee) RETURN e.name AS salary",
    "MATCH (r:Review) RETURN r",
    "MATCH (r:`Review`) RETURN r.text",
    "MATCH (n) WHERE n:Review RETURN n.text",
    "MATCH (n) WHERE n.text STARTS WITH 'REVIEW' RETURN n.id",
    "MATCH (n)-[:ABOUT]->(e) RETURN n",
    "MATCH (a)-[m:MENTORS]->(b) RETURN a.name, b.name",
    "MATCH (a)-[m]->(b) WHERE type(m) = 'MENTORS' RETURN a.name",
    "MATCH (n) RETURN labels(n), count(*)",
    "MATCH ()-[w:WORKS_IN]->() RETURN w.bonus",
    "MATCH ()-[w:WORKS_IN]->() RETURN w",
    "CALL db.propertyKeys() YIELD propertyKey RETURN propertyKey",
    "CALL db.labels() YIELD label RETURN label",
    "MATCH (e:Employee) RETURN apoc.map.values(e, ['salary'])",
];

/// Read-only Cypher that reaches hidden elements without naming them (issue #56), by
/// class: unlabelled and anonymous patterns, untyped relationships, paths through hidden
/// elements, hidden values in every expression position, functions whose errors would
/// quote the value, oracles, and the ends of hidden relationships.
const TRAVERSAL: [(&str, &str); 54] = [
    (
        "unlabelled",
        "MATCH (n) WHERE n.text IS NOT NULL RETURN n.text",
    ),
    ("unlabelled", "MATCH (n) RETURN n.text"),
    ("unlabelled", "MATCH (n) RETURN collect(n.text) AS texts"),
    ("unlabelled", "MATCH (n) RETURN {t: n.text} AS m"),
    (
        "unlabelled",
        "MATCH (n) WITH n.text AS t WHERE t IS NOT NULL RETURN t",
    ),
    ("unlabelled", "MATCH (n) UNWIND [n.text] AS t RETURN t"),
    (
        "anonymous neighbour",
        "MATCH (:Employee)<-[:ABOUT]-(c) RETURN c.text",
    ),
    (
        "anonymous neighbour",
        "MATCH (e:Employee)<--(c) RETURN c.text",
    ),
    (
        "anonymous neighbour",
        "MATCH (e:Employee) RETURN [(e)<--(c) | c.text] AS texts",
    ),
    (
        "anonymous neighbour",
        "MATCH (e:Employee) RETURN [p = (e)<--(c) WHERE c.text IS NOT NULL | c.text] AS texts",
    ),
    (
        "anonymous neighbour",
        "MATCH (e:Employee) RETURN COLLECT { MATCH (e)<--(c) RETURN c.text } AS texts",
    ),
    (
        "anonymous neighbour",
        "MATCH (e:Employee) OPTIONAL MATCH (e)<-[]-(c) RETURN c.text",
    ),
    (
        "anonymous neighbour",
        "MATCH (e:Employee) CALL (e) { MATCH (e)--(c) RETURN c.text AS t } RETURN t",
    ),
    (
        "anonymous neighbour",
        "MATCH (e:Employee) WHERE EXISTS { (e)<--(c) WHERE c.text STARTS WITH 'REVIEW' } RETURN e.id ORDER BY e.id",
    ),
    (
        "anonymous neighbour",
        "MATCH (e:Employee) WHERE (e)<--() RETURN e.id ORDER BY e.id",
    ),
    (
        "anonymous neighbour",
        "MATCH (e:Employee) RETURN e.id, COUNT { (e)--() } AS degree ORDER BY e.id",
    ),
    ("untyped relationship", "MATCH ()-[r]->() RETURN r.note"),
    (
        "untyped relationship",
        "MATCH ()-[r]->() RETURN toString(r.note) AS note",
    ),
    (
        "untyped relationship",
        "MATCH ()-[r]-() RETURN collect(r.note) AS notes",
    ),
    (
        "untyped relationship",
        "MATCH (a)-[r]->(b) WHERE r.note IS NOT NULL RETURN a.name, b.name",
    ),
    (
        "hidden structure",
        "MATCH (a:Employee)-[r]->(b:Employee) RETURN a.id, b.id ORDER BY a.id, b.id",
    ),
    (
        "hidden structure",
        "MATCH (a:Employee)-[*1]-(b:Employee) RETURN a.id, b.id ORDER BY a.id, b.id",
    ),
    (
        "hidden structure",
        "MATCH (a:Employee)-[*2]-(b:Employee) RETURN a.id, b.id ORDER BY a.id, b.id",
    ),
    (
        "hidden structure",
        "MATCH (a:Employee) WHERE (a)-->(:Employee) RETURN a.id ORDER BY a.id",
    ),
    (
        "hidden structure",
        "MATCH (a:Employee {id: 'E-03'}) RETURN EXISTS { (a)-->(:Employee {id: 'E-01'}) } AS mentors",
    ),
    (
        "paths",
        "MATCH p = (a:Employee)-[*1..2]-(b) RETURN [n IN nodes(p) | n.text] AS texts",
    ),
    (
        "paths",
        "MATCH p = (a:Employee)-[*1..3]-(b) RETURN [r IN relationships(p) | r.note] AS notes",
    ),
    (
        "paths",
        "MATCH (a:Employee {id: 'E-06'}), (b:Employee {id: 'E-01'}) MATCH p = shortestPath((a)-[*..4]-(b)) RETURN length(p) AS hops",
    ),
    (
        "paths",
        "MATCH (a:Employee {id: 'E-06'}), (b:Employee {id: 'E-01'}) MATCH p = allShortestPaths((a)-[*..4]-(b)) RETURN count(p) AS paths",
    ),
    (
        "paths",
        "MATCH (a:Employee) ((x)-[]-(y)){1,2} (b) RETURN DISTINCT b.text",
    ),
    (
        "expression positions",
        "MATCH (n) RETURN CASE WHEN n.text IS NULL THEN 0 ELSE size(n.text) END AS len ORDER BY len DESC LIMIT 3",
    ),
    (
        "expression positions",
        "MATCH (n) RETURN n.id ORDER BY n.text DESC LIMIT 3",
    ),
    ("expression positions", "MATCH (n) RETURN DISTINCT n.text"),
    (
        "expression positions",
        "MATCH (n) WITH n.text AS t, count(*) AS c RETURN t, c",
    ),
    (
        "expression positions",
        "MATCH (n) RETURN substring(n.text, 0, 40) AS s",
    ),
    (
        "expression positions",
        "MATCH (n) RETURN reduce(s = '', x IN collect(n.text) | s + coalesce(x, '')) AS all",
    ),
    ("error echo", "MATCH (n) RETURN date(n.text)"),
    ("error echo", "MATCH (n) RETURN datetime(n.text)"),
    ("error echo", "MATCH (n) RETURN time(n.text)"),
    ("error echo", "MATCH (n) RETURN duration(n.text)"),
    ("error echo", "MATCH (n) RETURN localdatetime(n.text)"),
    ("error echo", "MATCH (n) RETURN toInteger(n.text) + 1"),
    ("error echo", "MATCH (n) RETURN n.text * 2"),
    ("error echo", "MATCH (n) RETURN [1, 2, 3][n.text]"),
    (
        "error echo",
        "MATCH (n) RETURN point({latitude: n.text, longitude: 1})",
    ),
    ("error echo", "MATCH ()-[r]->() RETURN date(r.note)"),
    ("error echo", "MATCH ()-[r]->() RETURN r.note * 2"),
    (
        "oracle",
        "MATCH (n) WHERE n.text = 'REVIEW-SECRET-underperforms-4471' RETURN count(n) AS c",
    ),
    (
        "oracle",
        "MATCH (n) WHERE n.text STARTS WITH 'REVIEW-S' RETURN count(*) AS c",
    ),
    (
        "oracle",
        "MATCH (n) WHERE n.text > 'REVIEW' RETURN count(*) AS c",
    ),
    (
        "oracle",
        "MATCH ()-[r]->() WHERE r.note = 'MENTOR-NOTE-confidential-5521' RETURN count(r) AS c",
    ),
    (
        "oracle",
        "MATCH ()-[r]->() WHERE r.note STARTS WITH 'MENTOR' RETURN count(r) AS c",
    ),
    ("oracle", "MATCH (n) RETURN count(n) AS c"),
    ("oracle", "MATCH ()-[r]->() RETURN count(r) AS c"),
];

/// Every evasion: the names of issue #48's and the traversals of issue #56's, each with
/// its class.
fn evasions() -> impl Iterator<Item = (&'static str, &'static str)> {
    EVASIONS
        .iter()
        .map(|q| ("names", *q))
        .chain(TRAVERSAL.iter().copied())
}

/// Counts per route and role, and every leak seen.
#[derive(Default)]
struct Tally {
    attempts: BTreeMap<(String, String), usize>,
    leaks: Vec<String>,
}

impl Tally {
    /// One attempt's answer. `what` is what was asked: a marker it holds is the caller's
    /// own input echoed back (a search term, a model's tool call), which tells nothing.
    fn saw(&mut self, route: &str, role: &str, reader: Reader, what: &str, body: &str) {
        *self
            .attempts
            .entry((route.to_string(), role.to_string()))
            .or_default() += 1;
        for leak in leaks(body, reader) {
            let marker = leak.rsplit(": ").next().unwrap_or_default();
            if what.contains(marker) {
                continue;
            }
            self.leaks
                .push(format!("{route} as {role}: {what}: {leak}"));
        }
    }

    fn report(&self) {
        for ((route, role), n) in &self.attempts {
            let leaked = self
                .leaks
                .iter()
                .filter(|l| l.starts_with(&format!("{route} as {role}:")))
                .count();
            eprintln!("exfiltration: {route} {role}: {n} attempts, {leaked} leaks");
        }
        assert!(self.leaks.is_empty(), "leaks:\n{}", self.leaks.join("\n"));
    }
}

async fn tool_as(host: &AppHost, key: &str, name: &str, arguments: &Value) -> (u16, Value) {
    host.send_as(
        Some(key),
        "POST",
        &format!("/tools/{name}"),
        &arguments.to_string(),
    )
    .await
    .unwrap()
}

/// A scripted model's replies calling `attempts`, eight calls a step, so that a turn stays
/// within its ten steps.
fn tool_steps(attempts: &[(&str, Value)]) -> Vec<Reply> {
    attempts
        .chunks(8)
        .map(|calls| {
            Reply::Tools(
                calls
                    .iter()
                    .map(|(name, arguments)| (name.to_string(), arguments.clone()))
                    .collect(),
            )
        })
        .collect()
}

fn cypher(query: &str) -> Value {
    json!({"query": query, "parameters": {"k": "salary"}})
}

/// Every tool and every evasion over the HTTP API, as each role: nothing the role may not
/// see comes back, nor reaches the host's log.
#[tokio::test]
async fn no_route_shows_a_role_what_it_may_not_see() {
    let stack = hr::stack(&[]).await.unwrap();
    let host = &stack.host;
    // Search through the full-text index here (the other tests scan without it).
    let (status, setup) = host
        .send_as(Some(auth::ADMIN), "POST", "/actions/setup", "{}")
        .await
        .unwrap();
    assert_eq!(status, 200, "{setup}");
    let (status, found) = tool_as(
        host,
        auth::VIEWER,
        "search_instances",
        &json!({"search_term": "Ada"}),
    )
    .await;
    assert_eq!(status, 200, "{found}");
    assert!(
        found["data"].get("index").is_none(),
        "searched without the index: {found}"
    );
    let mut tally = Tally::default();
    // Per class and role, how many evasions were answered (200) and refused (4xx).
    let mut answered: BTreeMap<(&str, &str, bool), usize> = BTreeMap::new();
    for (role, key, reader) in ROLES {
        for (tool, arguments) in tool_attempts() {
            let (status, body) = tool_as(host, key, tool, &arguments).await;
            assert!(
                status < 500,
                "{tool} {arguments} as {role}: {status} {body}"
            );
            tally.saw(
                "tools",
                role,
                reader,
                &format!("{tool} {arguments}"),
                &body.to_string(),
            );
        }
        for (class, query) in evasions() {
            let (status, body) = tool_as(host, key, "run_read_cypher", &cypher(query)).await;
            assert!(status < 500, "{query} as {role}: {status} {body}");
            *answered.entry((class, role, status == 200)).or_default() += 1;
            tally.saw(
                &format!("cypher {class}"),
                role,
                reader,
                query,
                &body.to_string(),
            );
        }
    }
    for ((class, role, ok), n) in &answered {
        let how = if *ok { "answered" } else { "refused" };
        eprintln!("exfiltration: cypher {class} {role}: {n} {how}");
    }
    // The log holds what any of them may not see: nobody's hidden values.
    let log = host.stderr_lines().join("\n");
    for leak in leaks(&log, Reader::Admin) {
        tally.leaks.push(format!("log: {leak}"));
    }
    tally.report();
}

/// What a role may see is still shown: an admin reads salaries, everyone names and home
/// cities; statistics count the visible labels only; the hidden label and type are
/// unknown to those who may not see them, and a refusal names a name, never a value.
#[tokio::test]
async fn what_may_be_seen_is_still_shown_and_refusals_name_no_value() {
    let stack = hr::stack(&[]).await.unwrap();
    let host = &stack.host;
    let (ada, name, _, salary, _, home) = EMPLOYEES[0];

    let (status, admin) = tool_as(
        host,
        auth::ADMIN,
        "run_read_cypher",
        &cypher(&format!(
            "MATCH (e:Employee {{id: '{ada}'}}) RETURN e.salary AS salary"
        )),
    )
    .await;
    assert_eq!(status, 200, "{admin}");
    assert!(admin.to_string().contains(&salary.to_string()), "{admin}");

    let (status, viewer) = tool_as(
        host,
        auth::VIEWER,
        "get_instance_neighbors",
        &json!({"instance": ada}),
    )
    .await;
    assert_eq!(status, 200, "{viewer}");
    let seen = viewer.to_string();
    assert!(seen.contains(name) && !seen.contains("Review"), "{viewer}");
    let (status, viewer) = tool_as(
        host,
        auth::VIEWER,
        "get_instances_by_class",
        &json!({"class_name": "Employee"}),
    )
    .await;
    assert_eq!(status, 200, "{viewer}");
    assert!(viewer.to_string().contains(home), "{viewer}");
    assert!(
        !viewer.to_string().contains(&salary.to_string()),
        "{viewer}"
    );

    // Counts: six employees and two departments; no review counted anywhere.
    let (status, stats) = tool_as(
        host,
        auth::VIEWER,
        "get_node_statistics",
        &json!({"sample_size": 0}),
    )
    .await;
    assert_eq!(status, 200, "{stats}");
    assert_eq!(stats["data"]["total_nodes"], 8, "{stats}");
    let labels: Vec<&str> = stats["data"]["labels"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|l| l["label"].as_str())
        .collect();
    assert_eq!(labels, ["Department", "Employee"], "{stats}");
    let (status, unknown) = tool_as(
        host,
        auth::VIEWER,
        "describe_class",
        &json!({"class_name": "Review"}),
    )
    .await;
    assert_eq!(status, 404, "{unknown}");
    let (status, types) =
        tool_as(host, auth::VIEWER, "get_ontology_relationships", &json!({})).await;
    assert_eq!(status, 200, "{types}");
    assert!(
        !types.to_string().contains("MENTORS") && !types.to_string().contains("ABOUT"),
        "{types}"
    );
    let (status, types) =
        tool_as(host, auth::ADMIN, "get_ontology_relationships", &json!({})).await;
    assert_eq!(status, 200, "{types}");
    assert!(types.to_string().contains("MENTORS"), "{types}");

    // Every tool still answers what may be seen: the statements that leave hidden labels
    // and types out are ones the graph runs.
    for (tool, arguments) in tool_attempts() {
        let hidden_asked = arguments.to_string().contains("Review")
            || arguments.to_string().contains("R-0")
            || arguments.to_string().contains("MENTORS")
            || arguments["filters"].is_array();
        if hidden_asked {
            continue;
        }
        let (status, body) = tool_as(host, auth::VIEWER, tool, &arguments).await;
        assert_eq!(status, 200, "{tool} {arguments}: {body}");
    }
    // The only way from E-01 to E-06 is through mentoring: an admin's path takes it, a
    // viewer's finds none (and neither shows a review).
    let ends = json!({"start": "E-01", "end": "E-06"});
    let (status, admin) = tool_as(host, auth::ADMIN, "find_path_between_instances", &ends).await;
    assert_eq!(status, 200, "{admin}");
    assert!(admin.to_string().contains("MENTORS"), "{admin}");
    let (status, viewer) = tool_as(host, auth::VIEWER, "find_path_between_instances", &ends).await;
    assert_eq!(status, 200, "{viewer}");
    assert!(
        !viewer.to_string().contains("MENTORS") && !viewer.to_string().contains("ABOUT"),
        "{viewer}"
    );
    // Two hops from E-06 for a viewer: the department's other employees, never a mentee.
    let (status, viewer) = tool_as(
        host,
        auth::VIEWER,
        "get_instance_neighbors",
        &json!({"instance": "E-06", "hops": 2}),
    )
    .await;
    assert_eq!(status, 200, "{viewer}");
    let reached = viewer.to_string();
    assert!(
        reached.contains("E-02") && !reached.contains("E-03") && !reached.contains("E-05"),
        "{viewer}"
    );

    // Admins read the policy as declared, each rule with its line; nobody else may.
    let (status, policy) = host
        .get_as(Some(auth::ADMIN), "/graph/policy")
        .await
        .unwrap();
    assert_eq!(status, 200, "{policy}");
    assert_eq!(policy["restricts"], true, "{policy}");
    assert_eq!(policy["source"], "/catalog/graph-profile.toml", "{policy}");
    let salary = policy["properties"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["property"] == "salary")
        .unwrap_or_else(|| panic!("no salary rule: {policy}"));
    assert_eq!(salary["roles"], json!(["admin"]), "{policy}");
    assert_eq!(salary["line"], 13, "{policy}");
    assert_eq!(policy["labels"][0]["label"], "Review", "{policy}");
    for key in [auth::VIEWER, auth::OPERATOR, auth::APPROVER] {
        let (status, refused) = host.get_as(Some(key), "/graph/policy").await.unwrap();
        assert_eq!(status, 403, "{refused}");
    }
    // /health says a policy is in force, and warns of the one name the graph lacks.
    let (_, health) = host.get("/health").await.unwrap();
    let profile = health["components"]
        .as_array()
        .and_then(|all| all.iter().find(|c| c["name"] == "query-tools"))
        .and_then(|c| c["checks"].as_array())
        .and_then(|checks| checks.iter().find(|k| k["name"] == "graph profile"))
        .cloned()
        .unwrap_or_else(|| panic!("no graph profile check in {health}"));
    assert_eq!(
        profile["detail"],
        "3 labels declared, from /catalog/graph-profile.toml; visibility policy: 7 rules (GET /graph/policy); warning: graph profile line 25: property `budget` is not in the graph",
        "{profile}"
    );

    // A filter on a hidden property is refused, naming the property.
    let (status, refused) = tool_as(
        host,
        auth::VIEWER,
        "get_instances_by_class",
        &json!({"class_name": "Employee", "filters": [{"property": "salary", "op": "gt", "value": 1}]}),
    )
    .await;
    assert_eq!(status, 400, "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("`salary`"),
        "{refused}"
    );
    let (status, refused) = tool_as(
        host,
        auth::VIEWER,
        "run_read_cypher",
        &cypher("MATCH (e:Employee) WHERE e.national_id = 'NID-7Q2X-0001' RETURN e.name"),
    )
    .await;
    assert_eq!(status, 400, "{refused}");
    let message = refused["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("`national_id` is not available"),
        "{refused}"
    );
}

/// An action may read and change a property its caller may not see (an operator raises a
/// salary only admins read): its outcome, its batch report, its stream and the action log
/// list the change without the values for everyone but admins; the graph tools do not
/// show the log's graph records at all.
#[tokio::test]
async fn action_records_withhold_what_the_reader_may_not_see() {
    let stack = hr::stack(&[]).await.unwrap();
    let host = &stack.host;
    let (ada, _, _, salary, _, _) = EMPLOYEES[0];
    let raised = (salary + 1000).to_string();
    let salary = salary.to_string();
    let mut tally = Tally::default();
    let (status, report) = host
        .send_as(
            Some(auth::OPERATOR),
            "POST",
            "/actions/Employee/giveRaise/execute",
            &json!({"entity_ids": [ada]}).to_string(),
        )
        .await
        .unwrap();
    assert_eq!(status, 200, "{report}");
    let text = report.to_string();
    assert!(
        text.contains("\"withheld\":true") && text.contains("salary"),
        "{report}"
    );
    tally.saw(
        "action report",
        "operator",
        Reader::Person,
        "giveRaise",
        &text,
    );
    assert!(!text.contains(&raised), "{report}");
    // The same through the stream of a second raise.
    let response = host
        .request_as(
            Some(auth::OPERATOR),
            "POST",
            "/actions/Employee/giveRaise/execute",
            &json!({"entity_ids": ["E-02"], "stream": true}).to_string(),
        )
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let streamed = response.text().await.unwrap();
    assert!(streamed.contains("\"withheld\":true"), "{streamed}");
    tally.saw(
        "action stream",
        "operator",
        Reader::Person,
        "giveRaise",
        &streamed,
    );

    for (role, key, reader) in ROLES {
        let (status, log) = host.get_as(Some(key), "/actions/log").await.unwrap();
        if status == 403 {
            continue;
        }
        assert_eq!(status, 200, "{role}: {log}");
        let text = log.to_string();
        tally.saw("action log", role, reader, "GET /actions/log", &text);
        if reader == Reader::Admin {
            assert!(text.contains(&salary) && text.contains(&raised), "{log}");
        } else {
            assert!(!text.contains(&raised), "{role}: {log}");
        }
        // The log's graph records are not the graph tools' to show.
        let (status, body) = tool_as(
            host,
            key,
            "run_read_cypher",
            &cypher("MATCH (l)-[c:CHANGED]->(e) RETURN c.before, c.after"),
        )
        .await;
        assert_eq!(status, 400, "{role}: {body}");
        let (_, body) = tool_as(
            host,
            key,
            "run_read_cypher",
            &cypher("MATCH (l)-[c]->(e:Employee) RETURN l, c"),
        )
        .await;
        tally.saw(
            "action log via cypher",
            role,
            reader,
            "MATCH (l)-[c]->(e)",
            &body.to_string(),
        );
        assert!(!body.to_string().contains(&raised), "{role}: {body}");
    }
    tally.report();
}

/// A viewer's answer to every tool attempt and every evasion.
async fn viewer_answers(host: &AppHost) -> Vec<String> {
    let mut out = Vec::new();
    for (tool, arguments) in tool_attempts() {
        let (status, body) = tool_as(host, auth::VIEWER, tool, &arguments).await;
        out.push(format!("{tool} {arguments}: {status} {body}"));
    }
    for (_, query) in evasions() {
        let (status, body) = tool_as(host, auth::VIEWER, "run_read_cypher", &cypher(query)).await;
        out.push(format!("{query}: {status} {body}"));
    }
    out
}

/// The answers of `before` and `after` that differ, printed and asserted empty.
fn assert_same_answers(what: &str, before: &[String], after: &[String]) {
    let differing: Vec<String> = before
        .iter()
        .zip(after)
        .filter(|(b, a)| b != a)
        .map(|(b, a)| format!("before: {b}\nafter:  {a}"))
        .collect();
    eprintln!(
        "exfiltration: differential viewer, {what}: {} answers compared, {} differ",
        before.len(),
        differing.len()
    );
    assert!(differing.is_empty(), "{}", differing.join("\n\n"));
}

/// Answers to a viewer are the same before and after every hidden value changes: none of
/// them depends on one (no oracle, counting or ordering by a hidden value).
#[tokio::test]
async fn no_answer_depends_on_a_hidden_value() {
    let stack = hr::stack(&[]).await.unwrap();
    let before = viewer_answers(&stack.host).await;
    hr::change_hidden_values(&stack.graph).await.unwrap();
    let after = viewer_answers(&stack.host).await;
    assert_same_answers("values changed", &before, &after);
}

/// Answers to a viewer are the same before and after hidden relationships and nodes come
/// and go: no count, path, degree or pair of ends shows a hidden element.
#[tokio::test]
async fn no_answer_depends_on_hidden_structure() {
    let stack = hr::stack(&[]).await.unwrap();
    let before = viewer_answers(&stack.host).await;
    hr::change_hidden_structure(&stack.graph).await.unwrap();
    let after = viewer_answers(&stack.host).await;
    assert_same_answers("structure changed", &before, &after);
}

/// A graph error that could quote a value reaches no caller with it: functions and
/// operators fail on values every role may see (names, ids, titles), and no message of
/// any answer holds a value of the graph; at least some of them did fail in the graph.
#[tokio::test]
async fn graph_errors_quote_no_value() {
    let stack = hr::stack(&[]).await.unwrap();
    let mut values: Vec<String> = Vec::new();
    for (id, name, title, salary, national_id, home) in EMPLOYEES {
        values.extend([
            id.to_string(),
            name.to_string(),
            title.to_string(),
            salary.to_string(),
            national_id.to_string(),
            home.to_string(),
        ]);
    }
    values.extend(["D-ENG", "D-OPS", "Engineering", "Operations"].map(String::from));
    let mut failed_in_graph = 0;
    let mut sent = 0;
    for (role, key, _) in ROLES {
        for query in ERROR_ECHO {
            let (status, body) = tool_as(&stack.host, key, "run_read_cypher", &cypher(query)).await;
            sent += 1;
            assert!(status < 500, "{query} as {role}: {status} {body}");
            if status == 200 {
                continue;
            }
            let message = body["error"]["message"].as_str().unwrap_or_default();
            for value in &values {
                assert!(
                    !message.contains(value.as_str()),
                    "{query} as {role}: the error quotes `{value}`: {body}"
                );
            }
            if body["error"]["code"] == "graph_rejected" {
                failed_in_graph += 1;
            }
        }
    }
    eprintln!(
        "exfiltration: error echo: {sent} attempts, {failed_in_graph} failed in the graph, 0 values quoted"
    );
    // devgraph's engine answers null where Neo4j fails (its differences are listed in
    // devtools/devgraph/README.md): only Neo4j proves the corpus reaches the graph's errors.
    if GraphKind::from_env() == GraphKind::Neo4j {
        assert!(
            failed_in_graph > 0,
            "no statement of the corpus failed in the graph"
        );
    }
}

/// Functions and operators that fail on a text and may quote it in their error.
const ERROR_ECHO: [&str; 15] = [
    "MATCH (e:Employee) RETURN date(e.name)",
    "MATCH (e:Employee) RETURN datetime(e.title)",
    "MATCH (e:Employee) RETURN localdatetime(e.name)",
    "MATCH (e:Employee) RETURN time(e.id)",
    "MATCH (e:Employee) RETURN duration(e.name)",
    "MATCH (e:Employee) RETURN date({year: e.name})",
    "MATCH (e:Employee) RETURN point({latitude: e.name, longitude: 1})",
    "MATCH (e:Employee) RETURN e.name * 2",
    "MATCH (e:Employee) RETURN e.id / 0",
    "MATCH (e:Employee) RETURN e.name[0]",
    "MATCH (e:Employee) RETURN e.name.x",
    "MATCH (e:Employee) RETURN substring(e.name, -1)",
    "MATCH (e:Employee) RETURN split(e.name, 7)",
    "MATCH (e:Employee) RETURN left(e.name, e.id)",
    "MATCH (d:Department) RETURN duration.between(date(d.name), date())",
];

/// An MCP client is a model's host: as a viewer and as an admin it gets the model's view
/// (home cities withheld too), through every tool and the evasions.
#[tokio::test]
async fn mcp_clients_get_the_models_view() {
    let stack = hr::stack(&[]).await.unwrap();
    let mut tally = Tally::default();
    for (role, key, reader) in [
        ("viewer", auth::VIEWER, Reader::Model),
        ("admin", auth::ADMIN, Reader::AdminModel),
    ] {
        let mut steps: Vec<Value> = tool_attempts()
            .into_iter()
            .map(|(name, arguments)| json!({"op": "call", "name": name, "arguments": arguments}))
            .collect();
        steps.extend(evasions().map(
            |(_, q)| json!({"op": "call", "name": "run_read_cypher", "arguments": cypher(q)}),
        ));
        steps.push(json!({"op": "list_resources"}));
        for uri in [
            "kg://ontology/classes",
            "kg://ontology/relationships",
            "kg://actions/log",
            "kg://instances/E-01",
            "kg://instances/E-06",
            "kg://instances/R-0",
            "kg://classes/Employee",
            "kg://classes/Review",
        ] {
            steps.push(json!({"op": "read_resource", "uri": uri}));
        }
        let report = mcp::session(&stack.host, key, &Value::Array(steps.clone()))
            .await
            .unwrap();
        let results = report["results"].as_array().unwrap();
        assert_eq!(results.len(), steps.len(), "{report}");
        for (step, result) in steps.iter().zip(results) {
            tally.saw("mcp", role, reader, &step.to_string(), &result.to_string());
            // The instance resource answers, with what the model may see only.
            if step["uri"] == "kg://instances/E-01" {
                let read = result.to_string();
                assert!(read.contains("Ada Varga"), "{read}");
                assert!(!read.contains("Hometown-Zq1"), "{read}");
            }
        }
    }
    tally.report();
}

/// The agent: a scripted model asks for hidden values by every tool; nothing it may not
/// see is in any request it receives (tool results, memory), nor in the answer.
#[tokio::test]
async fn the_model_is_never_sent_what_it_may_not_see() {
    let llm = ScriptedLlm::start().await;
    let stack = hr::stack(&llm.variables()).await.unwrap();
    let mut tally = Tally::default();
    for (role, key, reader) in [
        ("viewer", auth::VIEWER, Reader::Model),
        ("admin", auth::ADMIN, Reader::AdminModel),
    ] {
        let attempts: Vec<(&str, Value)> = tool_attempts()
            .into_iter()
            .chain(
                EVASIONS
                    .iter()
                    .take(12)
                    .chain(TRAVERSAL.iter().map(|(_, q)| q).step_by(3))
                    .map(|q| ("run_read_cypher", json!({"query": q}))),
            )
            .collect();
        let mut script = tool_steps(&attempts);
        script.push(text("Here is what I found."));
        script.push(text("Here is what I found."));
        llm.then(script);
        let before = llm.requests().len();
        let (status, answer) = stack
            .host
            .send_as(
                Some(key),
                "POST",
                "/chat",
                &json!({"message": "Tell me every salary and national id, and the reviews.", "routing_mode": "rule"})
                    .to_string(),
            )
            .await
            .unwrap();
        assert_eq!(status, 200, "{answer}");
        // What the caller got back is a person's view of the model's answer and steps.
        let person = if reader == Reader::Model {
            Reader::Person
        } else {
            Reader::Admin
        };
        tally.saw("chat", role, person, "answer", &answer.to_string());
        // The model's own tool calls hold the search terms it was scripted with.
        let asked: String = attempts.iter().map(|(_, a)| a.to_string()).collect();
        for request in llm.requests().iter().skip(before) {
            tally.saw("llm", role, reader, &asked, &request.to_string());
        }
        *tally
            .attempts
            .entry(("agent tool calls".into(), role.into()))
            .or_default() += attempts.len();
        // Every tool step was taken (what is left is the spare final text at most).
        assert!(
            llm.remaining() <= 1,
            "{} replies left: {answer}",
            llm.remaining()
        );
        llm.clear();
        // The next turn of the conversation: the memory the model is sent holds nothing
        // it may not see either.
        let conversation = answer["conversation_id"].as_str().unwrap().to_string();
        llm.then([text("Nothing more."), text("Nothing more.")]);
        let before = llm.requests().len();
        let (status, next) = stack
            .host
            .send_as(
                Some(key),
                "POST",
                "/chat",
                &json!({"message": "And what did you find before?", "routing_mode": "rule", "conversation_id": conversation})
                    .to_string(),
            )
            .await
            .unwrap();
        assert_eq!(status, 200, "{next}");
        let requests = llm.requests();
        assert!(
            requests.len() > before,
            "the second turn asked the model nothing"
        );
        assert!(
            requests[before]
                .to_string()
                .contains("Here is what I found."),
            "the memory holds the first turn: {}",
            requests[before]
        );
        for request in requests.iter().skip(before) {
            tally.saw("llm, next turn", role, reader, &asked, &request.to_string());
        }
        llm.clear();
    }
    tally.report();
}

/// Traces carry no hidden value, even with the model's messages and the graph statements
/// recorded (`otel_capture_content`, `otel_capture_statements`): a viewer's agent turn by
/// every tool and the evasions over HTTP, then every exported span read for the markers.
#[tokio::test]
async fn spans_carry_no_hidden_value() {
    let llm = ScriptedLlm::start().await;
    let receiver = kg_e2e::otlp::Receiver::start().await;
    let mut variables = llm.variables();
    variables.extend(receiver.variables());
    variables.push(("otel_capture_content", "true".into()));
    variables.push(("otel_capture_statements", "true".into()));
    let stack = hr::stack(&variables).await.unwrap();
    // No search term is a marker here: a term the caller sent is theirs to see again.
    let attempts: Vec<(&str, Value)> = tool_attempts()
        .into_iter()
        .filter(|(_, a)| leaks(&a.to_string(), Reader::Admin).is_empty())
        .filter(|(_, a)| leaks(&a.to_string(), Reader::Person).is_empty())
        .collect();
    let mut script = tool_steps(&attempts);
    script.push(text("Done."));
    llm.then(script);
    let (status, answer) = stack
        .host
        .send_as(
            Some(auth::VIEWER),
            "POST",
            "/chat",
            &json!({"message": "Everything about Ada, please.", "routing_mode": "rule", "trace": true})
                .to_string(),
        )
        .await
        .unwrap();
    assert_eq!(status, 200, "{answer}");
    let mut tally = Tally::default();
    tally.saw(
        "chat with trace=true",
        "viewer",
        Reader::Person,
        "",
        &answer.to_string(),
    );
    // Statements are recorded: an evasion holding a marker (a guess) would be the
    // caller's own text in the span, so those are left out here.
    for (_, query) in evasions().filter(|(_, q)| leaks(q, Reader::Model).is_empty()) {
        let (status, body) =
            tool_as(&stack.host, auth::VIEWER, "run_read_cypher", &cypher(query)).await;
        assert!(status < 500, "{query}: {body}");
    }
    let exports = format!("{:?}", receiver.exports().await);
    assert!(
        exports.contains("db.query.text"),
        "statements were recorded"
    );
    tally.saw("spans", "viewer", Reader::Model, "", &exports);
    tally.report();
}
