use super::*;
use proptest::prelude::*;

fn view() -> View {
    View {
        hidden_labels: ["Review".to_string()].into(),
        hidden_types: ["MENTORS".to_string()].into(),
        restricts_anything: true,
        ..View::default()
    }
}

fn rewritten(statement: &str) -> String {
    match rewrite(statement, &view()) {
        Ok(r) => r.statement,
        Err(e) => panic!("{statement}: {}", e.0),
    }
}

const NODE: &str = "none(__kg_l IN labels(VAR) WHERE __kg_l IN $__kg_hidden_labels)";
const REL: &str = "NOT type(VAR) IN $__kg_hidden_types";

fn node(var: &str) -> String {
    NODE.replace("VAR", var)
}

fn rel(var: &str) -> String {
    REL.replace("VAR", var)
}

#[test]
fn every_node_and_relationship_of_a_match_gets_a_predicate() {
    assert_eq!(
        rewritten("MATCH (n) RETURN n.text"),
        format!("MATCH (n) WHERE {} RETURN n.text", node("n"))
    );
    // A relationship whose types are named needs no type check (a hidden name is refused
    // before this); its ends do.
    assert_eq!(
        rewritten("MATCH (:Employee)-[:WORKS_IN]->(c) RETURN c.name"),
        format!(
            "MATCH (__kg_n0:Employee)-[__kg_r1:WORKS_IN]->(c) WHERE {} AND {} RETURN c.name",
            node("__kg_n0"),
            node("c")
        )
    );
    // Negated or wildcard types are checked.
    for types in [":!WORKS_IN", ":%", ":(WORKS_IN|ABOUT)"] {
        let out = rewritten(&format!("MATCH ()-[r{types}]->() RETURN 1"));
        assert!(out.contains(&rel("r")), "{out}");
    }
    let out = rewritten("MATCH ()-[r:WORKS_IN|:ABOUT]->() RETURN 1");
    assert!(!out.contains("type("), "{out}");
    assert_eq!(
        rewritten("MATCH ()-->() RETURN 1"),
        format!(
            "MATCH (__kg_n0)-[__kg_r1]->(__kg_n2) WHERE {} AND {} AND {} RETURN 1",
            node("__kg_n0"),
            rel("__kg_r1"),
            node("__kg_n2")
        )
    );
}

#[test]
fn an_existing_where_is_kept_whole_and_joined() {
    assert_eq!(
        rewritten("OPTIONAL MATCH (n) WHERE n.x = 1 OR n.y = 2 RETURN n"),
        format!(
            "OPTIONAL MATCH (n) WHERE (n.x = 1 OR n.y = 2) AND {} RETURN n",
            node("n")
        )
    );
}

#[test]
fn variable_length_relationships_check_each_relationship_and_its_ends() {
    let out = rewritten("MATCH p = (a:Employee)-[*1..2]-(b) RETURN p");
    assert!(out.contains("[__kg_r0*1..2]"), "{out}");
    assert!(
        out.contains("all(__kg_x IN __kg_r0 WHERE NOT type(__kg_x) IN $__kg_hidden_types AND none(__kg_l IN labels(startNode(__kg_x))"),
        "{out}"
    );
    assert!(out.contains("labels(endNode(__kg_x))"), "{out}");
    let out = rewritten("MATCH p = shortestPath((a:Employee)-[*..5]-(b:Employee)) RETURN p");
    assert!(
        out.starts_with("MATCH p = shortestPath((a:Employee)-[__kg_r0*..5]-(b:Employee)) WHERE "),
        "{out}"
    );
}

