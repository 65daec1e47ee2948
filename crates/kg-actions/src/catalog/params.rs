//! Action parameters: the caller's JSON object checked against the declared types, bounds
//! and allowed values, with defaults filled in.

use super::{ActionDef, ParamDef};
use crate::expr::ValueType;
use serde_json::{Map, Value as Json};

/// The parameters to run `action` with, or a message naming the offending parameter.
pub fn resolve_parameters(action: &ActionDef, given: &Json) -> Result<Map<String, Json>, String> {
    let given = match given {
        Json::Null => Map::new(),
        Json::Object(map) => map.clone(),
        _ => return Err("parameters must be a JSON object".into()),
    };
    if let Some(unknown) = given
        .keys()
        .find(|k| !action.parameters.iter().any(|p| &p.name == *k))
    {
        let known: Vec<&str> = action.parameters.iter().map(|p| p.name.as_str()).collect();
        return Err(format!(
            "unknown parameter `{unknown}` for {}.{} (takes: {})",
            action.entity,
            action.name,
            if known.is_empty() {
                "none".to_string()
            } else {
                known.join(", ")
            }
        ));
    }
    let mut resolved = Map::new();
    for p in &action.parameters {
        let value = match given.get(&p.name) {
            Some(v) if !v.is_null() => v.clone(),
            _ => match (&p.default, p.required) {
                (Some(d), _) => d.clone(),
                (None, true) => return Err(format!("parameter `{}` is required", p.name)),
                (None, false) => Json::Null,
            },
        };
        if !value.is_null() {
            check_value(p, &value).map_err(|e| format!("parameter `{}`: {e}", p.name))?;
        }
        resolved.insert(p.name.clone(), value);
    }
    Ok(resolved)
}

pub fn check_value(p: &ParamDef, value: &Json) -> Result<(), String> {
    let type_ok = match p.value_type {
        ValueType::String => value.is_string(),
        ValueType::Integer => value.is_i64() || value.is_u64(),
        ValueType::Number => value.is_number(),
        ValueType::Boolean => value.is_boolean(),
        ValueType::Null => value.is_null(),
    };
    if !type_ok {
        return Err(format!("must be a {}, got {value}", p.value_type));
    }
    if let Some(x) = value.as_f64()
        && (p.minimum.is_some_and(|m| x < m) || p.maximum.is_some_and(|m| x > m))
    {
        return Err(format!(
            "{x} is out of bounds [{}, {}]",
            p.minimum.map_or("-inf".into(), |m| m.to_string()),
            p.maximum.map_or("inf".into(), |m| m.to_string())
        ));
    }
    if let Some(s) = value.as_str() {
        if s.len() > 10_000 {
            return Err("is longer than 10,000 bytes".into());
        }
        if !p.allowed_values.is_empty() && !p.allowed_values.iter().any(|a| a == s) {
            return Err(format!(
                "`{s}` is not one of {}",
                p.allowed_values.join(", ")
            ));
        }
    }
    Ok(())
}
