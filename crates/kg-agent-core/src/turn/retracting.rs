//! Withdrawing streamed content: a ReAct step's text is streamed in case it is the
//! answer; when it turns out to preface tool calls (or to be a draft) the turn calls
//! [`EventSink::retract_content`], and the next `content_start` goes out as a reset so
//! the client discards what it showed.

use super::ports::{EventSink, Stop};
use crate::events::Event;

/// A sink that turns the first `content_start` after a retraction into a reset.
pub struct Retracting<'a> {
    inner: &'a mut dyn EventSink,
    /// Content shown so far was withdrawn: the next `content_start` says to discard it.
    retracted: bool,
}

impl<'a> Retracting<'a> {
    pub fn new(inner: &'a mut dyn EventSink) -> Self {
        Retracting {
            inner,
            retracted: false,
        }
    }
}

impl EventSink for Retracting<'_> {
    fn emit(&mut self, event: Event) {
        let event = match event {
            Event::ContentStart if self.retracted => {
                self.retracted = false;
                Event::ContentReset
            }
            other => other,
        };
        self.inner.emit(event);
    }
    fn gone(&self) -> bool {
        self.inner.gone()
    }
    fn stop(&self) -> Option<Stop> {
        self.inner.stop()
    }
    fn streaming(&self) -> bool {
        self.inner.streaming()
    }
    fn heartbeat(&mut self) {
        self.inner.heartbeat();
    }
    fn retract_content(&mut self) {
        self.retracted = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::turn::ports::Collected;

    #[test]
    fn only_the_first_content_start_after_a_retraction_is_a_reset() {
        let mut collected = Collected::default();
        let mut sink = Retracting::new(&mut collected);
        sink.emit(Event::ContentStart);
        sink.retract_content();
        sink.emit(Event::ContentStart);
        sink.emit(Event::ContentStart);
        let kinds: Vec<bool> = collected
            .0
            .iter()
            .map(|e| matches!(e, Event::ContentReset))
            .collect();
        assert_eq!(kinds, [false, true, false]);
    }
}
