//! Hybrid routing, LLM verdicts, fallbacks and follow-up rewriting, with a scripted LLM.

use kg_routing::{Intent, Mode, parse_verdict, route};
use kg_wit::types::{Message, Role};
use llm_client::{Chat, ChatRequest, ChatResponse, LlmError};
use std::cell::RefCell;

/// Answers every call with the next scripted outcome and records the prompts.
struct ScriptedLlm {
    answers: RefCell<Vec<Result<String, LlmError>>>,
    prompts: RefCell<Vec<ChatRequest>>,
}

impl ScriptedLlm {
    fn new(answers: Vec<Result<&str, LlmError>>) -> Self {
        ScriptedLlm {
            answers: RefCell::new(
                answers
                    .into_iter()
                    .rev()
                    .map(|a| a.map(str::to_string))
                    .collect(),
            ),
            prompts: RefCell::new(vec![]),
        }
    }

    fn calls(&self) -> usize {
        self.prompts.borrow().len()
    }

    fn last_user_prompt(&self) -> String {
        self.prompts
            .borrow()
            .last()
            .and_then(|r| r.messages.last())
            .and_then(|m| m.content.clone())
            .unwrap_or_default()
    }
}

impl Chat for ScriptedLlm {
    fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, LlmError> {
        self.prompts.borrow_mut().push(request.clone());
        let next = self
            .answers
            .borrow_mut()
            .pop()
            .expect("a scripted answer per call");
        next.map(|content| ChatResponse {
            content,
            ..Default::default()
        })
    }
}

fn user(text: &str) -> Message {
    Message {
        role: Role::User,
        content: text.into(),
        name: None,
    }
}

fn assistant(text: &str) -> Message {
    Message {
        role: Role::Assistant,
        content: text.into(),
        name: None,
    }
}

fn down() -> LlmError {
    LlmError::Unavailable {
        message: "connection refused".into(),
        attempts: 3,
    }
}

#[test]
fn confident_rules_skip_the_llm_in_hybrid_mode() {
    let llm = ScriptedLlm::new(vec![]);
    let d = route("你好", &[], Mode::Hybrid, Some(&llm));
    assert_eq!((d.intent, d.method), (Intent::Answer, Mode::Rule));
    assert_eq!(llm.calls(), 0);
}

#[test]
fn unsure_rules_ask_the_llm_and_agreement_is_hybrid() {
    let llm = ScriptedLlm::new(vec![Ok(
        r#"{"intent": "query", "confidence": 0.9, "reason": "asks for data", "refined_question": "What did ACME deliver last month?", "clarification": null}"#,
    )]);
    let d = route(
        "what did ACME deliver last month",
        &[],
        Mode::Hybrid,
        Some(&llm),
    );
    assert_eq!(llm.calls(), 1);
    assert_eq!((d.intent, d.method), (Intent::Query, Mode::Hybrid));
    assert!((d.confidence - 0.9).abs() < 1e-6);
    assert!(d.reason.contains("asks for data"), "{}", d.reason);
    assert_eq!(d.refined_question, "What did ACME deliver last month?");
    let request = &llm.prompts.borrow()[0];
    assert_eq!(
        request.response_format,
        llm_client::ResponseFormat::JsonObject
    );
}

