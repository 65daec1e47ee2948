//! What the client needs to know about the endpoint.

use crate::error::LlmError;
use std::time::Duration;

/// Retries after the first attempt never exceed this (seed 002: "retry up to 2 times").
pub const MAX_RETRIES: u32 = 2;

#[derive(Debug, Clone, PartialEq)]
pub struct LlmConfig {
    /// `origin + base_path`, e.g. `http://127.0.0.1:11434/v1`; `/chat/completions` is appended.
    pub base_url: String,
    pub model: String,
    /// Sent as `Authorization: Bearer …` when non-empty.
    pub api_key: Option<String>,
    /// Deadline of one call, every attempt and backoff included.
    pub timeout: Duration,
    /// Retries after the first attempt; capped at [`MAX_RETRIES`].
    pub max_retries: u32,
    /// First backoff; doubles with each retry.
    pub backoff_base: Duration,
    /// Each backoff is drawn between half of it and all of it, so that clients that
    /// failed together do not retry together (a server's `Retry-After` is kept as given).
    pub jitter: bool,
}

impl LlmConfig {
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> Self {
        LlmConfig {
            base_url: base_url.into(),
            model: model.into(),
            api_key: None,
            timeout: Duration::from_secs(60),
            max_retries: MAX_RETRIES,
            backoff_base: Duration::from_millis(250),
            jitter: true,
        }
    }

    /// Refuses a configuration that cannot make a call, naming what is missing.
    pub fn validate(&self) -> Result<(), LlmError> {
        let base = self.base_url.trim();
        if base.is_empty() {
            return Err(LlmError::NotConfigured("the LLM base URL is empty".into()));
        }
        kg_url::http_base("llm_origin + llm_base_path", base)
            .map_err(|e| LlmError::NotConfigured(e.to_string()))?;
        if self.model.trim().is_empty() {
            return Err(LlmError::NotConfigured(
                "the LLM model name is empty".into(),
            ));
        }
        Ok(())
    }

    pub fn completions_url(&self) -> String {
        format!(
            "{}/chat/completions",
            self.base_url.trim().trim_end_matches('/')
        )
    }
}
