//! The declared profile file (`catalog/graph-profile.toml`). Format:
//!
//! ```toml
//! [labels.Airport]
//! key = "iata"                 # or ["country", "code"] for a node key; optional
//! caption = "name"             # optional
//! text = ["name", "city"]      # optional; the properties search looks in
//! description = "An airport."  # optional
//! visibility = "visible"       # optional; and per property, see crate::policy
//! properties = { salary = "hidden" }
//!
//! [relationships.REPORTS_TO]    # optional; visibility of a type and its properties
//! visibility = { roles = ["admin"] }
//! ```
//!
//! Validated like the action catalog: an unknown field, a wrong type, an empty or
//! control-character name, an empty key list or a repeated property is refused with the
//! line it is on.

use crate::policy::{KNOWN_ROLES, Policy, Rule};
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;
use toml::Spanned;
use toml::de::{DeTable, DeValue, ValueDeserializer};

/// Longest label or property name accepted (Neo4j's own limit is far higher; a name this
/// long is a mistake).
const MAX_NAME_CHARS: usize = 256;

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("graph profile line {line}: {message}")]
pub struct ProfileError {
    pub line: usize,
    pub message: String,
}

/// One declared label.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DeclaredLabel {
    pub key: Vec<String>,
    pub caption: Option<String>,
    pub text: Vec<String>,
    pub description: Option<String>,
    /// The line of its `[labels.X]` table, for messages about it.
    pub line: usize,
}

/// The declared file, validated.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Declared {
    pub labels: BTreeMap<String, DeclaredLabel>,
    /// The visibility rules of labels, relationship types and properties (empty: none).
    pub policy: Policy,
}

impl Declared {
    /// The file's text, validated as the module documentation says; an empty text (or
    /// one of comments only) declares nothing. The first problem found is the error.
    pub fn parse(text: &str) -> Result<Declared, ProfileError> {
        let lines = LineIndex::new(text);
        // Parsed to spanned values first, then each label on its own: a type error inside
        // a label can then be reported with the label (and field) it is in, which a
        // single `toml::from_str` into nested structs cannot tell.
        let root = DeTable::parse(text).map_err(|e| ProfileError {
            line: e.span().map_or(1, |s| lines.line(s.start)),
            message: e.message().trim().to_string(),
        })?;
        let mut labels = BTreeMap::new();
        let mut policy = Policy::default();
        for (key, value) in root.into_inner() {
            let section = key.get_ref().as_ref();
            if section != "labels" && section != "relationships" {
                return Err(ProfileError {
                    line: lines.line(key.span().start),
                    message: format!(
                        "unknown field `{}`, expected `labels` or `relationships`",
                        shown(key.get_ref())
                    ),
                });
            }
            let line = lines.line(value.span().start);
            let DeValue::Table(table) = value.into_inner() else {
                return Err(ProfileError {
                    line,
                    message: format!(
                        "`{section}` must be a table, one `[{section}.Name]` per {}",
                        if section == "labels" { "label" } else { "type" }
                    ),
                });
            };
            for (name, value) in table {
                let name = name.into_inner().into_owned();
                if section == "labels" {
                    let (entry, rules) = label_entry(&name, value, &lines)?;
                    rules.insert_into(&name, &mut policy.labels, &mut policy.label_properties);
                    labels.insert(name, entry);
                } else {
                    let rules = type_entry(&name, value, &lines)?;
                    rules.insert_into(&name, &mut policy.types, &mut policy.type_properties);
                }
            }
        }
        Ok(Declared { labels, policy })
    }

    /// Warnings for a graph with these labels: each declared label the graph does not
    /// have (a typo, or data not loaded yet), with its line. Not errors: the graph may
    /// gain the label later.
    pub fn warnings(&self, graph_labels: &[String]) -> Vec<String> {
        self.labels
            .iter()
            .filter(|(label, _)| !graph_labels.contains(label))
            .map(|(label, d)| {
                format!(
                    "graph profile line {}: label `{label}` is not in the graph",
                    d.line
                )
            })
            .collect()
    }

