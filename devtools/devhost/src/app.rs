//! Loading an application from `spin.toml`: compose each triggered component with its
//! dependencies, compile it once, and pre-link it so each request only instantiates.

use crate::compose::{self, DependencySource};
use crate::config::manifest::Manifest;
use crate::config::outbound::AllowedHosts;
use crate::config::routes::Routes;
use crate::config::runtime_config::RuntimeConfig;
use crate::config::variables::Variables;
use crate::host::{self, ComponentPolicy, PROVIDED_INTERFACES, RequestState};
use crate::kv::KeyValueStores;
use crate::outbound::Outbound;
use anyhow::{Context, Result, bail};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::Arc;
use wasmtime::component::Component;
use wasmtime::component::types::ComponentItem;
use wasmtime::{Config, Engine};
use wasmtime_wasi_http::bindings::ProxyPre;

pub struct App {
    pub name: String,
    pub version: String,
    pub engine: Engine,
    pub routes: Routes,
    pub components: HashMap<String, LoadedComponent>,
    /// Outbound HTTP, shared by every component (its connection pool is per origin).
    pub outbound: Arc<Outbound>,
}

pub struct LoadedComponent {
    pub pre: ProxyPre<RequestState>,
    pub policy: Arc<ComponentPolicy>,
}

impl App {
    pub fn load(
        manifest_path: &Path,
        provided_variables: BTreeMap<String, String>,
        runtime_config: &RuntimeConfig,
        kv_path: &Path,
        outbound: Outbound,
    ) -> Result<App> {
        let manifest = Manifest::load(manifest_path)
            .with_context(|| format!("loading {}", manifest_path.display()))?;
        let variables = Variables::new(&manifest.variables, provided_variables)?;
        let kv = KeyValueStores::open(runtime_config, kv_path)?;
        let mut config = Config::new();
        config.async_support(true);
        let engine = Engine::new(&config)?;
        let linker = host::linker(&engine)?;
        let routes = Routes::new(&manifest.triggers)?;

        let mut components = HashMap::new();
        for trigger in &manifest.triggers {
            let id = &trigger.component;
            if components.contains_key(id) {
                continue;
            }
            let component = &manifest.components[id];
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
            let composed = compose::compose(id, &root, &dependencies)?;
            let compiled = Component::from_binary(&engine, &composed)
                .with_context(|| format!("compiling component `{id}`"))?;
            refuse_unprovided_imports(id, &engine, &compiled)?;
            let pre = ProxyPre::new(linker.instantiate_pre(&compiled)?).with_context(|| {
                format!("component `{id}` does not export wasi:http/incoming-handler")
            })?;
            let hosts: Vec<String> = component
                .allowed_outbound_hosts
                .iter()
                .map(|h| variables.expand(h))
                .collect::<Result<_, _>>()
                .with_context(|| format!("component `{id}`: allowed_outbound_hosts"))?;
            let policy = ComponentPolicy {
                id: id.clone(),
                variables: variables.component_variables(component)?,
                allowed_hosts: AllowedHosts::parse(&hosts)
                    .with_context(|| format!("component `{id}`: allowed_outbound_hosts"))?,
                key_value_stores: component.key_value_stores.clone(),
                kv: kv.clone(),
                files: component
                    .files
                    .iter()
                    .map(|f| (f.source.clone(), f.destination.clone()))
                    .collect(),
            };
            components.insert(
                id.clone(),
                LoadedComponent {
                    pre,
                    policy: Arc::new(policy),
                },
            );
        }
        Ok(App {
            name: manifest.application.name.clone(),
            version: manifest.application.version.clone().unwrap_or_default(),
            engine,
            routes,
            components,
            outbound: Arc::new(outbound),
        })
    }
}

fn read_wasm(path: &Path, what: &str) -> Result<Vec<u8>> {
    std::fs::read(path).with_context(|| {
        format!(
            "reading {what} from {} (build the components first: cargo build --target wasm32-wasip2 --release)",
            path.display()
        )
    })
}

/// A component importing an interface devhost does not implement is refused up front,
/// naming the interfaces, instead of failing at link time with a generic message.
fn refuse_unprovided_imports(id: &str, engine: &Engine, component: &Component) -> Result<()> {
    let missing: Vec<String> = component
        .component_type()
        .imports(engine)
        // An instance of value types only (like `kg:agent/types`) needs no implementation:
        // wasmtime, and so Spin, link it without one.
        .filter(|(_, item)| !is_types_only(engine, item))
        .map(|(name, _)| name.to_string())
        .filter(|name| !PROVIDED_INTERFACES.iter().any(|p| name.starts_with(p)))
        .collect();
    if !missing.is_empty() {
        bail!(
            "component `{id}` (with its dependencies) imports {}, which devhost does not provide; \
             devhost provides: {}",
            missing.join(", "),
            PROVIDED_INTERFACES.join(", ")
        );
    }
    Ok(())
}

fn is_types_only(engine: &Engine, item: &ComponentItem) -> bool {
    match item {
        ComponentItem::ComponentInstance(instance) => instance
            .exports(engine)
            .all(|(_, export)| matches!(export, ComponentItem::Type(_))),
        _ => false,
    }
}
