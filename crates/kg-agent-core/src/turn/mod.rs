//! One chat turn: route the message, then answer directly, ask for clarification, run the
//! ReAct loop over the tools and synthesise, or plan an action — pausing for approval when
//! it must — and execute it with progress. Events go to the sink as they happen; the turn
//! is remembered in the key-value store. Everything outside goes through [`ports`], so the
//! dispatcher binds the turn to WIT and Spin and tests bind it to fakes.
//!
//! Once the sink says the client is gone, the turn starts no further LLM, tool or graph
//! call, records `cancelled` in the conversation, and ends with [`cancelled`]. Once the
//! turn's deadline has passed ([`deadline`]), the same checks stop it; it records
//! `deadline_exceeded` and ends with [`deadline::deadline_exceeded`].

mod act;
mod answer;
pub mod deadline;
pub mod ports;
pub mod reply_stream;
mod retracting;

pub use act::resolve;

use crate::approval::{self, Reply};
use crate::events::{Completion, Event, Outcome, RouteMethod};
use crate::memory::{self, Kv, Turn};
use crate::ownership;
use crate::react::{self, Limits};
use deadline::{Bounded, Deadline, deadline_exceeded};
use kg_http::ApiError;
use kg_http::chat::{ChatBody, RoutingMode};
use kg_wit::kg::router::router;
use kg_wit::kg::summariser::summariser;
use kg_wit::types::{Message as WitMessage, Role};
use llm_client::{ChatRequest, LlmError, Message};
use ports::{Actor, Ports, Stop, Toolset};
use retracting::Retracting;
use serde_json::{Value, json};

/// Turns the LLM sees verbatim; older ones only through the running summary.
pub const RECENT_TURNS: usize = 12;

/// The route a turn cut short by a departed client is remembered under.
pub const CANCELLED_ROUTE: &str = "cancelled";

/// The route a turn stopped by its deadline is remembered under.
pub const DEADLINE_ROUTE: &str = "deadline_exceeded";

pub struct Settings {
    pub max_steps: u32,
    /// How long the turn may reason (see [`deadline`]).
    pub deadline: Deadline,
}

/// What a turn produced, for the JSON answer.
#[derive(Debug, Clone)]
pub struct TurnResult {
    pub conversation_id: String,
    pub answer: String,
    pub route: Value,
    pub sources: Vec<Value>,
    pub actions: Option<Value>,
    pub approval: Option<Value>,
    pub prompt_tokens: u32,
    pub completion_tokens: u32,
    /// The LLM that wrote the answer (`None` when no LLM took part).
    pub model_used: Option<String>,
    /// Reasoning steps (LLM calls of the ReAct loop).
    pub steps: u32,
    /// A plan waits for approval.
    pub awaiting_approval: bool,
}

impl TurnResult {
    fn new(conversation_id: String) -> TurnResult {
        TurnResult {
            conversation_id,
            answer: String::new(),
            route: Value::Null,
            sources: Vec::new(),
            actions: None,
            approval: None,
            prompt_tokens: 0,
            completion_tokens: 0,
            model_used: None,
            steps: 0,
            awaiting_approval: false,
        }
    }

    /// The stream's `completed` event for this result.
    pub fn completion(&self) -> Completion {
        Completion {
            conversation_id: self.conversation_id.clone(),
            outcome: if self.awaiting_approval {
                Outcome::AwaitingApproval
            } else {
                Outcome::Answered
            },
            answer: self.answer.clone(),
            sources: self.sources.clone(),
            route: self.route.clone(),
            model_used: self.model_used.clone(),
            prompt_tokens: self.prompt_tokens,
            completion_tokens: self.completion_tokens,
            steps: self.steps,
            actions: self.actions.clone(),
            approval: self.approval.clone(),
        }
    }
}

/// The error a turn ends with when its client went away.
pub fn cancelled() -> ApiError {
    ApiError::new(499, "client_gone", "the client disconnected")
}

