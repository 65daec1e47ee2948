//! Typed failures of a call, each saying whether trying again later may help.

/// Longest piece of an upstream error body kept in an error message.
pub const BODY_EXCERPT_CHARS: usize = 500;

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LlmError {
    /// No usable endpoint or model is configured.
    #[error("LLM not configured: {0}")]
    NotConfigured(String),
    /// The endpoint could not be reached (refused, DNS, denied by the host).
    #[error("LLM unavailable after {attempts} attempt(s): {message}")]
    Unavailable { message: String, attempts: u32 },
    /// The call's deadline passed.
    #[error("LLM call timed out after {attempts} attempt(s): {message}")]
    Timeout { message: String, attempts: u32 },
    /// The endpoint answered with an error status.
    #[error("LLM endpoint answered {status} after {attempts} attempt(s): {body}")]
    Upstream {
        status: u16,
        /// The start of the error body, at most [`BODY_EXCERPT_CHARS`] characters.
        body: String,
        attempts: u32,
    },
    /// The endpoint answered 200 with something that is not a chat completion.
    #[error("LLM answer malformed: {0}")]
    BadResponse(String),
}

impl LlmError {
    /// True when the same call may succeed later (transient trouble upstream).
    pub fn retryable(&self) -> bool {
        match self {
            LlmError::Unavailable { .. } | LlmError::Timeout { .. } => true,
            LlmError::Upstream { status, .. } => is_transient_status(*status),
            LlmError::NotConfigured(_) | LlmError::BadResponse(_) => false,
        }
    }

    pub(crate) fn upstream(status: u16, body: &[u8], attempts: u32) -> Self {
        LlmError::Upstream {
            status,
            body: excerpt(body),
            attempts,
        }
    }
}

/// 429 and 5xx: worth a retry. Any other 4xx means the request itself is wrong.
pub fn is_transient_status(status: u16) -> bool {
    status == 429 || (500..600).contains(&status)
}

pub(crate) fn excerpt(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    let mut cut: String = text.chars().take(BODY_EXCERPT_CHARS).collect();
    if text.chars().count() > BODY_EXCERPT_CHARS {
        cut.push('…');
    }
    cut
}
