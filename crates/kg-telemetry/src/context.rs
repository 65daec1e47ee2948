//! W3C Trace Context (https://www.w3.org/TR/trace-context/): the `traceparent` header
//! that carries a trace across services, and `tracestate`, passed on as received.

use crate::ids::{SpanId, TraceId};

/// `version-traceid-parentid-flags`, e.g.
/// `00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceParent {
    pub trace_id: TraceId,
    pub parent_id: SpanId,
    pub sampled: bool,
}

impl TraceParent {
    /// Parses a header as the spec says a receiver must: version `ff` and all-zero ids are
    /// invalid; a future version may append fields after a dash, which are ignored.
    pub fn parse(header: &str) -> Option<TraceParent> {
        let header = header.trim();
        let version = header.get(0..2)?;
        if version == "ff" || !version.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        let rest = header.get(2..)?;
        let exact = version == "00";
        // 00: exactly 55 characters; later versions at least that, then `-` if longer.
        if (exact && header.len() != 55) || header.len() < 55 {
            return None;
        }
        if header.len() > 55 && header.as_bytes()[55] != b'-' {
            return None;
        }
        let fields = rest.get(..53)?;
        let mut parts = fields.split('-');
        let (Some(""), Some(trace), Some(parent), Some(flags), None) = (
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
        ) else {
            return None;
        };
        let trace_id = TraceId::from_hex(trace).filter(TraceId::is_valid)?;
        let parent_id = SpanId::from_hex(parent).filter(SpanId::is_valid)?;
        let flags = u8::from_str_radix(flags, 16).ok().filter(|_| {
            flags.len() == 2
                && flags
                    .bytes()
                    .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
        })?;
        Some(TraceParent {
            trace_id,
            parent_id,
            sampled: flags & 1 == 1,
        })
    }

    /// Version 00, the only one this side writes.
    pub fn format(&self) -> String {
        use std::fmt::Write;
        // 55 bytes: "00-" + 32 + "-" + 16 + "-" + 2.
        let mut text = String::with_capacity(55);
        let _ = write!(text, "00-{}-{}-", self.trace_id, self.parent_id);
        text.push_str(if self.sampled { "01" } else { "00" });
        text
    }
}

/// `tracestate` as received when it is well-formed enough to pass on (at most 32
/// `key=value` members, 512 characters: the spec's limits); `None` drops it, which the
/// spec allows for a header the receiver cannot vouch for.
pub fn parse_tracestate(header: &str) -> Option<String> {
    let header = header.trim();
    if header.is_empty() || header.len() > 512 {
        return None;
    }
    let members: Vec<&str> = header
        .split(',')
        .map(str::trim)
        .filter(|m| !m.is_empty())
        .collect();
    let valid = members.len() <= 32
        && members.iter().all(|m| match m.split_once('=') {
            Some((key, value)) => {
                !key.is_empty()
                    && key.bytes().all(|b| {
                        b.is_ascii_lowercase() || b.is_ascii_digit() || b"_-*/@".contains(&b)
                    })
                    && !value.is_empty()
                    && value.len() <= 256
                    && value
                        .bytes()
                        .all(|b| (0x20..=0x7e).contains(&b) && b != b',' && b != b'=')
            }
            None => false,
        });
    valid.then(|| members.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPEC_EXAMPLE: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    #[test]
    fn parses_and_formats_the_spec_example() {
        let parent = TraceParent::parse(SPEC_EXAMPLE).expect("valid");
        assert_eq!(
            parent.trace_id.to_string(),
            "4bf92f3577b34da6a3ce929d0e0e4736"
        );
        assert_eq!(parent.parent_id.to_string(), "00f067aa0ba902b7");
        assert!(parent.sampled);
        assert_eq!(parent.format(), SPEC_EXAMPLE);
    }

    #[test]
    fn refuses_what_the_spec_calls_invalid() {
        for bad in [
            "",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0g",
            "00_4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7_01",
        ] {
            assert_eq!(TraceParent::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_later_version_may_append_fields_and_unsampled_is_kept() {
        let later = "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00-what-comes";
        let parent = TraceParent::parse(later).expect("a later version is read");
        assert!(!parent.sampled);
    }

    #[test]
    fn tracestate_is_passed_on_only_when_well_formed() {
        assert_eq!(
            parse_tracestate("rojo=00f067aa0ba902b7, congo=t61rcWkgMzE").as_deref(),
            Some("rojo=00f067aa0ba902b7,congo=t61rcWkgMzE")
        );
        assert_eq!(parse_tracestate("novalue"), None);
        assert_eq!(parse_tracestate("UPPER=1"), None);
        assert_eq!(parse_tracestate(&"a=1,".repeat(33)), None);
    }
}
