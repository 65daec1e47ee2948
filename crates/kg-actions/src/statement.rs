//! The Cypher of an action. One statement per chunk of entities (`UNWIND $items`) checks
//! the preconditions and applies the effects of each entity inside a per-row `CALL {}`
//! subquery, so that:
//! - check and effect run in the same transaction, after the written nodes are locked
//!   (the `SET`/`REMOVE` of a scratch property takes Neo4j's write lock before any value is
//!   read), so two concurrent executions cannot both pass a check on the same entity;
//! - a later row sees the writes of earlier rows (a `CALL {}` execution observes the
//!   changes of previous ones), so two orders in one chunk cannot both spend the same funds;
//! - a repeated idempotency key finds the action-log record written with the first
//!   execution and writes nothing.
//!
//! Effects are evaluated against the state before the action (all values are computed,
//! then written), and every applied action writes an `:ActionLog` node linked to what it
//! changed (`CHANGED {property, before, after}`) and created (`CREATED`), for history and undo.

use crate::catalog::{ActionDef, Catalog, EntityDef, LOCK_PROPERTY, is_delta};
use crate::expr::{CypherParams, Effect, ValueType, compile_expr};
use crate::expr::{action_param, quote, variable};
use serde_json::{Map, Value as Json, json};

/// A statement and its parameters.
#[derive(Debug, Clone)]
pub struct Statement {
    pub text: String,
    pub params: Map<String, Json>,
}

/// A check as the statement evaluates it: the declared preconditions, preceded by one
/// implicit existence check per related entity the effects write or link.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckInfo {
    pub name: String,
    pub message: String,
}

/// One `set` as recorded: which binding, property, and whether it is a relative change.
#[derive(Debug, Clone, PartialEq)]
pub struct ChangeInfo {
    pub binding: String,
    pub property: String,
    pub delta: bool,
}

/// Everything needed to build an action's statements and read their rows.
#[derive(Debug, Clone)]
pub struct ActionPlan {
    pub entity: EntityDef,
    pub action: ActionDef,
    pub checks: Vec<CheckInfo>,
    pub changes: Vec<ChangeInfo>,
    related: Vec<String>,
    /// Related binding → its entity type's key property.
    related_keys: std::collections::BTreeMap<String, String>,
    /// Compiled check expressions, in `checks` order.
    check_exprs: Vec<String>,
    base_params: CypherParams,
}

impl ActionPlan {
    pub fn new(catalog: &Catalog, action: &ActionDef) -> ActionPlan {
        let entity = catalog.entities[&action.entity].clone();
        let related: Vec<String> = action.related_used().into_iter().collect();
        let mut params = CypherParams::default();
        let mut checks = Vec::new();
        let mut check_exprs = Vec::new();
        let needed: Vec<&String> = related
            .iter()
            .filter(|r| action.written_bindings().contains(*r) || links(action, r))
            .collect();
        for r in needed {
            let target = &entity.related[r].entity;
            checks.push(CheckInfo {
                name: format!("has_{r}"),
                message: format!("{} has no related {target} (`{r}`)", entity.label),
            });
            check_exprs.push(format!("({} IS NOT NULL)", variable(r)));
        }
        for p in &action.preconditions {
            checks.push(CheckInfo {
                name: p.name.clone(),
                message: p.message.clone(),
            });
            check_exprs.push(compile_expr(&p.expr, &mut params));
        }
        let changes = action
            .sets()
            .map(|(binding, property, value)| {
                let label = if binding == "this" {
                    &entity.label
                } else {
                    &entity.related[binding].entity
                };
                let numeric = matches!(
                    catalog.entities[label].properties.get(property),
                    Some(ValueType::Integer | ValueType::Number)
                );
                ChangeInfo {
                    binding: binding.to_string(),
                    property: property.to_string(),
                    delta: numeric && is_delta(binding, property, value),
                }
            })
            .collect();
        let related_keys = entity
            .related
            .iter()
            .map(|(name, r)| (name.clone(), catalog.entities[&r.entity].key.clone()))
            .collect();
        ActionPlan {
            related_keys,
            entity,
            action: action.clone(),
            checks,
            changes,
            related,
            check_exprs,
            base_params: params,
        }
    }

    /// `OPTIONAL MATCH`es binding `this` (by key from `id_expr`) and the related entities.
    fn match_entities(&self, id_expr: &str, carried: &str) -> String {
        let e = &self.entity;
        let mut text = format!(
            "OPTIONAL MATCH ({}:{} {{{}: {id_expr}}})\n",
            variable("this"),
            quote(&e.label),
            quote(&e.key)
        );
        let mut bound = format!("{carried}, {}", variable("this"));
        // A pattern comprehension, not OPTIONAL MATCH + collect: one expression per related
        // entity that every Cypher engine expands from the bound entity.
        let mut related = Vec::new();
        for name in &self.related {
            let r = &e.related[name];
            let (left, right) = if r.outgoing { ("-", "->") } else { ("<-", "-") };
            related.push(format!(
                "head([({}){left}[:{}]{right}(r:{}) | r]) AS {}",
                variable("this"),
                quote(&r.rel_type),
                quote(&r.entity),
                variable(name)
            ));
        }
        if !related.is_empty() {
            text.push_str(&format!("WITH {bound}, {}\n", related.join(", ")));
            for name in &self.related {
                bound = format!("{bound}, {}", variable(name));
            }
        }
        text.push_str(&format!("WITH {bound}\n"));
        text
    }

