//! Prints, one JSON string per line, every statement kg-retrieval sends for typical inputs:
//! `ingest` (with and without embeddings, metadata and business keys to link), `delete`,
//! `list` and `search` (both legs, with and without filters), against a graph stand-in that
//! records the statements and answers each with an empty result, except the unique key on
//! document ids, which it refuses (so the migration path from the older plain index runs
//! too); plus the schema DDL. Input of the Cypher lint gate (`tools/cypher-lint`, issue #15):
//!
//! `cargo run --release --example dump_retrieval_statements > retrieval.jsonl`

use kg_retrieval::{Embed, EmbeddingError, schema};
use kg_wit::kg::retriever::retriever::{ContentType, DocumentInput, SearchRequest};
use neo4j_client::{
    Auth, Client, Config, HttpRequest, HttpResponse, Method, Transport, TransportError,
};
use serde_json::{Value as Json, json};
use std::cell::RefCell;
use std::collections::BTreeSet;

/// The graph stand-in.
#[derive(Default)]
struct Recorder {
    statements: RefCell<Vec<String>>,
}

impl Transport for &Recorder {
    fn send(&self, request: HttpRequest) -> Result<HttpResponse, TransportError> {
        let body: Json =
            serde_json::from_slice(request.body.as_deref().unwrap_or_default()).unwrap_or_default();
        let statement = body["statement"].as_str().unwrap_or_default().to_string();
        let answer = if request.method == Method::Post && request.url.ends_with("/tx") {
            json!({"transaction": {"id": "1", "expires": "2099-01-01T00:00:00Z"},
                   "data": {"fields": [], "values": []}})
        } else if statement.starts_with("CREATE CONSTRAINT") {
            json!({"errors": [{"code": "Neo.ClientError.Schema.IndexAlreadyExists",
                               "message": "There already exists an index (:Document {id})."}]})
        } else {
            json!({"data": {"fields": [], "values": []}})
        };
        if !statement.is_empty() {
            self.statements.borrow_mut().push(statement);
        }
        Ok(HttpResponse {
            status: if answer.get("errors").is_some() {
                400
            } else {
                200
            },
            headers: vec![("content-type".into(), "application/json".into())],
            body: answer.to_string().into_bytes(),
        })
    }
}

/// Embeddings, or an embedding service that is down.
struct Embedder(bool);

impl Embed for Embedder {
    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbeddingError> {
        if self.0 {
            Ok(texts.iter().map(|_| vec![0.25; 8]).collect())
        } else {
            Err(EmbeddingError {
                unavailable: true,
                message: "connection refused".into(),
            })
        }
    }
}

fn main() {
    let recorder = Recorder::default();
    let client = Client::new(
        Config {
            origin: neo4j_client::Url::parse("http://127.0.0.1:7474").expect("a URL"),
            database: "neo4j".into(),
            auth: Auth::None,
        },
        &recorder,
    );
    let document = DocumentInput {
        id: "doc-1".into(),
        title: Some("Payment terms".into()),
        content_type: ContentType::Markdown,
        text: "# Terms\n\nACME (SUP-001) is paid within 30 days; order PO-0001 is approved.\n"
            .repeat(40),
        metadata: vec![("lang".into(), "en".into())],
    };
    for up in [true, false] {
        kg_retrieval::ingest(
            &client,
            &Embedder(up),
            &document,
            None,
            "2026-11-25T09:30:00Z",
        )
        .expect("ingest");
        for (document_ids, metadata_filter) in [
            (vec![], vec![]),
            (
                vec!["doc-1".to_string()],
                vec![
                    ("lang".to_string(), "en".to_string()),
                    ("team".into(), "finance".into()),
                ],
            ),
        ] {
            let request = SearchRequest {
                query: "When is ACME paid?".into(),
                top_k: 5,
                vector_weight: None,
                bm25_weight: None,
                document_ids,
                metadata_filter,
            };
            kg_retrieval::search(&client, &Embedder(up), &request).expect("search");
        }
    }
    kg_retrieval::list(&client).expect("list");
    kg_retrieval::delete(&client, "doc-1").expect("delete");

    let mut out: BTreeSet<String> = recorder.statements.take().into_iter().collect();
    out.insert(schema::vector_index_ddl(1536));
    out.insert(schema::fulltext_index_ddl());
    out.insert(schema::document_key_ddl());
    out.insert(schema::legacy_document_index_drop());
    out.insert(schema::legacy_document_index_ddl());
    out.extend(schema::lookup_index_ddl());
    for statement in out {
        println!("{}", Json::String(statement));
    }
}
