//! The agent's event vocabulary (DESIGN.md §3, seed 000 §6.1, seed 001 progress fields),
//! defined once: the SSE stream sends these, the JSON answer collects them as steps.
//! `docs/events.schema.json` is the contract of what [`Event::encode`] and
//! [`StreamState::frames`] produce; enumerations are the seeds' lowercase strings.

use serde_json::{Map, Value, json};

/// How the route was decided (seed 002 / seed 001 `classification_method`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RouteMethod {
    Rule,
    Llm,
    Hybrid,
    Keyword,
    /// The router failed; the message was treated as a question.
    Fallback,
    /// A reply to (or a decision on) a pending approval.
    Approval,
}

impl RouteMethod {
    pub const ALL: [RouteMethod; 6] = [
        RouteMethod::Rule,
        RouteMethod::Llm,
        RouteMethod::Hybrid,
        RouteMethod::Keyword,
        RouteMethod::Fallback,
        RouteMethod::Approval,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            RouteMethod::Rule => "rule",
            RouteMethod::Llm => "llm",
            RouteMethod::Hybrid => "hybrid",
            RouteMethod::Keyword => "keyword",
            RouteMethod::Fallback => "fallback",
            RouteMethod::Approval => "approval",
        }
    }
}

/// The intents the router knows (seed 002).
pub const INTENTS: [&str; 5] = ["query", "action", "document", "answer", "clarify"];

/// A progress node's status (seed 001).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Running,
    Completed,
    Failed,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Running => "running",
            Status::Completed => "completed",
            Status::Failed => "failed",
        }
    }
}

/// How a turn ended, in `completed`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Answered (an action plan that ran counts as answered).
    Answered,
    /// A plan waits for a person's approval.
    AwaitingApproval,
    /// An `error` event came before.
    Failed,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Answered => "answered",
            Outcome::AwaitingApproval => "awaiting_approval",
            Outcome::Failed => "failed",
        }
    }
}

/// The turn's final record: what a client that missed deltas needs to show the answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Completion {
    pub conversation_id: String,
    pub outcome: Outcome,
    pub answer: String,
    /// Citations, as `/chat`'s `sources`.
    pub sources: Vec<Value>,
    pub route: Value,
    pub model_used: Option<String>,
    pub prompt_tokens: u32,
    pub completion_tokens: u32,
    /// Reasoning steps (LLM calls of the ReAct loop).
    pub steps: u32,
    pub actions: Option<Value>,
    pub approval: Option<Value>,
}

impl Completion {
    pub fn json(&self) -> Value {
        json!({
            "conversation_id": self.conversation_id,
            "status": self.outcome.as_str(),
            "answer": self.answer,
            "sources": self.sources,
            "citations": self.sources,
            "route": self.route,
            "model_used": self.model_used,
            "usage": usage_json(self.prompt_tokens, self.completion_tokens),
            "steps": self.steps,
            "actions": self.actions,
            "approval": self.approval,
            // The request's trace (the recorder is the instance's), so a user's report
            // can be found in the trace store; null outside a trace.
            "trace_id": kg_telemetry::trace_id().map(|id| id.to_string()),
        })
    }
}

pub fn usage_json(prompt_tokens: u32, completion_tokens: u32) -> Value {
    json!({
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": u64::from(prompt_tokens) + u64::from(completion_tokens),
    })
}

