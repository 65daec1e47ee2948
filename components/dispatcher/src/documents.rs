//! `GET/POST /documents`, `DELETE /documents/{id}` and `POST /search` over the retriever
//! component. JSON in and out; a bad field is a 400 naming it, before any component runs.

use kg_http::ApiError;
use kg_http::body::only_fields;
use kg_wit::kg::retriever::retriever::{
    self, ChunkingOptions, ContentType, DocumentInfo, DocumentInput, SearchHit, SearchLeg,
    SearchRequest,
};
use serde_json::{Map, Value, json};
use spin_sdk::http::Response;

const DEFAULT_TOP_K: u32 = 10;

pub fn list() -> Result<Response, ApiError> {
    let documents: Vec<Value> = crate::causal::retriever(retriever::list_documents)?
        .iter()
        .map(document_json)
        .collect();
    Ok(crate::json_response(
        200,
        &json!({ "documents": documents }),
    ))
}

pub fn ingest(body: &[u8]) -> Result<Response, ApiError> {
    let body = kg_http::body::json_object(body)?;
    only_fields(
        &body,
        &[
            "id",
            "text",
            "title",
            "content_type",
            "metadata",
            "chunking",
        ],
    )?;
    let content_type = match optional_string(&body, "content_type")?.as_deref() {
        None | Some("text") => ContentType::Text,
        Some("markdown") => ContentType::Markdown,
        Some(other) => {
            return Err(ApiError::bad_request(format!(
                "`content_type` must be \"text\" or \"markdown\", got \"{other}\""
            )));
        }
    };
    let chunking = match body.get("chunking") {
        None | Some(Value::Null) => None,
        Some(Value::Object(c)) => {
            only_fields(c, &["max_chars", "overlap_chars"])
                .map_err(|e| ApiError::bad_request(format!("`chunking`: {}", e.message)))?;
            Some(ChunkingOptions {
                max_chars: required_u32(c, "max_chars", "chunking.max_chars")?,
                overlap_chars: optional_u32(c, "overlap_chars", "chunking.overlap_chars")?
                    .unwrap_or(0),
            })
        }
        Some(_) => return Err(ApiError::bad_request("`chunking` must be an object")),
    };
    let document = DocumentInput {
        id: required_string(&body, "id")?,
        title: optional_string(&body, "title")?,
        content_type,
        text: required_string(&body, "text")?,
        metadata: string_map(&body, "metadata")?,
    };
    let report = crate::causal::retriever(|| retriever::ingest(&document, chunking))?;
    // 201 for a new document, 200 when an earlier version was replaced.
    let status = if report.replaced { 200 } else { 201 };
    Ok(crate::json_response(
        status,
        &json!({
            "document_id": report.document_id,
            "chunks": report.chunks,
            "replaced": report.replaced,
            "warnings": report.warnings,
        }),
    ))
}

pub fn delete(id: &str) -> Result<Response, ApiError> {
    if crate::causal::retriever(|| retriever::delete_document(id))? {
        Ok(crate::json_response(
            200,
            &json!({ "deleted": true, "id": id }),
        ))
    } else {
        Err(ApiError::not_found(format!("no document with id `{id}`")))
    }
}

pub fn search(body: &[u8]) -> Result<Response, ApiError> {
    let body = kg_http::body::json_object(body)?;
    only_fields(
        &body,
        &[
            "query",
            "top_k",
            "vector_weight",
            "bm25_weight",
            "document_ids",
            "metadata_filter",
        ],
    )?;
    let request = SearchRequest {
        query: required_string(&body, "query")?,
        top_k: optional_u32(&body, "top_k", "top_k")?.unwrap_or(DEFAULT_TOP_K),
        vector_weight: optional_f32(&body, "vector_weight")?,
        bm25_weight: optional_f32(&body, "bm25_weight")?,
        document_ids: string_list(&body, "document_ids")?,
        metadata_filter: string_map(&body, "metadata_filter")?,
    };
    let response = crate::causal::retriever(|| retriever::search(&request))?;
    let legs: Vec<&str> = response
        .legs
        .iter()
        .map(|l| match l {
            SearchLeg::Vector => "vector",
            SearchLeg::Bm25 => "bm25",
        })
        .collect();
    let hits: Vec<Value> = response.hits.iter().map(hit_json).collect();
    Ok(crate::json_response(
        200,
        &json!({
            "query": request.query,
            "hits": hits,
            "legs": legs,
            "warnings": response.warnings,
        }),
    ))
}

fn document_json(d: &DocumentInfo) -> Value {
    json!({
        "id": d.id,
        "title": d.title,
        "chunks": d.chunks,
        "metadata": pairs_json(&d.metadata),
        "ingested_at": d.ingested_at,
    })
}

fn hit_json(h: &SearchHit) -> Value {
    json!({
        "chunk_id": h.chunk_id,
        "document_id": h.document_id,
        "text": h.text,
        "position": h.position,
        "fused_score": h.fused_score,
        "vector_score": h.vector_score,
        "vector_rank": h.vector_rank,
        "bm25_score": h.bm25_score,
        "bm25_rank": h.bm25_rank,
        "metadata": pairs_json(&h.metadata),
    })
}

fn pairs_json(pairs: &[(String, String)]) -> Value {
    Value::Object(
        pairs
            .iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect(),
    )
}

fn required_string(body: &Map<String, Value>, field: &str) -> Result<String, ApiError> {
    optional_string(body, field)?
        .ok_or_else(|| ApiError::bad_request(format!("`{field}` is required")))
}

fn optional_string(body: &Map<String, Value>, field: &str) -> Result<Option<String>, ApiError> {
    match body.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(ApiError::bad_request(format!("`{field}` must be a string"))),
    }
}

fn required_u32(body: &Map<String, Value>, field: &str, name: &str) -> Result<u32, ApiError> {
    optional_u32(body, field, name)?
        .ok_or_else(|| ApiError::bad_request(format!("`{name}` is required")))
}

fn optional_u32(
    body: &Map<String, Value>,
    field: &str,
    name: &str,
) -> Result<Option<u32>, ApiError> {
    match body.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => kg_http::body::whole_number(v)
            .and_then(|n| u32::try_from(n).ok())
            .map(Some)
            .ok_or_else(|| {
                ApiError::bad_request(format!("`{name}` must be a non-negative integer"))
            }),
    }
}

fn optional_f32(body: &Map<String, Value>, field: &str) -> Result<Option<f32>, ApiError> {
    match body.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_f64()
            .map(|f| Some(f as f32))
            .ok_or_else(|| ApiError::bad_request(format!("`{field}` must be a number"))),
    }
}

fn string_list(body: &Map<String, Value>, field: &str) -> Result<Vec<String>, ApiError> {
    match body.get(field) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| v.as_str().map(str::to_string))
            .collect::<Option<_>>()
            .ok_or_else(|| ApiError::bad_request(format!("`{field}` must be a list of strings"))),
        Some(_) => Err(ApiError::bad_request(format!(
            "`{field}` must be a list of strings"
        ))),
    }
}

/// `{"key": "value", …}`: string values only, in key order.
fn string_map(body: &Map<String, Value>, field: &str) -> Result<Vec<(String, String)>, ApiError> {
    match body.get(field) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Object(map)) => map
            .iter()
            .map(|(k, v)| match v {
                Value::String(s) => Ok((k.clone(), s.clone())),
                _ => Err(ApiError::bad_request(format!(
                    "`{field}.{k}` must be a string"
                ))),
            })
            .collect(),
        Some(_) => Err(ApiError::bad_request(format!(
            "`{field}` must be an object of strings"
        ))),
    }
}
