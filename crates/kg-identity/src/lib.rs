//! Identity and permissions (DESIGN.md §9): who is asking (`Identity`), the roles they
//! hold and what each role may do (the permission matrix, written once in
//! `permissions`). Authentication (API keys, OpenID Connect JWTs) sits behind the `authn`
//! feature so a component that only re-checks permissions stays small.

pub mod permissions;
pub mod roles;

#[cfg(feature = "authn")]
pub mod apikey;
#[cfg(feature = "authn")]
pub mod authenticate;
#[cfg(feature = "authn")]
pub mod bearer;
#[cfg(feature = "authn")]
pub mod claims;
#[cfg(feature = "authn")]
pub mod config;
#[cfg(feature = "authn")]
pub mod error;
#[cfg(feature = "authn")]
mod jwt;
#[cfg(feature = "authn")]
pub mod oidc;
#[cfg(feature = "authn")]
mod timestamp;
#[cfg(feature = "authn")]
mod verified;

pub use permissions::{Permission, allowed, missing};
pub use roles::{AuthMethod, Identity, Role};

#[cfg(feature = "authn")]
pub use apikey::{
    ApiKeyEntry, KEY_PREFIX, authenticate_key, format_entry, hash_key, parse_entries,
};
#[cfg(feature = "authn")]
pub use authenticate::authenticate;
#[cfg(feature = "authn")]
pub use bearer::bearer_token;
#[cfg(feature = "authn")]
pub use claims::roles_from_claims;
#[cfg(feature = "authn")]
pub use config::{AuthConfig, OidcConfig};
#[cfg(feature = "authn")]
pub use error::AuthError;
#[cfg(feature = "authn")]
pub use oidc::{Fetch, Store};
