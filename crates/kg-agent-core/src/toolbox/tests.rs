use super::*;
use kg_wit::types::{GraphData, GraphEdge, GraphNode};
use std::cell::RefCell;
use std::rc::Rc;

/// A catalog of one action (`PurchaseOrder.makePayment`), one graph tool, and a log of
/// the calls made.
#[derive(Default, Clone)]
struct FakeBackend {
    calls: Rc<RefCell<Vec<String>>>,
    /// What `run_read_cypher` answers (rows `[id, name]`).
    names: Option<Value>,
}

fn error(code: ErrorCode, message: &str) -> Error {
    Error {
        code,
        message: message.into(),
        retryable: false,
        detail: None,
    }
}

fn summary() -> ActionSummary {
    ActionSummary {
        entity_type: "PurchaseOrder".into(),
        name: "makePayment".into(),
        description: "pay".into(),
        requires_approval: true,
    }
}

impl Backend for FakeBackend {
    fn list_tools(&mut self) -> Vec<query_tools::ToolSpec> {
        vec![query_tools::ToolSpec {
            name: "describe_class".into(),
            description: "d".into(),
            parameters_schema: "not json".into(),
        }]
    }
    fn call_tool(&mut self, name: &str, arguments: &str) -> Result<ToolResult, Error> {
        self.calls.borrow_mut().push(format!("{name} {arguments}"));
        let data = match name {
            "describe_class" => json!({"class": "PurchaseOrder", "available_actions": null}),
            "run_read_cypher" => self
                .names
                .clone()
                .ok_or_else(|| error(ErrorCode::Unavailable, "down"))?,
            "huge" => json!({"text": "é".repeat(MAX_OBSERVATION_CHARS)}),
            _ => return Err(error(ErrorCode::NotFound, "no such tool")),
        };
        Ok(ToolResult {
            data: data.to_string(),
            summary: format!("{name} done"),
            graph: Some(GraphData {
                nodes: vec![GraphNode {
                    id: "n1".into(),
                    labels: vec!["PurchaseOrder".into()],
                    caption: "PO 1".into(),
                    properties: "{}".into(),
                }],
                edges: vec![GraphEdge {
                    id: "e1".into(),
                    rel_type: "FROM".into(),
                    source: "n1".into(),
                    target: "n2".into(),
                    properties: "{}".into(),
                }],
            }),
            truncated: false,
        })
    }
    fn search(&mut self, request: &SearchRequest) -> Result<SearchResponse, Error> {
        self.calls
            .borrow_mut()
            .push(format!("search {}", request.top_k));
        Ok(SearchResponse {
            hits: vec![],
            legs: vec![],
            warnings: vec!["no vectors".into()],
        })
    }
    fn list_actions(&mut self, entity_type: Option<&str>) -> Result<Vec<ActionSummary>, Error> {
        match entity_type {
            None | Some("PurchaseOrder") => Ok(vec![summary()]),
            Some(_) => Err(error(ErrorCode::NotFound, "none")),
        }
    }
    fn get_action(&mut self, entity_type: &str, action_name: &str) -> Result<ActionSpec, Error> {
        if (entity_type, action_name) != ("PurchaseOrder", "makePayment") {
            return Err(error(ErrorCode::NotFound, "no such action"));
        }
        Ok(ActionSpec {
            entity_type: entity_type.into(),
            name: action_name.into(),
            description: "pay".into(),
            parameters: vec![],
            preconditions: vec![],
            effects: vec![],
            requires_approval: true,
        })
    }
    fn validate(
        &mut self,
        caller: &Caller,
        _entity_type: &str,
        _action_name: &str,
        ids: &[String],
        parameters: &str,
    ) -> Result<Vec<Validation>, Error> {
        let call = format!("validate {} {ids:?} {parameters}", caller.subject);
        self.calls.borrow_mut().push(call);
        Ok(ids
            .iter()
            .map(|id| Validation {
                entity_id: id.clone(),
                found: true,
                can_execute: id != "PO-2",
                checks: vec![],
            })
            .collect())
    }
}

fn toolbox(may_act: bool) -> (Toolbox<FakeBackend>, FakeBackend) {
    let backend = FakeBackend::default();
    let caller = Caller {
        subject: "alice".into(),
        roles: vec!["operator".into()],
    };
    (Toolbox::new(backend.clone(), caller, may_act), backend)
}

fn call(name: &str, arguments: &str) -> ToolCall {
    ToolCall {
        id: "c1".into(),
        name: name.into(),
        arguments: arguments.into(),
    }
}

