//! A long action batch survives a proxy that cuts its stream (issue #16 item 3: "what makes
//! long batch runs survive proxies and serverless request limits"), and one whose client
//! never comes back stops cleanly (item 2).
//!
//! The agent plans paying 1,000 orders (more than the approval threshold), an approver
//! streams the batch (`POST /chat/approve`, `text/event-stream`) through a [`CutProxy`],
//! and the graph sits behind a paced link (every statement held 150 ms, one at a time), so
//! the batch's 20 chunks of 50 (10 at a time) take about 3 s. The proxy cuts the stream
//! mid-batch; the client resumes with `Last-Event-ID` at `GET /chat/stream/{turn_id}` (cut
//! again after 20 kB, mid-frame, and resumed once more) and must see every event exactly
//! once, in order, up to the report, `completed` and `done`, while the graph pays every
//! order exactly once. Without a resume, the turn cancels after `chat_resume_grace_ms`:
//! the chunks already running finish, none starts after that, and what was applied is
//! what the conversation and the kept events report.

use kg_e2e::chat_client::{approve_streamed, last_turn, resume, turn_id};
use kg_e2e::cut_proxy::CutProxy;
use kg_e2e::llm_stub::{ScriptedLlm, call, text};
use kg_e2e::sse::{self, Frame, read_to_end, read_until, seq_of};
use kg_e2e::{AppHost, GRAPH_PASSWORD, Graph, app_manifest, auth, events};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

const ORDERS: usize = 1_000;
const PREFIX: &str = "PO-CUT";
/// How long the paced graph link holds each statement.
const PACE: Duration = Duration::from_millis(150);

/// devgraph behind a paced link, the application (with a scripted LLM) behind a cutting
/// proxy, and a plan to pay [`ORDERS`] orders waiting for approval.
struct Setup {
    graph: Graph,
    graph_link: CutProxy,
    host: AppHost,
    front: CutProxy,
    conversation: String,
    token: String,
    _llm: ScriptedLlm,
    _dir: tempfile::TempDir,
}

async fn setup(grace_ms: u64) -> Setup {
    let graph = Graph::start().await.unwrap();
    graph
        .write("MATCH (a:Account {id: 'ACC-MAIN'}) SET a.balance = 100000000.0")
        .await
        .unwrap();
    let ids = graph
        .create_approved_orders(PREFIX, ORDERS, 10.0)
        .await
        .unwrap();
    let graph_link = CutProxy::start(&graph.url).await.unwrap();
    let llm = ScriptedLlm::start().await;
    llm.then([
        call(
            "propose_action_plan",
            json!({"entity_type": "PurchaseOrder", "action_name": "makePayment", "entity_ids": ids, "parameters": {"reference": "CUT-1"}}),
        ),
        text("Paid every order."),
        text("Paid every order."),
        text("spare"),
    ]);
    let dir = tempfile::tempdir().unwrap();
    let mut variables = vec![
        ("neo4j_origin", graph_link.url.clone()),
        ("neo4j_password", GRAPH_PASSWORD.to_string()),
        ("chat_resume_grace_ms", grace_ms.to_string()),
    ];
    variables.extend(llm.variables());
    let host = AppHost::start(&app_manifest(), &dir.path().join("kv.db"), &variables)
        .await
        .unwrap();
    let front = CutProxy::start(&host.url).await.unwrap();

    let planning = Instant::now();
    let (status, planned) = host
        .send(
            "POST",
            "/chat",
            &json!({"message": format!("Pay the {ORDERS} approved {PREFIX} orders"), "routing_mode": "rule"})
                .to_string(),
        )
        .await
        .unwrap();
    assert_eq!(status, 200, "{planned}");
    eprintln!("setup: planned in {:?}", planning.elapsed());
    let token = planned["approval"]["approval_token"]
        .as_str()
        .unwrap_or_else(|| panic!("the plan waits for approval: {planned}"))
        .to_string();
    let conversation = planned["conversation_id"].as_str().unwrap().to_string();
    Setup {
        graph,
        graph_link,
        host,
        front,
        conversation,
        token,
        _llm: llm,
        _dir: dir,
    }
}

impl Setup {
    /// Starts the approved batch, streamed through the cutting proxy, with the graph paced.
    async fn approve(&self) -> reqwest::Response {
        self.graph_link.pace(Some(PACE));
        let response = approve_streamed(&self.front.url, auth::APPROVER, &self.token)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        response
    }

