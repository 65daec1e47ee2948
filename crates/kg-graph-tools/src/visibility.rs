//! The visibility policy at the one door every graph answer passes (`Graph::run`): each
//! value a statement returns is redacted for the session's audience before any tool shapes
//! it. A node of a hidden label, a relationship of a hidden type, and a path through either
//! become `null`; every other node and relationship loses the properties the audience may
//! not see. Tools that count (statistics, neighbours' degrees) also leave hidden labels and
//! types out of their statements, since a count is not a node this layer could redact.

use kg_graph_profile::View;
use neo4j_client::Value;

/// Redacts every value of every row in place; a hidden element becomes `null`, where the
/// tools' own statements expect a value (a row of a fixed shape).
pub fn redact_rows(rows: &mut [Vec<Value>], view: &View) {
    if view.is_open() {
        return;
    }
    for value in rows.iter_mut().flatten() {
        if redact(value, view, Hole::Null) {
            *value = Value::Null;
        }
    }
}

/// Redacts rows of a query from outside (`run_read_cypher`): a row holding a hidden
/// element goes whole, and a hidden element in a list goes from the list, so that neither
/// a `null` nor a count of rows or items says something hidden is there.
pub fn redact_rows_leaving_no_hole(rows: &mut Vec<Vec<Value>>, view: &View) {
    if view.is_open() {
        return;
    }
    rows.retain_mut(|row| {
        let mut hidden = false;
        for value in row.iter_mut() {
            hidden |= redact(value, view, Hole::Removed);
        }
        !hidden
    });
}

/// What becomes of a hidden element inside a list or map.
#[derive(Clone, Copy, PartialEq)]
enum Hole {
    Null,
    Removed,
}

