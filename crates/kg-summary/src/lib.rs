//! Answer synthesis (seed 000 §11): the prompt from question, history, evidence and batch
//! report; the answer's language; citations of ids that occur in the evidence only; and a
//! deterministic batch report for when the LLM is unavailable.

mod batch_report;
mod citations;
mod language;
mod prompt;
mod synthesis;

pub use batch_report::batch_report;
pub use citations::{Citation, cite, known_references};
pub use language::{Language, detect_language};
pub use prompt::{summary_request, summary_request_with};
pub use synthesis::{
    Evidence, Summary, SummaryCall, SummaryInput, answer_language, conclude, prepare, summarise,
    summarise_with,
};
