//! The action tools as an LLM's tool calling sees them (seed 000 §3.2 names), with the
//! JSON Schema of their arguments. The agent maps a call onto the action-executor interface.

use serde_json::{Value, json};

pub const LIST: &str = "list_available_actions";
pub const DETAILS: &str = "get_action_details";
pub const VALIDATE: &str = "validate_action_preconditions";
pub const EXECUTE: &str = "execute_action";
pub const BATCH: &str = "batch_execute_action";

/// (name, description, JSON Schema of the arguments).
pub fn specs() -> Vec<(&'static str, &'static str, Value)> {
    let entity_type =
        json!({"type": "string", "description": "Entity type (class), e.g. PurchaseOrder"});
    let action_name = json!({"type": "string", "description": "Action name, e.g. makePayment"});
    let parameters =
        json!({"type": "object", "description": "Action parameters (see get_action_details)"});
    let ids = json!({"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 10000,
                     "description": "Ids (key property) of the entities"});
    vec![
        (
            LIST,
            "List the actions available on an entity type, with whether they need approval.",
            json!({"type": "object", "properties": {"entity_type": entity_type}, "additionalProperties": false}),
        ),
        (
            DETAILS,
            "Get an action's parameters, preconditions (with their failure messages) and effects.",
            json!({"type": "object", "properties": {"entity_type": entity_type, "action_name": action_name},
                   "required": ["entity_type", "action_name"], "additionalProperties": false}),
        ),
        (
            VALIDATE,
            "Dry run: for each entity, which preconditions pass or fail and why. Writes nothing.",
            json!({"type": "object", "properties": {"entity_type": entity_type, "action_name": action_name,
                   "entity_ids": ids, "parameters": parameters},
                   "required": ["entity_type", "action_name", "entity_ids"], "additionalProperties": false}),
        ),
        (
            EXECUTE,
            "Execute an action on one entity.",
            json!({"type": "object", "properties": {"entity_type": entity_type, "action_name": action_name,
                   "entity_id": {"type": "string"}, "parameters": parameters},
                   "required": ["entity_type", "action_name", "entity_id"], "additionalProperties": false}),
        ),
        (
            BATCH,
            "Execute an action on many entities concurrently; reports successes and failures with reasons. Prefer this for more than one entity.",
            json!({"type": "object", "properties": {"entity_type": entity_type, "action_name": action_name,
                   "entity_ids": ids, "parameters": parameters},
                   "required": ["entity_type", "action_name", "entity_ids"], "additionalProperties": false}),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tool_has_an_object_schema_and_a_unique_name() {
        let specs = specs();
        let mut names: Vec<&str> = specs.iter().map(|s| s.0).collect();
        names.dedup();
        assert_eq!(names.len(), 5);
        for (_, _, schema) in specs {
            assert_eq!(schema["type"], "object");
            assert_eq!(schema["additionalProperties"], false);
        }
    }
}
