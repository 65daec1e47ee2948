//! The visibility policy: which labels, relationship types and properties may leave the
//! graph through kg-agent, to whom, and whether they may reach the LLM. Declared in the
//! graph profile file:
//!
//! ```toml
//! [labels.Employee.properties]
//! salary = { roles = ["admin"] }   # people with one of these roles (and the LLM on their behalf)
//! national_id = "hidden"           # nobody: never leaves the graph through kg-agent
//! home_address = "people"          # every caller, never the LLM
//! email = { roles = ["admin"], llm = false }
//!
//! [labels.AuditNote]
//! visibility = "hidden"            # the whole label: its nodes are absent from every answer
//!
//! [relationships.REPORTS_TO]
//! visibility = { roles = ["admin", "approver"] }
//! properties = { bonus = "hidden" }
//! ```
//!
//! A rule is `"visible"` (the default), `"hidden"`, `"people"` or a table of `roles` (who
//! may see it; all roles when absent) and `llm` (whether the model may be sent it on their
//! behalf; true when absent). With no rules at all every answer is as it was before
//! policies existed.
//!
//! What a caller may see is a [`View`]: the policy resolved for one [`Audience`] (the
//! caller's roles, and whether the answer goes to the model). Enforcement code asks the
//! view, never the rules.

use std::collections::{BTreeMap, BTreeSet};

/// The roles kg-agent's identity layer knows (kg-identity's `Role`); a rule naming another
/// is refused with its line, since it could never match anyone.
pub const KNOWN_ROLES: [&str; 4] = ["viewer", "operator", "approver", "admin"];

/// The action log's label and the relationship types that carry its recorded values
/// (kg-actions' log statements): under a policy that restricts anyone, the graph tools
/// treat them as hidden, since a change's `before` and `after` may be a hidden property's
/// value. The log is read through `GET /actions/log`, which withholds those per caller.
pub const ACTION_LOG_LABELS: [&str; 1] = ["ActionLog"];
pub const ACTION_LOG_TYPES: [&str; 2] = ["CHANGED", "UNDOES"];

/// One rule, as declared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    /// Who may see it: None for every role, else any one of these (empty: nobody).
    pub roles: Option<BTreeSet<String>>,
    /// Whether the model may be sent it (on behalf of a caller who may see it).
    pub llm: bool,
    /// The line it was declared on, for messages.
    pub line: usize,
}

impl Rule {
    /// True when the rule restricts anyone: not plain `"visible"`.
    pub fn restricts(&self) -> bool {
        self.roles.is_some() || !self.llm
    }

    /// Whether `audience` may see what this rule covers.
    pub fn allows(&self, audience: &Audience) -> bool {
        let role_ok = match &self.roles {
            None => true,
            Some(roles) => audience.roles.iter().any(|r| roles.contains(r)),
        };
        role_ok && (self.llm || !audience.for_model)
    }
}

/// The declared rules. Empty: no policy.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Policy {
    pub labels: BTreeMap<String, Rule>,
    /// Per label, per property.
    pub label_properties: BTreeMap<String, BTreeMap<String, Rule>>,
    pub types: BTreeMap<String, Rule>,
    /// Per relationship type, per property.
    pub type_properties: BTreeMap<String, BTreeMap<String, Rule>>,
}

/// Who an answer is for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Audience {
    pub roles: Vec<String>,
    /// True when the answer goes into the model's context.
    pub for_model: bool,
}

impl Default for Audience {
    /// Nobody in particular, for the model: the narrowest view, what a component sees
    /// before it is told who it answers (so forgetting to say cannot widen it).
    fn default() -> Self {
        Audience {
            roles: Vec::new(),
            for_model: true,
        }
    }
}

