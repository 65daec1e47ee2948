//! An OpenAI-compatible `/embeddings` client (OpenAI, Azure OpenAI, Ollama, vLLM, LM
//! Studio, llama.cpp server) over neo4j-client's [`Transport`], so components send through
//! spin-sdk and tests through anything.

use neo4j_client::{HttpRequest, Method, Transport};
use serde_json::{Value as Json, json};

/// Inputs per request: OpenAI accepts up to 2,048; local servers are happier with fewer.
pub const DEFAULT_BATCH_SIZE: usize = 64;

/// Turns texts into vectors. The retriever depends on this, not on HTTP.
pub trait Embed {
    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbeddingError>;
}

#[derive(Debug, Clone, PartialEq)]
pub struct EmbeddingError {
    /// True when the endpoint could not be reached or answered 429/5xx: worth degrading
    /// around, and worth retrying later.
    pub unavailable: bool,
    pub message: String,
}

impl std::fmt::Display for EmbeddingError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

#[derive(Clone)]
pub struct EmbeddingConfig {
    /// `origin + base_path`, e.g. `http://127.0.0.1:11434/v1`.
    pub base_url: String,
    pub model: String,
    pub api_key: Option<String>,
    pub batch_size: usize,
}

pub struct EmbeddingClient<T> {
    config: EmbeddingConfig,
    transport: T,
}

impl<T: Transport> EmbeddingClient<T> {
    pub fn new(config: EmbeddingConfig, transport: T) -> Self {
        EmbeddingClient { config, transport }
    }

    pub fn model(&self) -> &str {
        &self.config.model
    }

