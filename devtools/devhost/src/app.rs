//! Loading an application from `spin.toml`: compose each triggered component with its
//! dependencies, compile it once, and pre-link it so each request only instantiates.

use crate::compose;
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
use wasmtime::{
    Cache, Config, Enabled, Engine, InstanceAllocationStrategy, PoolingAllocationConfig,
    ProfilingStrategy,
};
use wasmtime_wasi_http::bindings::ProxyPre;

pub struct App {
    pub name: String,
    pub version: String,
    pub engine: Engine,
    pub routes: Routes,
    pub components: HashMap<String, LoadedComponent>,
    /// Outbound HTTP, shared by every component (its connection pool is per origin).
    pub outbound: Arc<Outbound>,
    /// `--server-timing`: each response carries its request's breakdown.
    pub server_timing: bool,
    /// `--host-call-census`: each request's host calls listed by name on stderr.
    pub host_call_census: bool,
    /// With the pooling allocator, one permit per pool slot: a request beyond the pool
    /// waits for a slot instead of failing to instantiate.
    pub instance_slots: Option<Arc<tokio::sync::Semaphore>>,
}

/// How the engine runs components.
#[derive(Debug, Clone)]
pub struct EngineSettings {
    /// Instances come from a pool of pre-reserved memories, tables and stacks, as Spin
    /// does; otherwise each instantiation maps its own.
    pub pooling: Option<PoolLimits>,
    /// Write /tmp/perf-<pid>.map so `perf` names the components' functions.
    pub perf_map: bool,
    /// Keep compiled components in wasmtime's on-disk cache, as `spin up` does.
    pub cache: CompileCache,
}

/// Where compiled components are kept between runs. Composing and compiling the
/// application costs seconds of CPU on every start; with the cache, a start after the
/// first only reads the machine code back (wasmtime keys it by the composed bytes and the
/// engine's settings, so a rebuilt component is compiled again).
#[derive(Debug, Clone)]
pub enum CompileCache {
    /// wasmtime's default cache configuration (`$HOME/.config/wasmtime/config.toml` when
    /// present, else its defaults: a directory under the user's cache directory).
    Default,
    /// A wasmtime cache configuration file (`spin up --cache FILE`).
    File(std::path::PathBuf),
    /// Compile on every start (`spin up --disable-cache`).
    Disabled,
}

/// Bounds of the instance pool.
#[derive(Debug, Clone, Copy)]
pub struct PoolLimits {
    /// Instances alive at once (one per request in flight); more requests wait.
    pub instances: u32,
}

impl EngineSettings {
    fn config(&self) -> Result<Config> {
        let mut config = Config::new();
        config.async_support(true);
        if let Some(limits) = self.pooling {
            config.allocation_strategy(InstanceAllocationStrategy::Pooling(pool_config(limits)));
        }
        if self.perf_map {
            config.profiler(ProfilingStrategy::PerfMap);
        }
        let cache = match &self.cache {
            CompileCache::Default => Some(Cache::from_file(None)),
            CompileCache::File(path) => Some(
                Cache::from_file(Some(path)).with_context(|| format!("--cache {}", path.display())),
            ),
            CompileCache::Disabled => None,
        };
        config.cache(cache.transpose().context("wasmtime's compilation cache")?);
        Ok(config)
    }
}

/// The pool's slots, sized for the composed application: one Spin component with its
/// dependencies composed in is one component instance holding a core instance, a linear
/// memory and a table per Rust component and per adapter.
fn pool_config(limits: PoolLimits) -> PoolingAllocationConfig {
    const CORE_INSTANCES_PER_COMPONENT: u32 = 64;
    const MEMORIES_PER_COMPONENT: u32 = 16;
    const TABLES_PER_COMPONENT: u32 = 32;
    // Two fiber stacks per instance. With wasmtime's `component-model-async` feature (its
    // default; devhost's Cargo.toml turns it off) a call into a component runs through an
    // event loop: the guest call on a worker fiber, and the lowering of a host call's
    // result, once it arrives, on a fiber of its own. A /health request's store then held
    // two stacks at once, and one stack per instance ran out under 200 concurrent /health
    // checks ("maximum concurrent limit of 128 for fibers reached", in CI on 26 Nov; with
    // a pool of 2, 188 of 200 requests logged it). Without the feature a request holds one;
    // the second is headroom, cheap (address space until used), in case another crate's
    // features turn the event loop back on. tests/tests/devhost_pool.rs runs that load on
    // a pool of 2.
    const FIBER_STACKS_PER_INSTANCE: u32 = 2;
    // What a request typically touches of a memory (the dispatcher's heap: about 1 MiB).
    const KEEP_RESIDENT: usize = 2 << 20;
    let mut pool = PoolingAllocationConfig::new();
    pool.total_component_instances(limits.instances)
        .total_core_instances(limits.instances * CORE_INSTANCES_PER_COMPONENT)
        .total_memories(limits.instances * MEMORIES_PER_COMPONENT)
        .total_tables(limits.instances * TABLES_PER_COMPONENT)
        .total_stacks(limits.instances * FIBER_STACKS_PER_INSTANCE)
        .max_core_instances_per_component(CORE_INSTANCES_PER_COMPONENT)
        .max_memories_per_component(MEMORIES_PER_COMPONENT)
        .max_tables_per_component(TABLES_PER_COMPONENT)
        // Guests' heaps: a batch of 1,000 entities with its JSON stays far below this.
        .max_memory_size(1 << 30)
        .table_elements(100_000)
        .max_component_instance_size(4 << 20)
        .max_core_instance_size(4 << 20)
        // A finished instance's memories and tables go back to the pool reset in place,
        // only the pages it touched (Linux 6.7+'s PAGEMAP_SCAN; elsewhere the low bytes
        // are reset with memset), instead of madvise(DONTNEED) on every memory: that was
        // about 18 madvise calls per request and fresh page faults on the next one.
        .pagemap_scan(Enabled::Auto)
        .linear_memory_keep_resident(KEEP_RESIDENT)
        .table_keep_resident(KEEP_RESIDENT);
    pool
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
        settings: EngineSettings,
    ) -> Result<App> {
        let manifest = Manifest::load(manifest_path)
            .with_context(|| format!("loading {}", manifest_path.display()))?;
        let variables = Variables::new(&manifest.variables, provided_variables)?;
        let kv = KeyValueStores::open(runtime_config, kv_path)?;
        let engine = Engine::new(&settings.config()?)?;
        let linker = host::linker(&engine)?;
        let routes = Routes::new(&manifest.triggers)?;

        let mut components = HashMap::new();
        for trigger in &manifest.triggers {
            let id = &trigger.component;
            if components.contains_key(id) {
                continue;
            }
            let component = &manifest.components[id];
            let composed = compose::compose_manifest_component(id, component)?;
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
            server_timing: false,
            host_call_census: false,
            instance_slots: settings
                .pooling
                .map(|limits| Arc::new(tokio::sync::Semaphore::new(limits.instances as usize))),
        })
    }
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