/// The icon seed 001 shows next to a node's progress.
pub fn icon(node: &str) -> &'static str {
    match node {
        "router" => "🤔",
        "agent" => "🔧",
        "summariser" => "📝",
        "executor" => "⚙️",
        _ => "💭",
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    ConversationId(String),
    /// Progress of a node (seed 001): which node, a display name, details, a second line.
    Thinking {
        node: String,
        display_name: String,
        details: String,
        sub_status: String,
    },
    Route {
        intent: String,
        confidence: f32,
        method: RouteMethod,
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
        /// How long the tool took (seed 002 property 21).
        latency_ms: f64,
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
    /// A `content_start` that also says to discard the content shown so far in the turn
    /// (it was a ReAct step's text that turned out not to be the answer).
    ContentReset,
    Content(String),
    Trace(Value),
    Error {
        code: String,
        message: String,
    },
    /// An `error` with what a client needs to say which dependency failed: `detail`'s
    /// fields (`provider`, `attempts`, …) go next to `code` and `message`.
    Failure {
        code: String,
        message: String,
        detail: Map<String, Value>,
    },
    /// The turn's end: the whole answer and its metadata, just before `done`.
    Completed(Box<Completion>),
    Done,
}

/// One reasoning step as the trace records it (seed 002 property 21).
pub fn step_trace(step: u32, latency_ms: f64, prompt: u32, completion: u32, calls: usize) -> Event {
    Event::Trace(json!({
        "kind": "step",
        "node": "agent",
        "step": step,
        "latency_ms": latency_ms,
        "usage": usage_json(prompt, completion),
        "tool_calls": calls,
    }))
}

/// Milliseconds since `start`, never 0 (a step always took some time).
pub fn millis_since(start: std::time::Instant) -> f64 {
    let micros = start.elapsed().as_micros().max(1);
    micros as f64 / 1000.0
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
                sub_status,
            } => (
                "thinking",
                json!({"node": node, "display_name": display_name, "details": details, "content": display_name,
                       "icon": icon(node), "status": Status::Running.as_str(), "sub_status": sub_status}),
            ),
            Event::Route {
                intent,
                confidence,
                method,
                reason,
                refined_question,
            } => (
                "route",
                json!({"intent": intent, "confidence": confidence, "method": method.as_str(), "reason": reason, "refined_question": refined_question}),
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
                latency_ms,
            } => (
                "tool_result",
                json!({"step": step, "id": id, "tool": name, "success": ok, "summary": summary, "latency_ms": latency_ms}),
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
            Event::ContentReset => ("content_start", json!({"reset": true})),
            Event::Content(text) => ("content", json!({"content": text})),
            Event::Trace(t) => ("trace", t.clone()),
            Event::Error { code, message } => ("error", json!({"code": code, "message": message})),
            Event::Failure {
                code,
                message,
                detail,
            } => {
                let mut data = detail.clone();
                data.insert("code".into(), json!(code));
                data.insert("message".into(), json!(message));
                ("error", Value::Object(data))
            }
            Event::Completed(c) => ("completed", c.json()),
            Event::Done => ("done", json!({})),
        }
    }
}

/// What a stream has said so far, to stamp each event with seed 001's envelope
/// (`timestamp` on every event; `state_summary` on progress events) and to make sure the
/// stream ends with `completed` then `done` whatever happened.
#[derive(Debug, Default)]
pub struct StreamState {
    conversation_id: String,
    path: Vec<String>,
    answer: String,
    route: Value,
    routing_method: Option<&'static str>,
    steps: u32,
    failed: bool,
    completed: bool,
    ended: bool,
}

impl StreamState {
    /// The frames (`type`, payload) to send for `event`, stamped with `timestamp`
    /// (RFC 3339). A `done` that no `completed` preceded gets one first, built from what
    /// the stream carried; a second `completed` or anything after `done` is dropped.
    pub fn frames(&mut self, event: &Event, timestamp: &str) -> Vec<(&'static str, Value)> {
        let mut frames = Vec::new();
        match event {
            Event::Done => {
                if !self.completed {
                    let fallback = Event::Completed(Box::new(self.fallback_completion()));
                    frames.extend(self.frames(&fallback, timestamp));
                }
            }
            Event::Completed(_) if self.completed => return frames,
            _ => {}
        }
        if self.ended {
            return Vec::new();
        }
        self.observe(event);
        let (kind, mut data) = event.encode();
        if let Value::Object(map) = &mut data {
            map.insert("timestamp".into(), json!(timestamp));
            if let Event::Thinking { node, .. } = event {
                map.insert("state_summary".into(), self.summary(node));
            }
        }
        frames.push((kind, data));
        frames
    }

    fn observe(&mut self, event: &Event) {
        match event {
            Event::ConversationId(id) => self.conversation_id = id.clone(),
            Event::Thinking { node, .. } => {
                if self.path.last() != Some(node) {
                    self.path.push(node.clone());
                }
            }
            Event::Route { method, .. } => {
                self.routing_method = Some(method.as_str());
                self.route = event.encode().1;
            }
            Event::ToolCall { step, .. } => self.steps = self.steps.max(*step),
            Event::Content(text) => self.answer.push_str(text),
            Event::ContentReset => self.answer.clear(),
            Event::Error { .. } | Event::Failure { .. } => self.failed = true,
            Event::Completed(_) => self.completed = true,
            Event::Done => self.ended = true,
            _ => {}
        }
    }

    fn summary(&self, node: &str) -> Value {
        let mut summary = json!({
            "current_step": node,
            "execution_path": self.path,
        });
        if let Some(method) = self.routing_method {
            summary["routing_method"] = json!(method);
        }
        summary
    }

