//! The Cypher of an action. One statement per chunk of entities (`UNWIND $items`) first
//! locks every node the chunk writes, all at once and in the global lock order
//! ([`LOCK_ORDER`], shared with undo), then checks the preconditions and applies the effects
//! of each entity inside a per-row `CALL (item, …) {}` subquery, so that:
//! - check and effect run in the same transaction, after the written nodes are locked
//!   (the `SET`/`REMOVE` of a scratch property takes Neo4j's write lock, and the read
//!   barrier of [`lock_in_order`] keeps every read after it), so two concurrent executions
//!   cannot both pass a check on the same entity, and two statements that share nodes wait
//!   for each other instead of deadlocking;
//! - a later row sees the writes of earlier rows (a `CALL` subquery execution observes the
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

    /// Binds `this` (by key from `id_expr`) and the related entities, one row per entity
    /// found (a row with `this` null when none is), like an `OPTIONAL MATCH` would.
    ///
    /// Why subqueries and not `OPTIONAL MATCH` or pattern comprehensions: every lookup here
    /// must be an index seek per row on every Cypher engine. devgraph's engine (Grafeo)
    /// plans an `OPTIONAL MATCH` whose key comes from an outer variable as a scan of the
    /// whole label joined afterwards, so each chunk cost O(size of the graph) and 1,000
    /// payments slowed down with every batch paid before; a `MATCH` inside `CALL (…) {}`
    /// seeks the index in both Neo4j and Grafeo. An aggregating subquery always yields one
    /// row, so a missing entity still gets its row (with `[]`, unwound to a null `this`).
    fn match_entities(&self, id_expr: &str, carried: &str) -> String {
        let e = &self.entity;
        let this = variable("this");
        let mut text = format!(
            "CALL ({carried}) {{\nMATCH (_entity:{} {{{}: {id_expr}}})\nRETURN collect(_entity) AS _found\n}}\n\
             UNWIND CASE WHEN size(_found) = 0 THEN [null] ELSE _found END AS {this}\n",
            quote(&e.label),
            quote(&e.key)
        );
        for name in &self.related {
            let r = &e.related[name];
            let (left, right) = if r.outgoing { ("-", "->") } else { ("<-", "-") };
            text.push_str(&format!(
                "CALL ({this}) {{\nMATCH ({this}){left}[:{}]{right}(r:{})\nRETURN head(collect(r)) AS {}\n}}\n",
                quote(&r.rel_type),
                quote(&r.entity),
                variable(name)
            ));
        }
        text.push_str(&format!("WITH {}\n", self.bound(carried)));
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
    /// `parameters` are the resolved action parameters; `now` is RFC 3339; `actor` is the
    /// caller's subject (`caller()`).
    pub fn validate_statement(
        &self,
        ids: &[String],
        parameters: &Map<String, Json>,
        now: &str,
        actor: &str,
    ) -> Statement {
        let mut params = self.base_params.values.clone();
        params.insert("ids".into(), json!(ids));
        insert_run_values(&mut params, parameters, now, Some(actor));
        let text = format!(
            "UNWIND $ids AS id\n{}RETURN id, {} IS NOT NULL AS found, {} AS checks",
            self.match_entities("id", "id"),
            variable("this"),
            self.checks_list()
        );
        Statement { text, params }
    }

    /// The write: lock what every item `{id, log_id}` writes (in [`LOCK_ORDER`]), then per
    /// item look up a prior execution under the same key, check, apply, log. `run` holds the parameters shared by the whole request;
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

        // Phase 1, for the whole chunk: find every item's entities, then lock all the nodes
        // the chunk writes at once, in the global lock order (see `lock_in_order`). Locking
        // row by row instead would take two chunks' common nodes in opposite orders.
        let mut text = String::from("UNWIND $items AS item\n");
        text.push_str(&self.match_entities("item.id", "item"));
        let bound = self.bound("item");
        let names: Vec<String> = std::iter::once("item".to_string())
            .chain(std::iter::once(this.clone()))
            .chain(self.related.iter().map(|r| variable(r)))
            .collect();
        let row: Vec<String> = names.iter().map(|n| format!("{n}: {n}")).collect();
        text.push_str(&format!("WITH collect({{{}}}) AS rows\n", row.join(", ")));
        let written: Vec<String> = self
            .locked_bindings()
            .iter()
            .map(|b| format!("row.{}", variable(b)))
            .collect();
        text.push_str(&lock_in_order(
            "rows",
            &format!(
                "UNWIND rows AS row\nUNWIND [{}] AS node",
                written.join(", ")
            ),
            "rows",
        ));

        // Phase 2, item by item, in request order. A variable scope clause (`CALL (…)`), not
        // an importing `WITH`: Neo4j 5.23+ deprecates the latter.
        let unpacked: Vec<String> = names.iter().map(|n| format!("row.{n} AS {n}")).collect();
        text.push_str(&format!(
            "UNWIND rows AS row\nWITH {}\nCALL ({bound}) {{\n",
            unpacked.join(", ")
        ));
        // A prior execution under the same key, by an index seek (see `match_entities` for
        // why not `OPTIONAL MATCH`).
        text.push_str(
            "CALL (item) {\nMATCH (prior:`ActionLog` {`execution_key`: item.execution_key})\n\
             RETURN head(collect(prior)) AS prior\n}\n",
        );

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
        insert_run_values(&mut values, &run.parameters, &run.now, run.actor.as_deref());
        Statement {
            text,
            params: values,
        }
    }

    /// The existing entities an execution writes, hence locks: `this` (the log links to it),
    /// every binding a `set` changes and every entity a `link` touches (creating a
    /// relationship locks both ends). Nodes the action creates are new: nobody else can
    /// hold them.
    fn locked_bindings(&self) -> std::collections::BTreeSet<String> {
        let mut bindings = self.action.written_bindings();
        bindings.insert("this".to_string());
        for effect in &self.action.effects {
            if let Effect::Link { from, to, .. } = &effect.effect {
                for end in [from, to] {
                    if end == "this" || self.related.contains(end) {
                        bindings.insert(end.clone());
                    }
                }
            }
        }
        bindings
    }

    fn key_of(&self, binding: &str) -> String {
        if binding == "this" {
            self.entity.key.clone()
        } else {
            self.related_keys[binding].clone()
        }
    }
}

