//! `GET /conversations` (issue #19): each caller lists their own conversations (admins
//! too: their own), newest first, with the question that started each; a deleted one is
//! gone from the list; no credential is a 401.

use kg_e2e::llm_stub::{ScriptedLlm, text};
use kg_e2e::{AppHost, Stack, auth};
use serde_json::{Value, json};

async fn ask(host: &AppHost, key: &str, message: &str, conversation: Option<&str>) -> String {
    let mut body = json!({"message": message, "routing_mode": "rule"});
    if let Some(c) = conversation {
        body["conversation_id"] = json!(c);
    }
    let (status, r) = host
        .send_as(Some(key), "POST", "/chat", &body.to_string())
        .await
        .unwrap();
    assert_eq!(status, 200, "{r}");
    r["conversation_id"].as_str().unwrap().to_string()
}

async fn list(host: &AppHost, key: &str) -> Vec<Value> {
    let (status, r) = host.get_as(Some(key), "/conversations").await.unwrap();
    assert_eq!(status, 200, "{r}");
    r["conversations"].as_array().unwrap().clone()
}

#[tokio::test]
async fn each_caller_lists_their_own_conversations_newest_first() {
    let llm = ScriptedLlm::start().await;
    llm.then((0..8).map(|_| text("Hello! Ask me about suppliers, orders or payments.")));
    let stack = Stack::start_with(&llm.variables()).await.unwrap();
    let host = &stack.host;

    let first = ask(host, auth::VIEWER, "hello there", None).await;
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    let second = ask(host, auth::VIEWER, "hi again", None).await;
    let operators = ask(host, auth::OPERATOR, "hello from the operator", None).await;
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    // A later turn in the first conversation makes it the newest.
    ask(host, auth::VIEWER, "and one more thing", Some(&first)).await;

    let mine = list(host, auth::VIEWER).await;
    let ids: Vec<&str> = mine.iter().map(|c| c["id"].as_str().unwrap()).collect();
    assert_eq!(ids, [first.as_str(), second.as_str()], "{mine:?}");
    assert_eq!(mine[0]["title"], "hello there");
    assert_eq!(mine[0]["turns"], 4);
    assert_eq!(mine[1]["title"], "hi again");
    assert!(mine[0]["updated"].as_str().unwrap() > mine[1]["updated"].as_str().unwrap());

    let theirs = list(host, auth::OPERATOR).await;
    assert_eq!(theirs.len(), 1, "{theirs:?}");
    assert_eq!(theirs[0]["id"], operators.as_str());
    // An admin may open anyone's, but lists only their own.
    assert!(list(host, auth::ADMIN).await.is_empty());

    let (status, _) = host
        .send_as(
            Some(auth::VIEWER),
            "DELETE",
            &format!("/conversations/{second}"),
            "",
        )
        .await
        .unwrap();
    assert_eq!(status, 200);
    let mine = list(host, auth::VIEWER).await;
    assert_eq!(mine.len(), 1, "{mine:?}");
    assert_eq!(mine[0]["id"], first.as_str());

    let (status, e) = host.get_as(None, "/conversations").await.unwrap();
    assert_eq!(status, 401, "{e}");
    let (status, e) = host
        .send_as(Some(auth::VIEWER), "POST", "/conversations", "{}")
        .await
        .unwrap();
    assert_eq!(status, 405, "{e}");
}