/// The error for why the turn stopped starting work.
fn stop_error(stop: Stop) -> ApiError {
    match stop {
        Stop::ClientGone => cancelled(),
        Stop::Deadline { deadline_ms, steps } => deadline_exceeded(deadline_ms, steps),
    }
}

/// The error a turn that must stop ends with: [`cancelled`] when its client left, the
/// deadline's error when it ran out of time.
fn stopped(p: &Ports) -> ApiError {
    stop_error(p.sink.stop().unwrap_or(Stop::ClientGone))
}

/// An LLM failure as the API reports it: which endpoint and model failed, and after how
/// many attempts (never the key).
pub fn llm_api_error(e: &LlmError, endpoint: Option<(String, String)>) -> ApiError {
    let (status, code, attempts) = match e {
        LlmError::NotConfigured(_) => (503, "llm_not_configured", 0),
        LlmError::Unavailable { attempts, .. } => (503, "llm_unavailable", *attempts),
        LlmError::Timeout { attempts, .. } => (504, "llm_timeout", *attempts),
        LlmError::Upstream { attempts, .. } => (502, "llm_upstream", *attempts),
        LlmError::BadResponse(_) => (502, "llm_upstream", 1),
    };
    let mut error = ApiError::new(status, code, e.to_string());
    let mut detail = json!({"attempts": attempts});
    if let Some((provider, model)) = endpoint {
        detail["provider"] = json!(provider);
        detail["model"] = json!(model);
    }
    error.detail = Some(detail);
    error
}

/// How the router's decision was made, as the seeds name it.
fn route_method(mode: router::RoutingMode) -> RouteMethod {
    match mode {
        router::RoutingMode::Rule => RouteMethod::Rule,
        router::RoutingMode::Llm => RouteMethod::Llm,
        router::RoutingMode::Hybrid => RouteMethod::Hybrid,
    }
}

/// A failure as a stream reports it: `code`, `message` and the error's detail fields.
fn failure_event(e: &ApiError) -> Event {
    let mut detail = match &e.detail {
        Some(Value::Object(map)) => map.clone(),
        Some(other) => {
            let mut map = serde_json::Map::new();
            map.insert("detail".into(), other.clone());
            map
        }
        None => serde_json::Map::new(),
    };
    detail.insert("status".into(), json!(e.status));
    Event::Failure {
        code: e.code.clone(),
        message: e.message.clone(),
        detail,
    }
}

pub fn kv_error(e: String) -> ApiError {
    ApiError::new(503, "unavailable", e)
}

/// Someone else's conversation is answered like one that does not exist.
pub fn no_conversation(id: &str) -> ApiError {
    ApiError::new(404, "not_found", format!("no conversation `{id}`"))
}

/// `conversation` may be used by `actor` (`start`: a turn may begin it).
pub fn authorize(
    kv: &dyn memory::Kv,
    conversation: &str,
    actor: &Actor,
    start: bool,
) -> Result<(), ApiError> {
    ownership::authorize(kv, conversation, &actor.caller.subject, actor.admin, start).map_err(|e| {
        match e {
            ownership::Refused::NotFound => no_conversation(conversation),
            ownership::Refused::Store(e) => kv_error(e),
        }
    })
}

fn chinese(text: &str) -> bool {
    text.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c))
}

/// A turn without a conversation id begins a conversation under a new id, which has
/// nothing stored yet: no turns, bookmarks or pending approval to read.
fn begins_conversation(body: &ChatBody) -> bool {
    body.conversation_id.is_none()
}

