//! The rule classifier on the wording users actually send, in English and Chinese.

use kg_routing::{Intent, classify};

fn intent(message: &str) -> (Intent, f32) {
    let d = classify(message);
    (d.intent, d.confidence)
}

#[test]
fn greetings_thanks_and_small_talk_are_answers() {
    for m in [
        "hello",
        "Hi!",
        "hey there",
        "Good morning.",
        "thanks",
        "Thank you so much!!",
        "how are you?",
        "Who are you?",
        "what can you do",
        "bye",
        "你好",
        "您好！",
        "谢谢",
        "非常感谢～",
        "你是谁？",
        "再见",
        "hi, thanks!",
        "你好，谢谢",
    ] {
        let (i, c) = intent(m);
        assert_eq!(i, Intent::Answer, "{m}");
        assert!(c >= 0.9, "{m}: {c}");
    }
}

#[test]
fn obvious_actions_are_actions() {
    for m in [
        "Pay all approved orders of ACME",
        "please approve PO-0012",
        "Could you cancel order PO-0007?",
        "block supplier SUP-007",
        "reopen PO-0031",
        "把供应商ACME的全部订单进行付款",
        "请帮我审批订单PO-0012",
        "取消订单PO-0007",
        "冻结供应商SUP-007",
        "批准这些订单",
    ] {
        let (i, c) = intent(m);
        assert_eq!(i, Intent::Action, "{m}");
        assert!(c >= 0.85, "{m}: {c}");
    }
}

#[test]
fn states_named_by_action_words_are_queries() {
    for m in [
        "How many orders were cancelled?",
        "list the paid orders of ACME",
        "列出已取消的订单",
        "哪些订单已付款？",
        "Which orders can I pay?",
        "供应商ACME有多少已批准的订单？",
    ] {
        assert_eq!(intent(m).0, Intent::Query, "{m}");
    }
}

#[test]
fn document_cues_are_documents() {
    for m in [
        "What does the payment policy say about late invoices?",
        "According to the procurement manual, who signs contracts?",
        "采购政策对逾期付款有什么规定？",
        "文档里怎么说退货流程",
    ] {
        let (i, c) = intent(m);
        assert_eq!(i, Intent::Document, "{m}");
        assert!(c >= 0.85, "{m}: {c}");
    }
}

#[test]
fn data_questions_are_confident_queries() {
    for m in [
        "How many orders does ACME have?",
        "Which suppliers supply product PRD-036?",
        "供应商ACME有多少订单？",
        "列出所有供应商",
    ] {
        let (i, c) = intent(m);
        assert_eq!(i, Intent::Query, "{m}");
        assert!(c >= 0.85, "{m}: {c}");
    }
}

#[test]
fn a_greeting_does_not_hide_the_request_after_it() {
    assert_eq!(
        intent("Hi, how many orders does ACME have?").0,
        Intent::Query
    );
    assert_eq!(intent("你好，帮我付款订单PO-0001").0, Intent::Action);
    // "hi" is a word, not a prefix of "history".
    assert_ne!(intent("history of PO-0001").0, Intent::Answer);
}

#[test]
fn unclear_messages_are_not_confident() {
    for m in ["hmm interesting", "the thing from before", "lol"] {
        let (_, c) = intent(m);
        assert!(c < 0.85, "{m}: {c}");
    }
    let empty = classify("  ?! ");
    assert_eq!(empty.intent, Intent::Clarify);
    assert!(empty.clarification.is_some());
}
