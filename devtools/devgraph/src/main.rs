use anyhow::{Context, Result};
use clap::Parser;
use devgraph::{demo, graph::Graph, http::Server};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

/// Counts what each query allocates, for its memory budget (devgraph::budget).
#[global_allocator]
static ALLOCATOR: devgraph::budget::Counting = devgraph::budget::Counting;

#[derive(Parser)]
#[command(about = "A development graph server speaking the Neo4j Query API v2 on Grafeo.")]
struct Args {
    #[arg(long, default_value = "127.0.0.1:7474")]
    listen: SocketAddr,
    #[arg(long, default_value = "neo4j")]
    database: String,
    #[arg(long, default_value = "neo4j")]
    user: String,
    #[arg(long, env = "DEVGRAPH_PASSWORD", default_value = "devgraph")]
    password: String,
    /// Load the procurement demo dataset (when the graph is empty).
    #[arg(long)]
    demo: bool,
    /// Print the demo dataset as a Cypher script (for a real Neo4j: devtools/neo4j) and
    /// exit without serving.
    #[arg(long)]
    demo_cypher: bool,
    /// Keep the graph in this file instead of memory.
    #[arg(long)]
    data: Option<PathBuf>,
    /// The most memory one statement may hold, in MiB; past it the statement fails with
    /// Neo4j's `Neo.TransientError.General.MemoryPoolOutOfMemoryError`.
    #[arg(long, env = "DEVGRAPH_QUERY_MEMORY_MIB", default_value_t = 256)]
    query_memory_mib: usize,
    /// The most memory devgraph as a whole may hold before every statement that
    /// allocates more stops, in MiB.
    #[arg(long, env = "DEVGRAPH_MEMORY_MIB", default_value_t = 1024)]
    memory_mib: usize,
    /// Fail this fraction (0 to 1) of the statements that write data with a transient
    /// error, before applying anything (tests of retries; see devgraph::faults).
    /// Given (even 0), `CALL devgraph.faults(<fraction>)` changes it at run time.
    #[arg(long, env = "DEVGRAPH_INJECT_TRANSIENT")]
    inject_transient: Option<f64>,
    /// The codes injected, comma separated: DeadlockDetected, LockClientStopped (default both).
    #[arg(long, env = "DEVGRAPH_INJECT_TRANSIENT_CODES", value_delimiter = ',')]
    inject_transient_codes: Vec<String>,
    /// Makes the injected failures repeatable (default: from the clock).
    #[arg(long, env = "DEVGRAPH_INJECT_SEED")]
    inject_seed: Option<u64>,
    /// Append every distinct statement received to `statements-<pid>.jsonl` in this folder
    /// (the Cypher lint gate's input; see devgraph::capture).
    #[arg(long, env = "DEVGRAPH_CAPTURE_DIR")]
    capture_dir: Option<PathBuf>,
    /// Refuse requests for an explicit transaction that do not send back its
    /// `neo4j-cluster-affinity` (as a cluster member that does not know the transaction:
    /// 404, "Transaction … was not found"). `false` turns the check off.
    #[arg(long, env = "DEVGRAPH_AFFINITY_CHECK", default_value_t = true, action = clap::ArgAction::Set)]
    affinity_check: bool,
    /// How long a request waits for a bookmark devgraph has not reached before
    /// `Neo.TransientError.Transaction.BookmarkTimeout`, in milliseconds.
    #[arg(long, env = "DEVGRAPH_BOOKMARK_TIMEOUT_MS", default_value_t = 1000)]
    bookmark_timeout_ms: u64,
}

#[tokio::main]
async fn main() {
    if let Err(e) = run(Args::parse()).await {
        eprintln!("devgraph: error: {e:#}");
        std::process::exit(1);
    }
}

async fn run(args: Args) -> Result<()> {
    if args.demo_cypher {
        print!("{}", demo::cypher()?);
        return Ok(());
    }
    if let Some(dir) = &args.capture_dir {
        devgraph::capture::install(dir)
            .with_context(|| format!("opening the capture folder {}", dir.display()))?;
    }
    if let Some(fraction) = args.inject_transient {
        let seed = args.inject_seed.unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as u64)
        });
        let faults = devgraph::faults::Faults::new(fraction, &args.inject_transient_codes, seed)
            .map_err(anyhow::Error::msg)?;
        eprintln!(
            "devgraph: failing {}% of writes with a transient error (seed {seed})",
            fraction * 100.0
        );
        devgraph::faults::install(faults);
    }
    devgraph::budget::installed();
    devgraph::budget::configure(
        args.query_memory_mib.saturating_mul(1024 * 1024),
        args.memory_mib.saturating_mul(1024 * 1024),
    );
    let db = match &args.data {
        Some(path) => {
            grafeo::GrafeoDB::open(path).with_context(|| format!("opening {}", path.display()))?
        }
        None => grafeo::GrafeoDB::new_in_memory(),
    };
    let mut loaded = String::new();
    if args.demo {
        let session = db.session();
        let empty = session
            .execute_cypher("MATCH (n) RETURN count(n) AS c")?
            .rows()
            .first()
            .and_then(|r| r.first().cloned());
        if matches!(empty, Some(grafeo::Value::Int64(0)) | None) {
            let nodes = demo::load(&session)?;
            loaded = format!(", demo dataset loaded ({nodes} nodes)");
        } else {
            loaded = ", graph not empty: demo dataset not reloaded".into();
        }
    }
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .with_context(|| format!("binding {}", args.listen))?;
    let address = listener.local_addr()?;
    let mut graph = Graph::new(db)
        .with_bookmark_timeout(std::time::Duration::from_millis(args.bookmark_timeout_ms));
    if let Some(path) = &args.data {
        // Constraints are saved beside the graph file at each DDL (see constraints::save).
        let mut name = path.as_os_str().to_owned();
        name.push(".constraints.json");
        let file = PathBuf::from(name);
        let session = graph.db().session();
        devgraph::constraints::restore(&session, &file)
            .map_err(anyhow::Error::msg)
            .with_context(|| format!("restoring the constraints of {}", file.display()))?;
        devgraph::constraints::ensure_backing_indexes(graph.db(), &session)
            .map_err(|e| anyhow::anyhow!("{e:?}"))
            .context("indexing the constrained properties")?;
        graph.constraints_file = Some(file);
        // Full-text indexes are devgraph's own: saved beside the graph file too.
        let mut name = path.as_os_str().to_owned();
        name.push(".fulltext.json");
        let file = PathBuf::from(name);
        graph
            .fulltext
            .restore(&file)
            .map_err(anyhow::Error::msg)
            .with_context(|| format!("restoring the full-text indexes of {}", file.display()))?;
    }
    let mut server = Server::new(graph, &args.database, &args.user, &args.password);
    server.affinity_check = args.affinity_check;
    let server = Arc::new(server);
    // Tests and scripts read this line; keep its shape.
    println!(
        "devgraph: listening on http://{address} (database `{}`, user `{}`{loaded})",
        args.database, args.user
    );
    tokio::select! {
        served = devgraph::serve(server, listener) => served,
        _ = tokio::signal::ctrl_c() => Ok(()),
    }
}
