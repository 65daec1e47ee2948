//! The instance's recorder: its trace, its open spans and the spans it finished.
//!
//! A component instance serves one request on one thread, so the recorder is a
//! thread-local: the code that records a span (the graph client, the LLM client) needs no
//! handle passed down to it. Spans nest by scope: [`span`] opens a child of the innermost
//! open span, and dropping the [`ActiveSpan`] ends it. When the trace is not recorded
//! (tracing off, or sampled out) a span is an empty handle that costs no allocation, but
//! trace context still propagates so the services downstream see the caller's trace.

use crate::context::TraceParent;
use crate::ids::{SpanId, TraceId};
use crate::sampler::ratio_sampled;
use crate::span::{SpanData, SpanKind, Status, Value};
use std::cell::RefCell;
use std::time::{SystemTime, UNIX_EPOCH};

/// How this instance records.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settings {
    /// Spans are kept for export (an exporter is configured).
    pub export: bool,
    /// Share of new traces (without a caller's decision) that are recorded.
    pub ratio: f64,
    /// Message and tool-argument content may be recorded.
    pub capture_content: bool,
    /// Graph statement text may be recorded.
    pub capture_statements: bool,
    /// Recorded on every span as `kg.component`.
    pub component: &'static str,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            export: false,
            ratio: 1.0,
            capture_content: false,
            capture_statements: false,
            component: "",
        }
    }
}

#[derive(Default)]
struct Recorder {
    trace: Option<Trace>,
    settings: Settings,
    /// Ids of the open spans, innermost last.
    open: Vec<SpanId>,
    finished: Vec<SpanData>,
    /// Spans other component instances recorded in this trace, as OTLP JSON arrays.
    absorbed: Vec<String>,
}

#[derive(Clone)]
struct Trace {
    id: TraceId,
    /// The caller's span: parent of this instance's outermost spans.
    remote_parent: Option<SpanId>,
    state: Option<String>,
    sampled: bool,
}

thread_local! {
    static RECORDER: RefCell<Recorder> = RefCell::new(Recorder::default());
}

/// Starts the request's trace: the caller's (`incoming`, its sampling decision kept) or a
/// new one sampled at `settings.ratio`. Returns its id.
pub fn begin(incoming: Option<TraceParent>, state: Option<String>, settings: Settings) -> TraceId {
    let (id, remote_parent, sampled) = match incoming {
        Some(parent) => (parent.trace_id, Some(parent.parent_id), parent.sampled),
        None => {
            let id = TraceId::random();
            (id, None, ratio_sampled(&id, settings.ratio))
        }
    };
    RECORDER.with(|r| {
        *r.borrow_mut() = Recorder {
            trace: Some(Trace {
                id,
                remote_parent,
                state,
                sampled,
            }),
            settings,
            ..Recorder::default()
        }
    });
    id
}

/// Joins the trace a caller handed over (`traceparent`); later spans are children of the
/// caller's span. Spans finished earlier and not yet taken are kept. A malformed header
/// stops recording until the next valid one.
pub fn adopt(traceparent: &str, settings: Settings) {
    let parent = TraceParent::parse(traceparent);
    RECORDER.with(|r| {
        let mut r = r.borrow_mut();
        r.settings = settings;
        r.open.clear();
        r.trace = parent.map(|p| Trace {
            id: p.trace_id,
            remote_parent: Some(p.parent_id),
            state: None,
            sampled: p.sampled,
        });
    });
}

/// Forgets the trace and every span (tests; a new request).
pub fn reset() {
    RECORDER.with(|r| *r.borrow_mut() = Recorder::default());
}

/// Whether spans opened now are kept.
pub fn is_recording() -> bool {
    RECORDER.with(|r| {
        let r = r.borrow();
        r.settings.export && r.trace.as_ref().is_some_and(|t| t.sampled)
    })
}

pub fn capture_content() -> bool {
    RECORDER.with(|r| r.borrow().settings.capture_content)
}

pub fn capture_statements() -> bool {
    RECORDER.with(|r| r.borrow().settings.capture_statements)
}

/// Whether this instance's trace came from a caller (its `traceparent`), so calls made
/// for it should pass the context on even when nothing is recorded.
pub fn continues_caller() -> bool {
    RECORDER.with(|r| {
        r.borrow()
            .trace
            .as_ref()
            .is_some_and(|t| t.remote_parent.is_some())
    })
}

pub fn trace_id() -> Option<TraceId> {
    RECORDER.with(|r| r.borrow().trace.as_ref().map(|t| t.id))
}

/// The `traceparent` for a call made now: the innermost open span as its parent (the
/// caller's span when none is open). `None` outside a trace.
pub fn current_traceparent() -> Option<String> {
    RECORDER.with(|r| {
        let r = r.borrow();
        let trace = r.trace.as_ref()?;
        let parent = r.open.last().copied().or(trace.remote_parent)?;
        Some(
            TraceParent {
                trace_id: trace.id,
                parent_id: parent,
                sampled: trace.sampled,
            }
            .format(),
        )
    })
}