    fn bound(&self, carried: &str) -> String {
        let mut names = vec![carried.to_string(), variable("this")];
        names.extend(self.related.iter().map(|r| variable(r)));
        names.join(", ")
    }

    fn checks_list(&self) -> String {
        let items: Vec<String> = self
            .check_exprs
            .iter()
            .map(|c| format!("coalesce({c}, false)"))
            .collect();
        format!("[{}]", items.join(", "))
    }

    /// The dry run: per id, whether the entity exists and each check's result. READ only.
    /// `parameters` are the resolved action parameters; `now` is RFC 3339.
    pub fn validate_statement(
        &self,
        ids: &[String],
        parameters: &Map<String, Json>,
        now: &str,
    ) -> Statement {
        let mut params = self.base_params.values.clone();
        params.insert("ids".into(), json!(ids));
        insert_run_values(&mut params, parameters, now);
        let text = format!(
            "UNWIND $ids AS id\n{}RETURN id, {} IS NOT NULL AS found, {} AS checks",
            self.match_entities("id", "id"),
            variable("this"),
            self.checks_list()
        );
        Statement { text, params }
    }

    /// The write: per item `{id, log_id}`, lock, look up a prior execution under the same
    /// key, check, apply, log. `run` holds the parameters shared by the whole request;
    /// `not_after_ms` (epoch ms) is the latest start on the graph's clock at which the
    /// statement may still apply anything.
    pub fn execute_statement(
        &self,
        items: &[(String, String)],
        run: &RunContext,
        not_after_ms: i64,
    ) -> Statement {
        let mut params = self.base_params.clone();
        let this = variable("this");

        let mut text = String::from("UNWIND $items AS item\nCALL {\nWITH item\n");
        text.push_str(&self.match_entities("item.id", "item"));
        let bound = self.bound("item");

        // Lock everything the action writes before reading any value.
        let written: Vec<String> = self
            .action
            .written_bindings()
            .iter()
            .map(|b| variable(b))
            .collect();
        let lock = quote(LOCK_PROPERTY);
        text.push_str(&format!(
            "FOREACH (n IN [x IN [{}] WHERE x IS NOT NULL] | SET n.{lock} = true REMOVE n.{lock})\n",
            written.join(", ")
        ));
        text.push_str(&format!(
            "WITH {bound}\nOPTIONAL MATCH (prior:`ActionLog` {{`execution_key`: item.execution_key}})\n\
             WITH {bound}, head(collect(prior)) AS prior\n"
        ));

        let mut sets_before = Vec::new();
        let mut sets_after = Vec::new();
        let mut keys = Vec::new();
        for (binding, property, value) in self.action.sets() {
            sets_before.push(format!("{}.{}", variable(binding), quote(property)));
            sets_after.push(compile_expr(value, &mut params));
            keys.push(format!(
                "{}.{}",
                variable(binding),
                quote(&self.key_of(binding))
            ));
        }
        let mut created_values = Vec::new();
        for effect in &self.action.effects {
            if let Effect::Create { properties, .. } = &effect.effect {
                let values: Vec<String> = properties
                    .iter()
                    .map(|(_, v)| compile_expr(v, &mut params))
                    .collect();
                created_values.push(format!("[{}]", values.join(", ")));
            }
        }
        let created_lists: Vec<String> = created_values
            .iter()
            .enumerate()
            .map(|(i, v)| format!(", {v} AS created{i}"))
            .collect();
        // `timestamp()` is the statement's start on the graph's clock: a statement that
        // starts after `$not_after` (say, one queued while the graph was frozen) applies
        // nothing, so once the caller's deadline and the server's execution limit have
        // passed, the action log tells for certain whether an unanswered attempt applied.
        text.push_str(&format!(
            "WITH {bound}, prior, {} AS checks, timestamp() > $not_after AS expired\n\
             WITH {bound}, prior, checks, expired, ({this} IS NOT NULL AND prior IS NULL AND NOT expired AND all(c IN checks WHERE c)) AS ok, \
             [{}] AS before, [{}] AS after, [{}] AS keys{}\n",
            self.checks_list(),
            sets_before.join(", "),
            sets_after.join(", "),
            keys.join(", "),
            created_lists.concat()
        ));

        // The effects and the log, only where every check passed.
        let mut body = Vec::new();
        let assignments: Vec<String> = self
            .changes
            .iter()
            .enumerate()
            .map(|(i, c)| {
                format!(
                    "{}.{} = after[{i}]",
                    variable(&c.binding),
                    quote(&c.property)
                )
            })
            .collect();
        if !assignments.is_empty() {
            body.push(format!("SET {}", assignments.join(", ")));
        }
        body.push(
            "CREATE (log:`ActionLog` {`id`: item.log_id, `execution_key`: item.execution_key, `idempotency_key`: $key, `action`: $action, \
             `entity_type`: $entity_type, `action_name`: $action_name, `entity_id`: item.id, \
             `parameters`: $parameters_json, `actor`: $actor, `at`: $now})"
                .to_string(),
        );
        body.push(format!("CREATE (log)-[:`ACTION_ON`]->({this})"));
        for (i, c) in self.changes.iter().enumerate() {
            let property = params.add(json!(c.property));
            body.push(format!(
                "CREATE (log)-[:`CHANGED` {{`seq`: {i}, `property`: {property}, `entity_id`: keys[{i}], \
                 `before`: before[{i}], `after`: after[{i}], `delta`: {}}}]->({})",
                c.delta,
                variable(&c.binding)
            ));
        }
        let mut created_index = 0;
        for effect in &self.action.effects {
            match &effect.effect {
                Effect::Create {
                    label,
                    name,
                    properties,
                    ..
                } => {
                    let props: Vec<String> = properties
                        .iter()
                        .enumerate()
                        .map(|(j, (k, _))| format!("{}: created{created_index}[{j}]", quote(k)))
                        .collect();
                    body.push(format!(
                        "CREATE ({}:{} {{{}}})",
                        variable(name),
                        quote(label),
                        props.join(", ")
                    ));
                    body.push(format!("CREATE (log)-[:`CREATED`]->({})", variable(name)));
                    created_index += 1;
                }
                Effect::Link {
                    from, rel_type, to, ..
                } => body.push(format!(
                    "CREATE ({})-[:{}]->({})",
                    variable(from),
                    quote(rel_type),
                    variable(to)
                )),
                Effect::Set { .. } => {}
            }
        }
        text.push_str(&format!(
            "FOREACH (_ IN CASE WHEN ok THEN [1] ELSE [] END |\n  {}\n)\n",
            body.join("\n  ")
        ));
        text.push_str(&format!(
            "RETURN {this} IS NOT NULL AS found, prior.`id` AS prior_log, checks, ok, expired, before, after, keys\n}}\n\
             RETURN item.id AS id, item.log_id AS log_id, found, prior_log, checks, ok, expired, before, after, keys"
        ));

        let mut values = params.values;
        values.insert(
            "items".into(),
            Json::Array(
                items
                    .iter()
                    .map(|(id, log)| {
                        json!({"id": id, "log_id": log, "execution_key": execution_key(&self.action, &run.idempotency_key, id)})
                    })
                    .collect(),
            ),
        );
        values.insert("key".into(), json!(run.idempotency_key));
        values.insert("not_after".into(), json!(not_after_ms));
        values.insert(
            "action".into(),
            json!(format!("{}.{}", self.action.entity, self.action.name)),
        );
        values.insert("entity_type".into(), json!(self.action.entity));
        values.insert("action_name".into(), json!(self.action.name));
        values.insert(
            "parameters_json".into(),
            json!(Json::Object(run.parameters.clone()).to_string()),
        );
        values.insert("actor".into(), json!(run.actor));
        insert_run_values(&mut values, &run.parameters, &run.now);
        Statement {
            text,
            params: values,
        }
    }

