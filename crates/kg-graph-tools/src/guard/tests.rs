use super::*;
use proptest::prelude::*;

fn ok(statement: &str) -> Checked {
    check(statement, 100).unwrap_or_else(|e| panic!("{statement}: {}", e.0))
}

fn refused(statement: &str) -> String {
    match check(statement, 100) {
        Ok(c) => panic!("not refused: {statement} → {}", c.statement),
        Err(e) => e.0,
    }
}

#[test]
fn reads_pass_with_a_limit() {
    let c = ok(
        "MATCH (s:Supplier)-[:SUPPLIES]->(p:Product) WHERE s.name STARTS WITH 'A' RETURN s.name, count(p) AS n ORDER BY n DESC",
    );
    assert!(
        c.statement.ends_with("ORDER BY n DESC LIMIT 101"),
        "{}",
        c.statement
    );
    assert_eq!(c.labels, ["Supplier", "Product"]);
    assert_eq!(c.relationship_types, ["SUPPLIES"]);
    // A smaller LIMIT stays; a larger one is clamped.
    assert!(
        ok("MATCH (n) RETURN n LIMIT 5")
            .statement
            .ends_with("LIMIT 5")
    );
    assert!(
        ok("MATCH (n) RETURN n LIMIT 5000;")
            .statement
            .ends_with("LIMIT 101")
    );
    // Comments go; a trailing `;` goes.
    assert_eq!(
        ok("MATCH (n) // all\nRETURN n /* x */ ;").statement,
        "MATCH (n)  \nRETURN n LIMIT 101"
    );
}

#[test]
fn unions_and_subqueries_get_limits_where_they_return() {
    let c = ok(
        "MATCH (a:Supplier) RETURN a.name AS x UNION ALL MATCH (b:Product) RETURN b.name AS x LIMIT 3",
    );
    assert_eq!(
        c.statement,
        "MATCH (a:Supplier) RETURN a.name AS x LIMIT 101 UNION ALL MATCH (b:Product) RETURN b.name AS x LIMIT 3"
    );
    let c = ok(
        "MATCH (s:Supplier) CALL (s) { MATCH (s)-[:PLACED_WITH]-(o) RETURN count(o) AS n } RETURN s.id, n",
    );
    assert!(c.statement.ends_with("RETURN s.id, n LIMIT 101"));
    assert_eq!(c.relationship_types, ["PLACED_WITH"]);
}

#[test]
fn names_are_found_in_patterns_not_in_maps_or_strings() {
    let c = ok(
        "MATCH (n:`Purchase Order`|Invoice {status: 'a:B'})<-[r:HAS|`PAID_BY`*1..2]-(m) WHERE m:Supplier AND n.x = $p RETURN n",
    );
    assert_eq!(c.labels, ["Purchase Order", "Invoice", "Supplier"]);
    assert_eq!(c.relationship_types, ["HAS", "PAID_BY"]);
    let c = ok("RETURN [x IN [1,2,3] WHERE x > 1 | x] AS xs, {a: 1, b: 2} AS m");
    assert!(c.labels.is_empty() && c.relationship_types.is_empty());
}

#[test]
fn procedures_on_the_allow_list_only() {
    let c = ok("CALL db.labels() YIELD label RETURN label");
    assert_eq!(c.procedures, ["db.labels"]);
    for bad in [
        "CALL dbms.listConfig() YIELD name RETURN name",
        "CALL apoc.create.node(['X'], {}) YIELD node RETURN node",
        "CALL `apoc`.`cypher`.`runWrite`('CREATE (n)', {}) YIELD value RETURN value",
        "CALL db.createLabel('X') RETURN 1",
        "RETURN apoc.cypher.runFirstColumnSingle('MATCH (n) DETACH DELETE n', {}) AS x",
        "CALL db.labels() YIELD label RETURN label UNION CALL dbms.killQuery('q') YIELD queryId RETURN queryId AS label",
    ] {
        refused(bad);
    }
    // Aliases and properties may be spelt like clauses.
    ok(
        "MATCH (p:Payment) RETURN p.set AS set, p.start AS start, p.load AS `load` ORDER BY `start`",
    );
    // …but a bare one elsewhere is a keyword: the refusal says how to quote it.
    assert!(
        refused("MATCH (p:Payment) RETURN p.start AS start ORDER BY start").contains("`start`")
    );
    // Built-in namespaced functions are fine.
    ok(
        "RETURN date.truncate('month', date()) AS d, point.distance(point({x:0,y:0}), point({x:1,y:1})) AS p",
    );
}

#[test]
fn writes_admin_and_smuggling_are_refused() {
    for bad in [
        "CREATE (n:X) RETURN n",
        "MATCH (n) DETACH DELETE n",
        "MATCH (n) SET n.x = 1 RETURN n",
        "MATCH (n) REMOVE n.x RETURN n",
        "MERGE (n:X {id: 1}) RETURN n",
        "MATCH (n) FOREACH (x IN [1] | CREATE (:Y)) RETURN n",
        "MATCH (n) CALL { WITH n DELETE n } RETURN 1",
        "MATCH (n) CALL { WITH n SET n.y = 1 } IN TRANSACTIONS RETURN 1",
        "LOAD CSV FROM 'file:///etc/passwd' AS l RETURN l",
        "CREATE INDEX i FOR (n:X) ON (n.y)",
        "DROP CONSTRAINT c",
        "SHOW USERS",
        "USE system MATCH (n) RETURN n",
        "MATCH (n) RETURN n; MATCH (m) DELETE m",
        "MATCH (n) RETURN n ; CREATE (x)",
        "EXPLAIN MATCH (n) RETURN n",
        "PROFILE MATCH (n) RETURN n",
        "create (n) return n",
        "cReAtE (n) RETURN n",
        "MATCH (n) RETURN n LIMIT $n",
        "MATCH (n) RETURN n LIMIT 1+1",
        "MATCH (n)",
        "",
        "  ;  ",
    ] {
        refused(bad);
    }
}

