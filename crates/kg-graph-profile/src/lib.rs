//! The graph profile: how kg-agent learns the shape of a graph it did not make. For each
//! label: its key property (or properties), its caption (what a person calls an
//! instance), the text properties search looks in, and a description for the LLM.
//!
//! Two sources, merged by [`Profile::merge`]:
//! - a declared file (`/catalog/graph-profile.toml`, beside the action catalog), parsed and
//!   validated by [`Declared::parse`] with the line of every problem;
//! - the graph itself: uniqueness and node-key constraints (`SHOW CONSTRAINTS`, see
//!   [`CONSTRAINTS_STATEMENT`] and [`keys_from_constraint_rows`]).
//!
//! A declared key wins over a constraint (the file says which of several unique
//! properties people use); a label keyed by neither has no key and is reached by its
//! caption or by element id.

mod declared;
mod indexes;
pub mod policy;
mod profile;

pub use declared::{Declared, DeclaredLabel, ProfileError};
pub use indexes::{
    SEARCH_INDEX, key_index_statements, search_index_definition, search_index_statement,
};
pub use policy::{Audience, Policy, Rule, View};
pub use profile::{
    CONSTRAINTS_STATEMENT, KeySource, LabelProfile, Profile, keys_from_constraint_rows, text_of,
};

#[cfg(test)]
mod tests {
    use super::*;

    const PROFILE: &str = include_str!("../../../catalog/graph-profile.toml");
    const CATALOG: &str = include_str!("../../../catalog/actions.toml");

    /// `entities.<Label>.key` of the action catalog, read as plain TOML (this crate does
    /// not depend on kg-actions).
    fn catalog_keys() -> Vec<(String, String)> {
        let catalog: toml::Table = toml::from_str(CATALOG).expect("catalog/actions.toml is TOML");
        let entities = catalog["entities"].as_table().expect("an entities table");
        entities
            .iter()
            .map(|(label, e)| {
                let key = e["key"].as_str().expect("a key").to_string();
                (label.clone(), key)
            })
            .collect()
    }

    /// The demo's declared profile parses, describes every catalog entity, and keys each
    /// by the property the action catalog does.
    #[test]
    fn the_demo_profile_agrees_with_the_action_catalog() {
        let declared = Declared::parse(PROFILE).expect("catalog/graph-profile.toml parses");
        let keys = catalog_keys();
        assert!(!keys.is_empty());
        for (label, key) in &keys {
            let profiled = declared
                .labels
                .get(label)
                .unwrap_or_else(|| panic!("{label} is not profiled"));
            assert_eq!(profiled.key, vec![key.clone()], "{label}");
        }
        assert_eq!(
            declared.disagreements_with_catalog(&keys),
            Vec::<String>::new()
        );
    }

    /// Every label of the demo graph is described and keyed by its `id`, and the profile
    /// gives the graph tools a search index and a key index per label.
    #[test]
    fn the_demo_profile_covers_the_demo_graph() {
        let declared = Declared::parse(PROFILE).expect("catalog/graph-profile.toml parses");
        let labels = [
            "Account",
            "Invoice",
            "LineItem",
            "Payment",
            "Product",
            "PurchaseOrder",
            "Supplier",
        ]
        .map(String::from);
        assert_eq!(declared.labels.keys().cloned().collect::<Vec<_>>(), labels);
        assert_eq!(declared.warnings(&labels), Vec::<String>::new());
        for (label, d) in &declared.labels {
            assert_eq!(d.key, vec!["id"], "{label}");
            assert!(d.description.is_some(), "{label} has no description");
            assert!(
                d.text.contains(&"id".to_string()),
                "{label} is not searched by id"
            );
        }
        let profile = Profile::merge(&declared, &Default::default());
        assert_eq!(profile.keyed_labels().len(), labels.len());
        let search = search_index_statement(&profile).expect("a search index");
        assert!(
            search.contains("`Supplier`") && search.contains("n.`name`"),
            "{search}"
        );
        // One index per key, and one per caption (Supplier, Product and Account's `name`).
        assert_eq!(key_index_statements(&profile).len(), labels.len() + 3);
    }
}
