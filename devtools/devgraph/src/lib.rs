//! devgraph: a development graph server speaking the Neo4j Query API v2 (the subset
//! kg-agent uses) on the embedded Grafeo engine, with a procurement demo dataset.
//! Development and tests only; production talks to Neo4j 5.25+/Aura with the same client.

pub mod bookmarks;
pub mod budget;
pub mod capture;
pub mod constraints;
pub mod demo;
pub mod element_ids;
pub mod errors;
pub mod explain;
pub mod faults;
pub mod fulltext;
pub mod graph;
pub mod http;
pub mod indexes;
pub mod requests;
pub mod schema;
pub mod schema_rules;
pub mod values;

use anyhow::Result;
use std::sync::Arc;
use tokio::net::TcpListener;

/// Serves until the listener fails.
pub async fn serve(server: Arc<http::Server>, listener: TcpListener) -> Result<()> {
    loop {
        let (stream, _) = listener.accept().await?;
        let server = server.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |request| {
                let server = server.clone();
                async move { Ok::<_, std::convert::Infallible>(http::handle(server, request).await) }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                .await;
        });
    }
}
