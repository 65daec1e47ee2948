//! The prompt templates (prompts/, mounted at /prompts) through the application's host:
//! an edited file changes what the LLM receives without a rebuild, `/health` lists each
//! prompt's file and hash, and a broken template refuses a chat turn up front with an
//! error naming the file and line.

use kg_e2e::llm_stub::{ScriptedLlm, text};
use kg_e2e::{AppHost, Graph, manifest_variant};
use serde_json::{Value, json};
use std::path::Path;

/// The application with its prompts folder copied into `dir` and `edit` applied to it.
async fn host_with_prompts(
    dir: &Path,
    graph: &Graph,
    llm: &ScriptedLlm,
    edit: impl FnOnce(&Path),
) -> AppHost {
    let manifest = manifest_variant(dir, |m| m).unwrap();
    edit(&dir.join("prompts"));
    let mut variables = graph.variables();
    variables.extend(llm.variables());
    AppHost::start(&manifest, &dir.join("kv.db"), &variables)
        .await
        .unwrap()
}

fn prompt<'a>(health: &'a Value, name: &str, lang: &str) -> &'a Value {
    health["prompts"]
        .as_array()
        .and_then(|all| all.iter().find(|p| p["name"] == name && p["lang"] == lang))
        .unwrap_or_else(|| panic!("no prompt {name}/{lang} in {health}"))
}

#[tokio::test]
async fn edited_router_and_answer_prompts_are_what_the_llm_receives_and_health_shows_the_hash() {
    let graph = Graph::start().await.unwrap();
    let llm = ScriptedLlm::start().await;
    let dir = tempfile::tempdir().unwrap();
    let (_, before) = {
        let host = host_with_prompts(dir.path(), &graph, &llm, |_| {}).await;
        host.get("/health").await.unwrap()
    };
    let tuned = "You route messages for the tuned test domain.\nAnswer with JSON.\n";
    let dir = tempfile::tempdir().unwrap();
    let host = host_with_prompts(dir.path(), &graph, &llm, |prompts| {
        std::fs::write(prompts.join("en/router.txt"), tuned).unwrap();
        std::fs::write(prompts.join("en/answer.txt"), "Greet like a tuned test.\n").unwrap();
    })
    .await;
    llm.then([
        text(r#"{"intent": "answer", "confidence": 0.95, "reason": "greeting"}"#),
        text("Hello!"),
    ]);
    let (status, r) = host
        .send(
            "POST",
            "/chat",
            &json!({"message": "hello there", "routing_mode": "llm"}).to_string(),
        )
        .await
        .unwrap();
    assert_eq!(status, 200, "{r}");
    let requests = llm.requests();
    assert_eq!(
        requests[0]["messages"][0]["content"],
        "You route messages for the tuned test domain.\nAnswer with JSON.",
        "{}",
        requests[0]
    );

    // The agent's direct answer reads its template the same way.
    assert_eq!(
        requests[1]["messages"][0]["content"], "Greet like a tuned test.",
        "{}",
        requests[1]
    );

    let (status, after) = host.get("/health").await.unwrap();
    assert_eq!(status, 200, "{after}");
    let router = prompt(&after, "router", "en");
    assert_eq!(router["file"], "prompts/en/router.txt");
    assert_ne!(router["hash"], prompt(&before, "router", "en")["hash"]);
    assert!(router["hash"].as_str().unwrap().starts_with("sha256:"));
    // The untouched ones keep their hash; the Chinese router is its own file.
    assert_eq!(
        prompt(&after, "summariser", "en")["hash"],
        prompt(&before, "summariser", "en")["hash"]
    );
    assert_eq!(
        prompt(&after, "router", "zh")["hash"],
        prompt(&before, "router", "zh")["hash"]
    );
    assert_eq!(
        prompt(&after, "router", "zh")["file"],
        "prompts/zh/router.txt"
    );
    assert_eq!(
        prompt(&after, "clarification", "zh")["file"],
        "prompts/zh/clarification.txt"
    );
}

#[tokio::test]
async fn a_broken_template_refuses_the_turn_naming_the_file_and_line() {
    let graph = Graph::start().await.unwrap();
    let llm = ScriptedLlm::start().await;
    let dir = tempfile::tempdir().unwrap();
    let host = host_with_prompts(dir.path(), &graph, &llm, |prompts| {
        std::fs::write(
            prompts.join("en/summariser.txt"),
            "Answer from the evidence only.\nAnswer in {{ langauge }}.\n",
        )
        .unwrap();
    })
    .await;
    for path in ["/chat", "/chat/stream"] {
        let (status, r) = host
            .send(
                "POST",
                path,
                &json!({"message": "How many orders does ACME have?"}).to_string(),
            )
            .await
            .unwrap();
        assert_eq!(status, 500, "{path}: {r}");
        assert_eq!(r["error"]["code"], "prompt_template_invalid", "{r}");
        assert_eq!(
            r["error"]["message"],
            "prompt template prompts/en/summariser.txt, line 2: unknown variable `langauge`: this prompt takes `language`"
        );
        assert_eq!(r["error"]["detail"]["file"], "prompts/en/summariser.txt");
        assert_eq!(r["error"]["detail"]["line"], 2);
    }
    assert!(
        llm.requests().is_empty(),
        "the LLM was asked: {:?}",
        llm.requests()
    );
    // The rest of the service is unaffected, and /health says which prompt is broken.
    let (status, health) = host.get("/health").await.unwrap();
    assert_eq!(status, 200, "{health}");
    let broken = prompt(&health, "summariser", "en");
    assert!(
        broken["error"].as_str().unwrap().contains("line 2"),
        "{broken}"
    );
    assert_eq!(broken.get("hash"), None);
}
