//! The retriever component: binds `kg:retriever/retriever` to kg-retrieval, with the graph and
//! the embeddings endpoint reached over Spin outbound HTTP.

mod convert;

use kg_retrieval::{EmbeddingClient, EmbeddingConfig};
use kg_spin::SpinTransport;
use kg_wit::types::{ComponentStatus, Error, ErrorCode};

wit_bindgen::generate!({
    path: "../../wit",
    world: "retriever-component",
    with: { "kg:types/types@0.1.0": kg_wit::types },
});

use exports::kg::retriever::retriever::{
    ChunkingOptions, DocumentInfo, DocumentInput, Guest, IngestReport, SearchRequest,
    SearchResponse,
};

/// Spin variables this component reads besides the graph's.
const EMBEDDING_VARIABLES: &[&str] = &["llm_origin", "llm_base_path", "embedding_model"];

struct Retriever;

impl Guest for Retriever {
    fn use_bookmarks(bookmarks: Vec<String>) {
        kg_spin::graph_bookmarks().replace(bookmarks);
    }

    fn graph_bookmarks() -> Vec<String> {
        kg_spin::graph_bookmarks().current()
    }

    fn use_trace_context(traceparent: String) {
        kg_spin::telemetry::adopt(&traceparent, "retriever");
    }

    fn take_spans() -> String {
        kg_spin::telemetry::take_spans()
    }

    fn status() -> ComponentStatus {
        kg_spin::status(
            "retriever",
            env!("CARGO_PKG_VERSION"),
            vec![
                kg_spin::configuration_check(kg_spin::NEO4J_VARIABLES),
                kg_spin::configuration_check(EMBEDDING_VARIABLES),
                kg_spin::graph_check(),
            ],
        )
    }

    fn ingest(
        document: DocumentInput,
        options: Option<ChunkingOptions>,
    ) -> Result<IngestReport, Error> {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let report = kg_retrieval::ingest(
            &graph()?,
            &embedder()?,
            &convert::document_input(document),
            options.map(convert::chunking_options),
            &kg_retrieval::time::rfc3339(now),
        )?;
        Ok(convert::ingest_report(report))
    }

    fn list_documents() -> Result<Vec<DocumentInfo>, Error> {
        let documents = kg_retrieval::list(&graph()?)?;
        Ok(documents.into_iter().map(convert::document_info).collect())
    }

    fn delete_document(id: String) -> Result<bool, Error> {
        kg_retrieval::delete(&graph()?, &id)
    }

    fn search(request: SearchRequest) -> Result<SearchResponse, Error> {
        let response =
            kg_retrieval::search(&graph()?, &embedder()?, &convert::search_request(request))?;
        Ok(convert::search_response(response))
    }
}

fn graph() -> Result<neo4j_client::Client<SpinTransport>, Error> {
    kg_spin::graph_client().map_err(|e| Error::new(ErrorCode::Internal, e))
}

/// The embeddings endpoint: `llm_origin + llm_base_path`, model `embedding_model`.
fn embedder() -> Result<EmbeddingClient<SpinTransport>, Error> {
    let variable = |name| kg_spin::variable(name).map_err(|e| Error::new(ErrorCode::Internal, e));
    Ok(EmbeddingClient::new(
        EmbeddingConfig {
            base_url: kg_spin::llm_base_url().map_err(|e| Error::new(ErrorCode::Internal, e))?,
            model: variable("embedding_model")?,
            api_key: Some(variable("llm_api_key")?),
            batch_size: kg_retrieval::embeddings::DEFAULT_BATCH_SIZE,
        },
        SpinTransport,
    ))
}

export!(Retriever);
