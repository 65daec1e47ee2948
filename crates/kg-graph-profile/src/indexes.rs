//! The indexes that make the graph tools index-backed, created by the set-up route
//! (`POST /actions/setup`). Every statement is `IF NOT EXISTS`, so running it again is safe.

use crate::profile::{KeySource, Profile};
use std::collections::BTreeSet;

/// The full-text index over every profiled label's text properties.
pub const SEARCH_INDEX: &str = "kg_graph_search";

/// `CREATE FULLTEXT INDEX kg_graph_search IF NOT EXISTS FOR (n:A|B) ON EACH [n.p, n.q]`
/// over every label with text properties and the union of their text properties (names
/// back-tick quoted, each once, in name order), or None when no label has any. Neo4j
/// cannot change an index's definition in place: a profile that gains labels or
/// properties needs the index dropped first (the set-up compares the existing index's
/// definition and drops it when it differs).
pub fn search_index_statement(profile: &Profile) -> Option<String> {
    let (labels, properties) = search_index_definition(profile);
    if labels.is_empty() {
        return None;
    }
    let labels: Vec<String> = labels.iter().map(|l| quote(l)).collect();
    let properties: Vec<String> = properties
        .iter()
        .map(|p| format!("n.{}", quote(p)))
        .collect();
    Some(format!(
        "CREATE FULLTEXT INDEX {SEARCH_INDEX} IF NOT EXISTS FOR (n:{}) ON EACH [{}]",
        labels.join("|"),
        properties.join(", ")
    ))
}

/// The labels and properties the search index covers: every label with text properties,
/// and the union of those properties, each sorted by the names themselves (not their
/// quoted forms: a doubled back-tick sorts differently from the name it stands for). The
/// set-up compares it with the existing index's definition.
pub fn search_index_definition(profile: &Profile) -> (BTreeSet<String>, BTreeSet<String>) {
    let mut labels = BTreeSet::new();
    let mut properties = BTreeSet::new();
    for (label, entry) in &profile.labels {
        if !entry.text.is_empty() {
            labels.insert(label.clone());
            properties.extend(entry.text.iter().cloned());
        }
    }
    (labels, properties)
}

/// A range index per (label, property) for every single-property key the file declares
/// (constraints bring their own index) and every caption property:
/// `CREATE INDEX kg_key_<label>_<property> IF NOT EXISTS FOR (n:`L`) ON (n.`p`)`; index
/// names are made of the label and property with every character other than ASCII
/// letters, digits and `_` replaced by `_`, and a short hash of the exact names appended
/// when anything was replaced or either name has a `_` of its own (so two names cannot
/// collide: `a_b`.`c` and `a`.`b_c` would otherwise both be `kg_key_a_b_c`).
pub fn key_index_statements(profile: &Profile) -> Vec<String> {
    let mut wanted = BTreeSet::new();
    for (label, entry) in &profile.labels {
        if let (Some(key), Some(KeySource::Declared)) = (entry.single_key(), entry.key_source) {
            wanted.insert((label.as_str(), key));
        }
        if let Some(caption) = entry.caption.as_deref() {
            wanted.insert((label.as_str(), caption));
        }
    }
    // A property a constraint covers already has the constraint's index (Neo4j takes a
    // second one on it as a no-op at best).
    wanted
        .into_iter()
        .filter(|(label, property)| !profile.is_constrained(label, property))
        .map(|(label, property)| {
            format!(
                "CREATE INDEX {} IF NOT EXISTS FOR (n:{}) ON (n.{})",
                index_name(label, property),
                quote(label),
                quote(property)
            )
        })
        .collect()
}

fn quote(name: &str) -> String {
    format!("`{}`", name.replace('`', "``"))
}

/// `kg_key_<label>_<property>`, readable where the names are plain; a name with other
/// characters has them replaced and a hash of the exact names appended, so two names that
/// read alike cannot share an index name. Names with a `_` of their own are hashed too:
/// the one `_` between two plain names then says where the label ends, so no two plain
/// pairs share a name, and no plain name (one `_`) looks like a hashed one (two or more).
fn index_name(label: &str, property: &str) -> String {
    let plain = |s: &str| -> String {
        s.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    };
    let (l, p) = (plain(label), plain(property));
    if l == label && p == property && !label.contains('_') && !property.contains('_') {
        format!("kg_key_{l}_{p}")
    } else {
        format!(
            "kg_key_{l}_{p}_{:08x}",
            fnv1a(&format!("{label}\u{0}{property}"))
        )
    }
}

