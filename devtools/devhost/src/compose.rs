//! Composition of a component with its dependencies, the way Spin 3+ does it: each
//! dependency is matched to the imports it satisfies, capabilities it does not inherit are
//! plugged with a deny adapter, and everything is encoded into one component with
//! `wac-graph`.

use crate::config::manifest::{Component as ManifestComponent, Inherit};
use anyhow::{Context, Result, anyhow, bail};
use std::collections::{BTreeSet, HashSet};
use std::path::Path;
use wac_graph::types::{Package, SubtypeChecker};
use wac_graph::{CompositionGraph, EncodeOptions};
use wit_component::{ComponentEncoder, DecodedWasm, StringEncoding};
use wit_parser::{
    InterfaceId, LiftLowerAbi, ManglingAndAbi, Resolve, Type, TypeDefKind, TypeOwner, World,
    WorldItem, WorldKey,
};

/// Capability kinds of `inherit_configuration` and the host interfaces (versionless) each
/// grants. Spin's list is longer; these are the kinds devhost implements.
pub const CAPABILITY_INTERFACES: &[(&str, &[&str])] = &[
    ("allowed_outbound_hosts", &["wasi:http/outgoing-handler"]),
    (
        "key_value_stores",
        &[
            "fermyon:spin/key-value",
            "spin:key-value/key-value",
            "wasi:keyvalue/store",
        ],
    ),
    (
        "variables",
        &[
            "fermyon:spin/variables",
            "spin:variables/variables",
            "wasi:config/store",
        ],
    ),
    (
        "sqlite_databases",
        &["fermyon:spin/sqlite", "spin:sqlite/sqlite"],
    ),
    ("ai_models", &["fermyon:spin/llm"]),
];

/// One dependency as the manifest declares it, with its component bytes.
pub struct DependencySource<'a> {
    /// The manifest key: an interface name, a package name or a plain name.
    pub name: &'a str,
    pub bytes: Vec<u8>,
    pub export: Option<&'a str>,
    pub inherit: &'a Inherit,
}

/// Spin component `id` of a manifest as the one component a request instantiates: its
/// source read, and its dependencies (if any) read and composed in. Loading (app.rs),
/// `--compose-into` (dist.rs) and `--footprint` (footprint.rs) all start from this.
pub fn compose_manifest_component(id: &str, component: &ManifestComponent) -> Result<Vec<u8>> {
    let root = read_wasm(&component.source, &format!("component `{id}`"))?;
    let mut dependencies = Vec::new();
    for (name, dependency) in &component.dependencies {
        dependencies.push(DependencySource {
            name,
            bytes: read_wasm(&dependency.path, &format!("dependency `{name}` of `{id}`"))?,
            export: dependency.export.as_deref(),
            inherit: &dependency.inherit,
        });
    }
    compose(id, &root, &dependencies)
}

fn read_wasm(path: &Path, what: &str) -> Result<Vec<u8>> {
    std::fs::read(path).with_context(|| {
        format!(
            "reading {what} from {} (build the components first: cargo build --target wasm32-wasip2 --profile component, or scripts/setup.sh)",
            path.display()
        )
    })
}

/// Composes `root` with `dependencies` into one component.
pub fn compose(
    component_id: &str,
    root: &[u8],
    dependencies: &[DependencySource],
) -> Result<Vec<u8>> {
    if dependencies.is_empty() {
        return Ok(root.to_vec());
    }
    let mut graph = CompositionGraph::new();
    let root_package = Package::from_bytes("devhost:root", None, root.to_vec(), graph.types_mut())
        .with_context(|| format!("component `{component_id}` is not a valid component"))?;
    let root_world = root_package.ty();
    let root_id = graph.register_package(root_package)?;
    let root_instance = graph.instantiate(root_id);
    let import_names: Vec<String> = graph.types()[root_world].imports.keys().cloned().collect();

    let mut satisfied: std::collections::BTreeMap<String, &str> = Default::default();
    for dependency in dependencies {
        let matched: Vec<&String> = import_names
            .iter()
            .filter(|import| matches_import(dependency.name, import))
            .collect();
        if matched.is_empty() {
            bail!(
                "dependency `{}` doesn't match any import of component `{component_id}` (it imports: {})",
                dependency.name,
                import_names.join(", ")
            );
        }
        let bytes = apply_deny_adapter(dependency.name, &dependency.bytes, dependency.inherit)?;
        // Like Spin: a dependency is registered under the package of its name, so two
        // dependencies from one package are refused, as `spin up` refuses them.
        let package_name = registered_package_name(dependency.name);
        let package = Package::from_bytes(&package_name, None, bytes, graph.types_mut())
            .with_context(|| {
                format!("dependency `{}` is not a valid component", dependency.name)
            })?;
        let world = package.ty();
        let package_id = graph.register_package(package).map_err(|e| {
            anyhow!(
                "dependency `{}`: {e} (Spin registers each dependency under the package of its \
                 name, `{package_name}`, so two dependencies may not come from one package)",
                dependency.name
            )
        })?;
        let instance = graph.instantiate(package_id);
        for import in matched {
            if let Some(other) = satisfied.insert(import.clone(), dependency.name) {
                bail!(
                    "component `{component_id}`: import `{import}` is satisfied by both `{other}` and `{}`",
                    dependency.name
                );
            }
            let export = dependency.export.unwrap_or(import);
            let export_ty = *graph.types()[world].exports.get(export).ok_or_else(|| {
                anyhow!(
                    "dependency `{}` doesn't export `{export}` to satisfy import `{import}`",
                    dependency.name
                )
            })?;
            let import_ty = graph.types()[root_world].imports[import.as_str()];
            let mut cache = Default::default();
            SubtypeChecker::new(&mut cache)
                .is_subtype(export_ty, graph.types(), import_ty, graph.types())
                .with_context(|| {
                    format!("dependency `{}` exports `{export}` which is not compatible with import `{import}`", dependency.name)
                })?;
            let alias = graph.alias_instance_export(instance, export)?;
            graph.set_instantiation_argument(root_instance, import, alias)?;
        }
    }
    export_all(&mut graph, root_world, root_instance)?;
    graph
        .encode(EncodeOptions::default())
        .with_context(|| format!("composing component `{component_id}`"))
}

