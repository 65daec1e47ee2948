use url::{Host, Position, Url};

/// What a WASI outgoing request is made of: scheme, authority (`host[:port]`, an IPv6
/// host in brackets, a default port left out) and path with query (percent-encoded as
/// the URL Standard says; `/` when the URL has no path).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestTarget {
    pub scheme: String,
    pub authority: String,
    pub path_with_query: String,
}

/// The parts of an absolute URL a request is sent to; `None` when it is not one, or has
/// no host or carries user info (nothing here sends credentials that way). Each caller
/// decides which schemes it sends.
pub fn request_target(url: &str) -> Option<RequestTarget> {
    let url = Url::parse(url).ok()?;
    if url.host_str().is_none_or(str::is_empty)
        || !url.username().is_empty()
        || url.password().is_some()
    {
        return None;
    }
    Some(RequestTarget {
        scheme: url.scheme().to_string(),
        authority: url[Position::BeforeHost..Position::AfterPort].to_string(),
        path_with_query: url[Position::BeforePath..Position::AfterQuery].to_string(),
    })
}

/// OpenTelemetry's `server.address` and `server.port`: the host (an IPv6 address without
/// its brackets) and the port, the scheme's default when the URL names none.
pub fn server_address(url: &Url) -> Option<(String, Option<u16>)> {
    let host = match url.host()? {
        Host::Domain(name) => name.to_string(),
        Host::Ipv4(address) => address.to_string(),
        Host::Ipv6(address) => address.to_string(),
    };
    Some((host, url.port_or_known_default()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn targets_split_like_the_url_standard() {
        let t = request_target("http://127.0.0.1:7474/db/neo4j/query/v2").unwrap();
        assert_eq!(
            (
                t.scheme.as_str(),
                t.authority.as_str(),
                t.path_with_query.as_str()
            ),
            ("http", "127.0.0.1:7474", "/db/neo4j/query/v2")
        );
        let t = request_target("https://[2001:db8::1]:7473/v1/models?x=a b").unwrap();
        assert_eq!(t.authority, "[2001:db8::1]:7473");
        assert_eq!(t.path_with_query, "/v1/models?x=a%20b");
        let t = request_target("https://api.openai.com:443").unwrap();
        assert_eq!(
            (t.authority.as_str(), t.path_with_query.as_str()),
            ("api.openai.com", "/")
        );
        let t = request_target("http://h/a#fragment").unwrap();
        assert_eq!(t.path_with_query, "/a");
        for bad in ["/relative", "http://u:p@h/", "no scheme", "http://"] {
            assert_eq!(request_target(bad), None, "{bad}");
        }
    }

    #[test]
    fn servers_are_hosts_and_ports() {
        let of = |u: &str| server_address(&Url::parse(u).unwrap()).unwrap();
        assert_eq!(
            of("http://127.0.0.1:7474/"),
            ("127.0.0.1".into(), Some(7474))
        );
        assert_eq!(of("https://[::1]/v1"), ("::1".into(), Some(443)));
        assert_eq!(
            of("http://Graph.Example/"),
            ("graph.example".into(), Some(80))
        );
    }

    proptest! {
        /// Any origin built from a host name and a port comes back in parts unchanged.
        #[test]
        fn origins_round_trip(host in "[a-z][a-z0-9-]{0,20}(\\.[a-z][a-z0-9-]{0,10}){0,3}", port in 1u16.., tls: bool) {
            let scheme = if tls { "https" } else { "http" };
            let text = format!("{scheme}://{host}:{port}");
            let url = crate::http_origin("x", &text).unwrap();
            let default = if tls { 443 } else { 80 };
            let (h, p) = server_address(&url).unwrap();
            prop_assert_eq!(h, host.clone());
            prop_assert_eq!(p, Some(port));
            let target = request_target(&format!("{text}/db")).unwrap();
            let authority = if port == default { host } else { format!("{host}:{port}") };
            prop_assert_eq!(target.authority, authority);
        }
    }
}
