//! Resources: what a client can read without calling a tool (the ontology, the action
//! catalog, the action log, the documents) and per-entity reads by URI template. Each
//! resource, like each tool, mirrors an HTTP route and is read with its permission.

use crate::tools::{Mirror, query_tool_mirror, segment};
use serde_json::{Map, Value, json};

/// The fixed resources: URI, name, description, and the route each is read from.
const FIXED: &[(&str, &str, &str)] = &[
    (
        "kg://ontology/classes",
        "ontology-classes",
        "The graph's classes: their descriptions, properties and instance counts.",
    ),
    (
        "kg://ontology/relationships",
        "ontology-relationships",
        "The relationship types between the graph's classes.",
    ),
    (
        "kg://actions",
        "action-catalog",
        "The business actions of the catalog, per entity type.",
    ),
    (
        "kg://actions/log",
        "action-log",
        "The newest entries of the action log (who ran what, on which entity, and its changes).",
    ),
    (
        "kg://documents",
        "documents",
        "The ingested documents (ids, titles, metadata).",
    ),
];

/// The URI templates (RFC 6570 level 1) of per-entity reads.
const TEMPLATES: &[(&str, &str, &str)] = &[
    (
        "kg://instances/{id}",
        "instance",
        "One instance (by id or exact name) with its neighbours one hop away, as a subgraph.",
    ),
    (
        "kg://classes/{name}",
        "class",
        "One class: its properties, relationships, sample instances and the actions on it.",
    ),
    (
        "kg://actions/{entity_type}/{action}",
        "action",
        "One action: parameters, preconditions, effects, approval rule and batch limits.",
    ),
];

/// `resources/list`: the fixed resources the caller may read.
pub fn list(permitted: &mut dyn FnMut(&Mirror) -> bool) -> Vec<Value> {
    FIXED
        .iter()
        .filter(|(uri, _, _)| mirror(uri).is_some_and(|m| permitted(&m)))
        .map(|(uri, name, description)| {
            json!({"uri": uri, "name": name, "description": description, "mimeType": "application/json"})
        })
        .collect()
}

/// `resources/templates/list`: the templates whose route the caller may read.
pub fn templates(permitted: &mut dyn FnMut(&Mirror) -> bool) -> Vec<Value> {
    TEMPLATES
        .iter()
        .filter(|(template, _, _)| {
            let example = template
                .replace("{id}", "_")
                .replace("{name}", "_")
                .replace("{entity_type}", "_")
                .replace("{action}", "_");
            mirror(&example).is_some_and(|m| permitted(&m))
        })
        .map(|(template, name, description)| {
            json!({"uriTemplate": template, "name": name, "description": description, "mimeType": "application/json"})
        })
        .collect()
}

/// The request a resource's URI is read with; `None` for a URI this server has not.
pub fn mirror(uri: &str) -> Option<Mirror> {
    let get = |path: String| Mirror {
        method: "GET",
        path,
        body: None,
    };
    let tool = |name: &str, arguments: Value| {
        Some(query_tool_mirror(
            name,
            arguments.as_object().cloned().unwrap_or_else(Map::new),
        ))
    };
    let rest = uri.strip_prefix("kg://")?;
    let parts: Vec<String> = rest
        .split('/')
        .map(|p| {
            percent_encoding::percent_decode_str(p)
                .decode_utf8()
                .map(|c| c.into_owned())
        })
        .collect::<Result<_, _>>()
        .ok()?;
    if parts.iter().any(String::is_empty) {
        return None;
    }
    let parts: Vec<&str> = parts.iter().map(String::as_str).collect();
    match parts.as_slice() {
        ["ontology", "classes"] => tool("get_ontology_classes", json!({})),
        ["ontology", "relationships"] => tool("get_ontology_relationships", json!({})),
        ["actions"] => Some(get("/actions".into())),
        ["actions", "log"] => Some(get("/actions/log".into())),
        ["documents"] => Some(get("/documents".into())),
        ["instances", id] => tool("get_instance_neighbors", json!({"instance": id, "hops": 1})),
        ["classes", name] => tool("describe_class", json!({"class_name": name})),
        ["actions", entity_type, action] => Some(get(format!(
            "/actions/{}/{}",
            segment(entity_type),
            segment(action)
        ))),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_listed_resource_and_template_has_a_route() {
        let all = list(&mut |_| true);
        assert_eq!(all.len(), FIXED.len());
        for resource in &all {
            assert!(
                mirror(resource["uri"].as_str().unwrap()).is_some(),
                "{resource}"
            );
        }
        assert_eq!(templates(&mut |_| true).len(), TEMPLATES.len());
    }

    #[test]
    fn uris_become_their_routes() {
        let m = mirror("kg://instances/PO-0003").unwrap();
        assert_eq!(m.path, "/tools/get_instance_neighbors");
        assert_eq!(m.body, Some(json!({"instance": "PO-0003", "hops": 1})));
        let m = mirror("kg://classes/Purchase%20Order").unwrap();
        assert_eq!(m.body, Some(json!({"class_name": "Purchase Order"})));
        assert_eq!(
            mirror("kg://actions/PurchaseOrder/makePayment")
                .unwrap()
                .path,
            "/actions/PurchaseOrder/makePayment"
        );
        assert_eq!(mirror("kg://actions/log").unwrap().path, "/actions/log");
    }

    #[test]
    fn other_uris_are_not_resources() {
        for uri in [
            "kg://",
            "kg://nope",
            "kg://instances/",
            "kg://instances/a/b",
            "kg://instances/%ff",
            "file:///etc/passwd",
            "http://example.com/",
            "kg://actions/a/b/c",
        ] {
            assert!(mirror(uri).is_none(), "{uri}");
        }
    }

    #[test]
    fn the_lists_follow_the_callers_permissions() {
        let only_tools = &mut |m: &Mirror| m.path.starts_with("/tools/");
        let names: Vec<Value> = list(only_tools).iter().map(|r| r["name"].clone()).collect();
        assert_eq!(
            names,
            [json!("ontology-classes"), json!("ontology-relationships")]
        );
        assert_eq!(templates(only_tools).len(), 2);
    }
}
