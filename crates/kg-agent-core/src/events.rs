//! The agent's event vocabulary (DESIGN.md §3, seed 000 §6.1, seed 001 progress fields),
//! defined once: the SSE stream sends these, the JSON answer collects them as steps.

use serde_json::{Value, json};

#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    ConversationId(String),
    /// Progress of a node (seed 001): which node, a display name, details.
    Thinking {
        node: String,
        display_name: String,
        details: String,
    },
    Route {
        intent: String,
        confidence: f32,
        method: String,
        reason: String,
        refined_question: String,
    },
    ToolCall {
        step: u32,
        id: String,
        name: String,
        arguments: Value,
    },
    ToolResult {
        step: u32,
        id: String,
        name: String,
        ok: bool,
        summary: String,
    },
    GraphData(Value),
    ActionPlan(Value),
    ApprovalRequired {
        token: String,
        reason: String,
        plan: Value,
    },
    ActionProgress(Value),
    ActionError(Value),
    ActionComplete(Value),
    ContentStart,
    Content(String),
    Trace(Value),
    Error {
        code: String,
        message: String,
    },
    Done,
}

impl Event {
    /// The event's `type` and its JSON payload.
    pub fn encode(&self) -> (&'static str, Value) {
        match self {
            Event::ConversationId(id) => ("conversation_id", json!({"id": id})),
            Event::Thinking {
                node,
                display_name,
                details,
            } => (
                "thinking",
                json!({"node": node, "display_name": display_name, "details": details, "content": display_name}),
            ),
            Event::Route {
                intent,
                confidence,
                method,
                reason,
                refined_question,
            } => (
                "route",
                json!({"intent": intent, "confidence": confidence, "method": method, "reason": reason, "refined_question": refined_question}),
            ),
            Event::ToolCall {
                step,
                id,
                name,
                arguments,
            } => (
                "tool_call",
                json!({"step": step, "id": id, "tool": name, "arguments": arguments}),
            ),
            Event::ToolResult {
                step,
                id,
                name,
                ok,
                summary,
            } => (
                "tool_result",
                json!({"step": step, "id": id, "tool": name, "success": ok, "summary": summary}),
            ),
            Event::GraphData(g) => ("graph_data", g.clone()),
            Event::ActionPlan(plan) => ("action_plan", json!({"plan": plan})),
            Event::ApprovalRequired {
                token,
                reason,
                plan,
            } => (
                "approval_required",
                json!({"approval_token": token, "reason": reason, "plan": plan}),
            ),
            Event::ActionProgress(p) => ("action_progress", p.clone()),
            Event::ActionError(e) => ("action_error", e.clone()),
            Event::ActionComplete(r) => ("action_complete", json!({"results": r})),
            Event::ContentStart => ("content_start", json!({})),
            Event::Content(text) => ("content", json!({"content": text})),
            Event::Trace(t) => ("trace", t.clone()),
            Event::Error { code, message } => ("error", json!({"code": code, "message": message})),
            Event::Done => ("done", json!({})),
        }
    }
}
