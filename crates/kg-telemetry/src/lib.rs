//! OpenTelemetry traces for components that live for one request and run on one thread.
//!
//! The OpenTelemetry SDK assumes a process that outlives its requests (a batch processor
//! on a background thread, a global provider); a Spin component instance has neither. So
//! this crate keeps what the SDK would: span ids and W3C trace context
//! ([`context`]), the ratio sampler ([`sampler`]), a recorder that holds the instance's
//! current span and its finished spans ([`recorder`]), and the OTLP/HTTP JSON encoding of
//! them ([`otlp`]). Sending is the host adapter's job (kg-spin).
//!
//! Attribute names follow the OpenTelemetry semantic conventions (GenAI, database,
//! HTTP); [`attr`] lists the ones used here so the crates that record spans agree.

pub mod attr;
pub mod context;
pub mod ids;
pub mod otlp;
pub mod recorder;
pub mod sampler;
pub mod span;

pub use context::{TraceParent, parse_tracestate};
pub use ids::{SpanId, TraceId};
pub use recorder::{
    ActiveSpan, Settings, absorb, adopt, begin, capture_content, capture_statements,
    continues_caller, current_traceparent, current_tracestate, is_recording, reset, span,
    span_detached, take_absorbed, take_finished, trace_id,
};
pub use span::{SpanData, SpanKind, Status, Value};