    fn key_of(&self, binding: &str) -> String {
        if binding == "this" {
            self.entity.key.clone()
        } else {
            self.related_keys[binding].clone()
        }
    }
}

/// The values every statement of an action may refer to: `$p_<name>` for each action
/// parameter, `$now` and `$today`.
fn insert_run_values(values: &mut Map<String, Json>, parameters: &Map<String, Json>, now: &str) {
    values.insert("now".into(), json!(now));
    values.insert("today".into(), json!(now.get(..10).unwrap_or_default()));
    for (name, value) in parameters {
        values.insert(action_param(name)[1..].to_string(), value.clone());
    }
}

/// One entity's execution under one key: the action log's lookup key, so a repeated key
/// finds its record with one index seek, however many entities share the key.
pub fn execution_key(action: &ActionDef, idempotency_key: &str, entity_id: &str) -> String {
    format!(
        "{}.{}|{}|{}",
        action.entity,
        action.name,
        idempotency_key.len(),
        [idempotency_key, entity_id].concat()
    )
}

fn links(action: &ActionDef, binding: &str) -> bool {
    action.effects.iter().any(
        |e| matches!(&e.effect, Effect::Link { from, to, .. } if from == binding || to == binding),
    )
}

/// What one request shares across its chunks.
#[derive(Debug, Clone)]
pub struct RunContext {
    pub idempotency_key: String,
    pub parameters: Map<String, Json>,
    pub actor: Option<String>,
    /// RFC 3339.
    pub now: String,
}
