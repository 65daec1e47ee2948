//! `--host-call-census on` (`DEVHOST_HOST_CALL_CENSUS`): which host calls a request makes.
//! `--server-timing` counts them; this names them. At each call into the host, the
//! innermost guest frame (the import's binding: `wasi:http` fields, streams, clocks,
//! variables, key-value…) is taken from a backtrace, and when the request's store goes
//! one line on stderr lists the calls by frame, most frequent first.
//!
//! Each frame's entry also carries the time its calls spent in the host, from the hook's
//! return to the host call's end (a call that waits, such as `poll`, counts its wait).
//!
//! Diagnostics only: a backtrace per host call costs microseconds, and frames have names
//! only in components built with their name section (`scripts/bench.sh --perf` keeps it).

use std::collections::HashMap;
use std::time::{Duration, Instant};
use wasmtime::{CallHook, StoreContextMut, WasmBacktrace};

/// One request's host calls by innermost guest frame; printed when dropped (with the
/// store's call hook, which owns it).
#[derive(Default)]
pub struct Census {
    calls: HashMap<String, Tally>,
    /// The host calls under way, innermost last (a host call can call back into the
    /// guest's allocator, which can call the host again), each with when it started and
    /// `hook_time` then.
    open: Vec<(String, Instant, Duration)>,
    /// Time spent in this hook so far (its backtraces), left out of every call's time.
    hook_time: Duration,
}

#[derive(Default)]
struct Tally {
    /// Transitions into the host: host calls and returns from the guest's allocator.
    count: u64,
    /// Time inside the host calls made from this frame.
    in_host: Duration,
}

impl Census {
    pub fn hook<T>(
        mut self,
    ) -> impl FnMut(StoreContextMut<'_, T>, CallHook) -> wasmtime::Result<()> + Send + Sync + 'static
    {
        move |store, hook| {
            let hook_started = Instant::now();
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
                self.calls.entry(frame.clone()).or_default().count += 1;
                if matches!(hook, CallHook::CallingHost) {
                    self.hook_time += hook_started.elapsed();
                    self.open.push((frame, Instant::now(), self.hook_time));
                    return Ok(());
                }
            } else if matches!(hook, CallHook::ReturningFromHost)
                && let Some((frame, started, hook_time_then)) = self.open.pop()
            {
                let in_host = started
                    .elapsed()
                    .saturating_sub(self.hook_time - hook_time_then);
                self.calls.entry(frame).or_default().in_host += in_host;
            }
            self.hook_time += hook_started.elapsed();
            Ok(())
        }
    }
}

impl Drop for Census {
    fn drop(&mut self) {
        let total: u64 = self.calls.values().map(|t| t.count).sum();
        let mut sorted: Vec<(&String, &Tally)> = self.calls.iter().collect();
        sorted.sort_by(|a, b| b.1.count.cmp(&a.1.count).then(a.0.cmp(b.0)));
        let listed: Vec<String> = sorted
            .iter()
            .map(|(f, t)| format!("{} {f} ({:.1} us)", t.count, t.in_host.as_secs_f64() * 1e6))
            .collect();
        eprintln!("devhost: host calls: {total}: {}", listed.join(" | "));
    }
}
