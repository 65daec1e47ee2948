//! Spin application manifest v2 (`spin.toml`), the subset devhost runs. Fields Spin has but
//! devhost does not implement are refused by name rather than silently ignored.

use anyhow::{Context, Result, bail};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(Debug)]
pub struct Manifest {
    pub application: Application,
    pub variables: BTreeMap<String, VariableDecl>,
    pub triggers: Vec<HttpTrigger>,
    pub components: BTreeMap<String, Component>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Application {
    pub name: String,
    pub version: Option<String>,
    // Parsed so that `deny_unknown_fields` accepts them; devhost has no use for them.
    #[allow(dead_code)]
    pub description: Option<String>,
    #[allow(dead_code)]
    pub authors: Option<Vec<String>>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VariableDecl {
    pub default: Option<String>,
    #[serde(default)]
    pub required: bool,
    /// Secret values are never printed (devhost prints no values at all).
    #[serde(default)]
    #[allow(dead_code)]
    pub secret: bool,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HttpTrigger {
    pub route: String,
    pub component: String,
}

#[derive(Debug)]
pub struct Component {
    pub source: PathBuf,
    /// Host directories mounted read-only into the component (`files`).
    pub files: Vec<FileMount>,
    pub allowed_outbound_hosts: Vec<String>,
    pub key_value_stores: Vec<String>,
    /// Component variable name → template over application variables.
    pub variables: BTreeMap<String, String>,
    pub dependencies: BTreeMap<String, Dependency>,
}

/// A `files = [{ source = "dir", destination = "/path" }]` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileMount {
    pub source: PathBuf,
    pub destination: String,
}

#[derive(Debug)]
pub struct Dependency {
    pub path: PathBuf,
    pub export: Option<String>,
    pub inherit: Inherit,
}

/// Which capability kinds a dependency inherits from the component that imports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Inherit {
    All,
    None,
    Some(Vec<String>),
}

/// Spin's capability kinds for `inherit_configuration`.
pub const CAPABILITY_KINDS: &[&str] = &[
    "ai_models",
    "allowed_outbound_hosts",
    "environment",
    "files",
    "key_value_stores",
    "sqlite_databases",
    "variables",
];

impl Inherit {
    pub fn includes(&self, kind: &str) -> bool {
        match self {
            Inherit::All => true,
            Inherit::None => false,
            Inherit::Some(kinds) => kinds.iter().any(|k| k == kind),
        }
    }
}

// ---- raw TOML shapes -------------------------------------------------------------------

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawManifest {
    spin_manifest_version: toml::Value,
    application: Application,
    #[serde(default)]
    variables: BTreeMap<String, VariableDecl>,
    #[serde(default)]
    trigger: RawTriggers,
    #[serde(default)]
    component: BTreeMap<String, RawComponent>,
}

#[derive(Deserialize, Default)]
struct RawTriggers {
    #[serde(default)]
    http: Vec<HttpTrigger>,
    #[serde(flatten)]
    other: BTreeMap<String, toml::Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawComponent {
    source: toml::Value,
    description: Option<String>,
    #[serde(default)]
    allowed_outbound_hosts: Vec<String>,
    #[serde(default)]
    key_value_stores: Vec<String>,
    #[serde(default)]
    variables: BTreeMap<String, String>,
    #[serde(default)]
    dependencies_inherit_configuration: bool,
    #[serde(default)]
    dependencies: BTreeMap<String, RawDependency>,
    build: Option<RawBuild>,
    // Spin fields devhost does not implement: accepted by the parser so the error can
    // name them, then refused.
    files: Option<toml::Value>,
    exclude_files: Option<toml::Value>,
    environment: Option<toml::Value>,
    sqlite_databases: Option<toml::Value>,
    ai_models: Option<toml::Value>,
    allowed_http_hosts: Option<toml::Value>,
    tool: Option<toml::Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBuild {
    #[allow(dead_code)]
    command: String,
    #[allow(dead_code)]
    workdir: Option<String>,
    #[allow(dead_code)]
    watch: Option<Vec<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDependency {
    path: Option<String>,
    export: Option<String>,
    inherit_configuration: Option<RawInherit>,
    version: Option<String>,
    registry: Option<String>,
    package: Option<String>,
    url: Option<String>,
    digest: Option<String>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum RawInherit {
    Flag(bool),
    Kinds(Vec<String>),
}

impl Manifest {
    pub fn load(path: &Path) -> Result<Manifest> {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let base = path.parent().unwrap_or(Path::new("."));
        Manifest::parse(&text, base).with_context(|| format!("in {}", path.display()))
    }

    pub fn parse(text: &str, base_dir: &Path) -> Result<Manifest> {
        let raw: RawManifest = toml::from_str(text)?;
        if raw.spin_manifest_version.as_integer() != Some(2)
            && raw.spin_manifest_version.as_str() != Some("2")
        {
            bail!(
                "spin_manifest_version must be 2, found {}",
                raw.spin_manifest_version
            );
        }
        if let Some(kind) = raw.trigger.other.keys().next() {
            bail!("trigger type `{kind}` is not supported by devhost (only http)");
        }
        for (name, decl) in &raw.variables {
            validate_variable_name(name)?;
            match (&decl.default, decl.required) {
                (Some(_), true) => {
                    bail!("variable `{name}`: `default` and `required = true` exclude each other")
                }
                (None, false) => {
                    bail!("variable `{name}`: give a `default` or set `required = true`")
                }
                _ => {}
            }
        }
        let mut components = BTreeMap::new();
        for (id, raw_component) in raw.component {
            let component = component(&id, raw_component, base_dir, &raw.variables)
                .with_context(|| format!("component `{id}`"))?;
            components.insert(id, component);
        }
        for trigger in &raw.trigger.http {
            if !components.contains_key(&trigger.component) {
                bail!(
                    "trigger for route `{}` names component `{}`, which is not defined",
                    trigger.route,
                    trigger.component
                );
            }
        }
        Ok(Manifest {
            application: raw.application,
            variables: raw.variables,
            triggers: raw.trigger.http,
            components,
        })
    }
}

fn component(
    id: &str,
    raw: RawComponent,
    base: &Path,
    app_variables: &BTreeMap<String, VariableDecl>,
) -> Result<Component> {
    let unsupported = [
        ("exclude_files", raw.exclude_files.is_some()),
        ("environment", raw.environment.is_some()),
        ("sqlite_databases", raw.sqlite_databases.is_some()),
        ("ai_models", raw.ai_models.is_some()),
        ("allowed_http_hosts", raw.allowed_http_hosts.is_some()),
        ("tool", raw.tool.is_some()),
    ];
    if let Some((field, _)) = unsupported.iter().find(|(_, present)| *present) {
        bail!("field `{field}` is not supported by devhost");
    }
    let _ = (raw.description, raw.build);
    let source = match raw.source {
        toml::Value::String(path) => base.join(path),
        other => bail!("only a local file `source` is supported by devhost, found {other}"),
    };
    for (name, template) in &raw.variables {
        validate_variable_name(name)?;
        for reference in crate::config::variables::references(template)? {
            if !app_variables.contains_key(&reference) {
                bail!(
                    "variable `{name}` refers to `{reference}`, which [variables] does not declare"
                );
            }
        }
    }
    // Spin 4 refuses the component-wide switch next to any per-dependency setting.
    if raw.dependencies_inherit_configuration
        && let Some((name, _)) = raw
            .dependencies
            .iter()
            .find(|(_, d)| d.inherit_configuration.is_some())
    {
        bail!(
            "`dependencies_inherit_configuration` and dependency `{name}`'s `inherit_configuration` \
             are mutually exclusive (as in Spin): use one or the other"
        );
    }
    let mut dependencies = BTreeMap::new();
    for (name, dep) in raw.dependencies {
        validate_dependency_name(&name)?;
        let path = match (&dep.path, &dep.version, &dep.url) {
            (Some(path), None, None)
                if dep.registry.is_none() && dep.package.is_none() && dep.digest.is_none() =>
            {
                base.join(path)
            }
            _ => bail!("dependency `{name}`: devhost supports only local `path` dependencies"),
        };
        let inherit = match dep.inherit_configuration {
            None if raw.dependencies_inherit_configuration => Inherit::All,
            None | Some(RawInherit::Flag(false)) => Inherit::None,
            Some(RawInherit::Flag(true)) => Inherit::All,
            Some(RawInherit::Kinds(kinds)) => {
                if let Some(bad) = kinds
                    .iter()
                    .find(|k| !CAPABILITY_KINDS.contains(&k.as_str()))
                {
                    bail!(
                        "dependency `{name}`: unknown inherit_configuration kind `{bad}` (known: {})",
                        CAPABILITY_KINDS.join(", ")
                    );
                }
                Inherit::Some(kinds)
            }
        };
        dependencies.insert(
            name,
            Dependency {
                path,
                export: dep.export,
                inherit,
            },
        );
    }
    let _ = id;
    let files = match raw.files {
        None => Vec::new(),
        Some(value) => file_mounts(&value, base)?,
    };
    Ok(Component {
        source,
        files,
        allowed_outbound_hosts: raw.allowed_outbound_hosts,
        key_value_stores: raw.key_value_stores,
        variables: raw.variables,
        dependencies,
    })
}

/// Spin's `files`: devhost implements the directory-mapping form,
/// `{ source = "dir", destination = "/path" }`, mounted read-only like Spin does; glob
/// strings are refused by name.
fn file_mounts(value: &toml::Value, base: &Path) -> Result<Vec<FileMount>> {
    let Some(entries) = value.as_array() else {
        bail!("field `files` must be an array");
    };
    let mut mounts = Vec::new();
    for entry in entries {
        let Some(table) = entry.as_table() else {
            bail!(
                "field `files`: devhost supports only {{ source = \"dir\", destination = \"/path\" }} entries, not {entry}"
            );
        };
        if let Some(unknown) = table.keys().find(|k| *k != "source" && *k != "destination") {
            bail!("field `files`: unknown key `{unknown}`");
        }
        let source = table.get("source").and_then(toml::Value::as_str);
        let destination = table.get("destination").and_then(toml::Value::as_str);
        let (Some(source), Some(destination)) = (source, destination) else {
            bail!("field `files`: each entry needs `source` and `destination` strings");
        };
        if !destination.starts_with('/') {
            bail!("field `files`: destination `{destination}` must be an absolute path");
        }
        // Like Spin: mounts come from inside the application directory (the manifest's).
        let inside = Path::new(source).is_relative()
            && !Path::new(source)
                .components()
                .any(|c| matches!(c, std::path::Component::ParentDir));
        if !inside {
            bail!(
                "field `files`: source `{source}` is outside the application directory (as in \
                 Spin, files must be within the directory of spin.toml)"
            );
        }
        let source = base.join(source);
        if !source.is_dir() {
            bail!(
                "field `files`: source `{}` is not a directory",
                source.display()
            );
        }
        mounts.push(FileMount {
            source,
            destination: destination.to_string(),
        });
    }
    Ok(mounts)
}

/// Spin's variable names: a lowercase letter, then lowercase letters, digits, underscores.
pub fn validate_variable_name(name: &str) -> Result<()> {
    let ok = name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if !ok {
        bail!(
            "variable name `{name}` must be lowercase letters, digits and underscores, starting with a letter"
        );
    }
    Ok(())
}

/// `ns:pkg/iface@ver`, `ns:pkg@ver`, `ns:pkg`, `ns:pkg/iface` or a plain kebab name.
fn validate_dependency_name(name: &str) -> Result<()> {
    let kebab = |s: &str| {
        !s.is_empty()
            && s.split('-').all(|w| {
                !w.is_empty()
                    && w.chars()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
            })
    };
    let (head, version) = match name.split_once('@') {
        Some((h, v)) => (h, Some(v)),
        None => (name, None),
    };
    let version_ok = version.is_none_or(|v| {
        let core = v.split(['-', '+']).next().unwrap_or("");
        core.split('.').count() == 3 && core.split('.').all(|p| p.parse::<u64>().is_ok())
    });
    let head_ok = match head.split_once(':') {
        None => version.is_none() && kebab(head),
        Some((ns, rest)) => {
            let (package, interface) = match rest.split_once('/') {
                Some((p, i)) => (p, Some(i)),
                None => (rest, None),
            };
            kebab(ns) && kebab(package) && interface.is_none_or(kebab)
        }
    };
    if !(head_ok && version_ok) {
        bail!("dependency name `{name}` is not an interface, package or plain kebab name");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const MANIFEST: &str = r#"
spin_manifest_version = 2
[application]
name = "kg-agent"
version = "0.1.0"
[variables]
neo4j_origin = { default = "http://127.0.0.1:7474" }
llm_api_key = { required = true, secret = true }
[[trigger.http]]
route = "/..."
component = "dispatcher"
[component.dispatcher]
source = "target/kg_dispatcher.wasm"
allowed_outbound_hosts = ["{{ neo4j_origin }}"]
key_value_stores = ["default"]
[component.dispatcher.variables]
neo4j_origin = "{{ neo4j_origin }}"
[component.dispatcher.dependencies]
"kg:router/router@0.1.0" = { path = "target/kg_router.wasm", inherit_configuration = ["allowed_outbound_hosts", "variables"] }
"kg:query-tools/query-tools@0.1.1" = { path = "target/kg_query_tools.wasm" }
"kg:retriever/retriever@0.1.0" = { path = "target/kg_retriever.wasm", inherit_configuration = true }
[component.dispatcher.build]
command = "cargo build"
"#;

    fn parse(text: &str) -> Result<Manifest> {
        Manifest::parse(text, Path::new("/app"))
    }

    fn error(text: &str) -> String {
        format!("{:#}", parse(text).unwrap_err())
    }

    #[test]
    fn parses_a_realistic_manifest() {
        let m = parse(MANIFEST).unwrap();
        assert_eq!(m.application.name, "kg-agent");
        assert!(m.variables["llm_api_key"].secret);
        assert_eq!(m.triggers[0].route, "/...");
        let d = &m.components["dispatcher"];
        assert_eq!(d.source, Path::new("/app/target/kg_dispatcher.wasm"));
        assert_eq!(d.key_value_stores, ["default"]);
        let router = &d.dependencies["kg:router/router@0.1.0"];
        assert_eq!(router.path, Path::new("/app/target/kg_router.wasm"));
        assert!(router.inherit.includes("variables"));
        assert!(!router.inherit.includes("key_value_stores"));
        assert_eq!(
            d.dependencies["kg:query-tools/query-tools@0.1.1"].inherit,
            Inherit::None
        );
        assert_eq!(
            d.dependencies["kg:retriever/retriever@0.1.0"].inherit,
            Inherit::All
        );
    }

    #[test]
    fn dependencies_inherit_configuration_is_the_default_for_dependencies() {
        let switch = "key_value_stores = [\"default\"]\ndependencies_inherit_configuration = true";
        let text = MANIFEST
            .replace(
                ", inherit_configuration = [\"allowed_outbound_hosts\", \"variables\"]",
                "",
            )
            .replace(", inherit_configuration = true", "")
            .replace("key_value_stores = [\"default\"]", switch);
        let m = parse(&text).unwrap();
        assert_eq!(
            m.components["dispatcher"].dependencies["kg:query-tools/query-tools@0.1.1"].inherit,
            Inherit::All
        );
        // Spin refuses the switch next to any per-dependency setting; so does devhost.
        let both = MANIFEST.replace("key_value_stores = [\"default\"]", switch);
        let e = format!("{:#}", parse(&both).unwrap_err());
        assert!(e.contains("mutually exclusive"), "{e}");
    }

    #[test]
    fn refuses_what_spin_refuses_or_devhost_cannot_do_naming_the_culprit() {
        let cases = [
            (
                MANIFEST.replace("spin_manifest_version = 2", "spin_manifest_version = 1"),
                "spin_manifest_version",
            ),
            (
                MANIFEST.replace("component = \"dispatcher\"", "component = \"nope\""),
                "`nope`",
            ),
            (
                MANIFEST.replace("{ required = true, secret = true }", "{ secret = true }"),
                "`llm_api_key`",
            ),
            (
                MANIFEST.replace(
                    "{ default = \"http://127.0.0.1:7474\" }",
                    "{ default = \"x\", required = true }",
                ),
                "`neo4j_origin`",
            ),
            (
                MANIFEST.replace(
                    "neo4j_origin = \"{{ neo4j_origin }}\"",
                    "neo4j_origin = \"{{ nope }}\"",
                ),
                "`nope`",
            ),
            (
                MANIFEST.replace("key_value_stores = [\"default\"]", "files = [\"x\"]"),
                "`files`",
            ),
            (
                MANIFEST.replace("key_value_stores", "key_value_store"),
                "key_value_store",
            ),
            (
                MANIFEST.replace(
                    "inherit_configuration = true",
                    "inherit_configuration = [\"network\"]",
                ),
                "`network`",
            ),
            (
                MANIFEST.replace(
                    "{ path = \"target/kg_query_tools.wasm\" }",
                    "{ version = \"1.0.0\" }",
                ),
                "only local `path`",
            ),
            (
                MANIFEST.replace("\"kg:router/router@0.1.0\"", "\"Kg:Agent/Router\""),
                "Kg:Agent/Router",
            ),
            (
                MANIFEST.replace("[[trigger.http]]", "[[trigger.redis]]"),
                "`redis`",
            ),
        ];
        for (text, expected) in cases {
            let e = error(&text);
            assert!(e.contains(expected), "expected `{expected}` in: {e}");
        }
    }

    #[test]
    fn dependency_names() {
        for ok in [
            "kg:router/router@0.1.0",
            "kg:agent",
            "kg:agent@0.1.0",
            "kg:router/router",
            "plain-name",
            "wasi:http/types@0.2.0-rc-1",
        ] {
            assert!(validate_dependency_name(ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            "kg:",
            ":x",
            "kg:agent/",
            "kg:agent@1",
            "Plain",
            "plain@1.0.0",
            "a b",
        ] {
            assert!(validate_dependency_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn files_mount_directories_and_refuse_the_rest() {
        let dir = std::env::temp_dir();
        let with = |files: &str| {
            Manifest::parse(
                &MANIFEST.replace(
                    "key_value_stores = [\"default\"]",
                    &format!("files = {files}"),
                ),
                &dir,
            )
        };
        let m = with("[{ source = \".\", destination = \"/data\" }]").unwrap();
        let mounts = &m.components["dispatcher"].files;
        assert_eq!(mounts[0].destination, "/data");
        assert!(mounts[0].source.is_dir());
        for (files, needle) in [
            (
                "[{ source = \"no-such-dir\", destination = \"/d\" }]",
                "not a directory",
            ),
            ("[{ source = \".\", destination = \"d\" }]", "absolute path"),
            (
                "[{ source = \"/etc\", destination = \"/d\" }]",
                "outside the application directory",
            ),
            (
                "[{ source = \"../x\", destination = \"/d\" }]",
                "outside the application directory",
            ),
            ("[{ source = \".\" }]", "`source` and `destination`"),
            ("[\"static/**\"]", "only { source"),
        ] {
            let e = format!("{:#}", with(files).unwrap_err());
            assert!(e.contains(needle), "{files}: {e}");
        }
    }
}
