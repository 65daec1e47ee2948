use super::*;
use proptest::prelude::*;

fn ok(statement: &str) -> Checked {
    check(statement, 100).unwrap_or_else(|e| panic!("{statement}: {}", e.message()))
}

fn refused(statement: &str) -> String {
    match check(statement, 100) {
        Ok(c) => panic!("not refused: {statement} → {}", c.statement),
        Err(e) => e.message().to_string(),
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
        "MATCH (n) WITH n PROFILE MATCH (m) RETURN m",
        "PROFILE PROFILE MATCH (n) RETURN n",
        "PROFILE EXPLAIN MATCH (n) RETURN n",
        "PROFILE MATCH (n) DETACH DELETE n",
        "PROFILE",
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
        let query = case["arguments"]["query"].as_str().expect("query");
        // `PROFILE <read>` is a read since issue #14 (the corpus predates it).
        if query.starts_with("PROFILE ") {
            assert!(check(query, 1000).is_ok_and(|c| c.profile), "{query}");
            continue;
        }
        cypher_cases += 1;
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

fn too_expensive(statement: &str) -> TooExpensive {
    match check(statement, 100) {
        Err(Rejection::TooExpensive(e)) => e,
        Err(Rejection::Refused(r)) => panic!("refused, not for its cost: {statement}: {}", r.0),
        Ok(c) => panic!("not refused: {statement} → {}", c.statement),
    }
}

#[test]
fn resource_bombs_are_refused_naming_the_construct() {
    for (bomb, construct, excerpt) in [
        (
            "RETURN size(range(1, 100000000)) AS s",
            "range",
            "range(1, 100000000)",
        ),
        (
            "RETURN reduce(s = 0, x IN range(1, 100000000) | s + x) AS s",
            "range",
            "range(1, 100000000)",
        ),
        (
            "RETURN range(1, 20000000) AS r",
            "range",
            "range(1, 20000000)",
        ),
        (
            "RETURN [x IN RANGE(0, 1_000_000) | x * 2] AS xs",
            "range",
            "RANGE(0, 1_000_000)",
        ),
        (
            "UNWIND range(1, 0x7FFFFFFF) AS i RETURN count(i)",
            "range",
            "range(1, 0x7FFFFFFF)",
        ),
        (
            "RETURN range(-100000000, 0) AS r",
            "range",
            "range(-100000000, 0)",
        ),
        ("RETURN range(1, $n) AS r", "range", "range(1, $n)"),
        (
            "MATCH (n) RETURN range(1, n.size) AS r",
            "range",
            "range(1, n.size)",
        ),
        (
            "RETURN range(1, 10, $step) AS r",
            "range",
            "range(1, 10, $step)",
        ),
        (
            "UNWIND range(1, 10000) AS a UNWIND range(1, 10000) AS b RETURN count(*)",
            "range",
            "range(1, 10000)",
        ),
        (
            "MATCH p=(a)-[*]-(b) RETURN count(p)",
            "variable_length_relationship",
            "[*]",
        ),
        (
            "MATCH p=(a)-[*]-(b) RETURN p",
            "variable_length_relationship",
            "[*]",
        ),
        (
            "MATCH (a)-[*2..]->(b) RETURN b",
            "variable_length_relationship",
            "[*2..]",
        ),
        (
            "MATCH (a)<-[:SUPPLIES*]-(b) RETURN b",
            "variable_length_relationship",
            "[:SUPPLIES*]",
        ),
        (
            "MATCH (a)-[r:A|B *0..]-(b) RETURN b",
            "variable_length_relationship",
            "[r:A|B *0..]",
        ),
        (
            "MATCH (a)-[*..11]-(b) RETURN b",
            "variable_length_relationship",
            "[*..11]",
        ),
        (
            "MATCH (a)-[*1..50 {x: 1}]-(b) RETURN b",
            "variable_length_relationship",
            "[*1..50 {x: 1}]",
        ),
        (
            "MATCH (a)-[*20]-(b) RETURN b",
            "variable_length_relationship",
            "[*20]",
        ),
        ("MATCH (a)-->+(b) RETURN b", "quantified_path", "-->+"),
        (
            "MATCH (a)-[:SUPPLIES]->*(b) RETURN b",
            "quantified_path",
            "]->*",
        ),
        (
            "MATCH (a)-[:SUPPLIES]->{1,}(b) RETURN b",
            "quantified_path",
            "]->{1,}",
        ),
        (
            "MATCH (a)-[:SUPPLIES]-{2,40}(b) RETURN b",
            "quantified_path",
            "]-{2,40}",
        ),
        (
            "MATCH ((a)-[:SUPPLIES]->(b))+ RETURN b",
            "quantified_path",
            "))+",
        ),
        (
            "MATCH ((a)-[:SUPPLIES]->(b)){1,} RETURN b",
            "quantified_path",
            ")){1,}",
        ),
        (
            "CALL { MATCH p=(a)-[*]-(b) RETURN p } RETURN count(p)",
            "variable_length_relationship",
            "[*]",
        ),
    ] {
        let e = too_expensive(bomb);
        assert_eq!(e.construct, construct, "{bomb}");
        assert_eq!(e.excerpt, excerpt, "{bomb}");
        assert!(e.message.contains(excerpt), "{bomb}: {}", e.message);
    }
    // The message says what to do instead.
    assert!(
        too_expensive("MATCH p=(a)-[*]-(b) RETURN p")
            .message
            .contains("*1..3")
    );
    assert!(
        too_expensive("RETURN range(1, $n) AS r")
            .message
            .contains("integer literals")
    );
    assert!(
        too_expensive("RETURN range(1, 20000000) AS r")
            .message
            .contains("20000000 values")
    );
}

#[test]
fn bounded_generators_and_patterns_pass() {
    for fine in [
        "RETURN range(1, 10) AS r",
        "RETURN range(10, 1, -1) AS r",
        "RETURN range(0, 100000, 2) AS r",
        "RETURN size(range(1, 100000)) AS s",
        "RETURN reduce(s = 0, x IN range(1, 1000) | s + x) AS s",
        "RETURN [x IN range(1, 10) WHERE x % 2 = 0 | x * x] AS xs",
        "UNWIND range(1, 1000) AS a UNWIND range(1, 1000) AS b RETURN count(*)",
        "MATCH p=(a:Supplier)-[*1..3]-(b) RETURN count(p)",
        "MATCH (a)-[:SUPPLIES*2]->(b) RETURN b",
        "MATCH (a)-[r:SUPPLIES|PART_OF*..10]->(b) RETURN b",
        "MATCH (a)-[r {w: 2*3}]->(b) RETURN count(*) * 2 AS n",
        "MATCH (a)-[:SUPPLIES]->{1,3}(b) RETURN b",
        "MATCH ((a)-[:SUPPLIES]->(b)){2} RETURN b",
        "MATCH p = shortestPath((a:Supplier)-[*]-(b:Product)) RETURN p",
        "MATCH p = allShortestPaths((a:Supplier)-[*]-(b:Product)) RETURN p",
        "MATCH (n) RETURN n.range AS range, size(collect(n)) * (2) AS m",
        "MATCH (n:Supplier) RETURN n ORDER BY n.name",
        "MATCH (n) RETURN count(*) AS c",
        "RETURN 2 * 3 AS six, [1, 2, 3][1..] AS tail",
    ] {
        ok(fine);
    }
}

#[test]
fn profile_is_a_read_run_with_profiling() {
    let c = ok("PROFILE MATCH (s:Supplier) RETURN s.name");
    assert!(c.profile);
    assert_eq!(c.statement, "MATCH (s:Supplier) RETURN s.name LIMIT 101");
    assert_eq!(c.labels, ["Supplier"]);
    assert!(!ok("MATCH (s:Supplier) RETURN s.name").profile);
    assert!(ok("/* why */ profile MATCH (n) RETURN n").profile);
    // The bombs are refused under PROFILE too.
    too_expensive("PROFILE RETURN range(1, 20000000) AS r");
    refused("PROFILE MATCH (n) SET n.x = 1 RETURN n");
}

proptest! {
    /// Whatever the literal bounds, a range passes only when it makes at most the cap.
    #[test]
    fn a_range_passes_only_within_the_cap(start in -300_000i64..300_000, end in -300_000i64..300_000, step in prop::sample::select(vec![1i64, 2, 7, -1, -3])) {
        let statement = format!("RETURN size(range({start}, {end}, {step})) AS n");
        let elements = if (step > 0 && end < start) || (step < 0 && end > start) { 0 } else { (end - start) / step + 1 };
        prop_assert_eq!(check(&statement, 10).is_ok(), elements as i128 <= MAX_RANGE_ELEMENTS, "{}", statement);
    }

    /// A variable-length relationship passes only with an upper bound within the cap.
    #[test]
    fn a_variable_length_passes_only_when_bounded(lower in proptest::option::of(0u32..5), upper in proptest::option::of(0u32..30), dots in any::<bool>()) {
        let length = match (lower, dots, upper) {
            (l, true, u) => format!("{}..{}", l.map(|l| l.to_string()).unwrap_or_default(), u.map(|u| u.to_string()).unwrap_or_default()),
            (Some(l), false, _) => l.to_string(),
            (None, false, _) => String::new(),
        };
        let statement = format!("MATCH (a)-[:SUPPLIES*{length}]->(b) RETURN b");
        let bound = match (lower, dots, upper) {
            (_, true, u) => u,
            (l, false, _) => l,
        };
        let passes = bound.is_some_and(|b| i128::from(b) <= MAX_HOPS);
        prop_assert_eq!(check(&statement, 10).is_ok(), passes, "{}", statement);
    }
}