    /// Resumes `turn` through the proxy after the last of `seen`, reading until the stream
    /// ends or is cut; the whole events read (checked to continue `seen` exactly), and
    /// whether the stream ended cleanly.
    async fn resume_after(&self, turn: &str, seen: &[Frame]) -> (Vec<Frame>, bool) {
        let last = seen
            .last()
            .and_then(|(id, _)| id.clone())
            .expect("an event id");
        let mut response = resume(&self.front.url, auth::APPROVER, turn, Some(&last))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        let (body, clean) = read_to_end(&mut response).await;
        let frames = sse::frames(&body);
        assert_continues(turn, seq_of(&last), &frames);
        (frames, clean)
    }

    /// (orders paid once, orders paid more than once, orders not paid) in the graph.
    async fn payments(&self) -> (i64, i64, i64) {
        let rows = self
            .graph
            .query(&format!(
                "MATCH (o:PurchaseOrder) WHERE o.id STARTS WITH '{PREFIX}-' \
                 OPTIONAL MATCH (p:Payment)-[:PAYS]->(o) \
                 WITH o, count(p) AS n RETURN n, count(o)"
            ))
            .await
            .unwrap();
        let mut counts = (0, 0, 0);
        for row in rows {
            let (n, orders) = (row[0].as_i64().unwrap(), row[1].as_i64().unwrap());
            match n {
                0 => counts.2 += orders,
                1 => counts.0 += orders,
                _ => counts.1 += orders,
            }
        }
        counts
    }

    /// Action-log entries of this batch's payments.
    async fn logged(&self) -> i64 {
        self.graph
            .query(&format!(
                "MATCH (l:ActionLog) WHERE l.action_name = 'makePayment' AND l.entity_id STARTS WITH '{PREFIX}-' RETURN count(l)"
            ))
            .await
            .unwrap()[0][0]
            .as_i64()
            .unwrap()
    }
}

fn progress_count(frames: &[Frame]) -> usize {
    frames
        .iter()
        .filter(|(_, e)| e["type"] == "action_progress")
        .count()
}

/// Checks that the stream's `action_complete` reports all [`ORDERS`], `succeeded` of them
/// applied.
fn assert_batch_counts(stream: &[Value], succeeded: i64) {
    let complete = stream
        .iter()
        .find(|e| e["type"] == "action_complete")
        .unwrap_or_else(|| panic!("no action_complete: {stream:?}"));
    assert_eq!(complete["results"]["total"], ORDERS, "{complete}");
    assert_eq!(complete["results"]["succeeded"], succeeded, "{complete}");
}

/// Checks that `frames`, read on a connection resumed after `after`, continue it exactly:
/// ids `<turn>:<after+1>`, `<turn>:<after+2>`, … with no gap.
fn assert_continues(turn: &str, after: u64, frames: &[Frame]) {
    for (i, (id, event)) in frames.iter().enumerate() {
        let expected = format!("{turn}:{}", after + 1 + i as u64);
        assert_eq!(id.as_deref(), Some(expected.as_str()), "{event}");
    }
}

#[tokio::test]
async fn a_long_batch_streamed_through_a_proxy_that_cuts_it_is_resumed_to_its_report() {
    let s = setup(10_000).await;
    let mut first = s.approve().await;
    let turn = turn_id(&first);
    // Cut once the first chunk's progress is out, while later chunks run.
    let seen = read_until(&mut first, |read| progress_count(&sse::frames(read)) >= 50).await;
    s.front.cut_all();
    let cut = Instant::now();
    let (rest, clean) = read_to_end(&mut first).await;
    assert!(!clean, "the cut connection ended cleanly");
    let mut all = sse::frames(&(seen + &rest));
    assert_continues(&turn, 0, &all);
    let paid_at_cut = s.payments().await.0;
    assert!(
        paid_at_cut < ORDERS as i64,
        "the batch was over before the cut ({paid_at_cut} paid): it must outlast it"
    );

    // Back 300 ms later; this connection is cut too, after 20 kB (mid-frame).
    tokio::time::sleep(Duration::from_millis(300)).await;
    s.front.cut_each_after(Some(20_000));
    let (resumed, clean) = s.resume_after(&turn, &all).await;
    assert!(!clean, "the second connection was not cut");
    assert!(!resumed.is_empty(), "20 kB held no whole event");
    all.extend(resumed);

    // And once more, to the end.
    s.front.cut_each_after(None);
    let (resumed, clean) = s.resume_after(&turn, &all).await;
    assert!(clean, "the last connection was cut");
    all.extend(resumed);
    println!(
        "{} events over 3 connections ({} cut); first cut to done: {:?}",
        all.len(),
        s.front.cut_connections(),
        cut.elapsed()
    );

    // The whole stream: schema-valid, `completed` then `done` last, every order's
    // progress once and in order, the report.
    let stream: Vec<Value> = all.iter().map(|(_, e)| e.clone()).collect();
    events::check_stream(&stream);
    let progress: Vec<u64> = stream
        .iter()
        .filter(|e| e["type"] == "action_progress")
        .map(|e| e["completed"].as_u64().unwrap())
        .collect();
    assert_eq!(progress, (1..=ORDERS as u64).collect::<Vec<_>>());
    assert_batch_counts(&stream, ORDERS as i64);
    let completed = &stream[stream.len() - 2];
    assert_eq!(completed["status"], "answered", "{completed}");
    assert_eq!(completed["turn_id"], turn.as_str(), "{completed}");
    assert!(!stream.iter().any(|e| e["type"] == "error"), "{stream:?}");

    // The graph paid every order exactly once; the conversation has the report.
    assert_eq!(s.payments().await, (ORDERS as i64, 0, 0));
    assert_eq!(s.logged().await, ORDERS as i64);
    let report = last_turn(&s.host, &s.conversation).await;
    assert_ne!(report["route"], "cancelled", "{report}");
    assert_eq!(report["content"], completed["answer"], "{report}");
}

