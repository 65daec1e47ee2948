//! Grows a running Neo4j with the demo's procurement domain at a scale factor
//! (`kg_e2e::scale_graph`): scale 1 adds about 500,000 nodes, 0.01 about 5,000 (ten times
//! the demo), and the demo's hubs (ACME `SUP-001`, `ACC-MAIN`) grow with it.
//!
//! ```sh
//! cargo build --release -p kg-e2e --bin scale-graph
//! target/release/scale-graph --origin http://127.0.0.1:7474 --password devgraph --scale 10
//! ```
//!
//! `--origin` is the Neo4j HTTP origin (the Query API v2), `--password` the password of
//! `--user` (default `neo4j`), `--database` the database (default `neo4j`), `--scale` the
//! factor (default 1). Run it on a graph holding the demo dataset (`devgraph
//! --demo-cypher`, `KG_GRAPH=neo4j scripts/run.sh`): new orders link to the demo's ACME,
//! ACC-MAIN and parts, and the load fails if they are missing. Growing a graph a second
//! time is refused (the same ids again). Progress goes to stderr, the totals to stdout.
//! For scales of 1 and more give Neo4j a page cache that holds the graph
//! (`server.memory.pagecache.size`): at the test pool's 32 MiB every batch reads from disk.

use anyhow::{Context, Result, bail};
use kg_e2e::scale_graph::{self, Sizes, Target};
use std::time::{Duration, Instant};

const USAGE: &str = "usage: scale-graph --origin http://HOST:PORT --password PASSWORD \
                     [--user neo4j] [--database neo4j] [--scale 1]";

#[tokio::main]
async fn main() -> Result<()> {
    let mut origin = None;
    let mut password = None;
    let mut user = "neo4j".to_string();
    let mut database = "neo4j".to_string();
    let mut scale = 1.0;
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let mut value = || {
            args.next()
                .with_context(|| format!("{flag} needs a value\n{USAGE}"))
        };
        match flag.as_str() {
            "--origin" => origin = Some(value()?),
            "--password" => password = Some(value()?),
            "--user" => user = value()?,
            "--database" => database = value()?,
            "--scale" => {
                let text = value()?;
                scale = text
                    .parse()
                    .with_context(|| format!("--scale {text}: not a number"))?;
            }
            "-h" | "--help" => {
                println!("{USAGE}");
                return Ok(());
            }
            other => bail!("unknown argument `{other}`\n{USAGE}"),
        }
    }
    let (Some(origin), Some(password)) = (origin, password) else {
        bail!("{USAGE}");
    };
    let mut target = Target::new(&origin, &password);
    target.user = user;
    target.database = database;

    let sizes = Sizes::at(scale)?;
    eprintln!(
        "scale-graph: growing {origin} by scale {scale}: {} suppliers, {} accounts, {} products, {} orders (with lines, invoices, payments)",
        sizes.suppliers, sizes.accounts, sizes.products, sizes.orders
    );
    // A line every few seconds, not one per batch.
    let mut last = Instant::now();
    let report = scale_graph::grow(&target, scale, |so_far| {
        if last.elapsed() >= Duration::from_secs(5) {
            last = Instant::now();
            eprintln!("scale-graph: {so_far}");
        }
    })
    .await?;
    println!("scale-graph: created {report}");
    Ok(())
}
