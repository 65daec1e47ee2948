//! Rules, LLM or both, then the safety rules that hold whatever decided.

use crate::decision::{Decision, Intent, Mode};
use crate::followup::{is_follow_up, rewrite_by_rule};
use crate::llm_prompt::{parse_verdict, routing_request};
use crate::rules::{clarifying_question, classify};
use kg_wit::types::Message;
use llm_client::Chat;

/// Hybrid routing trusts rules at or above this confidence and asks the LLM below it.
pub const RULE_CONFIDENT: f32 = 0.85;
/// An `answer` (no tools) below this confidence becomes a `query` (seed 002: a missed
/// question costs more than an unneeded lookup).
pub const ANSWER_ESCALATION_THRESHOLD: f32 = 0.8;

/// Routes `message`. `llm` is `None` when no LLM is configured; LLM modes then fall back
/// to rules and say so in `warnings`.
pub fn route(message: &str, history: &[Message], mode: Mode, llm: Option<&dyn Chat>) -> Decision {
    let rules = classify(message);
    let follow_up = is_follow_up(message, history);
    let decision = match mode {
        Mode::Rule => by_rules(rules, message, history, vec![]),
        Mode::Hybrid if rules.confidence >= RULE_CONFIDENT && !follow_up => {
            by_rules(rules, message, history, vec![])
        }
        Mode::Llm | Mode::Hybrid => match ask(llm, message, history) {
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
    settle(decision, message)
}

fn ask(
    llm: Option<&dyn Chat>,
    message: &str,
    history: &[Message],
) -> Result<crate::LlmVerdict, String> {
    let llm = llm.ok_or("LLM not configured")?;
    let answer = llm
        .chat(&routing_request(message, history))
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
fn settle(mut decision: Decision, message: &str) -> Decision {
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
                .unwrap_or_else(|| clarifying_question(message)),
        );
    } else {
        decision.clarification = None;
    }
    if decision.refined_question.trim().is_empty() {
        decision.refined_question = message.trim().to_string();
    }
    decision
}