fn export_all(
    graph: &mut CompositionGraph,
    world: wac_graph::types::WorldId,
    instance: wac_graph::NodeId,
) -> Result<()> {
    let names: Vec<String> = graph.types()[world].exports.keys().cloned().collect();
    for name in names {
        let alias = graph.alias_instance_export(instance, &name)?;
        graph.export(alias, &name)?;
    }
    Ok(())
}

/// Spin's matching of a dependency name to an import name: an interface name matches
/// itself (a versionless one any version); a package name matches all its interfaces; a
/// plain name matches only itself.
pub fn matches_import(dependency: &str, import: &str) -> bool {
    fn split(name: &str) -> (&str, Option<&str>) {
        match name.split_once('@') {
            Some((n, v)) => (n, Some(v)),
            None => (name, None),
        }
    }
    let (dep_name, dep_version) = split(dependency);
    let (imp_name, imp_version) = split(import);
    let version_ok = dep_version.is_none() || dep_version == imp_version;
    if !dependency.contains(':') {
        return !import.contains(':') && dependency == import;
    }
    match (dep_name.split_once('/'), imp_name.split_once('/')) {
        (Some(_), Some(_)) => dep_name == imp_name && version_ok,
        (None, Some((imp_package, _))) => dep_name == imp_package && version_ok,
        _ => false,
    }
}

/// The name Spin registers a dependency's package under: the package of an interface or
/// package name without version (`kg:router/router@0.1.0` → `kg:router`), or a plain name.
fn registered_package_name(dependency: &str) -> String {
    let name = versionless(dependency);
    name.split_once('/')
        .map_or(name, |(package, _)| package)
        .to_string()
}

/// Versionless interface name: `wasi:http/outgoing-handler@0.2.0` → `wasi:http/outgoing-handler`.
fn versionless(name: &str) -> &str {
    name.split_once('@').map_or(name, |(n, _)| n)
}

/// Interfaces (versionless) a dependency is denied, given what it inherits.
fn denied_interfaces(inherit: &Inherit) -> BTreeSet<&'static str> {
    CAPABILITY_INTERFACES
        .iter()
        .filter(|(kind, _)| !inherit.includes(kind))
        .flat_map(|(_, interfaces)| interfaces.iter().copied())
        .collect()
}

/// Plugs every capability import the dependency does not inherit with a deny adapter.
///
/// Spin ships a prebuilt adapter whose functions return "not permitted" errors. devhost
/// synthesises one from the dependency's own WIT instead, with `wit-component`'s dummy
/// module, whose functions trap: a denied call fails the request instead of returning an
/// error value. Stricter than Spin, never more permissive.
fn apply_deny_adapter(name: &str, bytes: &[u8], inherit: &Inherit) -> Result<Vec<u8>> {
    let denied = denied_interfaces(inherit);
    let DecodedWasm::Component(mut resolve, world) =
        wit_component::decode(bytes).with_context(|| format!("decoding dependency `{name}`"))?
    else {
        bail!("dependency `{name}` is a WIT package, not a component");
    };
    let to_deny: Vec<(String, InterfaceId)> = resolve.worlds[world]
        .imports
        .iter()
        .filter_map(|(key, item)| match item {
            WorldItem::Interface { id, .. } => {
                let full = resolve.name_world_key(key);
                denied.contains(versionless(&full)).then_some((full, *id))
            }
            _ => None,
        })
        .collect();
    if to_deny.is_empty() {
        return Ok(bytes.to_vec());
    }
    let adapter = deny_adapter(&mut resolve, world, &to_deny)?;

    let mut graph = CompositionGraph::new();
    let dependency =
        Package::from_bytes("devhost:denied", None, bytes.to_vec(), graph.types_mut())?;
    let dependency_world = dependency.ty();
    let dependency_id = graph.register_package(dependency)?;
    let adapter = Package::from_bytes("devhost:deny-adapter", None, adapter, graph.types_mut())?;
    let adapter_id = graph.register_package(adapter)?;
    let dependency_instance = graph.instantiate(dependency_id);
    let adapter_instance = graph.instantiate(adapter_id);
    for (import, _) in &to_deny {
        let alias = graph.alias_instance_export(adapter_instance, import)?;
        graph.set_instantiation_argument(dependency_instance, import, alias)?;
    }
    export_all(&mut graph, dependency_world, dependency_instance)?;
    graph
        .encode(EncodeOptions::default())
        .with_context(|| format!("applying the deny adapter to dependency `{name}`"))
}