    /// Warnings about the visibility policy for a graph with these relationship types and
    /// property keys: each type or property a rule names that the graph does not have (a
    /// typo hides nothing), with its line. Labels are [`Declared::warnings`]' (a label with
    /// rules is a declared label).
    pub fn policy_warnings(
        &self,
        graph_types: &[String],
        graph_properties: &[String],
    ) -> Vec<String> {
        let mut warnings = self.type_warnings(graph_types);
        let mut properties: BTreeMap<&str, usize> = BTreeMap::new();
        for rules in self
            .policy
            .label_properties
            .values()
            .chain(self.policy.type_properties.values())
        {
            for (property, rule) in rules {
                let line = properties.entry(property).or_insert(rule.line);
                *line = (*line).min(rule.line);
            }
        }
        warnings.extend(
            properties
                .into_iter()
                .filter(|(property, _)| !graph_properties.iter().any(|p| p == property))
                .map(|(property, line)| {
                    format!("graph profile line {line}: property `{property}` is not in the graph")
                }),
        );
        warnings
    }

    fn type_warnings(&self, graph_types: &[String]) -> Vec<String> {
        let mut lines: BTreeMap<&str, usize> = BTreeMap::new();
        for (rel_type, rule) in &self.policy.types {
            lines.insert(rel_type, rule.line);
        }
        for (rel_type, rules) in &self.policy.type_properties {
            let line = rules.values().map(|r| r.line).min().unwrap_or(1);
            let entry = lines.entry(rel_type).or_insert(line);
            *entry = (*entry).min(line);
        }
        lines
            .into_iter()
            .filter(|(rel_type, _)| !graph_types.iter().any(|t| t == rel_type))
            .map(|(rel_type, line)| {
                format!(
                    "graph profile line {line}: relationship type `{rel_type}` is not in the graph"
                )
            })
            .collect()
    }

    /// Disagreements with the action catalog, whose entities each name a label and its
    /// key property: an entity whose label the file keys by another property. Each is
    /// an error message naming the label, both keys and the file's line.
    pub fn disagreements_with_catalog(&self, entity_keys: &[(String, String)]) -> Vec<String> {
        entity_keys
            .iter()
            .filter_map(|(label, catalog_key)| {
                let declared = self.labels.get(label)?;
                if declared.key.is_empty() || declared.key == [catalog_key.clone()] {
                    return None;
                }
                Some(format!(
                    "graph profile line {}: `{label}` is keyed by `{}` here but by `{catalog_key}` in the action catalog",
                    declared.line,
                    declared.key.join("`, `")
                ))
            })
            .collect()
    }
}

/// One `[labels.Name]` table as written. Spanned where a later check needs the line.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LabelFile {
    key: Option<Spanned<KeyFile>>,
    caption: Option<Spanned<String>>,
    text: Option<Vec<Spanned<String>>>,
    description: Option<String>,
    visibility: Option<Spanned<RuleFile>>,
    properties: Option<BTreeMap<String, Spanned<RuleFile>>>,
}

/// One `[relationships.TYPE]` table as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TypeFile {
    visibility: Option<Spanned<RuleFile>>,
    properties: Option<BTreeMap<String, Spanned<RuleFile>>>,
}

