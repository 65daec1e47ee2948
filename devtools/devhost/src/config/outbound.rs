//! `allowed_outbound_hosts` as Spin reads it: `scheme://host[:port]` entries where scheme,
//! host and port may be wildcards (`*`, `*.example.com`, `*`, `8000..8010`).

use anyhow::{Result, bail};

#[derive(Debug, Clone, Default)]
pub struct AllowedHosts {
    entries: Vec<Entry>,
}

#[derive(Debug, Clone, PartialEq)]
struct Entry {
    scheme: Option<String>,
    host: HostPattern,
    port: PortPattern,
}

#[derive(Debug, Clone, PartialEq)]
enum HostPattern {
    Any,
    /// `*.example.com`: any subdomain (not the bare domain).
    Subdomain(String),
    Exact(String),
}

#[derive(Debug, Clone, PartialEq)]
enum PortPattern {
    Any,
    /// Half-open, like Spin's `a..b`.
    Range(u16, u16),
    Exact(u16),
}

fn default_port(scheme: &str) -> Option<u16> {
    match scheme {
        "http" | "ws" => Some(80),
        "https" | "wss" => Some(443),
        "postgres" => Some(5432),
        "mysql" => Some(3306),
        "redis" => Some(6379),
        "mqtt" => Some(1883),
        _ => None,
    }
}

impl AllowedHosts {
    /// Parses expanded entries (templates already resolved).
    pub fn parse(entries: &[String]) -> Result<AllowedHosts> {
        let entries = entries
            .iter()
            .map(|e| parse_entry(e))
            .collect::<Result<Vec<_>>>()?;
        Ok(AllowedHosts { entries })
    }

    /// Whether a request to `scheme://host[:port]` may go out. `port` None means the
    /// scheme's default port.
    pub fn allows(&self, scheme: &str, host: &str, port: Option<u16>) -> bool {
        let scheme = scheme.to_ascii_lowercase();
        let host = host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_ascii_lowercase();
        let Some(port) = port.or_else(|| default_port(&scheme)) else {
            return false;
        };
        self.entries.iter().any(|e| {
            e.scheme.as_ref().is_none_or(|s| *s == scheme)
                && match &e.host {
                    HostPattern::Any => true,
                    HostPattern::Subdomain(domain) => host
                        .strip_suffix(domain.as_str())
                        .is_some_and(|prefix| prefix.len() > 1 && prefix.ends_with('.')),
                    HostPattern::Exact(h) => *h == host,
                }
                && match e.port {
                    PortPattern::Any => true,
                    PortPattern::Range(a, b) => (a..b).contains(&port),
                    PortPattern::Exact(p) => p == port,
                }
        })
    }
}

