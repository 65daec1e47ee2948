//! The retriever component: binds `kg:agent/retriever`. Ingest and hybrid search arrive
//! with issue #7.

use kg_wit::types::{ComponentStatus, Error};

wit_bindgen::generate!({
    path: "../../wit",
    world: "retriever-component",
    with: { "kg:agent/types@0.1.0": kg_wit::types },
});

use exports::kg::agent::retriever::{
    ChunkingOptions, DocumentInfo, DocumentInput, Guest, IngestReport, SearchRequest,
    SearchResponse,
};

struct Retriever;

impl Guest for Retriever {
    fn status() -> ComponentStatus {
        kg_spin::status(
            "retriever",
            env!("CARGO_PKG_VERSION"),
            vec![
                kg_spin::configuration_check(kg_spin::NEO4J_VARIABLES),
                kg_spin::pending_check("document ingest and hybrid search", 7),
            ],
        )
    }

    fn ingest(
        _document: DocumentInput,
        _options: Option<ChunkingOptions>,
    ) -> Result<IngestReport, Error> {
        Err(Error::not_implemented("document ingest", 7))
    }

    fn list_documents() -> Result<Vec<DocumentInfo>, Error> {
        Err(Error::not_implemented("document listing", 7))
    }

    fn delete_document(_id: String) -> Result<bool, Error> {
        Err(Error::not_implemented("document deletion", 7))
    }

    fn search(_request: SearchRequest) -> Result<SearchResponse, Error> {
        Err(Error::not_implemented("hybrid search", 7))
    }
}

export!(Retriever);
