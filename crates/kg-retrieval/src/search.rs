//! Hybrid search: a vector leg on the Neo4j vector index and a BM25 leg on the full-text
//! index, fused with weighted Reciprocal Rank Fusion. Each leg degrades on its own: the
//! response lists the legs that ran and why the others did not.

use crate::documents::metadata;
use crate::embeddings::Embed;
use crate::errors::invalid;
use crate::fulltext_query::lucene_query;
use crate::fusion::{Weights, fuse};
use crate::schema::{self, FULLTEXT_INDEX, METADATA_PREFIX, VECTOR_INDEX};
use kg_wit::kg::retriever::retriever::{SearchHit, SearchLeg, SearchRequest, SearchResponse};
use kg_wit::types::{Error, ErrorCode};
use neo4j_client::{AccessMode, Client, Neo4jError, Transport, Value};
use serde_json::{Map, json};
use std::collections::HashMap;

pub const MAX_TOP_K: u32 = 100;
pub const MAX_QUERY_CHARS: usize = 4000;

/// One leg's hit, before fusion.
#[derive(Debug, Clone)]
struct LegHit {
    chunk_id: String,
    document_id: String,
    text: String,
    position: u32,
    score: f64,
    metadata: Vec<(String, String)>,
}

/// Checks the request, naming the field at fault; the weights to fuse with.
pub fn check_request(request: &SearchRequest) -> Result<Weights, Error> {
    if request.query.trim().is_empty() {
        return Err(invalid("`query` must not be empty"));
    }
    if request.query.chars().count() > MAX_QUERY_CHARS {
        return Err(invalid(format!(
            "`query` is longer than {MAX_QUERY_CHARS} characters"
        )));
    }
    if !(1..=MAX_TOP_K).contains(&request.top_k) {
        return Err(invalid(format!(
            "`top_k` must be between 1 and {MAX_TOP_K}, got {}",
            request.top_k
        )));
    }
    for (key, _) in &request.metadata_filter {
        if let Some(problem) = schema::metadata_key_problem(key) {
            return Err(invalid(format!("`metadata_filter`: {problem}")));
        }
    }
    let defaults = Weights::default();
    let weights = Weights {
        vector: request.vector_weight.map_or(defaults.vector, f64::from),
        bm25: request.bm25_weight.map_or(defaults.bm25, f64::from),
    };
    match weights.problem() {
        Some(problem) => Err(invalid(problem)),
        None => Ok(weights),
    }
}

pub fn search<T: Transport, E: Embed>(
    graph: &Client<T>,
    embedder: &E,
    request: &SearchRequest,
) -> Result<SearchResponse, Error> {
    let weights = check_request(request)?;
    let filtered = !request.document_ids.is_empty() || !request.metadata_filter.is_empty();
    // Filters apply after the index lookup, so ask the indexes for more candidates then.
    let candidates = if filtered {
        (request.top_k * 10).clamp(100, 1000)
    } else {
        (request.top_k * 4).clamp(40, 400)
    };
    let mut legs = Vec::new();
    let mut warnings = Vec::new();
    let mut failures = Vec::new();
    let mut only_missing_indexes = true;

    let mut vector_hits = Vec::new();
    if weights.vector > 0.0 {
        match embedder.embed(std::slice::from_ref(&request.query)) {
            Ok(mut vectors) if !vectors.is_empty() => {
                let embedding = vectors.swap_remove(0);
                match run_leg(graph, request, candidates, Leg::Vector(&embedding)) {
                    Ok(hits) => {
                        legs.push(SearchLeg::Vector);
                        vector_hits = hits;
                    }
                    Err(e) => {
                        only_missing_indexes &= is_missing_index(&e);
                        failures.push(format!("vector search did not run: {e}"));
                    }
                }
            }
            Ok(_) => {
                only_missing_indexes = false;
                failures.push("vector search did not run: no embedding for the query".into());
            }
            Err(e) => {
                only_missing_indexes = false;
                failures.push(format!(
                    "embeddings unavailable, so vector search did not run: {e}"
                ));
            }
        }
    }
    let mut bm25_hits = Vec::new();
    if weights.bm25 > 0.0 {
        match run_leg(
            graph,
            request,
            candidates,
            Leg::Bm25(&lucene_query(&request.query)),
        ) {
            Ok(hits) => {
                legs.push(SearchLeg::Bm25);
                bm25_hits = hits;
            }
            Err(e) => {
                only_missing_indexes &= is_missing_index(&e);
                failures.push(format!("full-text (BM25) search did not run: {e}"));
            }
        }
    }
    if legs.is_empty() && only_missing_indexes {
        // Nothing was ever ingested (ingest creates the indexes): nothing to find.
        failures.push("no search index exists yet: ingest a document first".into());
        return Ok(SearchResponse {
            hits: Vec::new(),
            legs,
            warnings: failures,
        });
    }
    if legs.is_empty() {
        return Err(Error::new(
            ErrorCode::Unavailable,
            format!("search failed: {}", failures.join("; ")),
        ));
    }
    warnings.extend(failures);
    if legs.len() == 1 && weights.vector > 0.0 && weights.bm25 > 0.0 {
        let only = if legs[0] == SearchLeg::Vector {
            "vector"
        } else {
            "BM25"
        };
        warnings.push(format!("results come from {only} search only"));
    }
    Ok(SearchResponse {
        hits: fuse_hits(vector_hits, bm25_hits, weights, request.top_k as usize),
        legs,
        warnings,
    })
}