    /// One `/embeddings` request, recorded as a GenAI `embeddings {model}` span (opened
    /// before the request, so the transport's `traceparent` names it). The input texts
    /// are document content: never recorded.
    fn embed_batch(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbeddingError> {
        let mut span = embeddings_span(&self.config.model, texts.len());
        let result = self.embed_batch_unrecorded(texts);
        match &result {
            Ok((_, input_tokens)) => {
                if let Some(tokens) = input_tokens {
                    span.set(kg_telemetry::attr::GEN_AI_USAGE_INPUT_TOKENS, *tokens);
                }
            }
            Err(e) => span.fail(
                if e.unavailable {
                    "unavailable"
                } else {
                    "invalid_answer"
                },
                &e.message,
            ),
        }
        result.map(|(vectors, _)| vectors)
    }

    /// The vectors, and the input token count when the endpoint reports `usage`.
    fn embed_batch_unrecorded(
        &self,
        texts: &[String],
    ) -> Result<(Vec<Vec<f32>>, Option<i64>), EmbeddingError> {
        let url = format!("{}/embeddings", self.config.base_url.trim_end_matches('/'));
        let mut headers = vec![("content-type".to_string(), "application/json".to_string())];
        if let Some(key) = self.config.api_key.as_deref().filter(|k| !k.is_empty()) {
            headers.push(("authorization".to_string(), format!("Bearer {key}")));
        }
        let body = json!({ "model": self.config.model, "input": texts });
        let response = self
            .transport
            .send(HttpRequest {
                method: Method::Post,
                url: url.clone(),
                headers,
                body: Some(body.to_string().into_bytes()),
            })
            .map_err(|e| EmbeddingError {
                unavailable: true,
                message: format!("embeddings endpoint {url} unreachable: {e}"),
            })?;
        if response.status != 200 {
            let text = String::from_utf8_lossy(&response.body);
            return Err(EmbeddingError {
                unavailable: response.status == 429 || response.status >= 500,
                message: format!(
                    "embeddings endpoint {url} answered {}: {}",
                    response.status,
                    text.chars().take(300).collect::<String>()
                ),
            });
        }
        let vectors =
            parse_embeddings(&response.body, texts.len()).map_err(|problem| EmbeddingError {
                unavailable: false,
                message: format!("embeddings endpoint {url}: {problem}"),
            })?;
        Ok((vectors, input_tokens(&response.body)))
    }
}

/// The GenAI span of one embeddings call.
fn embeddings_span(model: &str, inputs: usize) -> kg_telemetry::ActiveSpan {
    let mut span = kg_telemetry::span("embeddings", kg_telemetry::SpanKind::Client);
    if span.is_recording() {
        span.rename(&format!("embeddings {model}"));
        span.set(kg_telemetry::attr::GEN_AI_OPERATION_NAME, "embeddings");
        // Every endpoint this client reaches speaks the OpenAI embeddings API.
        span.set(kg_telemetry::attr::GEN_AI_PROVIDER_NAME, "openai");
        span.set(kg_telemetry::attr::GEN_AI_REQUEST_MODEL, model);
        span.set("kg.embeddings.inputs", inputs);
    }
    span
}

/// `usage.prompt_tokens` of an embeddings answer, when the server reports it.
fn input_tokens(body: &[u8]) -> Option<i64> {
    let json: Json = serde_json::from_slice(body).ok()?;
    json.get("usage")?.get("prompt_tokens")?.as_i64()
}

impl<T: Transport> Embed for EmbeddingClient<T> {
    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbeddingError> {
        let mut vectors = Vec::with_capacity(texts.len());
        for batch in texts.chunks(self.config.batch_size.max(1)) {
            vectors.extend(self.embed_batch(batch)?);
        }
        Ok(vectors)
    }
}

/// `{"data": [{"index": i, "embedding": [...]}, …]}`, put back in input order; every
/// vector must have the same, non-zero length and finite values.
fn parse_embeddings(body: &[u8], expected: usize) -> Result<Vec<Vec<f32>>, String> {
    let json: Json = serde_json::from_slice(body).map_err(|e| format!("invalid JSON: {e}"))?;
    let data = json
        .get("data")
        .and_then(Json::as_array)
        .ok_or("no `data` list in the answer")?;
    let mut slots: Vec<Option<Vec<f32>>> = vec![None; expected];
    for (position, item) in data.iter().enumerate() {
        let index = item
            .get("index")
            .and_then(Json::as_u64)
            .map_or(position, |i| i as usize);
        let vector: Vec<f32> = item
            .get("embedding")
            .and_then(Json::as_array)
            .ok_or_else(|| format!("item {position} has no `embedding` list"))?
            .iter()
            .map(|v| v.as_f64().map(|f| f as f32).filter(|f| f.is_finite()))
            .collect::<Option<_>>()
            .ok_or_else(|| format!("item {position} holds a value that is not a finite number"))?;
        let slot = slots
            .get_mut(index)
            .ok_or_else(|| format!("item index {index} is out of range for {expected} inputs"))?;
        *slot = Some(vector);
    }
    let vectors: Vec<Vec<f32>> = slots
        .into_iter()
        .enumerate()
        .map(|(i, v)| v.ok_or_else(|| format!("no embedding for input {i}")))
        .collect::<Result<_, _>>()?;
    let dims = vectors.first().map_or(0, Vec::len);
    if vectors.iter().any(|v| v.len() != dims || dims == 0) {
        return Err("embeddings are empty or differ in length".into());
    }
    Ok(vectors)
}

#[cfg(test)]
mod tests {
    use super::*;
    use neo4j_client::{HttpResponse, TransportError, TransportErrorKind};
    use std::cell::RefCell;

    /// Answers each request with vectors `[batch_number, position_in_batch]`, listed in
    /// reverse order to check that `index` is honoured, and records the requests.
    struct Recorder {
        requests: RefCell<Vec<Json>>,
        status: u16,
    }

    impl Transport for &Recorder {
        fn send(&self, request: HttpRequest) -> Result<HttpResponse, TransportError> {
            assert!(request.url.ends_with("/v1/embeddings"), "{}", request.url);
            let body: Json = serde_json::from_slice(request.body.as_deref().unwrap_or_default())
                .map_err(|e| TransportError {
                    kind: TransportErrorKind::Other,
                    message: e.to_string(),
                })?;
            let batch = self.requests.borrow().len();
            let inputs = body["input"].as_array().map_or(0, Vec::len);
            self.requests.borrow_mut().push(body);
            let data: Vec<Json> = (0..inputs)
                .rev()
                .map(|i| json!({"index": i, "embedding": [batch as f64, i as f64]}))
                .collect();
            Ok(HttpResponse {
                status: self.status,
                headers: vec![],
                body: json!({"data": data}).to_string().into_bytes(),
            })
        }
    }

