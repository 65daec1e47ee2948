//! ns per call of what every agent step does in llm-client: parse a whole (non-streamed)
//! answer and write the next request's body. The answer parser is timed beside the
//! `serde_json::Value`-tree parser it replaced (tests/oracle), in the same run.
//!
//! `cargo bench -p llm-client --bench hot_path` (natively; numbers are noisy on a shared
//! machine: compare the lines of one run).

#[path = "../tests/oracle/mod.rs"]
mod oracle;

use llm_client::{
    ChatRequest, HttpRequest, HttpResponse, LlmClient, LlmConfig, LlmTransport, Message, ToolCall,
    ToolChoice, ToolSpec, Tools, Transport, TransportError,
};
use serde_json::json;
use std::hint::black_box;
use std::time::Instant;

/// An answer calling two tools, as an OpenAI-compatible server sends it (~600 bytes).
const TOOL_CALLS: &str = r#"{"id":"chatcmpl-9f2c1e0b7a","object":"chat.completion","created":1732612345,"model":"qwen2.5:7b-instruct","system_fingerprint":"fp_ollama","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_8kq2r1","type":"function","function":{"name":"search_instances","arguments":"{\"search_term\":\"ACME Corporation\",\"label\":\"Customer\",\"limit\":10}"}},{"id":"call_3mz9x4","type":"function","function":{"name":"get_node_statistics","arguments":"{\"label\":\"PurchaseOrder\",\"group_by\":\"status\"}"}}]},"logprobs":null,"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":1834,"completion_tokens":71,"total_tokens":1905}}"#;

/// A text answer of the same size.
const TEXT: &str = r#"{"id":"chatcmpl-9f2c1e0b7b","object":"chat.completion","created":1732612346,"model":"qwen2.5:7b-instruct","system_fingerprint":"fp_ollama","choices":[{"index":0,"message":{"role":"assistant","content":"ACME Corporation has 24 purchase orders: 17 are paid, 5 are open and 2 were cancelled. The largest open order is PO-2024-0193 (48,200 EUR, due 2024-12-15); the oldest open one is PO-2024-0071, overdue since 3 September. \"Paid\" here means a Payment node is linked to the order.\n\nWould you like the open orders listed?"},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":2210,"completion_tokens":96,"total_tokens":2306}}"#;

fn tool(i: usize) -> ToolSpec {
    ToolSpec {
        name: format!("graph_tool_{i}"),
        description: format!(
            "Tool {i}: looks entities up in the knowledge graph by label and properties, and returns at most `limit` of them with their relationships."
        ),
        parameters: json!({
            "type": "object",
            "properties": {
                "label": {"type": "string", "description": "A node label of the schema"},
                "search_term": {"type": "string", "description": "Text to match in names"},
                "limit": {"type": "integer", "minimum": 1, "maximum": 100}
            },
            "required": ["label"]
        })
        .to_string(),
    }
}

/// The second step of a ReAct turn: 5 messages, 8 tools.
fn request() -> ChatRequest {
    let system = "You answer questions about the company's data using the tools. ".repeat(12);
    let result = r#"{"rows":[{"name":"ACME Corporation","id":"c-17","orders":24,"city":"Lyon"},{"name":"ACME Logistics","id":"c-93","orders":3,"city":"Köln"}],"count":2}"#;
    let tools: Vec<ToolSpec> = (0..8).map(tool).collect();
    ChatRequest::new(vec![
        Message::system(system),
        Message::user("How many orders has ACME, and how many are still open?"),
        Message::assistant_tool_calls(
            None,
            vec![ToolCall {
                id: "call_8kq2r1".into(),
                name: "graph_tool_1".into(),
                arguments: r#"{"search_term":"ACME","label":"Customer","limit":10}"#.into(),
            }],
        ),
        Message::tool_result("call_8kq2r1", result),
        Message::user("Only the open ones, please."),
    ])
    .with_tools(Tools::from(tools), ToolChoice::Auto)
    .temperature(0.2)
}

/// An endpoint that answers at once: what is left of a call is llm-client's own work.
struct Instant200(&'static str);

impl Transport for Instant200 {
    fn send(&self, request: HttpRequest) -> Result<HttpResponse, TransportError> {
        black_box(request);
        Ok(HttpResponse {
            status: 200,
            headers: vec![("content-type".into(), "application/json".into())],
            body: self.0.as_bytes().to_vec(),
        })
    }
}

impl LlmTransport for Instant200 {}

/// Median ns per call over `rounds` rounds of `per_round` calls; only the lines whose
/// label contains a word given on the command line, if any is (to profile one).
fn time(label: &str, per_round: u32, mut f: impl FnMut()) {
    const ROUNDS: usize = 15;
    let words: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    if !words.is_empty() && !words.iter().any(|w| label.contains(w.as_str())) {
        return;
    }
    for _ in 0..per_round {
        f();
    }
    let mut per_call: Vec<f64> = (0..ROUNDS)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..per_round {
                f();
            }
            start.elapsed().as_nanos() as f64 / f64::from(per_round)
        })
        .collect();
    per_call.sort_by(f64::total_cmp);
    println!(
        "{label:<44} {:>8.0} ns  (min {:.0}, max {:.0})",
        per_call[ROUNDS / 2],
        per_call[0],
        per_call[ROUNDS - 1]
    );
}

fn main() {
    let rounds = if std::env::args().any(|a| a == "--quick") {
        200
    } else {
        20_000
    };
    for (name, body) in [("tool-call answer", TOOL_CALLS), ("text answer", TEXT)] {
        let body = body.as_bytes();
        // Both parsers must agree on these before their times mean anything.
        assert_eq!(
            llm_client::parse_chat_response(body),
            oracle::parse_chat_response(body)
        );
        println!("{name}: {} bytes", body.len());
        time("  parse, Value tree (before)", rounds, || {
            black_box(oracle::parse_chat_response(black_box(body)).ok());
        });
        time("  parse_chat_response", rounds, || {
            black_box(llm_client::parse_chat_response(black_box(body)).ok());
        });
    }
    let request = request();
    let body = request.body_bytes("qwen2.5:7b-instruct", false);
    println!(
        "request body: 5 messages, 8 tools, {} bytes (buffer of {})",
        body.len(),
        body.capacity()
    );
    time("  ChatRequest::body_bytes", rounds, || {
        black_box(request.body_bytes(black_box("qwen2.5:7b-instruct"), false));
    });
    let client = LlmClient::new(
        LlmConfig::new("http://127.0.0.1:1/v1", "qwen2.5:7b-instruct"),
        Instant200(TOOL_CALLS),
    );
    println!("a whole call: that request, the tool-call answer, an instant endpoint");
    time("  LlmClient::chat", rounds, || {
        black_box(client.chat(black_box(&request)).ok());
    });
}
