//! devhost: runs a Spin application from its `spin.toml` on wasmtime, for development and
//! tests on machines without the Spin CLI (DESIGN.md §8). Never deployed.

mod app;
mod compose;
mod config;
mod host;
mod kv;
mod server;

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
    /// SQLite file of the key-value store [default: .devhost/key_value.db next to the manifest]
    #[arg(long)]
    kv_path: Option<PathBuf>,
    /// Load, compose and link the application, then exit without serving.
    #[arg(long)]
    check: bool,
}

#[tokio::main]
async fn main() {
    if let Err(e) = run(Args::parse()).await {
        eprintln!("devhost: error: {e:#}");
        std::process::exit(1);
    }
}

async fn run(args: Args) -> Result<()> {
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
    app::App::load(&args.manifest, provided, kv_path)
}