/// # The global lock order
///
/// Every write statement of the executor (an action's chunk, single or batched, an undo)
/// takes the write locks it needs **before reading anything it decides on**, and takes
/// them **all at once, in one global order**:
///
/// 1. `ActionLog` entries first (an undo's point of contention with another undo of the
///    same entry: the loser waits holding nothing else);
/// 2. then every other node by its label (`head(labels(n))`, the entity type: `Account`,
///    then `PurchaseOrder`, then `Supplier`…);
/// 3. then by `elementId(n)` (a total order that needs no property read before the lock
///    and means the same to every statement).
///
/// Two statements that lock overlapping sets of nodes therefore take their common nodes
/// in the same order, so they cannot wait on each other in a cycle: one waits for the other
/// instead of both being aborted as a deadlock. The order is a property of the node alone,
/// so it holds across different actions and between execute and undo. A statement that
/// locks in two phases (undo: the entry, then what the entry tells it to revert) keeps it
/// because every node of the second phase comes later in the order than the first's.
/// Approvals (`approval::decide_statement`) lock one node and nothing else, which cannot
/// break the order.
///
/// Neo4j takes a node's write lock when a statement first writes it; a `SET` and `REMOVE`
/// of a scratch property ([`LOCK_PROPERTY`]) writes every node of the sorted list in list
/// order, leaving no trace.
pub const LOCK_ORDER: &str =
    "CASE WHEN node:`ActionLog` THEN 0 ELSE 1 END, head(labels(node)), elementId(node)";

/// The name of the read barrier's column; see [`lock_in_order`].
pub const READ_BARRIER: &str = "count(*) AS _locked";

/// Locks the nodes `nodes` yields (Cypher run inside a `CALL ({scope})` subquery that binds
/// `node` per row; nulls and repeats are dropped) in the [`LOCK_ORDER`], then passes `carried`
/// on through the read barrier.
///
/// The barrier, `WITH {carried}, count(*) AS _locked`, is an aggregation: it yields nothing
/// until every row before it has taken its locks, and the rows after it reach the locked
/// nodes again through variables, not through values read before (Neo4j's planner may
/// otherwise read and cache a property as early as the match that found the node). It is
/// what makes "lock, then read" true: **do not remove or "simplify" it** — without it a
/// check could read a balance or a status before the lock and let two concurrent
/// statements both pass it. `tests/lock_order.rs` fails if it goes.
///
/// Repeats are dropped by `collect(DISTINCT …)` after the sort (a node's repeats sort
/// together, and the first of each is kept in order), not by a `WITH DISTINCT` before it:
/// inside a subquery that imports a list (`rows`), devgraph's engine compares that list
/// with every row, which made locking a chunk of n entities cost O(n²).
pub fn lock_in_order(scope: &str, nodes: &str, carried: &str) -> String {
    let lock = quote(LOCK_PROPERTY);
    format!(
        "CALL ({scope}) {{\n{nodes}\n\
         WITH node WHERE node IS NOT NULL\n\
         WITH node ORDER BY {LOCK_ORDER}\n\
         RETURN collect(DISTINCT node) AS _ordered\n}}\n\
         FOREACH (n IN _ordered | SET n.{lock} = true REMOVE n.{lock})\n\
         WITH {carried}, {READ_BARRIER}\n"
    )
}

/// The values every statement of an action may refer to: `$p_<name>` for each action
/// parameter, `$now`, `$today` and `$actor` (the caller's subject: `caller()`, and the
/// action log's actor).
fn insert_run_values(
    values: &mut Map<String, Json>,
    parameters: &Map<String, Json>,
    now: &str,
    actor: Option<&str>,
) {
    values.insert("now".into(), json!(now));
    values.insert("actor".into(), json!(actor));
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