fn fuse_hits(
    vector: Vec<LegHit>,
    bm25: Vec<LegHit>,
    weights: Weights,
    top_k: usize,
) -> Vec<SearchHit> {
    let vector_ids: Vec<String> = vector.iter().map(|h| h.chunk_id.clone()).collect();
    let bm25_ids: Vec<String> = bm25.iter().map(|h| h.chunk_id.clone()).collect();
    let vector_by_id: HashMap<&str, &LegHit> =
        vector.iter().map(|h| (h.chunk_id.as_str(), h)).collect();
    let bm25_by_id: HashMap<&str, &LegHit> =
        bm25.iter().map(|h| (h.chunk_id.as_str(), h)).collect();
    fuse(&vector_ids, &bm25_ids, weights)
        .into_iter()
        .take(top_k)
        .filter_map(|f| {
            let v = vector_by_id.get(f.key.as_str()).copied();
            let b = bm25_by_id.get(f.key.as_str()).copied();
            let hit = v.or(b)?;
            Some(SearchHit {
                chunk_id: hit.chunk_id.clone(),
                document_id: hit.document_id.clone(),
                text: hit.text.clone(),
                position: hit.position,
                vector_score: v.map(|h| h.score as f32),
                bm25_score: b.map(|h| h.score as f32),
                vector_rank: f.vector_rank.map(|r| r as u32),
                bm25_rank: f.bm25_rank.map(|r| r as u32),
                fused_score: f.score as f32,
                metadata: hit.metadata.clone(),
            })
        })
        .collect()
}

