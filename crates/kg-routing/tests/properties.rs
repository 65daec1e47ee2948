//! Router properties (seed 002 property 6 and the fallback rules), for any wording.

use kg_routing::{ANSWER_ESCALATION_THRESHOLD, Intent, Mode, route};
use kg_wit::types::{Message, Role};
use llm_client::{Chat, ChatRequest, ChatResponse, LlmError};
use proptest::prelude::*;

const GREETINGS: &[&str] = &[
    "hello",
    "hi",
    "hey",
    "good morning",
    "thanks",
    "thank you",
    "how are you",
    "bye",
    "你好",
    "您好",
    "谢谢",
    "早上好",
    "再见",
    "你是谁",
    "多谢",
];

/// An LLM that answers whatever the test says, or fails.
struct FixedLlm(Result<String, ()>);

impl Chat for FixedLlm {
    fn chat(&self, _: &ChatRequest) -> Result<ChatResponse, LlmError> {
        match &self.0 {
            Ok(content) => Ok(ChatResponse {
                content: content.clone(),
                ..Default::default()
            }),
            Err(()) => Err(LlmError::Timeout {
                message: "slow".into(),
                attempts: 3,
            }),
        }
    }
}

fn decorated(base: &str, upper: bool, before: &str, after: &str) -> String {
    let base = if upper {
        base.to_uppercase()
    } else {
        base.to_string()
    };
    format!("{before}{base}{after}")
}

fn any_verdict() -> impl Strategy<Value = Result<String, ()>> {
    prop_oneof![
        Just(Err(())),
        (
            "(query|action|document|answer|clarify|nonsense)",
            -1.0f64..2.0
        )
            .prop_map(|(i, c)| Ok(format!(
                r#"{{"intent": "{i}", "confidence": {c}, "reason": "r"}}"#
            ))),
        ".{0,40}".prop_map(Ok),
    ]
}

proptest! {
    /// Property 6: greetings and small talk are answered directly, in rule and hybrid
    /// mode, whatever the LLM would have said.
    #[test]
    fn small_talk_bypasses_the_tools(
        which in 0..GREETINGS.len(),
        upper in any::<bool>(),
        before in "[ \t]{0,2}",
        after in "[ !.?！？。~]{0,3}",
        verdict in any_verdict(),
        hybrid in any::<bool>(),
    ) {
        let message = decorated(GREETINGS[which], upper, &before, &after);
        let llm = FixedLlm(verdict);
        let mode = if hybrid { Mode::Hybrid } else { Mode::Rule };
        let d = route(&message, &[], mode, Some(&llm));
        prop_assert_eq!(d.intent, Intent::Answer, "{}", message);
        prop_assert!(d.confidence >= ANSWER_ESCALATION_THRESHOLD);
    }

    /// The escalation rule holds for every decision: an `answer` is never below 0.8, the
    /// confidence is within 0..=1, clarify carries a question, nothing is empty.
    #[test]
    fn every_decision_is_settled(
        message in "\\PC{0,60}",
        verdict in any_verdict(),
        mode in prop_oneof![Just(Mode::Rule), Just(Mode::Llm), Just(Mode::Hybrid)],
        earlier in proptest::option::of("\\PC{1,40}"),
    ) {
        let history: Vec<Message> = earlier.into_iter().map(|c| Message { role: Role::User, content: c, name: None }).collect();
        let llm = FixedLlm(verdict);
        let d = route(&message, &history, mode, Some(&llm));
        prop_assert!((0.0..=1.0).contains(&d.confidence));
        prop_assert!(!(d.intent == Intent::Answer && d.confidence < ANSWER_ESCALATION_THRESHOLD));
        prop_assert_eq!(d.intent == Intent::Clarify, d.clarification.is_some());
        prop_assert!(!d.reason.is_empty());
        prop_assert!(message.trim().is_empty() || !d.refined_question.trim().is_empty());
    }

    /// An LLM that fails never fails the routing: rules decide and a warning says why.
    #[test]
    fn llm_failure_is_never_fatal(message in "\\PC{1,60}", hybrid in any::<bool>()) {
        let mode = if hybrid { Mode::Hybrid } else { Mode::Llm };
        let d = route(&message, &[], mode, Some(&FixedLlm(Err(()))));
        prop_assert_eq!(d.method, Mode::Rule);
        if mode == Mode::Llm {
            prop_assert!(d.warnings.iter().any(|w| w.contains("fell back to rules")));
        }
    }
}
