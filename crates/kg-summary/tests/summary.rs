//! Synthesis with a scripted LLM, the deterministic batch report, citations and language.

use kg_summary::{
    Evidence, Language, SummaryInput, batch_report, cite, detect_language, known_references,
    summarise,
};
use kg_wit::types::{BatchSummary, EntityOutcome, Failure, FailureReason};
use llm_client::{Chat, ChatRequest, ChatResponse, LlmError, StreamEvent, Usage};
use proptest::prelude::*;
use std::cell::RefCell;

/// Streams its answer in three-character deltas, or fails; records the prompt.
struct ScriptedLlm {
    answer: Result<String, LlmError>,
    prompt: RefCell<Option<ChatRequest>>,
}

impl Chat for ScriptedLlm {
    fn chat(&self, _: &ChatRequest) -> Result<ChatResponse, LlmError> {
        unreachable!("the summariser streams")
    }

    fn chat_stream(
        &self,
        request: &ChatRequest,
        on_event: &mut dyn FnMut(&StreamEvent),
    ) -> Result<ChatResponse, LlmError> {
        *self.prompt.borrow_mut() = Some(request.clone());
        let text = self.answer.clone()?;
        let chars: Vec<char> = text.chars().collect();
        for piece in chars.chunks(3) {
            on_event(&StreamEvent::Content(piece.iter().collect()));
        }
        Ok(ChatResponse {
            content: text,
            usage: Some(Usage {
                prompt_tokens: 100,
                completion_tokens: 20,
            }),
            ..Default::default()
        })
    }
}

fn llm(answer: Result<&str, LlmError>) -> ScriptedLlm {
    ScriptedLlm {
        answer: answer.map(str::to_string),
        prompt: RefCell::new(None),
    }
}

fn outcome(id: &str, failure: Option<(FailureReason, &str, Option<&str>)>) -> EntityOutcome {
    EntityOutcome {
        entity_id: id.into(),
        success: failure.is_none(),
        changes: vec![],
        failure: failure.map(|(reason, message, precondition)| Failure {
            reason,
            message: message.into(),
            precondition: precondition.map(str::to_string),
        }),
        log_id: None,
        replayed: false,
        undone: None,
    }
}

fn batch() -> BatchSummary {
    BatchSummary {
        entity_type: "PurchaseOrder".into(),
        action_name: "makePayment".into(),
        total: 4,
        succeeded: 2,
        failed: 2,
        unknown: 0,
        successes: vec![outcome("PO-0001", None), outcome("PO-0002", None)],
        failures: vec![
            outcome(
                "PO-0003",
                Some((
                    FailureReason::PreconditionFailed,
                    "Insufficient funds",
                    Some("sufficientFunds"),
                )),
            ),
            outcome(
                "PO-0015",
                Some((
                    FailureReason::PreconditionFailed,
                    "Order already paid",
                    Some("notPaid"),
                )),
            ),
        ],
        duration_ms: 120,
    }
}