enum Leg<'a> {
    Vector(&'a [f32]),
    Bm25(&'a str),
}

/// One leg as a READ query: the index procedure, the chunk's document, the filters.
fn run_leg<T: Transport>(
    graph: &Client<T>,
    request: &SearchRequest,
    candidates: u32,
    leg: Leg<'_>,
) -> Result<Vec<LegHit>, Neo4jError> {
    let mut params = Map::new();
    params.insert("candidates".into(), json!(candidates));
    let call = match leg {
        Leg::Vector(embedding) => {
            params.insert("index".into(), json!(VECTOR_INDEX));
            params.insert("embedding".into(), json!(embedding));
            "CALL db.index.vector.queryNodes($index, $candidates, $embedding) YIELD node, score"
        }
        Leg::Bm25(query) => {
            params.insert("index".into(), json!(FULLTEXT_INDEX));
            params.insert("query".into(), json!(query));
            "CALL db.index.fulltext.queryNodes($index, $query, {limit: $candidates}) YIELD node, score"
        }
    };
    let mut conditions = Vec::new();
    if !request.document_ids.is_empty() {
        params.insert("document_ids".into(), json!(request.document_ids));
        conditions.push("node.document_id IN $document_ids".to_string());
    }
    for (i, (key, value)) in request.metadata_filter.iter().enumerate() {
        params.insert(
            format!("meta_key_{i}"),
            json!(format!("{METADATA_PREFIX}{key}")),
        );
        params.insert(format!("meta_value_{i}"), json!(value));
        conditions.push(format!("d[$meta_key_{i}] = $meta_value_{i}"));
    }
    let filter = if conditions.is_empty() {
        String::new()
    } else {
        format!(" WHERE {}", conditions.join(" AND "))
    };
    // The document by its indexed id, not by walking HAS_CHUNK back: a property lookup
    // per hit instead of a pattern match per hit.
    let statement = format!(
        "{call} MATCH (d:Document {{id: node.document_id}}){filter} \
         RETURN node.id AS chunk_id, node.document_id AS document_id, node.text AS text, \
         node.position AS position, score, d AS document \
         ORDER BY score DESC LIMIT $candidates"
    );
    let result = graph.run(&statement, params, AccessMode::Read)?;
    Ok(result.rows_as_maps().iter().filter_map(leg_hit).collect())
}

/// Neo4j's answer for an index that does not exist ("There is no such vector schema index").
fn is_missing_index(e: &Neo4jError) -> bool {
    e.code.as_deref() == Some("Neo.ClientError.Procedure.ProcedureCallFailed")
        && e.message.contains("no such")
}

fn leg_hit(row: &std::collections::BTreeMap<String, Value>) -> Option<LegHit> {
    let text = |k: &str| match row.get(k) {
        Some(Value::String(s)) => Some(s.clone()),
        _ => None,
    };
    let number = |k: &str| match row.get(k) {
        Some(Value::Float(f)) => Some(*f),
        Some(Value::Integer(i)) => Some(*i as f64),
        _ => None,
    };
    let properties = match row.get("document") {
        Some(Value::Node { properties, .. }) => metadata(properties),
        _ => Vec::new(),
    };
    Some(LegHit {
        chunk_id: text("chunk_id")?,
        document_id: text("document_id")?,
        text: text("text").unwrap_or_default(),
        position: number("position").map_or(0, |p| p as u32),
        score: number("score")?,
        metadata: properties,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embeddings::EmbeddingError;
    use neo4j_client::{Auth, Config, HttpRequest, HttpResponse, TransportError};
    use serde_json::Value as Json;
    use std::cell::RefCell;

    /// A graph whose index procedures answer as configured; records every request body.
    struct FakeGraph {
        vector: Result<Vec<(&'static str, f64)>, &'static str>,
        fulltext: Result<Vec<(&'static str, f64)>, &'static str>,
        requests: RefCell<Vec<Json>>,
    }

    impl Transport for &FakeGraph {
        fn send(&self, request: HttpRequest) -> Result<HttpResponse, TransportError> {
            let body: Json = serde_json::from_slice(request.body.as_deref().unwrap_or_default())
                .unwrap_or_default();
            let statement = body["statement"].as_str().unwrap_or_default().to_string();
            self.requests.borrow_mut().push(body);
            let answer = if statement.contains("db.index.vector") {
                &self.vector
            } else {
                &self.fulltext
            };
            let json = match answer {
                Ok(rows) => json!({"data": {
                    "fields": ["chunk_id", "document_id", "text", "position", "score", "document"],
                    "values": rows.iter().map(|(id, score)| json!([id, "doc", format!("text of {id}"), 0, score,
                        {"elementId": "4:x:1", "labels": ["Document"], "properties": {"id": "doc", "meta_lang": "en"}}])).collect::<Vec<_>>(),
                }}),
                Err(message) => {
                    json!({"errors": [{"code": "Neo.ClientError.Procedure.ProcedureCallFailed", "message": message}]})
                }
            };
            Ok(HttpResponse {
                status: if answer.is_ok() { 200 } else { 400 },
                headers: vec![],
                body: json.to_string().into_bytes(),
            })
        }
    }

    struct FakeEmbedder(bool);

    impl Embed for FakeEmbedder {
        fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbeddingError> {
            if self.0 {
                Ok(texts.iter().map(|_| vec![0.5; 4]).collect())
            } else {
                Err(EmbeddingError {
                    unavailable: true,
                    message: "connection refused".into(),
                })
            }
        }
    }

    fn request(query: &str) -> SearchRequest {
        SearchRequest {
            query: query.into(),
            top_k: 3,
            vector_weight: None,
            bm25_weight: None,
            document_ids: vec!["doc".into()],
            metadata_filter: vec![("lang".into(), "en".into())],
        }
    }

    fn run(graph: &FakeGraph, embeddings_up: bool) -> Result<SearchResponse, Error> {
        let client = Client::new(
            Config {
                origin: neo4j_client::Url::parse("http://graph:7474").expect("a URL"),
                database: "neo4j".into(),
                auth: Auth::None,
            },
            graph,
        );
        search(
            &client,
            &FakeEmbedder(embeddings_up),
            &request("paid (invoices)"),
        )
    }

    fn graph(
        vector: Result<Vec<(&'static str, f64)>, &'static str>,
        fulltext: Result<Vec<(&'static str, f64)>, &'static str>,
    ) -> FakeGraph {
        FakeGraph {
            vector,
            fulltext,
            requests: RefCell::new(vec![]),
        }
    }

    #[test]
    fn both_legs_are_read_queries_with_every_value_a_parameter() {
        let g = graph(
            Ok(vec![("a", 0.9), ("b", 0.8)]),
            Ok(vec![("b", 3.0), ("c", 1.0)]),
        );
        let r = run(&g, true).unwrap();
        assert_eq!(r.legs, vec![SearchLeg::Vector, SearchLeg::Bm25]);
        let ids: Vec<&str> = r.hits.iter().map(|h| h.chunk_id.as_str()).collect();
        assert_eq!(ids, ["b", "a", "c"]);
        assert_eq!(
            r.hits[0].metadata,
            vec![("lang".to_string(), "en".to_string())]
        );
        assert_eq!(
            (r.hits[0].vector_rank, r.hits[0].bm25_rank),
            (Some(2), Some(1))
        );
        for body in g.requests.borrow().iter() {
            assert_eq!(body["accessMode"], "READ");
            let statement = body["statement"].as_str().unwrap();
            assert!(
                !statement.contains("invoices") && !statement.contains("'en'"),
                "{statement}"
            );
            assert!(statement.contains("LIMIT $candidates"), "{statement}");
        }
        let fulltext = &g.requests.borrow()[1];
        assert_eq!(fulltext["parameters"]["query"], r"paid \(invoices\)");
        assert_eq!(fulltext["parameters"]["meta_key_0"], "meta_lang");
        assert_eq!(fulltext["parameters"]["document_ids"], json!(["doc"]));
    }

    #[test]
    fn each_leg_degrades_alone() {
        let r = run(&graph(Err("boom"), Ok(vec![("c", 1.0)])), true).unwrap();
        assert_eq!(r.legs, vec![SearchLeg::Bm25]);
        assert!(
            r.warnings
                .iter()
                .any(|w| w.contains("vector search did not run")),
            "{:?}",
            r.warnings
        );
        let r = run(&graph(Ok(vec![("a", 0.9)]), Err("boom")), true).unwrap();
        assert_eq!(r.legs, vec![SearchLeg::Vector]);
        assert!(
            r.warnings.iter().any(|w| w.contains("full-text")),
            "{:?}",
            r.warnings
        );
        let r = run(&graph(Ok(vec![("a", 0.9)]), Ok(vec![("c", 1.0)])), false).unwrap();
        assert_eq!(r.legs, vec![SearchLeg::Bm25]);
        assert!(
            r.warnings
                .iter()
                .any(|w| w.contains("embeddings unavailable")),
            "{:?}",
            r.warnings
        );
    }

    #[test]
    fn no_index_yet_is_empty_and_any_other_double_failure_an_error() {
        let missing = "There is no such vector schema index: chunk_embedding";
        let r = run(
            &graph(
                Err(missing),
                Err("There is no such fulltext schema index: chunk_text"),
            ),
            true,
        )
        .unwrap();
        assert!(r.hits.is_empty() && r.legs.is_empty());
        assert!(
            r.warnings
                .iter()
                .any(|w| w.contains("ingest a document first"))
        );
        let e = run(&graph(Err(missing), Err("boom")), true).unwrap_err();
        assert_eq!(e.code, ErrorCode::Unavailable);
        let e = run(&graph(Err(missing), Err(missing)), false).unwrap_err();
        assert!(
            e.message.contains("embeddings unavailable"),
            "{}",
            e.message
        );
    }

    #[test]
    fn requests_are_checked_naming_the_field() {
        let mut r = request("q");
        r.top_k = 0;
        assert!(check_request(&r).unwrap_err().message.contains("top_k"));
        let mut r = request("q");
        r.bm25_weight = Some(-0.5);
        assert!(
            check_request(&r)
                .unwrap_err()
                .message
                .contains("bm25_weight")
        );
        let mut r = request("q");
        r.metadata_filter = vec![("a-b".into(), "x".into())];
        assert!(
            check_request(&r)
                .unwrap_err()
                .message
                .contains("metadata_filter")
        );
        assert!(
            check_request(&request(" "))
                .unwrap_err()
                .message
                .contains("query")
        );
    }
}
