//! The action catalog shipped with the application, compiled into the component and
//! validated on every instantiation (instances are per request; parsing takes microseconds).

use kg_actions::catalog::{ActionDef, Catalog, load};
use kg_wit::types::{Error, ErrorCode};
use serde_json::json;

const CATALOG: &str = include_str!("../../../catalog/actions.toml");

pub fn catalog() -> Result<Catalog, Error> {
    load(CATALOG).map_err(|e| Error::new(ErrorCode::Internal, format!("action catalog: {e}")))
}

/// The action, or a not-found error that lists the close matches.
pub fn find<'a>(catalog: &'a Catalog, entity: &str, name: &str) -> Result<&'a ActionDef, Error> {
    if let Some(action) = catalog.action(entity, name) {
        return Ok(action);
    }
    let names: Vec<String> = catalog
        .actions
        .iter()
        .map(|a| format!("{}/{}", a.entity, a.name))
        .collect();
    let wanted = format!("{entity}/{name}");
    let mut close: Vec<&String> = names
        .iter()
        .filter(|n| {
            let (n, w) = (n.to_lowercase(), wanted.to_lowercase());
            n == w
                || n.contains(&w)
                || w.contains(&n)
                || n.ends_with(&format!("/{}", name.to_lowercase()))
        })
        .collect();
    close.truncate(3);
    let mut e = Error::new(
        ErrorCode::NotFound,
        format!("no action `{name}` on `{entity}`"),
    );
    e.detail = Some(json!({"did_you_mean": close, "actions": names}).to_string());
    Err(e)
}
