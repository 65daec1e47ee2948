//! Spin variables: application variables with defaults or required values, provided by
//! `SPIN_VARIABLE_<NAME>` and `--variable name=value`, and `{{ name }}` templates.

use super::manifest::{Component, VariableDecl, validate_variable_name};
use anyhow::{Result, anyhow, bail};
use std::collections::BTreeMap;

/// Resolved application variables. Debug output never shows values: some are secrets.
pub struct Variables {
    values: BTreeMap<String, String>,
}

impl std::fmt::Debug for Variables {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Variables")
            .field("names", &self.values.keys().collect::<Vec<_>>())
            .finish()
    }
}

/// `SPIN_VARIABLE_NEO4J_ORIGIN=x` → `neo4j_origin = x`, as Spin's environment provider does.
pub fn provided_from_env(
    vars: impl IntoIterator<Item = (String, String)>,
) -> BTreeMap<String, String> {
    vars.into_iter()
        .filter_map(|(k, v)| {
            k.strip_prefix("SPIN_VARIABLE_")
                .map(|n| (n.to_ascii_lowercase(), v))
        })
        .collect()
}

/// `name=value` from a `--variable` flag.
pub fn parse_flag(flag: &str) -> Result<(String, String)> {
    let (name, value) = flag
        .split_once('=')
        .ok_or_else(|| anyhow!("--variable `{flag}` must be NAME=VALUE"))?;
    let name = name.trim().to_ascii_lowercase();
    validate_variable_name(&name)?;
    Ok((name, value.to_string()))
}

impl Variables {
    /// Applies provided values over the declarations' defaults. A provided name that is not
    /// declared, or a required one not provided, is an error naming it.
    pub fn new(
        decls: &BTreeMap<String, VariableDecl>,
        provided: BTreeMap<String, String>,
    ) -> Result<Variables> {
        if let Some(unknown) = provided.keys().find(|k| !decls.contains_key(*k)) {
            bail!(
                "variable `{unknown}` was provided but spin.toml does not declare it (declared: {})",
                decls.keys().cloned().collect::<Vec<_>>().join(", ")
            );
        }
        let mut values = BTreeMap::new();
        for (name, decl) in decls {
            let value = match (provided.get(name), &decl.default) {
                (Some(v), _) => v.clone(),
                (None, Some(default)) => default.clone(),
                (None, None) => bail!(
                    "variable `{name}` is required: set SPIN_VARIABLE_{} or pass --variable {name}=...",
                    name.to_ascii_uppercase()
                ),
            };
            values.insert(name.clone(), value);
        }
        Ok(Variables { values })
    }

    /// Expands `{{ name }}` references in a template.
    pub fn expand(&self, template: &str) -> Result<String> {
        let mut out = String::new();
        for piece in parse(template)? {
            match piece {
                Piece::Text(t) => out.push_str(t),
                Piece::Ref(name) => out.push_str(self.values.get(name).ok_or_else(|| {
                    anyhow!("template `{template}` refers to undeclared variable `{name}`")
                })?),
            }
        }
        Ok(out)
    }

    /// A component's variables, each template expanded.
    pub fn component_variables(&self, component: &Component) -> Result<BTreeMap<String, String>> {
        component
            .variables
            .iter()
            .map(|(name, template)| Ok((name.clone(), self.expand(template)?)))
            .collect()
    }
}

/// The variable names a template refers to.
pub fn references(template: &str) -> Result<Vec<String>> {
    Ok(parse(template)?
        .into_iter()
        .filter_map(|p| match p {
            Piece::Ref(name) => Some(name.to_string()),
            Piece::Text(_) => None,
        })
        .collect())
}

enum Piece<'a> {
    Text(&'a str),
    Ref(&'a str),
}

fn parse(template: &str) -> Result<Vec<Piece<'_>>> {
    let mut pieces = Vec::new();
    let mut rest = template;
    while let Some(start) = rest.find("{{") {
        if start > 0 {
            pieces.push(Piece::Text(&rest[..start]));
        }
        let after = &rest[start + 2..];
        let end = after
            .find("}}")
            .ok_or_else(|| anyhow!("template `{template}` has an unterminated `{{{{`"))?;
        let name = after[..end].trim();
        validate_variable_name(name).map_err(|e| anyhow!("template `{template}`: {e}"))?;
        pieces.push(Piece::Ref(name));
        rest = &after[end + 2..];
    }
    if !rest.is_empty() {
        pieces.push(Piece::Text(rest));
    }
    Ok(pieces)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn decls() -> BTreeMap<String, VariableDecl> {
        let d = |default: Option<&str>, secret| VariableDecl {
            default: default.map(str::to_string),
            required: default.is_none(),
            secret,
        };
        BTreeMap::from([
            ("origin".to_string(), d(Some("http://a:1"), false)),
            ("password".to_string(), d(None, true)),
        ])
    }

    fn provided(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn defaults_and_provided_values() {
        let v = Variables::new(&decls(), provided(&[("password", "s3cret")])).unwrap();
        assert_eq!(v.expand("{{origin}}/x").unwrap(), "http://a:1/x");
        assert_eq!(v.expand("[{{ password }}]").unwrap(), "[s3cret]");
        assert!(!format!("{v:?}").contains("s3cret"));
        let v = Variables::new(
            &decls(),
            provided(&[("password", "p"), ("origin", "http://b:2")]),
        )
        .unwrap();
        assert_eq!(v.expand("{{ origin }}").unwrap(), "http://b:2");
    }

    #[test]
    fn missing_required_and_undeclared_values_are_named() {
        let e = Variables::new(&decls(), BTreeMap::new())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("`password`") && e.contains("SPIN_VARIABLE_PASSWORD"),
            "{e}"
        );
        let e = Variables::new(&decls(), provided(&[("password", "p"), ("nope", "x")]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("`nope`"), "{e}");
    }

    #[test]
    fn template_errors() {
        let v = Variables::new(&decls(), provided(&[("password", "p")])).unwrap();
        assert!(
            v.expand("{{ origin")
                .unwrap_err()
                .to_string()
                .contains("unterminated")
        );
        assert!(
            v.expand("{{ other }}")
                .unwrap_err()
                .to_string()
                .contains("`other`")
        );
        assert!(v.expand("{{ Bad-Name }}").is_err());
    }

    #[test]
    fn environment_and_flags() {
        let env = provided_from_env([
            ("SPIN_VARIABLE_NEO4J_ORIGIN".to_string(), "x".to_string()),
            ("PATH".to_string(), "/bin".to_string()),
        ]);
        assert_eq!(env, provided(&[("neo4j_origin", "x")]));
        assert_eq!(
            parse_flag("llm_model=a=b").unwrap(),
            ("llm_model".into(), "a=b".into())
        );
        assert!(parse_flag("novalue").is_err());
    }

    proptest! {
        #[test]
        fn expansion_never_panics(template in ".{0,40}") {
            let v = Variables::new(&decls(), provided(&[("password", "p")])).unwrap();
            let _ = v.expand(&template);
        }
    }
}
