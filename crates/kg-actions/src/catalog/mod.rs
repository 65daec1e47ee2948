//! The action catalog: entity types (label, key property, typed properties, named related
//! entities) and actions (parameters, preconditions, effects, approval), loaded from TOML
//! and validated as a whole before anything runs. The format is documented in
//! `catalog/README.md` at the repository root.

mod load;
mod params;

pub use load::{CatalogError, LOCK_PROPERTY, RESERVED_LABELS, load};
pub use params::resolve_parameters;

use crate::expr::{Effect, Expr, ValueType};
use serde_json::Value as Json;
use std::collections::{BTreeMap, BTreeSet};

#[derive(Debug, Clone)]
pub struct Catalog {
    pub entities: BTreeMap<String, EntityDef>,
    pub actions: Vec<ActionDef>,
}

#[derive(Debug, Clone)]
pub struct EntityDef {
    /// The node label, also the entity type's name.
    pub label: String,
    /// The property that identifies an instance (`id`).
    pub key: String,
    pub properties: BTreeMap<String, ValueType>,
    /// Name → a related entity reached over one relationship.
    pub related: BTreeMap<String, Related>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Related {
    pub entity: String,
    pub rel_type: String,
    /// True for `(this)-[:T]->(other)`, false for `(this)<-[:T]-(other)`.
    pub outgoing: bool,
}

#[derive(Debug, Clone)]
pub struct ParamDef {
    pub name: String,
    pub value_type: ValueType,
    pub description: String,
    pub required: bool,
    pub default: Option<Json>,
    pub minimum: Option<f64>,
    pub maximum: Option<f64>,
    pub allowed_values: Vec<String>,
}

#[derive(Debug, Clone)]
pub struct Precondition {
    pub name: String,
    pub source: String,
    pub expr: Expr,
    pub message: String,
}

#[derive(Debug, Clone)]
pub struct EffectDef {
    pub source: String,
    pub effect: Effect,
}

#[derive(Debug, Clone)]
pub struct ActionDef {
    pub entity: String,
    pub name: String,
    pub description: String,
    pub requires_approval: bool,
    /// Who may run it; empty = every role with `actions:execute`.
    pub roles: Vec<kg_identity::Role>,
    /// Most entities per request for a role; roles not listed are not narrowed.
    pub batch_limits: BTreeMap<kg_identity::Role, u32>,
    /// Four-eyes: the approver must be another subject than the requester.
    pub four_eyes: bool,
    pub parameters: Vec<ParamDef>,
    pub preconditions: Vec<Precondition>,
    pub effects: Vec<EffectDef>,
}

impl Catalog {
    pub fn action(&self, entity: &str, name: &str) -> Option<&ActionDef> {
        self.actions
            .iter()
            .find(|a| a.entity == entity && a.name == name)
    }

    pub fn entity(&self, label: &str) -> Option<&EntityDef> {
        self.entities.get(label)
    }
}

/// The index DDL the executor's entity lookups need (standard Neo4j 5 syntax, idempotent):
/// each entity type's key. Entity keys are the business's data, so they get a plain index,
/// not a uniqueness constraint that existing duplicates would make fail.
pub fn index_statements(catalog: &Catalog) -> Vec<String> {
    catalog
        .entities
        .values()
        .map(|e| index_ddl(&index_name(&e.label, &e.key), &e.label, &e.key))
        .collect()
}

/// A uniqueness constraint the executor's own nodes need: it makes a duplicate an error
/// (`Neo.ClientError.Schema.ConstraintValidationFailed`, rolled back) instead of a second
/// node, whatever a statement's locks do, and its backing index serves the lookups.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UniqueKey {
    pub label: &'static str,
    pub property: &'static str,
    /// `CREATE CONSTRAINT … IF NOT EXISTS … REQUIRE … IS UNIQUE`.
    pub constraint: String,
    /// Earlier versions created a plain index on the same property, and Neo4j refuses the
    /// constraint while it exists: dropped first when the constraint is refused.
    pub drop_legacy_index: String,
    /// The plain index again, for when the constraint cannot be created (duplicates in
    /// the graph already): lookups stay fast while the duplicates are sorted out.
    pub legacy_index: String,
}

