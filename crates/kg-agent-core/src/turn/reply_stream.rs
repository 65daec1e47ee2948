//! Pulling the LLM's own streamed reply (a direct answer, or a ReAct step's), each text
//! delta sent on at once as a `content` event.

use super::ports::{EventSink, ModelPoll, ModelStream};
use crate::events::Event;
use llm_client::{ChatResponse, LlmError};

/// How long one pull of the LLM's stream waits. The stream is the dispatcher's own LLM
/// call (no component call per pull), so pulls are cheap and as short as the check for a
/// departed client while an LLM call is pending.
const MODEL_STREAM_WAIT_MS: u32 = 20;

/// How a pulled reply ended.
#[derive(Debug)]
pub enum Pulled {
    /// The call is over. `shown`: some of its text went out as `content` events.
    Finished { response: ChatResponse, shown: bool },
    /// The client left or the turn's deadline passed; dropping the stream abandons it.
    Stopped,
    /// The LLM's error (its retries happened before the first byte): not sent again.
    Failed(LlmError),
}

/// Pulls `stream` to its end, each delta a `content` event (`content_start` before the
/// first, so an LLM that fails before writing anything leaves no empty answer behind).
/// Between pulls it looks whether the client left or the deadline passed.
pub fn pull_reply(stream: &mut dyn ModelStream, sink: &mut dyn EventSink) -> Pulled {
    pull(stream, sink, Show::All)
}

/// What of a pulled reply goes out as `content`.
pub enum Show {
    /// Every delta.
    All,
    /// Nothing: the reply is read whole (it is streamed only so that the server stops
    /// writing when the turn drops it).
    Nothing,
    /// A ReAct step's text, except what may be a tool call written as text
    /// ([`crate::calls::Gate`]); what was held back is let go at the end unless the reply
    /// was a call.
    Gated,
}

/// [`pull_reply`], showing what `show` says. A ReAct step (`Gated` or `Nothing`) that wrote
/// a whole tool call as text and then goes on in prose is cut there: small models write a
/// call and then ramble about it up to `max_tokens` (seen: 280 tokens, 30 s on a CPU), and
/// dropping the stream stops the server writing. Its usage is then unknown.
pub fn pull(stream: &mut dyn ModelStream, sink: &mut dyn EventSink, show: Show) -> Pulled {
    let mut shown = false;
    let mut gate = crate::calls::Gate::default();
    let mut text = String::new();
    let send = |text: String, sink: &mut dyn EventSink, shown: &mut bool| {
        if !*shown {
            sink.emit(Event::ContentStart);
            *shown = true;
        }
        sink.emit(Event::Content(text));
    };
    loop {
        if sink.gone() {
            return Pulled::Stopped;
        }
        match stream.next(MODEL_STREAM_WAIT_MS) {
            Ok(ModelPoll::Delta(delta)) => {
                if !matches!(show, Show::All) {
                    text.push_str(&delta);
                    if crate::calls::call_then_prose(&text) {
                        return Pulled::Finished {
                            response: ChatResponse {
                                content: std::mem::take(&mut text),
                                tool_calls: Vec::new(),
                                finish_reason: Some("stop".into()),
                                usage: None,
                                model: None,
                            },
                            shown,
                        };
                    }
                }
                match show {
                    Show::All => send(delta, sink, &mut shown),
                    Show::Nothing => sink.heartbeat(),
                    Show::Gated => {
                        if let Some(out) = gate.push(&delta) {
                            send(out, sink, &mut shown);
                        }
                    }
                }
            }
            Ok(ModelPoll::Pending) => sink.heartbeat(),
            Ok(ModelPoll::Finished(response)) => {
                if matches!(show, Show::Gated)
                    && response.tool_calls.is_empty()
                    && !is_call(&response.content)
                    && let Some(rest) = gate.rest()
                {
                    send(rest, sink, &mut shown);
                }
                return Pulled::Finished { response, shown };
            }
            Err(_) if sink.gone() => return Pulled::Stopped,
            Err(e) => return Pulled::Failed(e),
        }
    }
}

/// Whether a reply's text is (or holds) a tool call written as text.
fn is_call(content: &str) -> bool {
    llm_client::recover_tool_calls(content, &[]).is_some()
        || llm_client::looks_like_tool_call(content)
}