impl Policy {
    /// True when some rule restricts someone: only then do the guards refuse dynamic
    /// property access and the like.
    pub fn restricts_anything(&self) -> bool {
        let any = |m: &BTreeMap<String, Rule>| m.values().any(Rule::restricts);
        any(&self.labels)
            || any(&self.types)
            || self.label_properties.values().any(any)
            || self.type_properties.values().any(any)
    }

    /// The policy resolved for one audience.
    pub fn view(&self, audience: &Audience) -> View {
        let denied = |m: &BTreeMap<String, Rule>| -> BTreeSet<String> {
            m.iter()
                .filter(|(_, rule)| !rule.allows(audience))
                .map(|(name, _)| name.clone())
                .collect()
        };
        let denied_properties = |m: &BTreeMap<String, BTreeMap<String, Rule>>| {
            m.iter()
                .map(|(owner, rules)| (owner.clone(), denied(rules)))
                .filter(|(_, denied)| !denied.is_empty())
                .collect::<BTreeMap<_, _>>()
        };
        let restricts_anything = self.restricts_anything();
        let mut hidden_labels = denied(&self.labels);
        let mut hidden_types = denied(&self.types);
        if restricts_anything {
            hidden_labels.extend(ACTION_LOG_LABELS.map(String::from));
            hidden_types.extend(ACTION_LOG_TYPES.map(String::from));
        }
        View {
            hidden_labels,
            hidden_types,
            hidden_label_properties: denied_properties(&self.label_properties),
            hidden_type_properties: denied_properties(&self.type_properties),
            restricts_anything,
        }
    }
}

impl Rule {
    /// The rule as `GET /graph/policy` reports it.
    fn report(&self) -> serde_json::Value {
        let visibility = match (&self.roles, self.llm) {
            (Some(roles), _) if roles.is_empty() => "hidden",
            (None, false) => "people",
            (None, true) => "visible",
            (Some(_), true) => "roles",
            (Some(_), false) => "roles, never the LLM",
        };
        serde_json::json!({
            "visibility": visibility,
            "roles": self.roles,
            "llm": self.llm,
            "line": self.line,
        })
    }
}

impl Policy {
    /// The declared rules for admins (`GET /graph/policy`): each with its line, and what a
    /// policy hides besides (the action log's graph records).
    pub fn report(&self) -> serde_json::Value {
        let own = |rules: &BTreeMap<String, Rule>, key: &str| -> Vec<serde_json::Value> {
            rules
                .iter()
                .map(|(name, rule)| {
                    let mut r = rule.report();
                    r[key] = serde_json::json!(name);
                    r
                })
                .collect()
        };
        let properties = |rules: &BTreeMap<String, BTreeMap<String, Rule>>, key: &str| {
            rules
                .iter()
                .flat_map(|(owner, props)| {
                    props.iter().map(move |(property, rule)| {
                        let mut r = rule.report();
                        r[key] = serde_json::json!(owner);
                        r["property"] = serde_json::json!(property);
                        r
                    })
                })
                .collect::<Vec<_>>()
        };
        let restricts = self.restricts_anything();
        serde_json::json!({
            "restricts": restricts,
            "labels": own(&self.labels, "label"),
            "properties": properties(&self.label_properties, "label"),
            "relationship_types": own(&self.types, "type"),
            "relationship_properties": properties(&self.type_properties, "type"),
            "also_hidden": {
                "labels": if restricts { ACTION_LOG_LABELS.to_vec() } else { Vec::new() },
                "relationship_types": if restricts { ACTION_LOG_TYPES.to_vec() } else { Vec::new() },
            },
        })
    }
}

/// The policy as one audience sees it: what is withheld from it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct View {
    pub hidden_labels: BTreeSet<String>,
    pub hidden_types: BTreeSet<String>,
    pub hidden_label_properties: BTreeMap<String, BTreeSet<String>>,
    pub hidden_type_properties: BTreeMap<String, BTreeSet<String>>,
    /// The policy restricts someone (perhaps not this audience): dynamic property access
    /// is refused even to those who could see everything, so that what a query may do
    /// does not depend on who runs it in ways the tests cannot cover.
    pub restricts_anything: bool,
}

