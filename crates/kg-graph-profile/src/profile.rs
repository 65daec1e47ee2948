//! The merged profile the tools use.

use crate::declared::Declared;
use serde_json::Value as Json;
use std::collections::BTreeMap;

/// Uniqueness and node-key constraints on nodes, one row per constraint: its label(s) and
/// properties. Allowed in READ mode on Neo4j 5 (and answered by devgraph).
pub const CONSTRAINTS_STATEMENT: &str = "SHOW CONSTRAINTS YIELD type, entityType, labelsOrTypes, properties \
     WHERE entityType = 'NODE' AND type IN ['UNIQUENESS', 'NODE_PROPERTY_UNIQUENESS', 'NODE_KEY'] \
     RETURN labelsOrTypes, properties, type";

/// Where a label's key came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum KeySource {
    /// The declared file names it.
    Declared,
    /// A uniqueness or node-key constraint in the graph.
    Constraint,
}

/// What kg-agent knows of one label.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize)]
pub struct LabelProfile {
    /// The key properties, in order (one for most labels; several for a node key).
    /// Empty: no key known (instances are reached by caption or element id).
    pub key: Vec<String>,
    pub key_source: Option<KeySource>,
    /// The property a person calls an instance by (`name`, `title`, an `iata` code…);
    /// None: none declared (the key stands in, else the element id).
    pub caption: Option<String>,
    /// The text properties search looks in: the declared ones, else the caption and the
    /// single key property. Never empty when the label has a caption or a single key.
    pub text: Vec<String>,
    pub description: Option<String>,
}

impl LabelProfile {
    /// The single key property, when the key is exactly one property.
    pub fn single_key(&self) -> Option<&str> {
        match self.key.as_slice() {
            [one] => Some(one),
            _ => None,
        }
    }

    /// The property to show as an instance's caption: the caption, else the single key.
    pub fn caption_property(&self) -> Option<&str> {
        self.caption.as_deref().or_else(|| self.single_key())
    }
}

/// Every profiled label, by name.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize)]
pub struct Profile {
    pub labels: BTreeMap<String, LabelProfile>,
    /// Every key the graph's constraints give, per label (what [`Profile::merge`] was
    /// given): a constrained property already has the constraint's index. Input, not part
    /// of the profile as it is reported.
    #[serde(skip)]
    pub constrained: BTreeMap<String, Vec<Vec<String>>>,
}

impl Profile {
    /// The declared file's labels, then the constraints' keys for labels the file does
    /// not key (a declared key always wins; a label only the constraints know is added
    /// with its key as its caption and text). Among several constraints on one label the
    /// single-property uniqueness constraint whose property sorts first wins (stable
    /// across requests), else the node key with the fewest properties.
    /// `constraint_keys` is what [`keys_from_constraint_rows`] returns.
    pub fn merge(
        declared: &Declared,
        constraint_keys: &BTreeMap<String, Vec<Vec<String>>>,
    ) -> Profile {
        let mut labels = BTreeMap::new();
        for (label, d) in &declared.labels {
            let (key, key_source) = if !d.key.is_empty() {
                (d.key.clone(), Some(KeySource::Declared))
            } else if let Some(key) = constraint_keys.get(label).and_then(|k| preferred_key(k)) {
                (key, Some(KeySource::Constraint))
            } else {
                (Vec::new(), None)
            };
            let text = if d.text.is_empty() {
                default_text(d.caption.as_deref(), &key)
            } else {
                d.text.clone()
            };
            labels.insert(
                label.clone(),
                LabelProfile {
                    key,
                    key_source,
                    caption: d.caption.clone(),
                    text,
                    description: d.description.clone(),
                },
            );
        }
        for (label, candidates) in constraint_keys {
            if labels.contains_key(label) {
                continue;
            }
            let Some(key) = preferred_key(candidates) else {
                continue;
            };
            labels.insert(
                label.clone(),
                LabelProfile {
                    text: default_text(None, &key),
                    key,
                    key_source: Some(KeySource::Constraint),
                    caption: None,
                    description: None,
                },
            );
        }
        Profile {
            labels,
            constrained: constraint_keys.clone(),
        }
    }

    /// True when a constraint of the graph covers exactly this one property of `label`
    /// (and so its index serves look-ups by it).
    pub fn is_constrained(&self, label: &str, property: &str) -> bool {
        self.constrained
            .get(label)
            .is_some_and(|keys| keys.iter().any(|k| k.len() == 1 && k[0] == property))
    }

