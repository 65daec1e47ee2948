//! The byte cap on a tool's whole answer (issue #14): `data` and the subgraph for drawing
//! (`graph_data`) together, serialised as the HTTP API sends them, fit in
//! [`MAX_RESULT_BYTES`]. An answer over it loses items from the end of its largest arrays
//! (rows, nodes, relationships) until it fits, says it was cut (`truncated: true`) and
//! counts what was kept of what (`data.truncation`).

use kg_wit::types::GraphData;
use serde_json::{Value as Json, json};

/// 256 KiB: plenty for an LLM's context, small enough for a WIT call and an HTTP answer.
pub const MAX_RESULT_BYTES: usize = 256 * 1024;

/// Room left in the cap for what the dispatcher adds around the tool's answer (`tool`,
/// `describe_class`'s `available_actions`): the tool's own part fits in the rest.
pub const ENVELOPE_RESERVE: usize = 4 * 1024;

/// One array that lost items: where it is (dotted path from `data`), how many items it
/// kept, how many it had.
#[derive(Debug, Clone, PartialEq)]
pub struct Cut {
    pub path: String,
    pub kept: usize,
    pub total: usize,
}

/// Shrinks `data` to at most `max` bytes of JSON; the arrays it cut.
pub fn cap(data: &mut Json, max: usize) -> Vec<Cut> {
    let mut cuts: Vec<Cut> = Vec::new();
    let mut size = json_len(&data);
    while size > max {
        let Some((path, array)) = largest_array(data) else {
            // No array left to shorten (one huge scalar): replace the answer by a note.
            *data = json!({"error": "the result is too large to return", "bytes": size});
            cuts.push(Cut {
                path: String::new(),
                kept: 0,
                total: 1,
            });
            return cuts;
        };
        // Drop about the share of items that is over the cap, at least one.
        let len = array.len();
        let keep = ((len as f64 * max as f64 / size as f64).floor() as usize).min(len - 1);
        array.truncate(keep);
        match cuts.iter_mut().find(|c| c.path == path) {
            Some(cut) => cut.kept = keep,
            None => cuts.push(Cut {
                path,
                kept: keep,
                total: len,
            }),
        }
        size = json_len(&data);
    }
    cuts
}

/// The subgraph as the HTTP API serialises it (`graph_data`).
pub fn graph_json(graph: &GraphData) -> Json {
    json!({
        "nodes": graph.nodes.iter().map(node_json).collect::<Vec<_>>(),
        "edges": graph.edges.iter().map(edge_json).collect::<Vec<_>>(),
    })
}

fn node_json(n: &kg_wit::types::GraphNode) -> Json {
    json!({"id": n.id, "labels": n.labels, "caption": n.caption, "properties": parse(&n.properties)})
}

fn edge_json(e: &kg_wit::types::GraphEdge) -> Json {
    json!({"id": e.id, "type": e.rel_type, "source": e.source, "target": e.target, "properties": parse(&e.properties)})
}

fn parse(text: &str) -> Json {
    serde_json::from_str(text).unwrap_or_else(|_| Json::String(text.to_string()))
}

/// The answer's size as the HTTP API sends it (`tool`, `data`, `summary`, `graph_data`,
/// `truncated`).
pub fn answer_bytes(tool: &str, data: &Json, summary: &str, graph: Option<&GraphData>) -> usize {
    /// The answer as the HTTP API sends it, borrowing `data` (building it with `json!`
    /// cloned the whole result on every tool call just to measure it).
    #[derive(serde::Serialize)]
    struct Answer<'a> {
        tool: &'a str,
        data: &'a Json,
        summary: &'a str,
        graph_data: Option<Json>,
        truncated: bool,
    }
    json_len(&Answer {
        tool,
        data,
        summary,
        graph_data: graph.map(graph_json),
        truncated: true,
    })
}

/// How many bytes `value` takes as compact JSON, counted as serde_json writes it (no
/// string is built).
pub fn json_len<T: serde::Serialize + ?Sized>(value: &T) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 += bytes.len();
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    // Writing to a counter cannot fail, and a `Json` or these fields always serialise.
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}

