//! The authentication configuration, read once from Spin variables:
//!
//! | variable | meaning |
//! |---|---|
//! | `auth_mode` | `api_key` (default), `oidc`, `api_key,oidc` (any order), or `none` (alone: every request is an anonymous admin — local experiments only) |
//! | `auth_api_keys` | the API-key entries (secret; format in [`crate::apikey`]); empty = no key accepted |
//! | `oidc_issuer` | required with `oidc`: the issuer URL, e.g. `https://kc.example.com/realms/acme` |
//! | `oidc_audience` | required with `oidc`: accepted audiences, comma-separated |
//! | `oidc_roles_claim` | where the roles are (default `roles`; a dotted path such as `realm_access.roles`; `scope`/`scp` are space-separated) |
//! | `oidc_subject_claim` | the claim naming the caller (default `sub`) |
//! | `oidc_jwks_ttl_s` | how long fetched signing keys are reused (default 3600) |
//! | `oidc_clock_skew_s` | leeway for `exp`/`nbf` (default 60, at most 300) |
//! | `oidc_hs_secret` | secret for HS256/384/512 tokens (at least 32 bytes); empty = HMAC tokens refused |
//! | `oidc_jwks_uri` | optional: the JWKS URL, skipping discovery |

use crate::apikey::{ApiKeyEntry, parse_entries};

/// How requests authenticate. `api_keys` is `Some` when API keys are enabled, `oidc` when
/// OpenID Connect tokens are; `anonymous` (`auth_mode = "none"`) excludes both.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthConfig {
    pub api_keys: Option<Vec<ApiKeyEntry>>,
    pub oidc: Option<OidcConfig>,
    pub anonymous: bool,
}

/// The OpenID Connect provider whose tokens are accepted.
#[derive(Clone, PartialEq, Eq)]
pub struct OidcConfig {
    pub issuer: String,
    pub audiences: Vec<String>,
    pub roles_claim: String,
    pub subject_claim: String,
    pub jwks_ttl_s: u64,
    pub clock_skew_s: u64,
    pub hs_secret: Option<String>,
    pub jwks_uri: Option<String>,
}

// By hand, so the HMAC secret never reaches a log.
impl std::fmt::Debug for OidcConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OidcConfig")
            .field("issuer", &self.issuer)
            .field("audiences", &self.audiences)
            .field("roles_claim", &self.roles_claim)
            .field("subject_claim", &self.subject_claim)
            .field("jwks_ttl_s", &self.jwks_ttl_s)
            .field("clock_skew_s", &self.clock_skew_s)
            .field("hs_secret", &self.hs_secret.as_ref().map(|_| "<redacted>"))
            .field("jwks_uri", &self.jwks_uri)
            .finish()
    }
}

pub const DEFAULT_JWKS_TTL_S: u64 = 3600;
pub const DEFAULT_CLOCK_SKEW_S: u64 = 60;
pub const MAX_CLOCK_SKEW_S: u64 = 300;
/// RFC 7518 §3.2: an HMAC key at least as long as the hash output.
const MIN_HS_SECRET_BYTES: usize = 32;

impl AuthConfig {
    /// `get` returns a variable's value (None or "" = unset). Errors name the variable and what is wrong.
    pub fn from_variables(get: &dyn Fn(&str) -> Option<String>) -> Result<AuthConfig, String> {
        let var = |name: &str| {
            get(name)
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
        };

        let mode = var("auth_mode").unwrap_or_else(|| "api_key".into());
        let (mut api_key, mut oidc, mut none) = (false, false, false);
        for item in mode.split(',').map(str::trim).filter(|m| !m.is_empty()) {
            match item.to_ascii_lowercase().as_str() {
                "api_key" => api_key = true,
                "oidc" => oidc = true,
                "none" => none = true,
                _ => {
                    return Err(format!(
                        "auth_mode: unknown mode `{}` (expected api_key, oidc, `api_key,oidc` or none)",
                        item.chars()
                            .filter(|c| !c.is_control())
                            .take(40)
                            .collect::<String>()
                    ));
                }
            }
        }
        if none && (api_key || oidc) {
            return Err("auth_mode: `none` cannot be combined with another mode".into());
        }
        if !(none || api_key || oidc) {
            return Err(
                "auth_mode: no mode given (expected api_key, oidc, `api_key,oidc` or none)".into(),
            );
        }
        if none {
            return Ok(AuthConfig {
                api_keys: None,
                oidc: None,
                anonymous: true,
            });
        }

        let api_keys = if api_key {
            Some(parse_entries(&var("auth_api_keys").unwrap_or_default())?)
        } else {
            None
        };
        let oidc = if oidc { Some(oidc_config(&var)?) } else { None };
        Ok(AuthConfig {
            api_keys,
            oidc,
            anonymous: false,
        })
    }
}

fn oidc_config(var: &dyn Fn(&str) -> Option<String>) -> Result<OidcConfig, String> {
    let issuer = var("oidc_issuer")
        .ok_or("oidc_issuer: required when auth_mode includes oidc (e.g. https://kc.example.com/realms/acme)")?;
    check_url("oidc_issuer", &issuer)?;
    let audiences: Vec<String> = var("oidc_audience")
        .unwrap_or_default()
        .split(',')
        .map(str::trim)
        .filter(|a| !a.is_empty())
        .map(String::from)
        .collect();
    if audiences.is_empty() {
        return Err(
            "oidc_audience: required when auth_mode includes oidc (comma-separated audiences)"
                .into(),
        );
    }
    let clock_skew_s = number(var, "oidc_clock_skew_s", DEFAULT_CLOCK_SKEW_S)?;
    if clock_skew_s > MAX_CLOCK_SKEW_S {
        return Err(format!(
            "oidc_clock_skew_s: {clock_skew_s} is over the maximum of {MAX_CLOCK_SKEW_S} seconds"
        ));
    }
    let hs_secret = var("oidc_hs_secret");
    if hs_secret
        .as_ref()
        .is_some_and(|s| s.len() < MIN_HS_SECRET_BYTES)
    {
        return Err(format!(
            "oidc_hs_secret: too short (at least {MIN_HS_SECRET_BYTES} bytes)"
        ));
    }
    let jwks_uri = var("oidc_jwks_uri");
    if let Some(uri) = &jwks_uri {
        check_url("oidc_jwks_uri", uri)?;
    }
    Ok(OidcConfig {
        issuer,
        audiences,
        roles_claim: var("oidc_roles_claim").unwrap_or_else(|| "roles".into()),
        subject_claim: var("oidc_subject_claim").unwrap_or_else(|| "sub".into()),
        jwks_ttl_s: number(var, "oidc_jwks_ttl_s", DEFAULT_JWKS_TTL_S)?,
        clock_skew_s,
        hs_secret,
        jwks_uri,
    })
}

fn number(var: &dyn Fn(&str) -> Option<String>, name: &str, default: u64) -> Result<u64, String> {
    match var(name) {
        None => Ok(default),
        Some(text) => text.parse().map_err(|_| {
            format!(
                "{name}: expected a whole number of seconds, found `{}`",
                text.chars().take(40).collect::<String>()
            )
        }),
    }
}

/// An absolute http(s) URL with a host, no user info and no whitespace (the URL Standard's
/// parsing, kg_url).
pub(crate) fn is_http_url(url: &str) -> bool {
    kg_url::http_url("", url).is_ok()
}

fn check_url(name: &str, url: &str) -> Result<(), String> {
    kg_url::http_base(name, url).map(drop).map_err(|e| {
        format!(
            "{name}: {}; expected an http(s) URL such as https://kc.example.com/realms/acme",
            e.reason
        )
    })
}
