//! Per-request host state: WASI, outbound HTTP limited to the component's
//! `allowed_outbound_hosts`, Spin variables and the key-value store.

use crate::config::outbound::AllowedHosts;
use crate::kv::{KeyValueStores, Store};
use crate::outbound::Outbound;
use crate::stdio::{LineBuffered, Target};
use crate::timing::RequestTimings;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;
use wasmtime::component::{HasSelf, Linker, Resource, ResourceTable};
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};
use wasmtime_wasi_http::bindings::http::types::ErrorCode;
use wasmtime_wasi_http::body::HyperOutgoingBody;
use wasmtime_wasi_http::types::{HostFutureIncomingResponse, OutgoingRequestConfig};
use wasmtime_wasi_http::{HttpResult, WasiHttpCtx, WasiHttpView};

wasmtime::component::bindgen!({
    path: "wit",
    world: "devhost-platform",
    with: {
        "fermyon:spin/key-value.store": KvStore,
        "wasi:keyvalue/store.bucket": KvStore,
        "wasi:keyvalue/atomics.cas": crate::wasi_keyvalue::KvCas,
    },
});

use fermyon::spin::{key_value, variables};

/// What one Spin component (composed with its dependencies) may do, fixed at startup.
pub struct ComponentPolicy {
    pub id: String,
    /// Component variables, already expanded from the application's.
    pub variables: BTreeMap<String, String>,
    pub allowed_hosts: AllowedHosts,
    pub key_value_stores: Vec<String>,
    pub kv: KeyValueStores,
    /// Directories mounted read-only: (host path, guest path).
    pub files: Vec<(std::path::PathBuf, String)>,
}

/// An open key-value store handle (Spin's `store`, wasi:keyvalue's `bucket`).
pub struct KvStore {
    pub(crate) store: Arc<dyn Store>,
}

pub struct RequestState {
    table: ResourceTable,
    wasi: WasiCtx,
    http: WasiHttpCtx,
    policy: Arc<ComponentPolicy>,
    outbound: Arc<Outbound>,
    /// With `--server-timing`: where the host calls' time goes.
    timings: Option<Arc<RequestTimings>>,
}

impl RequestState {
    pub fn new(
        policy: Arc<ComponentPolicy>,
        outbound: Arc<Outbound>,
        timings: Option<Arc<RequestTimings>>,
    ) -> anyhow::Result<Self> {
        // Like Spin: no environment, no arguments; the `files` mounts read-only; logs to
        // stdio, a line at a time (src/stdio.rs).
        let mut wasi = WasiCtx::builder();
        wasi.stdout(LineBuffered::new(Target::Stdout))
            .stderr(LineBuffered::new(Target::Stderr));
        // File operations on the read-only mounts (the catalog, prompts: small local files)
        // run on the request's own thread. Otherwise each open, stat and read is a hop to
        // tokio's blocking pool and back, which made reading a few files per request cost
        // milliseconds of waiting.
        wasi.allow_blocking_current_thread(true);
        for (host, guest) in &policy.files {
            wasi.preopened_dir(
                host,
                guest,
                wasmtime_wasi::DirPerms::READ,
                wasmtime_wasi::FilePerms::READ,
            )?;
        }
        Ok(RequestState {
            table: ResourceTable::new(),
            wasi: wasi.build(),
            http: WasiHttpCtx::new(),
            policy,
            outbound,
            timings,
        })
    }

    /// Runs a key-value call, timed when `--server-timing` is on.
    pub(crate) fn kv<T>(&self, write: bool, call: impl FnOnce() -> T) -> T {
        let Some(timings) = &self.timings else {
            return call();
        };
        let started = Instant::now();
        let result = call();
        if write {
            timings.kv_write(started.elapsed());
        } else {
            timings.kv_read(started.elapsed());
        }
        result
    }
}

/// Every interface devhost provides, on one linker.
pub fn linker(engine: &wasmtime::Engine) -> anyhow::Result<Linker<RequestState>> {
    let mut linker = Linker::new(engine);
    wasmtime_wasi::p2::add_to_linker_async(&mut linker)?;
    wasmtime_wasi_http::add_only_http_to_linker_async(&mut linker)?;
    DevhostPlatform::add_to_linker::<RequestState, HasSelf<RequestState>>(&mut linker, |s| s)?;
    Ok(linker)
}

/// Interface prefixes devhost implements, to refuse a component importing anything else
/// with a clear message before instantiation fails obscurely.
pub const PROVIDED_INTERFACES: &[&str] = &[
    "wasi:cli/",
    "wasi:clocks/",
    "wasi:filesystem/",
    "wasi:io/",
    "wasi:random/",
    "wasi:sockets/",
    "wasi:http/types@0.2.",
    "wasi:http/outgoing-handler@0.2.",
    "fermyon:spin/key-value@2.0.0",
    "wasi:keyvalue/store@0.2.0-draft2",
    "wasi:keyvalue/atomics@0.2.0-draft2",
    "wasi:keyvalue/batch@0.2.0-draft2",
    "fermyon:spin/variables@2.0.0",
];

impl WasiView for RequestState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

impl WasiHttpView for RequestState {
    fn ctx(&mut self) -> &mut WasiHttpCtx {
        &mut self.http
    }

