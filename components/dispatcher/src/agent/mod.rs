//! The agent endpoints: `/chat` (JSON), `/chat/stream` (SSE), `/chat/approve`, the
//! seed-002 `/api/qa/query` shape, and conversation history.

mod clock;
mod model;
mod resume;
mod tools;
mod wit;

use crate::identity::Principal;
use crate::kv;
// The SSE wire, as `sink` to this module's children.
use crate::sse as sink;
use kg_agent_core::answers;
use kg_agent_core::config::{self, Variables};
use kg_agent_core::events::Event;
use kg_agent_core::turn::ports::{Actor, Collected, EventSink, Ports};
use kg_agent_core::turn::{self, Settings, TurnResult};
use kg_http::ApiError;
use kg_http::chat::{approve_body, chat_body};
use kg_identity::Permission;
use serde_json::Value;
use sink::Link;
use std::rc::Rc;

pub use resume::{Resume, prepare as prepare_resume, stream as resume_stream};
use spin_sdk::http::{Request, Response, ResponseOutparam};

/// The Spin variables, as `kg_agent_core::config` reads the agent's tunables.
struct SpinVariables;

impl Variables for SpinVariables {
    fn number(&self, name: &str, default: u64) -> u64 {
        kg_spin::number_variable(name, default)
    }
}

/// A turn's settings; its deadline starts now.
fn settings() -> Settings {
    config::settings(&SpinVariables, kg_spin::clock::monotonic_ms())
}

fn actor(who: &Principal) -> Actor {
    Actor {
        caller: who.caller.clone(),
        may_act: who.may(Permission::ActionsExecute),
        admin: who.may(Permission::ConversationsAll),
    }
}

fn open_kv() -> Result<kv::SpinKv, ApiError> {
    kv::SpinKv::open().map_err(turn::kv_error)
}

/// Binds the turn's ports to Spin and the components, and runs `work` with them.
/// `link`: the stream, when the turn streams (LLM calls then watch it). `turn_end_ms`:
/// the turn's deadline (monotonic ms), when it has one (a pending LLM call is cut there).
fn with_ports<T>(
    who: &Principal,
    sink: &mut dyn EventSink,
    link: Option<Link>,
    turn_end_ms: Option<u64>,
    work: impl FnOnce(&Actor, &mut Ports) -> Result<T, ApiError>,
) -> Result<T, ApiError> {
    let actor = actor(who);
    let kv = open_kv()?;
    let mut model = model::LlmModel::new(link, turn_end_ms);
    let mut tools = tools::WitTools::new(tools::WitBackend, actor.caller.clone(), actor.may_act);
    let mut ports = Ports {
        kv: &kv,
        model: &mut model,
        tools: &mut tools,
        router: &mut wit::WitRouter,
        summariser: &mut wit::WitSummariser,
        executor: &mut wit::WitExecutor,
        sink,
        clock: &clock::SpinTurnClock,
        chain: &mut wit::CausalChain,
    };
    work(&actor, &mut ports)
}

fn answer_json(result: &TurnResult, events: &[Event], trace: bool, started: u64) -> Value {
    let latency_ms = kg_spin::clock::monotonic_ms().saturating_sub(started);
    kg_agent_core::answers::turn_json(result, events, trace, latency_ms)
}

/// Counts a turn's LLM tokens against the subject's daily limit.
fn spent(who: &Principal, result: &TurnResult) {
    crate::limits::add_tokens(
        &who.caller.subject,
        u64::from(result.prompt_tokens) + u64::from(result.completion_tokens),
    );
}

/// `POST /chat`: the whole turn as one JSON answer.
pub fn chat(request: &Request, who: &Principal) -> Result<Response, ApiError> {
    let started = kg_spin::clock::monotonic_ms();
    let body = chat_body(&kg_http::body::json_object(request.body())?)?;
    crate::limits::check_tokens(&who.caller.subject)?;
    let mut events = Collected::default();
    let settings = settings();
    let result = with_ports(
        who,
        &mut events,
        None,
        settings.deadline.end_ms(),
        |actor, ports| turn::turn(&body, &settings, actor, ports),
    )?;
    spent(who, &result);
    Ok(crate::json_response(
        200,
        &answer_json(&result, &events.0, body.trace, started),
    ))
}

/// Seed 002's `/api/qa/query`: `{question}` → `{answer, sources, …}`, marked deprecated.
pub fn legacy_query(request: &Request, who: &Principal) -> Result<Response, ApiError> {
    let mut response = chat(request, who)?;
    response.set_header(
        "x-deprecation-warning",
        "/api/qa/query is deprecated; use POST /chat",
    );
    Ok(response)
}

/// What `/chat/approve` answers: JSON at once, or the batch streamed as it runs.
pub enum Approval {
    Done(Response),
    /// The token and the decision, to run in [`approve_stream`].
    Stream(String, bool),
}

