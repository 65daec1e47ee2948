//! One chat turn: route the message, then answer directly, ask for clarification, run the
//! ReAct loop over the tools and synthesise, or plan an action — pausing for approval when
//! it must — and execute it with progress. Events go to the sink as they happen; the turn
//! is remembered in the key-value store.

use super::kv::SpinKv;
use super::model::LlmModel;
use super::sink::EventSink;
use super::tools::{AgentTools, Toolset, entity_names, specs};
use crate::identity::Principal;
use kg_agent_core::approval::{self, ActionPlan, Pending, Reply};
use kg_agent_core::events::{Completion, Event, Outcome, RouteMethod};
use kg_agent_core::memory::{self, Turn};
use kg_agent_core::ownership;
use kg_agent_core::react::{self, Gathered, Limits, Model};
use kg_http::ApiError;
use kg_http::actions::{outcome_json, summary_json};
use kg_http::chat::{ChatBody, RoutingMode};
use kg_identity::Permission;
use kg_wit::kg::action_executor::action_executor::{self as executor, BatchPoll, ExecutionRequest};
use kg_wit::kg::{router::router, summariser::summariser};
use kg_wit::types::{BatchSummary, Message as WitMessage, Role};
use llm_client::{ChatRequest, LlmError, Message};
use serde_json::{Value, json};
use std::collections::HashMap;

/// Turns the LLM sees verbatim; older ones only through the running summary.
const RECENT_TURNS: usize = 12;

pub struct Settings {
    pub max_steps: u32,
}

/// What a turn produced, for the JSON answer.
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

pub fn llm_api_error(e: &LlmError) -> ApiError {
    let (status, code, attempts) = match e {
        LlmError::NotConfigured(_) => (503, "llm_not_configured", 0),
        LlmError::Unavailable { attempts, .. } => (503, "llm_unavailable", *attempts),
        LlmError::Timeout { attempts, .. } => (504, "llm_timeout", *attempts),
        LlmError::Upstream { attempts, .. } => (502, "llm_upstream", *attempts),
        LlmError::BadResponse(_) => (502, "llm_upstream", 1),
    };
    let mut error = ApiError::new(status, code, e.to_string());
    // Which endpoint and model failed, and after how many attempts (never the key).
    let mut detail = json!({"attempts": attempts});
    if let Ok(config) = kg_spin::llm_config() {
        detail["provider"] = json!(config.base_url);
        detail["model"] = json!(config.model);
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

fn kv_error(e: String) -> ApiError {
    ApiError::new(503, "unavailable", e)
}

/// Someone else's conversation is answered like one that does not exist.
pub fn no_conversation(id: &str) -> ApiError {
    ApiError::new(404, "not_found", format!("no conversation `{id}`"))
}

/// `conversation` may be used by `who` (`start`: a turn may begin it).
pub fn authorize(
    kv: &SpinKv,
    conversation: &str,
    who: &Principal,
    start: bool,
) -> Result<(), ApiError> {
    let admin = who.may(Permission::ConversationsAll);
    ownership::authorize(kv, conversation, &who.caller.subject, admin, start).map_err(|e| match e {
        ownership::Refused::NotFound => no_conversation(conversation),
        ownership::Refused::Store(e) => kv_error(e),
    })
}

fn now() -> String {
    kg_spin::clock::now_rfc3339()
}

fn chinese(text: &str) -> bool {
    text.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c))
}

