//! The benchmarks' headline numbers, collected for the table of issue #18's targets that
//! `scripts/bench.sh` prints after the benchmarks' own tables (`src/bin/bench_targets.rs`).
//!
//! `scripts/bench.sh` names a file in `KG_BENCH_RESULTS`; each bench appends one
//! `name<TAB>value` line per number. Without the variable (a bench run on its own with
//! `cargo bench`) nothing is written.

use anyhow::{Context, Result};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

/// The environment variable naming the results file.
pub const RESULTS_VAR: &str = "KG_BENCH_RESULTS";

/// Appends `name = value` to the results file, if one is named.
pub fn record(name: &str, value: f64) -> Result<()> {
    let Some(path) = std::env::var_os(RESULTS_VAR) else {
        return Ok(());
    };
    anyhow::ensure!(
        !name.contains(['\t', '\n']),
        "a result's name has no tab or newline: {name:?}"
    );
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .with_context(|| format!("opening {}", Path::new(&path).display()))?;
    writeln!(file, "{name}\t{value}").context("writing a bench result")?;
    Ok(())
}

/// The numbers of a results file; a name recorded twice keeps its last value.
pub fn parse(text: &str) -> Result<BTreeMap<String, f64>> {
    let mut results = BTreeMap::new();
    for (i, line) in text.lines().enumerate().filter(|(_, l)| !l.is_empty()) {
        let (name, value) = line
            .split_once('\t')
            .with_context(|| format!("line {}: no tab in {line:?}", i + 1))?;
        let value: f64 = value
            .parse()
            .with_context(|| format!("line {}: not a number: {value:?}", i + 1))?;
        results.insert(name.to_string(), value);
    }
    Ok(results)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_lines_and_keeps_the_last_value_of_a_name() {
        let parsed = parse("a\t1.5\nb\t2\n\na\t3\n").unwrap();
        assert_eq!(parsed.len(), 2);
        assert_eq!(parsed["a"], 3.0);
        assert_eq!(parsed["b"], 2.0);
    }

    #[test]
    fn rejects_malformed_lines() {
        assert!(parse("a 1").is_err());
        assert!(parse("a\tfast").is_err());
    }
}