    fn fallback_completion(&self) -> Completion {
        Completion {
            conversation_id: self.conversation_id.clone(),
            outcome: if self.failed {
                Outcome::Failed
            } else {
                Outcome::Answered
            },
            answer: self.answer.clone(),
            sources: Vec::new(),
            route: self.route.clone(),
            model_used: None,
            prompt_tokens: 0,
            completion_tokens: 0,
            steps: self.steps,
            actions: None,
            approval: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn route_methods_are_the_seeds_lowercase_names() {
        let names: Vec<&str> = RouteMethod::ALL.iter().map(|m| m.as_str()).collect();
        assert_eq!(
            names,
            ["rule", "llm", "hybrid", "keyword", "fallback", "approval"]
        );
        let (kind, data) = Event::Route {
            intent: "query".into(),
            confidence: 0.9,
            method: RouteMethod::Rule,
            reason: "r".into(),
            refined_question: "q".into(),
        }
        .encode();
        assert_eq!(kind, "route");
        assert_eq!(data["method"], "rule");
        assert!(!data["method"].as_str().unwrap_or_default().contains("::"));
    }

    #[test]
    fn thinking_carries_seed_001_envelope() {
        let mut state = StreamState::default();
        state.frames(&Event::ConversationId("c1".into()), "t0");
        let frames = state.frames(
            &Event::Thinking {
                node: "router".into(),
                display_name: "Analysing".into(),
                details: "d".into(),
                sub_status: "s".into(),
            },
            "2025-01-31T10:30:05Z",
        );
        let (kind, data) = &frames[0];
        assert_eq!(*kind, "thinking");
        for field in [
            "node",
            "display_name",
            "icon",
            "status",
            "sub_status",
            "details",
            "timestamp",
            "state_summary",
        ] {
            assert!(data.get(field).is_some(), "{field} missing: {data}");
        }
        assert_eq!(data["status"], "running");
        assert_eq!(data["icon"], "🤔");
        assert_eq!(data["state_summary"]["execution_path"], json!(["router"]));
        assert_eq!(data["timestamp"], "2025-01-31T10:30:05Z");
    }

    #[test]
    fn a_stream_without_completed_gets_one_before_done_and_nothing_after() {
        let mut state = StreamState::default();
        let mut kinds = Vec::new();
        let mut last = Value::Null;
        for e in [
            Event::ConversationId("c1".into()),
            Event::ContentStart,
            Event::Content("Hel".into()),
            Event::Content("lo".into()),
            Event::Failure {
                code: "llm_unavailable".into(),
                message: "down".into(),
                detail: json!({"provider": "p", "attempts": 3})
                    .as_object()
                    .cloned()
                    .unwrap_or_default(),
            },
            Event::Done,
            Event::Content("late".into()),
            Event::Done,
        ] {
            for (kind, data) in state.frames(&e, "t") {
                kinds.push(kind);
                if kind == "completed" {
                    last = data;
                }
            }
        }
        assert_eq!(
            kinds,
            [
                "conversation_id",
                "content_start",
                "content",
                "content",
                "error",
                "completed",
                "done"
            ]
        );
        assert_eq!(last["answer"], "Hello");
        assert_eq!(last["status"], "failed");
        assert_eq!(last["conversation_id"], "c1");
    }

    #[test]
    fn an_explicit_completed_is_kept_and_not_repeated() {
        let mut state = StreamState::default();
        let completion = Completion {
            conversation_id: "c".into(),
            outcome: Outcome::Answered,
            answer: "a".into(),
            sources: vec![json!({"reference": "SUP-001"})],
            route: json!({"method": "rule"}),
            model_used: Some("m".into()),
            prompt_tokens: 10,
            completion_tokens: 5,
            steps: 2,
            actions: None,
            approval: None,
        };
        let mut kinds = Vec::new();
        for e in [
            Event::Completed(Box::new(completion.clone())),
            Event::Completed(Box::new(completion)),
            Event::Done,
        ] {
            for (kind, data) in state.frames(&e, "t") {
                if kind == "completed" {
                    assert_eq!(data["usage"]["total_tokens"], 15);
                    assert_eq!(data["model_used"], "m");
                    assert_eq!(data["steps"], 2);
                }
                kinds.push(kind);
            }
        }
        assert_eq!(kinds, ["completed", "done"]);
    }

    #[test]
    fn failure_details_sit_next_to_code_and_message() {
        let (kind, data) = Event::Failure {
            code: "llm_unavailable".into(),
            message: "m".into(),
            detail: json!({"provider": "http://x", "attempts": 3})
                .as_object()
                .cloned()
                .unwrap_or_default(),
        }
        .encode();
        assert_eq!(kind, "error");
        assert_eq!(
            data,
            json!({"code": "llm_unavailable", "message": "m", "provider": "http://x", "attempts": 3})
        );
    }
}