/// The action log's id and execution key (the idempotency key of one entity's
/// execution: at most one log entry may hold it) and the approvals' id (the token's hash).
pub fn unique_keys() -> Vec<UniqueKey> {
    [
        ("ActionLog", "id"),
        ("ActionLog", "execution_key"),
        ("ActionApproval", "id"),
    ]
    .into_iter()
    .map(|(label, property)| {
        let legacy = index_name(label, property);
        UniqueKey {
            label,
            property,
            constraint: format!(
                "CREATE CONSTRAINT {} IF NOT EXISTS FOR (n:{}) REQUIRE n.{} IS UNIQUE",
                crate::expr::quote(&format!("{legacy}_unique")),
                crate::expr::quote(label),
                crate::expr::quote(property)
            ),
            drop_legacy_index: format!("DROP INDEX {} IF EXISTS", crate::expr::quote(&legacy)),
            legacy_index: index_ddl(&legacy, label, property),
        }
    })
    .collect()
}

fn index_name(label: &str, property: &str) -> String {
    format!("kg_{}_{}", label.to_lowercase(), property.to_lowercase())
}

fn index_ddl(name: &str, label: &str, property: &str) -> String {
    format!(
        "CREATE INDEX {} IF NOT EXISTS FOR (n:{}) ON (n.{})",
        crate::expr::quote(name),
        crate::expr::quote(label),
        crate::expr::quote(property)
    )
}

impl ActionDef {
    /// The related entities the action's expressions mention, in name order.
    pub fn related_used(&self) -> BTreeSet<String> {
        let mut used = BTreeSet::new();
        for p in &self.preconditions {
            bindings_in(&p.expr, &mut used);
        }
        for e in &self.effects {
            match &e.effect {
                Effect::Set { binding, value, .. } => {
                    used.insert(binding.clone());
                    bindings_in(value, &mut used);
                }
                Effect::Create { properties, .. } => {
                    for (_, v) in properties {
                        bindings_in(v, &mut used);
                    }
                }
                Effect::Link { from, to, .. } => {
                    used.insert(from.clone());
                    used.insert(to.clone());
                }
            }
        }
        // `this` and created nodes are not related entities.
        let created: BTreeSet<String> = self.created_names().collect();
        used.retain(|b| b != "this" && !created.contains(b));
        used
    }

    pub fn created_names(&self) -> impl Iterator<Item = String> + '_ {
        self.effects.iter().filter_map(|e| match &e.effect {
            Effect::Create { name, .. } => Some(name.clone()),
            _ => None,
        })
    }

    /// `(binding, property, value)` of every `set`, in declaration order.
    pub fn sets(&self) -> impl Iterator<Item = (&str, &str, &Expr)> {
        self.effects.iter().filter_map(|e| match &e.effect {
            Effect::Set {
                binding,
                property,
                value,
                ..
            } => Some((binding.as_str(), property.as_str(), value)),
            _ => None,
        })
    }

    /// The entities the action writes (so they are locked before anything is read).
    pub fn written_bindings(&self) -> BTreeSet<String> {
        self.sets().map(|(b, _, _)| b.to_string()).collect()
    }
}

fn bindings_in(expr: &Expr, out: &mut BTreeSet<String>) {
    match expr {
        Expr::Property { binding, .. } | Expr::Exists(binding, _) => {
            out.insert(binding.clone());
        }
        Expr::Not(e, _) | Expr::Neg(e, _) => bindings_in(e, out),
        Expr::IsNull { expr, .. } | Expr::In { expr, .. } => bindings_in(expr, out),
        Expr::Binary { left, right, .. } => {
            bindings_in(left, out);
            bindings_in(right, out);
        }
        Expr::Literal(_) | Expr::Param(..) | Expr::Now | Expr::Today | Expr::Caller => {}
    }
}

/// True for `set x.p = x.p + e` / `x.p - e`: a relative change, undone by its inverse
/// (a balance that moved since is still restored correctly).
pub fn is_delta(binding: &str, property: &str, value: &Expr) -> bool {
    matches!(value, Expr::Binary { op: crate::expr::BinaryOp::Add | crate::expr::BinaryOp::Sub, left, .. }
        if matches!(&**left, Expr::Property { binding: b, property: p, .. } if b == binding && p == property))
}