/// Runs one turn for `body`. What it remembers leaves in two batches
/// ([`memory::Journal`]): a new conversation's owner with the question, once the router
/// has classified it (from then on `GET /conversations/{id}` finds the conversation, as a
/// reader polling a running turn expects); the tool lines, the answer and the graph
/// bookmarks when the turn ends, however it ends. What other requests may need while it
/// runs (a pending approval, the stream kept for a resume) is written at once.
pub fn turn(
    body: &ChatBody,
    settings: &Settings,
    actor: &Actor,
    p: &mut Ports,
) -> Result<TurnResult, ApiError> {
    let journal = memory::Journal::new(p.kv);
    let mut journaled = Ports {
        kv: &journal,
        model: &mut *p.model,
        tools: &mut *p.tools,
        router: &mut *p.router,
        summariser: &mut *p.summariser,
        executor: &mut *p.executor,
        sink: &mut *p.sink,
        clock: p.clock,
        chain: &mut *p.chain,
    };
    let result = journaled_turn(body, settings, actor, &mut journaled);
    // Memory is best effort: a failed write must not fail the answer already given.
    if let Err(e) = journal.flush() {
        eprintln!("agent: could not remember a turn: {e}");
    }
    result
}

fn journaled_turn(
    body: &ChatBody,
    settings: &Settings,
    actor: &Actor,
    p: &mut Ports,
) -> Result<TurnResult, ApiError> {
    let conversation = match &body.conversation_id {
        Some(id) => {
            memory::check_id(id).map_err(ApiError::bad_request)?;
            authorize(p.kv, id, actor, true)?;
            id.clone()
        }
        None => {
            let id = p.clock.unique_id("c");
            ownership::claim_new(p.kv, &id, &actor.caller.subject).map_err(kv_error)?;
            id
        }
    };
    // The turn's graph reads wait for the conversation's earlier writes (on a cluster, a
    // follower may not have applied them yet), and its own writes are remembered for the
    // next turn, whatever the turn's outcome.
    let started = if begins_conversation(body) {
        Vec::new()
    } else {
        memory::load_bookmarks(p.kv, &conversation).map_err(kv_error)?
    };
    p.chain.resume(started.clone());
    let mut span = crate::telemetry::turn_span(&conversation);
    let (result, stop) = converse_bounded(conversation.clone(), body, settings, actor, p);
    // Whatever failed once the turn had to stop, the stop is what ended it.
    let result = match (result, stop) {
        (Err(_), Some(stop)) => Err(stop_error(stop)),
        (result, _) => result,
    };
    if let Err(e) = &result {
        span.fail(&e.code, &e.message);
    }
    drop(span);
    if let Err(e) = memory::save_bookmarks(p.kv, &conversation, &started, &p.chain.current()) {
        eprintln!("agent: could not remember the graph bookmarks of {conversation}: {e}");
    }
    match result {
        Ok(result) => {
            p.sink.emit(Event::Completed(Box::new(result.completion())));
            Ok(result)
        }
        // Out of time: say so in the conversation, and tell the client (a stream ends
        // `error`, `completed`, `done`; `/chat` answers 504).
        Err(e) if matches!(stop, Some(Stop::Deadline { .. })) => {
            remember(
                p,
                &conversation,
                "assistant",
                &format!("The turn was stopped: {}.", e.message),
                Some(DEADLINE_ROUTE),
            );
            if p.sink.streaming() {
                p.sink.emit(failure_event(&e));
                Ok(TurnResult::new(conversation))
            } else {
                Err(e)
            }
        }
        // Nobody is listening: say so in the conversation, and stop.
        Err(e) if p.sink.gone() => {
            remember(
                p,
                &conversation,
                "assistant",
                "The turn was cancelled: the client disconnected.",
                Some(CANCELLED_ROUTE),
            );
            Err(e)
        }
        // A stream reports its own failure, with what failed (which LLM endpoint, how
        // many attempts); the stream's end then carries `completed` (status `failed`).
        Err(e) if p.sink.streaming() => {
            p.sink.emit(failure_event(&e));
            Ok(TurnResult::new(conversation))
        }
        Err(e) => Err(e),
    }
}