/// Fits the whole answer (data and graph together) in `max` bytes. True when anything
/// was cut; then `data.truncation` (when `data` is an object) says what was kept:
/// `{"<array path>": {"kept", "total"}, "nodes": {…}, "relationships": {…}}`.
pub fn cap_answer(
    tool: &str,
    data: &mut Json,
    summary: &str,
    graph: &mut Option<GraphData>,
    max: usize,
) -> bool {
    if answer_bytes(tool, data, summary, graph.as_ref()) <= max {
        return false;
    }
    // Room for the truncation note itself.
    let note_reserve = 512;
    let overhead = answer_bytes(tool, &Json::Null, summary, None) + note_reserve + 64;
    let available = max.saturating_sub(overhead);
    let data_size = json_len(&data);
    let graph_size = graph.as_ref().map_or(0, |g| json_len(&graph_json(g)));
    // Each part keeps all of itself when it is the smaller half; otherwise they share.
    let (mut data_budget, mut graph_budget) = if data_size <= available / 2 {
        (data_size, available - data_size)
    } else if graph_size <= available / 2 {
        (available - graph_size, graph_size)
    } else {
        (available / 2, available - available / 2)
    };
    let original_nodes = graph.as_ref().map_or(0, |g| g.nodes.len());
    let original_edges = graph.as_ref().map_or(0, |g| g.edges.len());
    let mut cuts: Vec<Cut> = Vec::new();
    loop {
        for cut in cap(data, data_budget) {
            match cuts.iter_mut().find(|c| c.path == cut.path) {
                Some(known) => known.kept = cut.kept,
                None => cuts.push(cut),
            }
        }
        if let Some(g) = graph.as_mut() {
            cap_graph(g, graph_budget);
        }
        let (nodes, edges) = graph
            .as_ref()
            .map_or((0, 0), |g| (g.nodes.len(), g.edges.len()));
        if let Json::Object(map) = data {
            let mut note = serde_json::Map::new();
            for cut in &cuts {
                let key = if cut.path.is_empty() {
                    "data".to_string()
                } else {
                    cut.path.clone()
                };
                note.insert(key, json!({"kept": cut.kept, "total": cut.total}));
            }
            if nodes < original_nodes {
                note.insert(
                    "nodes".into(),
                    json!({"kept": nodes, "total": original_nodes}),
                );
            }
            if edges < original_edges {
                note.insert(
                    "relationships".into(),
                    json!({"kept": edges, "total": original_edges}),
                );
            }
            map.insert("truncation".into(), Json::Object(note));
        }
        if answer_bytes(tool, data, summary, graph.as_ref()) <= max {
            return true;
        }
        if data_budget == 0 && graph_budget == 0 {
            // Nothing left to shrink but the note and the summary.
            *data = json!({"error": "the result is too large to return"});
            *graph = None;
            return true;
        }
        if let Json::Object(map) = data {
            map.remove("truncation");
        }
        data_budget = data_budget * 3 / 4;
        graph_budget = graph_budget * 3 / 4;
    }
}

/// Keeps the nodes (and then the relationships between kept nodes) that fit in `max`
/// bytes, in order; nodes get the share of the budget their size has.
fn cap_graph(graph: &mut GraphData, max: usize) {
    let node_sizes: Vec<usize> = graph
        .nodes
        .iter()
        .map(|n| json_len(&node_json(n)) + 1)
        .collect();
    let edge_sizes: Vec<usize> = graph
        .edges
        .iter()
        .map(|e| json_len(&edge_json(e)) + 1)
        .collect();
    let wrapper = r#"{"nodes":[],"edges":[]}"#.len();
    let (nodes_total, edges_total): (usize, usize) =
        (node_sizes.iter().sum(), edge_sizes.iter().sum());
    if wrapper + nodes_total + edges_total <= max {
        return;
    }
    let room = max.saturating_sub(wrapper);
    let node_room = if nodes_total + edges_total == 0 {
        room
    } else {
        (room as f64 * nodes_total as f64 / (nodes_total + edges_total) as f64) as usize
    };
    let mut used = 0;
    let keep_nodes = node_sizes
        .iter()
        .take_while(|s| {
            used += **s;
            used <= node_room
        })
        .count();
    graph.nodes.truncate(keep_nodes);
    let used_nodes: usize = node_sizes[..keep_nodes].iter().sum();
    let ids: std::collections::HashSet<&str> = graph.nodes.iter().map(|n| n.id.as_str()).collect();
    let mut kept_edges = Vec::new();
    let mut used_edges = 0;
    for (edge, size) in graph.edges.iter().zip(&edge_sizes) {
        if !ids.contains(edge.source.as_str()) || !ids.contains(edge.target.as_str()) {
            continue;
        }
        if used_nodes + used_edges + size > room {
            break;
        }
        used_edges += size;
        kept_edges.push(edge.clone());
    }
    graph.edges = kept_edges;
}

