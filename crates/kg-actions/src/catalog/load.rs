//! Parsing and validating a catalog file. Every problem is reported with the line it is on.

use super::{ActionDef, Catalog, EffectDef, EntityDef, ParamDef, Precondition, Related};
use crate::expr::{
    Effect, ExprError, Scope, ValueType, check_effect, check_expr, parse_effect, parse_expr,
};
use kg_identity::Role;
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};
use toml::Spanned;

/// Labels and properties the executor itself writes; a catalog may not use them.
pub const RESERVED_LABELS: &[&str] = &["ActionLog", "ActionApproval"];
pub const LOCK_PROPERTY: &str = "_kg_lock";

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("catalog line {line}: {message}")]
pub struct CatalogError {
    pub line: usize,
    pub message: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    entities: BTreeMap<String, Spanned<EntityFile>>,
    #[serde(default)]
    actions: Vec<Spanned<ActionFile>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EntityFile {
    key: String,
    properties: BTreeMap<String, ValueType>,
    #[serde(default)]
    related: BTreeMap<String, RelatedFile>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RelatedFile {
    entity: String,
    /// `-[:TYPE]->` or `<-[:TYPE]-`
    via: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ActionFile {
    entity: String,
    name: String,
    description: String,
    #[serde(default)]
    requires_approval: bool,
    /// Who may run it (role names); empty = every role with `actions:execute`.
    #[serde(default)]
    roles: Vec<String>,
    /// Most entities per request, per role (roles not listed: the executor's maximum).
    #[serde(default)]
    batch_limits: BTreeMap<String, u32>,
    /// "self" (default: any approver, the requester included) or "other" (four-eyes).
    #[serde(default)]
    approval: Option<String>,
    #[serde(default)]
    parameters: Vec<Spanned<ParamFile>>,
    #[serde(default)]
    preconditions: Vec<PreconditionFile>,
    #[serde(default)]
    effects: Vec<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ParamFile {
    name: String,
    #[serde(rename = "type")]
    value_type: ValueType,
    #[serde(default)]
    description: String,
    #[serde(default)]
    required: bool,
    default: Option<toml::Value>,
    minimum: Option<f64>,
    maximum: Option<f64>,
    #[serde(default)]
    allowed_values: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PreconditionFile {
    name: String,
    check: Spanned<String>,
    message: String,
}

pub fn load(text: &str) -> Result<Catalog, CatalogError> {
    let lines = LineIndex::new(text);
    let file: File = toml::from_str(text).map_err(|e| CatalogError {
        line: e.span().map_or(1, |s| lines.line(s.start)),
        message: e.message().to_string(),
    })?;

    let mut entities = BTreeMap::new();
    for (label, spanned) in &file.entities {
        let line = lines.line(spanned.span().start);
        let fail = |message: String| CatalogError { line, message };
        let e = spanned.get_ref();
        identifier(label).map_err(fail)?;
        if RESERVED_LABELS.contains(&label.as_str()) {
            return Err(fail(format!("`{label}` is reserved for the action log")));
        }
        if !e.properties.contains_key(&e.key) {
            return Err(fail(format!(
                "{label}: key `{}` is not among its properties",
                e.key
            )));
        }
        for name in e.properties.keys() {
            identifier(name).map_err(fail)?;
            if name == LOCK_PROPERTY {
                return Err(fail(format!("`{LOCK_PROPERTY}` is reserved")));
            }
        }
        let mut related = BTreeMap::new();
        for (name, r) in &e.related {
            identifier(name).map_err(fail)?;
            if name == "this" {
                return Err(fail("a related entity cannot be called `this`".into()));
            }
            let (rel_type, outgoing) = parse_via(&r.via).map_err(fail)?;
            related.insert(
                name.clone(),
                Related {
                    entity: r.entity.clone(),
                    rel_type,
                    outgoing,
                },
            );
        }
        entities.insert(
            label.clone(),
            EntityDef {
                label: label.clone(),
                key: e.key.clone(),
                properties: e.properties.clone(),
                related,
            },
        );
    }
    for (label, spanned) in &file.entities {
        for (name, r) in &entities[label].related {
            if !entities.contains_key(&r.entity) {
                return Err(CatalogError {
                    line: lines.line(spanned.span().start),
                    message: format!("{label}.{name}: entity type `{}` is not declared", r.entity),
                });
            }
        }
    }

    let types: BTreeMap<String, BTreeMap<String, ValueType>> = entities
        .iter()
        .map(|(k, v)| (k.clone(), v.properties.clone()))
        .collect();
    let mut actions: Vec<ActionDef> = Vec::new();
    for spanned in &file.actions {
        let action = action(spanned, &entities, &types, &lines)?;
        if actions
            .iter()
            .any(|a| a.entity == action.entity && a.name == action.name)
        {
            return Err(CatalogError {
                line: lines.line(spanned.span().start),
                message: format!("action {}.{} is declared twice", action.entity, action.name),
            });
        }
        actions.push(action);
    }
    Ok(Catalog { entities, actions })
}

fn action(
    spanned: &Spanned<ActionFile>,
    entities: &BTreeMap<String, EntityDef>,
    types: &BTreeMap<String, BTreeMap<String, ValueType>>,
    lines: &LineIndex,
) -> Result<ActionDef, CatalogError> {
    let a = spanned.get_ref();
    let line = lines.line(spanned.span().start);
    let fail = |message: String| CatalogError { line, message };
    identifier(&a.name).map_err(fail)?;
    let Some(entity) = entities.get(&a.entity) else {
        return Err(fail(format!(
            "action `{}`: entity type `{}` is not declared",
            a.name, a.entity
        )));
    };

    let mut scope = Scope::default();
    scope.bindings.insert(
        "this".into(),
        (entity.label.clone(), entity.properties.clone()),
    );
    for (name, r) in &entity.related {
        scope
            .bindings
            .insert(name.clone(), (r.entity.clone(), types[&r.entity].clone()));
    }

    let mut parameters = Vec::new();
    for p in &a.parameters {
        let line = lines.line(p.span().start);
        let param = parameter(p.get_ref()).map_err(|message| CatalogError { line, message })?;
        if scope
            .params
            .insert(param.name.clone(), param.value_type)
            .is_some()
        {
            return Err(CatalogError {
                line,
                message: format!("parameter `{}` is declared twice", param.name),
            });
        }
        parameters.push(param);
    }

    let mut preconditions = Vec::new();
    for p in &a.preconditions {
        let located = |e: ExprError| lines.expression_error(&p.check, e);
        let expr = parse_expr(p.check.get_ref()).map_err(located)?;
        let t = check_expr(&expr, &scope).map_err(located)?;
        if t != ValueType::Boolean {
            return Err(located(ExprError {
                line: 1,
                column: 1,
                message: format!("precondition `{}` is a {t}, not a boolean", p.name),
            }));
        }
        preconditions.push(Precondition {
            name: p.name.clone(),
            source: p.check.get_ref().clone(),
            expr,
            message: p.message.clone(),
        });
    }

    let mut effects = Vec::new();
    let mut set_once = BTreeSet::new();
    for e in &a.effects {
        let located = |err: ExprError| lines.expression_error(e, err);
        let effect = parse_effect(e.get_ref()).map_err(located)?;
        check_effect(&effect, &mut scope, types).map_err(located)?;
        if let Effect::Set {
            binding,
            property,
            pos,
            ..
        } = &effect
        {
            let target = &scope.bindings[binding].0;
            if binding != "this" && !entity.related.contains_key(binding) {
                return Err(located(ExprError::at(
                    *pos,
                    format!(
                        "`{binding}` is created by this action: give its properties in `create`"
                    ),
                )));
            }
            if property == &entities[target].key {
                return Err(located(ExprError::at(
                    *pos,
                    format!("`{binding}.{property}` is the key of {target} and cannot be set"),
                )));
            }
            if !set_once.insert((binding.clone(), property.clone())) {
                return Err(located(ExprError::at(
                    *pos,
                    format!("`{binding}.{property}` is set twice"),
                )));
            }
        }
        if let Effect::Link { rel_type, pos, .. } = &effect {
            identifier(rel_type).map_err(|m| located(ExprError::at(*pos, m)))?;
        }
        effects.push(EffectDef {
            source: e.get_ref().clone(),
            effect,
        });
    }

    let roles = roles(&a.roles).map_err(fail)?;
    let mut batch_limits = BTreeMap::new();
    for (name, limit) in &a.batch_limits {
        let role = roles_of(std::slice::from_ref(name)).map_err(fail)?[0];
        if *limit == 0 {
            return Err(fail(format!("batch_limits.{name} must be at least 1")));
        }
        batch_limits.insert(role, *limit);
    }
    let four_eyes = match a.approval.as_deref() {
        None | Some("self") => false,
        Some("other") => true,
        Some(other) => {
            return Err(fail(format!(
                "approval must be \"self\" or \"other\", not \"{other}\""
            )));
        }
    };
    Ok(ActionDef {
        entity: a.entity.clone(),
        name: a.name.clone(),
        description: a.description.clone(),
        requires_approval: a.requires_approval,
        roles,
        batch_limits,
        four_eyes,
        parameters,
        preconditions,
        effects,
    })
}

fn roles(names: &[String]) -> Result<Vec<Role>, String> {
    let mut roles = roles_of(names)?;
    roles.sort();
    roles.dedup();
    Ok(roles)
}

/// Role names as roles; a name that is not a role is an error (a typo must not silently
/// take a permission away or grant one).
fn roles_of(names: &[String]) -> Result<Vec<Role>, String> {
    names
        .iter()
        .map(|n| {
            Role::parse(n)
                .ok_or_else(|| format!("`{n}` is not a role (viewer, operator, approver, admin)"))
        })
        .collect()
}

fn parameter(p: &ParamFile) -> Result<ParamDef, String> {
    identifier(&p.name)?;
    if p.value_type == ValueType::Null {
        return Err(format!("parameter `{}`: type cannot be null", p.name));
    }
    let default = match &p.default {
        None => None,
        Some(v) => {
            let json = serde_json::to_value(v).map_err(|e| e.to_string())?;
            Some(json)
        }
    };
    let param = ParamDef {
        name: p.name.clone(),
        value_type: p.value_type,
        description: p.description.clone(),
        required: p.required,
        default,
        minimum: p.minimum,
        maximum: p.maximum,
        allowed_values: p.allowed_values.clone(),
    };
    if let Some(default) = &param.default {
        super::params::check_value(&param, default)
            .map_err(|e| format!("parameter `{}`: default: {e}", p.name))?;
    }
    Ok(param)
}

/// `-[:TYPE]->` → (TYPE, outgoing); `<-[:TYPE]-` → (TYPE, incoming).
fn parse_via(via: &str) -> Result<(String, bool), String> {
    let via = via.trim();
    let (inner, outgoing) =
        if let Some(rest) = via.strip_prefix("-[:").and_then(|r| r.strip_suffix("]->")) {
            (rest, true)
        } else if let Some(rest) = via.strip_prefix("<-[:").and_then(|r| r.strip_suffix("]-")) {
            (rest, false)
        } else {
            return Err(format!(
                "`via` must look like `-[:TYPE]->` or `<-[:TYPE]-`, not `{via}`"
            ));
        };
    identifier(inner)?;
    Ok((inner.to_string(), outgoing))
}

/// Labels, types, properties and names: ASCII identifiers, so quoting is only a safeguard.
fn identifier(name: &str) -> Result<(), String> {
    let mut chars = name.chars();
    let ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    if ok {
        Ok(())
    } else {
        Err(format!(
            "`{name}` is not a valid name (letters, digits, `_`)"
        ))
    }
}

/// Byte offset → 1-based line.
struct LineIndex {
    starts: Vec<usize>,
}

impl LineIndex {
    fn new(text: &str) -> Self {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        LineIndex { starts }
    }

    fn line(&self, offset: usize) -> usize {
        self.starts.partition_point(|s| *s <= offset).max(1)
    }

    /// An expression error placed in the file: the string's own line plus the line within it.
    fn expression_error(&self, source: &Spanned<String>, e: ExprError) -> CatalogError {
        CatalogError {
            line: self.line(source.span().start) + e.line - 1,
            message: format!(
                "in `{}`: column {}: {}",
                source
                    .get_ref()
                    .lines()
                    .nth(e.line - 1)
                    .unwrap_or_default()
                    .trim(),
                e.column,
                e.message
            ),
        }
    }
}
