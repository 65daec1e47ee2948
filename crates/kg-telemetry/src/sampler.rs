//! Which traces are recorded: the caller's decision when it sent one (parent-based),
//! otherwise a ratio of trace ids (OpenTelemetry's `ParentBased(TraceIdRatioBased)`).

use crate::ids::TraceId;

/// `ratio` in 0.0..=1.0 (outside: clamped; NaN: 0). The same trace id always gets the
/// same answer, so every service sampling at one ratio keeps or drops a trace together.
pub fn ratio_sampled(trace_id: &TraceId, ratio: f64) -> bool {
    let ratio = if ratio.is_nan() {
        0.0
    } else {
        ratio.clamp(0.0, 1.0)
    };
    if ratio >= 1.0 {
        return true;
    }
    // As the SDK does: the id's lower 63 bits against ratio * 2^63.
    let bound = (ratio * (1u64 << 63) as f64) as u64;
    (trace_id.low_u64() >> 1) < bound
}

/// A sampling ratio variable's value: `1.0` when empty or unreadable.
pub fn parse_ratio(text: &str) -> f64 {
    text.trim()
        .parse::<f64>()
        .ok()
        .filter(|r| r.is_finite())
        .map_or(1.0, |r| r.clamp(0.0, 1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratio_bounds_and_proportion() {
        let ids: Vec<TraceId> = (0..4000).map(|_| TraceId::random()).collect();
        assert!(ids.iter().all(|id| ratio_sampled(id, 1.0)));
        assert!(ids.iter().all(|id| !ratio_sampled(id, 0.0)));
        let kept = ids.iter().filter(|id| ratio_sampled(id, 0.25)).count();
        assert!((800..1200).contains(&kept), "kept {kept} of 4000 at 0.25");
    }

    #[test]
    fn ratio_text() {
        assert_eq!(parse_ratio(""), 1.0);
        assert_eq!(parse_ratio("0.1"), 0.1);
        assert_eq!(parse_ratio("7"), 1.0);
        assert_eq!(parse_ratio("-1"), 0.0);
        assert_eq!(parse_ratio("NaN"), 1.0);
    }
}