#[test]
fn the_reason_names_the_problem() {
    assert!(refused("MATCH (n) DETACH DELETE n").contains("DETACH"));
    assert!(refused("CALL dbms.components() YIELD name RETURN name").contains("dbms.components"));
    assert!(refused("MATCH (n) RETURN n; MATCH (m) RETURN m").contains("one statement"));
}

#[test]
fn the_injection_corpus_is_refused() {
    let corpus: serde_json::Value =
        serde_json::from_str(include_str!("../../../../tests/data/cypher_injection.json"))
            .expect("the corpus is JSON");
    let cases = corpus["cases"].as_array().expect("cases");
    assert!(cases.len() >= 60, "{} cases", cases.len());
    let mut cypher_cases = 0;
    for case in cases {
        if case["expect"] != "refused" {
            continue;
        }
        cypher_cases += 1;
        let query = case["arguments"]["query"].as_str().expect("query");
        assert!(
            check(query, 1000).is_err(),
            "case {} passed the guard: {query}",
            case["id"]
        );
    }
    assert!(cypher_cases >= 45, "{cypher_cases}");
}

proptest! {
    /// Whatever the text, the guard answers (never panics), and anything it lets through
    /// has no write keyword outside string literals, one statement and a LIMIT at the end.
    #[test]
    fn never_panics_and_passes_only_reads(s in "[ -~\\n]{0,80}") {
        if let Ok(c) = check(&s, 10) {
            let relexed = lex(&c.statement).expect("the guard's output lexes");
            for t in &relexed.tokens {
                if let Some(w) = t.token.keyword() {
                    prop_assert!(!["CREATE", "MERGE", "DELETE", "DETACH", "REMOVE", "FOREACH", "LOAD", "DROP"].contains(&w.as_str()) || relexed.clean[..t.start].trim_end().ends_with(['.', ':']), "{}", c.statement);
                }
                prop_assert!(!t.token.is_sym(';'));
            }
            prop_assert!(relexed.tokens.iter().rev().nth(1).and_then(|t| t.token.keyword()).as_deref() == Some("LIMIT"));
        }
    }

    /// A write clause hidden anywhere after a read prefix is refused, whatever the case
    /// and the comments around it.
    #[test]
    fn a_write_clause_is_always_refused(
        word in prop::sample::select(vec!["CREATE (x)", "DELETE n", "DETACH DELETE n", "SET n.a = 1", "REMOVE n.a", "MERGE (x)", "FOREACH (i IN [1] | CREATE (y))", "LOAD CSV FROM 'f' AS l"]),
        upper in any::<bool>(),
        comment in prop::sample::select(vec!["", "/* c */", "// c\n"]),
    ) {
        let word = if upper { word.to_string() } else { word.to_lowercase() };
        let statement = format!("MATCH (n) {comment} {word} {comment} RETURN n");
        prop_assert!(check(&statement, 10).is_err());
    }

    /// Values inside string literals never trip the guard, and never reach the names.
    #[test]
    fn string_contents_are_values(inner in "[a-zA-Z;:`(){} ]{0,30}") {
        let statement = format!("MATCH (n:Supplier) WHERE n.name = '{inner}' RETURN n");
        let c = check(&statement, 10).expect("a read");
        prop_assert_eq!(c.labels, vec!["Supplier".to_string()]);
    }
}

proptest! {
    /// Every label and relationship type written in a pattern is found, bare or back-tick
    /// quoted, whatever characters the quoted names hold.
    #[test]
    fn names_in_patterns_are_all_found(
        label in "[A-Za-z][A-Za-z0-9_]{0,12}",
        quoted in "[a-zA-Z0-9 :(){}\\[\\]'\"-]{1,12}",
        rel_type in "[A-Z][A-Z_]{0,10}",
    ) {
        let statement = format!(
            "MATCH (a:{label})-[r:{rel_type}]->(b:{}) WHERE b:{label} RETURN a, b",
            crate::cypher::quote_name(&quoted)
        );
        let c = check(&statement, 10).expect("a read");
        let mut expected = vec![label.clone()];
        if quoted != label {
            expected.push(quoted.clone());
        }
        prop_assert_eq!(c.labels, expected);
        prop_assert_eq!(c.relationship_types, vec![rel_type]);
    }

    /// The LIMIT that reaches the graph is never above the cap, and never above the
    /// caller's own.
    #[test]
    fn the_limit_never_exceeds_the_cap(asked in proptest::option::of(0usize..100_000), cap in 1usize..2_000) {
        let statement = match asked {
            Some(n) => format!("MATCH (n) RETURN n LIMIT {n}"),
            None => "MATCH (n) RETURN n".to_string(),
        };
        let c = check(&statement, cap).expect("a read");
        let sent: usize = c.statement.rsplit(' ').next().and_then(|n| n.parse().ok()).expect("a LIMIT");
        prop_assert!(sent <= cap + 1);
        if let Some(n) = asked {
            prop_assert_eq!(sent, n.min(cap + 1));
        }
    }
}
