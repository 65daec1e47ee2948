//! Retry, backoff and the per-call deadline, against a scripted endpoint and a fake clock.

mod common;

use common::{FakeClock, Scripted, Step, failure, golden, status};
use llm_client::{ChatRequest, LlmClient, LlmConfig, LlmError, Message, TransportErrorKind};
use std::time::Duration;

const OK: &str = "chat_text.json";

fn run(config: LlmConfig, steps: Vec<Step>) -> (Result<String, LlmError>, Scripted, FakeClock) {
    let clock = FakeClock::default();
    let script = Scripted::new(&clock, steps);
    let result = LlmClient::with_clock(config, &script, clock.clone())
        .chat(&ChatRequest::new(vec![Message::user("hi")]))
        .map(|a| a.content);
    (result, script, clock)
}

/// Without jitter, so the backoffs are exact.
fn config() -> LlmConfig {
    let mut config = LlmConfig::new("http://llm:1/v1", "m");
    config.jitter = false;
    config
}

#[test]
fn backoff_is_jittered_between_half_and_all_of_it() {
    let mut config = config();
    config.jitter = true;
    let (result, script, clock) = run(
        config,
        vec![
            status(500, "boom"),
            status(503, "busy"),
            status(200, &golden(OK)),
        ],
    );
    assert!(result.is_ok(), "{result:?}");
    assert_eq!(script.attempts(), 3);
    let sleeps = clock.sleeps.borrow().clone();
    assert_eq!(sleeps.len(), 2);
    assert!(sleeps[0] >= ms(125) && sleeps[0] <= ms(250), "{sleeps:?}");
    assert!(sleeps[1] >= ms(250) && sleeps[1] <= ms(500), "{sleeps:?}");
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

#[test]
fn server_errors_are_retried_twice_with_exponential_backoff() {
    let (result, script, clock) = run(
        config(),
        vec![
            status(500, "boom"),
            status(503, "busy"),
            status(200, &golden(OK)),
        ],
    );
    assert!(result.is_ok(), "{result:?}");
    assert_eq!(script.attempts(), 3);
    assert_eq!(*clock.sleeps.borrow(), [ms(250), ms(500)]);
    // Every attempt sends the same request (a retry builds it again), byte for byte.
    let sent = script.requests.borrow();
    assert_eq!(sent[1], sent[0]);
    assert_eq!(sent[2], sent[0]);
}

#[test]
fn at_most_two_retries_then_the_last_status_and_body() {
    let (result, script, _) = run(
        config(),
        vec![
            status(502, "a"),
            status(502, "b"),
            status(502, "gateway down"),
        ],
    );
    assert_eq!(script.attempts(), 3);
    let e = result.unwrap_err();
    assert_eq!(
        e,
        LlmError::Upstream {
            status: 502,
            body: "gateway down".into(),
            attempts: 3
        }
    );
    assert!(e.retryable());
}

#[test]
fn more_retries_than_two_are_not_honoured() {
    let mut config = config();
    config.max_retries = 9;
    let steps = (0..10).map(|_| status(500, "x")).collect();
    let (result, script, _) = run(config, steps);
    assert!(result.is_err());
    assert_eq!(script.attempts(), 3);
}

#[test]
fn client_errors_other_than_429_are_never_retried() {
    for code in [400, 401, 403, 404, 408, 413, 422] {
        let (result, script, clock) = run(
            config(),
            vec![
                status(code, r#"{"error": "bad"}"#),
                status(200, &golden(OK)),
            ],
        );
        assert_eq!(script.attempts(), 1, "{code}");
        assert!(clock.sleeps.borrow().is_empty());
        let e = result.unwrap_err();
        assert!(matches!(e, LlmError::Upstream { status, .. } if status == code));
        assert!(!e.retryable());
        assert!(e.to_string().contains(r#"{"error": "bad"}"#), "{e}");
    }
}

#[test]
fn too_many_requests_is_retried_after_the_servers_delay() {
    let mut limited = status(429, "slow down");
    if let Ok(response) = &mut limited.outcome {
        response.headers.push(("Retry-After".into(), "2".into()));
    }
    let (result, script, clock) = run(config(), vec![limited, status(200, &golden(OK))]);
    assert!(result.is_ok());
    assert_eq!(script.attempts(), 2);
    assert_eq!(*clock.sleeps.borrow(), [Duration::from_secs(2)]);
}

#[test]
fn connection_errors_and_timeouts_are_retried() {
    let (result, script, _) = run(
        config(),
        vec![
            failure(TransportErrorKind::Connect),
            failure(TransportErrorKind::Timeout),
            status(200, &golden(OK)),
        ],
    );
    assert!(result.is_ok(), "{result:?}");
    assert_eq!(script.attempts(), 3);

    let (result, _, _) = run(
        config(),
        (0..3)
            .map(|_| failure(TransportErrorKind::Connect))
            .collect(),
    );
    let e = result.unwrap_err();
    assert!(
        matches!(e, LlmError::Unavailable { attempts: 3, .. }),
        "{e}"
    );
    assert!(e.retryable());
}

#[test]
fn a_denied_host_is_not_retried() {
    let (result, script, _) = run(
        config(),
        vec![
            failure(TransportErrorKind::Denied),
            status(200, &golden(OK)),
        ],
    );
    assert!(matches!(
        result,
        Err(LlmError::Unavailable { attempts: 1, .. })
    ));
    assert_eq!(script.attempts(), 1);
}

#[test]
fn each_attempt_gets_only_what_is_left_of_the_deadline() {
    let mut config = config();
    config.timeout = Duration::from_secs(1);
    let slow = |code| {
        let mut step = status(code, "x");
        step.takes = ms(300);
        step
    };
    let (result, script, _) = run(config, vec![slow(500), slow(500), slow(200)]);
    // 300 ms + 250 ms backoff, then 300 ms + 500 ms backoff would pass the deadline.
    assert!(matches!(
        result,
        Err(LlmError::Upstream { attempts: 2, .. })
    ));
    assert_eq!(*script.timeouts.borrow(), [ms(1000), ms(450)]);
}

#[test]
fn an_answer_slower_than_the_deadline_is_a_timeout() {
    let mut config = config();
    config.timeout = Duration::from_secs(2);
    let mut slow = status(200, &golden(OK));
    slow.takes = Duration::from_secs(5);
    let (result, script, clock) = run(config, vec![slow]);
    let e = result.unwrap_err();
    assert!(matches!(e, LlmError::Timeout { attempts: 1, .. }), "{e}");
    assert!(e.retryable());
    assert_eq!(script.attempts(), 1);
    assert_eq!(clock.sleeps.borrow().len(), 0);
}

#[test]
fn no_configuration_means_no_request() {
    for config in [
        LlmConfig::new("", "m"),
        LlmConfig::new("llm:11434/v1", "m"),
        LlmConfig::new("http://llm:1/v1", " "),
    ] {
        let (result, script, _) = run(config, vec![]);
        assert!(
            matches!(result, Err(LlmError::NotConfigured(_))),
            "{result:?}"
        );
        assert_eq!(script.attempts(), 0);
    }
}

#[test]
fn long_error_bodies_are_cut_to_an_excerpt() {
    let long = "x".repeat(5_000);
    let (result, _, _) = run(config(), vec![status(400, &long)]);
    let Err(LlmError::Upstream { body, .. }) = result else {
        panic!("expected an upstream error");
    };
    assert_eq!(body.chars().count(), 501);
    assert!(body.ends_with('…'));
}
