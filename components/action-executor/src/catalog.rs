//! The action catalog: `/catalog/actions.toml` as `spin.toml` mounts it (`files`), or, when
//! nothing is mounted there, the copy compiled into the component. Validated on every
//! instantiation (instances are per request; parsing takes microseconds).

use kg_actions::catalog::{ActionDef, Catalog, load};
use kg_wit::types::{Error, ErrorCode};
use serde_json::json;

const BUILT_IN: &str = include_str!("../../../catalog/actions.toml");
pub const MOUNTED: &str = "/catalog/actions.toml";

/// The catalog text and where it came from.
fn text() -> Result<(String, &'static str), Error> {
    match std::fs::read_to_string(MOUNTED) {
        Ok(text) => Ok((text, MOUNTED)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Ok((BUILT_IN.to_string(), "the built-in copy"))
        }
        Err(e) => Err(Error::new(
            ErrorCode::Internal,
            format!("action catalog: reading {MOUNTED}: {e}"),
        )),
    }
}

pub fn catalog() -> Result<Catalog, Error> {
    Ok(catalog_with_source()?.0)
}

/// The catalog, a description of its source and its version (`sha256:` and the first 12
/// hex digits of the text's hash), for the status check: `/health` shows the version so
/// a behaviour change can be tied to a catalog change.
pub fn catalog_with_source() -> Result<(Catalog, &'static str, String), Error> {
    let (text, source) = text()?;
    let version = format!(
        "sha256:{}",
        &kg_actions::approval::sha256_hex(text.as_bytes())[..12]
    );
    let catalog = load(&text).map_err(|e| {
        Error::new(
            ErrorCode::Internal,
            format!("action catalog ({source}): {e}"),
        )
    })?;
    Ok((catalog, source, version))
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