/// The turn's work, seeing a sink that also stops it once its deadline has passed; and
/// why it had to stop, if it had to.
fn converse_bounded(
    conversation: String,
    body: &ChatBody,
    settings: &Settings,
    actor: &Actor,
    p: &mut Ports,
) -> (Result<TurnResult, ApiError>, Option<Stop>) {
    let mut retracting = Retracting::new(&mut *p.sink);
    let mut bounded = Bounded::new(&mut retracting, p.clock, settings.deadline);
    let mut bounded_ports = Ports {
        kv: p.kv,
        model: &mut *p.model,
        tools: &mut *p.tools,
        router: &mut *p.router,
        summariser: &mut *p.summariser,
        executor: &mut *p.executor,
        sink: &mut bounded,
        clock: p.clock,
        chain: &mut *p.chain,
    };
    let result = converse(conversation, body, settings, actor, &mut bounded_ports);
    (result, bounded_ports.sink.stop())
}

/// Fails once the client is gone or the deadline passed, so no further call starts.
fn check_listening(p: &Ports) -> Result<(), ApiError> {
    match p.sink.stop() {
        Some(stop) => Err(stop_error(stop)),
        None => Ok(()),
    }
}

/// The turn itself, for an authorised caller of `conversation`.
fn converse(
    conversation: String,
    body: &ChatBody,
    settings: &Settings,
    actor: &Actor,
    p: &mut Ports,
) -> Result<TurnResult, ApiError> {
    p.sink.emit(Event::ConversationId(conversation.clone()));
    let fresh = begins_conversation(body);
    let remembered = if fresh {
        memory::Window::default()
    } else {
        memory::load_window(p.kv, &conversation, RECENT_TURNS).map_err(kv_error)?
    };
    let mut result = TurnResult::new(conversation.clone());

    // A reply to a pending approval question resumes or cancels the plan.
    if !fresh && let Some(token) = approval::pending_token(p.kv, &conversation).map_err(kv_error)? {
        let reply = approval::classify_reply(&body.message);
        if reply != Reply::Other {
            remember(p, &conversation, "user", &body.message, Some("approval"));
            record_question(p);
            let mut resumed = resolve(&token, reply == Reply::Yes, Some(&conversation), actor, p)?;
            resumed.conversation_id = conversation;
            return Ok(resumed);
        }
    }

    let mode = match body.routing_mode {
        RoutingMode::Rule => router::RoutingMode::Rule,
        RoutingMode::Llm => router::RoutingMode::Llm,
        RoutingMode::Hybrid => router::RoutingMode::Hybrid,
    };
    p.sink.emit(Event::Thinking {
        node: "router".into(),
        display_name: "Analysing the request".into(),
        details: "intent routing".into(),
        sub_status: format!("routing mode {}", mode_name(mode)),
    });
    let mut history = wit_history(&remembered.recent);
    if let Some(summary) = &remembered.summary {
        history.insert(
            0,
            WitMessage {
                role: Role::System,
                content: format!("Summary of the earlier conversation:\n{summary}"),
                name: None,
            },
        );
    }
    check_listening(p)?;
    let decision = p.router.route(&router::RouteRequest {
        message: body.message.clone(),
        history: history.clone(),
        mode,
    });
    let (intent, question, clarification) = match decision {
        Ok(d) => {
            let intent = intent_name(d.intent);
            let method = route_method(d.method);
            result.route = json!({"intent": intent, "confidence": d.confidence, "method": method.as_str(), "reason": d.reason, "refined_question": d.refined_question, "warnings": d.warnings});
            p.sink.emit(Event::Route {
                intent: intent.into(),
                confidence: d.confidence,
                method,
                reason: d.reason.clone(),
                refined_question: d.refined_question.clone(),
            });
            let q = if d.refined_question.trim().is_empty() {
                body.message.clone()
            } else {
                d.refined_question
            };
            (intent, q, d.clarification)
        }
        Err(e) => {
            // No router: treat the message as a question, and say so.
            result.route = json!({"intent": "query", "confidence": 0.0, "method": RouteMethod::Fallback.as_str(), "reason": e.message});
            p.sink.emit(Event::Route {
                intent: "query".into(),
                confidence: 0.0,
                method: RouteMethod::Fallback,
                reason: format!("router failed ({}); answering as a question", e.message),
                refined_question: body.message.clone(),
            });
            ("query", body.message.clone(), None)
        }
    };
    remember(p, &conversation, "user", &body.message, Some(intent));
    record_question(p);
    check_listening(p)?;

    // The prompts' language: the question's, as the router and summariser choose theirs.
    let lang = kg_prompts::Lang::chinese_if(chinese(&body.message));
    match intent {
        "clarify" => {
            result.answer = match clarification {
                Some(question) => question,
                None => kg_prompts::load(kg_prompts::CLARIFICATION, lang)
                    .map_err(|e| react::prompt_error(&e))?
                    .render(&[]),
            };
            p.sink.emit(Event::ContentStart);
            p.sink.emit(Event::Content(result.answer.clone()));
        }
        "answer" => {
            p.model
                .ready()
                .map_err(|e| llm_api_error(&e, p.model.endpoint()))?;
            let system = react::direct_answer_prompt(lang).map_err(|e| react::prompt_error(&e))?;
            let mut messages = vec![Message::system(system)];
            messages.extend(history_messages(&remembered.recent));
            messages.push(Message::user(body.message.clone()));
            // A direct answer is one step: its LLM call nests under the step's span.
            let step_span =
                crate::telemetry::step_span(1, crate::telemetry::answer_prompt(lang).as_ref());
            let request = ChatRequest::new(messages).max_tokens(react::DIRECT_MAX_TOKENS);
            answer::answer_directly(&request, p, &mut result)?;
            drop(step_span);
        }
        _ => {
            // Only callers who may act are offered the action tools at all.
            let set = if intent == "action" && actor.may_act {
                Toolset::Action
            } else {
                Toolset::Query
            };
            p.model
                .ready()
                .map_err(|e| llm_api_error(&e, p.model.endpoint()))?;
            let system = react::system_prompt(set, lang).map_err(|e| react::prompt_error(&e))?;
            let mut messages = vec![Message::system(system)];
            if let Some(summary) = &remembered.summary {
                messages.push(Message::system(format!(
                    "Summary of the earlier conversation: {summary}"
                )));
            }
            messages.extend(history_messages(&remembered.recent));
            messages.push(Message::user(question.clone()));
            let specs = p.tools.specs(set);
            let outcome = react::run(
                messages,
                &specs,
                &mut *p.model,
                &mut *p.tools,
                &Limits {
                    max_steps: settings.max_steps,
                    prompt: crate::telemetry::react_prompt(set, lang),
                },
                &mut *p.sink,
            )
            .map_err(|e| llm_api_error(&e, p.model.endpoint()))?;
            result.prompt_tokens += outcome.usage.prompt_tokens;
            result.completion_tokens += outcome.usage.completion_tokens;
            result.steps = outcome.steps;
            result.model_used = Some(outcome.model.clone().unwrap_or_else(|| p.model.used()));
            // One remembered turn for all of this turn's tool results, a line each: one
            // key-value write instead of one per step (each write is a commit; about 45 µs
            // on devhost's SQLite, a network round trip on Redis or a cloud store).
            if !outcome.gathered.is_empty() {
                let lines: Vec<String> = outcome
                    .gathered
                    .iter()
                    .map(|g| format!("{}: {}", g.call.name, g.observation.summary))
                    .collect();
                remember(p, &conversation, "tool", &lines.join("\n"), None);
            }
            check_listening(p)?;
            let plan = p.tools.take_plan();
            let draft_is_answer = plan.is_none()
                && outcome.gathered.is_empty()
                && outcome
                    .answer
                    .as_deref()
                    .is_some_and(|d| !d.trim().is_empty());
            if outcome.answer_shown && !draft_is_answer {
                // The streamed step's text is not the answer (it was blank): the answer
                // written next replaces it.
                p.sink.retract_content();
            }
            if let Some(plan) = plan {
                act::plan_action(&conversation, &question, plan, actor, p, &mut result)?;
            } else if let Some(draft) = outcome.answer.as_deref().filter(|_| draft_is_answer) {
                // The LLM answered without needing a tool: nothing to ground or cite, so
                // its answer is the answer — one LLM round trip, not a second (summariser)
                // call before the first token.
                answer::give_draft(draft, outcome.answer_shown, p, &mut result);
            } else {
                let note = outcome.limit_reached.then(|| format!("The step limit ({}) was reached; answer from what was gathered and say so.", settings.max_steps));
                let mut evidence = answer::evidence_of(&outcome.gathered);
                if let Some(draft) = &outcome.answer {
                    evidence.push(summariser::Evidence {
                        source: "agent_draft".into(),
                        summary: "the reasoning model's draft answer".into(),
                        data: json!(draft).to_string(),
                    });
                }
                answer::synthesise(
                    answer::Synthesis {
                        question: &question,
                        history: &history,
                        evidence,
                        batch: None,
                        note,
                        draft: outcome.answer.as_deref(),
                    },
                    p,
                    &mut result,
                )?;
            }
        }
    }
    remember(p, &conversation, "assistant", &result.answer, None);
    Ok(result)
}