#[test]
fn llm_mode_always_asks_and_may_overrule_the_rules() {
    let llm = ScriptedLlm::new(vec![Ok(r#"Sure! ```json
{"intent": "document_qa", "confidence": "85%", "reason": "asks about a rule"}
```"#)]);
    let d = route(
        "How many orders does ACME have?",
        &[],
        Mode::Llm,
        Some(&llm),
    );
    assert_eq!((d.intent, d.method), (Intent::Document, Mode::Llm));
    assert!((d.confidence - 0.85).abs() < 1e-6);
    assert_eq!(d.refined_question, "How many orders does ACME have?");
}

#[test]
fn llm_failure_falls_back_to_rules_and_says_so() {
    for failure in [
        Err(down()),
        Ok("I think it is a query"),
        Ok(r#"{"intent": "dance"}"#),
    ] {
        let llm = ScriptedLlm::new(vec![failure]);
        let d = route("pay order PO-0001", &[], Mode::Llm, Some(&llm));
        assert_eq!((d.intent, d.method), (Intent::Action, Mode::Rule));
        assert!(
            d.warnings.iter().any(|w| w.contains("fell back to rules")),
            "{:?}",
            d.warnings
        );
    }
    let d = route("what happened with ACME", &[], Mode::Hybrid, None);
    assert!(
        d.warnings.iter().any(|w| w.contains("LLM not configured")),
        "{:?}",
        d.warnings
    );
    assert_eq!(d.method, Mode::Rule);
}

#[test]
fn a_low_confidence_answer_from_the_llm_escalates_to_query() {
    let llm = ScriptedLlm::new(vec![Ok(
        r#"{"intent": "answer", "confidence": 0.55, "reason": "chit-chat?"}"#,
    )]);
    let d = route("tell me something about ACME", &[], Mode::Llm, Some(&llm));
    assert_eq!(d.intent, Intent::Query);
    assert!(
        d.warnings.iter().any(|w| w.contains("escalated to query")),
        "{:?}",
        d.warnings
    );
}

#[test]
fn clarify_always_carries_a_question() {
    let llm = ScriptedLlm::new(vec![Ok(
        r#"{"intent": "clarify", "confidence": 0.7, "reason": "which one?"}"#,
    )]);
    let d = route("do it for that one", &[], Mode::Llm, Some(&llm));
    assert_eq!(d.intent, Intent::Clarify);
    assert!(d.clarification.as_deref().is_some_and(|q| !q.is_empty()));
    let llm = ScriptedLlm::new(vec![Ok(
        r#"{"intent": "clarify", "confidence": 0.7, "reason": "x", "clarification": "Which order?"}"#,
    )]);
    let d = route("do it for that one", &[], Mode::Llm, Some(&llm));
    assert_eq!(d.clarification.as_deref(), Some("Which order?"));
}

#[test]
fn follow_ups_are_rewritten_by_the_llm_from_the_history() {
    let history = [
        user("Which orders does supplier ACME have?"),
        assistant("ACME has 24 orders: …"),
    ];
    let llm = ScriptedLlm::new(vec![Ok(
        r#"{"intent": "query", "confidence": 0.92, "reason": "follow-up", "refined_question": "What are the invoices of supplier ACME's orders?"}"#,
    )]);
    // Rules alone are confident ("invoices" is a data word), but a follow-up still goes to the LLM.
    let d = route("and their invoices?", &history, Mode::Hybrid, Some(&llm));
    assert_eq!(llm.calls(), 1);
    assert_eq!(
        d.refined_question,
        "What are the invoices of supplier ACME's orders?"
    );
    let prompt = llm.last_user_prompt();
    assert!(
        prompt.contains("user: Which orders does supplier ACME have?"),
        "{prompt}"
    );
    assert!(prompt.contains("assistant: ACME has 24 orders"), "{prompt}");
    assert!(prompt.ends_with("and their invoices?"), "{prompt}");
}

#[test]
fn without_the_llm_a_follow_up_carries_the_previous_subject() {
    let history = [
        user("Which orders does supplier ACME have?"),
        assistant("24 orders."),
    ];
    let d = route(
        "and their invoices?",
        &history,
        Mode::Hybrid,
        Some(&ScriptedLlm::new(vec![Err(down())])),
    );
    assert!(
        d.refined_question.contains("ACME"),
        "{}",
        d.refined_question
    );
    assert!(d.refined_question.starts_with("and their invoices?"));

    let history = [user("订单PO-0012的供应商是谁？")];
    let d = route("那它的发票呢？", &history, Mode::Rule, None);
    assert!(
        d.refined_question.contains("PO-0012"),
        "{}",
        d.refined_question
    );

    // A standalone question is left as it is.
    let d = route("How many suppliers are there?", &history, Mode::Rule, None);
    assert_eq!(d.refined_question, "How many suppliers are there?");
}

#[test]
fn verdict_parsing_tolerates_prose_and_refuses_nonsense() {
    let v = parse_verdict("Here you go: {\"intent\": \"Small Talk\", \"confidence\": 2}").unwrap();
    assert_eq!(v.intent, Intent::Answer);
    assert!(v.confidence <= 1.0);
    assert!(parse_verdict("{\"confidence\": 0.9}").is_err());
    assert!(parse_verdict("no json { here").is_err());
    let v = parse_verdict("{\"intent\":\"action\",\"confidence\":\"high\"}").unwrap();
    assert_eq!(v.confidence, 0.5);
}

/// Given prompts (the router component's, loaded from prompts/): the system prompt is
/// what the LLM receives, and the clarification is what a `clarify` decision asks.
#[test]
fn given_prompts_are_sent_and_asked() {
    let prompts = kg_routing::RoutingPrompts {
        system: "Route for the tuned domain.".into(),
        clarification: "Which supplier do you mean?".into(),
    };
    let llm = ScriptedLlm::new(vec![Ok(
        r#"{"intent": "clarify", "confidence": 0.9, "reason": "vague"}"#,
    )]);
    let decision = kg_routing::route_with("hmm", &[], Mode::Llm, Some(&llm), &prompts);
    assert_eq!(decision.intent, Intent::Clarify);
    assert_eq!(
        decision.clarification.as_deref(),
        Some("Which supplier do you mean?")
    );
    let sent = llm.prompts.borrow()[0].messages[0].content.clone();
    assert_eq!(sent.as_deref(), Some("Route for the tuned domain."));
    // Rules alone (an empty message is `clarify` by rule) ask the given question too.
    let by_rules = kg_routing::route_with("", &[], Mode::Rule, None, &prompts);
    assert_eq!(
        by_rules.clarification.as_deref(),
        Some("Which supplier do you mean?")
    );
}

/// The router's request answered by Qwen2.5-Coder-0.5B on llama-server (JSON mode, which
/// llama-server enforces with a grammar): a query, with a `clarification` it was told to
/// leave null, which only a `clarify` verdict uses.
#[test]
fn a_small_models_verdict_as_llama_server_wrote_it() {
    let v = parse_verdict(r#"{"intent": "query", "confidence": 0.9, "reason": "querying for order status by supplier ACME", "refined_question": "How many orders does ACME have, by status?", "clarification": "How many orders does ACME have, by status?"}"#).unwrap();
    assert_eq!(v.intent, Intent::Query);
    assert_eq!(
        v.refined_question.as_deref(),
        Some("How many orders does ACME have, by status?")
    );
    let request = kg_routing::routing_request("How many orders does ACME have, by status?", &[]);
    assert_eq!(request.max_tokens, Some(400));
}