impl View {
    /// The view of no policy: everything visible.
    pub fn open() -> View {
        View::default()
    }

    /// True while the graph has a visibility policy that restricts someone (perhaps not
    /// this audience): read-only Cypher is then read by the guard's grammar.
    pub fn has_policy(&self) -> bool {
        self.restricts_anything || !self.is_open()
    }

    /// True when this audience is denied nothing.
    pub fn is_open(&self) -> bool {
        self.hidden_labels.is_empty()
            && self.hidden_types.is_empty()
            && self.hidden_label_properties.is_empty()
            && self.hidden_type_properties.is_empty()
    }

    pub fn label_visible(&self, label: &str) -> bool {
        !self.hidden_labels.contains(label)
    }

    pub fn type_visible(&self, rel_type: &str) -> bool {
        !self.hidden_types.contains(rel_type)
    }

    /// A node with these labels may be shown (none of them is hidden).
    pub fn node_visible<S: AsRef<str>>(&self, labels: &[S]) -> bool {
        labels.iter().all(|l| self.label_visible(l.as_ref()))
    }

    /// Whether property `name` of a node with these labels may be shown: hidden under any
    /// of its labels is hidden.
    pub fn node_property_visible<S: AsRef<str>>(&self, labels: &[S], name: &str) -> bool {
        !labels.iter().any(|l| {
            self.hidden_label_properties
                .get(l.as_ref())
                .is_some_and(|hidden| hidden.contains(name))
        })
    }

    pub fn relationship_property_visible(&self, rel_type: &str, name: &str) -> bool {
        !self
            .hidden_type_properties
            .get(rel_type)
            .is_some_and(|hidden| hidden.contains(name))
    }

    /// Whether property `name` is hidden on some label or type: a query naming it is
    /// refused, since a name in a query does not say whose property it reads.
    pub fn property_name_hidden(&self, name: &str) -> bool {
        self.hidden_label_properties
            .values()
            .chain(self.hidden_type_properties.values())
            .any(|hidden| hidden.contains(name))
    }

    /// Every hidden label, type and property name: what a query may not name.
    pub fn hidden_names(&self) -> BTreeSet<&str> {
        self.hidden_labels
            .iter()
            .chain(&self.hidden_types)
            .chain(self.hidden_label_properties.values().flatten())
            .chain(self.hidden_type_properties.values().flatten())
            .map(String::as_str)
            .collect()
    }

    /// The hidden labels as a Cypher predicate on variable `var`, None when none is
    /// hidden; the statement passes the labels as the parameter [`HIDDEN_LABELS_PARAMETER`]
    /// ([`View::hidden_labels_parameter`]). Written over `labels(var)` rather than as
    /// `NOT var:Label`: a label the graph does not have (the action log's, before any
    /// action ran) would make Neo4j warn about every statement.
    pub fn label_exclusion(&self, var: &str) -> Option<String> {
        if self.hidden_labels.is_empty() {
            return None;
        }
        Some(format!(
            "none(l IN labels({var}) WHERE l IN ${HIDDEN_LABELS_PARAMETER})"
        ))
    }

    /// The value of [`HIDDEN_LABELS_PARAMETER`] for [`View::label_exclusion`].
    pub fn hidden_labels_parameter(&self) -> serde_json::Value {
        serde_json::json!(self.hidden_labels)
    }
}

