//! What a turn needs from the world outside it, as small traits: the LLM, the tools, the
//! router, the summariser, the action executor, the key-value store, where events go, the
//! clock and the graph's bookmark chain. The dispatcher binds them to WIT calls and Spin;
//! tests bind them to fakes, so whole turns run natively. The WIT records are the DTOs
//! (DESIGN.md §2), so the traits speak them and the adapters stay thin.

use crate::approval::ActionPlan;
use crate::events::Event;
use crate::memory::Kv;
use crate::react::{Model, ToolRunner};
use kg_wit::kg::action_executor::action_executor::{
    ApprovalInfo, BatchPoll, ExecutionRequest, PlanDecision, PlanRequest,
};
use kg_wit::kg::router::router::{RouteDecision, RouteRequest};
use kg_wit::kg::summariser::summariser::{Answer, StreamPoll, SummaryRequest};
use kg_wit::types::{Caller, Error};
use llm_client::{ChatResponse, LlmError, ToolSpec};
use std::collections::HashMap;

/// Why a turn stopped starting work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// The client went away: nobody reads the answer.
    ClientGone,
    /// The turn's deadline (`agent_turn_deadline_ms`) passed after `steps` reasoning
    /// steps; the client still reads, and is told.
    Deadline { deadline_ms: u64, steps: u32 },
}

/// Where a turn's events go: collected for `/chat`'s JSON answer, or streamed.
pub trait EventSink {
    fn emit(&mut self, event: Event);
    /// True once the turn must start no further work: the client has gone away (or, for
    /// a sink bounded by the turn's deadline, the deadline passed — see [`Self::stop`]).
    fn gone(&self) -> bool;
    /// Why the turn must stop, once it must: only a departed client here; the turn's
    /// deadline is added by the sink the turn wraps this one in.
    fn stop(&self) -> Option<Stop> {
        self.gone().then_some(Stop::ClientGone)
    }
    /// True when events reach the client as they happen (the answer can be streamed).
    fn streaming(&self) -> bool {
        false
    }
    /// Called while waiting; a stream sends a comment so proxies keep it open.
    fn heartbeat(&mut self) {}
    /// The `content` shown so far in this turn was not the answer (a ReAct step's text,
    /// streamed in case it was, turned out to preface tool calls or to be a draft): the
    /// next `content_start` tells the client to discard it. The turn's own sink chain
    /// ([`super::retracting::Retracting`]) does that; others ignore it.
    fn retract_content(&mut self) {}
}

/// Keeps every event, for `/chat`'s JSON answer (and tests).
#[derive(Debug, Default)]
pub struct Collected(pub Vec<Event>);

impl EventSink for Collected {
    fn emit(&mut self, event: Event) {
        self.0.push(event);
    }
    fn gone(&self) -> bool {
        false
    }
}

/// The LLM the turn talks to, beyond one completion: which model answered and which
/// endpoint is configured (for `model_used` and for errors that say what failed).
pub trait AgentModel: Model {
    /// Fails when no LLM is configured, before any event promises a call.
    fn ready(&self) -> Result<(), LlmError>;
    /// The model that answered: as the endpoint reported it, else as configured.
    fn used(&self) -> String;
    /// The configured endpoint and model (never the key), when configured.
    fn endpoint(&self) -> Option<(String, String)>;
}

/// What one pull of a streamed LLM answer found.
#[derive(Debug)]
pub enum ModelPoll {
    /// Text that arrived since the previous pull.
    Delta(String),
    /// Nothing within the wait.
    Pending,
    /// The call is over: the whole response (its text was all handed out as deltas).
    Finished(ChatResponse),
}

/// An LLM answer being streamed, pulled a piece at a time; dropping it abandons the call.
pub trait ModelStream {
    fn next(&mut self, wait_ms: u32) -> Result<ModelPoll, LlmError>;
}

