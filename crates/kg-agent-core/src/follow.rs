//! Resuming a stream (`GET /chat/stream/{turn_id}`, or `POST /chat/stream` with
//! `Last-Event-ID`), free of the host: [`prepare`] checks the request before the stream
//! opens; [`Follower::step`], called once per poll, sends the kept events after the one
//! the client last saw, then — while the turn still runs, here or in another instance —
//! the rest as it is kept, until `done`, marking the turn attached
//! ([`crate::attach`]) so a turn whose own client went away keeps running for it.

use crate::attach::Marker;
use crate::memory::Kv;
use crate::replay::{self, Refused};
use crate::stream::Streamed;
use crate::turn::ports::EventSink;
use kg_http::ApiError;

/// Who asks to resume, and when.
pub struct Reader<'a> {
    pub subject: &'a str,
    pub admin: bool,
    pub now_ms: u64,
    pub retention_ms: u64,
}

/// Checks a resume before the stream opens: the turn (`path`, from the URL; `None` on
/// `POST /chat/stream`, where the header names it) and the last event the client saw (0:
/// none). Only the turn's owner (or an admin) may read it; a malformed `Last-Event-ID`,
/// someone else's or an unknown turn, and an expired one are JSON errors.
pub fn prepare(
    kv: &dyn Kv,
    path: Option<&str>,
    last_event_id: Option<&str>,
    reader: &Reader,
) -> Result<Follower, ApiError> {
    let no_stream = |turn: &str| ApiError::not_found(format!("no stream `{turn}`"));
    let (turn, after) = match (path, last_event_id) {
        (Some(turn), None) => {
            replay::check_turn_id(turn).map_err(|_| no_stream(turn))?;
            (turn.to_string(), 0)
        }
        (path, Some(header)) => {
            let (named, after) = replay::parse_event_id(header).map_err(ApiError::bad_request)?;
            if path.is_some_and(|p| p != named) {
                return Err(ApiError::bad_request(format!(
                    "Last-Event-ID `{header}` names another turn than the path"
                )));
            }
            (named, after)
        }
        (None, None) => return Err(ApiError::bad_request("no turn to resume")),
    };
    let opened = replay::open(
        kv,
        &turn,
        reader.subject,
        reader.admin,
        reader.now_ms,
        reader.retention_ms,
    );
    match opened {
        Ok(_) => Ok(Follower::new(turn, after)),
        Err(Refused::NotFound) => Err(no_stream(&turn)),
        Err(Refused::Expired) => Err(ApiError::new(
            410,
            "stream_expired",
            format!("the events of `{turn}` are no longer kept; start a new turn"),
        )),
        Err(Refused::Store(e)) => Err(crate::turn::kv_error(e)),
    }
}

/// A checked resume, streaming: the turn, the last event sent, the chunks read.
pub struct Follower {
    turn: String,
    last: u64,
    sent_chunks: u32,
    // While this reader streams, the running turn knows someone is there.
    marker: Marker,
}

impl Follower {
    pub fn new(turn: String, after: u64) -> Follower {
        Follower {
            turn,
            last: after,
            sent_chunks: 0,
            marker: Marker::default(),
        }
    }