/// A visibility rule as written (`crate::policy`).
#[derive(Deserialize)]
#[serde(
    untagged,
    expecting = "\"visible\", \"hidden\", \"people\" or a table of `roles` and `llm`"
)]
enum RuleFile {
    Word(String),
    Table(RuleTable),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleTable {
    roles: Option<Vec<String>>,
    llm: Option<bool>,
}

/// The rules of one label or type: its own (None: visible) and its properties'.
struct OwnerRules {
    own: Option<Rule>,
    properties: BTreeMap<String, Rule>,
}

impl OwnerRules {
    /// Into the policy; a plain `"visible"` is not kept, so that a file of only those is
    /// no policy at all.
    fn insert_into(
        self,
        owner: &str,
        own: &mut BTreeMap<String, Rule>,
        properties: &mut BTreeMap<String, BTreeMap<String, Rule>>,
    ) {
        if let Some(rule) = self.own.filter(Rule::restricts) {
            own.insert(owner.to_string(), rule);
        }
        let restricted: BTreeMap<String, Rule> = self
            .properties
            .into_iter()
            .filter(|(_, r)| r.restricts())
            .collect();
        if !restricted.is_empty() {
            properties.insert(owner.to_string(), restricted);
        }
    }
}

/// A rule, validated; `what` names its place for messages (`` `Employee`.properties.salary ``).
fn rule_of(
    what: &str,
    spanned: Spanned<RuleFile>,
    lines: &LineIndex,
) -> Result<Rule, ProfileError> {
    let line = lines.line(spanned.span().start);
    let fail = |message: String| ProfileError { line, message };
    match spanned.into_inner() {
        RuleFile::Word(word) => {
            let (roles, llm) = match word.as_str() {
                "visible" => (None, true),
                "hidden" => (Some(BTreeSet::new()), false),
                "people" => (None, false),
                other => {
                    return Err(fail(format!(
                        "{what}: `{}` is not a visibility (\"visible\", \"hidden\", \"people\" or a table of `roles` and `llm`)",
                        shown(other)
                    )));
                }
            };
            Ok(Rule { roles, llm, line })
        }
        RuleFile::Table(table) => {
            let roles = match table.roles {
                None => None,
                Some(roles) => {
                    for role in &roles {
                        if !KNOWN_ROLES.contains(&role.as_str()) {
                            return Err(fail(format!(
                                "{what}: unknown role `{}` (roles: {})",
                                shown(role),
                                KNOWN_ROLES.join(", ")
                            )));
                        }
                    }
                    Some(roles.into_iter().collect())
                }
            };
            Ok(Rule {
                roles,
                llm: table.llm.unwrap_or(true),
                line,
            })
        }
    }
}

/// A label's or type's own rule and its properties' rules, validated.
fn owner_rules(
    owner: &str,
    visibility: Option<Spanned<RuleFile>>,
    properties: Option<BTreeMap<String, Spanned<RuleFile>>>,
    lines: &LineIndex,
) -> Result<OwnerRules, ProfileError> {
    let own = visibility
        .map(|v| rule_of(&format!("`{}`.visibility", shown(owner)), v, lines))
        .transpose()?;
    let mut rules = BTreeMap::new();
    for (property, spanned) in properties.unwrap_or_default() {
        let what = format!("`{}`.properties.{}", shown(owner), shown(&property));
        let line = lines.line(spanned.span().start);
        check_name("property", &property).map_err(|m| ProfileError {
            line,
            message: format!("{what}: {m}"),
        })?;
        rules.insert(property, rule_of(&what, spanned, lines)?);
    }
    Ok(OwnerRules {
        own,
        properties: rules,
    })
}

/// One `[relationships.TYPE]` table, validated.
fn type_entry(
    rel_type: &str,
    value: Spanned<DeValue<'_>>,
    lines: &LineIndex,
) -> Result<OwnerRules, ProfileError> {
    let line = lines.line(value.span().start);
    check_name("relationship type", rel_type).map_err(|message| ProfileError { line, message })?;
    let entry =
        TypeFile::deserialize(ValueDeserializer::from(value)).map_err(|e| ProfileError {
            line: e.span().map_or(line, |s| lines.line(s.start)),
            message: format!("`{}`: {}", shown(rel_type), e.message().trim()),
        })?;
    owner_rules(rel_type, entry.visibility, entry.properties, lines)
}

#[derive(Deserialize)]
#[serde(untagged, expecting = "a property name or a list of property names")]
enum KeyFile {
    One(String),
    Many(Vec<String>),
}

/// One label's table, validated; `value` is what `[labels.<label>]` holds.
fn label_entry(
    label: &str,
    value: Spanned<DeValue<'_>>,
    lines: &LineIndex,
) -> Result<(DeclaredLabel, OwnerRules), ProfileError> {
    let line = lines.line(value.span().start);
    let fail = |line: usize, message: String| ProfileError { line, message };
    check_name("label", label).map_err(|m| fail(line, m))?;
    let Some(table) = value.get_ref().as_table() else {
        return Err(fail(
            line,
            format!(
                "`{}` must be a table (of `key`, `caption`, `text`, `description`, `visibility` and `properties`)",
                shown(label)
            ),
        ));
    };
    // Where each field's value lies, so that a type error names its field.
    let fields: Vec<(String, Range<usize>)> = table
        .iter()
        .map(|(k, v)| (k.get_ref().to_string(), v.span()))
        .collect();
    let entry = LabelFile::deserialize(ValueDeserializer::from(value)).map_err(|e| {
        let span = e.span();
        let message = e.message().trim();
        // An unknown field's message names it already.
        let field = span
            .as_ref()
            .filter(|_| !message.starts_with("unknown field"))
            .and_then(|s| fields.iter().find(|(_, r)| r.contains(&s.start)));
        fail(
            span.map_or(line, |s| lines.line(s.start)),
            match field {
                Some((field, _)) => format!("`{}`.{}: {message}", shown(label), shown(field)),
                None => format!("`{}`: {message}", shown(label)),
            },
        )
    })?;

    let key = match entry.key {
        None => Vec::new(),
        Some(spanned) => {
            let key_line = lines.line(spanned.span().start);
            let key = match spanned.into_inner() {
                KeyFile::One(one) => vec![one],
                KeyFile::Many(many) => many,
            };
            if key.is_empty() {
                return Err(fail(
                    key_line,
                    format!("`{}`.key must name at least one property", shown(label)),
                ));
            }
            for (i, name) in key.iter().enumerate() {
                check_property(label, "key", name, &key[..i]).map_err(|m| fail(key_line, m))?;
            }
            key
        }
    };
    let caption = match entry.caption {
        None => None,
        Some(spanned) => {
            check_name("property", spanned.get_ref()).map_err(|m| {
                fail(
                    lines.line(spanned.span().start),
                    format!("`{}`.caption: {m}", shown(label)),
                )
            })?;
            Some(spanned.into_inner())
        }
    };
    let mut text: Vec<String> = Vec::new();
    for spanned in entry.text.unwrap_or_default() {
        check_property(label, "text", spanned.get_ref(), &text)
            .map_err(|m| fail(lines.line(spanned.span().start), m))?;
        text.push(spanned.into_inner());
    }
    let rules = owner_rules(label, entry.visibility, entry.properties, lines)?;
    // A key, caption or searched property names and finds instances in every answer: were
    // it restricted, search and look-ups would be an oracle for its value.
    for (property, rule) in rules.properties.iter().filter(|(_, r)| r.restricts()) {
        let role = if key.contains(property) {
            "key"
        } else if caption.as_ref() == Some(property) {
            "caption"
        } else if text.contains(property) {
            "text"
        } else {
            continue;
        };
        return Err(fail(
            rule.line,
            format!(
                "`{}`.properties.{}: a {role} property cannot be restricted (it names or finds instances in every answer)",
                shown(label),
                shown(property)
            ),
        ));
    }
    let declared = DeclaredLabel {
        key,
        caption,
        text,
        // A blank description says nothing; None lets the caller fall back to another.
        description: entry.description.filter(|d| !d.trim().is_empty()),
        line,
    };
    Ok((declared, rules))
}

/// One property of a label's `key` or `text` list, given the ones before it.
fn check_property(label: &str, field: &str, name: &str, before: &[String]) -> Result<(), String> {
    check_name("property", name).map_err(|m| format!("`{}`.{field}: {m}", shown(label)))?;
    if before.iter().any(|b| b == name) {
        return Err(format!(
            "`{}`.{field}: property `{}` is named twice",
            shown(label),
            shown(name)
        ));
    }
    Ok(())
}

/// A label or property name as the file may give it; `kind` says which, for the message.
fn check_name(kind: &str, name: &str) -> Result<(), String> {
    if name.trim().is_empty() {
        return Err(format!("{kind} names must not be empty or blank"));
    }
    if name.chars().count() > MAX_NAME_CHARS {
        return Err(format!(
            "{kind} `{}` is longer than {MAX_NAME_CHARS} characters",
            shown(name)
        ));
    }
    if name.chars().any(char::is_control) {
        return Err(format!("{kind} `{}` has a control character", shown(name)));
    }
    Ok(())
}

/// A name as a message shows it: control characters escaped (a message is one line) and
/// cut short, since an over-long name is itself the mistake being reported.
fn shown(name: &str) -> String {
    const SHOWN_CHARS: usize = 40;
    let mut out = String::new();
    for c in name.chars().take(SHOWN_CHARS) {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    if name.chars().nth(SHOWN_CHARS).is_some() {
        out.push('…');
    }
    out
}

/// Byte offsets to 1-based line numbers.
struct LineIndex(Vec<usize>);

impl LineIndex {
    fn new(text: &str) -> Self {
        LineIndex(
            std::iter::once(0)
                .chain(text.match_indices('\n').map(|(i, _)| i + 1))
                .collect(),
        )
    }

    fn line(&self, offset: usize) -> usize {
        self.0.partition_point(|&start| start <= offset).max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_profile_parses_with_its_lines() {
        let d = Declared::parse(
            "# airports\n\n[labels.Airport]\nkey = \"icao\"\ncaption = \"name\"\ntext = [\"name\", \"iata\"]\ndescription = \"An airport.\"\n\n[labels.City]\nkey = [\"country\", \"name\"]\n",
        )
        .unwrap();
        let airport = &d.labels["Airport"];
        assert_eq!(airport.key, vec!["icao"]);
        assert_eq!(airport.caption.as_deref(), Some("name"));
        assert_eq!(airport.text, vec!["name", "iata"]);
        assert_eq!(airport.description.as_deref(), Some("An airport."));
        assert_eq!(airport.line, 3);
        let city = &d.labels["City"];
        assert_eq!(city.key, vec!["country", "name"]);
        assert_eq!(city.caption, None);
        assert_eq!(city.text, Vec::<String>::new());
        assert_eq!(city.description, None);
        assert_eq!(city.line, 9);
    }

    #[test]
    fn an_empty_file_declares_nothing() {
        for text in ["", "\n\n", "# only a comment\n", "[labels]\n"] {
            assert_eq!(
                Declared::parse(text).unwrap(),
                Declared::default(),
                "{text:?}"
            );
        }
    }

    #[test]
    fn every_field_is_optional_and_every_toml_form_is_accepted() {
        let d = Declared::parse(
            "[labels.Tag]\n\n[labels]\nCity.key = [\"id\"]\nCountry = { key = \"iso\", text = [\n  \"iso\",\n  \"name\",\n] }\n",
        )
        .unwrap();
        assert_eq!(
            d.labels["Tag"],
            DeclaredLabel {
                line: 1,
                ..Default::default()
            }
        );
        // A one-element list is the same key as the bare name.
        assert_eq!(d.labels["City"].key, vec!["id"]);
        assert_eq!(d.labels["City"].line, 4);
        assert_eq!(d.labels["Country"].key, vec!["iso"]);
        assert_eq!(d.labels["Country"].text, vec!["iso", "name"]);
        assert_eq!(d.labels["Country"].line, 5);
    }

    #[test]
    fn a_blank_description_is_none() {
        let d = Declared::parse("[labels.A]\ndescription = \"  \"\n").unwrap();
        assert_eq!(d.labels["A"].description, None);
        let d = Declared::parse("[labels.A]\ndescription = \"\"\"\nTwo\nlines.\"\"\"\n").unwrap();
        assert_eq!(d.labels["A"].description.as_deref(), Some("Two\nlines."));
    }

    #[test]
    fn names_up_to_the_limit_are_accepted() {
        // Characters, not bytes: `é` is two bytes.
        let long = "é".repeat(MAX_NAME_CHARS);
        let d = Declared::parse(&format!(
            "[labels.\"{long}\"]\nkey = \"{long}\"\ncaption = \"the name\"\ntext = [\"{long}\", \"Ünïcode `quoted`\"]\n"
        ))
        .unwrap();
        assert_eq!(d.labels[&long].key, vec![long.clone()]);
        assert_eq!(d.labels[&long].text[1], "Ünïcode `quoted`");
    }

    #[test]
    fn every_problem_is_refused_with_its_line() {
        let long = "x".repeat(MAX_NAME_CHARS + 1);
        let long_label = format!("[labels.{long}]\n");
        let long_text = format!("[labels.A]\ntext = [\n\"ok\",\n\"{long}\"]\n");
        for (text, line, expected) in [
            // Syntax.
            ("[labels.A\n", 1, ""),
            ("[labels.A]\n\n[labels.A]\n", 3, ""),
            ("[labels.A]\nkey = \"id\"\nkey = \"id\"\n", 3, ""),
            // Structure.
            ("[label.A]\n", 1, "unknown field `label`, expected `labels`"),
            (
                "[labels.A]\n\n\ntitle = 1\n",
                4,
                "`A`: unknown field `title`",
            ),
            (
                "\n\ntitle = 1\n",
                3,
                "unknown field `title`, expected `labels`",
            ),
            ("\nlabels = 3\n", 2, "`labels` must be a table"),
            ("[[labels]]\n", 1, "`labels` must be a table"),
            ("[labels]\n\nA = 3\n", 3, "`A` must be a table"),
            // Fields.
            ("[labels.A]\nkye = \"id\"\n", 2, "`A`: unknown field `kye`"),
            (
                "[labels.A]\nkey = 3\n",
                2,
                "`A`.key: a property name or a list",
            ),
            (
                "[labels.A]\nkey = [\"a\", 3]\n",
                2,
                "`A`.key: a property name or a list",
            ),
            (
                "[labels.A]\n\nkey = []\n",
                3,
                "`A`.key must name at least one property",
            ),
            (
                "\n[labels.A]\nkey = [\"a\", \"a\"]\n",
                3,
                "`A`.key: property `a` is named twice",
            ),
            (
                "[labels.A]\nkey = \"\"\n",
                2,
                "`A`.key: property names must not be empty",
            ),
            (
                "[labels.A]\nkey = [\"a\", \" \"]\n",
                2,
                "`A`.key: property names must not be empty or blank",
            ),
            (
                "[labels.A]\ntext = [\"x\", \"\"]\n",
                2,
                "`A`.text: property names must not be empty",
            ),
            (
                "[labels.A]\ntext = [\n  \"x\",\n  \"y\",\n  \"x\",\n]\n",
                5,
                "`A`.text: property `x` is named twice",
            ),
            ("[labels.A]\ntext = \"x\"\n", 2, "`A`.text: invalid type"),
            (
                "[labels.A]\ntext = [\n\"x\",\n[\"y\"]]\n",
                4,
                "`A`.text: invalid type",
            ),
            (&long_text, 4, "`A`.text: property `xxxx"),
            (&long_text, 4, "…` is longer than 256 characters"),
            (
                "[labels.A]\ncaption = \"a\\u0007\"\n",
                2,
                "`A`.caption: property `a\\u{7}` has a control character",
            ),
            (
                "[labels.A]\ncaption = \"\"\n",
                2,
                "`A`.caption: property names must not be empty",
            ),
            (
                "[labels.A]\ncaption = [\"x\"]\n",
                2,
                "`A`.caption: invalid type",
            ),
            (
                "[labels.A]\ndescription = 3\n",
                2,
                "`A`.description: invalid type",
            ),
            // Label names.
            ("\n[labels.\"\"]\n", 2, "label names must not be empty"),
            (
                "[labels.\" \"]\n",
                1,
                "label names must not be empty or blank",
            ),
            (
                "[labels.\"A\\nB\"]\n",
                1,
                "label `A\\nB` has a control character",
            ),
            (&long_label, 1, "is longer than 256 characters"),
        ] {
            let e = Declared::parse(text).unwrap_err();
            assert_eq!(e.line, line, "{text:?}: {e}");
            assert!(e.message.contains(expected), "{text:?}: {e}");
            assert!(!e.message.contains('\n'), "{text:?}: {e}");
            assert!(
                e.to_string()
                    .starts_with(&format!("graph profile line {line}: ")),
                "{e}"
            );
        }
    }

    #[test]
    fn a_policy_parses_with_its_lines_and_plain_visible_is_no_policy() {
        let d = Declared::parse(
            "[labels.Employee]\nkey = \"id\"\ncaption = \"name\"\n\n[labels.Employee.properties]\nsalary = { roles = [\"admin\"] }\nnational_id = \"hidden\"\nhome = \"people\"\nname2 = \"visible\"\n\n[labels.Audit]\nvisibility = \"hidden\"\n\n[relationships.REPORTS_TO]\nvisibility = { roles = [\"approver\", \"admin\"], llm = false }\nproperties = { bonus = \"hidden\" }\n\n[relationships.KNOWS]\nvisibility = \"visible\"\n",
        )
        .unwrap();
        let p = &d.policy;
        let salary = &p.label_properties["Employee"]["salary"];
        assert_eq!(salary.line, 6);
        assert_eq!(salary.roles, Some(["admin".to_string()].into()));
        assert!(salary.llm);
        let id = &p.label_properties["Employee"]["national_id"];
        assert_eq!((id.roles.clone(), id.llm), (Some(BTreeSet::new()), false));
        let home = &p.label_properties["Employee"]["home"];
        assert_eq!((home.roles.clone(), home.llm), (None, false));
        assert!(!p.label_properties["Employee"].contains_key("name2"));
        assert_eq!(p.labels["Audit"].line, 12);
        assert!(d.labels.contains_key("Audit"));
        assert!(!p.types["REPORTS_TO"].llm);
        assert!(p.type_properties["REPORTS_TO"].contains_key("bonus"));
        assert!(!p.types.contains_key("KNOWS"));
        assert!(p.restricts_anything());
        let only_visible =
            Declared::parse("[labels.A.properties]\nx = \"visible\"\n[relationships.T]\n").unwrap();
        assert_eq!(only_visible.policy, Policy::default());
        assert!(!only_visible.policy.restricts_anything());
    }

    #[test]
    fn policy_names_the_graph_lacks_are_warnings_with_their_lines() {
        let d = Declared::parse(
            "[relationships.KNOWS]\nvisibility = \"hidden\"\n\n[relationships.PAID.properties]\nmemo = \"people\"\n",
        )
        .unwrap();
        assert_eq!(
            d.policy_warnings(&["PAID".to_string()], &["memo".to_string()]),
            ["graph profile line 2: relationship type `KNOWS` is not in the graph"]
        );
        assert_eq!(
            d.policy_warnings(&[], &[]),
            [
                "graph profile line 2: relationship type `KNOWS` is not in the graph",
                "graph profile line 5: relationship type `PAID` is not in the graph",
                "graph profile line 5: property `memo` is not in the graph"
            ]
        );
    }

    #[test]
    fn every_policy_problem_is_refused_with_its_line() {
        for (text, line, expected) in [
            (
                "[labels.A.properties]\nx = \"secret\"\n",
                2,
                "`A`.properties.x: `secret` is not a visibility",
            ),
            (
                "[labels.A]\n\nvisibility = { roles = [\"hr\"] }\n",
                3,
                "`A`.visibility: unknown role `hr` (roles: viewer, operator, approver, admin)",
            ),
            (
                "[labels.A.properties]\nx = { roles = [\"admin\"], see = true }\n",
                2,
                "\"visible\", \"hidden\", \"people\" or a table of `roles` and `llm`",
            ),
            (
                "[labels.A.properties]\nx = 3\n",
                2,
                "\"visible\", \"hidden\", \"people\" or a table",
            ),
            (
                "[labels.A]\nkey = \"id\"\nproperties = { id = \"hidden\" }\n",
                3,
                "`A`.properties.id: a key property cannot be restricted",
            ),
            (
                "[labels.A]\ncaption = \"name\"\n[labels.A.properties]\nname = \"people\"\n",
                4,
                "a caption property cannot be restricted",
            ),
            (
                "[labels.A]\ntext = [\"bio\"]\n[labels.A.properties]\nbio = { roles = [] }\n",
                4,
                "a text property cannot be restricted",
            ),
            (
                "[relationships.T]\nkey = \"id\"\n",
                2,
                "`T`: unknown field `key`",
            ),
            (
                "relationships = 1\n",
                1,
                "`relationships` must be a table, one `[relationships.Name]` per type",
            ),
            (
                "[relationships.T.properties]\n\"\" = \"hidden\"\n",
                2,
                "property names must not be empty",
            ),
            (
                "[relationships.\"\"]\n",
                1,
                "relationship type names must not be empty",
            ),
        ] {
            let e = Declared::parse(text).unwrap_err();
            assert_eq!(e.line, line, "{text:?}: {e}");
            assert!(e.message.contains(expected), "{text:?}: {e}");
        }
    }

    #[test]
    fn a_long_name_is_shown_cut_short() {
        let e = Declared::parse(&format!("[labels.{}]\n", "x".repeat(5000))).unwrap_err();
        assert!(e.message.len() < 200, "{e}");
    }

    #[test]
    fn warnings_name_labels_the_graph_lacks() {
        let d = Declared::parse("[labels.Airport]\n\n[labels.Airprot]\n\n[labels.City]\n").unwrap();
        assert_eq!(
            d.warnings(&["Airport".to_string(), "Runway".to_string()]),
            vec![
                "graph profile line 3: label `Airprot` is not in the graph",
                "graph profile line 5: label `City` is not in the graph",
            ]
        );
        let all = ["Airport", "Airprot", "City"].map(String::from);
        assert_eq!(d.warnings(&all), Vec::<String>::new());
        assert_eq!(Declared::default().warnings(&[]), Vec::<String>::new());
    }

    #[test]
    fn a_catalog_entity_keyed_otherwise_is_a_disagreement() {
        let d = Declared::parse(
            "[labels.PurchaseOrder]\nkey = \"code\"\n[labels.Supplier]\nkey = \"id\"\n[labels.Account]\ncaption = \"name\"\n[labels.Invoice]\nkey = [\"id\", \"year\"]\n[labels.Product]\nkey = [\"id\"]\n",
        )
        .unwrap();
        let catalog: Vec<(String, String)> = [
            "PurchaseOrder",
            "Supplier",
            "Account",
            "Payment",
            "Invoice",
            "Product",
        ]
        .iter()
        .map(|l| (l.to_string(), "id".to_string()))
        .collect();
        // Account declares no key and Payment is not declared: neither disagrees.
        assert_eq!(
            d.disagreements_with_catalog(&catalog),
            vec![
                "graph profile line 1: `PurchaseOrder` is keyed by `code` here but by `id` in the action catalog",
                "graph profile line 7: `Invoice` is keyed by `id`, `year` here but by `id` in the action catalog",
            ]
        );
        assert_eq!(d.disagreements_with_catalog(&[]), Vec::<String>::new());
    }

    proptest! {
        #[test]
        fn parsing_never_panics(text in "\\PC{0,200}") {
            let _ = Declared::parse(&text);
        }

        #[test]
        fn parsing_toml_like_input_never_panics(
            entries in proptest::collection::vec(
                (
                    "[A-Za-z\"`. \\\\é]{0,8}",
                    "(key|caption|text|description|kye|labels)",
                    "(\"[a-z\\\\ ]{0,4}\"|\\[\"[a-z]{0,3}\"(, \"[a-z]{0,3}\")?\\]|[0-9]{1,3}|\\[\\]|true|\\{\\}|\\{ a = 1 \\})",
                    "(\n|\n\n|\r\n| )",
                ),
                0..4,
            ),
        ) {
            let text: String = entries
                .iter()
                .map(|(label, field, value, gap)| format!("[labels.{label}]{gap}{field} = {value}{gap}"))
                .collect();
            let lines = text.lines().count().max(1);
            match Declared::parse(&text) {
                Ok(d) => prop_assert!(d.labels.values().all(|l| (1..=lines).contains(&l.line))),
                Err(e) => prop_assert!((1..=lines + 1).contains(&e.line), "{text:?}: {e}"),
            }
        }
    }
}
