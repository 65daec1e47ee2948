//! How many chunks a batch keeps in flight: `max_concurrent` is the ceiling, and under it
//! the window adapts to what the graph answers (additive increase, multiplicative
//! decrease, as TCP's congestion control).
//!
//! Why: on Neo4j, chunks that link to one shared node (1,000 payments from one account)
//! deadlock on that node's relationship-group locks, which the statements' own lock order
//! cannot cover. Ten such chunks in flight spent their time in deadlock retries and ran
//! five times slower than two (docs/performance.md), while chunks over disjoint nodes gain
//! from more in flight. The graph tells the two apart: a rollback (`DeadlockDetected`, a
//! transient error) or an attempt it did not answer in time means too much in flight.
//!
//! - It starts at [`INITIAL_WINDOW`] and, until the first contention, grows by one per
//!   clean chunk (doubling per round trip: 2, 4, 8, the ceiling).
//! - On contention it halves (at least 1), and from then on grows by one per window's
//!   worth of clean chunks.
//! - A burst of failures from one round counts once: only a chunk sent after the last
//!   decrease can decrease the window again (or grow it), so the chunks that were already
//!   in flight, and met the same contention, do not collapse it to 1.

/// The window a batch starts with (or the ceiling, when lower): two chunks in flight
/// were the fastest fixed setting for one account's payments on Neo4j, and the slow
/// start reaches ten for disjoint chunks after three rounds.
pub const INITIAL_WINDOW: u32 = 2;

/// Whether the window adapts (the default) or stays at the ceiling (an operator's choice,
/// `action_concurrency = "fixed"`, and what the benchmark compares against).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Concurrency {
    #[default]
    Adaptive,
    Fixed,
}

/// What a chunk's attempt said about the load, for [`Window::observe`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// Answered with its rows: no contention.
    Clean,
    /// Rolled back by the graph (deadlock, lock timeout) or not answered in time.
    Contention,
    /// Says nothing about the load (refused before it was sent, a fatal error).
    Neutral,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Window {
    ceiling: u32,
    concurrency: Concurrency,
    limit: u32,
    /// Below it the window grows by one per clean chunk, from it by one per window.
    threshold: u32,
    /// Clean chunks since the window last grew in the additive phase.
    clean: u32,
    /// Chunks are numbered as they are sent; those numbered below this were in flight at
    /// the last decrease and their outcome is no longer news.
    fresh_from: u64,
    next_seq: u64,
}

impl Window {
    pub fn new(ceiling: u32, concurrency: Concurrency) -> Window {
        let ceiling = ceiling.max(1);
        let limit = match concurrency {
            Concurrency::Adaptive => INITIAL_WINDOW.min(ceiling),
            Concurrency::Fixed => ceiling,
        };
        Window {
            ceiling,
            concurrency,
            limit,
            threshold: ceiling,
            clean: 0,
            fresh_from: 0,
            next_seq: 0,
        }
    }

    /// How many chunks may be in flight now.
    pub fn limit(&self) -> u32 {
        self.limit
    }

