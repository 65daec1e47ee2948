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
//! - It does not grow while the chunks' round trips say they queue: when a chunk took
//!   longer than the fastest one so far by as much as one more chunk ahead of it would
//!   cost (`window × (rtt − fastest) ≥ rtt`, TCP Vegas' estimate of what waits in the
//!   queue). Chunks waiting on one account's lock, or on a graph whose cores are all
//!   busy, gain nothing from more in flight: on the 2-core benchmark host ten disjoint
//!   chunks in flight were slower than four.
//! - On contention it halves (rounding up, at least 1), and from then on grows by one per
//!   window's worth of clean chunks, or per `patience` clean chunks when that is more.
//! - Patience doubles with every contention (up to [`MAX_PATIENCE`]) and is back to 1 once
//!   the window grows past where the last contention came: on one account, even two chunks
//!   in flight deadlocked every other chunk on Neo4j, so probing two again after each
//!   clean chunk kept the batch in deadlocks; with patience the probes thin out
//!   (after 2, 4, 8… clean chunks) while a one-off contention costs little.
//! - A burst of failures from one round counts once: only a chunk sent after the last
//!   decrease can decrease the window again (or grow it), so the chunks that were already
//!   in flight, and met the same contention, do not collapse it to 1.

/// The window a batch starts with (or the ceiling, when lower): two chunks in flight
/// were the fastest fixed setting for one account's payments on Neo4j, and the slow
/// start reaches ten for disjoint chunks after three rounds.
pub const INITIAL_WINDOW: u32 = 2;

