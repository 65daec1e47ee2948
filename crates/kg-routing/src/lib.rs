//! Intent routing (seed 002 §1, seed 004): rules first (greetings, thanks and small talk in
//! Chinese and English, obvious action verbs, document cues), the LLM when the rules are not
//! confident, a low-confidence `answer` escalated to `query`, rules again when the LLM
//! fails, and follow-up questions rewritten into standalone ones.

mod decision;
mod followup;
mod lexicon;
mod llm_prompt;
mod router;
mod rules;
mod text;

pub use decision::{Decision, Intent, Method, Mode};
pub use followup::{is_follow_up, rewrite_by_rule};
pub use llm_prompt::{LlmVerdict, parse_verdict, routing_request, routing_request_with};
pub use router::{ANSWER_ESCALATION_THRESHOLD, RULE_CONFIDENT, RoutingPrompts, route, route_with};
pub use rules::classify;