/// The parameter a statement using [`View::label_exclusion`] passes the hidden labels in.
pub const HIDDEN_LABELS_PARAMETER: &str = "hidden_labels";

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(roles: Option<&[&str]>, llm: bool) -> Rule {
        Rule {
            roles: roles.map(|r| r.iter().map(|s| s.to_string()).collect()),
            llm,
            line: 1,
        }
    }

    fn audience(roles: &[&str], for_model: bool) -> Audience {
        Audience {
            roles: roles.iter().map(|s| s.to_string()).collect(),
            for_model,
        }
    }

    #[test]
    fn the_report_lists_every_rule_with_its_line() {
        let declared = crate::Declared::parse(
            "[labels.E.properties]\nsalary = { roles = [\"admin\"] }\nid2 = \"hidden\"\n[relationships.T]\nvisibility = \"people\"\n",
        )
        .unwrap();
        let report = declared.policy.report();
        assert_eq!(report["restricts"], true);
        assert_eq!(
            report["properties"],
            serde_json::json!([
                {"label": "E", "property": "id2", "visibility": "hidden", "roles": [], "llm": false, "line": 3},
                {"label": "E", "property": "salary", "visibility": "roles", "roles": ["admin"], "llm": true, "line": 2},
            ])
        );
        assert_eq!(report["relationship_types"][0]["visibility"], "people");
        assert_eq!(
            report["also_hidden"]["labels"],
            serde_json::json!(["ActionLog"])
        );
        let none = Policy::default().report();
        assert_eq!(none["restricts"], false);
        assert_eq!(none["also_hidden"]["labels"], serde_json::json!([]));
    }

    #[test]
    fn a_rule_allows_its_roles_and_the_model_only_when_it_says_so() {
        let admin_only = rule(Some(&["admin"]), true);
        assert!(admin_only.allows(&audience(&["admin"], false)));
        assert!(admin_only.allows(&audience(&["viewer", "admin"], true)));
        assert!(!admin_only.allows(&audience(&["viewer"], false)));
        let people = rule(None, false);
        assert!(people.allows(&audience(&["viewer"], false)));
        assert!(!people.allows(&audience(&["admin"], true)));
        let hidden = rule(Some(&[]), false);
        assert!(!hidden.allows(&audience(&KNOWN_ROLES, false)));
        assert!(rule(None, true).allows(&Audience::default()));
        assert!(!rule(None, true).restricts());
        assert!(hidden.restricts() && people.restricts() && admin_only.restricts());
    }

    #[test]
    fn a_view_hides_per_label_and_type_and_names_what_a_query_may_not_name() {
        let mut policy = Policy::default();
        policy
            .label_properties
            .entry("Employee".into())
            .or_default()
            .insert("salary".into(), rule(Some(&["admin"]), true));
        policy.labels.insert("Audit".into(), rule(Some(&[]), false));
        policy
            .type_properties
            .entry("PAID".into())
            .or_default()
            .insert("memo".into(), rule(None, false));
        let viewer = policy.view(&audience(&["viewer"], false));
        assert!(!viewer.node_visible(&["Audit", "Note"]));
        assert!(viewer.node_visible(&["Employee"]));
        assert!(!viewer.node_property_visible(&["Person", "Employee"], "salary"));
        assert!(viewer.node_property_visible(&["Person"], "salary"));
        assert!(viewer.relationship_property_visible("PAID", "memo"));
        assert_eq!(
            viewer.hidden_names(),
            ["ActionLog", "Audit", "CHANGED", "UNDOES", "salary"]
                .into_iter()
                .collect()
        );
        let admin_model = policy.view(&audience(&["admin"], true));
        assert!(admin_model.node_property_visible(&["Employee"], "salary"));
        assert!(!admin_model.relationship_property_visible("PAID", "memo"));
        assert_eq!(
            admin_model.label_exclusion("n"),
            Some("none(l IN labels(n) WHERE l IN $hidden_labels)".into())
        );
        assert_eq!(
            admin_model.hidden_labels_parameter(),
            serde_json::json!(["ActionLog", "Audit"])
        );
        assert!(admin_model.restricts_anything && !admin_model.is_open());
        let none = Policy::default().view(&Audience::default());
        assert!(none.is_open() && !none.restricts_anything);
    }
}
