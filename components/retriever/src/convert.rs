//! This component's export types and kg-wit's (the library's) are generated from the same
//! WIT records but are distinct Rust types: field-by-field copies.

use crate::exports::kg::retriever::retriever as export;
use kg_wit::kg::retriever::retriever as lib;

pub fn document_input(d: export::DocumentInput) -> lib::DocumentInput {
    lib::DocumentInput {
        id: d.id,
        title: d.title,
        content_type: match d.content_type {
            export::ContentType::Text => lib::ContentType::Text,
            export::ContentType::Markdown => lib::ContentType::Markdown,
        },
        text: d.text,
        metadata: d.metadata,
    }
}

pub fn chunking_options(o: export::ChunkingOptions) -> lib::ChunkingOptions {
    lib::ChunkingOptions {
        max_chars: o.max_chars,
        overlap_chars: o.overlap_chars,
    }
}

pub fn ingest_report(r: lib::IngestReport) -> export::IngestReport {
    export::IngestReport {
        document_id: r.document_id,
        chunks: r.chunks,
        replaced: r.replaced,
        warnings: r.warnings,
    }
}

pub fn document_info(d: lib::DocumentInfo) -> export::DocumentInfo {
    export::DocumentInfo {
        id: d.id,
        title: d.title,
        chunks: d.chunks,
        metadata: d.metadata,
        ingested_at: d.ingested_at,
    }
}

pub fn search_request(r: export::SearchRequest) -> lib::SearchRequest {
    lib::SearchRequest {
        query: r.query,
        top_k: r.top_k,
        vector_weight: r.vector_weight,
        bm25_weight: r.bm25_weight,
        document_ids: r.document_ids,
        metadata_filter: r.metadata_filter,
    }
}

pub fn search_response(r: lib::SearchResponse) -> export::SearchResponse {
    export::SearchResponse {
        hits: r
            .hits
            .into_iter()
            .map(|h| export::SearchHit {
                chunk_id: h.chunk_id,
                document_id: h.document_id,
                text: h.text,
                position: h.position,
                vector_score: h.vector_score,
                bm25_score: h.bm25_score,
                vector_rank: h.vector_rank,
                bm25_rank: h.bm25_rank,
                fused_score: h.fused_score,
                metadata: h.metadata,
            })
            .collect(),
        legs: r
            .legs
            .into_iter()
            .map(|l| match l {
                lib::SearchLeg::Vector => export::SearchLeg::Vector,
                lib::SearchLeg::Bm25 => export::SearchLeg::Bm25,
            })
            .collect(),
        warnings: r.warnings,
    }
}
