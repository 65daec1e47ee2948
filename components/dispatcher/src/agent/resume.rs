//! `GET /chat/stream/{turn_id}` (and `POST /chat/stream` with `Last-Event-ID`): the events
//! of a running or recent turn after the one the client last saw, from the key-value store,
//! then — while the turn still runs, here or in another instance — the rest as it is
//! kept, until `done`, marking the turn attached (`kg_agent_core::attach`) so a turn whose
//! own client went away keeps running for it. Only the turn's owner (or an admin) may
//! read it; a malformed `Last-Event-ID`, someone else's or an unknown turn, and an expired
//! one are JSON errors before the stream opens.

use super::kv::SpinKv;
use super::sink::Streamed;
use crate::identity::Principal;
use kg_agent_core::attach;
use kg_agent_core::events::{Event, StreamState};
use kg_agent_core::replay::{self, Refused};
use kg_http::{ApiError, sse};
use kg_identity::Permission;
use spin_sdk::http::ResponseOutparam;
use std::time::Duration;

/// How often a resumed stream looks for the running turn's newer events.
const POLL: Duration = Duration::from_millis(100);

/// How long a turn's events are kept after its last one (`chat_event_retention_s`).
pub fn retention_ms() -> u64 {
    kg_spin::number_variable("chat_event_retention_s", 600).saturating_mul(1000)
}

/// How long a streamed turn whose client went away waits for a resuming reader before it
/// cancels (`chat_resume_grace_ms`; 0: at once; at most 10 minutes).
pub fn grace_ms() -> u64 {
    kg_spin::number_variable("chat_resume_grace_ms", 15_000).min(600_000)
}

pub fn now_ms() -> u64 {
    u64::try_from(kg_spin::clock::epoch_ms()).unwrap_or_default()
}

/// A checked resume: the turn, and the last event the client saw (0: none).
pub struct Resume {
    turn: String,
    after: u64,
}

/// Checks a resume before the stream opens. `turn`: from the path (`None` on `POST
/// /chat/stream`, where the header names it).
pub fn prepare(
    turn: Option<&str>,
    last_event_id: Option<&str>,
    who: &Principal,
) -> Result<Resume, ApiError> {
    let no_stream = |turn: &str| ApiError::not_found(format!("no stream `{turn}`"));
    let (turn, after) = match (turn, last_event_id) {
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
    let kv = SpinKv::open().map_err(kg_agent_core::turn::kv_error)?;
    let admin = who.may(Permission::ConversationsAll);
    replay::open(
        &kv,
        &turn,
        &who.caller.subject,
        admin,
        now_ms(),
        retention_ms(),
    )
    .map_err(|e| match e {
        Refused::NotFound => no_stream(&turn),
        Refused::Expired => ApiError::new(
            410,
            "stream_expired",
            format!("the events of `{turn}` are no longer kept; start a new turn"),
        ),
        Refused::Store(e) => kg_agent_core::turn::kv_error(e),
    })?;
    Ok(Resume { turn, after })
}

/// Ends a resumed stream that cannot go on with `error`, `completed` (failed) and `done`.
fn give_up(sink: &mut Streamed, code: &str, message: String) {
    let mut state = StreamState::default();
    let timestamp = kg_spin::clock::now_rfc3339();
    for event in [
        Event::Error {
            code: code.into(),
            message,
        },
        Event::Done,
    ] {
        for (kind, data) in state.frames(&event, &timestamp) {
            sink.raw(&sse::event(kind, data));
        }
    }
}

/// Streams the turn's kept events after `resume.after`, then its newer ones until `done`.
pub async fn stream(resume: Resume, extra: &[(String, String)], out: ResponseOutparam) {
    let Some(mut sink) = Streamed::open(extra, out) else {
        return;
    };
    let Ok(kv) = SpinKv::open() else {
        return give_up(&mut sink, "unavailable", "key-value store".into());
    };
    let link = sink.link();
    let (turn, mut last) = (resume.turn, resume.after);
    let mut sent_chunks = 0;
    // While this reader streams, the running turn knows someone is there.
    let mut marker = attach::Marker::default();
    loop {
        let meta = match replay::read_meta(&kv, &turn) {
            Ok(Some(meta)) => meta,
            Ok(None) => {
                let message = format!("the events of `{turn}` are no longer kept");
                return give_up(&mut sink, "stream_expired", message);
            }
            Err(e) => return give_up(&mut sink, "unavailable", e),
        };
        if !meta.done {
            marker.refresh(&kv, &turn, now_ms());
        }
        if meta.chunks > sent_chunks {
            match replay::read_chunks(&kv, &turn, sent_chunks, meta.chunks) {
                Ok(frames) => {
                    for (seq, frame) in frames {
                        if seq > last {
                            sink.raw(frame.as_bytes());
                            last = seq;
                        }
                    }
                }
                Err(e) => return give_up(&mut sink, "unavailable", e),
            }
            sent_chunks = meta.chunks;
        }
        if meta.done || link.closed() {
            return;
        }
        if meta.stale(now_ms()) {
            let message = format!("the turn `{turn}` stopped without finishing");
            return give_up(&mut sink, "stream_lost", message);
        }
        link.beat();
        kg_spin::sleep(POLL).await;
    }
}
