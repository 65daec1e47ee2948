//! The span of one LLM call, after the OpenTelemetry GenAI conventions: `chat {model}`
//! with the operation, provider, requested and answering model, token usage and finish
//! reason. Messages and answers are recorded only when the recorder's content capture is
//! on (`gen_ai.input.messages`, `gen_ai.output.messages`): they are the user's data.

use crate::error::LlmError;
use crate::request::ChatRequest;
use crate::response::ChatResponse;
use kg_telemetry::{ActiveSpan, SpanKind, attr};
use serde_json::json;

/// Opens the span before the request is built, so its `traceparent` names this call.
pub(crate) fn call_span(
    request: &ChatRequest,
    model: &str,
    base_url: &str,
    stream: bool,
) -> ActiveSpan {
    let mut span = kg_telemetry::span("chat", SpanKind::Client);
    if !span.is_recording() {
        return span;
    }
    span.rename(&format!("chat {model}"));
    span.set(attr::GEN_AI_OPERATION_NAME, "chat");
    // Every endpoint this client reaches speaks the OpenAI Chat Completions API.
    span.set(attr::GEN_AI_PROVIDER_NAME, "openai");
    span.set(attr::GEN_AI_REQUEST_MODEL, model);
    span.set("kg.llm.stream", stream);
    if let Some(max) = request.max_tokens {
        span.set(attr::GEN_AI_REQUEST_MAX_TOKENS, max);
    }
    if let Some(t) = request.temperature {
        span.set(attr::GEN_AI_REQUEST_TEMPERATURE, f64::from(t));
    }
    if let Some((host, port)) = kg_url::Url::parse(base_url)
        .ok()
        .as_ref()
        .and_then(kg_url::server_address)
    {
        span.set(attr::SERVER_ADDRESS, host);
        if let Some(port) = port {
            span.set(attr::SERVER_PORT, port);
        }
    }
    if kg_telemetry::capture_content() {
        let body = request.body(model, stream);
        span.set(attr::GEN_AI_INPUT_MESSAGES, body["messages"].to_string());
    }
    span
}

/// Records the answer (or the failure) on the call's span.
pub(crate) fn finish(span: &mut ActiveSpan, result: &Result<ChatResponse, LlmError>) {
    if !span.is_recording() {
        return;
    }
    match result {
        Ok(answer) => {
            if let Some(model) = &answer.model {
                span.set(attr::GEN_AI_RESPONSE_MODEL, model.as_str());
            }
            if let Some(usage) = answer.usage {
                span.set(attr::GEN_AI_USAGE_INPUT_TOKENS, usage.prompt_tokens);
                span.set(attr::GEN_AI_USAGE_OUTPUT_TOKENS, usage.completion_tokens);
            }
            if let Some(reason) = &answer.finish_reason {
                span.set(attr::GEN_AI_RESPONSE_FINISH_REASONS, vec![reason.clone()]);
            }
            if kg_telemetry::capture_content() {
                let calls: Vec<_> = answer
                    .tool_calls
                    .iter()
                    .map(|c| json!({"id": c.id, "name": c.name, "arguments": c.arguments}))
                    .collect();
                let output =
                    json!([{"role": "assistant", "content": answer.content, "tool_calls": calls}]);
                span.set(attr::GEN_AI_OUTPUT_MESSAGES, output.to_string());
            }
        }
        Err(e) => {
            let kind = match e {
                LlmError::NotConfigured(_) => "not_configured".to_string(),
                LlmError::Unavailable { .. } => "unavailable".to_string(),
                LlmError::Timeout { .. } => "timeout".to_string(),
                LlmError::Upstream { status, .. } => status.to_string(),
                LlmError::BadResponse(_) => "bad_response".to_string(),
            };
            span.fail(&kind, &e.to_string());
        }
    }
}
