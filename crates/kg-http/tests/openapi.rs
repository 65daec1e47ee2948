//! docs/openapi.json against the route table, both ways: every operation it describes is a
//! route the code resolves (to the same template), with the permissions `Route::access`
//! says; every route the code has is described; the chat event schema in it is
//! docs/events.schema.json. CI fails when the code and the document disagree.

use kg_http::{Access, route};
use serde_json::Value;
use std::collections::BTreeSet;

const DOCUMENT: &str = include_str!("../../../docs/openapi.json");
const EVENTS: &str = include_str!("../../../docs/events.schema.json");
const ROUTES_SOURCE: &str = include_str!("../src/routes.rs");
const METHODS: [&str; 5] = ["get", "post", "put", "patch", "delete"];

/// Paths the route table answers besides each route's template (an alias the document
/// describes as an operation of its own).
const ALIASES: [(&str, &str); 1] = [(
    "/.well-known/oauth-protected-resource",
    "/.well-known/oauth-protected-resource/mcp",
)];

fn document() -> Value {
    serde_json::from_str(DOCUMENT).expect("docs/openapi.json is JSON")
}

/// Every `(method, path, operation)` of the document.
fn operations(doc: &Value) -> Vec<(String, String, Value)> {
    let mut out = Vec::new();
    for (path, item) in doc["paths"].as_object().expect("paths") {
        for method in METHODS {
            if let Some(operation) = item.get(method) {
                out.push((method.to_uppercase(), path.clone(), operation.clone()));
            }
        }
    }
    out
}

/// The path with each `{parameter}` replaced by its example (or `x`).
fn concrete(path: &str, operation: &Value, item: &Value) -> String {
    let parameters: Vec<&Value> = [operation, item]
        .iter()
        .filter_map(|v| v["parameters"].as_array())
        .flatten()
        .collect();
    let mut out = path.to_string();
    for parameter in parameters.iter().filter(|p| p["in"] == "path") {
        let name = parameter["name"].as_str().expect("a parameter has a name");
        let example = parameter["example"]
            .as_str()
            .or_else(|| parameter["schema"]["examples"][0].as_str())
            .unwrap_or("x");
        out = out.replace(&format!("{{{name}}}"), example);
    }
    out
}

/// Whether `path` is `template` or one of its instances (`/tools/search_instances` of
/// `/tools/{name}`: an operation of its own for one tool, with that tool's schema).
fn instance_of(path: &str, template: &str) -> bool {
    let (p, t): (Vec<&str>, Vec<&str>) = (path.split('/').collect(), template.split('/').collect());
    p.len() == t.len()
        && p.iter()
            .zip(&t)
            .all(|(p, t)| p == t || (t.starts_with('{') && !p.starts_with('{')))
}

fn permissions(access: Access) -> BTreeSet<String> {
    match access {
        Access::Public => BTreeSet::new(),
        Access::AnyOf(list) => list.iter().map(|p| p.as_str().to_string()).collect(),
    }
}

#[test]
fn every_documented_operation_is_a_route_with_its_permissions() {
    let doc = document();
    let operations = operations(&doc);
    assert!(operations.len() >= 30, "{} operations", operations.len());
    let mut ids = BTreeSet::new();
    for (method, path, operation) in &operations {
        let what = format!("{method} {path}");
        let item = &doc["paths"][path];
        let resolved = route(method, &concrete(path, operation, item))
            .unwrap_or_else(|e| panic!("{what} is documented but not routed: {e:?}"));
        let documented = ALIASES
            .iter()
            .find(|(alias, _)| alias == path)
            .map_or(path.as_str(), |(_, canonical)| canonical);
        let (resolved_method, template) = resolved.template();
        assert!(
            resolved_method == method && instance_of(documented, template),
            "{what} resolves to {resolved:?} ({resolved_method} {template})"
        );
        let id = operation["operationId"].as_str();
        assert!(
            id.is_some_and(|id| ids.insert(id.to_string())),
            "{what}: operationId missing or repeated"
        );
        let documented: BTreeSet<String> = operation["x-permissions"]
            .as_array()
            .unwrap_or_else(|| panic!("{what} has no x-permissions"))
            .iter()
            .map(|p| p.as_str().expect("a permission is a string").to_string())
            .collect();
        let access = resolved.access();
        assert_eq!(documented, permissions(access), "{what}: x-permissions");
        let public = operation["security"].as_array().is_some_and(Vec::is_empty);
        assert_eq!(
            public,
            access == Access::Public,
            "{what}: `security: []` must mark exactly the public routes"
        );
        let responses = operation["responses"].as_object().expect("responses");
        if !public {
            for status in ["401", "403", "429"] {
                assert!(responses.contains_key(status), "{what} lacks {status}");
            }
        }
        if operation.get("requestBody").is_some() {
            for status in ["400", "413"] {
                assert!(responses.contains_key(status), "{what} lacks {status}");
            }
        }
    }
}

/// The variant names of `pub enum Route` in routes.rs: the code's routes, read from the
/// source so a new variant cannot be forgotten here.
fn route_variants() -> Vec<String> {
    let body = ROUTES_SOURCE
        .split_once("pub enum Route {")
        .and_then(|(_, rest)| rest.split_once("\n}"))
        .map(|(body, _)| body)
        .expect("routes.rs has `pub enum Route`");
    body.lines()
        .map(str::trim)
        .filter(|line| line.starts_with(|c: char| c.is_ascii_uppercase()))
        .map(|line| {
            line.split(|c: char| !c.is_ascii_alphanumeric())
                .next()
                .unwrap_or_default()
                .to_string()
        })
        .collect()
}

#[test]
fn every_route_of_the_code_is_documented() {
    let doc = document();
    let documented: BTreeSet<(String, String)> = operations(&doc)
        .into_iter()
        .map(|(method, path, _)| (method, path))
        .collect();
    let mut resolved_variants = BTreeSet::new();
    for (method, path) in &documented {
        let operation = &doc["paths"][path][method.to_lowercase()];
        if let Ok(route) = route(method, &concrete(path, operation, &doc["paths"][path])) {
            let name = format!("{route:?}");
            let variant = name
                .split([' ', '{'])
                .next()
                .unwrap_or_default()
                .to_string();
            resolved_variants.insert(variant);
        }
    }
    let variants = route_variants();
    assert!(variants.len() >= 29, "read {variants:?} from routes.rs");
    for variant in variants {
        assert!(
            resolved_variants.contains(&variant),
            "Route::{variant} has no operation in docs/openapi.json"
        );
    }
}

/// `#/$defs/x` of docs/events.schema.json, as the copy inside the document refers to it.
fn rebased(value: &Value) -> Value {
    match value {
        Value::String(s) if s.starts_with("#/$defs/") => {
            Value::String(s.replacen("#/$defs/", "#/components/schemas/ChatEvent/$defs/", 1))
        }
        Value::Array(items) => Value::Array(items.iter().map(rebased).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| k.as_str() != "$schema" && k.as_str() != "$id")
                .map(|(k, v)| (k.clone(), rebased(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

#[test]
fn the_chat_event_schema_is_docs_events_schema() {
    let events: Value = serde_json::from_str(EVENTS).expect("events.schema.json is JSON");
    assert_eq!(
        document()["components"]["schemas"]["ChatEvent"],
        rebased(&events),
        "docs/openapi.json's ChatEvent is not docs/events.schema.json: run scripts/openapi-sync.py"
    );
}
