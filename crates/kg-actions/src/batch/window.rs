//! How many chunks a batch keeps in flight: `max_concurrent` is the ceiling, and under it
//! the window adapts to what the graph answers (additive increase, multiplicative
//! decrease, as TCP's congestion control, with TCP Vegas' queue estimate).
//!
//! Why: on Neo4j, chunks that link to one shared node (1,000 payments from one account)
//! deadlock on that node's relationship-group locks, which the statements' own lock order
//! cannot cover. Ten such chunks in flight spent their time in deadlock retries and ran
//! three to five times slower than two (docs/performance.md), while chunks over disjoint
//! nodes gain from more in flight. The graph tells the two apart: a rollback
//! (`DeadlockDetected`, a transient error) or an attempt it did not answer in time means
//! too much in flight, and round trips that lengthen as the window grows mean chunks
//! queue (on a lock, or for the graph's cores) without gaining anything.
//!
//! - It starts at [`INITIAL_WINDOW`] and steps up by one after a window's worth of clean
//!   chunks in a row that did not queue, never above the ceiling. A chunk queued when it
//!   took longer than the fastest one so far by as much as one more chunk ahead of it
//!   would cost (`window × (rtt − fastest) ≥ rtt`); it starts the count again. (A slow
//!   start, doubling per round, reached ten on the 2-core benchmark host where disjoint
//!   chunks ran no faster than at two to four, and walked one account's first chunks into
//!   deadlocks.)
//! - On contention it halves (rounding up), never below [`MIN_WINDOW`].
//! - After contention, a step up needs `patience` clean chunks when that is more than the
//!   window: 4 after one contention, 16 after two, then [`MAX_PATIENCE`]; it is spent once
//!   the window grows past where the last contention came. On one account three chunks
//!   in flight deadlocked nearly every time, and each probe costs a rollback and a retry,
//!   so the probes thin out while a one-off contention costs little.
//! - A burst of failures from one round counts once: only a chunk sent after the last
//!   decrease can decrease the window again (or grow it), so the chunks that were already
//!   in flight, and met the same contention, do not collapse it.

/// The window a batch starts with (or the ceiling, when lower): two chunks in flight
/// were the fastest fixed setting, or close to it, for one account's payments and for
/// disjoint ones on the benchmark host (docs/performance.md).
pub const INITIAL_WINDOW: u32 = 2;

/// Contention does not cut the window below this (or the ceiling, when lower). Two in
/// flight hide one chunk's round trip behind the other's work, and a deadlock between two
/// leaves one to go on, so the batch always progresses. On one account two also deadlock
/// now and then, yet fixed at two the batch was faster than at one in ten benchmark runs
/// of fifteen: the rollback and the retry's backoff overlap the other chunk's work, while
/// one in flight leaves the graph idle between chunks. A caller who wants one chunk at a
/// time sets `max_concurrent` to 1.
pub const MIN_WINDOW: u32 = 2;