#[test]
fn action_tools_are_offered_only_for_an_action_turn() {
    let (mut tools, _) = toolbox(true);
    let names = |specs: Vec<ToolSpec>| specs.into_iter().map(|s| s.name).collect::<Vec<_>>();
    let answer = tools.specs(Toolset::Query);
    assert_eq!(
        answer[0].parameters,
        json!({"type": "object"}).to_string(),
        "bad schema"
    );
    assert_eq!(names(answer), ["describe_class", SEARCH_DOCUMENTS]);
    let action = names(tools.specs(Toolset::Action));
    assert!(action.contains(&PROPOSE_PLAN.to_string()), "{action:?}");
    assert!(
        action.contains(&action_tools::VALIDATE.to_string()),
        "{action:?}"
    );
    assert!(
        !action.contains(&action_tools::EXECUTE.to_string()),
        "{action:?}"
    );
}

#[test]
fn bad_arguments_and_missing_permissions_are_failed_observations_without_a_call() {
    let (mut tools, backend) = toolbox(false);
    for (name, arguments, needle) in [
        ("describe_class", "[1]", "must be a JSON object"),
        ("describe_class", "{oops", ""),
        (PROPOSE_PLAN, "{}", "missing permission `actions:execute`"),
        (action_tools::VALIDATE, "{}", "missing permission"),
        (SEARCH_DOCUMENTS, "{}", "`query` is required"),
        (
            action_tools::DETAILS,
            r#"{"entity_type": "X"}"#,
            "`action_name` is required",
        ),
    ] {
        let seen = tools.run(&call(name, arguments));
        assert!(!seen.ok, "{name} {arguments}");
        assert!(seen.summary.starts_with("failed: "), "{}", seen.summary);
        assert!(seen.content.contains(needle), "{}", seen.content);
    }
    assert!(backend.calls.borrow().is_empty());
    let (mut tools, _) = toolbox(true);
    let no_ids = tools.run(&call(
        PROPOSE_PLAN,
        r#"{"entity_type": "PurchaseOrder", "action_name": "makePayment", "entity_ids": []}"#,
    ));
    assert!(
        no_ids.content.contains("`entity_ids` is required"),
        "{}",
        no_ids.content
    );
}