/// The seeds' lowercase name of a routed intent (events, traces).
pub fn intent_name(intent: router::Intent) -> &'static str {
    match intent {
        router::Intent::Query => "query",
        router::Intent::Action => "action",
        router::Intent::Document => "document",
        router::Intent::Answer => "answer",
        router::Intent::Clarify => "clarify",
    }
}

/// The lowercase name of a routing mode (events, traces).
pub fn mode_name(mode: router::RoutingMode) -> &'static str {
    match mode {
        router::RoutingMode::Rule => "rule",
        router::RoutingMode::Llm => "llm",
        router::RoutingMode::Hybrid => "hybrid",
    }
}

fn remember(p: &Ports, conversation: &str, role: &str, content: &str, route: Option<&str>) {
    let turn = Turn {
        role: role.into(),
        content: content.into(),
        name: None,
        at: p.clock.now(),
        route: route.map(str::to_string),
    };
    // Memory is best effort: a failed write must not fail the answer already given.
    if let Err(e) = memory::append(p.kv, conversation, turn) {
        eprintln!("agent: could not remember a turn of {conversation}: {e}");
    }
}

/// Writes the question (and a new conversation's owner) now, in one batch, rather than
/// with the answer: the turn may run for minutes, and its conversation must be found
/// meanwhile, and keep its question should the turn never end.
fn record_question(p: &Ports) {
    if let Err(e) = p.kv.flush() {
        eprintln!("agent: could not remember a question: {e}");
    }
}

fn wit_history(turns: &[Turn]) -> Vec<WitMessage> {
    let (_, recent) = memory::window(turns, RECENT_TURNS);
    recent
        .iter()
        .filter(|t| t.role != "tool")
        .map(|t| WitMessage {
            role: if t.role == "user" {
                Role::User
            } else {
                Role::Assistant
            },
            content: t.content.clone(),
            name: t.name.clone(),
        })
        .collect()
}

fn history_messages(turns: &[Turn]) -> Vec<Message> {
    let (_, recent) = memory::window(turns, RECENT_TURNS);
    recent
        .iter()
        .filter_map(|t| match t.role.as_str() {
            "user" => Some(Message::user(t.content.clone())),
            "assistant" => Some(Message::assistant(t.content.clone())),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests;
