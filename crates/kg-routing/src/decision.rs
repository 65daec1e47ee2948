//! What the router decides.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Intent {
    Query,
    Action,
    Document,
    Answer,
    Clarify,
}

impl Intent {
    pub fn as_str(self) -> &'static str {
        match self {
            Intent::Query => "query",
            Intent::Action => "action",
            Intent::Document => "document",
            Intent::Answer => "answer",
            Intent::Clarify => "clarify",
        }
    }
}

/// How the caller wants the message routed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Rule,
    Llm,
    Hybrid,
}

/// Which method produced the decision.
pub type Method = Mode;

#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    pub intent: Intent,
    /// 0.0 ..= 1.0
    pub confidence: f32,
    pub method: Method,
    pub reason: String,
    /// The message as a standalone question (the message itself when it already is one).
    pub refined_question: String,
    /// For `clarify`: the question to ask.
    pub clarification: Option<String>,
    pub warnings: Vec<String>,
}
