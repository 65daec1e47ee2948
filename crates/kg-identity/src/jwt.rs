//! OpenID Connect access tokens (JWTs), verified with `jsonwebtoken`: the signature with the
//! provider's key (picked from its JWKS by `kid`), then `iss`, `aud`, `exp` and `nbf`.
//!
//! Accepted algorithms: RS256, ES256 and EdDSA (Ed25519), and HS256/384/512 only when
//! `oidc_hs_secret` is set (then that secret verifies them and no JWKS is needed). `alg:
//! none` is not even an algorithm `jsonwebtoken` parses, so such a token fails at its
//! header. Keys embedded in the token (`jwk`, `jku`, `x5u`) are ignored: only the provider's
//! published keys count.

use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, Jwk, KeyAlgorithm};
use jsonwebtoken::{Algorithm, DecodingKey, Header, Validation, decode, decode_header};
use serde_json::Value;

use crate::claims::{roles_from_claims, subject_from_claims};
use crate::config::OidcConfig;
use crate::error::{AuthError, invalid};
use crate::oidc::{Fetch, Store, issuer_variants, signing_keys};
use crate::roles::{AuthMethod, Identity};
use crate::verified;

/// Verifies `token` and returns the identity its claims name.
pub(crate) fn authenticate_jwt(
    token: &str,
    oidc: &OidcConfig,
    fetch: &dyn Fetch,
    store: &dyn Store,
    now_unix: i64,
) -> Result<Identity, AuthError> {
    if let Some(identity) = verified::recall(token, oidc, store, now_unix) {
        return Ok(identity);
    }
    // Only the header is read before verification, to choose the key.
    let header = decode_header(token)
        .map_err(|_| invalid("malformed token (not a JWT, or an algorithm we do not accept)"))?;
    if header.crit.is_some() {
        // RFC 7515 §4.1.11: a token whose critical extensions we do not understand is refused.
        return Err(invalid("the token has critical header extensions (crit)"));
    }
    let alg = header.alg;
    let key = match alg {
        Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512 => match &oidc.hs_secret {
            Some(secret) => DecodingKey::from_secret(secret.as_bytes()),
            None => {
                return Err(invalid(format!(
                    "{alg:?} tokens are refused (no oidc_hs_secret is configured)"
                )));
            }
        },
        Algorithm::RS256 | Algorithm::ES256 | Algorithm::EdDSA => {
            let keys = signing_keys(oidc, fetch, store, now_unix, &|keys| {
                !has_candidate(keys, &header)
            })?;
            let jwk = select_key(&keys, &header)?;
            DecodingKey::from_jwk(jwk)
                .map_err(|_| invalid("the identity provider's key for this token is unusable"))?
        }
        other => {
            return Err(invalid(format!(
                "algorithm {other:?} is not accepted (RS256, ES256, EdDSA)"
            )));
        }
    };

    let mut validation = Validation::new(alg);
    validation.leeway = oidc.clock_skew_s;
    validation.validate_exp = true;
    validation.validate_nbf = true;
    validation.validate_aud = true;
    validation.set_required_spec_claims(&["exp", "iss", "aud"]);
    validation.set_issuer(&issuer_variants(&oidc.issuer));
    validation.set_audience(&oidc.audiences);

    let claims = decode::<Value>(token, &key, &validation)
        .map_err(|e| invalid(explain(e.kind())))?
        .claims;
    let subject = subject_from_claims(&claims, &oidc.subject_claim).ok_or_else(|| {
        invalid(format!(
            "the token's `{}` claim is not a non-empty string",
            oidc.subject_claim
        ))
    })?;
    let identity = Identity {
        subject,
        roles: roles_from_claims(&claims, &oidc.roles_claim),
        method: AuthMethod::Jwt,
    };
    verified::remember(
        token,
        claims.get("exp").and_then(Value::as_i64),
        &identity,
        oidc,
        store,
        now_unix,
    );
    Ok(identity)
}

/// A short, safe reason for a refused token (never the token or its claims).
fn explain(kind: &ErrorKind) -> String {
    match kind {
        ErrorKind::ExpiredSignature => "the token expired".into(),
        ErrorKind::ImmatureSignature => "the token is not valid yet (nbf)".into(),
        ErrorKind::InvalidIssuer => "the token's issuer (iss) is not oidc_issuer".into(),
        ErrorKind::InvalidAudience => "the token's audience (aud) is not oidc_audience".into(),
        // These name only claims from our own required set (exp, iss, aud, nbf).
        ErrorKind::MissingRequiredClaim(claim) => format!("the token has no `{claim}` claim"),
        ErrorKind::InvalidClaimFormat(claim) => format!("the token's `{claim}` claim is malformed"),
        ErrorKind::InvalidSignature => "bad signature".into(),
        ErrorKind::InvalidAlgorithm => "the token's algorithm does not fit its key".into(),
        _ => "malformed token".into(),
    }
}

/// Whether a JWK is of the kind the algorithm needs (and, if the key names its own `alg`,
/// that it is this one).
fn fits(jwk: &Jwk, alg: Algorithm) -> bool {
    let kind = match (&jwk.algorithm, alg) {
        (AlgorithmParameters::RSA(_), Algorithm::RS256) => true,
        (AlgorithmParameters::EllipticCurve(p), Algorithm::ES256) => p.curve == EllipticCurve::P256,
        (AlgorithmParameters::OctetKeyPair(p), Algorithm::EdDSA) => {
            p.curve == EllipticCurve::Ed25519
        }
        _ => false,
    };
    kind && jwk
        .common
        .key_algorithm
        .is_none_or(|own| own == KeyAlgorithm::from(alg))
}

/// Whether the set holds a key the token could be verified with (by kid, or the only fitting one).
fn has_candidate(keys: &[Jwk], header: &Header) -> bool {
    match &header.kid {
        Some(kid) => keys
            .iter()
            .any(|k| k.common.key_id.as_deref() == Some(kid.as_str())),
        None => keys.iter().any(|k| fits(k, header.alg)),
    }
}

/// The key that verifies this token: the one its `kid` names, or without a kid the only key
/// of the fitting kind.
fn select_key<'k>(keys: &'k [Jwk], header: &Header) -> Result<&'k Jwk, AuthError> {
    let jwk = match &header.kid {
        Some(kid) => keys
            .iter()
            .find(|k| k.common.key_id.as_deref() == Some(kid.as_str()))
            .ok_or_else(|| {
                invalid("the token's key id (kid) is not one of the identity provider's keys")
            })?,
        None => {
            let mut fitting = keys.iter().filter(|k| fits(k, header.alg));
            match (fitting.next(), fitting.next()) {
                (Some(only), None) => only,
                (None, _) => return Err(invalid("no key of the identity provider fits the token")),
                (Some(_), Some(_)) => {
                    return Err(invalid(
                        "the token names no key id (kid) and the identity provider has several keys",
                    ));
                }
            }
        }
    };
    if !fits(jwk, header.alg) {
        return Err(invalid("the token's algorithm does not fit its key"));
    }
    Ok(jwk)
}