/// `POST /chat/approve`: runs (or, with `approve: false`, rejects) a plan waiting for
/// approval, whether the agent or the direct API planned it. Approving needs the approver
/// role; rejecting, the approver role or being the one who asked. With `stream` (the
/// request accepts `text/event-stream`) the body and the role are checked here, so those
/// refusals stay plain JSON errors, and the run itself is streamed.
pub fn approve(request: &Request, who: &Principal, stream: bool) -> Result<Approval, ApiError> {
    let started = kg_spin::clock::monotonic_ms();
    let (token, approve) = approve_body(&kg_http::body::json_object(request.body())?)?;
    if approve {
        who.require(Permission::ActionsApprove)?;
    }
    if stream {
        return Ok(Approval::Stream(token, approve));
    }
    let mut events = Collected::default();
    // An approved batch is bounded by its own deadline, not a turn's.
    let result = with_ports(who, &mut events, None, None, |actor, ports| {
        turn::resolve(&token, approve, None, actor, ports)
    })?;
    spent(who, &result);
    Ok(Approval::Done(crate::json_response(
        200,
        &answer_json(&result, &events.0, false, started),
    )))
}

/// Opens an SSE response (its first comment leaves with the first event), runs `work` against
/// the stream, counts what it spent, and ends with `error` (if it failed) then `done`.
/// `turn_end_ms`: the turn's deadline (monotonic ms), if it has one.
fn stream_with(
    who: &Principal,
    extra: &[(String, String)],
    out: ResponseOutparam,
    turn_end_ms: Option<u64>,
    work: impl FnOnce(&Actor, &mut Ports) -> Result<TurnResult, ApiError>,
) {
    // The turn's events are kept for a resume (`GET /chat/stream/{turn_id}`); the id is
    // in every event's SSE id, in `completed` and in `x-turn-id`.
    let turn = kg_spin::clock::unique_id("t");
    let mut extra = extra.to_vec();
    extra.push(("x-turn-id".into(), turn.clone()));
    let Some(mut sink) = crate::sse::open(&extra, out) else {
        return;
    };
    // Recording starts before the first event, which it must keep for a resume; its
    // pruning of expired streams is what the first event waits for.
    if let Ok(kv) = kv::SpinKv::open() {
        let (retention, grace) = (
            config::retention_ms(&SpinVariables),
            config::grace_ms(&SpinVariables),
        );
        sink.record(Rc::new(kv), &turn, &who.caller.subject, retention, grace);
    }
    let link = sink.link();
    let outcome = with_ports(who, &mut sink, Some(link), turn_end_ms, work);
    if let Ok(result) = &outcome {
        spent(who, result);
    }
    sink.finish(outcome.err().as_ref());
}

/// `POST /chat/approve` as Server-Sent Events: the same events `/chat/stream` sends for a
/// batch (`action_plan`, `action_progress`, `action_error`, `action_complete`, the
/// report's `content`), as the batch runs. A refusal found once the stream is open (the
/// token already used, expired, rejected…) is an `error` event with the code the JSON
/// answer would carry; `done` always comes last.
pub async fn approve_stream(
    token: String,
    approve: bool,
    who: Principal,
    extra: &[(String, String)],
    out: ResponseOutparam,
) {
    // An approved batch is bounded by its own deadline, not a turn's.
    stream_with(&who, extra, out, None, |actor, ports| {
        turn::resolve(&token, approve, None, actor, ports)
    });
}

/// Checks the body before the stream opens, so a bad request is a plain JSON 400.
pub fn prepare_stream(
    request: &Request,
    who: &Principal,
) -> Result<kg_http::chat::ChatBody, ApiError> {
    let body = chat_body(&kg_http::body::json_object(request.body())?)?;
    crate::limits::check_tokens(&who.caller.subject)?;
    // Someone else's conversation is a 404 before the stream opens, as /chat answers it
    // (inside the stream it could only be a 200 carrying an `error` event). This claims a
    // new client-chosen id now; the turn then finds it owned by the caller.
    if let Some(id) = &body.conversation_id {
        turn::authorize(&open_kv()?, id, &actor(who), true)?;
    }
    Ok(body)
}

/// `POST /chat/stream`: the same turn as Server-Sent Events; `error` (if any) then `done`
/// always come last; the first event (`conversation_id`) goes out before the turn's work.
pub async fn stream(
    body: kg_http::chat::ChatBody,
    who: Principal,
    extra: &[(String, String)],
    out: ResponseOutparam,
) {
    // The deadline runs from the request, before the stream opens.
    let settings = settings();
    stream_with(
        &who,
        extra,
        out,
        settings.deadline.end_ms(),
        |actor, ports| turn::turn(&body, &settings, actor, ports),
    );
}

/// `GET /conversations`: the caller's own conversations (admins too: their own), newest
/// first, with the question that started each and when it last changed.
pub fn list_conversations(who: &Principal) -> Result<Response, ApiError> {
    let listed = answers::list(&open_kv()?, &who.caller.subject)?;
    Ok(crate::json_response(200, &listed))
}

pub fn get_conversation(id: &str, who: &Principal) -> Result<Response, ApiError> {
    let conversation = answers::conversation(&open_kv()?, id, &actor(who))?;
    Ok(crate::json_response(200, &conversation))
}

pub fn delete_conversation(id: &str, who: &Principal) -> Result<Response, ApiError> {
    let deleted = answers::delete(&open_kv()?, id, &actor(who))?;
    Ok(crate::json_response(200, &deleted))
}
