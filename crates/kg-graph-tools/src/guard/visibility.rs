//! The read-only guard's visibility layer: while the graph's profile declares a
//! visibility policy, a query may not name what its audience may not see, nor read
//! properties by a name computed at run time, since then no check of its text could tell
//! what it reads. Whole nodes, relationships and paths it returns are redacted on the way
//! back (`crate::visibility`), so `RETURN n` stays allowed.
//!
//! Refused, in any position of the statement (patterns, `WHERE`, `RETURN`, `ORDER BY`,
//! aggregations, map projections, comprehensions, subqueries, `UNION` branches):
//! - a name (bare or back-tick quoted) equal to a label, relationship type or property the
//!   audience may not see: a variable or alias spelt like one too, as the lexer cannot
//!   always tell them apart;
//! - when the policy restricts anyone: `properties()`, `keys()`, map projections of all
//!   properties (`n{.*}`), subscripts by anything but a number (`n[k]`, `n['sal' + 'ary']`,
//!   `n[$key]`), procedure calls (the schema procedures list hidden names), and a name
//!   holding `\` (an escape some parser might read as another name);
//! - when the audience may not see some label: `labels()`; some type: `type()`.

use super::Refusal;
use super::lexer::Token;
use kg_graph_profile::View;

/// Words after which `[` opens a list, not a subscript.
const LIST_OPENERS: [&str; 17] = [
    "RETURN", "WITH", "IN", "AND", "OR", "XOR", "NOT", "WHERE", "UNWIND", "BY", "THEN", "ELSE",
    "WHEN", "CASE", "DISTINCT", "SKIP", "LIMIT",
];

pub fn check(tokens: &[&Token], view: &View) -> Result<(), Refusal> {
    if !view.has_policy() {
        return Ok(());
    }
    let hidden = view.hidden_names();
    for (i, token) in tokens.iter().enumerate() {
        let next = tokens.get(i + 1);
        let before = i.checked_sub(1).map(|j| tokens[j]);
        if let Some(name) = token.name() {
            if hidden.contains(name) {
                return Err(not_available(name));
            }
            if name.contains('\\') {
                return Err(Refusal(
                    "a name holding `\\` is not accepted while the graph has a visibility policy"
                        .into(),
                ));
            }
            let call = next.is_some_and(|n| n.is_sym('('))
                && !before.is_some_and(|b| b.is_sym('.') || b.is_sym(':'));
            if call && matches!(token, Token::Word(_)) {
                let function = name.to_ascii_lowercase();
                let refused = match function.as_str() {
                    "properties" | "keys" => true,
                    "labels" => !view.hidden_labels.is_empty(),
                    "type" => !view.hidden_types.is_empty(),
                    _ => false,
                };
                if refused {
                    return Err(Refusal(format!(
                        "`{function}()` is not available while the graph has a visibility policy: name the properties you need (`n.name`)"
                    )));
                }
            }
            if token.keyword().as_deref() == Some("CALL")
                && !before.is_some_and(|b| b.is_sym('.') || b.is_sym(':'))
                && next.is_some_and(|n| n.name().is_some())
            {
                return Err(Refusal(
                    "procedures are not available while the graph has a visibility policy; the ontology tools list the classes and relationships"
                        .into(),
                ));
            }
        }
        if token.is_sym('\\') {
            return Err(Refusal(
                "`\\` is not accepted while the graph has a visibility policy".into(),
            ));
        }
        // `.*`: a map projection of every property.
        if token.is_sym('.') && next.is_some_and(|n| n.is_sym('*')) {
            return Err(Refusal(
                "`{.*}` is not available while the graph has a visibility policy: project the properties you need (`n{.name, .id}`)"
                    .into(),
            ));
        }
        if token.is_sym('[') && subscript(before) && !numeric_index(&tokens[i + 1..]) {
            return Err(Refusal(
                "a subscript by name (`n[k]`) is not available while the graph has a visibility policy: name the property (`n.name`); lists may be indexed by a number"
                    .into(),
            ));
        }
    }
    Ok(())
}

fn not_available(name: &str) -> Refusal {
    Refusal(format!("`{name}` is not available"))
}

/// Whether a `[` after `before` indexes what precedes it (`n[…]`, `f(x)[…]`, `l[0][…]`,
/// `$list[…]`) rather than opening a list or a relationship pattern.
fn subscript(before: Option<&Token>) -> bool {
    match before {
        Some(Token::Word(w)) => !LIST_OPENERS.contains(&w.to_ascii_uppercase().as_str()),
        Some(Token::Quoted(_)) | Some(Token::Param(_)) => true,
        Some(Token::Sym(c)) => *c == ')' || *c == ']' || *c == '}',
        _ => false,
    }
}

