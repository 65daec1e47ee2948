//! A short-lived memory of tokens already verified, so a client reusing its access token
//! (the normal case: one token for many requests) does not pay a signature check each
//! time. Inside a Wasm component an RS256 or ES256 verification costs 1.3–1.6 ms (32-bit
//! limbs, no native crypto); reading this entry costs one key-value read.
//!
//! One entry per issuer and subject (`auth/verified/<hash of issuer>/<hash of sub>`), so
//! the store holds at most one entry per user, however many tokens they get: a new token
//! overwrites the last. The unverified `sub` only picks the entry; what makes an entry
//! count is the SHA-256 of the whole token, which only a token that passed verification
//! ever got written under. An entry lasts at most [`REMEMBER_S`] and never past the
//! token's `exp`, and is tied to the settings it was verified under, so a key removed from
//! the provider's JWKS or a changed audience stops being honoured within that time.

use crate::apikey::sha256_hex;
use crate::config::OidcConfig;
use crate::oidc::Store;
use crate::roles::Identity;
use serde::{Deserialize, Serialize};

/// Longest a verified token is trusted without checking its signature again.
pub const REMEMBER_S: i64 = 60;

#[derive(Serialize, Deserialize)]
struct Entry {
    token_sha256: String,
    settings: String,
    until: i64,
    identity: Identity,
}

/// What a verification depended on besides the token and the keys.
fn settings(oidc: &OidcConfig) -> String {
    sha256_hex(&format!(
        "{}\n{}\n{}\n{}\n{}",
        oidc.issuer,
        oidc.audiences.join(","),
        oidc.roles_claim,
        oidc.subject_claim,
        oidc.clock_skew_s
    ))
}

/// The entry's key for the token's (unverified) subject; `None` when it names none.
fn key(token: &str, oidc: &OidcConfig) -> Option<String> {
    let claims: serde_json::Value = jsonwebtoken::dangerous::insecure_decode_claims(token).ok()?;
    let subject = crate::claims::subject_from_claims(&claims, &oidc.subject_claim)?;
    Some(format!(
        "auth/verified/{}/{}",
        &sha256_hex(&oidc.issuer)[..16],
        &sha256_hex(&subject)[..32]
    ))
}

/// The identity of `token` if this exact token was verified recently under these settings.
pub(crate) fn recall(
    token: &str,
    oidc: &OidcConfig,
    store: &dyn Store,
    now: i64,
) -> Option<Identity> {
    let bytes = store.get(&key(token, oidc)?).ok()??;
    let entry: Entry = serde_json::from_slice(&bytes).ok()?;
    let fresh = entry.until > now
        && entry.settings == settings(oidc)
        && entry.token_sha256 == sha256_hex(token);
    fresh.then_some(entry.identity)
}

/// Remembers a token that has just passed verification, until `exp` at the latest.
pub(crate) fn remember(
    token: &str,
    exp: Option<i64>,
    identity: &Identity,
    oidc: &OidcConfig,
    store: &dyn Store,
    now: i64,
) {
    let Some(key) = key(token, oidc) else { return };
    let until = (now + REMEMBER_S).min(exp.unwrap_or(now));
    if until <= now {
        return;
    }
    let entry = Entry {
        token_sha256: sha256_hex(token),
        settings: settings(oidc),
        until,
        identity: identity.clone(),
    };
    if let Ok(bytes) = serde_json::to_vec(&entry) {
        // Best effort: without the entry the next request verifies again.
        let _ = store.set(&key, &bytes);
    }
}