    fn table(&mut self) -> &mut ResourceTable {
        &mut self.table
    }

    fn send_request(
        &mut self,
        request: hyper::Request<HyperOutgoingBody>,
        config: OutgoingRequestConfig,
    ) -> HttpResult<HostFutureIncomingResponse> {
        let uri = request.uri();
        let scheme = uri
            .scheme_str()
            .unwrap_or(if config.use_tls { "https" } else { "http" });
        let host = uri.host().unwrap_or_default();
        if !self
            .policy
            .allowed_hosts
            .allows(scheme, host, uri.port_u16())
        {
            eprintln!(
                "devhost: component `{}` may not send a request to {uri}: not in allowed_outbound_hosts",
                self.policy.id
            );
            return Err(ErrorCode::HttpRequestDenied.into());
        }
        let Some(timings) = self.timings.clone() else {
            return Ok(self.outbound.send(request, config));
        };
        let origin = format!(
            "{scheme}://{host}{}",
            uri.port_u16().map(|p| format!(":{p}")).unwrap_or_default()
        );
        let started = Instant::now();
        Ok(match self.outbound.send(request, config) {
            HostFutureIncomingResponse::Pending(handle) => {
                HostFutureIncomingResponse::pending(wasmtime_wasi::runtime::spawn(async move {
                    let response = handle.await;
                    timings.outbound(origin, started.elapsed());
                    response
                }))
            }
            ready => ready,
        })
    }
}

impl key_value::Host for RequestState {}

impl key_value::HostStore for RequestState {
    fn open(&mut self, label: String) -> Result<Resource<KvStore>, key_value::Error> {
        match self.open_store(&label) {
            Ok(store) => Ok(store),
            Err(Opened::AccessDenied) => Err(key_value::Error::AccessDenied),
            Err(Opened::NoSuchStore) => Err(key_value::Error::NoSuchStore),
            Err(Opened::Other(e)) => Err(key_value::Error::Other(e)),
        }
    }

    fn get(
        &mut self,
        store: Resource<KvStore>,
        key: String,
    ) -> Result<Option<Vec<u8>>, key_value::Error> {
        let store = self.store(&store)?;
        self.kv(false, || store.get(&key))
            .map_err(key_value::Error::Other)
    }

    fn set(
        &mut self,
        store: Resource<KvStore>,
        key: String,
        value: Vec<u8>,
    ) -> Result<(), key_value::Error> {
        let store = self.store(&store)?;
        self.kv(true, || store.set(&key, &value))
            .map_err(key_value::Error::Other)
    }

    fn delete(&mut self, store: Resource<KvStore>, key: String) -> Result<(), key_value::Error> {
        let store = self.store(&store)?;
        self.kv(true, || store.delete(&key))
            .map_err(key_value::Error::Other)
    }

    fn exists(&mut self, store: Resource<KvStore>, key: String) -> Result<bool, key_value::Error> {
        let store = self.store(&store)?;
        self.kv(false, || store.exists(&key))
            .map_err(key_value::Error::Other)
    }

    fn get_keys(&mut self, store: Resource<KvStore>) -> Result<Vec<String>, key_value::Error> {
        let store = self.store(&store)?;
        self.kv(false, || store.keys())
            .map_err(key_value::Error::Other)
    }

    fn drop(&mut self, store: Resource<KvStore>) -> wasmtime::Result<()> {
        self.table.delete(store)?;
        Ok(())
    }
}

/// Why a store could not be opened, for either key-value API's error type.
pub(crate) enum Opened {
    AccessDenied,
    NoSuchStore,
    Other(String),
}

impl RequestState {
    /// A handle on the store `label`, if the component was granted it (`key_value_stores`).
    /// Like Spin: `default` always exists; other labels only with runtime configuration.
    pub(crate) fn open_store(&mut self, label: &str) -> Result<Resource<KvStore>, Opened> {
        if !self.policy.key_value_stores.iter().any(|l| l == label) {
            return Err(Opened::AccessDenied);
        }
        let store = self.policy.kv.get(label).ok_or(Opened::NoSuchStore)?;
        self.table
            .push(KvStore { store })
            .map_err(|e| Opened::Other(e.to_string()))
    }

    pub(crate) fn resources(&mut self) -> &mut ResourceTable {
        &mut self.table
    }

    pub(crate) fn store(
        &self,
        store: &Resource<KvStore>,
    ) -> Result<Arc<dyn Store>, key_value::Error> {
        self.table
            .get(store)
            .map(|s| s.store.clone())
            .map_err(|e| key_value::Error::Other(e.to_string()))
    }
}

impl variables::Host for RequestState {
    fn get(&mut self, name: String) -> Result<String, variables::Error> {
        // Spin's rule for variable names: lowercase letters, digits and underscores.
        let valid = name.starts_with(|c: char| c.is_ascii_lowercase())
            && name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
        if !valid {
            return Err(variables::Error::InvalidName(name));
        }
        self.policy
            .variables
            .get(&name)
            .cloned()
            .ok_or(variables::Error::Undefined(format!(
                "no variable `{name}` in component `{}`",
                self.policy.id
            )))
    }
}