/// The tokens after a subscript's `[` up to its `]` hold only numbers, `-` and `..`
/// (`l[0]`, `l[-1]`, `l[1..3]`, `l[..2]`).
fn numeric_index(after: &[&Token]) -> bool {
    for token in after {
        match token {
            Token::Sym(']') => return true,
            Token::Number(_) | Token::Sym('-') | Token::Sym('.') => {}
            _ => return false,
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use crate::guard::{Rejection, check_for};
    use kg_graph_profile::{Audience, Declared, View};

    const POLICY: &str = "[labels.Employee]\nkey = \"id\"\ncaption = \"name\"\n[labels.Employee.properties]\nsalary = { roles = [\"admin\"] }\nnational_id = \"hidden\"\nhome = \"people\"\n[labels.Review]\nvisibility = \"hidden\"\n[relationships.MENTORS]\nvisibility = { roles = [\"admin\"] }\n";

    fn view(roles: &[&str], for_model: bool) -> View {
        Declared::parse(POLICY).unwrap().policy.view(&Audience {
            roles: roles.iter().map(|r| r.to_string()).collect(),
            for_model,
        })
    }

    fn refused(query: &str, view: &View) -> Option<String> {
        match check_for(query, 10, view) {
            Ok(_) => None,
            Err(Rejection::Refused(r)) => Some(r.0),
            Err(Rejection::TooExpensive(e)) => Some(e.message),
        }
    }

    /// Every way of reading a hidden property, label or type the guard knows of: each is
    /// refused for a viewer, and no refusal carries anything but a name.
    pub const EVASIONS: [&str; 40] = [
        "MATCH (e:Employee) RETURN e.salary",
        "MATCH (e:Employee) RETURN e.`salary`",
        "MATCH (e:Employee) RETURN e.salary AS pay",
        "MATCH (e:Employee) WHERE e.salary > 100000 RETURN e.name",
        "MATCH (e:Employee) RETURN e.name ORDER BY e.salary DESC",
        "MATCH (e:Employee) RETURN sum(e.salary)",
        "MATCH (e:Employee) RETURN e{.name, .salary}",
        "MATCH (e:Employee) RETURN e{.*}",
        "MATCH (e:Employee) RETURN properties(e)",
        "MATCH (e:Employee) RETURN PROPERTIES(e)",
        "MATCH (e:Employee) RETURN keys(e)",
        "MATCH (e:Employee) UNWIND keys(e) AS k RETURN k, e[k]",
        "MATCH (e:Employee) RETURN e['salary']",
        "MATCH (e:Employee) RETURN e['sal' + 'ary']",
        "MATCH (e:Employee) RETURN e[$k]",
        "MATCH (e:Employee) WITH e, 'salary' AS k RETURN e[k]",
        "MATCH (e:Employee) RETURN [x IN [e] | x.salary]",
        "MATCH (e:Employee) RETURN [(e)-->(m) | e.national_id]",
        "MATCH (e:Employee) CALL (e) { RETURN e.salary AS s } RETURN s",
        "MATCH (e:Employee) CALL { WITH e RETURN e.national_id AS s } RETURN s",
        "MATCH (e:Employee) RETURN e.name AS x UNION MATCH (e:Employee) RETURN e.national_id AS x",
        "MATCH (e:Employee) WHERE EXISTS { MATCH (e) WHERE e.salary > 5 } RETURN e.name",
        "MATCH (e:Employee {salary: 100000}) RETURN e.name",
        "MATCH (e:Employee) WHERE e.salary STARTS WITH '1' RETURN count(*)",
        "MATCH (e:Employee) RETURN CASE WHEN e.salary > 1 THEN 1 ELSE 0 END",
        "MATCH (e:Employee) RETURN e.salary + 0 > 99999",
        "MATCH (r:Review) RETURN r",
        "MATCH (r:`Review`) RETURN count(r)",
        "MATCH (n) WHERE n:Review RETURN n",
        "MATCH (n:Employee|Review) RETURN n",
        "MATCH (a)-[m:MENTORS]->(b) RETURN a.name",
        "MATCH (a)-[m]->(b) WHERE type(m) = 'MENTORS' RETURN a.name",
        "MATCH (n) RETURN labels(n)",
        "CALL db.propertyKeys()",
        "CALL db.labels() YIELD label RETURN label",
        "CALL db.schema.nodeTypeProperties()",
        "MATCH (e:Employee) RETURN e.`sal\\u0061ry`",
        "MATCH (e:Employee) RETURN apoc.map.values(e, ['salary'])",
        "MATCH (e:Employee) RETURN valueType(e.salary)",
        "MATCH (e:Employee) RETURN e.name AS salary",
    ];

    #[test]
    fn every_evasion_is_refused_for_a_viewer_naming_no_value() {
        let viewer = view(&["viewer"], false);
        for query in EVASIONS {
            let refusal = refused(query, &viewer).unwrap_or_else(|| panic!("allowed: {query}"));
            assert!(!refusal.contains('\n'), "{refusal}");
        }
    }

    #[test]
    fn what_the_audience_may_see_is_allowed() {
        let viewer = view(&["viewer"], false);
        for query in [
            "MATCH (e:Employee) RETURN e",
            "MATCH (e:Employee) RETURN e.name, e.id ORDER BY e.name",
            "MATCH (e:Employee) RETURN e{.name, .id}",
            "MATCH (e:Employee) RETURN collect(e.name)[0], collect(e)[1..3], [1,2,3][-1]",
            "MATCH (e:Employee) RETURN [x IN collect(e) WHERE x.name STARTS WITH 'A' | x.id]",
            "MATCH p = (e:Employee)-[*1..2]-(m) RETURN p",
            "MATCH (e:Employee) CALL (e) { MATCH (e)--(m) RETURN count(m) AS c } RETURN e.name, c",
        ] {
            assert_eq!(refused(query, &viewer), None, "{query}");
        }
        // An admin may name the salary and the mentoring; the model on their behalf may
        // not name `home` (people only), and nobody `national_id`.
        let admin = view(&["admin"], false);
        for query in [
            "MATCH (e:Employee) RETURN e.salary",
            "MATCH (a)-[m:MENTORS]->(b) RETURN a.name",
            "MATCH (e:Employee) RETURN e.home",
        ] {
            assert_eq!(refused(query, &admin), None, "{query}");
        }
        let admin_model = view(&["admin"], true);
        assert!(refused("MATCH (e:Employee) RETURN e.home", &admin_model).is_some());
        assert!(refused("MATCH (e:Employee) RETURN e.national_id", &admin).is_some());
        // Dynamic access stays refused even to those who could see everything it reads.
        assert!(refused("MATCH (e:Employee) RETURN properties(e)", &admin).is_some());
        // No policy: nothing here applies.
        for query in [
            "MATCH (e:Employee) RETURN properties(e), e.salary, e{.*}",
            "MATCH (e:Employee) UNWIND keys(e) AS k RETURN k, e[k]",
            "MATCH (n) RETURN labels(n)",
        ] {
            assert_eq!(refused(query, &View::open()), None, "{query}");
        }
    }

    #[test]
    fn a_refusal_names_the_name_and_nothing_else() {
        let viewer = view(&["viewer"], false);
        assert_eq!(
            refused(
                "MATCH (e:Employee) WHERE e.salary = 123456 RETURN e",
                &viewer
            )
            .as_deref(),
            Some("`salary` is not available")
        );
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        /// Places a name may stand in a query.
        const TEMPLATES: [&str; 10] = [
            "MATCH (e:Employee) RETURN e.{}",
            "MATCH (e:Employee) WHERE e.{} > 1 RETURN e.name",
            "MATCH (e:Employee) RETURN e.name ORDER BY e.{}",
            "MATCH (e:Employee) RETURN e{{.name, .{}}}",
            "MATCH (e:Employee {{{}: 1}}) RETURN e.name",
            "MATCH (e:Employee) WITH e CALL (e) {{ RETURN e.{} AS v }} RETURN v",
            "MATCH (e:Employee) RETURN [x IN collect(e) | x.{}]",
            "MATCH (n:{}) RETURN n",
            "MATCH (a)-[r:{}]->(b) RETURN a.name",
            "MATCH (e:Employee) WHERE EXISTS {{ MATCH (e)-->(m) WHERE m.{} = 1 }} RETURN e.name",
        ];

        proptest! {
            /// A hidden name anywhere, bare or back-tick quoted, with comments and spacing
            /// around it, is refused (or the statement does not lex); never allowed.
            #[test]
            fn a_hidden_name_is_never_allowed(
                template in proptest::sample::select(TEMPLATES.to_vec()),
                name in proptest::sample::select(vec!["salary", "national_id", "home", "Review", "MENTORS"]),
                quoted in any::<bool>(),
                comment in proptest::sample::select(vec!["", " ", "/* c */", " // c\n", "\n\t"]),
            ) {
                let name = if quoted { format!("`{name}`") } else { name.to_string() };
                let query = template.replacen("{}", &format!("{comment}{name}{comment}"), 1)
                    .replace("{{", "{")
                    .replace("}}", "}");
                // The model's view of a viewer: every one of the names is hidden from it.
                let view = view(&["viewer"], true);
                prop_assert!(refused(&query, &view).is_some(), "allowed: {}", query);
            }
        }
    }
}
