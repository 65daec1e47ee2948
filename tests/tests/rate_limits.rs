//! Limits per subject (issue #13), counted in the key-value store: requests per minute
//! and LLM tokens per day, 429 `rate_limited` with `Retry-After` when exceeded, one
//! subject's use never limiting another.

use kg_e2e::llm_stub::{ScriptedLlm, text};
use kg_e2e::{AppHost, Pair, Stack, auth};
use serde_json::{Value, json};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

async fn request(
    host: &AppHost,
    key: &str,
    method: &str,
    path: &str,
    body: &str,
) -> (u16, Option<String>, Value) {
    let response = host
        .request_as(Some(key), method, path, body)
        .await
        .unwrap();
    let status = response.status().as_u16();
    let retry_after = response
        .headers()
        .get("retry-after")
        .map(|v| v.to_str().unwrap_or("<not text>").to_string());
    let text = response.text().await.unwrap();
    let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
    (status, retry_after, body)
}

/// A 429 `rate_limited` whose `Retry-After` is whole seconds within `range`.
fn assert_limited(
    what: &str,
    (status, retry_after, body): &(u16, Option<String>, Value),
    range: std::ops::RangeInclusive<u64>,
) {
    assert_eq!(*status, 429, "{what}: {body}");
    assert_eq!(body["error"]["code"], "rate_limited", "{what}: {body}");
    let seconds: u64 = retry_after
        .as_deref()
        .unwrap_or_else(|| panic!("{what}: no Retry-After"))
        .parse()
        .unwrap_or_else(|_| panic!("{what}: Retry-After {retry_after:?} is not whole seconds"));
    assert!(range.contains(&seconds), "{what}: Retry-After {seconds}");
}

/// Waits until at least 15 s remain in the current wall-clock minute, so five requests
/// and the sixth fall in one window whether the server counts per calendar minute or in a
/// sliding one.
async fn away_from_a_minute_boundary() {
    let second = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
        % 60;
    if second >= 45 {
        tokio::time::sleep(Duration::from_secs(61 - second)).await;
    }
}

#[tokio::test]
async fn the_sixth_request_in_a_minute_is_refused_for_that_subject_only() {
    let stack = Stack::start_with(&[("rate_limit_requests_per_minute", "5".to_string())])
        .await
        .unwrap();
    let host = &stack.host;
    away_from_a_minute_boundary().await;
    for i in 1..=5 {
        let (status, _, body) = request(host, auth::VIEWER, "GET", "/tools", "").await;
        assert_eq!(status, 200, "request {i}: {body}");
    }
    let refused = request(host, auth::VIEWER, "GET", "/tools", "").await;
    assert_limited("the sixth request", &refused, 1..=60);
    // Whatever the route.
    let again = request(
        host,
        auth::VIEWER,
        "POST",
        "/tools/get_node_statistics",
        r#"{"label": "Supplier"}"#,
    )
    .await;
    assert_limited("a seventh, on another route", &again, 1..=60);
    // Another subject is not limited by the first one's use.
    let (status, _, body) = request(host, auth::OPERATOR, "GET", "/tools", "").await;
    assert_eq!(status, 200, "{body}");
}

/// `n` requests of one subject at once, alternating between `hosts`: how many were
/// admitted (200), refused by the limit (429) and refused by the host before the
/// application ran (Spin's bodiless 500 past its instance pool: never counted).
async fn burst(hosts: &[&AppHost], n: usize) -> (usize, usize, usize) {
    let requests = (0..n).map(|i| {
        let host = hosts[i % hosts.len()];
        async move { request(host, auth::VIEWER, "GET", "/tools", "").await }
    });
    let (mut admitted, mut limited, mut host_refused) = (0, 0, 0);
    for (status, _, body) in futures::future::join_all(requests).await {
        match status {
            200 => admitted += 1,
            429 => limited += 1,
            500 if body == Value::String(String::new()) => host_refused += 1,
            other => panic!("{other}: {body}"),
        }
    }
    (admitted, limited, host_refused)
}

/// The counter is one atomic increment per request (wasi:keyvalue), so 200 requests of
/// one subject at once admit exactly the limit: on one instance, and on two instances
/// sharing a Redis (this run's host and devhost).
#[tokio::test]
async fn two_hundred_concurrent_requests_of_one_subject_never_pass_the_limit() {
    const LIMIT: usize = 50;
    let limit = [("rate_limit_requests_per_minute", LIMIT.to_string())];
    let stack = Stack::start_with(&limit).await.unwrap();
    away_from_a_minute_boundary().await;
    let (admitted, limited, host_refused) = burst(&[&stack.host], 200).await;
    println!(
        "one instance: {admitted} admitted, {limited} limited, {host_refused} refused by the host"
    );
    assert_eq!(admitted, LIMIT.min(200 - host_refused));
    assert_eq!(admitted + limited + host_refused, 200);

    let pair = Pair::start(&limit).await.unwrap();
    away_from_a_minute_boundary().await;
    let (admitted, limited, host_refused) = burst(&[&pair.a, &pair.b], 200).await;
    println!(
        "two instances: {admitted} admitted, {limited} limited, {host_refused} refused by the host"
    );
    assert_eq!(admitted, LIMIT.min(200 - host_refused));
    assert_eq!(admitted + limited + host_refused, 200);
}

#[tokio::test]
async fn a_subject_over_its_daily_llm_tokens_gets_429_on_chat_but_keeps_its_tools() {
    let llm = ScriptedLlm::start().await;
    // Every scripted completion reports 15 tokens of usage (10 prompt + 5 completion).
    llm.then([text("Hello!"), text("Hello, operator!"), text("spare")]);
    let mut variables = llm.variables();
    variables.push(("rate_limit_llm_tokens_per_day", "10".to_string()));
    let stack = Stack::start_with(&variables).await.unwrap();
    let host = &stack.host;
    let chat = json!({"message": "hello", "routing_mode": "rule"}).to_string();

    let (status, _, body) = request(host, auth::VIEWER, "POST", "/chat", &chat).await;
    assert_eq!(status, 200, "the first chat is within the budget: {body}");
    assert!(
        body["usage"]["total_tokens"].as_u64().unwrap_or(0) > 10
            || body["usage"]["prompt_tokens"].as_u64().unwrap_or(0)
                + body["usage"]["completion_tokens"].as_u64().unwrap_or(0)
                > 10,
        "the answer reports the usage that was counted: {body}"
    );
    let calls = llm.requests().len();
    let refused = request(host, auth::VIEWER, "POST", "/chat", &chat).await;
    assert_limited("the next chat", &refused, 1..=86_400);
    // The stream is no way around it: refused up front, or an `error` event.
    let streamed = request(host, auth::VIEWER, "POST", "/chat/stream", &chat).await;
    if streamed.0 == 429 {
        assert_limited("the next streamed chat", &streamed, 1..=86_400);
    } else {
        let events = streamed.2.to_string();
        assert!(
            events.contains("rate_limited"),
            "the next streamed chat: {} {events}",
            streamed.0
        );
    }
    assert_eq!(
        llm.requests().len(),
        calls,
        "a refused chat never reaches the LLM"
    );

    // Tools spend no LLM tokens: still served.
    let (status, _, body) = request(
        host,
        auth::VIEWER,
        "POST",
        "/tools/get_node_statistics",
        r#"{"label": "Supplier"}"#,
    )
    .await;
    assert_eq!(status, 200, "{body}");
    // Another subject has its own budget.
    let (status, _, body) = request(host, auth::OPERATOR, "POST", "/chat", &chat).await;
    assert_eq!(status, 200, "{body}");
}
