//! Trace and span ids: random, never all zeros (W3C trace context calls that invalid).

use std::cell::Cell;
use std::fmt;
use std::hash::{BuildHasher, Hasher};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TraceId(pub [u8; 16]);

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SpanId(pub [u8; 8]);

impl TraceId {
    pub fn random() -> TraceId {
        let mut bytes = [0u8; 16];
        bytes[..8].copy_from_slice(&random_nonzero().to_be_bytes());
        bytes[8..].copy_from_slice(&random_nonzero().to_be_bytes());
        TraceId(bytes)
    }

    pub fn is_valid(&self) -> bool {
        self.0 != [0; 16]
    }

    /// The lower 8 bytes as a number: what the ratio sampler compares, as the
    /// OpenTelemetry `TraceIdRatioBased` sampler does, so every participant of a trace
    /// decides alike.
    pub fn low_u64(&self) -> u64 {
        let mut low = [0u8; 8];
        low.copy_from_slice(&self.0[8..]);
        u64::from_be_bytes(low)
    }

    pub fn from_hex(text: &str) -> Option<TraceId> {
        let mut bytes = [0u8; 16];
        decode_hex(text, &mut bytes).then_some(TraceId(bytes))
    }
}

impl SpanId {
    pub fn random() -> SpanId {
        SpanId(random_nonzero().to_be_bytes())
    }

    pub fn is_valid(&self) -> bool {
        self.0 != [0; 8]
    }

    pub fn from_hex(text: &str) -> Option<SpanId> {
        let mut bytes = [0u8; 8];
        decode_hex(text, &mut bytes).then_some(SpanId(bytes))
    }
}

impl fmt::Display for TraceId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_hex(f, &self.0)
    }
}

impl fmt::Display for SpanId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_hex(f, &self.0)
    }
}

/// Lower-case hex of an id, 16 bytes per `write_str` (one for a trace or span id): a
/// `{:02x}` per byte went through the formatter's padding 24 times per `traceparent`,
/// which every outbound call and every call into another component formats.
fn write_hex(f: &mut fmt::Formatter<'_>, bytes: &[u8]) -> fmt::Result {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    for chunk in bytes.chunks(16) {
        let mut text = [0u8; 32];
        for (pair, byte) in text.as_chunks_mut::<2>().0.iter_mut().zip(chunk) {
            pair[0] = DIGITS[usize::from(byte >> 4)];
            pair[1] = DIGITS[usize::from(byte & 0x0f)];
        }
        // Only ASCII digits were written.
        let digits = std::str::from_utf8(&text[..chunk.len() * 2]).map_err(|_| fmt::Error)?;
        f.write_str(digits)?;
    }
    Ok(())
}

/// Lower-case hex only: W3C trace context refuses upper case.
fn decode_hex(text: &str, out: &mut [u8]) -> bool {
    let digits = text.as_bytes();
    if digits.len() != out.len() * 2 {
        return false;
    }
    for (i, pair) in digits.chunks(2).enumerate() {
        match (nibble(pair[0]), nibble(pair[1])) {
            (Some(high), Some(low)) => out[i] = high << 4 | low,
            _ => return false,
        }
    }
    true
}

fn nibble(digit: u8) -> Option<u8> {
    match digit {
        b'0'..=b'9' => Some(digit - b'0'),
        b'a'..=b'f' => Some(digit - b'a' + 10),
        _ => None,
    }
}

thread_local! {
    static COUNTER: Cell<u64> = const { Cell::new(0) };
    static SEED: Cell<u64> = const { Cell::new(0) };
}

/// Mixes a random value from the platform into every id this thread makes from now on.
/// Needed where std's hash keys are not random per instance: a WASI host may seed them
/// from its `insecure-seed`, which can be the same for every component instance, and
/// two instances of one request would then make the same ids.
pub fn seed(random: u64) {
    SEED.with(|s| s.set(random));
}

/// 64 random bits: a per-thread counter and the [`seed`], hashed with std's
/// `RandomState` keys (from the platform's random source), so no other dependency is
/// needed; ids need uniqueness, not secrecy.
fn random_nonzero() -> u64 {
    let n = COUNTER.with(|c| {
        let n = c.get().wrapping_add(1);
        c.set(n);
        n
    });
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(SEED.with(Cell::get));
    hasher.write_u64(n);
    match hasher.finish() {
        0 => 1,
        value => value,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_distinct_and_round_trip_through_hex() {
        let a = TraceId::random();
        let b = TraceId::random();
        assert_ne!(a, b);
        assert!(a.is_valid());
        assert_eq!(TraceId::from_hex(&a.to_string()), Some(a));
        let s = SpanId::random();
        assert_eq!(s.to_string().len(), 16);
        assert_eq!(SpanId::from_hex(&s.to_string()), Some(s));
    }

    #[test]
    fn the_seed_separates_threads_with_equal_hash_keys() {
        // Same counter, same keys (one thread), different seeds: different ids.
        seed(1);
        COUNTER.with(|c| c.set(100));
        let a = random_nonzero();
        seed(2);
        COUNTER.with(|c| c.set(100));
        let b = random_nonzero();
        assert_ne!(a, b);
    }

    #[test]
    fn hex_is_lower_case_and_exact_length() {
        assert!(SpanId::from_hex("00F067AA0BA902B7").is_none());
        assert!(SpanId::from_hex("00f067aa0ba902b").is_none());
        assert_eq!(
            SpanId::from_hex("00f067aa0ba902b7"),
            Some(SpanId([0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7]))
        );
    }

    #[test]
    fn ids_print_as_every_byte_in_two_lower_case_digits() {
        let span = SpanId([0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7]);
        assert_eq!(span.to_string(), "00f067aa0ba902b7");
        for _ in 0..100 {
            let trace = TraceId::random();
            let expected: String = trace.0.iter().map(|b| format!("{b:02x}")).collect();
            assert_eq!(trace.to_string(), expected);
        }
        let all = TraceId(std::array::from_fn(|i| (i as u8) * 17));
        assert_eq!(all.to_string(), "00112233445566778899aabbccddeeff");
    }
}