#[test]
fn nested_scopes_get_their_own_where() {
    // A pattern comprehension.
    let out = rewritten("MATCH (e:Employee) RETURN [(e)-[w]->(d) | d.name] AS ds");
    assert!(
        out.contains(&format!(
            "[(e)-[w]->(d) WHERE {} AND {} AND {} | d.name]",
            node("e"),
            rel("w"),
            node("d")
        )),
        "{out}"
    );
    // A pattern as a predicate becomes EXISTS with its own WHERE.
    let out = rewritten("MATCH (e:Employee) WHERE (e)<--() RETURN e.name");
    assert!(
        out.contains(&format!(
            "WHERE (EXISTS {{ (e)<-[__kg_r0]-(__kg_n1) WHERE {} AND {} AND {} }}) AND {}",
            node("e"),
            rel("__kg_r0"),
            node("__kg_n1"),
            node("e")
        )),
        "{out}"
    );
    // EXISTS / COUNT / COLLECT, in both forms.
    let out = rewritten(
        "MATCH (e:Employee) RETURN COUNT { (e)--(x) } AS n, EXISTS { MATCH (e)-->(y) WHERE y.a = 1 } AS m",
    );
    assert!(
        out.contains(&format!("COUNT {{ (e)-[__kg_r0]-(x) WHERE {}", node("e"))),
        "{out}"
    );
    assert!(
        out.contains(&format!(
            "MATCH (e)-[__kg_r1]->(y) WHERE (y.a = 1) AND {}",
            node("e")
        )),
        "{out}"
    );
    let out = rewritten("MATCH (e:Employee) RETURN COLLECT { MATCH (e)-->(r) RETURN r.id } AS ids");
    assert!(out.contains(&node("r")), "{out}");
    // CALL subqueries and UNION branches.
    let out = rewritten(
        "CALL { MATCH (n) RETURN n.id AS id UNION MATCH ()-[r]->() RETURN r.id AS id } RETURN id",
    );
    assert!(
        out.contains(&format!("MATCH (n) WHERE {} RETURN", node("n"))),
        "{out}"
    );
    assert!(out.contains(&rel("r")), "{out}");
    // A pattern comprehension inside a node pattern's property map (an evasion the suite
    // does not list): its own scope, its own predicates.
    let out =
        rewritten("MATCH (e:Employee {id: head([(x)<-[:ABOUT]-(r) | r.text])}) RETURN e.name");
    assert!(
        out.contains(&format!(
            "[(x)<-[__kg_r0:ABOUT]-(r) WHERE {} AND {} | r.text]",
            node("x"),
            node("r")
        )),
        "{out}"
    );
    // A quantified path pattern's body.
    let out = rewritten("MATCH (a:Employee) ((x)-[m]->(y)){1,3} (b) RETURN b.id");
    assert!(
        out.contains(&format!(
            "((x)-[m]->(y) WHERE {} AND {} AND {}){{1,3}}",
            node("x"),
            rel("m"),
            node("y")
        )),
        "{out}"
    );
}

#[test]
fn functions_called_are_listed() {
    let r = rewrite(
        "MATCH (n:Employee) RETURN date(n.since), toInteger(n.x), count(*), date.truncate('day', n.d)",
        &view(),
    )
    .unwrap();
    assert_eq!(r.functions, ["date", "tointeger", "date.truncate"]);
    assert_eq!(
        r.parameters.keys().collect::<Vec<_>>(),
        [HIDDEN_LABELS, HIDDEN_TYPES]
    );
}