/// At most this many clean chunks per step up after contention: a batch that keeps
/// deadlocking at two in flight tries two again about once every 32 chunks.
pub const MAX_PATIENCE: u32 = 32;

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
    /// Clean chunks needed per step up in the additive phase, at least the window.
    patience: u32,
    /// The window when contention last cut it.
    cut_at: u32,
    /// The fastest clean round trip so far (ms): a chunk that did not queue.
    fastest_ms: Option<u64>,
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
            patience: 1,
            cut_at: 0,
            fastest_ms: None,
            fresh_from: 0,
            next_seq: 0,
        }
    }

    /// How many chunks may be in flight now.
    pub fn limit(&self) -> u32 {
        self.limit
    }

    pub fn is_adaptive(&self) -> bool {
        self.concurrency == Concurrency::Adaptive
    }

    /// Numbers a chunk being sent; pass the number back to [`Window::observe`].
    pub fn send(&mut self) -> u64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        seq
    }

    /// Takes in how the attempt sent as `seq` ended, without its round trip.
    pub fn observe(&mut self, seq: u64, signal: Signal) {
        self.observe_timed(seq, signal, None);
    }

    /// Takes in how the attempt sent as `seq` ended and, when the driver measured it, how
    /// long the graph took to answer it (ms).
    pub fn observe_timed(&mut self, seq: u64, signal: Signal, round_trip_ms: Option<u64>) {
        if self.concurrency == Concurrency::Fixed {
            return;
        }
        let queued = match (signal, round_trip_ms) {
            (Signal::Clean, Some(rtt)) => {
                let fastest = self.fastest_ms.map_or(rtt, |f| f.min(rtt));
                self.fastest_ms = Some(fastest);
                u64::from(self.limit) * (rtt - fastest) >= rtt.max(1)
            }
            _ => false,
        };
        if seq < self.fresh_from {
            return;
        }
        match signal {
            Signal::Neutral => {}
            // Queued: hold here, and leave the slow start (the next growth is additive).
            Signal::Clean if queued => self.threshold = self.threshold.min(self.limit),
            Signal::Clean if self.limit < self.threshold => self.grow(),
            Signal::Clean => {
                self.clean += 1;
                if self.clean >= self.limit.max(self.patience) {
                    self.grow();
                }
            }
            Signal::Contention => {
                self.cut_at = self.limit;
                self.limit = self.limit.div_ceil(2);
                self.threshold = self.limit;
                self.clean = 0;
                self.patience = (self.patience * 2).min(MAX_PATIENCE);
                self.fresh_from = self.next_seq;
            }
        }
    }

    fn grow(&mut self) {
        self.limit = (self.limit + 1).min(self.ceiling);
        self.clean = 0;
        if self.limit > self.cut_at {
            self.patience = 1;
        }
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
        // Additive from here: four clean chunks sent after the decrease add one (the
        // patience, 2, is less than the window).
        for seq in send(&mut w, 3) {
            w.observe(seq, Signal::Clean);
        }
        assert_eq!(w.limit(), 4);
        let seq = w.send();
        w.observe(seq, Signal::Clean);
        assert_eq!(w.limit(), 5);
        // Fresh contention halves again (rounding up), down to one and no lower.
        for expected in [3, 2, 1, 1] {
            let seq = w.send();
            w.observe(seq, Signal::Contention);
            assert_eq!(w.limit(), expected);
        }
    }

    /// Clean chunks it takes to step up from the current window.
    fn clean_until_growth(w: &mut Window) -> u32 {
        let from = w.limit();
        let mut n = 0;
        while w.limit() == from {
            let seq = w.send();
            w.observe(seq, Signal::Clean);
            n += 1;
        }
        n
    }

    #[test]
    fn contention_at_the_same_window_again_and_again_thins_out_the_probes() {
        // One account: two in flight deadlock every time, one never does.
        let mut w = Window::new(10, Concurrency::Adaptive);
        let mut waits = Vec::new();
        for _ in 0..7 {
            let seq = w.send();
            w.observe(seq, Signal::Contention);
            assert_eq!(w.limit(), 1);
            waits.push(clean_until_growth(&mut w));
            assert_eq!(w.limit(), 2);
        }
        assert_eq!(waits, vec![2, 4, 8, 16, 32, 32, 32]);
        // Once two holds for a window's worth and the window grows past it, patience is
        // spent: the next step up takes one window of clean chunks.
        assert_eq!(
            clean_until_growth(&mut w),
            32,
            "patience still applies at 2"
        );
        assert_eq!(w.limit(), 3);
        assert_eq!(clean_until_growth(&mut w), 3);
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
        // Fresh ones do: two of them (the patience after one contention).
        for seq in send(&mut w, 2) {
            w.observe(seq, Signal::Clean);
        }
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

    #[test]
    fn round_trips_that_show_queueing_hold_the_window() {
        let mut w = Window::new(10, Concurrency::Adaptive);
        // Two chunks of 40 ms: nothing queues, slow start.
        for seq in send(&mut w, 2) {
            w.observe_timed(seq, Signal::Clean, Some(40));
        }
        assert_eq!(w.limit(), 4);
        // At four, chunks take 60 ms: 4 × 20 ≥ 60, about one chunk waits: hold.
        for seq in send(&mut w, 4) {
            w.observe_timed(seq, Signal::Clean, Some(60));
        }
        assert_eq!(w.limit(), 4);
        // Back to 45 ms (4 × 5 < 45): growth again, additive now (the slow start ended).
        for seq in send(&mut w, 3) {
            w.observe_timed(seq, Signal::Clean, Some(45));
        }
        assert_eq!(w.limit(), 4);
        let seq = w.send();
        w.observe_timed(seq, Signal::Clean, Some(45));
        assert_eq!(w.limit(), 5);
        // A faster chunk lowers the yardstick; a rolled-back one's time is not used.
        let seq = w.send();
        w.observe_timed(seq, Signal::Contention, Some(1));
        assert_eq!(w.fastest_ms, Some(40));
        let seq = w.send();
        w.observe_timed(seq, Signal::Clean, Some(30));
        assert_eq!(w.fastest_ms, Some(30));
    }

    proptest! {
        /// Whatever the signals and whenever they arrive: the window stays within
        /// 1..=ceiling; fresh contention never leaves it larger; a fresh clean chunk never
        /// leaves it smaller; and a run of fresh clean chunks brings it to the ceiling.
        #[test]
        fn stays_within_bounds_and_moves_the_right_way(
            ceiling in 1u32..65,
            steps in proptest::collection::vec((0u8..3, 0usize..8, proptest::option::of(0u64..500)), 0..300),
        ) {
            let mut w = Window::new(ceiling, Concurrency::Adaptive);
            let mut flying: Vec<u64> = Vec::new();
            for (signal, pick, round_trip_ms) in steps {
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
                w.observe_timed(seq, signal, round_trip_ms);
                prop_assert!((1..=ceiling).contains(&w.limit()));
                match signal {
                    Signal::Contention if fresh => {
                        prop_assert_eq!(w.limit(), before.div_ceil(2));
                    }
                    Signal::Clean => prop_assert!(w.limit() >= before),
                    _ => prop_assert_eq!(w.limit(), before),
                }
            }
            // Recovery: clean answers only, the window back at the ceiling within
            // ceiling × (ceiling + MAX_PATIENCE) chunks (a step up per window's worth of
            // them, or per MAX_PATIENCE, at worst).
            for _ in 0..ceiling * (ceiling + MAX_PATIENCE) {
                let seq = w.send();
                w.observe_timed(seq, Signal::Clean, w.fastest_ms);
            }
            prop_assert_eq!(w.limit(), ceiling);
        }
    }
}