    pub fn label(&self, label: &str) -> Option<&LabelProfile> {
        self.labels.get(label)
    }

    /// Labels with a single-property key, in name order: where a bare key value is looked
    /// up when no label is given.
    pub fn keyed_labels(&self) -> Vec<(&str, &str)> {
        self.labels
            .iter()
            .filter_map(|(label, p)| Some((label.as_str(), p.single_key()?)))
            .collect()
    }

    /// The caption of a node with these labels and properties: the first profiled label's
    /// caption property (or single key) that the node has as a string or number, else
    /// None (the caller falls back to the element id).
    pub fn caption_of(
        &self,
        labels: &[String],
        properties: &serde_json::Map<String, Json>,
    ) -> Option<String> {
        labels
            .iter()
            .filter_map(|l| self.labels.get(l)?.caption_property())
            .find_map(|p| text_of(properties.get(p)?))
    }

    /// The key of a node with these labels and properties: its first profiled label with
    /// a key whose properties the node all has, as (label, {property: value}).
    pub fn key_of(
        &self,
        labels: &[String],
        properties: &serde_json::Map<String, Json>,
    ) -> Option<(String, serde_json::Map<String, Json>)> {
        labels.iter().find_map(|label| {
            let profile = self.labels.get(label)?;
            if profile.key.is_empty() {
                return None;
            }
            let key: Option<serde_json::Map<String, Json>> = profile
                .key
                .iter()
                .map(|p| {
                    Some((
                        p.clone(),
                        properties.get(p).filter(|v| !v.is_null())?.clone(),
                    ))
                })
                .collect();
            Some((label.clone(), key?))
        })
    }
}

/// Keys per label from the rows of [`CONSTRAINTS_STATEMENT`] (each row: `labelsOrTypes`
/// (a list of one label), `properties` (a list), `type`), as plain JSON values; rows of
/// another shape are skipped. Each label maps to every key candidate it has.
pub fn keys_from_constraint_rows(rows: &[Vec<Json>]) -> BTreeMap<String, Vec<Vec<String>>> {
    let names = |v: Option<&Json>| -> Option<Vec<String>> {
        v?.as_array()?
            .iter()
            .map(|n| n.as_str().map(str::to_string))
            .collect()
    };
    let mut keys: BTreeMap<String, Vec<Vec<String>>> = BTreeMap::new();
    for row in rows {
        let (Some(labels), Some(properties), Some(_type)) = (
            names(row.first()),
            names(row.get(1)),
            row.get(2).and_then(Json::as_str),
        ) else {
            continue;
        };
        let [label] = labels.as_slice() else {
            continue;
        };
        // No real constraint looks like this; such a row is garbage, not a key.
        if label.is_empty()
            || properties.is_empty()
            || properties.iter().any(String::is_empty)
            || properties
                .iter()
                .enumerate()
                .any(|(i, p)| properties[..i].contains(p))
        {
            continue;
        }
        let candidates = keys.entry(label.clone()).or_default();
        if !candidates.contains(&properties) {
            candidates.push(properties);
        }
    }
    keys
}

/// Among a label's constraint keys: the single-property key whose property sorts first,
/// else the composite key with the fewest properties (then the first in sort order), so
/// the choice is the same on every request whatever order the graph lists them in.
fn preferred_key(candidates: &[Vec<String>]) -> Option<Vec<String>> {
    candidates
        .iter()
        .min_by(|a, b| a.len().cmp(&b.len()).then_with(|| a.cmp(b)))
        .cloned()
}

/// Text properties when none are declared: the caption and the single key, each once.
fn default_text(caption: Option<&str>, key: &[String]) -> Vec<String> {
    let mut text: Vec<String> = caption.into_iter().map(str::to_string).collect();
    if let [single] = key
        && !text.contains(single)
    {
        text.push(single.clone());
    }
    text
}

