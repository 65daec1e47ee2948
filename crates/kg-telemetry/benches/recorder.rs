//! The CPU cost of tracing one agent turn, without I/O: a 4-tool turn's ~25 spans (server,
//! router, 5 LLM calls, 4 tools with their component calls and 8 statements, summariser)
//! recorded with their attributes, then encoded as the OTLP JSON export body. The
//! end-to-end bench (tests/benches/tracing_overhead.rs) measures the whole request; this
//! one isolates what tracing computes, which noise on a shared machine hides there.
//! Run: `cargo bench -p kg-telemetry --bench recorder`.

use kg_telemetry::{Settings, SpanKind, Value, attr};
use std::hint::black_box;
use std::time::Instant;

const TURNS: u32 = 20_000;

fn turn(settings: Settings, encode: bool) -> usize {
    kg_telemetry::begin(None, None, settings);
    let mut server = kg_telemetry::span("POST /chat", SpanKind::Server);
    server.set(attr::HTTP_REQUEST_METHOD, "POST");
    server.set(attr::HTTP_ROUTE, "/chat");
    drop(kg_telemetry::span("router", SpanKind::Internal));
    for step in 0..5 {
        {
            let mut llm = kg_telemetry::span("chat stub", SpanKind::Client);
            llm.set(attr::GEN_AI_OPERATION_NAME, "chat");
            llm.set(attr::GEN_AI_PROVIDER_NAME, "openai");
            llm.set(attr::GEN_AI_REQUEST_MODEL, "stub");
            llm.set(attr::GEN_AI_RESPONSE_MODEL, "stub");
            llm.set(attr::GEN_AI_USAGE_INPUT_TOKENS, 10u32);
            llm.set(attr::GEN_AI_USAGE_OUTPUT_TOKENS, 5u32);
            llm.set(
                attr::GEN_AI_RESPONSE_FINISH_REASONS,
                Value::StrArray(vec!["tool_calls".into()]),
            );
            llm.set(attr::SERVER_ADDRESS, "127.0.0.1");
            black_box(kg_telemetry::current_traceparent());
        }
        if step == 4 {
            break;
        }
        let mut tool = kg_telemetry::span("execute_tool get_node_statistics", SpanKind::Internal);
        tool.set(attr::GEN_AI_TOOL_NAME, "get_node_statistics");
        tool.set(attr::GEN_AI_TOOL_CALL_ID, "call-1-0");
        let _component = kg_telemetry::span("query-tools", SpanKind::Internal);
        for _ in 0..2 {
            let mut statement = kg_telemetry::span("MATCH Supplier RETURN", SpanKind::Client);
            statement.set(attr::DB_SYSTEM_NAME, "neo4j");
            statement.set(attr::DB_OPERATION_NAME, "MATCH");
            statement.set(attr::DB_QUERY_SUMMARY, "MATCH Supplier RETURN");
            statement.set(attr::DB_RESPONSE_RETURNED_ROWS, 1usize);
            black_box(kg_telemetry::current_traceparent());
        }
    }
    drop(kg_telemetry::span("summariser", SpanKind::Internal));
    drop(server);
    let spans = kg_telemetry::take_finished();
    if spans.is_empty() || !encode {
        return spans.len();
    }
    kg_telemetry::otlp::export_request("kg-agent", "0.1.0", &spans, &[]).len()
}

fn main() {
    for (label, export, encode) in [
        ("not recorded", false, false),
        ("recorded (during the request)", true, false),
        (
            "recorded and encoded (encoding follows the response)",
            true,
            true,
        ),
    ] {
        let settings = Settings {
            export,
            component: "dispatcher",
            ..Settings::default()
        };
        for _ in 0..1_000 {
            black_box(turn(settings, encode));
        }
        let started = Instant::now();
        let mut bytes = 0;
        for _ in 0..TURNS {
            bytes = black_box(turn(settings, encode));
        }
        let per_turn = started.elapsed().as_secs_f64() * 1e6 / f64::from(TURNS);
        println!("4-tool turn, {label}: {per_turn:.1} µs per turn ({bytes} spans or body bytes)");
    }
}