fn evidence() -> Vec<Evidence> {
    vec![
        Evidence {
            source: "search_instances".into(),
            summary: "1 supplier".into(),
            data: r#"{"results": [{"id": "SUP-001", "name": "ACME", "labels": ["Supplier"]}, {"id": "PO-12", "name": "order 12"}]}"#.into(),
        },
        Evidence { source: "document:payment-policy".into(), summary: "policy chunk".into(), data: r#"{"chunk_id": "payment-policy#3"}"#.into() },
    ]
}

fn input(question: &str) -> SummaryInput {
    SummaryInput {
        question: question.into(),
        history: vec![],
        evidence: evidence(),
        batch: None,
        language: None,
        note: None,
    }
}

#[test]
fn the_answer_streams_and_cites_only_what_the_evidence_holds() {
    let llm = llm(Ok(
        "ACME (SUP-001) is bound by payment-policy; PO-9999 and PO-1 do not exist.",
    ));
    let mut deltas = String::new();
    let summary = summarise(&input("Who is ACME?"), Ok(&llm), &mut |d| {
        deltas.push_str(d)
    })
    .unwrap();
    assert_eq!(deltas, summary.text);
    assert!(summary.from_llm);
    assert_eq!(summary.usage.map(|u| u.completion_tokens), Some(20));
    let refs: Vec<(&str, &str)> = summary
        .citations
        .iter()
        .map(|c| (c.reference.as_str(), c.label.as_str()))
        .collect();
    assert_eq!(
        refs,
        [("SUP-001", "ACME"), ("payment-policy", "payment-policy")]
    );
    let prompt = llm.prompt.borrow().clone().unwrap();
    let user = prompt
        .messages
        .last()
        .and_then(|m| m.content.clone())
        .unwrap();
    assert!(
        user.contains("SUP-001") && user.contains("document:payment-policy"),
        "{user}"
    );
    let system = prompt.messages[0].content.clone().unwrap();
    assert!(
        system.contains("Answer in English") && system.contains("Never invent"),
        "{system}"
    );
}

#[test]
fn the_answer_is_in_the_users_language() {
    let llm = llm(Ok("ACME 有 24 个订单。"));
    let summary = summarise(&input("供应商ACME有多少订单？"), Ok(&llm), &mut |_| {}).unwrap();
    assert_eq!(summary.language, Language::Chinese);
    let system = llm.prompt.borrow().clone().unwrap().messages[0]
        .content
        .clone()
        .unwrap();
    // The Chinese prompt (prompts/zh/summariser.txt), which asks for Simplified Chinese.
    assert!(system.contains("简体中文"), "{system}");
    let mut asked = input("How many orders?");
    asked.language = Some("zh-CN".into());
    assert_eq!(
        summarise(&asked, Ok(&llm), &mut |_| {}).unwrap().language,
        Language::Chinese
    );
}

#[test]
fn without_the_llm_a_batch_gets_its_factual_report() {
    let mut request = input("把供应商ACME的全部订单进行付款");
    request.batch = Some(batch());
    let down = LlmError::Unavailable {
        message: "refused".into(),
        attempts: 3,
    };
    let mut deltas = String::new();
    let summary = summarise(&request, Err(down.clone()), &mut |d| deltas.push_str(d)).unwrap();
    assert!(!summary.from_llm);
    assert_eq!(deltas, summary.text);
    assert!(
        summary
            .warning
            .as_deref()
            .is_some_and(|w| w.contains("refused"))
    );
    assert_eq!(summary.text, batch_report(&batch(), Language::Chinese));
    let cited: Vec<&str> = summary
        .citations
        .iter()
        .map(|c| c.reference.as_str())
        .collect();
    assert_eq!(cited, ["PO-0003", "PO-0015", "PO-0001", "PO-0002"]);
    // A failing LLM is also replaced, not only a missing one.
    let failing = llm(Err(LlmError::Upstream {
        status: 500,
        body: "x".into(),
        attempts: 3,
    }));
    assert!(
        !summarise(&request, Ok(&failing), &mut |_| {})
            .unwrap()
            .from_llm
    );
}

#[test]
fn without_the_llm_and_without_a_batch_the_error_is_returned() {
    let e = summarise(
        &input("Who is ACME?"),
        Err(LlmError::NotConfigured("no model".into())),
        &mut |_| {},
    )
    .unwrap_err();
    assert!(matches!(e, LlmError::NotConfigured(_)));
}

#[test]
fn batch_reports_in_both_languages() {
    assert_eq!(
        batch_report(&batch(), Language::Chinese),
        "已完成对 4 个 PurchaseOrder 的 makePayment 处理。\n成功: 2 个\n失败: 2 个\n失败明细:\n\
- PO-0003: Insufficient funds (前置条件不满足: sufficientFunds)\n\
- PO-0015: Order already paid (前置条件不满足: notPaid)\n成功: PO-0001, PO-0002\n"
    );
    assert_eq!(
        batch_report(&batch(), Language::English),
        "Finished makePayment on 4 PurchaseOrder entities.\nSucceeded: 2\nFailed: 2\nFailures:\n\
- PO-0003: Insufficient funds (precondition failed: sufficientFunds)\n\
- PO-0015: Order already paid (precondition failed: notPaid)\nSucceeded: PO-0001, PO-0002\n"
    );
}

#[test]
fn language_by_script() {
    assert_eq!(
        detect_language("How many orders does ACME have?"),
        Language::English
    );
    assert_eq!(
        detect_language("订单PO-0012的供应商是谁？"),
        Language::Chinese
    );
    assert_eq!(
        detect_language("付款 PO-0001 PO-0002 PO-0003"),
        Language::Chinese
    );
    assert_eq!(detect_language(""), Language::English);
}

proptest! {
    /// Whatever the LLM writes, every citation is a reference the evidence holds.
    #[test]
    fn citations_never_leave_the_evidence(text in "(SUP-00[0-9]|PO-1[0-9]?|payment-policy|[a-z ]{1,8}|\\PC{0,6})*") {
        let known = known_references(&evidence(), None);
        for c in cite(&text, &known) {
            prop_assert!(known.contains(&c), "{:?}", c);
            prop_assert!(text.contains(&c.reference));
        }
    }

    /// The report states the totals and names every failure with its message.
    #[test]
    fn reports_name_every_failure(n_ok in 0usize..80, n_fail in 0usize..20, zh in any::<bool>()) {
        let successes: Vec<_> = (0..n_ok).map(|i| outcome(&format!("PO-{i:04}"), None)).collect();
        let failures: Vec<_> = (0..n_fail).map(|i| outcome(&format!("PO-9{i:03}"), Some((FailureReason::Conflict, "changed concurrently", None)))).collect();
        let batch = BatchSummary {
            entity_type: "PurchaseOrder".into(), action_name: "approve".into(),
            total: (n_ok + n_fail) as u32, succeeded: n_ok as u32, failed: n_fail as u32, unknown: 0,
            successes, failures, duration_ms: 1,
        };
        let report = batch_report(&batch, if zh { Language::Chinese } else { Language::English });
        let total = (n_ok + n_fail).to_string();
        prop_assert!(report.contains(&total));
        for f in &batch.failures {
            let line = format!("- {}: changed concurrently", f.entity_id);
            prop_assert!(report.contains(&line));
        }
        let more = n_ok.saturating_sub(50).to_string();
        prop_assert!(n_ok <= 50 || report.contains(&more));
    }
}

/// A given `summariser` prompt (the component's, loaded from prompts/) is the system
/// message, with the answer's language filled in.
#[test]
fn a_given_prompt_is_the_system_message_with_the_language() {
    let dir = std::env::temp_dir().join(format!("kg-summary-prompt-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("zh")).unwrap();
    std::fs::write(
        dir.join("zh/summariser.txt"),
        "Reply in {{ language }}, tersely.\n",
    )
    .unwrap();
    let prompt = kg_prompts::load_from(&dir, kg_prompts::SUMMARISER, kg_prompts::Lang::Zh).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let request = kg_summary::summary_request_with(
        &prompt,
        &input("供应商ACME有多少订单？"),
        kg_summary::Language::Chinese,
        None,
    );
    assert_eq!(
        request.messages[0].content.as_deref(),
        Some("Reply in Simplified Chinese, tersely.")
    );
}