    /// Numbers a chunk being sent; pass the number back to [`Window::observe`].
    pub fn send(&mut self) -> u64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        seq
    }

    /// Takes in how the attempt sent as `seq` ended.
    pub fn observe(&mut self, seq: u64, signal: Signal) {
        if self.concurrency == Concurrency::Fixed || seq < self.fresh_from {
            return;
        }
        match signal {
            Signal::Neutral => {}
            Signal::Clean if self.limit < self.threshold => self.grow(),
            Signal::Clean => {
                self.clean += 1;
                if self.clean >= self.limit {
                    self.grow();
                }
            }
            Signal::Contention => {
                self.limit = (self.limit / 2).max(1);
                self.threshold = self.limit;
                self.clean = 0;
                self.fresh_from = self.next_seq;
            }
        }
    }

    fn grow(&mut self) {
        self.limit = (self.limit + 1).min(self.ceiling);
        self.clean = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Sends `n` chunks and returns their numbers.
    fn send(w: &mut Window, n: usize) -> Vec<u64> {
        (0..n).map(|_| w.send()).collect()
    }

    #[test]
    fn starts_small_and_doubles_per_clean_round_up_to_the_ceiling() {
        let mut w = Window::new(10, Concurrency::Adaptive);
        let mut seen = vec![w.limit()];
        while w.limit() < 10 {
            let n = w.limit() as usize;
            for seq in send(&mut w, n) {
                w.observe(seq, Signal::Clean);
            }
            seen.push(w.limit());
        }
        assert_eq!(seen, vec![2, 4, 8, 10]);
        let seq = w.send();
        w.observe(seq, Signal::Clean);
        assert_eq!(w.limit(), 10, "never above the ceiling");
        assert_eq!(Window::new(1, Concurrency::Adaptive).limit(), 1);
        assert_eq!(Window::new(0, Concurrency::Adaptive).limit(), 1);
    }

    #[test]
    fn halves_once_per_round_of_contention_then_grows_by_one_per_window() {
        let mut w = Window::new(10, Concurrency::Adaptive);
        for seq in send(&mut w, 6) {
            w.observe(seq, Signal::Clean);
        }
        assert_eq!(w.limit(), 8);
        let round = send(&mut w, 8);
        // Every chunk of the round deadlocked: one decrease, not eight.
        for &seq in &round {
            w.observe(seq, Signal::Contention);
        }
        assert_eq!(w.limit(), 4);
        // Additive from here: four clean chunks sent after the decrease add one.
        for seq in send(&mut w, 3) {
            w.observe(seq, Signal::Clean);
        }
        assert_eq!(w.limit(), 4);
        let seq = w.send();
        w.observe(seq, Signal::Clean);
        assert_eq!(w.limit(), 5);
        // Fresh contention halves again, down to one and no lower.
        for expected in [2, 1, 1] {
            let seq = w.send();
            w.observe(seq, Signal::Contention);
            assert_eq!(w.limit(), expected);
        }
    }

    #[test]
    fn stale_successes_do_not_grow_a_window_just_cut() {
        let mut w = Window::new(10, Concurrency::Adaptive);
        let round = send(&mut w, 2);
        w.observe(round[0], Signal::Contention);
        assert_eq!(w.limit(), 1);
        // The other chunk of that round was sent before the cut: no news.
        w.observe(round[1], Signal::Clean);
        assert_eq!(w.limit(), 1);
        let seq = w.send();
        w.observe(seq, Signal::Clean);
        assert_eq!(w.limit(), 2);
    }

    #[test]
    fn neutral_outcomes_and_a_fixed_window_change_nothing() {
        let mut w = Window::new(10, Concurrency::Adaptive);
        let seq = w.send();
        w.observe(seq, Signal::Neutral);
        assert_eq!(w.limit(), 2);
        let mut fixed = Window::new(7, Concurrency::Fixed);
        assert_eq!(fixed.limit(), 7);
        for signal in [Signal::Contention, Signal::Clean, Signal::Contention] {
            let seq = fixed.send();
            fixed.observe(seq, signal);
            assert_eq!(fixed.limit(), 7);
        }
    }

    proptest! {
        /// Whatever the signals and whenever they arrive: the window stays within
        /// 1..=ceiling; fresh contention never leaves it larger; a fresh clean chunk never
        /// leaves it smaller; and a run of fresh clean chunks brings it to the ceiling.
        #[test]
        fn stays_within_bounds_and_moves_the_right_way(
            ceiling in 1u32..65,
            steps in proptest::collection::vec((0u8..3, 0usize..8), 0..300),
        ) {
            let mut w = Window::new(ceiling, Concurrency::Adaptive);
            let mut flying: Vec<u64> = Vec::new();
            for (signal, pick) in steps {
                while flying.len() < w.limit() as usize {
                    flying.push(w.send());
                }
                let seq = flying.remove(pick % flying.len());
                let signal = match signal {
                    0 => Signal::Clean,
                    1 => Signal::Contention,
                    _ => Signal::Neutral,
                };
                let before = w.limit();
                let fresh = seq >= w.fresh_from;
                w.observe(seq, signal);
                prop_assert!((1..=ceiling).contains(&w.limit()));
                match signal {
                    Signal::Contention if fresh => {
                        prop_assert_eq!(w.limit(), (before / 2).max(1));
                    }
                    Signal::Clean => prop_assert!(w.limit() >= before),
                    _ => prop_assert_eq!(w.limit(), before),
                }
            }
            // Recovery: clean answers only, the window back at the ceiling within
            // ceiling² chunks (one per window's worth of them at worst).
            for _ in 0..(ceiling * ceiling + ceiling) {
                let seq = w.send();
                w.observe(seq, Signal::Clean);
            }
            prop_assert_eq!(w.limit(), ceiling);
        }
    }
}
