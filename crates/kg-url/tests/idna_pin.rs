//! `url` parses host names through `idna`, whose Unicode backend is chosen by the version
//! of `idna_adapter` in Cargo.lock: 1.2 brings ICU4X (~210 KB in every component that
//! parses a URL, which put the dispatcher over 2 MB), 1.0 accepts ASCII host names only.
//! kg-agent pins 1.0 (`cargo update -p idna_adapter --precise 1.0.0`); a plain
//! `cargo update` would silently undo it, so this test says so.

#[test]
fn the_ascii_only_idna_backend_is_pinned() {
    let lock = include_str!("../../../Cargo.lock");
    let version = lock
        .split("[[package]]")
        .find(|p| p.contains("name = \"idna_adapter\""))
        .and_then(|p| p.lines().find_map(|l| l.strip_prefix("version = ")))
        .map(|v| v.trim_matches('"'));
    assert_eq!(
        version,
        Some("1.0.0"),
        "Cargo.lock has idna_adapter {version:?}: run `cargo update -p idna_adapter --precise 1.0.0` \
         (the Unicode backends add ~210 KB to every component; kg_url asks for punycode host names instead)"
    );
}
