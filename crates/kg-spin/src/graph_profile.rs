//! The declared graph profile: `/catalog/graph-profile.toml` as `spin.toml` mounts it
//! beside the action catalog. A mounted catalog folder without the file declares nothing
//! (keys then come from the graph's own constraints); with nothing mounted at all, the
//! copy compiled in (the demo graph's, as for the action catalog) is used. Validated on
//! every instantiation (instances are per request; parsing takes microseconds).

use kg_graph_profile::Declared;
use kg_wit::types::Check;

pub const MOUNTED: &str = "/catalog/graph-profile.toml";
/// The action catalog's path: its presence says the catalog folder is mounted.
const CATALOG: &str = "/catalog/actions.toml";
const BUILT_IN: &str = include_str!("../../../catalog/graph-profile.toml");

/// The declared profile and where it came from.
pub struct Loaded {
    pub declared: Declared,
    pub source: &'static str,
}

pub fn load() -> Result<Loaded, String> {
    let (text, source) = match std::fs::read_to_string(MOUNTED) {
        Ok(text) => (text, MOUNTED),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if std::fs::metadata(CATALOG).is_ok() {
                (
                    String::new(),
                    "nothing declared (no graph-profile.toml in /catalog)",
                )
            } else {
                (BUILT_IN.to_string(), "the built-in copy")
            }
        }
        Err(e) => return Err(format!("graph profile: reading {MOUNTED}: {e}")),
    };
    let declared = Declared::parse(&text).map_err(|e| format!("graph profile ({source}): {e}"))?;
    Ok(Loaded { declared, source })
}

/// The `graph profile` status check: refused (not ready) for a file that does not
/// parse or that keys a catalog entity by another property than the catalog does;
/// labels and relationship types the graph does not have are warnings (the check stays
/// ok). `graph` is the graph's labels, relationship types and property keys, when it
/// answered.
pub fn check(
    graph: Option<(&[String], &[String], &[String])>,
    catalog_keys: Option<&[(String, String)]>,
) -> Check {
    let loaded = match load() {
        Ok(loaded) => loaded,
        Err(e) => {
            return Check {
                name: "graph profile".into(),
                ok: false,
                detail: e,
            };
        }
    };
    let errors = catalog_keys
        .map(|keys| loaded.declared.disagreements_with_catalog(keys))
        .unwrap_or_default();
    let warnings = graph
        .map(|(labels, types, properties)| {
            let mut w = loaded.declared.warnings(labels);
            w.extend(loaded.declared.policy_warnings(types, properties));
            w
        })
        .unwrap_or_default();
    let policy = &loaded.declared.policy;
    let rules = policy.labels.len()
        + policy.types.len()
        + policy
            .label_properties
            .values()
            .map(|m| m.len())
            .sum::<usize>()
        + policy
            .type_properties
            .values()
            .map(|m| m.len())
            .sum::<usize>();
    let mut detail = format!(
        "{} labels declared, from {}",
        loaded.declared.labels.len(),
        loaded.source
    );
    // Said only when there is one: without a policy the check reads as it always did.
    if rules > 0 {
        detail.push_str(&format!(
            "; visibility policy: {rules} rules (GET /graph/policy)"
        ));
    }
    for e in &errors {
        detail.push_str(&format!("; error: {e}"));
    }
    for w in &warnings {
        detail.push_str(&format!("; warning: {w}"));
    }
    Check {
        name: "graph profile".into(),
        ok: errors.is_empty(),
        detail,
    }
}
