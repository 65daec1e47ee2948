//! An OpenAI-compatible Chat Completions client: `POST {base_url}/chat/completions` with
//! messages, tools, `tool_choice`, JSON mode, temperature and `max_tokens`, non-streaming
//! or streamed (SSE), with a deadline per call and retry with exponential backoff on
//! 429/5xx/timeouts/connection errors. No provider-specific fields: it works with OpenAI,
//! Azure OpenAI, Ollama, vLLM, llama.cpp server and LM Studio.
//!
//! HTTP goes through [`LlmTransport`] (neo4j-client's [`Transport`] plus an optional
//! per-attempt timeout), so components send through spin-sdk and tests through a script.

mod body;
mod client;
mod clock;
mod config;
mod error;
mod escape;
mod incremental;
mod message;
mod request;
mod response;
mod stream;
mod telemetry;
mod text_calls;
mod transport;
mod wire;

pub use client::{Chat, LlmClient};
pub use clock::{Clock, SystemClock};
pub use config::LlmConfig;
pub use error::LlmError;
pub use incremental::{BodyReader, Verdict};
pub use message::{Message, Role, ToolCall};
pub use neo4j_client::{
    HttpRequest, HttpResponse, Method, Transport, TransportError, TransportErrorKind,
};
pub use request::{ChatRequest, ResponseFormat, ToolChoice, ToolSpec, Tools};
pub use response::{ChatResponse, Usage, parse_chat_response};
pub use stream::{StreamEvent, StreamParser};
pub use text_calls::{
    Recovered, looks_like_tool_call, parse_lenient as lenient_json, recover_tool_calls,
};
pub use transport::LlmTransport;