#[test]
fn a_plan_is_recorded_only_for_an_existing_action() {
    let (mut tools, _) = toolbox(true);
    let unknown = tools.run(&call(
        PROPOSE_PLAN,
        r#"{"entity_type": "PurchaseOrder", "action_name": "refund", "entity_ids": ["PO-1"]}"#,
    ));
    assert!(!unknown.ok && unknown.content.contains("no such action"));
    assert!(tools.take_plan().is_none());
    let seen = tools.run(&call(PROPOSE_PLAN, r#"{"entity_type": "PurchaseOrder", "action_name": "makePayment", "entity_ids": ["PO-1", 7, "PO-2"]}"#));
    assert!(seen.ok);
    assert_eq!(
        seen.summary,
        "plan: PurchaseOrder.makePayment on 2 entities"
    );
    let plan = tools.take_plan().unwrap();
    assert_eq!(plan.entity_ids, ["PO-1", "PO-2"]);
    assert_eq!(plan.parameters, json!({}));
    assert!(tools.take_plan().is_none(), "taken once");
}

#[test]
fn results_become_observations_with_summaries_and_graphs() {
    let (mut tools, backend) = toolbox(true);
    let described = tools.run(&call("describe_class", "{}"));
    assert!(described.ok);
    let data: Value = serde_json::from_str(&described.content).unwrap();
    assert_eq!(data["available_actions"][0]["name"], "makePayment");
    let graph = described.graph.unwrap();
    assert_eq!(
        graph["nodes"][0],
        json!({"id": "n1", "labels": ["PurchaseOrder"], "caption": "PO 1"})
    );
    assert_eq!(graph["edges"][0]["type"], "FROM");

    let checked = tools.run(&call(action_tools::VALIDATE, r#"{"entity_type": "PurchaseOrder", "action_name": "makePayment", "entity_ids": ["PO-1", "PO-2"]}"#));
    assert_eq!(checked.summary, "1 of 2 can execute");
    assert!(
        backend
            .calls
            .borrow()
            .contains(&r#"validate alice ["PO-1", "PO-2"] {}"#.to_string())
    );

    let found = tools.run(&call(
        SEARCH_DOCUMENTS,
        r#"{"query": "policy", "top_k": 99}"#,
    ));
    assert_eq!(found.summary, "0 passages");
    assert!(
        backend.calls.borrow().contains(&"search 20".to_string()),
        "top_k capped"
    );

    let listed = tools.run(&call(action_tools::LIST, "{}"));
    assert_eq!(listed.summary, "1 actions");

    let unknown = tools.run(&call("nope", "{}"));
    assert_eq!(unknown.summary, "failed: no such tool");
}

#[test]
fn a_long_result_is_cut_at_a_character_boundary() {
    let (mut tools, _) = toolbox(true);
    let seen = tools.run(&call("huge", "{}"));
    assert!(seen.content.ends_with("…(truncated)"));
    assert!(seen.content.len() <= MAX_OBSERVATION_CHARS + "…(truncated)".len());
}

#[test]
fn describe_class_gets_its_actions_or_says_why_not() {
    let data = json!({"class": "Supplier", "available_actions": null});
    let none = with_actions("describe_class", data.clone(), |_| {
        Err(error(ErrorCode::NotFound, "x"))
    });
    assert_eq!(none["available_actions"], json!([]));
    let failed = with_actions("describe_class", data.clone(), |_| {
        Err(error(ErrorCode::Unavailable, "down"))
    });
    assert_eq!(failed["available_actions"], Value::Null);
    assert_eq!(failed["available_actions_error"], "down");
    let other = with_actions("find_entities", data.clone(), |_| panic!("not asked"));
    assert_eq!(other, data);
}

#[test]
fn entity_names_are_read_once_and_a_bad_label_or_failure_names_nothing() {
    let (mut tools, backend) = toolbox(true);
    let ids = vec!["PO-1".to_string(), "PO-2".to_string()];
    assert!(tools.entity_names("Bad`Label", &ids).is_empty());
    assert!(tools.entity_names("PurchaseOrder", &[]).is_empty());
    assert!(backend.calls.borrow().is_empty(), "no query for those");
    assert!(
        tools.entity_names("PurchaseOrder", &ids).is_empty(),
        "read failed"
    );

    let named = FakeBackend {
        names: Some(json!({"rows": [["PO-1", "Order one"], ["PO-2", null]]})),
        ..FakeBackend::default()
    };
    let caller = Caller {
        subject: "alice".into(),
        roles: vec![],
    };
    let mut tools = Toolbox::new(named.clone(), caller, false);
    let names = tools.entity_names("PurchaseOrder", &ids);
    assert_eq!(names.len(), 1);
    assert_eq!(names["PO-1"], "Order one");
    let query = named.calls.borrow()[0].clone();
    assert!(
        query.contains("\"parameters\":{\"ids\":[\"PO-1\",\"PO-2\"]}"),
        "{query}"
    );
}

/// The schemas written as text are the ones the value trees printed (what the model saw).
#[test]
fn search_documents_schema_text_is_its_tree_printed() {
    let (mut tools, _) = toolbox(true);
    let specs = tools.specs(Toolset::Query);
    let search = specs.iter().find(|s| s.name == SEARCH_DOCUMENTS);
    assert_eq!(
        search.map(|s| s.parameters.as_str()),
        Some(json!({"type": "object", "properties": {"query": {"type": "string"}, "top_k": {"type": "integer", "minimum": 1, "maximum": 20}}, "required": ["query"]}).to_string().as_str())
    );
}

#[test]
fn the_model_reads_compact_tool_specs() {
    let schema = r#"{"additionalProperties":false,"properties":{"class_name":{"description":"Only instances of this class (label). Give it when the value is not unique across the classes of the whole graph.","maxLength":10000,"minLength":1,"pattern":"\\S","type":["string","null"]},"limit":{"default":10,"maximum":100,"minimum":1,"type":["integer","null"]},"filters":{"items":{"properties":{"pattern":{"type":"string"}},"type":"object"},"maxItems":5,"type":"array"}},"required":["limit"],"type":"object"}"#;
    let compact: Value = serde_json::from_str(&compact_schema(schema)).unwrap();
    assert_eq!(
        compact,
        json!({"additionalProperties": false, "required": ["limit"], "type": "object", "properties": {
            "class_name": {"description": "Only instances of this class (label).", "type": "string"},
            "limit": {"default": 10, "maximum": 100, "minimum": 1, "type": "integer"},
            // A property named like a keyword is a property, not a keyword.
            "filters": {"items": {"properties": {"pattern": {"type": "string"}}, "type": "object"}, "type": "array"}}})
    );
    assert_eq!(first_sentences("One. Two is longer. Three.", 12), "One.");
    assert_eq!(first_sentences("short", 12), "short");
    assert_eq!(
        first_sentences("a very long first sentence without a stop", 12),
        "a very long…"
    );
    let (mut toolbox, _) = toolbox(false);
    for spec in toolbox.specs(Toolset::Query) {
        assert!(spec.description.chars().count() <= TOOL_DESCRIPTION_CHARS);
        assert!(
            !spec.parameters.contains("maxLength"),
            "{}",
            spec.parameters
        );
    }
}
