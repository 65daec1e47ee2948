//! Prints issue #18's performance targets against the numbers the benchmarks of one
//! `scripts/bench.sh` run recorded (`kg_e2e::bench_results`), each marked met, not met, or
//! not run, and for a target not met the measured share that keeps it there.
//!
//! `bench-targets RESULTS_FILE COMPONENT_DIR`: the results file the benches appended to,
//! and the directory of the built components (their sizes are read here). Never fails on
//! a slow number: only on a results file it cannot read.

use anyhow::{Context, Result};
use kg_e2e::bench_results;
use std::collections::BTreeMap;
use std::path::Path;

/// The composed components' limit (issue #18): 2 MB.
const COMPONENT_LIMIT_BYTES: u64 = 2_000_000;

fn main() -> Result<()> {
    let mut args = std::env::args_os().skip(1);
    let (Some(results), Some(components)) = (args.next(), args.next()) else {
        anyhow::bail!("usage: bench-targets RESULTS_FILE COMPONENT_DIR");
    };
    let text = match std::fs::read_to_string(&results) {
        Ok(text) => text,
        // No bench recorded anything (all of them were left out).
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => {
            return Err(e).with_context(|| format!("reading {}", results.to_string_lossy()));
        }
    };
    let numbers = bench_results::parse(&text)?;
    let sizes = component_sizes(Path::new(&components))?;
    println!("issue #18's targets, this run (scripts/bench.sh; ms unless said):");
    println!("| target | measured | |");
    println!("|---|---|---|");
    for row in rows(&numbers, &sizes) {
        println!("| {} | {} | {} |", row.target, row.measured, row.verdict);
    }
    Ok(())
}

struct Row {
    target: &'static str,
    measured: String,
    verdict: &'static str,
}

fn verdict(met: bool) -> &'static str {
    if met { "met" } else { "**not met**" }
}

fn not_run(target: &'static str, how: &str) -> Row {
    Row {
        target,
        measured: format!("not run in this pass ({how})"),
        verdict: "not run",
    }
}

