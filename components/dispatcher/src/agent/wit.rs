//! The turn's ports bound to the other components over WIT (each graph call inside the
//! request's bookmark chain, `crate::causal`; the router and summariser calls inside the
//! request's trace, `crate::telemetry::component_call`), and to the chain itself.

use kg_agent_core::turn::ports::{AnswerStream, Batch, Bookmarks, Executor, Router, Summariser};
use kg_agent_core::turn::{intent_name, mode_name};
use kg_wit::kg::action_executor::action_executor::{
    self as executor, ApprovalInfo, BatchPoll, BatchRun, ExecutionRequest, PlanDecision,
    PlanRequest,
};
use kg_wit::kg::router::router::{self, RouteDecision, RouteRequest};
use kg_wit::kg::summariser::summariser::{self, Answer, StreamPoll, SummaryRequest};
use kg_wit::types::{Caller, Error};

pub struct WitRouter;

impl Router for WitRouter {
    fn route(&mut self, request: &RouteRequest) -> Result<RouteDecision, Error> {
        // The route decision on the router's span (never the rewritten question: content).
        crate::telemetry::component_call_described(
            "router",
            router::use_trace_context,
            router::take_spans,
            || router::route(request),
            |span, answer| {
                if let Ok(decision) = answer {
                    span.set("kg.route.intent", intent_name(decision.intent));
                    span.set("kg.route.method", mode_name(decision.method));
                    span.set("kg.route.confidence", f64::from(decision.confidence));
                }
            },
        )
    }
}

pub struct WitSummariser;

struct WitAnswerStream(summariser::AnswerStream);

impl AnswerStream for WitAnswerStream {
    fn next(&mut self, wait_ms: u32) -> Result<StreamPoll, Error> {
        // Each pull is a span: the summariser's LLM call finishes within one of them.
        crate::telemetry::component_call(
            "summariser",
            summariser::use_trace_context,
            summariser::take_spans,
            || self.0.next(wait_ms),
        )
    }
}

impl Summariser for WitSummariser {
    fn summarise(&mut self, request: &SummaryRequest) -> Result<Answer, Error> {
        crate::telemetry::component_call(
            "summariser",
            summariser::use_trace_context,
            summariser::take_spans,
            || summariser::summarise(request),
        )
    }
    fn start(&mut self, request: &SummaryRequest) -> Result<Box<dyn AnswerStream>, Error> {
        let stream = crate::telemetry::component_call(
            "summariser",
            summariser::use_trace_context,
            summariser::take_spans,
            || summariser::start(request),
        )?;
        Ok(Box::new(WitAnswerStream(stream)))
    }
}

pub struct WitExecutor;

/// A batch in flight, with the model's view its reports are withheld for (the agent's
/// reports reach the model as well as the caller), worked out once per batch.
struct WitBatch(BatchRun, Option<kg_graph_profile::View>);

impl Batch for WitBatch {
    fn total(&self) -> u32 {
        self.0.total()
    }
    fn next(&mut self, wait_ms: u32) -> Result<BatchPoll, Error> {
        let mut poll = crate::causal::executor(|| self.0.next(wait_ms))?;
        crate::audience::withhold_in_poll(&mut poll, self.1.as_ref());
        Ok(poll)
    }
    fn cancel(&mut self) {
        self.0.cancel();
    }
}

impl Executor for WitExecutor {
    fn plan(&mut self, caller: &Caller, request: &PlanRequest) -> Result<PlanDecision, Error> {
        crate::causal::executor(|| executor::plan(caller, request))
    }
    fn start_batch(&mut self, request: &ExecutionRequest) -> Result<Box<dyn Batch>, Error> {
        let run = crate::causal::executor(|| executor::start_batch(request))?;
        let view = crate::audience::for_model(crate::audience::view);
        Ok(Box::new(WitBatch(run, view)))
    }
    fn get_approval(&mut self, token: &str) -> Result<ApprovalInfo, Error> {
        crate::causal::executor(|| executor::get_approval(token))
    }
    fn reject_plan(&mut self, caller: &Caller, token: &str) -> Result<ApprovalInfo, Error> {
        crate::causal::executor(|| executor::reject_plan(caller, token))
    }
}

/// The request's bookmark chain (`crate::causal`).
pub struct CausalChain;

impl Bookmarks for CausalChain {
    fn resume(&mut self, bookmarks: Vec<String>) {
        crate::causal::resume(bookmarks);
    }
    fn current(&self) -> Vec<String> {
        crate::causal::current()
    }
}
