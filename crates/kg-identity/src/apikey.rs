//! API keys: minted by `scripts/new-api-key.sh`, shown to their holder once, and stored by
//! the service only as SHA-256 hashes in the secret variable `auth_api_keys`.
//!
//! A key is `kga_` followed by 43 base64url characters (32 random bytes, no padding). Any
//! `kga_` key of 20 to 200 characters of `[A-Za-z0-9_-]` is accepted, so keys minted by
//! other means work too. The hash is the SHA-256 of the whole key string, prefix included,
//! in lowercase hex (`printf %s "$key" | sha256sum`). A key of 32 random bytes needs no
//! salt or slow hash: nobody can guess it from its hash.
//!
//! # The `auth_api_keys` format
//!
//! Entries are separated by `;` or newlines; blank entries are ignored. Each entry is
//!
//! ```text
//! subject|roles|sha256hex
//! subject|roles|sha256hex|expires
//! ```
//!
//! - `subject`: who holds the key, recorded as the actor of everything done with it
//!   (1 to 128 characters; no `|`, `;`, line breaks or control characters).
//! - `roles`: comma-separated role names (`viewer`, `operator`, `approver`, `admin`), at
//!   least one. An unknown name is an error: a typo must not silently drop a permission.
//! - `sha256hex`: the key's SHA-256, 64 hex characters.
//! - `expires` (optional): RFC 3339 (`2027-01-01T00:00:00Z`, an offset such as `+02:00`
//!   is allowed) or a date (`2027-01-01`, meaning midnight UTC). The key is refused from
//!   that instant on.
//!
//! Spaces around fields are ignored. Two entries with the same hash are an error. Errors
//! name the entry by its number (counting non-blank entries from 1), never a key.
//!
//! Example: `alice|operator,approver|3f7c…e1;ci-bot|viewer|9a0b…44|2027-01-01`

use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::error::{AuthError, invalid};
use crate::roles::{AuthMethod, Identity, Role};
use crate::timestamp::parse_timestamp;

/// Every API key starts with this; it is how `authenticate` tells a key from a JWT.
pub const KEY_PREFIX: &str = "kga_";

/// One configured API key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiKeyEntry {
    pub subject: String,
    pub roles: Vec<Role>,
    pub sha256: [u8; 32],
    /// Unix seconds from which the key is refused.
    pub expires_unix: Option<i64>,
}

/// Lowercase hex SHA-256 of the whole key string, prefix included.
pub fn hash_key(key: &str) -> String {
    sha256_hex(key)
}

/// Lowercase hex SHA-256 of a text.
pub(crate) fn sha256_hex(text: &str) -> String {
    to_hex(&Sha256::digest(text.as_bytes()))
}

fn to_hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 0xf)]));
    }
    out
}

/// Parses the `auth_api_keys` value (format in the module documentation).
pub fn parse_entries(text: &str) -> Result<Vec<ApiKeyEntry>, String> {
    let mut entries: Vec<ApiKeyEntry> = Vec::new();
    let pieces = text
        .split([';', '\n', '\r'])
        .map(str::trim)
        .filter(|piece| !piece.is_empty());
    for (i, piece) in pieces.enumerate() {
        let number = i + 1;
        let entry = parse_entry(piece).map_err(|e| format!("auth_api_keys entry {number}: {e}"))?;
        if let Some(first) = entries.iter().position(|e| e.sha256 == entry.sha256) {
            return Err(format!(
                "auth_api_keys entry {number}: the same key hash as entry {}",
                first + 1
            ));
        }
        entries.push(entry);
    }
    Ok(entries)
}

fn parse_entry(entry: &str) -> Result<ApiKeyEntry, String> {
    let fields: Vec<&str> = entry.split('|').map(str::trim).collect();
    let (subject, roles, hash, expires) = match fields.as_slice() {
        [s, r, h] => (*s, *r, *h, None),
        [s, r, h, e] => (*s, *r, *h, Some(*e)),
        _ => {
            return Err(format!(
                "expected `subject|roles|sha256hex` or `subject|roles|sha256hex|expires`, found {} field(s)",
                fields.len()
            ));
        }
    };
    check_subject(subject)?;
    Ok(ApiKeyEntry {
        subject: subject.to_string(),
        roles: parse_roles(roles)?,
        sha256: parse_hash(hash)?,
        expires_unix: match expires {
            Some(e) if !e.is_empty() => Some(parse_expiry(e)?),
            _ => None,
        },
    })
}

