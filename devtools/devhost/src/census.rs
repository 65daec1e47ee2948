//! `--host-call-census on` (`DEVHOST_HOST_CALL_CENSUS`): which host calls a request makes.
//! `--server-timing` counts them; this names them. At each call into the host, the
//! innermost guest frame (the import's binding: `wasi:http` fields, streams, clocks,
//! variables, key-value…) is taken from a backtrace, and when the request's store goes
//! one line on stderr lists the calls by frame, most frequent first.
//!
//! Diagnostics only: a backtrace per host call costs microseconds, and frames have names
//! only in components built with their name section (`scripts/bench.sh --perf` keeps it).

use std::collections::HashMap;
use wasmtime::{CallHook, StoreContextMut, WasmBacktrace};

/// One request's host calls by innermost guest frame; printed when dropped (with the
/// store's call hook, which owns it).
#[derive(Default)]
pub struct Census {
    calls: HashMap<String, u64>,
}

impl Census {
    pub fn hook<T>(
        mut self,
    ) -> impl FnMut(StoreContextMut<'_, T>, CallHook) -> wasmtime::Result<()> + Send + Sync + 'static
    {
        move |store, hook| {
            if hook.entering_host() {
                let trace = WasmBacktrace::capture(&store);
                // The innermost named frame and its caller: an import may be reached
                // through an unnamed shim (wit-component's indirect-call modules, the
                // WASI adapter).
                let named: Vec<String> = trace
                    .frames()
                    .iter()
                    .filter_map(|f| {
                        let func = f.func_name()?;
                        Some(format!("{}::{func}", f.module().name().unwrap_or("?")))
                    })
                    .take(2)
                    .collect();
                let frame = if named.is_empty() {
                    "(no named guest frame)".to_string()
                } else {
                    named.join(" <- ")
                };
                *self.calls.entry(frame).or_default() += 1;
            }
            Ok(())
        }
    }
}

impl Drop for Census {
    fn drop(&mut self) {
        let total: u64 = self.calls.values().sum();
        let mut sorted: Vec<(&String, &u64)> = self.calls.iter().collect();
        sorted.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        let listed: Vec<String> = sorted.iter().map(|(f, n)| format!("{n} {f}")).collect();
        eprintln!("devhost: host calls: {total}: {}", listed.join(" | "));
    }
}
