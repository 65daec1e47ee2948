//! The injection corpus (`tests/data/cypher_injection.json`) through the whole stack
//! against devgraph: every case answers JSON, never a 5xx; every case the guard must refuse
//! is refused; and the graph is exactly as before (node and relationship counts, and every
//! node's and relationship's labels, type and properties).

use kg_e2e::{Graph, Stack, workspace};
use serde_json::{Value, json};
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

/// Everything a write could change, sorted so the comparison ignores row order.
async fn snapshot(graph: &Graph) -> (Vec<String>, Vec<String>) {
    let mut nodes: Vec<String> = graph
        .query("MATCH (n) RETURN n")
        .await
        .unwrap()
        .iter()
        .map(|row| {
            let n = &row[0];
            format!("{} {} {}", n["elementId"], n["labels"], n["properties"])
        })
        .collect();
    let mut relationships: Vec<String> = graph
        .query("MATCH (a)-[r]->(b) RETURN r")
        .await
        .unwrap()
        .iter()
        .map(|row| row[0].to_string())
        .collect();
    nodes.sort();
    relationships.sort();
    (nodes, relationships)
}

fn checksum(snapshot: &(Vec<String>, Vec<String>)) -> u64 {
    let mut hasher = DefaultHasher::new();
    snapshot.hash(&mut hasher);
    hasher.finish()
}

#[tokio::test]
async fn the_corpus_makes_no_write_and_no_crash() {
    let corpus: Value = serde_json::from_str(
        &std::fs::read_to_string(workspace().join("tests/data/cypher_injection.json")).unwrap(),
    )
    .unwrap();
    let cases = corpus["cases"].as_array().unwrap();
    assert!(cases.len() >= 60);

    let stack = Stack::start().await.unwrap();
    let before = snapshot(&stack.graph).await;
    assert_eq!(before.0.len(), 565, "the demo graph");
    assert!(!before.1.is_empty());

    let mut refused = 0;
    for case in cases {
        let tool = case["tool"].as_str().unwrap();
        let body = case["arguments"].to_string();
        let (status, answer) = stack
            .host
            .send("POST", &format!("/tools/{tool}"), &body)
            .await
            .unwrap();
        let id = &case["id"];
        assert!(status < 500, "case {id} ({tool} {body}): {status} {answer}");
        assert!(answer.is_object(), "case {id}: not JSON: {answer}");
        if case["expect"] == "refused" {
            assert!(
                (400..500).contains(&status) && answer["error"]["code"].is_string(),
                "case {id} was not refused: {status} {answer}"
            );
            refused += 1;
        } else if status != 200 {
            assert!(
                answer["error"]["message"].is_string(),
                "case {id}: {answer}"
            );
        }
    }
    let after = snapshot(&stack.graph).await;
    assert_eq!(before.0.len(), after.0.len(), "node count");
    assert_eq!(before.1.len(), after.1.len(), "relationship count");
    assert_eq!(
        checksum(&before),
        checksum(&after),
        "properties, labels, types"
    );
    assert!(before == after);
    println!(
        "{} cases ({refused} refused by the guard), graph checksum {:x} unchanged",
        cases.len(),
        checksum(&after)
    );
}

/// Issue #14: the resource bombs (and near misses the guard lets through) are 4xx JSON
/// errors, and devgraph is alive and small afterwards.
#[tokio::test]
async fn resource_bombs_are_4xx_and_the_graph_stays_small() {
    let bombs = [
        "RETURN size(range(1, 100000000)) AS s",
        "RETURN reduce(s = 0, x IN range(1, 100000000) | s + x) AS s",
        "RETURN range(1, 20000000) AS r",
        "RETURN [x IN range(1, 100000000) | x * 2] AS xs",
        "UNWIND range(1, $n) AS i RETURN count(i)",
        "UNWIND range(1, 100000) AS a UNWIND range(1, 100000) AS b RETURN count(*)",
        "MATCH p=(a)-[*]-(b) RETURN count(p)",
        "MATCH p=(a)-[*]-(b) RETURN p",
        "MATCH p=(a)-[*2..]-(b) RETURN count(p)",
        "MATCH (a)-->+(b) RETURN count(b)",
        "MATCH ((a)--(b)){1,} RETURN count(b)",
        // Through the guard, stopped by the graph's own limits.
        "MATCH p=(a)-[*1..10]-(b) RETURN count(p) AS n",
        "MATCH (a), (b), (c) WITH collect(a) AS x RETURN size(x) AS n",
        "PROFILE MATCH p=(a)-[*1..10]-(b) RETURN count(p) AS n",
    ];
    let stack = Stack::start().await.unwrap();
    let pid = listener_pid(&stack.graph.url).expect("devgraph's pid");
    for query in bombs {
        let started = std::time::Instant::now();
        let (status, answer) = stack
            .host
            .send(
                "POST",
                "/tools/run_read_cypher",
                &json!({"query": query, "parameters": {"n": 100000000}}).to_string(),
            )
            .await
            .unwrap();
        let took = started.elapsed();
        let rss = rss_kib(pid);
        println!(
            "{query}: {status} {} in {took:?}, devgraph RSS {rss:?} KiB",
            answer["error"]["code"]
        );
        assert!((400..500).contains(&status), "{query}: {status} {answer}");
        assert_eq!(
            answer["error"]["code"], "query_too_expensive",
            "{query}: {answer}"
        );
        let rss = rss.expect("devgraph is alive");
        assert!(rss < 600 * 1024, "{query}: devgraph at {rss} KiB");
    }
    let (status, answer) = stack
        .host
        .send(
            "POST",
            "/tools/run_read_cypher",
            &json!({"query": "MATCH (s:Supplier) RETURN count(s) AS n"}).to_string(),
        )
        .await
        .unwrap();
    assert_eq!((status, &answer["data"]["rows"]), (200, &json!([[10]])));
}

/// The pid of the process listening on `url`'s port (from /proc: the socket's inode, then
/// the process holding it).
fn listener_pid(url: &str) -> Option<u32> {
    let port: u16 = url.rsplit(':').next()?.trim_end_matches('/').parse().ok()?;
    let inode = ["/proc/net/tcp", "/proc/net/tcp6"]
        .iter()
        .find_map(|table| {
            std::fs::read_to_string(table)
                .ok()?
                .lines()
                .skip(1)
                .find_map(|line| {
                    let fields: Vec<&str> = line.split_whitespace().collect();
                    let local_port =
                        u16::from_str_radix(fields.get(1)?.rsplit(':').next()?, 16).ok()?;
                    // 0A: LISTEN.
                    (local_port == port && fields.get(3) == Some(&"0A"))
                        .then(|| fields.get(9).map(|s| s.to_string()))?
                })
        })?;
    let target = format!("socket:[{inode}]");
    std::fs::read_dir("/proc")
        .ok()?
        .flatten()
        .find_map(|entry| {
            let pid: u32 = entry.file_name().to_str()?.parse().ok()?;
            let fds = std::fs::read_dir(entry.path().join("fd")).ok()?;
            fds.flatten()
                .any(|fd| {
                    std::fs::read_link(fd.path()).is_ok_and(|l| l.to_string_lossy() == target)
                })
                .then_some(pid)
        })
}

fn rss_kib(pid: u32) -> Option<u64> {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
}