/// Runs one turn for `body`.
pub fn turn(
    body: &ChatBody,
    settings: &Settings,
    who: &Principal,
    sink: &mut dyn EventSink,
) -> Result<TurnResult, ApiError> {
    let kv = SpinKv::open().map_err(kv_error)?;
    let conversation = match &body.conversation_id {
        Some(id) => {
            memory::check_id(id).map_err(ApiError::bad_request)?;
            id.clone()
        }
        None => kg_spin::clock::unique_id("c"),
    };
    authorize(&kv, &conversation, who, true)?;
    // The turn's graph reads wait for the conversation's earlier writes (on a cluster, a
    // follower may not have applied them yet), and its own writes are remembered for the
    // next turn, whatever the turn's outcome.
    let started = memory::load_bookmarks(&kv, &conversation).map_err(kv_error)?;
    crate::causal::resume(started.clone());
    let result = converse(&kv, conversation.clone(), body, settings, who, sink);
    if let Err(e) = memory::save_bookmarks(&kv, &conversation, &started, &crate::causal::current())
    {
        eprintln!("dispatcher: could not remember the graph bookmarks of {conversation}: {e}");
    }
    match result {
        Ok(result) => {
            sink.emit(Event::Completed(Box::new(result.completion())));
            Ok(result)
        }
        // A stream reports its own failure, with what failed (which LLM endpoint, how
        // many attempts); the stream's end then carries `completed` (status `failed`).
        Err(e) if sink.streaming() => {
            sink.emit(failure_event(&e));
            Ok(TurnResult::new(conversation))
        }
        Err(e) => Err(e),
    }
}

