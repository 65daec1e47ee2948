//! A scripted Chat Completions endpoint that streams: a [`Step::Tokens`] reply (or a
//! [`Step::Preface`], which then calls tools) is sent as SSE chunks, the first after `first_token`, the next ones `between` apart, so a test can
//! tell text forwarded as it arrives from text forwarded once the call is over. wiremock
//! (the other stub) answers whole bodies only. Each streamed reply records when its
//! request arrived and when its first and last tokens were written.

use bytes::Bytes;
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::{Request, Response};
use serde_json::{Value, json};
use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::net::TcpListener;
use tokio::sync::mpsc;

#[derive(Clone, Debug)]
pub enum Step {
    /// A whole (non-streamed) completion saying this.
    Text(String),
    /// A whole completion calling these tools: (name, arguments).
    Tools(Vec<(String, Value)>),
    /// These tokens as a stream: the first after `first_token`, then one every `between`.
    Tokens {
        first_token: Duration,
        between: Duration,
        tokens: Vec<String>,
    },
    /// Streamed like [`Step::Tokens`], then tool calls (name, arguments) in the same
    /// response: text a ReAct step writes before calling tools.
    Preface {
        first_token: Duration,
        between: Duration,
        tokens: Vec<String>,
        calls: Vec<(String, Value)>,
    },
}

/// When one streamed reply happened.
#[derive(Clone, Debug, Default)]
pub struct Timing {
    pub received: Option<Instant>,
    pub first_token: Option<Instant>,
    pub last_token: Option<Instant>,
}

#[derive(Default)]
struct Shared {
    script: VecDeque<Step>,
    timings: Vec<Arc<Mutex<Timing>>>,
    requests: Vec<Value>,
}

pub struct StreamingLlm {
    pub url: String,
    shared: Arc<Mutex<Shared>>,
}

type Body = UnsyncBoxBody<Bytes, Infallible>;

impl StreamingLlm {
    pub async fn start() -> std::io::Result<StreamingLlm> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let url = format!("http://{}", listener.local_addr()?);
        let shared = Arc::new(Mutex::new(Shared::default()));
        let serving = shared.clone();
        tokio::spawn(async move {
            while let Ok((tcp, _)) = listener.accept().await {
                let shared = serving.clone();
                tokio::spawn(async move {
                    let service =
                        hyper::service::service_fn(move |request| answer(request, shared.clone()));
                    let io = hyper_util::rt::TokioIo::new(tcp);
                    // A connection the client drops mid-stream is no failure of the stub.
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(io, service)
                        .await;
                });
            }
        });
        Ok(StreamingLlm { url, shared })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Shared> {
        self.shared.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn then(&self, steps: impl IntoIterator<Item = Step>) {
        self.lock().script.extend(steps);
    }

    /// The timings of the streamed replies so far, in order.
    pub fn timings(&self) -> Vec<Timing> {
        self.lock()
            .timings
            .iter()
            .map(|t| t.lock().unwrap_or_else(|p| p.into_inner()).clone())
            .collect()
    }

    pub fn requests(&self) -> Vec<Value> {
        self.lock().requests.clone()
    }

    /// The variables that point the application at this endpoint.
    pub fn variables(&self) -> Vec<(&'static str, String)> {
        vec![
            ("llm_origin", self.url.clone()),
            ("llm_base_path", "/v1".into()),
            ("llm_model", "stub".into()),
        ]
    }
}

fn whole(status: u16, body: Value) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from(body.to_string())).boxed_unsync());
    *response.status_mut() = hyper::StatusCode::from_u16(status).unwrap_or_default();
    response.headers_mut().insert(
        "content-type",
        hyper::header::HeaderValue::from_static("application/json"),
    );
    response
}

