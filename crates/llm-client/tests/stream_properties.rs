//! The SSE parser is incremental: where the network cuts the body must not matter.

mod common;

use common::golden;
use llm_client::{ChatResponse, StreamEvent, StreamParser};
use proptest::prelude::*;

fn parse_in_pieces(body: &[u8], cuts: &[usize]) -> (ChatResponse, Vec<StreamEvent>) {
    let mut parser = StreamParser::new();
    let mut events = vec![];
    let mut start = 0;
    let mut cuts: Vec<usize> = cuts.iter().map(|c| c % (body.len() + 1)).collect();
    cuts.sort_unstable();
    for cut in cuts.into_iter().chain([body.len()]) {
        events.extend(parser.feed(&body[start..cut]).expect("valid stream"));
        start = cut;
    }
    let (answer, rest) = parser.finish().expect("complete stream");
    events.extend(rest);
    (answer, events)
}

fn crlf(text: &str) -> String {
    text.replace('\n', "\r\n")
}

proptest! {
    #[test]
    fn chunk_boundaries_do_not_change_the_result(
        cuts in proptest::collection::vec(any::<usize>(), 0..40),
        which in 0usize..4,
    ) {
        let body = match which {
            0 => golden("stream_text.sse"),
            1 => golden("stream_tool_calls.sse"),
            2 => crlf(&golden("stream_text.sse")),
            _ => crlf(&golden("stream_tool_calls.sse")),
        };
        let whole = parse_in_pieces(body.as_bytes(), &[]);
        let pieces = parse_in_pieces(body.as_bytes(), &cuts);
        prop_assert_eq!(&whole, &pieces);
    }

    #[test]
    fn content_deltas_concatenate_to_the_content(
        deltas in proptest::collection::vec("[a-zA-Z0-9 供应商订单\"\\\\\n]{0,12}", 1..12),
        cuts in proptest::collection::vec(any::<usize>(), 0..20),
    ) {
        let mut body = String::new();
        for d in &deltas {
            let chunk = serde_json::json!({"choices": [{"index": 0, "delta": {"content": d}}]});
            body.push_str(&format!("data: {chunk}\n\n"));
        }
        body.push_str("data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n");
        let (answer, events) = parse_in_pieces(body.as_bytes(), &cuts);
        prop_assert_eq!(&answer.content, &deltas.concat());
        let streamed: String = events.iter().filter_map(|e| match e {
            StreamEvent::Content(t) => Some(t.as_str()),
            _ => None,
        }).collect();
        prop_assert_eq!(streamed, deltas.concat());
    }

    #[test]
    fn tool_arguments_split_anywhere_reassemble(
        arguments in "\\{\"q\": \"[a-z供 ]{0,20}\", \"n\": [0-9]{1,4}\\}",
        splits in proptest::collection::vec(any::<usize>(), 0..6),
    ) {
        // Split the arguments text into fragments at char boundaries.
        let chars: Vec<char> = arguments.chars().collect();
        let mut points: Vec<usize> = splits.iter().map(|s| s % (chars.len() + 1)).collect();
        points.push(chars.len());
        points.sort_unstable();
        let mut body = String::from("data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c\",\"function\":{\"name\":\"f\",\"arguments\":\"\"}}]}}]}\n\n");
        let mut start = 0;
        for p in points {
            let fragment: String = chars[start..p].iter().collect();
            start = p;
            let chunk = serde_json::json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": fragment}}]}}]});
            body.push_str(&format!("data: {chunk}\n\n"));
        }
        body.push_str("data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n");
        let (answer, _) = parse_in_pieces(body.as_bytes(), &[]);
        prop_assert_eq!(answer.tool_calls.len(), 1);
        prop_assert_eq!(&answer.tool_calls[0].arguments, &arguments);
    }
}

#[test]
fn multi_line_data_fields_are_joined_and_comments_ignored() {
    let body = ": ping\nevent: message\ndata: {\"choices\":[{\"index\":0,\ndata: \"delta\":{\"content\":\"hi\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n";
    let (answer, _) = parse_in_pieces(body.as_bytes(), &[]);
    assert_eq!(answer.content, "hi");
}

#[test]
fn an_error_chunk_mid_stream_fails_the_call() {
    let mut parser = StreamParser::new();
    let e = parser
        .feed(b"data: {\"error\": {\"message\": \"overloaded\"}}\n\n")
        .unwrap_err();
    assert!(e.to_string().contains("overloaded"), "{e}");
}

#[test]
fn nothing_after_done_counts() {
    let body = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\ndata: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"b\"}}]}\n\n";
    let (answer, _) = parse_in_pieces(body.as_bytes(), &[]);
    assert_eq!(answer.content, "a");
}