/// A component exporting `to_deny` (as the dependency imports them) whose functions trap.
fn deny_adapter(
    resolve: &mut Resolve,
    dependency_world: wit_parser::WorldId,
    to_deny: &[(String, InterfaceId)],
) -> Result<Vec<u8>> {
    // The adapter imports only the interfaces whose types the denied ones use.
    let mut needed = HashSet::new();
    let mut stack: Vec<InterfaceId> = to_deny.iter().map(|(_, id)| *id).collect();
    while let Some(interface) = stack.pop() {
        for ty in resolve.interfaces[interface].types.values() {
            if let TypeDefKind::Type(Type::Id(target)) = resolve.types[*ty].kind
                && let TypeOwner::Interface(owner) = resolve.types[target].owner
                && owner != interface
                && needed.insert(owner)
            {
                stack.push(owner);
            }
        }
    }
    let source = &resolve.worlds[dependency_world];
    let imports = source
        .imports
        .iter()
        .filter(|(_, item)| matches!(item, WorldItem::Interface { id, .. } if needed.contains(id)))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let exports = to_deny
        .iter()
        .map(|(_, id)| {
            let item = source
                .imports
                .iter()
                .find(|(_, item)| matches!(item, WorldItem::Interface { id: i, .. } if i == id))
                .map(|(_, item)| item.clone())
                .expect("denied interfaces come from the world's imports");
            (WorldKey::Interface(*id), item)
        })
        .collect();
    let world = World {
        name: "devhost-deny-adapter".into(),
        imports,
        exports,
        package: source.package,
        docs: Default::default(),
        stability: Default::default(),
        includes: Default::default(),
        span: Default::default(),
    };
    let world = resolve.worlds.alloc(world);
    let mut module =
        wit_component::dummy_module(resolve, world, ManglingAndAbi::Legacy(LiftLowerAbi::Sync));
    wit_component::embed_component_metadata(&mut module, resolve, world, StringEncoding::UTF8)?;
    ComponentEncoder::default()
        .module(&module)?
        .validate(true)
        .encode()
        .context("encoding the deny adapter")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dependency_names_match_imports_like_spin() {
        assert!(matches_import(
            "kg:router/router@0.1.0",
            "kg:router/router@0.1.0"
        ));
        assert!(matches_import("kg:router/router", "kg:router/router@0.1.0"));
        assert!(matches_import("kg:router", "kg:router/router@0.1.0"));
        assert!(matches_import(
            "kg:retriever@0.1.0",
            "kg:retriever/retriever@0.1.0"
        ));
        assert!(matches_import("plain-name", "plain-name"));

        assert!(!matches_import(
            "kg:router/router@0.2.0",
            "kg:router/router@0.1.0"
        ));
        assert!(!matches_import(
            "kg:router/router",
            "kg:router/router-two@0.1.0"
        ));
        assert!(!matches_import("kg:other", "kg:router/router@0.1.0"));
        assert!(!matches_import("plain-name", "kg:router/router@0.1.0"));
        assert!(!matches_import(
            "kg:router/router@0.1.0",
            "kg:router/router"
        ));
    }

    #[test]
    fn dependencies_register_under_their_package_like_spin() {
        assert_eq!(
            registered_package_name("kg:router/router@0.1.0"),
            "kg:router"
        );
        assert_eq!(registered_package_name("kg:agent@0.1.0"), "kg:agent");
        assert_eq!(registered_package_name("kg:agent/types"), "kg:agent");
        assert_eq!(registered_package_name("my-dep"), "my-dep");
    }

    #[test]
    fn inheriting_a_kind_removes_its_interfaces_from_the_deny_list() {
        let none = denied_interfaces(&Inherit::None);
        assert!(none.contains("wasi:http/outgoing-handler"));
        assert!(none.contains("fermyon:spin/key-value"));
        let some = denied_interfaces(&Inherit::Some(vec!["allowed_outbound_hosts".into()]));
        assert!(!some.contains("wasi:http/outgoing-handler"));
        assert!(some.contains("fermyon:spin/variables"));
        assert!(denied_interfaces(&Inherit::All).is_empty());
    }
}
