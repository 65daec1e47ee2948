use base64::Engine;
use std::sync::{Mutex, PoisonError};

/// Where and how to reach Neo4j.
#[derive(Clone)]
pub struct Config {
    /// `scheme://host[:port]`, checked where it is configured (`kg_url::http_origin`).
    pub origin: kg_url::Url,
    pub database: String,
    pub auth: Auth,
}

/// How requests authenticate (the Query API's `Authorization` header).
///
/// - `Basic`: `Authorization: Basic base64(user:password)` (RFC 7617), a native Neo4j user.
/// - `Bearer`: `Authorization: Bearer <token>` with the token **exactly as the identity
///   provider issued it** (for Neo4j Enterprise or Aura with SSO/OIDC, the access or ID
///   token: a JWT, three base64url parts joined by dots, `eyJ…`). The client does not
///   encode it: a JWT already is header-safe text, and the server hands the value after
///   `Bearer ` to its OIDC provider, which verifies the JWT as issued. Build it with
///   [`Auth::bearer`], which refuses a value that cannot be one token.
#[derive(Clone)]
pub enum Auth {
    None,
    Basic { user: String, password: String },
    Bearer(String),
}

/// A credential that cannot be sent: the message says which setting and why, never the
/// secret itself.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct AuthConfigError(pub String);

impl Auth {
    /// A bearer token, sent as-is. Refused: an empty token; one that starts with the
    /// scheme (`Bearer …`: the setting wants the token alone); and one with whitespace, a
    /// line break or other control or non-ASCII characters anywhere, which no token
    /// contains and which typically is the newline a file or `echo` left at its end. A
    /// header cannot carry such a value, and trimming it silently would hide a pasted
    /// value that is wrong in other ways too.
    pub fn bearer(token: &str) -> Result<Auth, AuthConfigError> {
        if token.is_empty() {
            return Err(AuthConfigError("the bearer token is empty".into()));
        }
        if token
            .get(..7)
            .is_some_and(|s| s.eq_ignore_ascii_case("bearer "))
        {
            return Err(AuthConfigError(
                "the bearer token starts with `Bearer `: give the token alone, the client adds the scheme".into(),
            ));
        }
        if let Some((at, c)) = token
            .char_indices()
            .find(|(_, c)| c.is_whitespace() || c.is_control())
        {
            let what = match c {
                '\n' | '\r' => "a line break",
                c if c.is_whitespace() => "whitespace",
                _ => "a control character",
            };
            return Err(AuthConfigError(format!(
                "the bearer token contains {what} at byte {at} of {}: a token is sent as-is \
                 (`Authorization: Bearer <token>`) and cannot contain one; remove it (often the \
                 newline at the end of a file or of `echo` output)",
                token.len()
            )));
        }
        if let Some((at, _)) = token.char_indices().find(|(_, c)| !c.is_ascii()) {
            return Err(AuthConfigError(format!(
                "the bearer token contains a non-ASCII character at byte {at}: tokens (JWTs) are ASCII"
            )));
        }
        Ok(Auth::Bearer(token.to_string()))
    }

    /// The authentication the settings ask for: a non-empty `token` means bearer (then
    /// `user` and `password` are not used), else a non-empty `user` means basic with
    /// `password`, else none (a server with authentication disabled).
    pub fn from_settings(user: &str, password: &str, token: &str) -> Result<Auth, AuthConfigError> {
        if !token.is_empty() {
            return Auth::bearer(token);
        }
        if user.is_empty() {
            return Ok(Auth::None);
        }
        Ok(Auth::Basic {
            user: user.to_string(),
            password: password.to_string(),
        })
    }

    /// The `Authorization` header value, if any.
    pub fn header(&self) -> Option<String> {
        match self {
            Auth::None => None,
            Auth::Basic { user, password } => Some(basic_header(user, password)),
            Auth::Bearer(token) => Some(format!("Bearer {token}")),
        }
    }
}

