//! The stack our benches use, for a peer implementation in another language to run
//! against (benches/peers/): devgraph with the demo graph and the scripted LLM stub
//! (`kg_e2e::llm_stub`, the one `request_profile` and `chat_latency` script), started here;
//! then the given command runs with their addresses in its environment, and both stop when
//! it exits (its exit status is this program's).
//!
//! - `KG_PEER_GRAPH_URL`, `KG_PEER_GRAPH_USER`, `KG_PEER_GRAPH_PASSWORD`: devgraph's Query
//!   API origin and credentials;
//! - `KG_PEER_LLM_URL`: the stub's OpenAI-compatible base URL (`…/v1`);
//! - `KG_PEER_SCRIPT_URL`: where the command scripts the stub's next replies, because the
//!   stub's script lives in this process. `POST` a JSON array, each item `{"text": "…"}`
//!   (the assistant says this) or `{"call": {"name": "…", "arguments": {…}}}` (it calls that
//!   tool); they are appended to the script, exactly like `ScriptedLlm::then`.
//!
//! `cargo run --release -p kg-e2e --example peer_stack -- python3 benches/peers/langgraph/bench.py`

use kg_e2e::Graph;
use kg_e2e::llm_stub::{Reply, ScriptedLlm, call, text};
use serde_json::{Value, json};
use std::sync::Arc;
use wiremock::matchers::{method, path};
use wiremock::{Mock, Request, Respond, ResponseTemplate};

/// `POST /_script`: appends the body's replies to the stub's script.
struct ScriptControl {
    llm: Arc<ScriptedLlm>,
}

impl Respond for ScriptControl {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        match replies(&request.body) {
            Ok(replies) => {
                let n = replies.len();
                self.llm.then(replies);
                ResponseTemplate::new(200).set_body_json(json!({"appended": n}))
            }
            Err(reason) => ResponseTemplate::new(400).set_body_json(json!({"error": reason})),
        }
    }
}

/// The replies of a `POST /_script` body, or why it is not one.
fn replies(body: &[u8]) -> Result<Vec<Reply>, String> {
    let items: Vec<Value> =
        serde_json::from_slice(body).map_err(|e| format!("not a JSON array: {e}"))?;
    items
        .iter()
        .map(|item| {
            if let Some(t) = item.get("text").and_then(Value::as_str) {
                Ok(text(t))
            } else if let (Some(name), Some(arguments)) = (
                item.pointer("/call/name").and_then(Value::as_str),
                item.pointer("/call/arguments"),
            ) {
                Ok(call(name, arguments.clone()))
            } else {
                Err(format!("neither {{\"text\"}} nor {{\"call\"}}: {item}"))
            }
        })
        .collect()
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let command: Vec<String> = std::env::args().skip(1).collect();
    let Some((program, args)) = command.split_first() else {
        anyhow::bail!("usage: peer_stack COMMAND [ARG...]");
    };
    let graph = Graph::start().await?;
    let llm = Arc::new(ScriptedLlm::start().await);
    Mock::given(method("POST"))
        .and(path("/_script"))
        .respond_with(ScriptControl { llm: llm.clone() })
        .mount(&llm.server)
        .await;
    let llm_origin = llm.server.uri();
    let status = tokio::process::Command::new(program)
        .args(args)
        .env("KG_PEER_GRAPH_URL", &graph.url)
        .env("KG_PEER_GRAPH_USER", "neo4j")
        .env("KG_PEER_GRAPH_PASSWORD", kg_e2e::GRAPH_PASSWORD)
        .env("KG_PEER_LLM_URL", format!("{llm_origin}/v1"))
        .env("KG_PEER_SCRIPT_URL", format!("{llm_origin}/_script"))
        .status()
        .await?;
    graph.stop().await?;
    std::process::exit(status.code().unwrap_or(1));
}