    /// One poll: sends what was kept since the last one. `false` when the stream has
    /// ended (the turn's `done` sent, the client gone, or the turn lost or expired —
    /// those end with `error`, `completed` and `done`); `true`: poll again later.
    pub fn step(&mut self, kv: &dyn Kv, sink: &mut Streamed, now_ms: u64) -> bool {
        let turn = &self.turn;
        let meta = match replay::read_meta(kv, turn) {
            Ok(Some(meta)) => meta,
            Ok(None) => {
                let message = format!("the events of `{turn}` are no longer kept");
                sink.give_up("stream_expired", message);
                return false;
            }
            Err(e) => {
                sink.give_up("unavailable", e);
                return false;
            }
        };
        if !meta.done {
            self.marker.refresh(kv, turn, now_ms);
        }
        if meta.chunks > self.sent_chunks {
            match replay::read_chunks(kv, turn, self.sent_chunks, meta.chunks) {
                Ok(frames) => {
                    for (seq, frame) in frames {
                        if seq > self.last {
                            sink.raw(frame.as_bytes());
                            self.last = seq;
                        }
                    }
                }
                Err(e) => {
                    sink.give_up("unavailable", e);
                    return false;
                }
            }
            self.sent_chunks = meta.chunks;
        }
        if meta.done || sink.gone() {
            return false;
        }
        if meta.stale(now_ms) {
            let message = format!("the turn `{turn}` stopped without finishing");
            sink.give_up("stream_lost", message);
            return false;
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::Event;
    use crate::memory::tests::MemKv;
    use crate::stream::tests::{FakeClock, FakeWire};
    use std::rc::Rc;

    fn reader(subject: &str, now_ms: u64) -> Reader<'_> {
        Reader {
            subject,
            admin: false,
            now_ms,
            retention_ms: 600_000,
        }
    }

    fn sink() -> (Streamed, FakeWire) {
        let wire = FakeWire::default();
        let clock = Rc::new(FakeClock::default());
        (Streamed::new(Box::new(wire.clone()), clock), wire)
    }

    /// A turn recorded by `alice` in `kv`: an error event, then (if `done`) the end.
    fn recorded(kv: &Rc<MemKv>, done: bool) -> Streamed {
        let (mut turn, _) = sink();
        turn.record(kv.clone(), "t1", "alice", 600_000, 0);
        turn.emit(Event::Error {
            code: "x".into(),
            message: "y".into(),
        });
        if done {
            turn.emit(Event::Done);
        }
        turn
    }

    #[test]
    fn bad_requests_are_json_errors_before_the_stream() {
        let kv = Rc::new(MemKv::default());
        recorded(&kv, true);
        let code = |path, header, who| {
            prepare(kv.as_ref(), path, header, &reader(who, 0))
                .err()
                .map(|e| (e.status, e.code))
        };
        assert_eq!(
            code(None, Some("t1:x"), "alice"),
            Some((400, "bad_request".into()))
        );
        assert_eq!(
            code(Some("t2"), Some("t1:1"), "alice"),
            Some((400, "bad_request".into()))
        );
        assert_eq!(code(None, None, "alice"), Some((400, "bad_request".into())));
        assert_eq!(
            code(Some("t1"), None, "bob"),
            Some((404, "not_found".into()))
        );
        assert_eq!(
            code(Some("../x"), None, "alice"),
            Some((404, "not_found".into()))
        );
        assert_eq!(code(Some("t1"), None, "alice"), None);
        let late = prepare(kv.as_ref(), Some("t1"), None, &reader("alice", 700_000));
        assert_eq!(late.err().map(|e| e.status), Some(410));
    }

    #[test]
    fn a_resume_sends_what_was_missed_then_the_rest_until_done() {
        let kv = Rc::new(MemKv::default());
        let mut turn = recorded(&kv, false);
        let mut follower = prepare(kv.as_ref(), None, Some("t1:0"), &reader("alice", 0)).unwrap();
        let (mut out, wire) = sink();
        assert!(
            follower.step(kv.as_ref(), &mut out, 0),
            "the turn still runs"
        );
        assert!(wire.text().starts_with("id: t1:1\nevent: error"));
        assert!(
            crate::attach::last_mark(kv.as_ref(), "t1")
                .unwrap()
                .is_some()
        );
        turn.emit(Event::Done);
        assert!(!follower.step(kv.as_ref(), &mut out, 10), "done ends it");
        let text = wire.text();
        assert_eq!(text.matches("id: t1:1\n").count(), 1, "nothing twice");
        let last = text.trim_end().rsplit("\n\n").next().unwrap_or_default();
        assert!(last.contains("event: done\n"), "{text}");
    }

    #[test]
    fn a_resume_skips_what_the_client_saw_and_a_silent_turn_is_lost() {
        let kv = Rc::new(MemKv::default());
        recorded(&kv, false);
        let mut follower = Follower::new("t1".into(), 1);
        let (mut out, wire) = sink();
        assert!(follower.step(kv.as_ref(), &mut out, 0));
        assert_eq!(wire.text(), "");
        assert!(!follower.step(kv.as_ref(), &mut out, replay::STALE_MS + 1));
        assert!(
            wire.text().contains("\"code\":\"stream_lost\""),
            "{}",
            wire.text()
        );
    }
}