fn chunk(delta: Value, finish: Option<&str>) -> Bytes {
    let mut data = json!({"id": "s1", "object": "chat.completion.chunk", "model": "stub",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
    if finish.is_some() {
        data["usage"] = json!({"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15});
    }
    Bytes::from(format!("data: {data}\n\n"))
}

async fn answer(
    request: Request<Incoming>,
    shared: Arc<Mutex<Shared>>,
) -> Result<Response<Body>, Infallible> {
    let received = Instant::now();
    let route = (
        request.method().as_str().to_string(),
        request.uri().path().to_string(),
    );
    let body = match request.into_body().collect().await {
        Ok(body) => body.to_bytes(),
        Err(_) => Bytes::new(),
    };
    match (route.0.as_str(), route.1.as_str()) {
        ("GET", "/v1/models") => {
            return Ok(whole(
                200,
                json!({"object": "list", "data": [{"id": "stub", "object": "model", "owned_by": "test"}]}),
            ));
        }
        ("POST", "/v1/chat/completions") => {}
        _ => return Ok(whole(404, json!({"error": {"message": "no such route"}}))),
    }
    let step = {
        let mut shared = shared.lock().unwrap_or_else(|p| p.into_inner());
        shared
            .requests
            .push(serde_json::from_slice(&body).unwrap_or(Value::Null));
        shared.script.pop_front()
    };
    let (first_token, between, tokens, calls) = match step {
        None => {
            return Ok(whole(
                500,
                json!({"error": {"message": "script exhausted"}}),
            ));
        }
        Some(Step::Text(content)) => {
            return Ok(whole(
                200,
                json!({"id": "r", "object": "chat.completion", "model": "stub",
                "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}),
            ));
        }
        Some(Step::Tools(calls)) => {
            return Ok(whole(
                200,
                json!({"id": "r", "object": "chat.completion", "model": "stub",
                "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": null,
                    "tool_calls": calls.iter().enumerate().map(|(i, (name, args))| json!({
                        "id": format!("call-{i}"), "type": "function",
                        "function": {"name": name, "arguments": args.to_string()}})).collect::<Vec<_>>()}}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}),
            ));
        }
        Some(Step::Tokens {
            first_token,
            between,
            tokens,
        }) => (first_token, between, tokens, Vec::new()),
        Some(Step::Preface {
            first_token,
            between,
            tokens,
            calls,
        }) => (first_token, between, tokens, calls),
    };
    let timing = Arc::new(Mutex::new(Timing {
        received: Some(received),
        ..Timing::default()
    }));
    shared
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .timings
        .push(timing.clone());
    let (sender, receiver) = mpsc::channel::<Bytes>(16);
    tokio::spawn(async move {
        tokio::time::sleep(first_token).await;
        let count = tokens.len();
        for (i, token) in tokens.into_iter().enumerate() {
            if i > 0 {
                tokio::time::sleep(between).await;
            }
            if sender
                .send(chunk(json!({"content": token}), None))
                .await
                .is_err()
            {
                return;
            }
            let now = Instant::now();
            let mut timing = timing.lock().unwrap_or_else(|p| p.into_inner());
            if i == 0 {
                timing.first_token = Some(now);
            }
            if i + 1 == count {
                timing.last_token = Some(now);
            }
        }
        if calls.is_empty() {
            let _ = sender.send(chunk(json!({}), Some("stop"))).await;
        } else {
            let calls: Vec<Value> = calls
                .iter()
                .enumerate()
                .map(|(i, (name, args))| {
                    json!({"index": i, "id": format!("call-{i}"), "type": "function",
                        "function": {"name": name, "arguments": args.to_string()}})
                })
                .collect();
            let _ = sender
                .send(chunk(json!({"tool_calls": calls}), Some("tool_calls")))
                .await;
        }
        let _ = sender.send(Bytes::from_static(b"data: [DONE]\n\n")).await;
    });
    let frames = futures::stream::unfold(receiver, |mut receiver| async move {
        let bytes = receiver.recv().await?;
        Some((Ok::<_, Infallible>(Frame::data(bytes)), receiver))
    });
    let mut response = Response::new(BodyExt::boxed_unsync(StreamBody::new(frames)));
    response.headers_mut().insert(
        "content-type",
        hyper::header::HeaderValue::from_static("text/event-stream"),
    );
    Ok(response)
}

/// The SSE events of one `POST /chat/stream`, each with when its frame was read: what a
/// client sees of a streamed answer, in time.
pub async fn timed_chat_stream(
    base_url: &str,
    token: &str,
    body: &Value,
) -> anyhow::Result<Vec<(Instant, Value)>> {
    let mut response = reqwest::Client::new()
        .post(format!("{base_url}/chat/stream"))
        .bearer_auth(token)
        .body(body.to_string())
        .send()
        .await?;
    anyhow::ensure!(response.status() == 200, "status {}", response.status());
    let mut pending = String::new();
    let mut events = Vec::new();
    while let Some(bytes) = response.chunk().await? {
        let now = Instant::now();
        pending.push_str(&String::from_utf8_lossy(&bytes));
        while let Some(end) = pending.find("\n\n") {
            let frame: String = pending.drain(..end + 2).collect();
            if let Some(data) = frame.lines().find_map(|l| l.strip_prefix("data: ")) {
                events.push((now, serde_json::from_str(data)?));
            }
        }
    }
    Ok(events)
}