#[tokio::test]
async fn a_cut_batch_nobody_resumes_stops_after_the_grace_and_reports_what_it_applied() {
    const GRACE_MS: u64 = 200;
    let s = setup(GRACE_MS).await;
    let mut first = s.approve().await;
    let turn = turn_id(&first);
    read_until(&mut first, |read| progress_count(&sse::frames(read)) >= 50).await;
    s.front.cut_all();
    let cut = Instant::now();
    drop(first);

    // The conversation records the cancellation once the grace has passed.
    let recorded = loop {
        let last = last_turn(&s.host, &s.conversation).await;
        if last["route"] == "cancelled" {
            break last;
        }
        assert!(
            cut.elapsed() < Duration::from_secs(20),
            "no cancelled turn recorded: {last}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let took = cut.elapsed();
    let (paid, twice, unpaid) = s.payments().await;
    println!(
        "cut to cancelled turn recorded: {took:?}; {paid} of {ORDERS} paid: {}",
        recorded["content"]
    );
    assert!(took >= Duration::from_millis(GRACE_MS), "{took:?}");
    assert_eq!(twice, 0);
    assert!(paid >= 50 && unpaid > 0, "{paid} paid, {unpaid} not");
    assert_eq!(paid + unpaid, ORDERS as i64);

    // No chunk starts after that: long past when the whole batch would have finished,
    // the graph holds what it held when the cancellation was recorded.
    tokio::time::sleep(PACE * (ORDERS as u32 / 50) + Duration::from_secs(1)).await;
    assert_eq!(s.payments().await, (paid, 0, unpaid));
    assert_eq!(s.logged().await, paid);

    // What was applied is reported: in the kept events (a reader coming back now gets them,
    // ending with the cancellation) and in the conversation.
    let kept = resume(&s.host.url, auth::APPROVER, &turn, None)
        .send()
        .await
        .unwrap();
    assert_eq!(kept.status(), 200);
    let kept = sse::frames(&kept.text().await.unwrap());
    assert_continues(&turn, 0, &kept);
    let stream: Vec<Value> = kept.iter().map(|(_, e)| e.clone()).collect();
    events::check_stream(&stream);
    // Every order has its outcome: the paid ones succeeded, the rest were cancelled unrun.
    assert_eq!(progress_count(&kept), ORDERS);
    let succeeded = stream
        .iter()
        .filter(|e| e["type"] == "action_progress" && e["success"] == true)
        .count();
    assert_eq!(succeeded as i64, paid);
    let not_started: Vec<&Value> = stream
        .iter()
        .filter(|e| e["type"] == "action_error")
        .collect();
    assert_eq!(not_started.len() as i64, unpaid);
    assert!(
        not_started.iter().all(|e| e["reason"] == "cancelled"),
        "{not_started:?}"
    );
    assert_batch_counts(&stream, paid);
    let error = stream
        .iter()
        .find(|e| e["type"] == "error")
        .expect("the cancellation");
    assert_eq!(error["code"], "client_gone", "{error}");
    assert!(!stream.iter().any(|e| e["type"] == "content"), "no report");
    let summary = last_turn_with_counts(&s, paid).await;
    println!("recorded: {summary}");
}

/// The conversation's turn that reports the cancelled batch's counts.
async fn last_turn_with_counts(s: &Setup, paid: i64) -> Value {
    let (_, c) = s
        .host
        .get(&format!("/conversations/{}", s.conversation))
        .await
        .unwrap();
    let needle = format!("{paid} of {ORDERS} succeeded");
    c["turns"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|t| t["content"].as_str().is_some_and(|c| c.contains(&needle)))
        .cloned()
        .unwrap_or_else(|| panic!("no turn reports {needle}: {c}"))
}
