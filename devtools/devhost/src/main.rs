//! devhost: runs a Spin application from its `spin.toml` on wasmtime, for development and
//! tests on machines without the Spin CLI (DESIGN.md §8). Never deployed.

mod app;
mod census;
mod compose;
mod config;
mod dist;
mod driven;
mod footprint;
mod host;
mod kv;
mod outbound;
mod polled;
mod request_body;
mod server;
mod stdio;
mod timing;
mod wasi_keyvalue;

use anyhow::{Context, Result};
use clap::Parser;
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

#[derive(Parser)]
#[command(about = "Run a Spin application (spin.toml) on wasmtime, like `spin up`.")]
struct Args {
    /// The application manifest.
    #[arg(long, short = 'f', default_value = "spin.toml")]
    manifest: PathBuf,
    /// Address to listen on (port 0 picks a free port).
    #[arg(long, default_value = "127.0.0.1:3000")]
    listen: SocketAddr,
    /// Application variable, NAME=VALUE; wins over SPIN_VARIABLE_NAME. Repeatable.
    #[arg(long = "variable", value_name = "NAME=VALUE")]
    variables: Vec<String>,
    /// SQLite file of the `default` key-value store when the runtime configuration does not
    /// name one [default: .devhost/key_value.db next to the manifest]
    #[arg(long)]
    kv_path: Option<PathBuf>,
    /// Spin runtime configuration (the same file `spin up` takes); devhost implements its
    /// `[key_value_store.*]` tables of type "spin" and "redis".
    #[arg(long, env = "SPIN_RUNTIME_CONFIG_FILE")]
    runtime_config_file: Option<PathBuf>,
    /// Load, compose and link the application, then exit without serving.
    #[arg(long)]
    check: bool,
    /// Write the application pre-composed into DIR (one .wasm per component, dependencies
    /// composed in, and a spin.toml without dependencies), then exit without serving.
    #[arg(long, value_name = "DIR")]
    compose_into: Option<PathBuf>,
    /// Print what one request to each component instantiates (core instances, memories,
    /// tables; dependencies composed in) and how many Spin's default pool holds at once,
    /// as text or one JSON object per line, then exit without serving.
    #[arg(long, value_name = "text|json", num_args = 0..=1, default_missing_value = "text")]
    footprint: Option<FootprintFormat>,
    /// Keep components' outbound HTTP connections open and reuse them per origin (scheme,
    /// host, port), as Spin 3.4+ does; `off` opens a new connection for every request.
    #[arg(
        long,
        env = "DEVHOST_OUTBOUND_POOL",
        value_name = "on|off",
        default_value = "on"
    )]
    outbound_pool: Switch,
    /// Idle outbound connections kept per origin; more are closed.
    #[arg(
        long,
        env = "DEVHOST_OUTBOUND_POOL_MAX_IDLE",
        value_name = "N",
        default_value_t = 64
    )]
    outbound_pool_max_idle: usize,
    /// Seconds an idle outbound connection is kept before it is closed.
    #[arg(
        long,
        env = "DEVHOST_OUTBOUND_POOL_IDLE_TIMEOUT",
        value_name = "SECONDS",
        default_value_t = 30.0
    )]
    outbound_pool_idle_timeout: f64,
    /// Instantiate components from a pool of pre-reserved memories, tables and stacks, as
    /// Spin does (`pooling`), or map each instance's own (`on-demand`).
    #[arg(
        long,
        env = "DEVHOST_INSTANCE_ALLOCATOR",
        value_name = "pooling|on-demand",
        default_value = "pooling"
    )]
    instance_allocator: Allocator,
    /// Instances alive at once with `--instance-allocator pooling` (one per request in
    /// flight); a request beyond them waits for one to finish.
    #[arg(
        long,
        env = "DEVHOST_POOL_INSTANCES",
        value_name = "N",
        default_value_t = 128
    )]
    pool_instances: u32,
    /// Add a `Server-Timing` header to every response: per-request store set-up,
    /// instantiation, handler, key-value and outbound HTTP time (src/timing.rs).
    #[arg(
        long,
        env = "DEVHOST_SERVER_TIMING",
        value_name = "on|off",
        default_value = "off"
    )]
    server_timing: Switch,
    /// Write /tmp/perf-<pid>.map so `perf record`/`perf report` name the components'
    /// own functions (wasmtime's perf map profiler).
    #[arg(
        long,
        env = "DEVHOST_PERF_MAP",
        value_name = "on|off",
        default_value = "off"
    )]
    perf_map: Switch,
    /// List each request's host calls by the guest function making them, one line on
    /// stderr per request (src/census.rs; with --server-timing on, its `wasm` and `host`
    /// then read 0).
    #[arg(
        long,
        env = "DEVHOST_HOST_CALL_CENSUS",
        value_name = "on|off",
        default_value = "off"
    )]
    host_call_census: Switch,
    /// wasmtime's compilation-cache configuration file, as `spin up --cache`; without it,
    /// wasmtime's default configuration (compiled components kept under the user's cache
    /// directory, so a restart does not compile the application again).
    #[arg(long, value_name = "FILE", conflicts_with = "disable_cache")]
    cache: Option<PathBuf>,
    /// Compile the application on every start, as `spin up --disable-cache`.
    #[arg(
        long,
        env = "DEVHOST_DISABLE_CACHE",
        value_parser = clap::builder::BoolishValueParser::new()
    )]
    disable_cache: bool,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Allocator {
    Pooling,
    OnDemand,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum FootprintFormat {
    Text,
    Json,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Switch {
    On,
    Off,
}

fn main() {
    // anyhow errors capture a backtrace when RUST_BACKTRACE is set, and wasmtime makes
    // one in every store's teardown (drop_fibers_and_futures, ~20 µs per request here).
    // Panics keep their backtraces (RUST_BACKTRACE); a RUST_LIB_BACKTRACE the caller set
    // wins.
    if std::env::var_os("RUST_LIB_BACKTRACE").is_none() {
        // SAFETY: no other thread exists yet (the runtime is built below).
        unsafe { std::env::set_var("RUST_LIB_BACKTRACE", "0") };
    }
    let served = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(anyhow::Error::from)
        .and_then(|runtime| runtime.block_on(run(Args::parse())));
    if let Err(e) = served {
        eprintln!("devhost: error: {e:#}");
        std::process::exit(1);
    }
}

async fn run(args: Args) -> Result<()> {
    if let Some(format) = args.footprint {
        let json = format == FootprintFormat::Json;
        println!("{}", footprint::report(&args.manifest, json)?);
        return Ok(());
    }
    if let Some(out) = &args.compose_into {
        let written = dist::compose_into(&args.manifest, out)?;
        for (path, bytes) in written.files {
            if bytes > 0 {
                println!("devhost: wrote {} ({bytes} bytes)", path.display());
            } else {
                println!("devhost: wrote {}", path.display());
            }
        }
        return Ok(());
    }
    let mut provided = config::variables::provided_from_env(std::env::vars());
    for flag in &args.variables {
        let (name, value) = config::variables::parse_flag(flag)?;
        provided.insert(name, value);
    }
    let kv_path = args.kv_path.clone().unwrap_or_else(|| {
        args.manifest
            .parent()
            .unwrap_or(std::path::Path::new("."))
            .join(".devhost/key_value.db")
    });
    let started = std::time::Instant::now();
    let app = load(&args, provided, &kv_path)?;
    if args.check {
        println!(
            "devhost: `{}` loads, composes and links ({} ms)",
            app.name,
            started.elapsed().as_millis()
        );
        return Ok(());
    }
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .with_context(|| format!("binding {}", args.listen))?;
    let address = listener.local_addr()?;
    // Tests read this line to find the address; keep its shape.
    println!(
        "devhost: `{}` {} listening on http://{address} (ready in {} ms)",
        app.name,
        app.version,
        started.elapsed().as_millis()
    );
    tokio::select! {
        served = server::serve(Arc::new(app), listener) => served,
        _ = tokio::signal::ctrl_c() => Ok(()),
    }
}

fn load(
    args: &Args,
    provided: BTreeMap<String, String>,
    kv_path: &std::path::Path,
) -> Result<app::App> {
    let runtime_config = match &args.runtime_config_file {
        Some(path) => config::runtime_config::RuntimeConfig::load(path)?,
        None => Default::default(),
    };
    let idle_timeout = std::time::Duration::try_from_secs_f64(args.outbound_pool_idle_timeout)
        .context("--outbound-pool-idle-timeout: not a number of seconds")?;
    let pool = (args.outbound_pool == Switch::On).then_some(outbound::PoolSettings {
        max_idle_per_origin: args.outbound_pool_max_idle,
        idle_timeout,
    });
    let settings = app::EngineSettings {
        pooling: (args.instance_allocator == Allocator::Pooling).then_some(app::PoolLimits {
            instances: args.pool_instances.max(1),
        }),
        perf_map: args.perf_map == Switch::On,
        cache: match (&args.cache, args.disable_cache) {
            (_, true) => app::CompileCache::Disabled,
            (Some(file), false) => app::CompileCache::File(file.clone()),
            (None, false) => app::CompileCache::Default,
        },
    };
    let mut app = app::App::load(
        &args.manifest,
        provided,
        &runtime_config,
        kv_path,
        outbound::Outbound::new(pool),
        settings,
    )?;
    app.server_timing = args.server_timing == Switch::On;
    app.host_call_census = args.host_call_census == Switch::On;
    Ok(app)
}