/// `Basic base64(user:password)`, remembered for the last credentials asked for: a
/// component builds a [`crate::Client`] (which keeps its header) per tool call from one
/// `Config`, so within an instance the encoding runs once, not once per call.
fn basic_header(user: &str, password: &str) -> String {
    static LAST: Mutex<Option<(String, String, String)>> = Mutex::new(None);
    let mut last = LAST.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some((u, p, header)) = &*last
        && u == user
        && p == password
    {
        return header.clone();
    }
    let header = format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"))
    );
    *last = Some((user.to_string(), password.to_string(), header.clone()));
    header
}

// Secrets never reach logs through Debug.
impl std::fmt::Debug for Auth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Auth::None => write!(f, "None"),
            Auth::Basic { user, .. } => {
                write!(f, "Basic {{ user: {user:?}, password: <redacted> }}")
            }
            Auth::Bearer(_) => write!(f, "Bearer(<redacted>)"),
        }
    }
}

impl std::fmt::Debug for Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Config")
            .field("origin", &self.origin)
            .field("database", &self.database)
            .field("auth", &self.auth)
            .finish()
    }
}

impl Config {
    /// `{origin}/db/{database}/query/v2`, the database percent-encoded.
    pub fn query_url(&self) -> String {
        let database = percent_encoding::utf8_percent_encode(
            &self.database,
            percent_encoding::NON_ALPHANUMERIC,
        );
        format!(
            "{}/db/{database}/query/v2",
            self.origin.as_str().trim_end_matches('/')
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A JWT as Aura's SSO issues them (header.payload.signature, base64url).
    const JWT: &str = "eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJhbGljZSIsImF1ZCI6Im5lbzRqIn0.c2lnbmF0dXJlLV8";

    #[test]
    fn a_token_is_sent_as_is() {
        let auth = Auth::bearer(JWT).unwrap();
        assert_eq!(auth.header(), Some(format!("Bearer {JWT}")));
        // Not base64 of it, not trimmed, not altered.
        let padded = "YWJj+/==";
        assert_eq!(
            Auth::bearer(padded).unwrap().header().as_deref(),
            Some("Bearer YWJj+/==")
        );
    }

    #[test]
    fn tokens_that_cannot_be_sent_are_config_errors_without_the_secret() {
        for (bad, says) in [
            ("", "empty"),
            ("Bearer abc", "starts with `Bearer `"),
            ("bearer abc", "starts with `Bearer `"),
            (&format!("{JWT}\n") as &str, "a line break at byte 92 of 93"),
            ("abc\r\n", "a line break"),
            (" abc", "whitespace at byte 0"),
            ("ab c", "whitespace"),
            ("ab\tc", "whitespace"),
            ("ab\u{7f}c", "a control character"),
            ("abcé", "non-ASCII"),
        ] {
            let e = Auth::bearer(bad).unwrap_err();
            assert!(e.0.contains(says), "{bad:?}: {e}");
            assert!(!e.0.contains("abc") && !e.0.contains("eyJ"), "{e}");
        }
    }

    #[test]
    fn basic_headers_are_rfc_7617_for_whichever_credentials_come_last() {
        let basic = |user: &str, password: &str| {
            Auth::Basic {
                user: user.into(),
                password: password.into(),
            }
            .header()
        };
        // Each asked twice: the remembered header is the same bytes, and a change of
        // either part is noticed.
        for _ in 0..2 {
            assert_eq!(basic("neo4j", "pw").as_deref(), Some("Basic bmVvNGo6cHc="));
            assert_eq!(basic("neo4j", "pw2").as_deref(), Some("Basic bmVvNGo6cHcy"));
            assert_eq!(basic("neo4", "jpw").as_deref(), Some("Basic bmVvNDpqcHc="));
        }
    }

    #[test]
    fn settings_choose_bearer_then_basic_then_none() {
        assert!(matches!(
            Auth::from_settings("neo4j", "pw", JWT),
            Ok(Auth::Bearer(t)) if t == JWT
        ));
        assert!(matches!(
            Auth::from_settings("reader", "pw", ""),
            Ok(Auth::Basic { user, password }) if user == "reader" && password == "pw"
        ));
        assert!(matches!(Auth::from_settings("", "", ""), Ok(Auth::None)));
        assert!(Auth::from_settings("neo4j", "pw", "tok\n").is_err());
    }
}