/// Which tools the LLM is offered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Toolset {
    /// Questions: graph tools and document search.
    Query,
    /// Actions: the above, the read-only action tools and the plan.
    Action,
}

/// The tools the ReAct loop calls; `propose_action_plan` records a plan instead of
/// running anything.
pub trait AgentTools: ToolRunner {
    fn specs(&mut self, set: Toolset) -> Vec<ToolSpec>;
    /// The plan the LLM proposed during the loop, if any.
    fn take_plan(&mut self) -> Option<ActionPlan>;
    /// Display names of a plan's targets (best effort: unnamed ids are left out).
    fn entity_names(&mut self, entity_type: &str, ids: &[String]) -> HashMap<String, String>;
}

pub trait Router {
    fn route(&mut self, request: &RouteRequest) -> Result<RouteDecision, Error>;
}

/// A summary being written, pulled a piece at a time.
pub trait AnswerStream {
    fn next(&mut self, wait_ms: u32) -> Result<StreamPoll, Error>;
}

pub trait Summariser {
    fn summarise(&mut self, request: &SummaryRequest) -> Result<Answer, Error>;
    /// `Err` when the stream could not start (the caller falls back to [`Self::summarise`]).
    fn start(&mut self, request: &SummaryRequest) -> Result<Box<dyn AnswerStream>, Error>;
}

/// A batch in flight, pulled until it finishes.
pub trait Batch {
    fn total(&self) -> u32;
    fn next(&mut self, wait_ms: u32) -> Result<BatchPoll, Error>;
    /// Starts no new chunk; the one running finishes and is reported.
    fn cancel(&mut self);
}

/// The action executor: it decides whether a plan may run and whether a person must
/// approve it first, under the same rules as the direct API.
pub trait Executor {
    fn plan(&mut self, caller: &Caller, request: &PlanRequest) -> Result<PlanDecision, Error>;
    fn start_batch(&mut self, request: &ExecutionRequest) -> Result<Box<dyn Batch>, Error>;
    fn get_approval(&mut self, token: &str) -> Result<ApprovalInfo, Error>;
    fn reject_plan(&mut self, caller: &Caller, token: &str) -> Result<ApprovalInfo, Error>;
}

pub trait Clock {
    /// Now, RFC 3339.
    fn now(&self) -> String;
    /// A suffix that sorts in time order. Memory no longer names turns by time (they take
    /// numbered slots, [`crate::memory::append`]); nothing here calls it any more.
    fn ordered_suffix(&self) -> String;
    /// A fresh id with `prefix`.
    fn unique_id(&self, prefix: &str) -> String;
}

/// The turn's clock: a [`Clock`] that also reads a monotonic clock, which the turn's
/// deadline is measured on (tests move a fake one on).
pub trait DeadlineClock: Clock {
    /// Milliseconds of a monotonic clock.
    fn monotonic_ms(&self) -> u64;
}

/// The graph's read-your-writes chain for this request (see the dispatcher's `causal`).
pub trait Bookmarks {
    fn resume(&mut self, bookmarks: Vec<String>);
    fn current(&self) -> Vec<String>;
}

/// Who is asking, as the turn needs to know it.
#[derive(Debug, Clone)]
pub struct Actor {
    pub caller: Caller,
    /// May run actions (`actions:execute`): only then are action tools offered.
    pub may_act: bool,
    /// May use every conversation (`conversations:all`).
    pub admin: bool,
}

/// Everything a turn talks to.
pub struct Ports<'a> {
    pub kv: &'a dyn Kv,
    pub model: &'a mut dyn AgentModel,
    pub tools: &'a mut dyn AgentTools,
    pub router: &'a mut dyn Router,
    pub summariser: &'a mut dyn Summariser,
    pub executor: &'a mut dyn Executor,
    pub sink: &'a mut dyn EventSink,
    pub clock: &'a dyn DeadlineClock,
    pub chain: &'a mut dyn Bookmarks,
}
