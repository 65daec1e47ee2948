//! The whole authentication of one request: the configured mode, the bearer credential,
//! then the API-key or the JWT path.

use crate::apikey::{KEY_PREFIX, authenticate_key};
use crate::bearer::bearer_token;
use crate::config::AuthConfig;
use crate::error::{AuthError, invalid};
use crate::jwt::authenticate_jwt;
use crate::oidc::{Fetch, Store};
use crate::roles::{AuthMethod, Identity, Role};

/// The subject of every request when `auth_mode = "none"`.
pub const ANONYMOUS_SUBJECT: &str = "anonymous";

/// The whole check for one request. `none` mode → Identity{subject:"anonymous", roles: all four, method: Anonymous}
/// (no header needed). A `kga_` token → the API-key path (InvalidToken "API keys are not enabled" if auth_mode lacks them);
/// anything else → the JWT path (InvalidToken "OpenID Connect tokens are not enabled" if lacking).
pub fn authenticate(
    authorization: Option<&str>,
    config: &AuthConfig,
    fetch: &dyn Fetch,
    store: &dyn Store,
    now_unix: i64,
) -> Result<Identity, AuthError> {
    if config.anonymous {
        return Ok(Identity {
            subject: ANONYMOUS_SUBJECT.into(),
            roles: Role::ALL.to_vec(),
            method: AuthMethod::Anonymous,
        });
    }
    let token = bearer_token(authorization)?;
    // API keys carry a prefix no JWT can start with (a JWT starts with base64url of `{`).
    if token.starts_with(KEY_PREFIX) {
        match &config.api_keys {
            Some(entries) => authenticate_key(token, entries, now_unix),
            None => Err(invalid("API keys are not enabled")),
        }
    } else {
        match &config.oidc {
            Some(oidc) => authenticate_jwt(token, oidc, fetch, store, now_unix),
            None => Err(invalid("OpenID Connect tokens are not enabled")),
        }
    }
}
