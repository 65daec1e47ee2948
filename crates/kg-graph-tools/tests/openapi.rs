//! docs/openapi.json describes each of our graph tools as an operation of its own
//! (`POST /tools/search_instances`, …) whose request body is exactly the JSON Schema the
//! tool checks its arguments against and the LLM sees (`specs()`): the code is the one
//! source, and this test fails when the document drifts from it. `/tools/{name}` stays
//! for tools another query-tools component adds. On a mismatch it writes the operations
//! the code implies to target/openapi/tools.json for scripts/openapi-sync.py.

use serde_json::{Value, json};

const DOCUMENT: &str = include_str!("../../../docs/openapi.json");

/// `search_instances` → `callSearchInstances`.
fn operation_id(name: &str) -> String {
    let mut id = String::from("call");
    for word in name.split('_') {
        let mut chars = word.chars();
        if let Some(first) = chars.next() {
            id.extend(first.to_uppercase());
            id.push_str(chars.as_str());
        }
    }
    id
}

/// The operation for one tool: the generic `/tools/{name}` operation's responses and
/// permissions, the tool's own description and argument schema, no path parameter.
fn operation(generic: &Value, name: &str, description: &str, schema: &Value) -> Value {
    let mut op = generic.clone();
    let map = op.as_object_mut().expect("an operation is an object");
    map.remove("parameters");
    map.remove("requestBody");
    map.insert("operationId".into(), json!(operation_id(name)));
    let summary = description.split(". ").next().unwrap_or(description);
    map.insert("summary".into(), json!(summary.trim_end_matches('.')));
    map.insert("description".into(), json!(description));
    let required = schema["required"].as_array().is_some_and(|r| !r.is_empty());
    map.insert(
        "requestBody".into(),
        json!({
            "required": required,
            "description": format!("The arguments of `{name}`; an empty body is `{{}}`."),
            "content": {"application/json": {"schema": schema}},
        }),
    );
    op
}

#[test]
fn each_tool_has_an_operation_with_its_own_argument_schema() {
    let doc: Value = serde_json::from_str(DOCUMENT).expect("docs/openapi.json is JSON");
    let generic = &doc["paths"]["/tools/{name}"]["post"];
    assert!(
        generic.is_object(),
        "docs/openapi.json lacks POST /tools/{{name}}"
    );
    let mut expected = serde_json::Map::new();
    let mut drift = Vec::new();
    for (name, description, schema) in kg_graph_tools::specs() {
        let path = format!("/tools/{name}");
        let want = operation(generic, name, description, &schema);
        if doc["paths"][&path]["post"] != want {
            drift.push(path.clone());
        }
        expected.insert(path, json!({ "post": want }));
    }
    if drift.is_empty() {
        return;
    }
    let out = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/openapi");
    std::fs::create_dir_all(&out).expect("target/openapi");
    std::fs::write(
        out.join("tools.json"),
        serde_json::to_string_pretty(&Value::Object(expected)).expect("JSON"),
    )
    .expect("target/openapi/tools.json");
    panic!(
        "docs/openapi.json does not describe these tools as the code does: {drift:?}; run scripts/openapi-sync.py"
    );
}