/// The caller's `tracestate`, to pass on with [`current_traceparent`].
pub fn current_tracestate() -> Option<String> {
    RECORDER.with(|r| r.borrow().trace.as_ref().and_then(|t| t.state.clone()))
}

/// Opens a span, child of the innermost open one. It ends when dropped.
pub fn span(name: &str, kind: SpanKind) -> ActiveSpan {
    open(name, kind, true)
}

/// Opens a span, child of the innermost open one, that does not become the parent of
/// spans opened after it: for work that runs concurrently with its siblings (several
/// statements in flight at once), which would otherwise nest inside each other. Calls made
/// for it name it with [`ActiveSpan::traceparent`].
pub fn span_detached(name: &str, kind: SpanKind) -> ActiveSpan {
    open(name, kind, false)
}

fn open(name: &str, kind: SpanKind, nest: bool) -> ActiveSpan {
    RECORDER.with(|r| {
        let mut r = r.borrow_mut();
        let Some(trace) = r.trace.clone() else {
            return ActiveSpan {
                id: None,
                context: None,
                nested: false,
                data: None,
            };
        };
        // An unrecorded span still gets an id, so the calls made inside it (and the
        // response header) name a parent, as W3C asks of a participant that does not
        // sample.
        let id = SpanId::random();
        let parent = r.open.last().copied().or(trace.remote_parent);
        if nest {
            r.open.push(id);
        }
        let context = Some(TraceParent {
            trace_id: trace.id,
            parent_id: id,
            sampled: trace.sampled,
        });
        if !(r.settings.export && trace.sampled) {
            return ActiveSpan {
                id: Some(id),
                context,
                nested: nest,
                data: None,
            };
        }
        let mut attributes = Vec::with_capacity(8);
        if !r.settings.component.is_empty() {
            attributes.push((
                crate::attr::KG_COMPONENT.to_string(),
                Value::from(r.settings.component),
            ));
        }
        ActiveSpan {
            id: Some(id),
            context,
            nested: nest,
            data: Some(Box::new(SpanData {
                trace_id: trace.id,
                span_id: id,
                parent_span_id: parent,
                trace_state: trace.state,
                name: name.to_string(),
                kind,
                start_unix_nano: now_unix_nano(),
                end_unix_nano: 0,
                attributes,
                status: Status::Unset,
            })),
        }
    })
}

/// The spans finished since the last call, oldest first.
pub fn take_finished() -> Vec<SpanData> {
    RECORDER.with(|r| std::mem::take(&mut r.borrow_mut().finished))
}

/// Keeps spans another component recorded in this trace (an OTLP JSON array of spans) for
/// this instance's export.
pub fn absorb(encoded_spans: String) {
    if encoded_spans.trim() == "[]" || encoded_spans.trim().is_empty() {
        return;
    }
    RECORDER.with(|r| r.borrow_mut().absorbed.push(encoded_spans));
}

/// What [`absorb`] kept, taken.
pub fn take_absorbed() -> Vec<String> {
    RECORDER.with(|r| std::mem::take(&mut r.borrow_mut().absorbed))
}

/// An open span. Without a recorded trace every method does nothing.
pub struct ActiveSpan {
    /// Its id while open (`None` outside a trace).
    id: Option<SpanId>,
    /// This span as the parent of a call made for it.
    context: Option<TraceParent>,
    /// Whether it is on the open-span stack.
    nested: bool,
    data: Option<Box<SpanData>>,
}

impl ActiveSpan {
    /// Whether this span is kept: callers skip computing attributes for one that is not.
    pub fn is_recording(&self) -> bool {
        self.data.is_some()
    }

    /// The `traceparent` that makes a call this span's child (`None` outside a trace).
    pub fn traceparent(&self) -> Option<String> {
        self.context.map(|c| c.format())
    }

    pub fn set(&mut self, key: &str, value: impl Into<Value>) {
        if let Some(data) = self.data.as_mut() {
            let value = value.into();
            match data.attributes.iter_mut().find(|(k, _)| k == key) {
                Some((_, old)) => *old = value,
                None => data.attributes.push((key.to_string(), value)),
            }
        }
    }

    pub fn rename(&mut self, name: &str) {
        if let Some(data) = self.data.as_mut() {
            data.name = name.to_string();
        }
    }

    /// Marks the span failed: status ERROR with `message`, `error.type` = `kind` (a
    /// stable class such as `timeout` or an HTTP status, for grouping).
    pub fn fail(&mut self, kind: &str, message: &str) {
        if self.data.is_some() {
            self.set(crate::attr::ERROR_TYPE, kind);
        }
        if let Some(data) = self.data.as_mut() {
            data.status = Status::Error(message.chars().take(512).collect());
        }
    }

    pub fn ok(&mut self) {
        if let Some(data) = self.data.as_mut() {
            data.status = Status::Ok;
        }
    }
}