/// A caption's text: strings as they are, numbers as JSON prints them.
pub fn text_of(value: &Json) -> Option<String> {
    match value {
        Json::String(s) => Some(s.clone()),
        Json::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn constraint(label: &str, properties: &[&str]) -> Vec<Json> {
        vec![json!([label]), json!(properties), json!("UNIQUENESS")]
    }

    fn keys(rows: &[(&str, &[&str])]) -> BTreeMap<String, Vec<Vec<String>>> {
        keys_from_constraint_rows(
            &rows
                .iter()
                .map(|(label, properties)| constraint(label, properties))
                .collect::<Vec<_>>(),
        )
    }

    fn object(value: Json) -> serde_json::Map<String, Json> {
        match value {
            Json::Object(map) => map,
            other => panic!("not an object: {other}"),
        }
    }

    fn labels(names: &[&str]) -> Vec<String> {
        names.iter().map(|n| n.to_string()).collect()
    }

    #[test]
    fn constraint_rows_become_key_candidates() {
        let rows = vec![
            constraint("Airport", &["icao"]),
            constraint("Airport", &["iata"]),
            constraint("Airport", &["icao"]),
            constraint("City", &["country", "subd", "name"]),
            vec![json!(["Runway"]), json!(["ident"]), json!("NODE_KEY")],
        ];
        let keys = keys_from_constraint_rows(&rows);
        assert_eq!(keys.len(), 3, "{keys:?}");
        // Each candidate once, in the order the graph gave them.
        assert_eq!(keys["Airport"], vec![vec!["icao"], vec!["iata"]]);
        assert_eq!(keys["City"], vec![vec!["country", "subd", "name"]]);
        assert_eq!(keys["Runway"], vec![vec!["ident"]]);
        assert_eq!(keys_from_constraint_rows(&[]), BTreeMap::new());
    }

    #[test]
    fn malformed_constraint_rows_are_skipped() {
        let rows = vec![
            vec![json!("not a list"), json!(["x"]), json!("UNIQUENESS")],
            vec![json!(["A", "B"]), json!(["x"]), json!("UNIQUENESS")],
            vec![json!([]), json!(["x"]), json!("UNIQUENESS")],
            vec![json!([""]), json!(["x"]), json!("UNIQUENESS")],
            vec![json!([1]), json!(["x"]), json!("UNIQUENESS")],
            vec![json!(["Empty"]), json!([]), json!("UNIQUENESS")],
            vec![json!(["Blank"]), json!([""]), json!("UNIQUENESS")],
            vec![json!(["Twice"]), json!(["x", "x"]), json!("NODE_KEY")],
            vec![json!(["Numbers"]), json!([1, 2]), json!("UNIQUENESS")],
            vec![json!(["Null"]), Json::Null, json!("UNIQUENESS")],
            vec![json!(["NoType"]), json!(["x"])],
            vec![json!(["BadType"]), json!(["x"]), json!(7)],
            vec![json!(["Short"])],
            vec![],
            vec![
                json!({"labelsOrTypes": ["Map"]}),
                json!(["x"]),
                json!("UNIQUENESS"),
            ],
        ];
        assert_eq!(keys_from_constraint_rows(&rows), BTreeMap::new());
    }

    #[test]
    fn a_declared_key_wins_and_the_constraints_fill_in_the_rest() {
        let declared = Declared::parse(
            "[labels.Airport]\ncaption = \"name\"\n[labels.Country]\nkey = \"iso\"\ntext = [\"iso\", \"name\"]\n",
        )
        .unwrap();
        let keys = keys(&[
            ("Airport", &["icao"]),
            ("Airport", &["iata"]),
            ("Country", &["code"]),
            ("City", &["country", "name"]),
            ("Runway", &["airport", "ident"]),
            ("Runway", &["number"]),
        ]);
        let profile = Profile::merge(&declared, &keys);
        let airport = profile.label("Airport").unwrap();
        // `iata` sorts before `icao`: the first single-property key, stable.
        assert_eq!(airport.key, vec!["iata"]);
        assert_eq!(airport.key_source, Some(KeySource::Constraint));
        assert_eq!(airport.caption.as_deref(), Some("name"));
        assert_eq!(airport.text, vec!["name", "iata"]);
        let country = profile.label("Country").unwrap();
        assert_eq!(country.key, vec!["iso"]);
        assert_eq!(country.key_source, Some(KeySource::Declared));
        assert_eq!(country.text, vec!["iso", "name"]);
        // Only the constraints know City and Runway.
        let city = profile.label("City").unwrap();
        assert_eq!(city.key, vec!["country", "name"]);
        assert_eq!(city.key_source, Some(KeySource::Constraint));
        assert_eq!(city.caption, None);
        assert_eq!(city.text, Vec::<String>::new());
        assert_eq!(city.description, None);
        // A single-property key beats a node key.
        let runway = profile.label("Runway").unwrap();
        assert_eq!(runway.key, vec!["number"]);
        assert_eq!(runway.caption, None);
        assert_eq!(runway.caption_property(), Some("number"));
        assert_eq!(runway.text, vec!["number"]);
        assert_eq!(profile.label("Tag"), None);
        assert_eq!(
            profile.keyed_labels(),
            vec![
                ("Airport", "iata"),
                ("Country", "iso"),
                ("Runway", "number")
            ]
        );
    }

    #[test]
    fn the_constraint_key_chosen_does_not_depend_on_the_graphs_order() {
        let candidates = [
            vec!["z", "a"],
            vec!["m"],
            vec!["c", "b", "a"],
            vec!["b"],
            vec!["a", "z"],
        ];
        let rows: Vec<(&str, &[&str])> = candidates.iter().map(|c| ("L", c.as_slice())).collect();
        let mut reversed = rows.clone();
        reversed.reverse();
        for rows in [rows, reversed] {
            let profile = Profile::merge(&Declared::default(), &keys(&rows));
            assert_eq!(profile.labels["L"].key, vec!["b"]);
        }
        // No single-property key: the fewest properties, then the first in sort order.
        for rows in [
            vec![
                ("L", &["z", "a"][..]),
                ("L", &["c", "b", "a"]),
                ("L", &["a", "z"]),
            ],
            vec![
                ("L", &["a", "z"][..]),
                ("L", &["z", "a"]),
                ("L", &["c", "b", "a"]),
            ],
        ] {
            let profile = Profile::merge(&Declared::default(), &keys(&rows));
            assert_eq!(profile.labels["L"].key, vec!["a", "z"]);
        }
    }

    #[test]
    fn declared_labels_without_any_key_keep_their_caption_and_text() {
        let declared = Declared::parse(
            "[labels.Person]\ncaption = \"name\"\ndescription = \"Someone.\"\n[labels.Tag]\n[labels.Doc]\ntext = [\"title\", \"body\"]\n",
        )
        .unwrap();
        let profile = Profile::merge(&declared, &BTreeMap::new());
        let person = profile.label("Person").unwrap();
        assert_eq!(person.key, Vec::<String>::new());
        assert_eq!(person.key_source, None);
        assert_eq!(person.single_key(), None);
        assert_eq!(person.caption_property(), Some("name"));
        assert_eq!(person.text, vec!["name"]);
        assert_eq!(person.description.as_deref(), Some("Someone."));
        let tag = profile.label("Tag").unwrap();
        assert_eq!(*tag, LabelProfile::default());
        assert_eq!(tag.caption_property(), None);
        assert_eq!(profile.label("Doc").unwrap().text, vec!["title", "body"]);
        assert_eq!(profile.keyed_labels(), Vec::<(&str, &str)>::new());
    }

    #[test]
    fn default_text_is_the_caption_and_the_single_key_each_once() {
        let declared = Declared::parse(
            "[labels.Same]\nkey = \"name\"\ncaption = \"name\"\n[labels.Both]\nkey = \"id\"\ncaption = \"name\"\n[labels.Node]\nkey = [\"a\", \"b\"]\ncaption = \"name\"\n[labels.Keyed]\nkey = \"id\"\n",
        )
        .unwrap();
        let profile = Profile::merge(&declared, &BTreeMap::new());
        assert_eq!(profile.labels["Same"].text, vec!["name"]);
        assert_eq!(profile.labels["Both"].text, vec!["name", "id"]);
        assert_eq!(profile.labels["Node"].text, vec!["name"]);
        assert_eq!(profile.labels["Node"].single_key(), None);
        assert_eq!(profile.labels["Keyed"].text, vec!["id"]);
        assert_eq!(profile.labels["Keyed"].caption_property(), Some("id"));
        assert_eq!(
            profile.keyed_labels(),
            vec![("Both", "id"), ("Keyed", "id"), ("Same", "name")]
        );
    }

    #[test]
    fn an_empty_profile_is_empty() {
        let profile = Profile::merge(&Declared::default(), &BTreeMap::new());
        assert_eq!(profile, Profile::default());
        assert_eq!(profile.keyed_labels(), Vec::<(&str, &str)>::new());
        let node = object(json!({"name": "x", "id": "y"}));
        assert_eq!(profile.caption_of(&labels(&["A"]), &node), None);
        assert_eq!(profile.key_of(&labels(&["A"]), &node), None);
    }

    #[test]
    fn captions_and_keys_of_nodes() {
        let declared =
            Declared::parse("[labels.City]\ncaption = \"name\"\n[labels.Tag]\n").unwrap();
        let keys = keys(&[("City", &["country", "name"]), ("Airport", &["icao"])]);
        let profile = Profile::merge(&declared, &keys);
        let city = object(json!({"name": "Springfield", "country": "US"}));
        assert_eq!(
            profile.caption_of(&labels(&["City"]), &city).as_deref(),
            Some("Springfield")
        );
        let (label, key) = profile.key_of(&labels(&["City"]), &city).unwrap();
        assert_eq!(label, "City");
        assert_eq!(
            Json::Object(key),
            json!({"country": "US", "name": "Springfield"})
        );
        // A node lacking part of its key, or with a null there, has none.
        let partial = object(json!({"name": "Springfield"}));
        assert_eq!(profile.key_of(&labels(&["City"]), &partial), None);
        let null = object(json!({"name": "Springfield", "country": null}));
        assert_eq!(profile.key_of(&labels(&["City"]), &null), None);
        // The single key stands in for a caption; numbers are captions too, as JSON prints them.
        for (value, caption) in [
            (json!(4242), "4242"),
            (json!(-1.5), "-1.5"),
            (json!("EGLL"), "EGLL"),
        ] {
            let airport = object(json!({ "icao": value }));
            assert_eq!(
                profile
                    .caption_of(&labels(&["Airport"]), &airport)
                    .as_deref(),
                Some(caption)
            );
        }
        // Keys keep their JSON type.
        let airport = object(json!({"icao": 4242}));
        assert_eq!(
            profile.key_of(&labels(&["Airport"]), &airport),
            Some(("Airport".to_string(), object(json!({"icao": 4242}))))
        );
        // Unprofiled labels, and labels with nothing to show: nothing.
        assert_eq!(profile.caption_of(&labels(&["Tag"]), &city), None);
        assert_eq!(profile.caption_of(&labels(&["Other"]), &city), None);
        assert_eq!(profile.caption_of(&[], &city), None);
        assert_eq!(profile.key_of(&labels(&["Other", "Tag"]), &city), None);
        assert_eq!(profile.key_of(&[], &city), None);
    }

    #[test]
    fn captions_are_strings_or_numbers_only() {
        let declared = Declared::parse("[labels.A]\ncaption = \"name\"\n").unwrap();
        let profile = Profile::merge(&declared, &BTreeMap::new());
        for value in [json!(true), json!(null), json!(["x"]), json!({"x": 1})] {
            let node = object(json!({ "name": value }));
            assert_eq!(profile.caption_of(&labels(&["A"]), &node), None, "{value}");
        }
    }

    #[test]
    fn a_node_with_several_labels_takes_the_first_that_applies() {
        let declared = Declared::parse(
            "[labels.Person]\nkey = \"email\"\ncaption = \"name\"\n[labels.Employee]\nkey = \"staff_no\"\ncaption = \"badge\"\n[labels.Tag]\n",
        )
        .unwrap();
        let profile = Profile::merge(&declared, &BTreeMap::new());
        let node = object(json!({"name": "Ada", "badge": "A-1", "staff_no": 7, "email": "ada@x"}));
        assert_eq!(
            profile
                .caption_of(&labels(&["Employee", "Person"]), &node)
                .as_deref(),
            Some("A-1")
        );
        assert_eq!(
            profile
                .caption_of(&labels(&["Person", "Employee"]), &node)
                .as_deref(),
            Some("Ada")
        );
        // Unprofiled and caption-less labels are passed over.
        assert_eq!(
            profile
                .caption_of(&labels(&["Other", "Tag", "Person"]), &node)
                .as_deref(),
            Some("Ada")
        );
        assert_eq!(
            profile.key_of(&labels(&["Tag", "Employee", "Person"]), &node),
            Some(("Employee".to_string(), object(json!({"staff_no": 7}))))
        );
        // A label whose caption the node lacks gives way to the next.
        let no_badge = object(json!({"name": "Ada", "email": "ada@x"}));
        assert_eq!(
            profile
                .caption_of(&labels(&["Employee", "Person"]), &no_badge)
                .as_deref(),
            Some("Ada")
        );
        assert_eq!(
            profile.key_of(&labels(&["Employee", "Person"]), &no_badge),
            Some(("Person".to_string(), object(json!({"email": "ada@x"}))))
        );
    }

    #[test]
    fn the_profile_serialises_for_the_tools() {
        let declared = Declared::parse("[labels.A]\nkey = \"id\"\n").unwrap();
        let profile = Profile::merge(&declared, &keys(&[("B", &["code"])]));
        assert_eq!(
            serde_json::to_value(&profile).unwrap(),
            json!({"labels": {
                "A": {"key": ["id"], "key_source": "declared", "caption": null, "text": ["id"], "description": null},
                "B": {"key": ["code"], "key_source": "constraint", "caption": null, "text": ["code"], "description": null},
            }})
        );
    }
}