/// The turn itself, for an authorised caller of `conversation`.
fn converse(
    kv: &SpinKv,
    conversation: String,
    body: &ChatBody,
    settings: &Settings,
    who: &Principal,
    sink: &mut dyn EventSink,
) -> Result<TurnResult, ApiError> {
    sink.emit(Event::ConversationId(conversation.clone()));
    let remembered = memory::load_window(kv, &conversation, RECENT_TURNS).map_err(kv_error)?;
    let mut result = TurnResult::new(conversation.clone());

    // A reply to a pending approval question resumes or cancels the plan.
    if let Some(token) = approval::pending_token(kv, &conversation).map_err(kv_error)? {
        match approval::classify_reply(&body.message) {
            Reply::Yes | Reply::No => {
                let approve = approval::classify_reply(&body.message) == Reply::Yes;
                remember(kv, &conversation, "user", &body.message, Some("approval"));
                let mut resumed = resolve(&token, approve, Some(&conversation), who, sink)?;
                resumed.conversation_id = conversation;
                return Ok(resumed);
            }
            Reply::Other => {}
        }
    }

    sink.emit(Event::Thinking {
        node: "router".into(),
        display_name: "Analysing the request".into(),
        details: "intent routing".into(),
        sub_status: format!(
            "routing mode {}",
            match body.routing_mode {
                RoutingMode::Rule => "rule",
                RoutingMode::Llm => "llm",
                RoutingMode::Hybrid => "hybrid",
            }
        ),
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
    let mode = match body.routing_mode {
        RoutingMode::Rule => router::RoutingMode::Rule,
        RoutingMode::Llm => router::RoutingMode::Llm,
        RoutingMode::Hybrid => router::RoutingMode::Hybrid,
    };
    let decision = router::route(&router::RouteRequest {
        message: body.message.clone(),
        history: history.clone(),
        mode,
    });
    let (intent, question, clarification) = match decision {
        Ok(d) => {
            let intent = intent_name(d.intent);
            let method = route_method(d.method);
            result.route = json!({"intent": intent, "confidence": d.confidence, "method": method.as_str(), "reason": d.reason, "refined_question": d.refined_question, "warnings": d.warnings});
            sink.emit(Event::Route {
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
            sink.emit(Event::Route {
                intent: "query".into(),
                confidence: 0.0,
                method: RouteMethod::Fallback,
                reason: format!("router failed ({}); answering as a question", e.message),
                refined_question: body.message.clone(),
            });
            ("query", body.message.clone(), None)
        }
    };
    remember(kv, &conversation, "user", &body.message, Some(intent));

    match intent {
        "clarify" => {
            result.answer = clarification.unwrap_or_else(|| {
                if chinese(&body.message) {
                    "能再具体说明一下您想查询或执行什么吗？".into()
                } else {
                    "Could you say more precisely what you want to know or do?".into()
                }
            });
            sink.emit(Event::ContentStart);
            sink.emit(Event::Content(result.answer.clone()));
        }
        "answer" => {
            let mut model = model(sink)?;
            let mut messages = vec![Message::system(
                "You are kg-agent, a helpful assistant for a procurement knowledge graph (suppliers, products, purchase orders, invoices, payments). Reply briefly and in the user's language. Do not invent data.",
            )];
            messages.extend(history_messages(&remembered.recent));
            messages.push(Message::user(body.message.clone()));
            let response = model
                .complete(&ChatRequest::new(messages))
                .map_err(|e| llm_api_error(&e))?;
            add_usage(&mut result, response.usage);
            result.model_used = Some(model.used());
            result.answer = response.content;
            sink.emit(Event::ContentStart);
            sink.emit(Event::Content(result.answer.clone()));
        }
        _ => {
            // Only callers who may act are offered the action tools at all.
            let may_act = who.may(Permission::ActionsExecute);
            let set = if intent == "action" && may_act {
                Toolset::Action
            } else {
                Toolset::Query
            };
            let mut tools = AgentTools::new(who.caller.clone(), may_act);
            let mut model = model(sink)?;
            let mut messages = vec![Message::system(system_prompt(set))];
            if let Some(summary) = &remembered.summary {
                messages.push(Message::system(format!(
                    "Summary of the earlier conversation: {summary}"
                )));
            }
            messages.extend(history_messages(&remembered.recent));
            messages.push(Message::user(question.clone()));
            let outcome = react::run(
                messages,
                &specs(set),
                &mut model,
                &mut tools,
                &Limits {
                    max_steps: settings.max_steps,
                },
                &mut |e| sink.emit(e),
            )
            .map_err(|e| llm_api_error(&e))?;
            result.prompt_tokens += outcome.usage.prompt_tokens;
            result.completion_tokens += outcome.usage.completion_tokens;
            result.steps = outcome.steps;
            result.model_used = Some(model.used());
            for g in &outcome.gathered {
                remember(
                    kv,
                    &conversation,
                    "tool",
                    &format!("{}: {}", g.call.name, g.observation.summary),
                    None,
                );
            }
            if sink.gone() {
                return Err(ApiError::new(499, "client_gone", "the client disconnected"));
            }
            if let Some(plan) = tools.plan.take() {
                plan_action(kv, &conversation, &question, plan, who, sink, &mut result)?;
            } else {
                let note = outcome.limit_reached.then(|| format!("The step limit ({}) was reached; answer from what was gathered and say so.", settings.max_steps));
                let mut evidence = evidence_of(&outcome.gathered);
                if let Some(draft) = &outcome.answer {
                    evidence.push(summariser::Evidence {
                        source: "agent_draft".into(),
                        summary: "the reasoning model's draft answer".into(),
                        data: json!(draft).to_string(),
                    });
                }
                synthesise(
                    &question,
                    &history,
                    evidence,
                    None,
                    note,
                    sink,
                    &mut result,
                    outcome.answer.as_deref(),
                )?;
            }
        }
    }
    remember(kv, &conversation, "assistant", &result.answer, None);
    Ok(result)
}

fn model(sink: &dyn EventSink) -> Result<LlmModel, ApiError> {
    LlmModel::new(sink.beat()).map_err(|e| llm_api_error(&e))
}

fn add_usage(result: &mut TurnResult, usage: Option<llm_client::Usage>) {
    if let Some(u) = usage {
        result.prompt_tokens += u.prompt_tokens;
        result.completion_tokens += u.completion_tokens;
    }
}

fn system_prompt(set: Toolset) -> String {
    let base = "You are kg-agent. You answer over a Neo4j knowledge graph of procurement data (Supplier, Product, PurchaseOrder, LineItem, Invoice, Payment, Account) using the tools; never invent entities or values that the tools did not return. Find entities by name with search_instances, explore with get_instance_neighbors, get_instances_by_class, find_path_between_instances and describe_class; use run_read_cypher only when no other tool fits. Call several tools in one step when they are independent. When you have enough, answer briefly in the user's language and name the entity ids you used.";
    match set {
        Toolset::Query => base.into(),
        Toolset::Action => format!(
            "{base} The user wants to change entities. Find every target entity with the query tools (e.g. all orders of a supplier), check the action with list_available_actions / get_action_details, then call propose_action_plan exactly once with all target ids and the parameters. Do not filter targets by preconditions: the executor checks each one and reports failures."
        ),
    }
}

fn intent_name(intent: router::Intent) -> &'static str {
    match intent {
        router::Intent::Query => "query",
        router::Intent::Action => "action",
        router::Intent::Document => "document",
        router::Intent::Answer => "answer",
        router::Intent::Clarify => "clarify",
    }
}

fn remember(kv: &SpinKv, conversation: &str, role: &str, content: &str, route: Option<&str>) {
    let turn = Turn {
        role: role.into(),
        content: content.into(),
        name: None,
        at: now(),
        route: route.map(str::to_string),
    };
    // Memory is best effort: a failed write must not fail the answer already given.
    // Microsecond keys: the user turn and an instant answer often share a millisecond.
    if let Err(e) = memory::append(kv, conversation, turn, &kg_spin::clock::ordered_suffix()) {
        eprintln!("dispatcher: could not remember a turn of {conversation}: {e}");
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

fn evidence_of(gathered: &[Gathered]) -> Vec<summariser::Evidence> {
    gathered
        .iter()
        .filter(|g| g.observation.ok)
        .map(|g| summariser::Evidence {
            source: g.call.name.clone(),
            summary: g.observation.summary.clone(),
            data: g.observation.content.clone(),
        })
        .collect()
}

fn record_answer(result: &mut TurnResult, answer: summariser::Answer) {
    // The summariser calls the same configured LLM.
    if answer.from_llm && result.model_used.is_none() {
        result.model_used = kg_spin::llm_config().ok().map(|c| c.model);
    }
    if let Some(u) = answer.usage {
        result.prompt_tokens += u.prompt_tokens;
        result.completion_tokens += u.completion_tokens;
    }
    result.sources = answer
        .citations
        .iter()
        .map(|c| json!({"reference": c.reference, "label": c.label}))
        .collect();
    result.answer = answer.text;
}

/// Pulls the summariser's answer stream, sending each delta as a `content` event
/// (`content_start` first). `None` when the stream could not start (fall back to a whole
/// answer); `Some(Err)` when it failed part-way.
fn stream_answer(
    request: &summariser::SummaryRequest,
    sink: &mut dyn EventSink,
) -> Option<Result<summariser::Answer, kg_wit::types::Error>> {
    let stream = summariser::start(request).ok()?;
    sink.emit(Event::ContentStart);
    loop {
        if sink.gone() {
            return Some(Err(kg_wit::types::Error::new(
                kg_wit::types::ErrorCode::Internal,
                "the client disconnected",
            )));
        }
        match stream.next(10_000) {
            Ok(summariser::StreamPoll::Delta(text)) => sink.emit(Event::Content(text)),
            Ok(summariser::StreamPoll::Pending) => sink.heartbeat(),
            Ok(summariser::StreamPoll::Finished(answer)) => return Some(Ok(answer)),
            Err(e) => return Some(Err(e)),
        }
    }
}

/// The final answer from the summariser, streamed as `content` events. When the
/// summariser fails, the loop's own draft (if any) is the answer.
#[allow(clippy::too_many_arguments)]
fn synthesise(
    question: &str,
    history: &[WitMessage],
    evidence: Vec<summariser::Evidence>,
    batch: Option<BatchSummary>,
    note: Option<String>,
    sink: &mut dyn EventSink,
    result: &mut TurnResult,
    draft: Option<&str>,
) -> Result<(), ApiError> {
    sink.emit(Event::Thinking {
        node: "summariser".into(),
        display_name: "Writing the answer".into(),
        details: format!("{} pieces of evidence", evidence.len()),
        sub_status: if batch.is_some() {
            "reporting the batch".into()
        } else {
            "synthesising from the evidence".into()
        },
    });
    let request = summariser::SummaryRequest {
        question: question.into(),
        history: history.to_vec(),
        evidence,
        batch,
        language: None,
        note,
    };
    if sink.streaming()
        && let Some(outcome) = stream_answer(&request, sink)
    {
        return match outcome {
            Ok(answer) => {
                record_answer(result, answer);
                Ok(())
            }
            Err(e) => match draft {
                Some(text) => {
                    result.answer = text.to_string();
                    sink.emit(Event::Content(result.answer.clone()));
                    Ok(())
                }
                None => Err(ApiError::from(e)),
            },
        };
    }
    match summariser::summarise(&request) {
        Ok(answer) => record_answer(result, answer),
        Err(e) => match draft {
            Some(text) => result.answer = text.to_string(),
            None => return Err(ApiError::from(e)),
        },
    }
    sink.emit(Event::ContentStart);
    sink.emit(Event::Content(result.answer.clone()));
    Ok(())
}

/// The plan as events show it, with who is acting on it (the authenticated subject) and
/// each target's display name (`names`, from [`super::tools::entity_names`]; the id when
/// the graph has none).
fn plan_json(plan: &ActionPlan, who: &Principal, names: &HashMap<String, String>) -> Value {
    let mut value = kg_http::actions::plan_json(
        &plan.entity_type,
        &plan.action_name,
        &plan.entity_ids,
        plan.entity_ids.len(),
        plan.parameters.clone(),
    );
    if let Some(targets) = value["targets"].as_array_mut() {
        for target in targets {
            let id = target["entity_id"].as_str().unwrap_or_default().to_string();
            let name = names.get(&id).cloned().unwrap_or(id);
            target["entity_name"] = json!(name);
        }
    }
    value["actor"] = json!(who.caller.subject);
    value
}

fn plan_action(
    kv: &SpinKv,
    conversation: &str,
    question: &str,
    plan: ActionPlan,
    who: &Principal,
    sink: &mut dyn EventSink,
    result: &mut TurnResult,
) -> Result<(), ApiError> {
    let names = entity_names(&plan.entity_type, &plan.entity_ids);
    sink.emit(Event::ActionPlan(plan_json(&plan, who, &names)));
    // The action-executor decides, under the same rules as the direct API, whether the
    // caller may run the plan and whether a person must approve it first.
    let request = executor::PlanRequest {
        entity_type: plan.entity_type.clone(),
        action_name: plan.action_name.clone(),
        entity_ids: plan.entity_ids.clone(),
        parameters: plan.parameters.to_string(),
        conversation: Some(conversation.to_string()),
    };
    let decision = crate::causal::executor(|| executor::plan(&who.caller, &request))?;
    let key = kg_spin::clock::unique_id("agent");
    if let (Some(reason), Some(token)) = (decision.reason.clone(), decision.approval_token.clone())
    {
        approval::store(
            kv,
            &Pending {
                token: token.clone(),
                conversation_id: conversation.into(),
                question: question.into(),
                plan: plan.clone(),
                idempotency_key: key.clone(),
                created_at: now(),
            },
        )
        .map_err(kv_error)?;
        sink.emit(Event::ApprovalRequired {
            token: token.clone(),
            reason: reason.clone(),
            plan: plan_json(&plan, who, &names),
        });
        result.approval = Some(
            json!({"approval_token": token, "reason": reason, "expires_at": decision.expires_at, "plan": plan_json(&plan, who, &names)}),
        );
        result.awaiting_approval = true;
        result.answer = if chinese(question) {
            format!(
                "计划：对 {} 个 {} 执行 {}。{}。回复“确认”执行，或“取消”放弃。",
                plan.entity_ids.len(),
                plan.entity_type,
                plan.action_name,
                reason
            )
        } else {
            format!(
                "Plan: {} on {} {} entities. {}. Reply \"yes\" to run it or \"no\" to cancel.",
                plan.action_name,
                plan.entity_ids.len(),
                plan.entity_type,
                reason
            )
        };
        sink.emit(Event::ContentStart);
        sink.emit(Event::Content(result.answer.clone()));
        return Ok(());
    }
    execute_and_report(question, &plan, Some(key), None, who, sink, result)
}

fn execute_and_report(
    question: &str,
    plan: &ActionPlan,
    idempotency_key: Option<String>,
    approval_token: Option<String>,
    who: &Principal,
    sink: &mut dyn EventSink,
    result: &mut TurnResult,
) -> Result<(), ApiError> {
    let request = ExecutionRequest {
        entity_type: plan.entity_type.clone(),
        action_name: plan.action_name.clone(),
        entity_ids: plan.entity_ids.clone(),
        parameters: plan.parameters.to_string(),
        idempotency_key,
        approval_token,
        caller: who.caller.clone(),
        options: None,
    };
    let run = crate::causal::executor(|| executor::start_batch(&request))?;
    let total = run.total();
    let mut completed = 0;
    let summary = loop {
        if sink.gone() {
            run.cancel();
        }
        match crate::causal::executor(|| run.next(1_000))? {
            BatchPoll::Pending => sink.heartbeat(),
            BatchPoll::Progress(outcomes) => {
                for o in outcomes {
                    completed += 1;
                    sink.emit(Event::ActionProgress(json!({"completed": completed, "total": total, "entity_id": o.entity_id, "success": o.success})));
                    if !o.success {
                        sink.emit(Event::ActionError(outcome_json(&o)));
                    }
                }
            }
            BatchPoll::Finished(summary) => break summary,
        }
    };
    let report = summary_json(&summary);
    sink.emit(Event::ActionComplete(report.clone()));
    result.actions = Some(report);
    synthesise(
        question,
        &[],
        Vec::new(),
        Some(summary),
        None,
        sink,
        result,
        None,
    )
}

/// Approves (runs) or rejects a plan waiting for approval. `in_conversation` is set when
/// the answer came as a reply in a conversation, which must be the plan's own. The
/// action-executor redeems or rejects the token atomically in the graph and checks that
/// `who` may.
pub fn resolve(
    token: &str,
    approve: bool,
    in_conversation: Option<&str>,
    who: &Principal,
    sink: &mut dyn EventSink,
) -> Result<TurnResult, ApiError> {
    let kv = SpinKv::open().map_err(kv_error)?;
    let info = crate::causal::executor(|| executor::get_approval(token))?;
    if let Some(here) = in_conversation
        && info.conversation.as_deref() != Some(here)
    {
        return Err(ApiError::new(
            403,
            "approval_invalid",
            "this approval belongs to another conversation",
        ));
    }
    let note = approval::get(&kv, token).map_err(kv_error)?;
    let question = note.as_ref().map_or_else(
        || format!("{}.{}", info.entity_type, info.action_name),
        |n| n.question.clone(),
    );
    let plan = ActionPlan {
        entity_type: info.entity_type.clone(),
        action_name: info.action_name.clone(),
        entity_ids: info.entity_ids.clone(),
        parameters: serde_json::from_str(&info.parameters).unwrap_or(json!({})),
    };
    let mut result = TurnResult::new(info.conversation.clone().unwrap_or_default());
    result.route = json!({"intent": "action", "method": RouteMethod::Approval.as_str()});
    result.approval = Some(json!({"approval_token": token, "approved": approve}));
    if approve {
        let names = entity_names(&plan.entity_type, &plan.entity_ids);
        sink.emit(Event::ActionPlan(plan_json(&plan, who, &names)));
        execute_and_report(
            &question,
            &plan,
            None,
            Some(token.to_string()),
            who,
            sink,
            &mut result,
        )?;
    } else {
        crate::causal::executor(|| executor::reject_plan(&who.caller, token))?;
        result.answer = if chinese(&question) {
            "已取消，未执行任何操作。".into()
        } else {
            "Cancelled: nothing was executed.".into()
        };
        sink.emit(Event::ContentStart);
        sink.emit(Event::Content(result.answer.clone()));
    }
    if let Some(note) = &note
        && let Err(e) = approval::forget(&kv, note)
    {
        eprintln!("dispatcher: could not forget the approval note: {e}");
    }
    if let Some(conversation) = &info.conversation {
        remember(&kv, conversation, "assistant", &result.answer, None);
        // Approved outside a turn (`/chat/approve`): the conversation's next turn must see
        // what this batch wrote. Inside a turn, the turn remembers its own chain.
        if in_conversation.is_none()
            && let Err(e) =
                memory::save_bookmarks(&kv, conversation, &[], &crate::causal::current())
        {
            eprintln!("dispatcher: could not remember the graph bookmarks of {conversation}: {e}");
        }
    }
    Ok(result)
}
