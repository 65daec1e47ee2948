//! Spin's runtime configuration file (`--runtime-config-file`), the part devhost
//! implements: `[key_value_store.<label>]` tables of type `spin` (a SQLite file) or `redis`.
//! Everything else Spin accepts there (variables providers, SQLite databases, LLM, OTel…)
//! is refused by name, so a file that works on Spin never half-works on devhost.

use anyhow::{Context, Result, bail};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Where one key-value store lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreConfig {
    /// Spin's local store: a SQLite file (relative paths resolve against the file's folder).
    Sqlite { path: PathBuf },
    /// Redis or Valkey; every instance pointed at the same URL shares the keys.
    Redis { url: String },
}

#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct RuntimeConfig {
    /// Store label → where it lives. Labels not listed fall back to devhost's defaults.
    pub key_value_stores: BTreeMap<String, StoreConfig>,
}

impl RuntimeConfig {
    pub fn load(path: &Path) -> Result<RuntimeConfig> {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let base = path.parent().unwrap_or(Path::new("."));
        RuntimeConfig::parse(&text, base).with_context(|| format!("in {}", path.display()))
    }

    pub fn parse(text: &str, base_dir: &Path) -> Result<RuntimeConfig> {
        let table: toml::Table = toml::from_str(text)?;
        let mut config = RuntimeConfig::default();
        for (section, value) in &table {
            match section.as_str() {
                "key_value_store" => {
                    let Some(stores) = value.as_table() else {
                        bail!("`key_value_store` must be a table of stores");
                    };
                    for (label, store) in stores {
                        let parsed = store_config(store, base_dir)
                            .with_context(|| format!("[key_value_store.{label}]"))?;
                        config.key_value_stores.insert(label.clone(), parsed);
                    }
                }
                other => bail!(
                    "`{other}` is Spin runtime configuration devhost does not implement \
                     (devhost implements only [key_value_store.*] of type \"spin\" or \"redis\"); \
                     run this file with `spin up` instead"
                ),
            }
        }
        Ok(config)
    }
}

fn store_config(value: &toml::Value, base_dir: &Path) -> Result<StoreConfig> {
    let Some(table) = value.as_table() else {
        bail!("a store must be a table with a `type`");
    };
    let kind = table
        .get("type")
        .and_then(toml::Value::as_str)
        .context("missing `type` (\"spin\" or \"redis\")")?;
    let allowed: &[&str] = match kind {
        "spin" => &["type", "path"],
        "redis" => &["type", "url"],
        other => bail!(
            "store type `{other}` is not implemented by devhost (it implements \"spin\" and \"redis\"; \
             Spin also has azure_cosmos and aws_dynamo)"
        ),
    };
    if let Some(unknown) = table.keys().find(|k| !allowed.contains(&k.as_str())) {
        bail!("unknown field `{unknown}` for a store of type \"{kind}\"");
    }
    match kind {
        "spin" => {
            let path = table
                .get("path")
                .and_then(toml::Value::as_str)
                .context("a \"spin\" store needs a `path` (devhost has no state directory)")?;
            Ok(StoreConfig::Sqlite {
                path: base_dir.join(path),
            })
        }
        _ => {
            let url = table
                .get("url")
                .and_then(toml::Value::as_str)
                .context("a \"redis\" store needs a `url`, e.g. redis://127.0.0.1:6379")?;
            if !(url.starts_with("redis://") || url.starts_with("rediss://")) {
                bail!("`url` must start with redis:// or rediss://, found `{url}`");
            }
            Ok(StoreConfig::Redis {
                url: url.to_string(),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<RuntimeConfig> {
        RuntimeConfig::parse(text, Path::new("/base"))
    }

    fn error(text: &str) -> String {
        format!("{:#}", parse(text).unwrap_err())
    }

    #[test]
    fn parses_redis_and_spin_stores_like_spin() {
        let config = parse(
            r#"
            [key_value_store.default]
            type = "redis"
            url = "redis://127.0.0.1:6379"

            [key_value_store.cache]
            type = "spin"
            path = "state/cache.db"
            "#,
        )
        .unwrap();
        assert_eq!(
            config.key_value_stores["default"],
            StoreConfig::Redis {
                url: "redis://127.0.0.1:6379".into()
            }
        );
        assert_eq!(
            config.key_value_stores["cache"],
            StoreConfig::Sqlite {
                path: "/base/state/cache.db".into()
            }
        );
        assert_eq!(parse("").unwrap(), RuntimeConfig::default());
    }

    #[test]
    fn refuses_what_it_does_not_implement_naming_it() {
        assert!(error("[[config_provider]]\ntype = \"vault\"").contains("`config_provider`"));
        assert!(
            error("[key_value_store.default]\ntype = \"azure_cosmos\"").contains("azure_cosmos")
        );
        assert!(error("[key_value_store.default]\ntype = \"redis\"").contains("needs a `url`"));
        assert!(
            error("[key_value_store.default]\ntype = \"redis\"\nurl = \"http://x\"")
                .contains("redis://")
        );
        assert!(
            error("[key_value_store.default]\ntype = \"redis\"\nurl = \"redis://x\"\npath = \"a\"")
                .contains("unknown field `path`")
        );
        assert!(error("[key_value_store.default]\npath = \"a\"").contains("missing `type`"));
        assert!(error("[key_value_store.default]\ntype = \"spin\"").contains("needs a `path`"));
    }
}