/// One row per target, from what the benches recorded.
fn rows(n: &BTreeMap<String, f64>, sizes: &[(String, u64)]) -> Vec<Row> {
    let get = |name: &str| n.get(name).copied();
    let mut rows = Vec::new();

    const STEP: &str = "own orchestration per agent step ≤ 0.3";
    match (
        get("step.components_ms"),
        get("step.client_ms"),
        get("step.round_trips_ms"),
    ) {
        (Some(components), Some(client), Some(round_trips)) => {
            let at_client = client - round_trips;
            let host = get("step.host_calls_ms").unwrap_or(f64::NAN);
            let calls = get("step.host_calls_n").unwrap_or(f64::NAN);
            let blocked = get("step.blocked_ms").unwrap_or(f64::NAN);
            // What any component pays this host for a step's two requests (benches/
            // step-floor), when request_profile measured it.
            let floor = match (get("step.floor_ms"), get("step.floor_host_calls_n")) {
                (Some(floor), Some(floor_calls)) => format!(
                    ". The host's floor for a step's I/O (a component that only sends the \
                     turn's LLM and graph requests, {floor_calls:.0} host calls a step) \
                     {floor:.3}: beyond it, {:.3}",
                    at_client - floor
                ),
                _ => String::new(),
            };
            rows.push(Row {
                target: "own orchestration per agent step ≤ 0.3, in the components",
                measured: format!("{components:.3}"),
                verdict: verdict(components <= 0.3),
            });
            rows.push(Row {
                target: "own orchestration per agent step ≤ 0.3, at the client",
                measured: format!(
                    "{at_client:.3} (a step {client:.3} minus its graph and LLM round trips \
                     {round_trips:.3}, as devhost times them: from the send to the response). \
                     The step split without overlap: the components {components:.3}, the \
                     host's answers to {calls:.0} host calls {host:.3}, blocked on the graph \
                     and LLM {blocked:.3}, the rest (HTTP, scheduling) {:.3}{floor}",
                    client - components - host - blocked
                ),
                verdict: verdict(at_client <= 0.3),
            });
        }
        _ => rows.push(not_run(STEP, "request_profile")),
    }

    match get("chat0.client_ms") {
        Some(ms) => rows.push(Row {
            target: "0-step /chat ≤ 3 (median)",
            measured: format!("{ms:.3}"),
            verdict: verdict(ms <= 3.0),
        }),
        None => rows.push(not_run("0-step /chat ≤ 3", "request_profile")),
    }

    match get("health_live.reqwest_ms") {
        Some(ms) => rows.push(Row {
            target: "GET /health/live ≤ 0.5 (median)",
            measured: format!(
                "{ms:.3} with reqwest, {:.3} with raw HTTP/1.1",
                get("health_live.raw_ms").unwrap_or(f64::NAN)
            ),
            verdict: verdict(ms <= 0.5),
        }),
        None => rows.push(not_run("GET /health/live ≤ 0.5", "health_latency")),
    }

    match get("turn4.graph_round_trips") {
        Some(trips) => rows.push(Row {
            target: "graph round trips per 4-tool turn ≤ 5",
            measured: format!("{trips:.0}"),
            verdict: verdict(trips <= 5.0),
        }),
        None => rows.push(not_run(
            "graph round trips per 4-tool turn ≤ 5",
            "request_profile",
        )),
    }

    match (
        get("batch.chunked_ms"),
        get("batch.per_order_ms"),
        get("batch.equal_work_floor_ms"),
        get("batch.bare_floor_ms"),
    ) {
        (Some(chunked), Some(per_order), Some(floor), Some(bare)) => {
            rows.push(Row {
                target: "1,000 payments (60 % payable) ≤ 1,000 on devgraph",
                measured: format!("{chunked:.0}"),
                verdict: verdict(chunked <= 1_000.0),
            });
            let ratio = per_order / chunked;
            let at_best = per_order / floor;
            rows.push(Row {
                target: "1,000 payments ≥ 10× faster than one request per order (10 concurrent)",
                measured: format!(
                    "{ratio:.1}× (one request per order {per_order:.0}); the equal-work floor \
                     ({floor:.0}: the executor's statement for all 1,000 as one UNWIND, straight \
                     to devgraph) allows at most {at_best:.1}×"
                ),
                verdict: verdict(ratio >= 10.0),
            });
            rows.push(Row {
                target: "1,000 payments ≤ 2× the single-UNWIND floor",
                measured: format!(
                    "{:.2}× the equal-work floor; {:.1}× the bare UNWIND ({bare:.1}: no locks, \
                     checks or action log)",
                    chunked / floor,
                    chunked / bare
                ),
                verdict: verdict(chunked <= 2.0 * floor),
            });
        }
        _ => rows.push(not_run(
            "1,000 payments: ≤ 1 s, ≥ 10×, ≤ 2× the floor",
            "action_batch",
        )),
    }

    match get("instantiate.slowest_median_ms") {
        Some(ms) => rows.push(Row {
            target: "per-request instantiation of the composed app ≤ 1 (median)",
            measured: format!("{ms:.3} (the slowest request kind's median)"),
            verdict: verdict(ms <= 1.0),
        }),
        None => rows.push(not_run("instantiation ≤ 1", "request_profile")),
    }

    if sizes.is_empty() {
        rows.push(not_run("no component above 2 MB", "no components built"));
    } else {
        let largest = sizes.iter().max_by_key(|(_, bytes)| *bytes);
        let listed: Vec<String> = sizes
            .iter()
            .map(|(name, bytes)| format!("{name} {bytes} B"))
            .collect();
        rows.push(Row {
            target: "no component above 2 MB of Wasm",
            measured: listed.join(", "),
            verdict: verdict(largest.is_some_and(|(_, b)| *b <= COMPONENT_LIMIT_BYTES)),
        });
    }

    match (get("load.calls"), get("load.errors"), get("load.rss_mib")) {
        (Some(calls), Some(errors), rss) => rows.push(Row {
            target: "load test: 2,000 tool calls in 10 s at 16 clients, 0 errors; devhost's memory",
            measured: format!(
                "{calls:.0} calls, {errors:.0} errors; devhost RSS after: {}",
                rss.map_or("unknown".into(), |m| format!("{m:.0} MiB"))
            ),
            verdict: verdict(calls >= 2_000.0 && errors == 0.0),
        }),
        _ => rows.push(not_run(
            "load test: 2,000 tool calls in 10 s, 0 errors; devhost's memory",
            "outbound_pool",
        )),
    }

    rows.push(not_run(
        "≥ 20× below LangGraph per step",
        "on demand: benches/peers/run.sh, which needs PyPI",
    ));
    rows
}

