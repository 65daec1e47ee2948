//! The summariser component: binds `kg:agent/summariser`. Synthesis arrives with issue #6.

use kg_wit::types::{ComponentStatus, Error};

wit_bindgen::generate!({
    path: "../../wit",
    world: "summariser-component",
    with: { "kg:agent/types@0.1.0": kg_wit::types },
});

use exports::kg::agent::summariser::{
    Answer, AnswerStream, Guest, GuestAnswerStream, StreamPoll, SummaryRequest,
};

struct Summariser;

/// Never constructed until streaming synthesis exists; `start` refuses first.
struct PendingStream;

impl GuestAnswerStream for PendingStream {
    fn next(&self, _wait_ms: u32) -> Result<StreamPoll, Error> {
        Err(Error::not_implemented("streamed synthesis", 6))
    }
}

impl Guest for Summariser {
    type AnswerStream = PendingStream;

    fn status() -> ComponentStatus {
        kg_spin::status(
            "summariser",
            env!("CARGO_PKG_VERSION"),
            vec![
                kg_spin::configuration_check(kg_spin::LLM_VARIABLES),
                kg_spin::pending_check("answer synthesis", 6),
            ],
        )
    }

    fn summarise(_request: SummaryRequest) -> Result<Answer, Error> {
        Err(Error::not_implemented("answer synthesis", 6))
    }

    fn start(_request: SummaryRequest) -> Result<AnswerStream, Error> {
        Err(Error::not_implemented("streamed synthesis", 6))
    }
}

export!(Summariser);
