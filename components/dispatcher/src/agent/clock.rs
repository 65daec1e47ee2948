//! The turn's clock: wall time and ids as the rest of the dispatcher makes them, and the
//! monotonic milliseconds the turn's deadline is measured on — the clock the LLM transport
//! cuts a pending call on, so both agree on when it passed.

use kg_agent_core::turn::ports::{Clock, DeadlineClock};

pub struct SpinTurnClock;

impl Clock for SpinTurnClock {
    fn now(&self) -> String {
        kg_spin::clock::now_rfc3339()
    }
    fn ordered_suffix(&self) -> String {
        kg_spin::clock::ordered_suffix()
    }
    fn unique_id(&self, prefix: &str) -> String {
        kg_spin::clock::unique_id(prefix)
    }
}

impl DeadlineClock for SpinTurnClock {
    fn monotonic_ms(&self) -> u64 {
        kg_spin::clock::monotonic_ms()
    }
}
