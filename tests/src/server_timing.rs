//! devhost's `Server-Timing` header (`--server-timing`, devtools/devhost/src/timing.rs)
//! split into its entries, for the benchmarks that break a request down.

/// A response's `Server-Timing` header, its lines joined as one (`None` without one).
pub fn header(headers: &reqwest::header::HeaderMap) -> Option<String> {
    let lines: Vec<&str> = headers
        .get_all("server-timing")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .collect();
    (!lines.is_empty()).then(|| lines.join(", "))
}

/// One metric of the header: `name;dur=<ms>;desc="<desc>"`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Entry<'a> {
    pub name: &'a str,
    /// Milliseconds (0 when absent or unreadable).
    pub dur_ms: f64,
    /// Unquoted; empty when absent.
    pub desc: &'a str,
}

impl Entry<'_> {
    /// How many calls a counted metric stands for: `desc` is the count itself, or ends
    /// with ` n=<count>` (an `outbound` entry: `<origin> n=<count>`); else 0.
    pub fn count(&self) -> f64 {
        self.desc
            .rsplit_once(" n=")
            .map_or(self.desc, |(_, n)| n)
            .parse()
            .unwrap_or(0.0)
    }

    /// Whether an `outbound` entry is for `origin` (`scheme://host:port`, no slash).
    pub fn is_outbound_to(&self, origin: &str) -> bool {
        self.name == "outbound"
            && self
                .desc
                .strip_prefix(origin)
                .is_some_and(|rest| rest.starts_with(' '))
    }
}

/// The header's entries in order.
pub fn entries(header: &str) -> impl Iterator<Item = Entry<'_>> {
    header.split(", ").map(|entry| {
        let mut parts = entry.split(';');
        let name = parts.next().unwrap_or_default().trim();
        let (mut dur_ms, mut desc) = (0.0, "");
        for part in parts {
            if let Some(d) = part.strip_prefix("dur=") {
                dur_ms = d.parse().unwrap_or(0.0);
            } else if let Some(d) = part.strip_prefix("desc=") {
                desc = d.trim_matches('"');
            }
        }
        Entry { name, dur_ms, desc }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_counts_and_origins() {
        let header = "handler;dur=1.500, kv-read;dur=0.150;desc=\"2\", \
                      outbound;dur=4.000;desc=\"http://127.0.0.1:7474 n=3\", queued;dur=0.010";
        let all: Vec<Entry> = entries(header).collect();
        assert_eq!(all.len(), 4);
        assert_eq!(
            (all[0].name, all[0].dur_ms, all[0].count()),
            ("handler", 1.5, 0.0)
        );
        assert_eq!((all[1].name, all[1].count()), ("kv-read", 2.0));
        assert_eq!(all[2].count(), 3.0);
        assert!(all[2].is_outbound_to("http://127.0.0.1:7474"));
        assert!(!all[2].is_outbound_to("http://127.0.0.1:747"));
        assert_eq!(all[3].desc, "");
    }

    #[test]
    fn header_lines_are_joined_and_an_absent_header_is_none() {
        let mut headers = reqwest::header::HeaderMap::new();
        assert_eq!(header(&headers), None);
        headers.append("server-timing", "handler;dur=1".parse().unwrap());
        headers.append(
            "server-timing",
            "kv-write;dur=0.2;desc=\"1\"".parse().unwrap(),
        );
        assert_eq!(
            header(&headers).as_deref(),
            Some("handler;dur=1, kv-write;dur=0.2;desc=\"1\"")
        );
    }
}
