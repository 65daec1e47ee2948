//! The agent's tunables as the host's variables give them: each one's name, default and
//! bounds, so a bad value is bounded here, whatever host reads it.

use crate::turn::Settings;
use crate::turn::deadline::Deadline;

/// The host's variables, read as whole numbers.
pub trait Variables {
    /// `name`'s value, or `default` when it is unset or not a number.
    fn number(&self, name: &str, default: u64) -> u64;
}

/// A turn's settings: at most `agent_max_steps` reasoning steps (1 to 50, default 10) and
/// `agent_turn_deadline_ms` (default 2 minutes; 0: none) from `started_ms`.
pub fn settings(vars: &dyn Variables, started_ms: u64) -> Settings {
    Settings {
        max_steps: vars.number("agent_max_steps", 10).clamp(1, 50) as u32,
        deadline: Deadline {
            ms: vars.number("agent_turn_deadline_ms", 120_000),
            started_ms,
        },
    }
}

/// How long a turn's events are kept after its last one (`chat_event_retention_s`,
/// default 10 minutes).
pub fn retention_ms(vars: &dyn Variables) -> u64 {
    vars.number("chat_event_retention_s", 600)
        .saturating_mul(1000)
}

/// How long a streamed turn whose client went away waits for a resuming reader before it
/// cancels (`chat_resume_grace_ms`, default 15 s; 0: at once; at most 10 minutes).
pub fn grace_ms(vars: &dyn Variables) -> u64 {
    vars.number("chat_resume_grace_ms", 15_000).min(600_000)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    struct Set(HashMap<&'static str, u64>);

    impl Variables for Set {
        fn number(&self, name: &str, default: u64) -> u64 {
            self.0.get(name).copied().unwrap_or(default)
        }
    }

    #[test]
    fn defaults_hold_when_unset_and_bounds_when_set_too_far() {
        let unset = Set(HashMap::new());
        let s = settings(&unset, 7);
        assert_eq!(
            (s.max_steps, s.deadline.ms, s.deadline.started_ms),
            (10, 120_000, 7)
        );
        assert_eq!((retention_ms(&unset), grace_ms(&unset)), (600_000, 15_000));
        let far = Set(HashMap::from([
            ("agent_max_steps", 0),
            ("chat_event_retention_s", u64::MAX),
            ("chat_resume_grace_ms", u64::MAX),
        ]));
        assert_eq!(settings(&far, 0).max_steps, 1);
        assert_eq!((retention_ms(&far), grace_ms(&far)), (u64::MAX, 600_000));
        let many = Set(HashMap::from([("agent_max_steps", 1_000)]));
        assert_eq!(settings(&many, 0).max_steps, 50);
    }
}
