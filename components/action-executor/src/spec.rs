//! The catalog as the WIT contract describes it.

use crate::exports::kg::action_executor::action_executor::{
    ActionSpec, ActionSummary, EffectSpec, ParameterSpec, PreconditionSpec,
};
use kg_actions::catalog::ActionDef;

pub fn summary(a: &ActionDef) -> ActionSummary {
    ActionSummary {
        entity_type: a.entity.clone(),
        name: a.name.clone(),
        description: a.description.clone(),
        requires_approval: a.requires_approval,
    }
}

pub fn spec(a: &ActionDef) -> ActionSpec {
    ActionSpec {
        entity_type: a.entity.clone(),
        name: a.name.clone(),
        description: a.description.clone(),
        parameters: a
            .parameters
            .iter()
            .map(|p| ParameterSpec {
                name: p.name.clone(),
                value_type: p.value_type.to_string(),
                description: p.description.clone(),
                required: p.required,
                default_value: p.default.as_ref().map(|d| d.to_string()),
                minimum: p.minimum,
                maximum: p.maximum,
                allowed_values: p.allowed_values.clone(),
            })
            .collect(),
        preconditions: a
            .preconditions
            .iter()
            .map(|p| PreconditionSpec {
                name: p.name.clone(),
                expression: p.source.clone(),
                failure_message: p.message.clone(),
            })
            .collect(),
        effects: a
            .effects
            .iter()
            .map(|e| EffectSpec {
                description: e.source.clone(),
                expression: e.source.clone(),
            })
            .collect(),
        requires_approval: a.requires_approval,
    }
}