/// The built components (`*.wasm` in `dir`) and their sizes, by name.
fn component_sizes(dir: &Path) -> Result<Vec<(String, u64)>> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e).with_context(|| format!("listing {}", dir.display())),
    };
    let mut sizes = Vec::new();
    for entry in entries {
        let entry = entry?;
        let path = entry.path();
        // The step floor is a benchmark's component, not the application's.
        if path.extension().is_some_and(|e| e == "wasm")
            && path.file_stem().is_none_or(|stem| stem != "kg_step_floor")
        {
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            sizes.push((name, entry.metadata()?.len()));
        }
    }
    sizes.sort();
    Ok(sizes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numbers(pairs: &[(&str, f64)]) -> BTreeMap<String, f64> {
        pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
    }

    #[test]
    fn marks_each_target_and_what_was_not_run() {
        let n = numbers(&[
            ("step.components_ms", 0.25),
            ("step.client_ms", 1.9),
            ("step.round_trips_ms", 1.3),
            ("step.host_calls_ms", 0.28),
            ("step.host_calls_n", 123.0),
            ("step.blocked_ms", 1.2),
            ("step.floor_ms", 0.15),
            ("step.floor_host_calls_n", 54.0),
            ("chat0.client_ms", 2.2),
            ("batch.chunked_ms", 340.0),
            ("batch.per_order_ms", 2_040.0),
            ("batch.equal_work_floor_ms", 260.0),
            ("batch.bare_floor_ms", 22.0),
        ]);
        let rows = rows(&n, &[("a.wasm".into(), 1_500_000)]);
        let find = |prefix: &str| {
            rows.iter()
                .find(|r| r.target.starts_with(prefix))
                .unwrap_or_else(|| panic!("no row {prefix}"))
        };
        assert_eq!(
            find("own orchestration per agent step ≤ 0.3, in").verdict,
            "met"
        );
        let client = find("own orchestration per agent step ≤ 0.3, at the client");
        assert_eq!(client.verdict, "**not met**");
        assert!(client.measured.starts_with("0.600"), "{}", client.measured);
        assert!(
            client
                .measured
                .contains("54 host calls a step) 0.150: beyond it, 0.450"),
            "{}",
            client.measured
        );
        assert_eq!(find("0-step").verdict, "met");
        assert_eq!(find("1,000 payments ≥ 10×").verdict, "**not met**");
        assert!(
            find("1,000 payments ≥ 10×")
                .measured
                .contains("at most 7.8×")
        );
        assert_eq!(find("1,000 payments ≤ 2×").verdict, "met");
        assert_eq!(find("GET /health/live").verdict, "not run");
        assert_eq!(find("no component").verdict, "met");
    }

    #[test]
    fn the_step_floor_is_not_counted_as_the_applications() -> Result<()> {
        let dir = tempfile::tempdir()?;
        std::fs::write(dir.path().join("kg_dispatcher.wasm"), [0u8; 3])?;
        std::fs::write(dir.path().join("kg_step_floor.wasm"), [0u8; 5])?;
        std::fs::write(dir.path().join("notes.txt"), [0u8; 7])?;
        assert_eq!(
            component_sizes(dir.path())?,
            vec![("kg_dispatcher.wasm".to_string(), 3)]
        );
        Ok(())
    }

    #[test]
    fn a_component_over_the_limit_is_not_met() {
        let rows = rows(&BTreeMap::new(), &[("big.wasm".into(), 2_000_001)]);
        let sizes = rows
            .iter()
            .find(|r| r.target.starts_with("no component"))
            .unwrap();
        assert_eq!(sizes.verdict, "**not met**");
    }
}
