//! Is the LLM there? `GET {base_url}/models`: every OpenAI-compatible server (OpenAI,
//! Ollama, vLLM, llama.cpp, LM Studio) answers it without generating anything, and a
//! wrong API key shows as 401. Used by `/health/ready`, which caches the outcome.

use crate::llm::{llm_config, within};
use crate::neo4j::send_async;
use llm_client::{HttpRequest, Method};
use std::time::Duration;

/// A probe gives up after this long: a readiness answer must come quickly.
pub const LLM_PROBE_TIMEOUT: Duration = Duration::from_secs(5);

/// The URL a probe asks: `{base_url}/models`.
pub fn llm_models_url() -> Result<String, String> {
    let config = llm_config().map_err(|e| e.to_string())?;
    Ok(format!(
        "{}/models",
        config.base_url.trim().trim_end_matches('/')
    ))
}

/// `Ok(())` when the LLM answered 2xx, else why not (the status and the start of the body,
/// or the transport's reason).
pub fn llm_probe() -> Result<(), String> {
    let config = llm_config().map_err(|e| e.to_string())?;
    let mut headers = vec![("accept".to_string(), "application/json".to_string())];
    if let Some(key) = config.api_key.as_deref().filter(|k| !k.is_empty()) {
        headers.push(("authorization".to_string(), format!("Bearer {key}")));
    }
    let url = llm_models_url()?;
    let request = HttpRequest {
        method: Method::Get,
        url: url.clone(),
        headers,
        body: None,
    };
    let millis = LLM_PROBE_TIMEOUT.as_millis();
    match spin_sdk::http::run(within(LLM_PROBE_TIMEOUT, send_async(request))) {
        None => Err(format!("GET {url}: no answer within {millis} ms")),
        Some(Err(e)) => Err(format!("GET {url}: {}", e.message)),
        Some(Ok(response)) if (200..300).contains(&response.status) => Ok(()),
        Some(Ok(response)) => {
            let body = String::from_utf8_lossy(&response.body);
            let start: String = body.chars().take(200).collect();
            Err(format!("GET {url} answered {}: {start}", response.status))
        }
    }
}