impl Drop for ActiveSpan {
    fn drop(&mut self) {
        let Some(id) = self.id else {
            return;
        };
        let data = self.data.take().map(|mut data| {
            data.end_unix_nano = now_unix_nano().max(data.start_unix_nano);
            data
        });
        let nested = self.nested;
        RECORDER.with(|r| {
            let mut r = r.borrow_mut();
            // Usually the innermost; a span ended out of order is taken from where it is.
            if let Some(i) = r
                .open
                .iter()
                .rposition(|open| *open == id)
                .filter(|_| nested)
            {
                r.open.remove(i);
            }
            if let Some(data) = data {
                r.finished.push(*data);
            }
        });
    }
}

fn now_unix_nano() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn on() -> Settings {
        Settings {
            export: true,
            component: "test",
            ..Settings::default()
        }
    }

    #[test]
    fn spans_nest_by_scope_under_the_callers_span() {
        let caller = TraceParent::parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
            .expect("valid");
        begin(Some(caller), Some("k=v".into()), on());
        {
            let mut outer = span("outer", SpanKind::Server);
            outer.set("n", 1i64);
            let outer_parent = current_traceparent().expect("in a trace");
            {
                let _inner = span("inner", SpanKind::Client);
                assert_ne!(current_traceparent(), Some(outer_parent.clone()));
            }
            assert_eq!(current_traceparent(), Some(outer_parent));
        }
        let spans = take_finished();
        assert_eq!(spans.len(), 2);
        let (inner, outer) = (&spans[0], &spans[1]);
        assert_eq!(inner.parent_span_id, Some(outer.span_id));
        assert_eq!(outer.parent_span_id, Some(caller.parent_id));
        assert_eq!(outer.trace_id, caller.trace_id);
        assert_eq!(outer.trace_state.as_deref(), Some("k=v"));
        assert!(outer.end_unix_nano >= outer.start_unix_nano);
        assert!(
            outer
                .attributes
                .contains(&("kg.component".into(), Value::from("test")))
        );
        assert!(take_finished().is_empty());
    }

    #[test]
    fn unsampled_or_unexported_traces_record_nothing_but_still_propagate() {
        let unsampled =
            TraceParent::parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00")
                .expect("valid");
        begin(Some(unsampled), None, on());
        {
            let mut s = span("ignored", SpanKind::Internal);
            assert!(!s.is_recording());
            s.set("k", "v");
        }
        assert!(take_finished().is_empty());
        assert_eq!(
            current_traceparent().as_deref(),
            Some("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00")
        );
        {
            let _unrecorded = span("unrecorded", SpanKind::Server);
            let inside = current_traceparent().expect("in a trace");
            assert!(inside.starts_with("00-4bf92f3577b34da6a3ce929d0e0e4736-"));
            assert!(
                !inside.contains("00f067aa0ba902b7"),
                "names the unrecorded span"
            );
        }
        begin(None, None, Settings::default());
        drop(span("off", SpanKind::Internal));
        assert!(take_finished().is_empty());
        assert!(
            current_traceparent().is_none(),
            "no open span and no caller"
        );
        reset();
        drop(span("outside", SpanKind::Internal));
        assert!(current_traceparent().is_none(), "outside a trace");
    }

    #[test]
    fn adopt_parents_later_spans_on_the_handed_span() {
        reset();
        adopt(
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            on(),
        );
        drop(span("a", SpanKind::Internal));
        adopt(
            "00-4bf92f3577b34da6a3ce929d0e0e4736-1111111111111111-01",
            on(),
        );
        drop(span("b", SpanKind::Internal));
        let spans = take_finished();
        assert_eq!(
            spans[0].parent_span_id.map(|s| s.to_string()).as_deref(),
            Some("00f067aa0ba902b7")
        );
        assert_eq!(
            spans[1].parent_span_id.map(|s| s.to_string()).as_deref(),
            Some("1111111111111111")
        );
        adopt("garbage", on());
        assert!(!is_recording());
    }

    #[test]
    fn detached_spans_are_siblings_and_name_themselves_as_parent() {
        begin(None, None, on());
        {
            let outer = span("batch", SpanKind::Internal);
            let a = span_detached("a", SpanKind::Client);
            let b = span_detached("b", SpanKind::Client);
            assert_eq!(current_traceparent(), outer.traceparent());
            assert_ne!(a.traceparent(), b.traceparent());
            drop(a);
            drop(b);
        }
        let spans = take_finished();
        let outer = spans.iter().find(|s| s.name == "batch").expect("outer");
        for name in ["a", "b"] {
            let s = spans.iter().find(|s| s.name == name).expect("child");
            assert_eq!(s.parent_span_id, Some(outer.span_id), "{name}");
        }
    }

    #[test]
    fn failing_sets_error_status_and_type() {
        begin(None, None, on());
        {
            let mut s = span("call", SpanKind::Client);
            s.fail("timeout", "no answer within 10 ms");
        }
        let spans = take_finished();
        assert_eq!(
            spans[0].status,
            Status::Error("no answer within 10 ms".into())
        );
        assert!(
            spans[0]
                .attributes
                .contains(&("error.type".into(), Value::from("timeout")))
        );
    }
}
