//! Fixed API keys of the end-to-end tests, one subject per role combination, and the
//! `auth_api_keys` value that admits them. The entries are computed here with the `sha2`
//! crate, independently of the server's code, so the tests also check the documented
//! format: `subject|role1,role2|sha256hex[|expires]`, entries separated by `;`, the hash
//! being the lowercase hex SHA-256 of the whole key (its `kga_` prefix included).

use sha2::{Digest, Sha256};

/// Subject `admin`, roles `admin`: the harness's default credential.
pub const ADMIN: &str = "kga_e2eAdmin_7Qm2vX9pL4sT8wZ1rK6nB3yD";
/// Subject `operator`, roles `operator`.
pub const OPERATOR: &str = "kga_e2eOperator_J5hN2cV8mQ1xF7gR4tW9";
/// Subject `viewer`, roles `viewer`.
pub const VIEWER: &str = "kga_e2eViewer_P3kS6dL9aZ2uE8jM5qY1wC";
/// Subject `approver`, roles `approver`.
pub const APPROVER: &str = "kga_e2eApprover_H8bT1nR4vG7kX2mP5sQ9";
/// Subject `approver2`, roles `approver`.
pub const APPROVER2: &str = "kga_e2eApprover2_W6yC3fJ9dN1hL4rV7zB";
/// Subject `opapprover`, roles `operator` and `approver`.
pub const OPAPPROVER: &str = "kga_e2eOpApprover_U2gK5wM8pS1tD4xZ7cF";

/// A test key: who it authenticates and with which roles.
#[derive(Debug, Clone, Copy)]
pub struct TestKey {
    pub subject: &'static str,
    pub roles: &'static [&'static str],
    pub key: &'static str,
}

pub const KEYS: [TestKey; 6] = [
    TestKey {
        subject: "admin",
        roles: &["admin"],
        key: ADMIN,
    },
    TestKey {
        subject: "operator",
        roles: &["operator"],
        key: OPERATOR,
    },
    TestKey {
        subject: "viewer",
        roles: &["viewer"],
        key: VIEWER,
    },
    TestKey {
        subject: "approver",
        roles: &["approver"],
        key: APPROVER,
    },
    TestKey {
        subject: "approver2",
        roles: &["approver"],
        key: APPROVER2,
    },
    TestKey {
        subject: "opapprover",
        roles: &["operator", "approver"],
        key: OPAPPROVER,
    },
];

/// Lowercase hex SHA-256 of a key (the whole string).
pub fn sha256_hex(key: &str) -> String {
    Sha256::digest(key.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// One `auth_api_keys` entry: `subject|roles|sha256hex[|expires]`.
pub fn entry(subject: &str, roles: &[&str], key: &str, expires: Option<&str>) -> String {
    let mut line = format!("{subject}|{}|{}", roles.join(","), sha256_hex(key));
    if let Some(expires) = expires {
        line.push('|');
        line.push_str(expires);
    }
    line
}

/// The `auth_api_keys` value of the given entries.
pub fn api_keys(entries: &[String]) -> String {
    entries.join(";")
}

/// The entries of every fixed test key.
pub fn test_entries() -> Vec<String> {
    KEYS.iter()
        .map(|k| entry(k.subject, k.roles, k.key, None))
        .collect()
}

/// The `auth_api_keys` value admitting every fixed test key (what `AppHost` passes unless
/// a test sets the variable itself).
pub fn all_test_keys() -> String {
    api_keys(&test_entries())
}

/// The key of a subject among the fixed test keys.
pub fn key_of(subject: &str) -> &'static str {
    KEYS.iter()
        .find(|k| k.subject == subject)
        .unwrap_or_else(|| panic!("no test key for subject `{subject}`"))
        .key
}

/// A client that sends `Authorization: Bearer <key>` on every request (for benches and
/// tests that build their own requests; a request's own `Authorization` still wins).
pub fn client(key: &str) -> reqwest::Client {
    let mut headers = reqwest::header::HeaderMap::new();
    let mut value = reqwest::header::HeaderValue::from_str(&format!("Bearer {key}"))
        .expect("a test key is a valid header value");
    value.set_sensitive(true);
    headers.insert(reqwest::header::AUTHORIZATION, value);
    reqwest::Client::builder()
        .default_headers(headers)
        .build()
        .expect("a reqwest client")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_follow_the_documented_format() {
        // SHA-256("abc"), the FIPS 180-2 test vector.
        assert_eq!(
            sha256_hex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        let line = entry("ops", &["operator", "approver"], "abc", Some("2030-01-01"));
        assert_eq!(
            line,
            "ops|operator,approver|ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad|2030-01-01"
        );
        for k in KEYS {
            let rest = k.key.strip_prefix("kga_").unwrap();
            assert!((20..=196).contains(&rest.len()), "{}", k.key);
            assert!(
                rest.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            );
        }
        assert_eq!(all_test_keys().split(';').count(), KEYS.len());
        assert_eq!(key_of("viewer"), VIEWER);
    }
}
