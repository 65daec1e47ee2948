//! `--server-timing` (`DEVHOST_SERVER_TIMING=on`): what one request cost, measured by the
//! host, sent back in the response's `Server-Timing` header (W3C Server Timing) so a
//! benchmark can break a request down without a profiler:
//!
//! - `store`: the per-request host state (WASI context, resource table);
//! - `instantiate`: instantiating the composed component from its pre-linked form;
//! - `handler`: from the call into the component until it set its response;
//! - `wasm`: of that, the time spent running the components' code (their own logic, the
//!   WIT calls between the composed components, JSON), from wasmtime's call hook: every
//!   switch between the components and the host;
//! - `kv-read` / `kv-write`: key-value calls (`desc` = how many), time inside the store;
//! - `outbound`: one entry per origin the component called (`desc` = `origin n=count`),
//!   time from the request until its response headers arrived (bodies are small here).
//!
//! The rest of `handler`, split by how the handler's future spent it (src/polled.rs):
//!
//! - `host`: host code run while the guest waits for it to return (every host call that
//!   answers at once: WASI clocks, random, files, log output, KV, HTTP types), i.e. the
//!   handler's time inside its polls less `wasm` (`desc` = host calls made);
//! - `blocked`: the guest suspended until something woke it (an outbound response, a body
//!   frame, a timer; `desc` = how many times);
//! - `queued`: woken, waiting for a tokio worker to poll it again;
//! - `response-queued`: from the component setting its response until the server took it
//!   (the server's task runs the handler itself, src/driven.rs, so it takes the response
//!   in the poll that set it: this reads about 0; it measured the wait for the server's
//!   task to be scheduled when each handler had a task of its own).
//!
//! Off by default: it costs a clock read per switch between host and components, a waker
//! per wait and a header per response.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::polled::PollTimes;

/// One request's measurements, shared by the server and the request's host state.
#[derive(Default)]
pub struct RequestTimings {
    inner: Mutex<Measured>,
    /// Time inside the components, in ns: added to at every return to the host, so an
    /// atomic rather than the lock.
    wasm_ns: AtomicU64,
    /// Calls from the components into the host.
    host_calls: AtomicU64,
    /// The handler's future (the guest's run): running, blocked, queued.
    pub handler: Arc<PollTimes>,
    /// The server's wait for the response.
    pub response: Arc<PollTimes>,
}

#[derive(Default)]
struct Measured {
    store: Duration,
    instantiate: Duration,
    /// When instantiation finished, i.e. the handler was called.
    instantiated_at: Option<Instant>,
    kv_read: (u32, Duration),
    kv_write: (u32, Duration),
    /// Origin → (requests, time to response headers).
    outbound: BTreeMap<String, (u32, Duration)>,
}

impl RequestTimings {
    fn with(&self, f: impl FnOnce(&mut Measured)) {
        // A panic elsewhere while holding the lock leaves plain numbers behind: use them.
        let mut measured = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        f(&mut measured);
    }

    pub fn store(&self, took: Duration) {
        self.with(|m| m.store = took);
    }

    /// Instantiation that began at `started` just finished.
    pub fn instantiated(&self, started: Instant) {
        let now = Instant::now();
        self.with(|m| {
            m.instantiate = now - started;
            m.instantiated_at = Some(now);
        });
        // Start-up code run by instantiation belongs to `instantiate`, not `wasm`.
        self.wasm_ns.store(0, Ordering::Relaxed);
        self.host_calls.store(0, Ordering::Relaxed);
    }

    /// Time since the handler was called (zero if instantiation never finished).
    pub fn since_instantiated(&self) -> Duration {
        let mut at = None;
        self.with(|m| at = m.instantiated_at);
        at.map_or(Duration::ZERO, |at| at.elapsed())
    }