fn check_subject(subject: &str) -> Result<(), String> {
    let chars = subject.chars().count();
    if chars == 0 {
        return Err("the subject is empty".into());
    }
    if chars > 128 {
        return Err(format!(
            "the subject is {chars} characters long (at most 128)"
        ));
    }
    if subject
        .chars()
        .any(|c| c == '|' || c == ';' || c.is_control())
    {
        return Err("the subject contains `|`, `;`, a line break or a control character".into());
    }
    Ok(())
}

fn parse_roles(field: &str) -> Result<Vec<Role>, String> {
    let mut roles = Vec::new();
    for name in field.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        match Role::parse(name) {
            Some(role) => roles.push(role),
            None => {
                return Err(format!(
                    "unknown role `{}` (roles: viewer, operator, approver, admin)",
                    printable(name)
                ));
            }
        }
    }
    if roles.is_empty() {
        return Err("no roles (give at least one of viewer, operator, approver, admin)".into());
    }
    roles.sort();
    roles.dedup();
    Ok(roles)
}

/// A configuration fragment safe to quote in an error (bounded, no control characters).
fn printable(text: &str) -> String {
    text.chars().filter(|c| !c.is_control()).take(40).collect()
}

fn parse_hash(field: &str) -> Result<[u8; 32], String> {
    let bytes = field.as_bytes();
    if bytes.len() != 64 {
        return Err(format!(
            "the SHA-256 must be 64 hex characters, found {}",
            field.chars().count()
        ));
    }
    let mut out = [0u8; 32];
    let (pairs, _) = bytes.as_chunks::<2>();
    for (i, [high, low]) in pairs.iter().enumerate() {
        match (hex_value(*high), hex_value(*low)) {
            (Some(hi), Some(lo)) => out[i] = hi << 4 | lo,
            _ => return Err("the SHA-256 has a character that is not hex".into()),
        }
    }
    Ok(out)
}

fn hex_value(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

fn parse_expiry(field: &str) -> Result<i64, String> {
    parse_timestamp(field).ok_or_else(|| {
        format!(
            "the expiry `{}` is neither RFC 3339 (2027-01-01T00:00:00Z) nor a date (2027-01-01)",
            printable(field)
        )
    })
}

/// One `auth_api_keys` entry, as `scripts/new-api-key.sh` prints it.
pub fn format_entry(
    subject: &str,
    roles: &[Role],
    sha256_hex: &str,
    expires: Option<&str>,
) -> String {
    let roles: Vec<&str> = roles.iter().map(|r| r.as_str()).collect();
    let mut entry = format!(
        "{subject}|{}|{}",
        roles.join(","),
        sha256_hex.to_ascii_lowercase()
    );
    if let Some(expires) = expires.filter(|e| !e.is_empty()) {
        entry.push('|');
        entry.push_str(expires);
    }
    entry
}

/// Whether `token` looks like one of our API keys: the prefix, 20 to 200 characters of
/// `[A-Za-z0-9_-]`.
fn well_formed(token: &str) -> bool {
    token.starts_with(KEY_PREFIX)
        && (20..=200).contains(&token.len())
        && token
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// The identity of an API key, checked against the configured entries at `now_unix`.
pub fn authenticate_key(
    key: &str,
    entries: &[ApiKeyEntry],
    now_unix: i64,
) -> Result<Identity, AuthError> {
    if !well_formed(key) {
        return Err(invalid("malformed API key"));
    }
    let digest: [u8; 32] = Sha256::digest(key.as_bytes()).into();
    // Every entry is compared, in constant time, with no early exit: how long this takes
    // says nothing about which entry (if any) matched, or how close a guess came.
    let mut found: Option<&ApiKeyEntry> = None;
    for entry in entries {
        if bool::from(entry.sha256.ct_eq(&digest)) {
            found = Some(entry);
        }
    }
    let entry = found.ok_or_else(|| invalid("unknown API key"))?;
    if entry
        .expires_unix
        .is_some_and(|expires| now_unix >= expires)
    {
        return Err(invalid("the API key expired"));
    }
    Ok(Identity {
        subject: entry.subject.clone(),
        roles: entry.roles.clone(),
        method: AuthMethod::ApiKey,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trip() {
        let hex = hash_key("x");
        let bytes = parse_hash(&hex.to_uppercase()).unwrap();
        assert_eq!(to_hex(&bytes), hex);
    }
}
