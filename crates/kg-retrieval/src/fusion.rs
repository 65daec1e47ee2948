//! Reciprocal Rank Fusion (Cormack et al. 2009) with per-leg weights:
//! `score(d) = Σ_leg weight_leg / (k + rank_leg(d))`, ranks 1-based, a leg that did not
//! return `d` contributing nothing.

use std::collections::HashMap;
use std::hash::Hash;

pub const RRF_K: f64 = 60.0;
pub const DEFAULT_VECTOR_WEIGHT: f64 = 0.7;
pub const DEFAULT_BM25_WEIGHT: f64 = 0.3;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Weights {
    pub vector: f64,
    pub bm25: f64,
}

impl Default for Weights {
    fn default() -> Self {
        Weights {
            vector: DEFAULT_VECTOR_WEIGHT,
            bm25: DEFAULT_BM25_WEIGHT,
        }
    }
}

impl Weights {
    /// Why these weights cannot rank anything, naming the field.
    pub fn problem(&self) -> Option<String> {
        for (name, w) in [("vector_weight", self.vector), ("bm25_weight", self.bm25)] {
            if !w.is_finite() || w < 0.0 {
                return Some(format!("{name} must be a finite number >= 0, got {w}"));
            }
        }
        if self.vector + self.bm25 <= 0.0 {
            return Some("vector_weight and bm25_weight cannot both be 0".into());
        }
        None
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Fused<K> {
    pub key: K,
    pub vector_rank: Option<usize>,
    pub bm25_rank: Option<usize>,
    pub score: f64,
}

/// The contribution of one leg's rank.
pub fn rrf_term(weight: f64, rank: usize) -> f64 {
    weight / (RRF_K + rank as f64)
}

/// Fuses two ranked lists (best first; a key repeated within a list counts at its first
/// rank). Ties are broken by the better single rank, then by key, so the order is total
/// and repeatable.
pub fn fuse<K: Clone + Eq + Hash + Ord>(
    vector: &[K],
    bm25: &[K],
    weights: Weights,
) -> Vec<Fused<K>> {
    let mut by_key: HashMap<K, Fused<K>> = HashMap::new();
    for (i, key) in vector.iter().enumerate() {
        by_key.entry(key.clone()).or_insert_with(|| Fused {
            key: key.clone(),
            vector_rank: Some(i + 1),
            bm25_rank: None,
            score: rrf_term(weights.vector, i + 1),
        });
    }
    for (i, key) in bm25.iter().enumerate() {
        let entry = by_key.entry(key.clone()).or_insert_with(|| Fused {
            key: key.clone(),
            vector_rank: None,
            bm25_rank: None,
            score: 0.0,
        });
        if entry.bm25_rank.is_none() {
            entry.bm25_rank = Some(i + 1);
            entry.score += rrf_term(weights.bm25, i + 1);
        }
    }
    let mut fused: Vec<Fused<K>> = by_key.into_values().collect();
    fused.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| best_rank(a).cmp(&best_rank(b)))
            .then_with(|| a.key.cmp(&b.key))
    });
    fused
}

