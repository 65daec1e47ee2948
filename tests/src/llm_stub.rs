//! A scripted OpenAI-compatible Chat Completions endpoint: each request to
//! `/v1/chat/completions` gets the next scripted answer (a completion, or an HTTP error
//! status), and every request body is recorded for assertions. An exhausted script answers
//! 500, so a test that expects fewer calls fails loudly.

pub mod streamed;

use serde_json::{Value, json};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Instant;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

#[derive(Clone, Debug)]
pub enum Reply {
    /// The assistant says this (no tool calls).
    Text(String),
    /// The assistant calls these tools: (name, arguments JSON).
    Tools(Vec<(String, Value)>),
    /// The endpoint answers this status with an error body.
    Status(u16),
    /// This reply, after a delay.
    Slow(std::time::Duration, Box<Reply>),
}

pub fn text(t: &str) -> Reply {
    Reply::Text(t.into())
}

pub fn call(name: &str, arguments: Value) -> Reply {
    Reply::Tools(vec![(name.into(), arguments)])
}

/// `steps` ReAct steps, each one `get_node_statistics` call of a different demo label.
/// They must differ: the agent answers a call identical to an earlier one from its first
/// result and, after two such repeats, stops its loop (a looping model), which would leave
/// a benchmark's later scripted replies to the summariser.
pub fn distinct_statistics_steps(steps: usize) -> Vec<Reply> {
    const LABELS: [&str; 5] = ["Supplier", "Part", "Product", "PurchaseOrder", "Assembly"];
    (0..steps)
        .map(|i| {
            let label = LABELS[i % LABELS.len()];
            // Past the labels, the sample size tells the calls apart.
            let sample_size = i / LABELS.len();
            call(
                "get_node_statistics",
                json!({"label": label, "sample_size": sample_size}),
            )
        })
        .collect()
}

pub struct ScriptedLlm {
    pub server: MockServer,
    script: Arc<Mutex<VecDeque<Reply>>>,
    pub requests: Arc<Mutex<Vec<Value>>>,
    /// When each chat request arrived, in the order of `requests`.
    arrivals: Arc<Mutex<Vec<Instant>>>,
    /// `GET /v1/models` (the readiness probe) answers this status; 200 lists the model.
    models_status: Arc<Mutex<u16>>,
}

/// `GET /v1/models`: the one model, or the status a test set (an LLM that is "down").
struct ModelsResponder {
    status: Arc<Mutex<u16>>,
}

impl Respond for ModelsResponder {
    fn respond(&self, _: &Request) -> ResponseTemplate {
        let status = *self.status.lock().unwrap_or_else(|p| p.into_inner());
        if status == 200 {
            ResponseTemplate::new(200).set_body_json(
                json!({"object": "list", "data": [{"id": "stub", "object": "model", "owned_by": "test"}]}),
            )
        } else {
            ResponseTemplate::new(status)
                .set_body_json(json!({"error": {"message": "scripted failure"}}))
        }
    }
}

struct Responder {
    script: Arc<Mutex<VecDeque<Reply>>>,
    requests: Arc<Mutex<Vec<Value>>>,
    arrivals: Arc<Mutex<Vec<Instant>>>,
}

impl Respond for Responder {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
        let mut requests = self.requests.lock().unwrap_or_else(|p| p.into_inner());
        requests.push(body);
        self.arrivals
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(Instant::now());
        let n = requests.len();
        let next = self
            .script
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .pop_front();
        let (delay, next) = match next {
            Some(Reply::Slow(delay, reply)) => (Some(delay), Some(*reply)),
            other => (None, other),
        };
        let template = match next {
            None => ResponseTemplate::new(500).set_body_json(json!({"error": {"message": "script exhausted"}})),
            Some(Reply::Status(status)) => {
                ResponseTemplate::new(status).set_body_json(json!({"error": {"message": "scripted failure"}}))
            }
            Some(Reply::Text(content)) => ResponseTemplate::new(200).set_body_json(json!({
                "id": format!("r{n}"), "object": "chat.completion", "model": "stub",
                "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
            })),
            Some(Reply::Tools(calls)) => ResponseTemplate::new(200).set_body_json(json!({
                "id": format!("r{n}"), "object": "chat.completion", "model": "stub",
                "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": null,
                    "tool_calls": calls.iter().enumerate().map(|(i, (name, args))| json!({
                        "id": format!("call-{n}-{i}"), "type": "function",
                        "function": {"name": name, "arguments": args.to_string()}})).collect::<Vec<_>>()}}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
            })),
            Some(Reply::Slow(..)) => ResponseTemplate::new(500),
        };
        match delay {
            Some(delay) => template.set_delay(delay),
            None => template,
        }
    }
}

impl ScriptedLlm {
    pub async fn start() -> ScriptedLlm {
        let server = MockServer::start().await;
        let script = Arc::new(Mutex::new(VecDeque::new()));
        let requests = Arc::new(Mutex::new(Vec::new()));
        let arrivals = Arc::new(Mutex::new(Vec::new()));
        Mock::given(method("POST"))
            .and(path("/v1/chat/completions"))
            .respond_with(Responder {
                script: script.clone(),
                requests: requests.clone(),
                arrivals: arrivals.clone(),
            })
            .mount(&server)
            .await;
        let models_status = Arc::new(Mutex::new(200));
        Mock::given(method("GET"))
            .and(path("/v1/models"))
            .respond_with(ModelsResponder {
                status: models_status.clone(),
            })
            .mount(&server)
            .await;
        ScriptedLlm {
            server,
            script,
            requests,
            arrivals,
            models_status,
        }
    }

    /// What `GET /v1/models` answers from now on (200: the model list).
    pub fn set_models_status(&self, status: u16) {
        *self.models_status.lock().unwrap_or_else(|p| p.into_inner()) = status;
    }

    /// How many `GET /v1/models` requests arrived (the readiness probe's).
    pub async fn models_calls(&self) -> usize {
        self.server
            .received_requests()
            .await
            .unwrap_or_default()
            .iter()
            .filter(|r| r.method.as_str() == "GET" && r.url.path() == "/v1/models")
            .count()
    }

    /// Appends replies to the script.
    pub fn then(&self, replies: impl IntoIterator<Item = Reply>) {
        self.script
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .extend(replies);
    }

    /// Drops what is left of the script (a turn that needed fewer replies than given).
    pub fn clear(&self) {
        self.script
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
    }

    pub fn remaining(&self) -> usize {
        self.script.lock().unwrap_or_else(|p| p.into_inner()).len()
    }

    pub fn requests(&self) -> Vec<Value> {
        self.requests
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// When each chat request arrived, in the order of [`ScriptedLlm::requests`].
    pub fn arrivals(&self) -> Vec<Instant> {
        self.arrivals
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// The variables that point the application at this endpoint.
    pub fn variables(&self) -> Vec<(&'static str, String)> {
        vec![
            ("llm_origin", self.server.uri()),
            ("llm_base_path", "/v1".into()),
            ("llm_model", "stub".into()),
        ]
    }
}