/// The non-empty array with the largest JSON text, anywhere in `value`, with its dotted
/// path.
fn largest_array(value: &mut Json) -> Option<(String, &mut Vec<Json>)> {
    fn find(value: &Json, path: &mut Vec<usize>, best: &mut Option<(usize, Vec<usize>)>) {
        let children: Vec<&Json> = match value {
            Json::Array(items) => {
                if !items.is_empty() {
                    let size = json_len(&value);
                    if best.as_ref().is_none_or(|(s, _)| size > *s) {
                        *best = Some((size, path.clone()));
                    }
                }
                items.iter().collect()
            }
            Json::Object(map) => map.values().collect(),
            _ => return,
        };
        for (i, child) in children.into_iter().enumerate() {
            path.push(i);
            find(child, path, best);
            path.pop();
        }
    }
    let mut best = None;
    find(value, &mut Vec::new(), &mut best);
    let (_, path) = best?;
    let mut names = Vec::new();
    let mut at = value;
    for i in path {
        at = match at {
            Json::Array(items) => {
                names.push(i.to_string());
                items.get_mut(i)?
            }
            Json::Object(map) => {
                let (key, child) = map.iter_mut().nth(i)?;
                names.push(key.clone());
                child
            }
            _ => return None,
        };
    }
    Some((names.join("."), at.as_array_mut()?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use kg_wit::types::{GraphEdge, GraphNode};
    use proptest::prelude::*;

    #[test]
    fn small_answers_are_untouched() {
        let mut data = json!({"rows": [[1, "a"], [2, "b"]]});
        assert!(cap(&mut data, 1000).is_empty());
        assert_eq!(data, json!({"rows": [[1, "a"], [2, "b"]]}));
        let mut graph = Some(graph(3, 10));
        assert!(!cap_answer("t", &mut data, "s", &mut graph, 100_000));
        assert_eq!(graph.unwrap().nodes.len(), 3);
    }

    #[test]
    fn the_largest_array_is_shortened_from_the_end() {
        let rows: Vec<Json> = (0..1000).map(|i| json!([i, "x".repeat(100)])).collect();
        let mut data = json!({"fields": ["i", "s"], "rows": rows});
        let cuts = cap(&mut data, 10_000);
        assert_eq!(cuts.len(), 1);
        assert_eq!(cuts[0].path, "rows");
        assert_eq!(cuts[0].total, 1000);
        assert_eq!(cuts[0].kept, data["rows"].as_array().unwrap().len());
        assert!(data.to_string().len() <= 10_000);
        assert_eq!(data["fields"], json!(["i", "s"]));
        assert_eq!(data["rows"][0][0], 0);
        assert!(data["rows"].as_array().unwrap().len() > 50);
    }

    fn graph(nodes: usize, width: usize) -> GraphData {
        GraphData {
            nodes: (0..nodes)
                .map(|i| GraphNode {
                    id: format!("n{i}"),
                    labels: vec!["L".into()],
                    caption: format!("node {i}"),
                    properties: json!({"text": "p".repeat(width)}).to_string(),
                })
                .collect(),
            edges: (1..nodes)
                .map(|i| GraphEdge {
                    id: format!("e{i}"),
                    rel_type: "R".into(),
                    source: format!("n{}", i - 1),
                    target: format!("n{i}"),
                    properties: json!({"w": "q".repeat(width / 2)}).to_string(),
                })
                .collect(),
        }
    }

    /// Issue #14: `MATCH p=(a)-[*]-(b) RETURN p` came back at 362 KB, data and graph
    /// together: each under the cap alone, over it together.
    #[test]
    fn data_and_graph_together_fit_with_counts() {
        let rows: Vec<Json> = (0..1000).map(|i| json!([i, "x".repeat(180)])).collect();
        let mut data = json!({"fields": ["i", "s"], "rows": rows});
        let mut g = Some(graph(1000, 160));
        let before = answer_bytes("run_read_cypher", &data, "1000 rows", g.as_ref());
        assert!(before > MAX_RESULT_BYTES, "{before}");
        assert!(cap_answer(
            "run_read_cypher",
            &mut data,
            "1000 rows",
            &mut g,
            MAX_RESULT_BYTES
        ));
        let after = answer_bytes("run_read_cypher", &data, "1000 rows", g.as_ref());
        assert!(after <= MAX_RESULT_BYTES, "{after}");
        let g = g.unwrap();
        let t = &data["truncation"];
        assert_eq!(t["rows"]["total"], 1000);
        assert_eq!(t["rows"]["kept"], data["rows"].as_array().unwrap().len());
        assert_eq!(t["nodes"], json!({"kept": g.nodes.len(), "total": 1000}));
        assert_eq!(t["relationships"]["total"], 999);
        assert_eq!(t["relationships"]["kept"], g.edges.len());
        // Both kept a fair share, and every kept relationship joins kept nodes.
        assert!(g.nodes.len() > 100 && data["rows"].as_array().unwrap().len() > 100);
        assert!(
            g.edges
                .iter()
                .all(|e| g.nodes.iter().any(|n| n.id == e.source)
                    && g.nodes.iter().any(|n| n.id == e.target))
        );
    }

    proptest! {
        /// The counted length is the length of the text the API sends: the answer built
        /// as a JSON value and printed, escapes and non-ASCII text included.
        #[test]
        fn answer_bytes_is_the_printed_answer_s_length(
            text in "\\PC{0,40}",
            numbers in proptest::collection::vec(any::<f64>(), 0..5),
            nodes in 0usize..5,
            with_graph in any::<bool>(),
        ) {
            let data = json!({"rows": [[text.clone(), numbers]], "note": "\"quoted\"\n"});
            let g = with_graph.then(|| graph(nodes, 3));
            let printed = json!({
                "tool": "run_read_cypher",
                "data": data,
                "summary": text,
                "graph_data": g.as_ref().map(graph_json),
                "truncated": true,
            })
            .to_string()
            .len();
            prop_assert_eq!(answer_bytes("run_read_cypher", &data, &text, g.as_ref()), printed);
            prop_assert_eq!(json_len(&data), data.to_string().len());
        }

        #[test]
        fn the_result_always_fits(n in 0usize..300, width in 0usize..500, max in 50usize..20_000) {
            let rows: Vec<Json> = (0..n).map(|i| json!({"i": i, "s": "y".repeat(width)})).collect();
            let mut data = json!({"nested": {"rows": rows}});
            let before = data.to_string().len();
            let cuts = cap(&mut data, max);
            prop_assert!(data.to_string().len() <= max.max(80));
            prop_assert_eq!(!cuts.is_empty(), before > max);
        }

        /// Whatever the rows and the graph, the whole answer as sent fits in the cap.
        #[test]
        fn the_whole_answer_always_fits(
            rows in 0usize..400,
            row_width in 0usize..600,
            nodes in 0usize..400,
            node_width in 0usize..600,
            with_graph in any::<bool>(),
            max in 2_000usize..60_000,
        ) {
            let rows: Vec<Json> = (0..rows).map(|i| json!([i, "r".repeat(row_width)])).collect();
            let mut data = json!({"fields": ["i", "s"], "rows": rows});
            let mut g = with_graph.then(|| graph(nodes, node_width));
            let cut = cap_answer("run_read_cypher", &mut data, "a summary", &mut g, max);
            let after = answer_bytes("run_read_cypher", &data, "a summary", g.as_ref());
            prop_assert!(after <= max, "{} > {}", after, max);
            if cut {
                prop_assert!(data.get("truncation").is_some() || data.get("error").is_some());
            }
        }
    }
}
