//! Rules, LLM or both, then the safety rules that hold whatever decided.

use crate::decision::{Decision, Intent, Mode};
use crate::followup::{is_follow_up, rewrite_by_rule};
use crate::llm_prompt::{parse_verdict, routing_request_with};
use crate::rules::{clarifying_question, classify};
use crate::text::has_han;
use kg_wit::types::Message;
use llm_client::Chat;

/// Hybrid routing trusts rules at or above this confidence and asks the LLM below it.
pub const RULE_CONFIDENT: f32 = 0.85;
/// An `answer` (no tools) below this confidence becomes a `query` (seed 002: a missed
/// question costs more than an unneeded lookup).
pub const ANSWER_ESCALATION_THRESHOLD: f32 = 0.8;

/// Routes `message` with the built-in prompts. `llm` is `None` when no LLM is configured;
/// LLM modes then fall back to rules and say so in `warnings`.
pub fn route(message: &str, history: &[Message], mode: Mode, llm: Option<&dyn Chat>) -> Decision {
    route_with(
        message,
        history,
        mode,
        llm,
        &RoutingPrompts::built_in(message),
    )
}

/// The texts routing sends or answers: the router's system prompt and the question asked
/// when the message needs clarifying (both in the message's language).
#[derive(Debug, Clone, PartialEq)]
pub struct RoutingPrompts {
    pub system: String,
    pub clarification: String,
}

impl RoutingPrompts {
    /// The language prompts are chosen in: Chinese when the message has Han characters.
    pub fn lang(message: &str) -> kg_prompts::Lang {
        kg_prompts::Lang::chinese_if(has_han(message))
    }

    pub fn built_in(message: &str) -> RoutingPrompts {
        let lang = Self::lang(message);
        RoutingPrompts {
            system: kg_prompts::built_in_prompt(kg_prompts::ROUTER, lang).render(&[]),
            clarification: clarifying_question(message),
        }
    }

    /// From the mounted templates (`kg_prompts::load`): an error names the broken file.
    pub fn load(message: &str) -> Result<RoutingPrompts, kg_prompts::PromptError> {
        let lang = Self::lang(message);
        Ok(RoutingPrompts {
            system: kg_prompts::load(kg_prompts::ROUTER, lang)?.render(&[]),
            clarification: kg_prompts::load(kg_prompts::CLARIFICATION, lang)?.render(&[]),
        })
    }
}

/// `route` with given prompts.
pub fn route_with(
    message: &str,
    history: &[Message],
    mode: Mode,
    llm: Option<&dyn Chat>,
    prompts: &RoutingPrompts,
) -> Decision {
    let mut rules = classify(message);
    if rules.clarification.is_some() {
        rules.clarification = Some(prompts.clarification.clone());
    }
    let follow_up = is_follow_up(message, history);
    let decision = match mode {
        Mode::Rule => by_rules(rules, message, history, vec![]),
        Mode::Hybrid if rules.confidence >= RULE_CONFIDENT && !follow_up => {
            by_rules(rules, message, history, vec![])
        }
        Mode::Llm | Mode::Hybrid => match ask(llm, &prompts.system, message, history) {
            Ok(verdict) => {
                let agree = verdict.intent == rules.intent;
                let method = if mode == Mode::Hybrid && agree {
                    Mode::Hybrid
                } else {
                    Mode::Llm
                };
                let confidence = if agree {
                    verdict.confidence.max(rules.confidence)
                } else {
                    verdict.confidence
                };
                Decision {
                    intent: verdict.intent,
                    confidence,
                    method,
                    reason: if mode == Mode::Hybrid {
                        format!("LLM: {}; rules: {}", verdict.reason, rules.reason)
                    } else {
                        verdict.reason
                    },
                    refined_question: verdict
                        .refined_question
                        .unwrap_or_else(|| rewrite_by_rule(message, history)),
                    clarification: verdict.clarification,
                    warnings: vec![],
                }
            }
            Err(problem) => by_rules(
                rules,
                message,
                history,
                vec![format!("{problem}; fell back to rules")],
            ),
        },
    };
    settle(decision, &prompts.clarification, message)
}

fn ask(
    llm: Option<&dyn Chat>,
    system: &str,
    message: &str,
    history: &[Message],
) -> Result<crate::LlmVerdict, String> {
    let llm = llm.ok_or("LLM not configured")?;
    let answer = llm
        .chat(&routing_request_with(system, message, history))
        .map_err(|e| format!("LLM unavailable ({e})"))?;
    parse_verdict(&answer.content).map_err(|e| format!("LLM answer unusable ({e})"))
}

fn by_rules(
    rules: Decision,
    message: &str,
    history: &[Message],
    warnings: Vec<String>,
) -> Decision {
    Decision {
        refined_question: rewrite_by_rule(message, history),
        warnings,
        ..rules
    }
}

/// The invariants every decision leaves with: a low-confidence `answer` escalates to
/// `query`, `clarify` carries a question, the confidence is within 0..=1 and the refined
/// question is never empty.
fn settle(mut decision: Decision, clarification: &str, message: &str) -> Decision {
    decision.confidence = if decision.confidence.is_finite() {
        decision.confidence.clamp(0.0, 1.0)
    } else {
        0.0
    };
    if decision.intent == Intent::Answer && decision.confidence < ANSWER_ESCALATION_THRESHOLD {
        decision.warnings.push(format!(
            "answer at confidence {:.2} is below {ANSWER_ESCALATION_THRESHOLD}; escalated to query",
            decision.confidence
        ));
        decision.intent = Intent::Query;
    }
    if decision.intent == Intent::Clarify {
        decision.clarification = Some(
            decision
                .clarification
                .take()
                .unwrap_or_else(|| clarification.to_string()),
        );
    } else {
        decision.clarification = None;
    }
    if decision.refined_question.trim().is_empty() {
        decision.refined_question = message.trim().to_string();
    }
    decision
}