fn parse_entry(entry: &str) -> Result<Entry> {
    let bad = |why: &str| -> Result<Entry> {
        bail!("allowed_outbound_hosts entry `{entry}`: {why} (expected scheme://host[:port])")
    };
    let Some((scheme, rest)) = entry.split_once("://") else {
        return bad("no scheme");
    };
    if rest.contains(['/', '?', '#', '@']) {
        return bad("entries must be scheme://host[:port] with no path, query or user");
    }
    let scheme = scheme.to_ascii_lowercase();
    if scheme.is_empty()
        || !(scheme == "*"
            || scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '+' || c == '-' || c == '.'))
    {
        return bad("invalid scheme");
    }
    // Split host and port, minding bracketed IPv6 literals.
    let (host, port) = if let Some(inner) = rest.strip_prefix('[') {
        let Some((ip, after)) = inner.split_once(']') else {
            return bad("unterminated IPv6 literal");
        };
        match after {
            "" => (ip.to_string(), None),
            _ => match after.strip_prefix(':') {
                Some(p) => (ip.to_string(), Some(p)),
                None => return bad("junk after IPv6 literal"),
            },
        }
    } else {
        match rest.rsplit_once(':') {
            Some((h, p)) => (h.to_string(), Some(p)),
            None => (rest.to_string(), None),
        }
    };
    let host = host.to_ascii_lowercase();
    let host = if host == "*" {
        HostPattern::Any
    } else if let Some(domain) = host.strip_prefix("*.") {
        if domain.is_empty() || domain.contains('*') {
            return bad("invalid wildcard host");
        }
        HostPattern::Subdomain(domain.to_string())
    } else if host.is_empty() || host.contains('*') || host.contains(char::is_whitespace) {
        return bad("invalid host");
    } else {
        HostPattern::Exact(host)
    };
    let port = match port {
        None => match default_port(&scheme) {
            Some(p) => PortPattern::Exact(p),
            None => return bad("a port is required for this scheme"),
        },
        Some("*") => PortPattern::Any,
        Some(p) if p.contains("..") => {
            let (a, b) = p.split_once("..").unwrap_or_default();
            match (a.parse::<u16>(), b.parse::<u16>()) {
                (Ok(a), Ok(b)) if a < b => PortPattern::Range(a, b),
                _ => return bad("invalid port range"),
            }
        }
        Some(p) => match p.parse::<u16>() {
            Ok(p) => PortPattern::Exact(p),
            Err(_) => return bad("invalid port"),
        },
    };
    Ok(Entry {
        scheme: (scheme != "*").then_some(scheme),
        host,
        port,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn hosts(entries: &[&str]) -> AllowedHosts {
        AllowedHosts::parse(&entries.iter().map(|e| e.to_string()).collect::<Vec<_>>()).unwrap()
    }

    #[test]
    fn exact_entries_use_the_scheme_default_port() {
        let h = hosts(&["http://127.0.0.1:7474", "https://api.openai.com"]);
        assert!(h.allows("http", "127.0.0.1", Some(7474)));
        assert!(!h.allows("http", "127.0.0.1", Some(7475)));
        assert!(!h.allows("https", "127.0.0.1", Some(7474)));
        assert!(h.allows("https", "API.openai.com", None));
        assert!(h.allows("https", "api.openai.com", Some(443)));
        assert!(!h.allows("http", "api.openai.com", None));
    }

    #[test]
    fn wildcards() {
        let h = hosts(&[
            "*://localhost:*",
            "https://*.example.com",
            "http://[::1]:8000..8002",
        ]);
        assert!(h.allows("http", "localhost", Some(1)));
        assert!(h.allows("https", "localhost", Some(65535)));
        assert!(h.allows("https", "a.example.com", None));
        assert!(h.allows("https", "a.b.example.com", None));
        assert!(!h.allows("https", "example.com", None));
        assert!(!h.allows("https", "badexample.com", None));
        assert!(h.allows("http", "[::1]", Some(8001)));
        assert!(!h.allows("http", "::1", Some(8002)));
    }

    #[test]
    fn empty_list_allows_nothing() {
        assert!(!hosts(&[]).allows("http", "127.0.0.1", Some(80)));
    }

    #[test]
    fn malformed_entries_are_named() {
        for bad in [
            "127.0.0.1:80",
            "http://h:80/path",
            "http://h:x",
            "*://h",
            "http://",
            "http://u@h",
            "http://h:9..2",
            "foo://h",
        ] {
            let e = AllowedHosts::parse(&[bad.to_string()])
                .unwrap_err()
                .to_string();
            assert!(e.contains(bad), "{e}");
        }
    }

    proptest! {
        #[test]
        fn an_exact_entry_allows_exactly_its_port(host in "[a-z]{1,10}(\\.[a-z]{1,5}){0,2}", port in 1u16..65534) {
            let h = hosts(&[&format!("http://{host}:{port}")]);
            prop_assert!(h.allows("http", &host, Some(port)));
            prop_assert!(!h.allows("http", &host, Some(port + 1)));
            prop_assert!(!h.allows("https", &host, Some(port)));
        }

        #[test]
        fn parsing_never_panics(entry in ".{0,30}") {
            let _ = AllowedHosts::parse(&[entry]);
        }
    }
}
