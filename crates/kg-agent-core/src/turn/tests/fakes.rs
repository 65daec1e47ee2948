//! Fakes of every port, scripted per test, recording what the turn asked of them.

use crate::approval::ActionPlan;
use crate::events::Event;
use crate::memory::tests::MemKv;
use crate::react::{Model, Observation, ToolRunner};
use crate::turn::ports::{
    Actor, AgentModel, AgentTools, AnswerStream, Batch, Bookmarks, Clock, DeadlineClock, EventSink,
    Executor, ModelPoll, ModelStream, Ports, Router, Summariser, Toolset,
};
use kg_wit::kg::action_executor::action_executor::{
    ApprovalInfo, BatchPoll, ExecutionRequest, PlanDecision, PlanRequest,
};
use kg_wit::kg::router::router::{Intent, RouteDecision, RouteRequest, RoutingMode};
use kg_wit::kg::summariser::summariser::{Answer, Citation, StreamPoll, SummaryRequest};
use kg_wit::types::{
    BatchSummary, Caller, EntityOutcome, Error, ErrorCode, Failure, FailureReason,
};
use llm_client::{ChatRequest, ChatResponse, LlmError, ToolCall, ToolSpec, Usage};
use serde_json::json;
use std::cell::{Cell, RefCell};
use std::collections::{HashMap, VecDeque};
use std::rc::Rc;

/// Shared "the client is gone" flag: set by a test or by a fake at a chosen moment.
pub type Gone = Rc<Cell<bool>>;

/// The fake monotonic clock's milliseconds, advanced by slow fakes.
pub type Time = Rc<Cell<u64>>;

/// Moves `time` on by `ms` (a call that took that long).
fn spend(time: &Time, ms: u64) {
    time.set(time.get() + ms);
}

pub struct Sink {
    pub events: Vec<Event>,
    pub gone: Gone,
    pub streaming: bool,
    /// The client leaves once this many events were emitted.
    pub leave_after: Option<usize>,
}

impl Sink {
    pub fn new(streaming: bool) -> Sink {
        Sink {
            events: Vec::new(),
            gone: Gone::default(),
            streaming,
            leave_after: None,
        }
    }
    pub fn kinds(&self) -> Vec<&'static str> {
        self.events.iter().map(|e| e.encode().0).collect()
    }
}

impl EventSink for Sink {
    fn emit(&mut self, event: Event) {
        if self.gone.get() {
            return;
        }
        self.events.push(event);
        if self.leave_after.is_some_and(|n| self.events.len() >= n) {
            self.gone.set(true);
        }
    }
    fn gone(&self) -> bool {
        self.gone.get()
    }
    fn streaming(&self) -> bool {
        self.streaming
    }
}