/// FNV-1a, 32 bits: enough to tell apart the few names one graph has, and a few lines
/// instead of a dependency.
fn fnv1a(text: &str) -> u32 {
    text.bytes().fold(0x811c_9dc5, |hash, b| {
        (hash ^ u32::from(b)).wrapping_mul(0x0100_0193)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::declared::Declared;
    use std::collections::BTreeMap;

    fn profile(text: &str, constraints: &[(&str, &str)]) -> Profile {
        let mut keys: BTreeMap<String, Vec<Vec<String>>> = BTreeMap::new();
        for (label, key) in constraints {
            keys.entry(label.to_string())
                .or_default()
                .push(vec![key.to_string()]);
        }
        Profile::merge(&Declared::parse(text).unwrap(), &keys)
    }

    #[test]
    fn the_search_index_covers_every_labels_text() {
        let p = profile(
            "[labels.Supplier]\nkey = \"id\"\ncaption = \"name\"\ntext = [\"name\", \"id\"]\n[labels.Tag]\n[labels.\"Odd`Label\"]\ncaption = \"the name\"\n",
            &[("Airport", "icao")],
        );
        // Labels and properties each once, in name order; Tag has no text.
        assert_eq!(
            search_index_statement(&p).unwrap(),
            "CREATE FULLTEXT INDEX kg_graph_search IF NOT EXISTS FOR (n:`Airport`|`Odd``Label`|`Supplier`) ON EACH [n.`icao`, n.`id`, n.`name`, n.`the name`]"
        );
    }

    #[test]
    fn no_text_no_search_index() {
        assert_eq!(search_index_statement(&Profile::default()), None);
        assert_eq!(
            search_index_statement(&profile(
                "[labels.Tag]\n[labels.Doc]\ndescription = \"d\"\n",
                &[]
            )),
            None
        );
    }

    #[test]
    fn search_properties_sort_by_name_not_by_quoted_name() {
        // Quoted, `a!` would sort before `a` (its closing back-tick is after `!`), and
        // `a`!` before `a`` (a doubled back-tick).
        let p = profile(
            "[labels.A]\ntext = [\"a`!\", \"a!\", \"a`\", \"a\", \"b\"]\n",
            &[],
        );
        assert!(
            search_index_statement(&p)
                .unwrap()
                .ends_with("ON EACH [n.`a`, n.`a!`, n.`a```, n.`a``!`, n.`b`]"),
            "{:?}",
            search_index_statement(&p)
        );
    }

    #[test]
    fn declared_keys_and_captions_get_range_indexes() {
        let p = profile(
            "[labels.Supplier]\nkey = \"id\"\ncaption = \"name\"\n[labels.Airport]\ncaption = \"name\"\n[labels.\"Odd Label\"]\nkey = \"a-b\"\n[labels.City]\nkey = [\"country\", \"name\"]\n[labels.Same]\nkey = \"code\"\ncaption = \"code\"\n",
            &[("Airport", "icao"), ("Runway", "ident")],
        );
        let statements = key_index_statements(&p);
        let odd = format!(
            "CREATE INDEX kg_key_Odd_Label_a_b_{:08x} IF NOT EXISTS FOR (n:`Odd Label`) ON (n.`a-b`)",
            fnv1a("Odd Label\u{0}a-b")
        );
        // Sorted by label, then property; the constraints' keys (Airport's icao, Runway's
        // ident) and node keys (City) have their own index; a caption that is the key, one.
        assert_eq!(
            statements,
            vec![
                "CREATE INDEX kg_key_Airport_name IF NOT EXISTS FOR (n:`Airport`) ON (n.`name`)",
                odd.as_str(),
                "CREATE INDEX kg_key_Same_code IF NOT EXISTS FOR (n:`Same`) ON (n.`code`)",
                "CREATE INDEX kg_key_Supplier_id IF NOT EXISTS FOR (n:`Supplier`) ON (n.`id`)",
                "CREATE INDEX kg_key_Supplier_name IF NOT EXISTS FOR (n:`Supplier`) ON (n.`name`)",
            ]
        );
        assert_eq!(
            key_index_statements(&Profile::default()),
            Vec::<String>::new()
        );
    }

    #[test]
    fn names_are_back_tick_quoted() {
        assert_eq!(quote("plain"), "`plain`");
        assert_eq!(quote("a`b"), "`a``b`");
        assert_eq!(quote("``"), "``````");
        let p = profile("[labels.\"x`y\"]\nkey = \"p`q\"\n", &[]);
        let statements = key_index_statements(&p);
        assert_eq!(statements.len(), 1);
        assert!(
            statements[0].ends_with(" IF NOT EXISTS FOR (n:`x``y`) ON (n.`p``q`)"),
            "{}",
            statements[0]
        );
    }

    #[test]
    fn index_names_are_plain_where_they_can_be_and_never_collide() {
        assert_eq!(index_name("Supplier", "id"), "kg_key_Supplier_id");
        let hashed = index_name("Café", "name");
        assert_eq!(
            hashed,
            format!("kg_key_Caf__name_{:08x}", fnv1a("Café\u{0}name"))
        );
        // Names that read alike once replaced, or split differently at an `_`.
        let pairs = [
            ("a b", "c"),
            ("a_b", "c"),
            ("a-b", "c"),
            ("a", "b_c"),
            ("a", "b c"),
            ("a", "b"),
            ("ab", "c"),
            ("a", "bc"),
            ("a", "b_c_00000000"),
            ("é", "x"),
            ("è", "x"),
        ];
        let names: BTreeSet<String> = pairs.iter().map(|(l, p)| index_name(l, p)).collect();
        assert_eq!(names.len(), pairs.len(), "{names:?}");
        // Index names need no quoting.
        for name in &names {
            assert!(
                name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'),
                "{name}"
            );
        }
    }

    #[test]
    fn the_hash_is_fnv1a_32() {
        // The published test vectors.
        assert_eq!(fnv1a(""), 0x811c_9dc5);
        assert_eq!(fnv1a("a"), 0xe40c_292c);
        assert_eq!(fnv1a("foobar"), 0xbf9c_f968);
    }

    #[test]
    fn a_constrained_key_or_caption_gets_no_second_index() {
        let p = profile(
            "[labels.Supplier]\nkey = \"id\"\ncaption = \"name\"\n[labels.Country]\ncaption = \"iso\"\n",
            &[("Supplier", "id"), ("Country", "iso")],
        );
        let statements = key_index_statements(&p);
        assert_eq!(statements.len(), 1, "{statements:?}");
        assert!(
            statements[0].ends_with("FOR (n:`Supplier`) ON (n.`name`)"),
            "{statements:?}"
        );
    }
}