/// Redacts one value in place (see the module documentation); true when the value itself
/// is hidden (the caller removes it or puts `null` in its place).
fn redact(value: &mut Value, view: &View, hole: Hole) -> bool {
    match value {
        Value::Node {
            labels, properties, ..
        } => {
            if !view.node_visible(labels) {
                return true;
            }
            properties.retain(|name, _| view.node_property_visible(labels, name));
            false
        }
        Value::Relationship {
            rel_type,
            properties,
            ..
        } => {
            if !view.type_visible(rel_type) {
                return true;
            }
            properties.retain(|name, _| view.relationship_property_visible(rel_type, name));
            false
        }
        Value::Path {
            nodes,
            relationships,
        } => {
            // A path with a hole would say something is there: the whole path goes.
            let mut hidden = false;
            for element in nodes.iter_mut().chain(relationships.iter_mut()) {
                hidden |= redact(element, view, hole);
            }
            hidden
        }
        Value::List(items) => {
            match hole {
                Hole::Removed => items.retain_mut(|v| !redact(v, view, hole)),
                Hole::Null => items.iter_mut().for_each(|v| {
                    if redact(v, view, hole) {
                        *v = Value::Null;
                    }
                }),
            }
            false
        }
        Value::Map(entries) => {
            match hole {
                Hole::Removed => entries.retain(|_, v| !redact(v, view, hole)),
                Hole::Null => entries.values_mut().for_each(|v| {
                    if redact(v, view, hole) {
                        *v = Value::Null;
                    }
                }),
            }
            false
        }
        // A value the Query API sent raw is not decoded: nothing in it can be told apart.
        Value::Null
        | Value::Boolean(_)
        | Value::Integer(_)
        | Value::Float(_)
        | Value::String(_)
        | Value::Bytes(_)
        | Value::Temporal { .. }
        | Value::Point(_)
        | Value::Unknown { .. } => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kg_graph_profile::{Audience, Declared};
    use std::collections::BTreeMap;

    fn view() -> View {
        let declared = Declared::parse(
            "[labels.Employee.properties]\nsalary = \"hidden\"\n[labels.Audit]\nvisibility = \"hidden\"\n[relationships.MANAGES]\nproperties = { bonus = \"people\" }\n[relationships.SECRET]\nvisibility = { roles = [\"admin\"] }\n",
        )
        .unwrap();
        declared.policy.view(&Audience {
            roles: vec!["viewer".into()],
            for_model: true,
        })
    }

    fn node(id: &str, labels: &[&str], props: &[(&str, i64)]) -> Value {
        Value::Node {
            element_id: id.into(),
            labels: labels.iter().map(|l| l.to_string()).collect(),
            properties: props
                .iter()
                .map(|(k, v)| (k.to_string(), Value::Integer(*v)))
                .collect(),
        }
    }

    fn rel(rel_type: &str, props: &[(&str, i64)]) -> Value {
        Value::Relationship {
            element_id: "r".into(),
            start_node_element_id: "a".into(),
            end_node_element_id: "b".into(),
            rel_type: rel_type.into(),
            properties: props
                .iter()
                .map(|(k, v)| (k.to_string(), Value::Integer(*v)))
                .collect(),
        }
    }

    #[test]
    fn hidden_properties_go_and_hidden_elements_become_null_at_any_depth() {
        let view = view();
        let mut rows = vec![vec![
            node("1", &["Employee"], &[("salary", 9), ("age", 3)]),
            Value::List(vec![node("2", &["Note", "Audit"], &[("x", 1)])]),
            Value::Map(BTreeMap::from([(
                "m".to_string(),
                rel("MANAGES", &[("bonus", 5), ("since", 2020)]),
            )])),
            rel("SECRET", &[]),
            Value::Path {
                nodes: vec![node("1", &["Employee"], &[]), node("3", &["Other"], &[])],
                relationships: vec![rel("SECRET", &[])],
            },
            Value::Path {
                nodes: vec![
                    node("1", &["Employee"], &[("salary", 1)]),
                    node("3", &["Other"], &[]),
                ],
                relationships: vec![rel("MANAGES", &[])],
            },
            Value::Integer(7),
        ]];
        redact_rows(&mut rows, &view);
        let row = &rows[0];
        assert_eq!(row[0], node("1", &["Employee"], &[("age", 3)]));
        assert_eq!(row[1], Value::List(vec![Value::Null]));
        assert_eq!(
            row[2],
            Value::Map(BTreeMap::from([(
                "m".to_string(),
                rel("MANAGES", &[("since", 2020)])
            )]))
        );
        assert_eq!(row[3], Value::Null);
        assert_eq!(row[4], Value::Null);
        assert_eq!(
            row[5],
            Value::Path {
                nodes: vec![node("1", &["Employee"], &[]), node("3", &["Other"], &[])],
                relationships: vec![rel("MANAGES", &[])],
            }
        );
        assert_eq!(row[6], Value::Integer(7));
    }

    #[test]
    fn a_query_from_outside_loses_rows_and_items_that_held_something_hidden() {
        let view = view();
        let mut rows = vec![
            vec![Value::Integer(1), rel("SECRET", &[])],
            vec![
                Value::Integer(2),
                Value::List(vec![
                    node("2", &["Audit"], &[]),
                    node("1", &["Employee"], &[("salary", 1)]),
                ]),
            ],
            vec![Value::Null],
        ];
        redact_rows_leaving_no_hole(&mut rows, &view);
        assert_eq!(
            rows,
            vec![
                vec![
                    Value::Integer(2),
                    Value::List(vec![node("1", &["Employee"], &[])])
                ],
                vec![Value::Null],
            ]
        );
    }

    #[test]
    fn an_open_view_changes_nothing() {
        let mut rows = vec![vec![node("1", &["Employee"], &[("salary", 9)])]];
        let before = rows.clone();
        redact_rows(&mut rows, &View::open());
        assert_eq!(rows, before);
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        const LABELS: [&str; 4] = ["Employee", "Audit", "Person", "Other"];
        const TYPES: [&str; 3] = ["MANAGES", "SECRET", "KNOWS"];
        const NAMES: [&str; 4] = ["salary", "bonus", "age", "x"];

        fn element() -> impl Strategy<Value = Value> {
            let node = (
                proptest::sample::subsequence(LABELS.to_vec(), 0..3),
                proptest::sample::subsequence(NAMES.to_vec(), 0..4),
            )
                .prop_map(|(labels, names)| {
                    let props: Vec<(&str, i64)> = names.iter().map(|n| (*n, 1)).collect();
                    node("n", &labels, &props)
                });
            let relationship = (
                proptest::sample::select(TYPES.to_vec()),
                proptest::sample::subsequence(NAMES.to_vec(), 0..4),
            )
                .prop_map(|(t, names)| {
                    let props: Vec<(&str, i64)> = names.iter().map(|n| (*n, 1)).collect();
                    rel(t, &props)
                });
            let leaf = prop_oneof![node, relationship, Just(Value::Integer(3))];
            leaf.prop_recursive(3, 24, 4, |inner| {
                prop_oneof![
                    proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::List),
                    proptest::collection::vec(inner.clone(), 1..3).prop_map(|nodes| Value::Path {
                        nodes,
                        relationships: vec![rel("KNOWS", &[])],
                    }),
                    proptest::collection::btree_map("[a-c]", inner, 0..3).prop_map(Value::Map),
                ]
            })
        }

        /// Nothing the view hides survives, whatever the nesting.
        fn clean(value: &Value, view: &View) -> bool {
            match value {
                Value::Node {
                    labels, properties, ..
                } => {
                    view.node_visible(labels)
                        && properties
                            .keys()
                            .all(|p| view.node_property_visible(labels, p))
                }
                Value::Relationship {
                    rel_type,
                    properties,
                    ..
                } => {
                    view.type_visible(rel_type)
                        && properties
                            .keys()
                            .all(|p| view.relationship_property_visible(rel_type, p))
                }
                Value::Path {
                    nodes,
                    relationships,
                } => nodes.iter().chain(relationships).all(|v| clean(v, view)),
                Value::List(items) => items.iter().all(|v| clean(v, view)),
                Value::Map(entries) => entries.values().all(|v| clean(v, view)),
                _ => true,
            }
        }

        proptest! {
            #[test]
            fn no_hidden_element_or_property_survives_redaction(
                rows in proptest::collection::vec(proptest::collection::vec(element(), 1..4), 0..4)
            ) {
                let view = view();
                let mut nulled = rows.clone();
                redact_rows(&mut nulled, &view);
                prop_assert_eq!(nulled.len(), rows.len());
                for (before, after) in rows.iter().zip(&nulled) {
                    prop_assert_eq!(before.len(), after.len());
                }
                prop_assert!(nulled.iter().flatten().all(|v| clean(v, &view)));
                let mut removed = rows.clone();
                redact_rows_leaving_no_hole(&mut removed, &view);
                prop_assert!(removed.len() <= rows.len());
                prop_assert!(removed.iter().flatten().all(|v| clean(v, &view)));
            }
        }
    }
}