    /// A hook for `Store::call_hook` adding up the time between entering and leaving the
    /// components.
    pub fn wasm_hook<T>(
        self: Arc<Self>,
    ) -> impl FnMut(wasmtime::StoreContextMut<'_, T>, wasmtime::CallHook) -> wasmtime::Result<()>
    + Send
    + Sync
    + 'static {
        let mut entered: Option<Instant> = None;
        move |_, hook| {
            if hook.entering_host() {
                self.host_calls.fetch_add(1, Ordering::Relaxed);
            }
            if hook.exiting_host() {
                entered = Some(Instant::now());
            } else if let Some(at) = entered.take() {
                let took = u64::try_from(at.elapsed().as_nanos()).unwrap_or(u64::MAX);
                self.wasm_ns.fetch_add(took, Ordering::Relaxed);
            }
            Ok(())
        }
    }

    pub fn kv_read(&self, took: Duration) {
        self.with(|m| add(&mut m.kv_read, took));
    }

    pub fn kv_write(&self, took: Duration) {
        self.with(|m| add(&mut m.kv_write, took));
    }

    pub fn outbound(&self, origin: String, took: Duration) {
        self.with(|m| add(m.outbound.entry(origin).or_default(), took));
    }

    /// The `Server-Timing` header value, `handler` being the component's own call.
    pub fn header(&self, handler: Duration) -> String {
        let mut out = String::with_capacity(256);
        let wasm = Duration::from_nanos(self.wasm_ns.load(Ordering::Relaxed));
        self.with(|m| {
            let mut metric = |name: &str, took: Duration, desc: Option<String>| {
                if !out.is_empty() {
                    out.push_str(", ");
                }
                let _ = write!(out, "{name};dur={:.3}", took.as_secs_f64() * 1_000.0);
                if let Some(desc) = desc {
                    let _ = write!(out, ";desc=\"{desc}\"");
                }
            };
            metric("store", m.store, None);
            metric("instantiate", m.instantiate, None);
            metric("handler", handler, None);
            metric("wasm", wasm, None);
            metric("kv-read", m.kv_read.1, Some(m.kv_read.0.to_string()));
            metric("kv-write", m.kv_write.1, Some(m.kv_write.0.to_string()));
            for (origin, (count, took)) in &m.outbound {
                // An origin is scheme://host:port: nothing a quoted string must escape.
                metric("outbound", *took, Some(format!("{origin} n={count}")));
            }
            let calls = self.host_calls.load(Ordering::Relaxed);
            let host = self.handler.running().saturating_sub(wasm);
            metric("host", host, Some(calls.to_string()));
            let waits = self.handler.waits().to_string();
            metric("blocked", self.handler.blocked(), Some(waits));
            metric("queued", self.handler.queued(), None);
            metric("response-queued", self.response.queued(), None);
        });
        out
    }
}

fn add(slot: &mut (u32, Duration), took: Duration) {
    slot.0 += 1;
    slot.1 += took;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_header_lists_every_measurement_with_counts() {
        let t = RequestTimings::default();
        t.store(Duration::from_micros(10));
        t.with(|m| m.instantiate = Duration::from_micros(500));
        t.wasm_ns.store(1_500_000, Ordering::Relaxed);
        t.kv_read(Duration::from_micros(100));
        t.kv_read(Duration::from_micros(50));
        t.kv_write(Duration::from_micros(200));
        t.outbound("http://127.0.0.1:7474".into(), Duration::from_millis(2));
        t.outbound("http://127.0.0.1:7474".into(), Duration::from_millis(1));
        t.outbound("http://127.0.0.1:11434".into(), Duration::from_millis(4));
        assert_eq!(
            t.header(Duration::from_millis(9)),
            "store;dur=0.010, instantiate;dur=0.500, handler;dur=9.000, wasm;dur=1.500, \
             kv-read;dur=0.150;desc=\"2\", kv-write;dur=0.200;desc=\"1\", \
             outbound;dur=4.000;desc=\"http://127.0.0.1:11434 n=1\", \
             outbound;dur=3.000;desc=\"http://127.0.0.1:7474 n=2\", \
             host;dur=0.000;desc=\"0\", blocked;dur=0.000;desc=\"0\", queued;dur=0.000, \
             response-queued;dur=0.000"
        );
    }
}