#[test]
fn ordinary_reads_are_read() {
    for statement in [
        "MATCH (s:Supplier)-[:SUPPLIES]->(p:Product) RETURN s.name, count(p) AS n ORDER BY n DESC LIMIT 5",
        "MATCH (o:PurchaseOrder {status: 'approved'})<-[:PLACED]-(s:Supplier {name: $name}) RETURN o.id, o.amount SKIP 2 LIMIT 10",
        "MATCH (order:PurchaseOrder) WITH order.status AS status, count(*) AS n WHERE n > 1 RETURN status, n",
        "UNWIND [1, 2, 3] AS x WITH x WHERE x % 2 = 1 RETURN collect(DISTINCT x) AS odd",
        "MATCH (n:Supplier) WHERE n.name STARTS WITH 'A' AND NOT n.name ENDS WITH 'Z' AND n.name CONTAINS 'c' AND n.name =~ '.*' RETURN n",
        "MATCH (n:Supplier) WHERE n.x IS NOT NULL AND n.y IS NULL AND n.z IN [1, 2.5, -3] AND n.a <> 1 AND n.b <= 2 AND n.c >= -1 RETURN n",
        "MATCH (n:Supplier) RETURN CASE WHEN n.a > 1 THEN 'big' ELSE 'small' END AS size, CASE n.b WHEN 1 THEN 'one' END AS b",
        "MATCH (n:Supplier) RETURN n{.name, .id, total: 1 + 2 * 3 ^ 2, n}",
        "MATCH (n:Supplier) RETURN [x IN range(1, 10) WHERE x > 2 | x * 2] AS xs, all(y IN [1] WHERE y > 0) AS ok, reduce(s = 0, v IN [1, 2] | s + v) AS sum",
        "MATCH (n:Supplier) RETURN n.list[0], n.list[1..2], n.list[..3], n.list[-1], {a: 1, `b c`: 'x'} AS m",
        "MATCH (n:Supplier|Product) WHERE n:Supplier OR n:Product RETURN n",
        "MATCH (n:!Product&%) RETURN n",
        "MATCH (a:Supplier)-[:SUPPLIES|DELIVERS]->(b)<-[:USES]-(c) RETURN a, b, c",
        "MATCH (a:Supplier)-[r:SUPPLIES {since: 2020}]->(b WHERE b.price > 10) RETURN r",
        "MATCH (a:Supplier) CALL (a) { MATCH (a)-->(b) RETURN count(b) AS n } RETURN a.name, n",
        "MATCH (a:Supplier), (b:Product) RETURN a, b",
        "MATCH (a:Supplier) OPTIONAL MATCH (a)-[:SUPPLIES]->(p) RETURN a.name, count(p)",
        "RETURN 1 AS one",
        "MATCH (n:Supplier) RETURN (n.a + 1) * 2 AS x, -n.b AS y",
        "MATCH (n:Supplier) RETURN n.name AS name ORDER BY name ASC, n.id DESCENDING",
    ] {
        rewritten(statement);
    }
}

#[test]
fn what_it_cannot_read_is_refused() {
    for statement in [
        "MATCH (n)-->() RETURN *",
        "MATCH (a)-->(b) WITH * RETURN a",
        "CALL db.labels() YIELD label RETURN label",
        "MATCH ANY SHORTEST (a)-->+(b) RETURN a",
        "MATCH (a)-[r]->{1,3}(b) RETURN a",
        "MATCH (n) RETURN n IS :: INTEGER",
        "MATCH (n:$($l)) RETURN n",
        "MATCH (n) USING INDEX n:Supplier(name) RETURN n",
        "MATCH (n RETURN n",
        "MATCH (__kg_n0) RETURN 1",
        "MATCH (n) WHERE n.x = $__kg_hidden_labels RETURN 1",
    ] {
        assert!(rewrite(statement, &view()).is_err(), "{statement}");
    }
    // `*` stays allowed where no variable was generated.
    rewritten("MATCH (n:Supplier) RETURN *");
    rewritten("MATCH (n) RETURN *");
}

#[test]
fn without_hidden_labels_or_types_nothing_is_inserted() {
    let only_properties = View {
        restricts_anything: true,
        ..View::default()
    };
    let r = rewrite("MATCH (n)-->() RETURN n.name", &only_properties).unwrap();
    assert_eq!(r.statement, "MATCH (n)-->() RETURN n.name");
    assert!(r.parameters.is_empty());
}

proptest! {
    /// Whatever names, directions and nesting a read uses, every element it binds gets a
    /// predicate: the rewritten text holds one per node and relationship pattern.
    #[test]
    fn every_element_is_covered(
        parts in prop::collection::vec((any::<bool>(), any::<bool>(), 0..3usize), 1..5),
        named in any::<bool>(),
    ) {
        let mut pattern = String::from(if named { "(v0)" } else { "()" });
        for (i, (typed, left, dir)) in parts.iter().enumerate() {
            let rel = if *typed { format!("[r{i}:WORKS_IN]") } else { String::new() };
            let (l, r) = match dir { 0 => ("-", "->"), 1 => ("<-", "-"), _ => ("-", "-") };
            let node = if *left { format!("(v{}:Employee)", i + 1) } else { "()".into() };
            pattern.push_str(&format!("{l}{rel}{r}{node}"));
        }
        let out = rewritten(&format!("MATCH {pattern} RETURN count(*)"));
        prop_assert_eq!(out.matches("labels(").count(), parts.len() + 1);
        // Relationships with a named type need no type check.
        prop_assert_eq!(out.matches("NOT type(").count(), parts.iter().filter(|p| !p.0).count());
    }
}