/// At most this many clean chunks per step up after contention: a batch that keeps
/// deadlocking at three in flight tries three again about once every 32 chunks.
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
    /// Clean chunks in a row, none queued, since the window last moved.
    clean: u32,
    /// Clean chunks a step up needs after contention, when more than the window.
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
            // Queued: hold here and count afresh, so the window steps up only after a run
            // of chunks that did not queue.
            Signal::Clean if queued => self.clean = 0,
            Signal::Clean => {
                self.clean += 1;
                if self.clean >= self.limit.max(self.patience) {
                    self.grow();
                }
            }
            Signal::Contention => {
                self.cut_at = self.limit;
                self.limit = self.limit.div_ceil(2).max(MIN_WINDOW.min(self.ceiling));
                self.clean = 0;
                self.patience = (self.patience * 4).min(MAX_PATIENCE);
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

    /// Clean chunks (untimed) it takes to step up from the current window.
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
    fn starts_at_two_and_steps_up_one_per_window_of_clean_chunks_to_the_ceiling() {
        let mut w = Window::new(10, Concurrency::Adaptive);
        assert_eq!(w.limit(), 2);
        let steps: Vec<u32> = (2..10).map(|_| clean_until_growth(&mut w)).collect();
        assert_eq!(steps, vec![2, 3, 4, 5, 6, 7, 8, 9]);
        assert_eq!(w.limit(), 10);
        for _ in 0..20 {
            let seq = w.send();
            w.observe(seq, Signal::Clean);
        }
        assert_eq!(w.limit(), 10, "never above the ceiling");
        assert_eq!(Window::new(1, Concurrency::Adaptive).limit(), 1);
        assert_eq!(Window::new(0, Concurrency::Adaptive).limit(), 1);
    }

    #[test]
    fn halves_once_per_round_of_contention_down_to_two() {
        let mut w = Window::new(10, Concurrency::Adaptive);
        while w.limit() < 8 {
            clean_until_growth(&mut w);
        }
        let round = send(&mut w, 8);
        // Every chunk of the round deadlocked: one decrease, not eight.
        for &seq in &round {
            w.observe(seq, Signal::Contention);
        }
        assert_eq!(w.limit(), 4);
        // Below where contention came, a step up takes the patience (4) or the window,
        // whichever is more.
        assert_eq!(clean_until_growth(&mut w), 4);
        assert_eq!(w.limit(), 5);
        // Fresh contention halves again (rounding up), down to two and no lower.
        for expected in [3, 2, 2, 2] {
            let seq = w.send();
            w.observe(seq, Signal::Contention);
            assert_eq!(w.limit(), expected);
        }
        // A ceiling of one stays one.
        let mut one = Window::new(1, Concurrency::Adaptive);
        let seq = one.send();
        one.observe(seq, Signal::Contention);
        assert_eq!(one.limit(), 1);
    }

    #[test]
    fn contention_at_the_same_window_again_and_again_thins_out_the_probes() {
        // One account: three in flight deadlock every time, two hold.
        let mut w = Window::new(10, Concurrency::Adaptive);
        assert_eq!(clean_until_growth(&mut w), 2);
        let mut waits = Vec::new();
        for _ in 0..5 {
            assert_eq!(w.limit(), 3);
            let seq = w.send();
            w.observe(seq, Signal::Contention);
            assert_eq!(w.limit(), 2);
            waits.push(clean_until_growth(&mut w));
        }
        assert_eq!(waits, vec![4, 16, 32, 32, 32]);
        // Once three holds for as long and the window grows past it, patience is spent:
        // the next step up takes one window of clean chunks.
        assert_eq!(
            clean_until_growth(&mut w),
            32,
            "patience still applies at 3"
        );
        assert_eq!(w.limit(), 4);
        assert_eq!(clean_until_growth(&mut w), 4);
    }

    #[test]
    fn stale_outcomes_do_not_move_a_window_just_cut() {
        let mut w = Window::new(10, Concurrency::Adaptive);
        while w.limit() < 4 {
            clean_until_growth(&mut w);
        }
        let round = send(&mut w, 4);
        w.observe(round[0], Signal::Contention);
        assert_eq!(w.limit(), 2);
        // The other chunks of that round were sent before the cut: no news, good or bad.
        w.observe(round[1], Signal::Contention);
        for &seq in &round[2..] {
            w.observe(seq, Signal::Clean);
        }
        assert_eq!(w.limit(), 2);
        // Fresh ones are: four of them step up (the patience after one contention).
        for seq in send(&mut w, 4) {
            w.observe(seq, Signal::Clean);
        }
        assert_eq!(w.limit(), 3);
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
        let timed = |w: &mut Window, rtts: &[u64]| {
            for &rtt in rtts {
                let seq = w.send();
                w.observe_timed(seq, Signal::Clean, Some(rtt));
            }
        };
        let mut w = Window::new(10, Concurrency::Adaptive);
        // At two: 30 ms, then 60 ms (2 × 30 ≥ 60: about one chunk waited ahead of it,
        // as behind the other's lock on one account): the count starts again.
        timed(&mut w, &[30, 60, 30]);
        assert_eq!(w.limit(), 2);
        timed(&mut w, &[35]);
        assert_eq!(w.limit(), 3, "two in a row that did not queue (2 × 5 < 35)");
        // At three, 45 ms queued (3 × 15 ≥ 45); 40 ms did not (3 × 10 < 40).
        timed(&mut w, &[40, 40, 45, 40, 40]);
        assert_eq!(w.limit(), 3);
        timed(&mut w, &[40]);
        assert_eq!(w.limit(), 4);
        // A faster chunk lowers the yardstick; a rolled-back one's time is not used.
        let seq = w.send();
        w.observe_timed(seq, Signal::Contention, Some(1));
        assert_eq!(w.fastest_ms, Some(30));
        timed(&mut w, &[20]);
        assert_eq!(w.fastest_ms, Some(20));
    }

    proptest! {
        /// Whatever the signals, round trips and order of answers: the window stays within
        /// 1..=ceiling; fresh contention halves it (rounding up, not below two unless the
        /// ceiling is one); a clean chunk never shrinks it; stale and neutral outcomes
        /// leave it; and a run of clean chunks that do not queue brings it to the ceiling.
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
                        let floor = MIN_WINDOW.min(ceiling);
                        prop_assert_eq!(w.limit(), before.div_ceil(2).max(floor));
                    }
                    Signal::Clean => prop_assert!(w.limit() >= before),
                    _ => prop_assert_eq!(w.limit(), before),
                }
            }
            // Recovery: clean answers as fast as the fastest, the window back at the
            // ceiling within ceiling × (ceiling + MAX_PATIENCE) chunks (a step up per
            // window's worth of them, or per MAX_PATIENCE, at worst).
            for _ in 0..ceiling * (ceiling + MAX_PATIENCE) {
                let seq = w.send();
                w.observe_timed(seq, Signal::Clean, w.fastest_ms);
            }
            prop_assert_eq!(w.limit(), ceiling);
        }
    }
}