    fn client(recorder: &Recorder, batch_size: usize) -> EmbeddingClient<&Recorder> {
        EmbeddingClient::new(
            EmbeddingConfig {
                base_url: "http://llm:1/v1/".into(),
                model: "m".into(),
                api_key: None,
                batch_size,
            },
            recorder,
        )
    }

    #[test]
    fn batches_and_keeps_input_order() {
        let recorder = Recorder {
            requests: RefCell::new(vec![]),
            status: 200,
        };
        let texts: Vec<String> = (0..5).map(|i| format!("t{i}")).collect();
        let vectors = client(&recorder, 2).embed(&texts).unwrap();
        assert_eq!(recorder.requests.borrow().len(), 3);
        assert_eq!(recorder.requests.borrow()[0]["model"], "m");
        assert_eq!(
            vectors,
            vec![
                vec![0.0, 0.0],
                vec![0.0, 1.0],
                vec![1.0, 0.0],
                vec![1.0, 1.0],
                vec![2.0, 0.0]
            ]
        );
    }

    #[test]
    fn server_errors_are_unavailable_and_client_errors_are_not() {
        let down = Recorder {
            requests: RefCell::new(vec![]),
            status: 503,
        };
        assert!(
            client(&down, 8)
                .embed(&["x".into()])
                .unwrap_err()
                .unavailable
        );
        let bad = Recorder {
            requests: RefCell::new(vec![]),
            status: 400,
        };
        let e = client(&bad, 8).embed(&["x".into()]).unwrap_err();
        assert!(!e.unavailable && e.message.contains("400"), "{e}");
    }

    #[test]
    fn each_request_is_an_embeddings_span_without_the_texts() {
        kg_telemetry::begin(
            None,
            None,
            kg_telemetry::Settings {
                export: true,
                component: "test",
                ..kg_telemetry::Settings::default()
            },
        );
        let recorder = Recorder {
            requests: RefCell::new(vec![]),
            status: 200,
        };
        let texts: Vec<String> = (0..3).map(|i| format!("secret text {i}")).collect();
        client(&recorder, 2).embed(&texts).unwrap();
        let spans = kg_telemetry::take_finished();
        assert_eq!(spans.len(), 2, "one span per request");
        for span in &spans {
            assert_eq!(span.name, "embeddings m");
            let attribute = |key: &str| {
                span.attributes
                    .iter()
                    .find(|(k, _)| k == key)
                    .map(|(_, v)| v.clone())
            };
            assert_eq!(
                attribute("gen_ai.operation.name"),
                Some(kg_telemetry::Value::from("embeddings"))
            );
            assert_eq!(
                attribute("gen_ai.request.model"),
                Some(kg_telemetry::Value::from("m"))
            );
            assert!(!format!("{span:?}").contains("secret text"), "{span:?}");
        }
        let down = Recorder {
            requests: RefCell::new(vec![]),
            status: 503,
        };
        client(&down, 8).embed(&["x".into()]).unwrap_err();
        let failed = kg_telemetry::take_finished();
        assert_eq!(failed.len(), 1);
        assert!(
            format!("{:?}", failed[0].status).contains("answered 503"),
            "{:?}",
            failed[0].status
        );
    }

    #[test]
    fn malformed_answers_are_refused_with_a_reason() {
        for (body, reason) in [
            (r#"{"nope": 1}"#, "no `data`"),
            (
                r#"{"data": [{"index": 0, "embedding": ["a"]}]}"#,
                "not a finite number",
            ),
            (
                r#"{"data": [{"index": 3, "embedding": [1.0]}]}"#,
                "out of range",
            ),
            (r#"{"data": []}"#, "no embedding for input 0"),
            (r#"{"data": [{"index": 0, "embedding": []}]}"#, "empty"),
        ] {
            let e = parse_embeddings(body.as_bytes(), 1).unwrap_err();
            assert!(e.contains(reason), "{body}: {e}");
        }
    }
}
