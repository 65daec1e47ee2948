//! The router component: binds `kg:router/router` to kg-routing, with the LLM reached
//! through Spin outbound HTTP.

use kg_routing::{Decision, Intent as RoutedIntent, Mode};
use kg_wit::types::{ComponentStatus, Error, ErrorCode};

wit_bindgen::generate!({
    path: "../../wit",
    world: "router-component",
    with: { "kg:types/types@0.1.0": kg_wit::types },
});

use exports::kg::router::router::{Guest, Intent, RouteDecision, RouteRequest, RoutingMode};

/// Longest message routed; longer ones are refused before any LLM call.
const MAX_MESSAGE_CHARS: usize = 10_000;

struct Router;

impl Guest for Router {
    fn use_trace_context(traceparent: String) {
        kg_spin::telemetry::adopt(&traceparent, "router");
    }

    fn take_spans() -> String {
        kg_spin::telemetry::take_spans()
    }

    fn status() -> ComponentStatus {
        kg_spin::status(
            "router",
            env!("CARGO_PKG_VERSION"),
            vec![
                kg_spin::configuration_check(kg_spin::LLM_VARIABLES),
                kg_spin::llm_check(),
            ],
        )
    }

    fn route(request: RouteRequest) -> Result<RouteDecision, Error> {
        if request.message.chars().count() > MAX_MESSAGE_CHARS {
            return Err(Error::new(
                ErrorCode::InvalidArgument,
                format!("the message is longer than {MAX_MESSAGE_CHARS} characters"),
            ));
        }
        let mode = match request.mode {
            RoutingMode::Rule => Mode::Rule,
            RoutingMode::Llm => Mode::Llm,
            RoutingMode::Hybrid => Mode::Hybrid,
        };
        // The mounted templates (prompts/): a broken one refuses the request, naming it.
        let prompts = kg_routing::RoutingPrompts::load(&request.message)
            .map_err(|e| Error::new(ErrorCode::Internal, e.to_string()))?;
        // Rule mode never needs the LLM; otherwise a missing configuration becomes a
        // warning in the decision (rules decide), not an error.
        let client = match mode {
            Mode::Rule => None,
            Mode::Llm | Mode::Hybrid => kg_spin::llm_client().ok(),
        };
        let llm = client.as_ref().map(|c| c as &dyn llm_client::Chat);
        Ok(to_wit(kg_routing::route_with(
            &request.message,
            &request.history,
            mode,
            llm,
            &prompts,
        )))
    }
}

fn to_wit(decision: Decision) -> RouteDecision {
    RouteDecision {
        intent: match decision.intent {
            RoutedIntent::Query => Intent::Query,
            RoutedIntent::Action => Intent::Action,
            RoutedIntent::Document => Intent::Document,
            RoutedIntent::Answer => Intent::Answer,
            RoutedIntent::Clarify => Intent::Clarify,
        },
        confidence: decision.confidence,
        method: match decision.method {
            Mode::Rule => RoutingMode::Rule,
            Mode::Llm => RoutingMode::Llm,
            Mode::Hybrid => RoutingMode::Hybrid,
        },
        reason: decision.reason,
        refined_question: decision.refined_question,
        clarification: decision.clarification,
        warnings: decision.warnings,
    }
}

export!(Router);
