//! `GET /chat/stream/{turn_id}` (and `POST /chat/stream` with `Last-Event-ID`): a running
//! or recent turn's events after the one the client last saw, then the rest until `done`
//! (`kg_agent_core::follow`), polled from the key-value store.

use crate::identity::Principal;
use crate::kv::SpinKv;
use kg_agent_core::follow::{self, Reader};
use kg_http::ApiError;
use kg_identity::Permission;
use spin_sdk::http::ResponseOutparam;
use std::time::Duration;

pub use kg_agent_core::follow::Follower as Resume;

/// How often a resumed stream looks for the running turn's newer events.
const POLL: Duration = Duration::from_millis(100);

fn now_ms() -> u64 {
    u64::try_from(kg_spin::clock::epoch_ms()).unwrap_or_default()
}

/// Checks a resume before the stream opens. `turn`: from the path (`None` on `POST
/// /chat/stream`, where the header names it).
pub fn prepare(
    turn: Option<&str>,
    last_event_id: Option<&str>,
    who: &Principal,
) -> Result<Resume, ApiError> {
    let kv = SpinKv::open().map_err(kg_agent_core::turn::kv_error)?;
    let reader = Reader {
        subject: &who.caller.subject,
        admin: who.may(Permission::ConversationsAll),
        now_ms: now_ms(),
        retention_ms: kg_agent_core::config::retention_ms(&super::SpinVariables),
    };
    follow::prepare(&kv, turn, last_event_id, &reader)
}

/// Streams the turn's kept events after the client's last, then its newer ones until
/// `done`.
pub async fn stream(mut resume: Resume, extra: &[(String, String)], out: ResponseOutparam) {
    let Some(mut sink) = crate::sse::open(extra, out) else {
        return;
    };
    let Ok(kv) = SpinKv::open() else {
        return sink.give_up("unavailable", "key-value store".into());
    };
    let link = sink.link();
    while resume.step(&kv, &mut sink, now_ms()) {
        link.beat();
        kg_spin::sleep(POLL).await;
    }
}
