//! One stub that answers everything the application asks of its model endpoint: the
//! embeddings (deterministic, `embedding_stub`) and every chat completion with a routing
//! verdict that is also a usable answer. For runs that send arbitrary requests (the fuzz
//! runs, schemathesis) and need every dependency up, not a script.

use crate::embedding_stub;
use serde_json::json;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

pub async fn start() -> MockServer {
    let stub = embedding_stub::start().await;
    let verdict = r#"{"intent": "answer", "confidence": 0.9, "reason": "stub", "refined_question": null, "clarification": null}"#;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "id": "stub", "object": "chat.completion", "model": "stub",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": verdict}}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        })))
        .mount(&stub)
        .await;
    // The readiness probe's model list.
    Mock::given(method("GET"))
        .and(path("/v1/models"))
        .respond_with(ResponseTemplate::new(200).set_body_json(
            json!({"object": "list", "data": [{"id": "stub", "object": "model", "owned_by": "test"}]}),
        ))
        .mount(&stub)
        .await;
    stub
}

/// The variables that point the application's LLM and embeddings at `stub`.
pub fn variables(stub: &MockServer) -> Vec<(&'static str, String)> {
    vec![
        ("llm_origin", stub.uri()),
        ("llm_base_path", "/v1".to_string()),
        ("llm_model", "stub".to_string()),
    ]
}
