//! A graph tool added without forking kg-agent (issue #38 item 3): the supplier-tools
//! extension of `examples/query-tools-extension/` (a Rust component built by its own
//! `build.sh` against the WIT contracts only) imports and exports
//! `kg:query-tools/query-tools`; plugged into our query-tools component it becomes the
//! query-tools component of a copy of spin.toml, with one tool more.

use crate::swapped_router::{built_by, manifest_with_dependency};
use crate::workspace;
use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};
use tokio::sync::OnceCell;
use wac_graph::types::Package;
use wac_graph::{CompositionGraph, EncodeOptions};

/// The dependency key of the query tools in spin.toml.
pub const QUERY_TOOLS_DEPENDENCY: &str = "\"kg:query-tools/query-tools@0.1.1\"";
/// Our query-tools component, as spin.toml names it.
const OUR_QUERY_TOOLS: &str = "target/wasm32-wasip2/component/kg_query_tools.wasm";

static EXTENSION: OnceCell<PathBuf> = OnceCell::const_new();

/// The extension's component, built on first use by its `build.sh` (cargo, the
/// wasm32-wasip2 target, crates.io); still to be plugged into ours.
pub async fn extension() -> Result<PathBuf> {
    EXTENSION
        .get_or_try_init(|| async {
            built_by("examples/query-tools-extension/build.sh")
                .await
                .map(|(path, _)| path)
        })
        .await
        .cloned()
}

/// `socket` with its imports that `plug` exports satisfied by an instance of `plug`,
/// written to `out`: what `wac plug SOCKET --plug PLUG -o OUT` does (wac-graph's `plug`,
/// the function behind that command). The imports neither satisfies (WASI, Spin's
/// variables) stay imports of the result, for the host.
pub fn plugged(socket: &Path, plug: &Path, out: &Path) -> Result<()> {
    let read =
        |path: &Path| std::fs::read(path).with_context(|| format!("reading {}", path.display()));
    let mut graph = CompositionGraph::new();
    let socket = Package::from_bytes("acme:socket", None, read(socket)?, graph.types_mut())?;
    let socket = graph.register_package(socket)?;
    let plug = Package::from_bytes("kg:plug", None, read(plug)?, graph.types_mut())?;
    let plug = graph.register_package(plug)?;
    wac_graph::plug(&mut graph, vec![plug], socket)?;
    let bytes = graph.encode(EncodeOptions::default())?;
    std::fs::write(out, bytes).with_context(|| format!("writing {}", out.display()))
}

/// The extension plugged into our query-tools component (`dir/query-tools.wasm`) and a
/// copy of spin.toml in `dir` whose query-tools dependency is that component.
pub async fn manifest_with_extension(dir: &Path) -> Result<PathBuf> {
    let ours = workspace().join(OUR_QUERY_TOOLS);
    if !ours.is_file() {
        bail!(
            "{} is missing: build the components first (scripts/setup.sh)",
            ours.display()
        );
    }
    let composed = dir.join("query-tools.wasm");
    plugged(&extension().await?, &ours, &composed)?;
    manifest_with_dependency(dir, QUERY_TOOLS_DEPENDENCY, &composed)
}
