//! The credential of an `Authorization` header (RFC 6750 §2.1). Both API keys and JWTs
//! travel as bearer tokens, so this is the only header parsing authentication does.

use crate::error::{AuthError, invalid};

/// The longest token accepted. Real JWTs stay well under 4 KiB; the cap keeps a
/// pathological header from reaching the JSON and signature code.
pub const MAX_TOKEN_BYTES: usize = 8 * 1024;

/// The credential of an `Authorization` header value: `Bearer <token>` (scheme case-insensitive, one space or more).
/// None header or another scheme → Missing; an empty token, a token over 8 KiB, or one with whitespace/control chars → InvalidToken.
pub fn bearer_token(authorization: Option<&str>) -> Result<&str, AuthError> {
    let Some(value) = authorization else {
        return Err(AuthError::Missing);
    };
    let value = value.trim_matches(|c| c == ' ' || c == '\t');
    // `get` rather than slicing: the header may hold multi-byte characters at byte 6.
    let scheme_matches = value
        .get(..6)
        .is_some_and(|scheme| scheme.eq_ignore_ascii_case("bearer"));
    if !scheme_matches {
        return Err(AuthError::Missing);
    }
    let rest = &value[6..];
    if !rest.is_empty() && !rest.starts_with(' ') {
        // `Bearerx ...` is another scheme; a bare `Bearer` is an empty token.
        return Err(AuthError::Missing);
    }
    let token = rest.trim_start_matches(' ');
    if token.is_empty() {
        return Err(invalid("the bearer token is empty"));
    }
    if token.len() > MAX_TOKEN_BYTES {
        return Err(invalid("the bearer token is too long (over 8 KiB)"));
    }
    if token.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(invalid(
            "the bearer token contains whitespace or control characters",
        ));
    }
    Ok(token)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn takes_the_token_of_the_bearer_scheme() {
        assert_eq!(bearer_token(Some("Bearer abc.def")), Ok("abc.def"));
        assert_eq!(bearer_token(Some("bearer   abc")), Ok("abc"));
        assert_eq!(bearer_token(Some("BEARER abc ")), Ok("abc"));
        assert_eq!(bearer_token(None), Err(AuthError::Missing));
        assert_eq!(
            bearer_token(Some("Basic dXNlcjpwdw==")),
            Err(AuthError::Missing)
        );
        assert_eq!(bearer_token(Some("Bearerabc")), Err(AuthError::Missing));
        assert_eq!(bearer_token(Some("")), Err(AuthError::Missing));
        assert_eq!(bearer_token(Some("Béarer x")), Err(AuthError::Missing));
        assert!(matches!(
            bearer_token(Some("Bearer")),
            Err(AuthError::InvalidToken(_))
        ));
        assert!(matches!(
            bearer_token(Some("Bearer   ")),
            Err(AuthError::InvalidToken(_))
        ));
        assert!(matches!(
            bearer_token(Some("Bearer a b")),
            Err(AuthError::InvalidToken(_))
        ));
        assert!(matches!(
            bearer_token(Some("Bearer a\u{7}b")),
            Err(AuthError::InvalidToken(_))
        ));
        let long = format!("Bearer {}", "a".repeat(9 * 1024));
        assert!(matches!(
            bearer_token(Some(&long)),
            Err(AuthError::InvalidToken(_))
        ));
        let max = format!("Bearer {}", "a".repeat(MAX_TOKEN_BYTES));
        assert!(bearer_token(Some(&max)).is_ok());
    }
}
