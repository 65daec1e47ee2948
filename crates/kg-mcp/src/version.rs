//! Protocol revisions this server speaks, and the negotiation of `initialize`.

/// The handshake-era revisions served (newest first). Each request after `initialize`
/// names its revision in `MCP-Protocol-Version`; the wire of these three is the same for
/// what this server offers (tools over Streamable HTTP, JSON answers).
pub const SUPPORTED: &[&str] = &["2025-11-25", "2025-06-18", "2025-03-26"];

/// What the server answers when a client asks for a revision it does not speak: its newest
/// (the client then decides whether it can use it, as the specification says).
pub const LATEST: &str = SUPPORTED[0];

/// The revision `initialize` settles on: the client's when served, else [`LATEST`].
pub fn negotiate(requested: Option<&str>) -> &'static str {
    requested
        .and_then(|r| SUPPORTED.iter().find(|s| **s == r).copied())
        .unwrap_or(LATEST)
}

/// Whether a request's `MCP-Protocol-Version` header may be served. No header means the
/// client predates the header (2025-03-26, which the specification says to assume).
pub fn header_accepted(header: Option<&str>) -> bool {
    header.is_none_or(|h| SUPPORTED.contains(&h.trim()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_served_revision_is_kept_and_any_other_gets_the_newest() {
        assert_eq!(negotiate(Some("2025-06-18")), "2025-06-18");
        assert_eq!(negotiate(Some("2025-11-25")), "2025-11-25");
        assert_eq!(negotiate(Some("2026-07-28")), LATEST);
        assert_eq!(negotiate(Some("1999-01-01")), LATEST);
        assert_eq!(negotiate(None), LATEST);
    }

    #[test]
    fn the_version_header_is_checked_against_the_served_list() {
        assert!(header_accepted(None));
        assert!(header_accepted(Some("2025-06-18")));
        assert!(!header_accepted(Some("2026-07-28")));
        assert!(!header_accepted(Some("")));
    }
}