fn best_rank<K>(f: &Fused<K>) -> usize {
    f.vector_rank
        .into_iter()
        .chain(f.bm25_rank)
        .min()
        .unwrap_or(usize::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn w(vector: f64, bm25: f64) -> Weights {
        Weights { vector, bm25 }
    }

    fn position(fused: &[Fused<u32>], key: u32) -> usize {
        fused
            .iter()
            .position(|f| f.key == key)
            .unwrap_or(usize::MAX)
    }

    /// Two ranked lists over keys 0..40, each key at most once per list.
    fn legs() -> impl Strategy<Value = (Vec<u32>, Vec<u32>)> {
        let list =
            proptest::sample::subsequence((0u32..40).collect::<Vec<_>>(), 0..40).prop_shuffle();
        (list.clone(), list)
    }

    #[test]
    fn worked_example() {
        let fused = fuse(&["a", "b"], &["b", "c"], Weights::default());
        let b = &fused[0];
        assert_eq!((b.key, b.vector_rank, b.bm25_rank), ("b", Some(2), Some(1)));
        assert!((b.score - (0.7 / 62.0 + 0.3 / 61.0)).abs() < 1e-12);
        assert_eq!(fused[1].key, "a");
        assert_eq!(fused[2].key, "c");
    }

    #[test]
    fn weights_are_checked() {
        assert!(Weights::default().problem().is_none());
        assert!(w(-1.0, 1.0).problem().unwrap().contains("vector_weight"));
        assert!(w(1.0, f64::NAN).problem().unwrap().contains("bm25_weight"));
        assert!(w(0.0, 0.0).problem().is_some());
    }

    proptest! {
        /// Property 15: every fused score follows the RRF formula, each key appears once,
        /// and the result holds exactly the union of both legs, best first.
        #[test]
        fn scores_follow_the_formula((vector, bm25) in legs(), wv in 0.0f64..2.0, wb in 0.0f64..2.0) {
            let fused = fuse(&vector, &bm25, w(wv, wb));
            let mut union: Vec<u32> = vector.iter().chain(&bm25).copied().collect();
            union.sort_unstable();
            union.dedup();
            let mut keys: Vec<u32> = fused.iter().map(|f| f.key).collect();
            keys.sort_unstable();
            prop_assert_eq!(keys, union);
            for f in &fused {
                let rv = vector.iter().position(|k| *k == f.key).map(|i| i + 1);
                let rb = bm25.iter().position(|k| *k == f.key).map(|i| i + 1);
                prop_assert_eq!(f.vector_rank, rv);
                prop_assert_eq!(f.bm25_rank, rb);
                let expected = rv.map_or(0.0, |r| wv / (60.0 + r as f64))
                    + rb.map_or(0.0, |r| wb / (60.0 + r as f64));
                prop_assert!((f.score - expected).abs() < 1e-12);
            }
            prop_assert!(fused.windows(2).all(|p| p[0].score >= p[1].score));
        }

        /// Property 15: a hit both legs found outranks a hit only one leg found, when it
        /// ranks at least as well in that leg.
        #[test]
        fn found_by_both_outranks_found_by_one((vector, bm25) in legs(), wv in 0.01f64..2.0, wb in 0.01f64..2.0) {
            let fused = fuse(&vector, &bm25, w(wv, wb));
            for a in fused.iter().filter(|f| f.vector_rank.is_some() && f.bm25_rank.is_some()) {
                for b in fused.iter().filter(|f| f.vector_rank.is_some() != f.bm25_rank.is_some()) {
                    let same_leg_rank = b.vector_rank.map(|r| (a.vector_rank, r))
                        .or(b.bm25_rank.map(|r| (a.bm25_rank, r)));
                    if let Some((Some(ra), rb)) = same_leg_rank && ra <= rb {
                        prop_assert!(position(&fused, a.key) < position(&fused, b.key));
                    }
                }
            }
        }

        /// Property 16: when the legs disagree about two hits, weighting one leg fully and
        /// then the other flips their order.
        #[test]
        fn weights_change_the_ranking_when_legs_disagree((vector, bm25) in legs()) {
            let by_vector = fuse(&vector, &bm25, w(1.0, 0.0));
            let by_bm25 = fuse(&vector, &bm25, w(0.0, 1.0));
            for (i, x) in vector.iter().enumerate() {
                for y in &vector[i + 1..] {
                    let (Some(bx), Some(by)) = (
                        bm25.iter().position(|k| k == x),
                        bm25.iter().position(|k| k == y),
                    ) else { continue };
                    if by < bx {
                        prop_assert!(position(&by_vector, *x) < position(&by_vector, *y));
                        prop_assert!(position(&by_bm25, *y) < position(&by_bm25, *x));
                    }
                }
            }
        }
    }

    #[test]
    fn default_and_reversed_weights_rank_disagreeing_legs_differently() {
        let default = fuse(&["x", "y"], &["y", "x"], Weights::default());
        let reversed = fuse(&["x", "y"], &["y", "x"], w(0.3, 0.7));
        assert_eq!((default[0].key, reversed[0].key), ("x", "y"));
    }
}
