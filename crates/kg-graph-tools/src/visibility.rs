//! The visibility policy at the one door every graph answer passes (`Graph::run`): each
//! value a statement returns is redacted for the session's audience before any tool shapes
//! it. A node of a hidden label, a relationship of a hidden type, and a path through either
//! become `null`; every other node and relationship loses the properties the audience may
//! not see. Tools that count (statistics, neighbours' degrees) also leave hidden labels and
//! types out of their statements, since a count is not a node this layer could redact.

use kg_graph_profile::View;
use neo4j_client::Value;

/// Redacts every value of every row in place.
pub fn redact_rows(rows: &mut [Vec<Value>], view: &View) {
    if view.is_open() {
        return;
    }
    for value in rows.iter_mut().flatten() {
        redact(value, view);
    }
}

/// Redacts one value in place (see the module documentation).
pub fn redact(value: &mut Value, view: &View) {
    match value {
        Value::Node {
            labels, properties, ..
        } => {
            if !view.node_visible(labels) {
                *value = Value::Null;
            } else {
                properties.retain(|name, _| view.node_property_visible(labels, name));
            }
        }
        Value::Relationship {
            rel_type,
            properties,
            ..
        } => {
            if !view.type_visible(rel_type) {
                *value = Value::Null;
            } else {
                properties.retain(|name, _| view.relationship_property_visible(rel_type, name));
            }
        }
        Value::Path {
            nodes,
            relationships,
        } => {
            for element in nodes.iter_mut().chain(relationships.iter_mut()) {
                redact(element, view);
            }
            // A path with a hole would say something is there: the whole path goes.
            if nodes
                .iter()
                .chain(relationships.iter())
                .any(|e| matches!(e, Value::Null))
            {
                *value = Value::Null;
            }
        }
        Value::List(items) => items.iter_mut().for_each(|v| redact(v, view)),
        Value::Map(entries) => entries.values_mut().for_each(|v| redact(v, view)),
        // A map the Query API sent raw is not decoded: nothing in it can be told apart.
        Value::Null
        | Value::Boolean(_)
        | Value::Integer(_)
        | Value::Float(_)
        | Value::String(_)
        | Value::Bytes(_)
        | Value::Temporal { .. }
        | Value::Point(_)
        | Value::Unknown { .. } => {}
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
    fn an_open_view_changes_nothing() {
        let mut rows = vec![vec![node("1", &["Employee"], &[("salary", 9)])]];
        let before = rows.clone();
        redact_rows(&mut rows, &View::open());
        assert_eq!(rows, before);
    }
}