/// One scripted LLM answer: tool calls (name, JSON arguments) or a final text.
#[derive(Debug, Clone)]
pub enum Say {
    Tools(Vec<(&'static str, serde_json::Value)>),
    Text(&'static str),
    /// Text, then tool calls, in one response (a preface the model writes before them).
    Preface(&'static str, Vec<(&'static str, serde_json::Value)>),
    Fail,
    /// The client leaves while this call is out (the transport then gives up).
    LeaveDuringCall,
}

pub struct FakeModel {
    pub script: VecDeque<Say>,
    /// After the script: this, forever.
    pub then: Say,
    pub calls: u32,
    pub gone: Gone,
    pub configured: bool,
    /// How long each call takes on the fake clock.
    pub call_ms: u64,
    pub time: Time,
    /// The turn's deadline passed (a fake clock at or past this): no call may start.
    pub stop_at_ms: Option<u64>,
    /// `start_stream` works (else it fails to start, and the turn falls back).
    pub streams: bool,
    /// How long each pull of a stream takes on the fake clock.
    pub pull_ms: u64,
    /// Pulls of every stream so far.
    pub pulls: Rc<Cell<u32>>,
}

impl FakeModel {
    pub fn new(script: Vec<Say>, gone: &Gone, time: &Time) -> FakeModel {
        FakeModel {
            script: script.into(),
            then: Say::Text("done"),
            calls: 0,
            gone: gone.clone(),
            configured: true,
            call_ms: 0,
            time: time.clone(),
            stop_at_ms: None,
            streams: true,
            pull_ms: 0,
            pulls: Rc::default(),
        }
    }
}

/// A scripted answer stream: the polls in order, each pull taking `pull_ms`.
struct FakeStream {
    polls: VecDeque<Result<ModelPoll, LlmError>>,
    gone: Gone,
    time: Time,
    pull_ms: u64,
    pulls: Rc<Cell<u32>>,
    stop_at_ms: Option<u64>,
}

impl ModelStream for FakeStream {
    fn next(&mut self, _wait_ms: u32) -> Result<ModelPoll, LlmError> {
        // A pull drives the call: none may happen once the turn must stop.
        assert!(
            !self.gone.get(),
            "an answer stream was pulled after the client left"
        );
        assert!(
            self.stop_at_ms.is_none_or(|end| self.time.get() < end),
            "an answer stream was pulled after the turn's deadline"
        );
        spend(&self.time, self.pull_ms);
        self.pulls.set(self.pulls.get() + 1);
        self.polls
            .pop_front()
            .unwrap_or_else(|| Err(LlmError::BadResponse("pulled past the end".into())))
    }
}

fn tool_calls(step: u32, calls: Vec<(&'static str, serde_json::Value)>) -> Vec<ToolCall> {
    calls
        .into_iter()
        .enumerate()
        .map(|(i, (name, args))| ToolCall {
            id: format!("call-{step}-{i}"),
            name: name.into(),
            arguments: args.to_string(),
        })
        .collect()
}

impl Model for FakeModel {
    fn complete(&mut self, _request: &ChatRequest) -> Result<ChatResponse, LlmError> {
        // A real transport sends nothing once the client is gone.
        assert!(
            !self.gone.get(),
            "an LLM call started after the client left"
        );
        assert!(
            self.stop_at_ms.is_none_or(|end| self.time.get() < end),
            "an LLM call started after the turn's deadline"
        );
        spend(&self.time, self.call_ms);
        self.calls += 1;
        let say = self.script.pop_front().unwrap_or_else(|| self.then.clone());
        let step = self.calls;
        let (content, tool_calls) = match say {
            Say::Text(t) => (t.to_string(), vec![]),
            Say::Tools(calls) => (String::new(), tool_calls(step, calls)),
            Say::Preface(text, calls) => (text.to_string(), tool_calls(step, calls)),
            Say::Fail => {
                return Err(LlmError::Unavailable {
                    message: "HTTP 503".into(),
                    attempts: 3,
                });
            }
            Say::LeaveDuringCall => {
                self.gone.set(true);
                return Err(LlmError::Unavailable {
                    message: "the client disconnected".into(),
                    attempts: 1,
                });
            }
        };
        Ok(ChatResponse {
            content,
            tool_calls,
            finish_reason: None,
            usage: Some(Usage {
                prompt_tokens: 10,
                completion_tokens: 2,
            }),
            model: Some("fake-model".into()),
        })
    }
    /// The next scripted answer, word by word with a quiet pull before each word (or a
    /// quiet pull, then the scripted failure).
    fn start_stream(&mut self, request: &ChatRequest) -> Result<Box<dyn ModelStream>, LlmError> {
        if !self.streams {
            return Err(LlmError::NotConfigured("no streaming here".into()));
        }
        let mut polls = VecDeque::new();
        match self.complete(request) {
            Ok(mut response) => {
                for word in response.content.split_inclusive(' ') {
                    polls.push_back(Ok(ModelPoll::Pending));
                    polls.push_back(Ok(ModelPoll::Delta(word.to_string())));
                }
                response.model = Some("fake-model-streamed".into());
                polls.push_back(Ok(ModelPoll::Finished(response)));
            }
            Err(e) => {
                polls.push_back(Ok(ModelPoll::Pending));
                polls.push_back(Err(e));
            }
        }
        Ok(Box::new(FakeStream {
            polls,
            gone: self.gone.clone(),
            time: self.time.clone(),
            pull_ms: self.pull_ms,
            pulls: self.pulls.clone(),
            stop_at_ms: self.stop_at_ms,
        }))
    }
}

impl AgentModel for FakeModel {
    fn ready(&self) -> Result<(), LlmError> {
        if self.configured {
            Ok(())
        } else {
            Err(LlmError::NotConfigured("llm_base_url".into()))
        }
    }
    fn used(&self) -> String {
        "fake-model".into()
    }
    fn endpoint(&self) -> Option<(String, String)> {
        Some(("http://llm.test/v1".into(), "fake-model".into()))
    }
}

/// Graph tools over a tiny fixed graph: supplier ACME with orders PO_001..PO_00n.
pub struct FakeTools {
    pub orders: usize,
    pub calls: Vec<String>,
    pub plan: Option<ActionPlan>,
    pub gone: Gone,
}

impl FakeTools {
    pub fn new(orders: usize, gone: &Gone) -> FakeTools {
        FakeTools {
            orders,
            calls: vec![],
            plan: None,
            gone: gone.clone(),
        }
    }
    pub fn order_ids(&self) -> Vec<String> {
        (1..=self.orders).map(|i| format!("PO_{i:03}")).collect()
    }
}

impl ToolRunner for FakeTools {
    fn run(&mut self, call: &ToolCall) -> Observation {
        assert!(
            !self.gone.get(),
            "a tool call started after the client left"
        );
        self.calls.push(call.name.clone());
        let ok = |content: serde_json::Value, summary: &str| Observation {
            ok: true,
            content: content.to_string(),
            summary: summary.into(),
            graph: None,
        };
        match call.name.as_str() {
            "search_instances" => ok(json!({"rows": [["SUP_ACME", "ACME"]]}), "1 supplier"),
            "get_instance_neighbors" => ok(json!({"ids": self.order_ids()}), "orders"),
            "propose_action_plan" => {
                let args = call.arguments_json().unwrap_or_default();
                self.plan = Some(ActionPlan {
                    entity_type: args["entity_type"].as_str().unwrap_or_default().into(),
                    action_name: args["action_name"].as_str().unwrap_or_default().into(),
                    entity_ids: args["entity_ids"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(|v| v.as_str().map(str::to_string))
                        .collect(),
                    parameters: args["parameters"].clone(),
                });
                ok(json!({"status": "recorded"}), "plan recorded")
            }
            other => Observation {
                ok: false,
                content: json!({"error": format!("no tool `{other}`")}).to_string(),
                summary: format!("failed: no tool `{other}`"),
                graph: None,
            },
        }
    }
}

impl AgentTools for FakeTools {
    fn specs(&mut self, set: Toolset) -> Vec<ToolSpec> {
        let mut names = vec!["search_instances", "get_instance_neighbors"];
        if set == Toolset::Action {
            names.push("propose_action_plan");
        }
        names
            .into_iter()
            .map(|n| ToolSpec {
                name: n.into(),
                description: n.into(),
                parameters: json!({"type": "object"}).to_string(),
            })
            .collect()
    }
    fn take_plan(&mut self) -> Option<ActionPlan> {
        self.plan.take()
    }
    fn entity_names(&mut self, _entity_type: &str, ids: &[String]) -> HashMap<String, String> {
        ids.iter()
            .map(|id| (id.clone(), format!("Order {id}")))
            .collect()
    }
}

pub struct FakeRouter {
    pub intent: Intent,
    pub fail: bool,
}

impl Router for FakeRouter {
    fn route(&mut self, request: &RouteRequest) -> Result<RouteDecision, Error> {
        if self.fail {
            return Err(Error::new(ErrorCode::Unavailable, "router down"));
        }
        Ok(RouteDecision {
            intent: self.intent,
            confidence: 0.9,
            method: RoutingMode::Rule,
            reason: "rule".into(),
            refined_question: request.message.clone(),
            clarification: None,
            warnings: vec![],
        })
    }
}

pub struct FakeSummariser {
    pub requests: Vec<SummaryRequest>,
    /// Stream the answer in these pieces (when the sink streams).
    pub pieces: Vec<&'static str>,
    pub gone: Gone,
}

struct Pieces(VecDeque<StreamPoll>);

impl AnswerStream for Pieces {
    fn next(&mut self, _wait_ms: u32) -> Result<StreamPoll, Error> {
        self.0
            .pop_front()
            .ok_or_else(|| Error::new(ErrorCode::Internal, "stream over"))
    }
}

fn answer_of(request: &SummaryRequest) -> Answer {
    let text = match &request.batch {
        Some(b) => format!(
            "已完成 {} 个订单的付款处理。成功: {} 个, 失败: {} 个",
            b.total, b.succeeded, b.failed
        ),
        None => format!("answer from {} pieces of evidence", request.evidence.len()),
    };
    Answer {
        text,
        citations: vec![Citation {
            reference: "SUP_ACME".into(),
            label: "ACME".into(),
        }],
        language: "zh".into(),
        from_llm: true,
        usage: None,
    }
}

impl Summariser for FakeSummariser {
    fn summarise(&mut self, request: &SummaryRequest) -> Result<Answer, Error> {
        assert!(!self.gone.get(), "a summary started after the client left");
        self.requests.push(request.clone());
        Ok(answer_of(request))
    }
    fn start(&mut self, request: &SummaryRequest) -> Result<Box<dyn AnswerStream>, Error> {
        assert!(!self.gone.get(), "a summary started after the client left");
        self.requests.push(request.clone());
        let mut polls: VecDeque<StreamPoll> = self
            .pieces
            .iter()
            .map(|p| StreamPoll::Delta(p.to_string()))
            .collect();
        polls.push_back(StreamPoll::Finished(answer_of(request)));
        Ok(Box::new(Pieces(polls)))
    }
}

/// The executor's view of a batch: outcomes in chunks; `fail` ids fail.
pub struct ExecutorLog {
    pub started: Vec<ExecutionRequest>,
    pub chunks_pulled: usize,
    pub cancelled: bool,
    pub rejected: Vec<String>,
}

pub struct FakeExecutor {
    pub approval_required: bool,
    pub fail: Vec<&'static str>,
    pub chunk: usize,
    pub log: Rc<RefCell<ExecutorLog>>,
    pub approvals: HashMap<String, ApprovalInfo>,
    /// The client leaves once this many chunks were reported.
    pub leave_after_chunks: Option<(usize, Gone)>,
    /// How long each chunk takes on the fake clock.
    pub chunk_ms: u64,
    pub time: Time,
}

impl FakeExecutor {
    pub fn new(time: &Time) -> FakeExecutor {
        FakeExecutor {
            approval_required: false,
            fail: vec![],
            chunk: 5,
            log: Rc::new(RefCell::new(ExecutorLog {
                started: vec![],
                chunks_pulled: 0,
                cancelled: false,
                rejected: vec![],
            })),
            approvals: HashMap::new(),
            leave_after_chunks: None,
            chunk_ms: 0,
            time: time.clone(),
        }
    }
}

struct FakeBatch {
    request: ExecutionRequest,
    fail: Vec<&'static str>,
    chunk: usize,
    done: Vec<EntityOutcome>,
    log: Rc<RefCell<ExecutorLog>>,
    leave_after_chunks: Option<(usize, Gone)>,
    chunk_ms: u64,
    time: Time,
}

fn outcome(id: &str, success: bool) -> EntityOutcome {
    EntityOutcome {
        entity_id: id.into(),
        success,
        changes: vec![],
        failure: (!success).then(|| Failure {
            reason: FailureReason::PreconditionFailed,
            message: "Insufficient funds".into(),
            precondition: Some("balance >= amount".into()),
        }),
        log_id: success.then(|| format!("log-{id}")),
        replayed: false,
        undone: None,
    }
}

impl Batch for FakeBatch {
    fn total(&self) -> u32 {
        self.request.entity_ids.len() as u32
    }
    fn next(&mut self, _wait_ms: u32) -> Result<BatchPoll, Error> {
        let ids = &self.request.entity_ids;
        let cancelled = self.log.borrow().cancelled;
        if self.done.len() == ids.len() || cancelled {
            let successes: Vec<EntityOutcome> =
                self.done.iter().filter(|o| o.success).cloned().collect();
            let mut failures: Vec<EntityOutcome> =
                self.done.iter().filter(|o| !o.success).cloned().collect();
            // Entities never started finish as cancelled.
            for id in &ids[self.done.len()..] {
                let mut o = outcome(id, false);
                o.failure = Some(Failure {
                    reason: FailureReason::Cancelled,
                    message: "cancelled".into(),
                    precondition: None,
                });
                failures.push(o);
            }
            return Ok(BatchPoll::Finished(BatchSummary {
                entity_type: self.request.entity_type.clone(),
                action_name: self.request.action_name.clone(),
                total: ids.len() as u32,
                succeeded: successes.len() as u32,
                failed: failures.len() as u32,
                unknown: 0,
                successes,
                failures,
                duration_ms: 1,
            }));
        }
        let start = self.done.len();
        let end = (start + self.chunk).min(ids.len());
        let chunk: Vec<EntityOutcome> = ids[start..end]
            .iter()
            .map(|id| outcome(id, !self.fail.contains(&id.as_str())))
            .collect();
        self.done.extend(chunk.clone());
        spend(&self.time, self.chunk_ms);
        let pulled = {
            let mut log = self.log.borrow_mut();
            log.chunks_pulled += 1;
            log.chunks_pulled
        };
        if let Some((n, gone)) = &self.leave_after_chunks
            && pulled >= *n
        {
            gone.set(true);
        }
        Ok(BatchPoll::Progress(chunk))
    }
    fn cancel(&mut self) {
        self.log.borrow_mut().cancelled = true;
    }
}

impl Executor for FakeExecutor {
    fn plan(&mut self, caller: &Caller, request: &PlanRequest) -> Result<PlanDecision, Error> {
        let token = format!("tok-{}", self.approvals.len() + 1);
        if self.approval_required {
            self.approvals.insert(
                token.clone(),
                ApprovalInfo {
                    entity_type: request.entity_type.clone(),
                    action_name: request.action_name.clone(),
                    entity_ids: request.entity_ids.clone(),
                    parameters: request.parameters.clone(),
                    plan_hash: "h".into(),
                    requested_by: caller.subject.clone(),
                    conversation: request.conversation.clone(),
                    state: "pending".into(),
                    reason: "more than 10 entities".into(),
                    four_eyes: false,
                    created_at: "2026-01-01T00:00:00Z".into(),
                    expires_at: "2026-01-01T01:00:00Z".into(),
                    decided_by: None,
                    decided_at: None,
                    idempotency_key: None,
                },
            );
        }
        Ok(PlanDecision {
            plan_hash: "h".into(),
            entity_ids: request.entity_ids.clone(),
            parameters: request.parameters.clone(),
            approval_required: self.approval_required,
            reason: self
                .approval_required
                .then(|| "more than 10 entities".to_string()),
            approval_token: self.approval_required.then_some(token),
            expires_at: None,
        })
    }
    fn start_batch(&mut self, request: &ExecutionRequest) -> Result<Box<dyn Batch>, Error> {
        self.log.borrow_mut().started.push(request.clone());
        Ok(Box::new(FakeBatch {
            request: request.clone(),
            fail: self.fail.clone(),
            chunk: self.chunk,
            done: vec![],
            log: self.log.clone(),
            leave_after_chunks: self.leave_after_chunks.clone(),
            chunk_ms: self.chunk_ms,
            time: self.time.clone(),
        }))
    }
    fn get_approval(&mut self, token: &str) -> Result<ApprovalInfo, Error> {
        self.approvals
            .get(token)
            .cloned()
            .ok_or_else(|| Error::new(ErrorCode::NotFound, "no such approval"))
    }
    fn reject_plan(&mut self, _caller: &Caller, token: &str) -> Result<ApprovalInfo, Error> {
        self.log.borrow_mut().rejected.push(token.into());
        self.get_approval(token)
    }
}

/// Ids from a counter; monotonic time from the shared [`Time`].
#[derive(Default)]
pub struct FakeClock(Cell<u64>, pub Time);

impl Clock for FakeClock {
    fn now(&self) -> String {
        "2026-01-01T00:00:00Z".into()
    }
    fn ordered_suffix(&self) -> String {
        self.0.set(self.0.get() + 1);
        format!("{:012}", self.0.get())
    }
    fn unique_id(&self, prefix: &str) -> String {
        self.0.set(self.0.get() + 1);
        format!("{prefix}{}", self.0.get())
    }
}

impl DeadlineClock for FakeClock {
    fn monotonic_ms(&self) -> u64 {
        self.1.get()
    }
}

#[derive(Default)]
pub struct Chain(pub Vec<String>);

impl Bookmarks for Chain {
    fn resume(&mut self, bookmarks: Vec<String>) {
        self.0 = bookmarks;
    }
    fn current(&self) -> Vec<String> {
        self.0.clone()
    }
}

pub fn actor(may_act: bool) -> Actor {
    Actor {
        caller: Caller {
            subject: "alice".into(),
            roles: vec!["operator".into()],
        },
        may_act,
        admin: false,
    }
}

/// Everything a turn talks to, faked; `ports()` lends them to one turn.
pub struct World {
    pub kv: MemKv,
    pub model: FakeModel,
    pub tools: FakeTools,
    pub router: FakeRouter,
    pub summariser: FakeSummariser,
    pub executor: FakeExecutor,
    pub sink: Sink,
    pub clock: FakeClock,
    pub chain: Chain,
}

impl World {
    pub fn new(intent: Intent, script: Vec<Say>, streaming: bool) -> World {
        let sink = Sink::new(streaming);
        let gone = sink.gone.clone();
        let time = Time::default();
        World {
            kv: MemKv::default(),
            model: FakeModel::new(script, &gone, &time),
            tools: FakeTools::new(20, &gone),
            router: FakeRouter {
                intent,
                fail: false,
            },
            summariser: FakeSummariser {
                requests: vec![],
                pieces: vec!["已完成", "付款"],
                gone: gone.clone(),
            },
            executor: FakeExecutor::new(&time),
            sink,
            clock: FakeClock(Cell::default(), time),
            chain: Chain::default(),
        }
    }

    pub fn gone(&self) -> Gone {
        self.sink.gone.clone()
    }

    pub fn ports(&mut self) -> Ports<'_> {
        Ports {
            kv: &self.kv,
            model: &mut self.model,
            tools: &mut self.tools,
            router: &mut self.router,
            summariser: &mut self.summariser,
            executor: &mut self.executor,
            sink: &mut self.sink,
            clock: &self.clock,
            chain: &mut self.chain,
        }
    }
}
