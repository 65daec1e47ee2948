//! Authentication of every request but liveness (DESIGN.md §9): the credential of the
//! `Authorization` header, checked by kg-identity against the API keys and the OpenID
//! Connect issuer configured in Spin variables. The issuer's keys are fetched over
//! outbound HTTP and cached in the key-value store.

use kg_http::ApiError;
use kg_identity::{AuthConfig, AuthError, Identity, Permission};
use kg_wit::types::Caller;
use spin_sdk::http::Request;

/// Who a request acts as: the identity, and the caller record the components re-check.
#[derive(Clone)]
pub struct Principal {
    pub identity: Identity,
    pub caller: Caller,
}

impl Principal {
    pub fn new(identity: Identity) -> Principal {
        let caller = Caller {
            subject: identity.subject.clone(),
            roles: identity.role_names(),
        };
        Principal { identity, caller }
    }

    pub fn may(&self, permission: Permission) -> bool {
        kg_identity::allowed(&self.identity.roles, permission)
    }

    /// `Err(403)` naming `permission` unless the caller holds it.
    pub fn require(&self, permission: Permission) -> Result<(), ApiError> {
        kg_identity::missing(&self.identity.roles, permission).map_err(|message| {
            ApiError::new(403, "forbidden", message)
                .with_detail(serde_json::json!({"permission": permission.as_str()}))
        })
    }

    /// `Ok` when the caller holds any of `permissions`, else the refusal naming the first.
    pub fn require_any(&self, permissions: &[Permission]) -> Result<(), ApiError> {
        if permissions.iter().any(|p| self.may(*p)) {
            return Ok(());
        }
        permissions.iter().try_for_each(|p| self.require(*p))
    }
}

/// The auth settings, read from the variables on every request (instances keep nothing
/// between requests). A malformed setting fails closed, naming the variable.
pub fn config() -> Result<AuthConfig, ApiError> {
    AuthConfig::from_variables(&|name| kg_spin::variable(name).ok()).map_err(|e| {
        ApiError::new(
            500,
            "auth_misconfigured",
            format!("authentication is misconfigured: {e}"),
        )
    })
}

/// A refused credential as the API answers it: 401 with RFC 6750's `WWW-Authenticate`
/// (or 503 when the issuer's keys cannot be fetched).
pub struct Refusal {
    pub error: ApiError,
    pub www_authenticate: Option<String>,
}

pub fn authenticate(request: &Request, config: &AuthConfig) -> Result<Principal, Refusal> {
    let header = request.header("authorization").map(|v| v.as_str());
    let header = match header {
        Some(Some(text)) => Some(text),
        // A header that is not UTF-8 is a malformed credential, not a missing one.
        Some(None) => Some("\u{0}"),
        None => None,
    };
    let store = KvStore(spin_sdk::key_value::Store::open_default().ok());
    let now = kg_spin::clock::epoch_ms() / 1000;
    kg_identity::authenticate(header, config, &OutboundFetch, &store, now)
        .map(Principal::new)
        .map_err(|e| refusal(&e))
}

fn refusal(e: &AuthError) -> Refusal {
    let error = ApiError::new(e.status(), e.code(), e.message());
    let www_authenticate = (e.status() == 401).then(|| e.www_authenticate());
    Refusal {
        error,
        www_authenticate,
    }
}

/// GETs over Spin's outbound HTTP (the issuer's origin is in `allowed_outbound_hosts`).
struct OutboundFetch;

impl kg_identity::Fetch for OutboundFetch {
    fn get(&self, url: &str) -> Result<(u16, Vec<u8>), String> {
        use neo4j_client::Transport;
        let request = neo4j_client::HttpRequest {
            method: neo4j_client::Method::Get,
            url: url.to_string(),
            headers: vec![("accept".into(), "application/json".into())],
            body: None,
        };
        kg_spin::SpinTransport
            .send(request)
            .map(|r| (r.status, r.body))
            .map_err(|e| e.to_string())
    }
}

/// The JWKS cache in the key-value store; without a store, nothing is cached.
struct KvStore(Option<spin_sdk::key_value::Store>);

impl kg_identity::Store for KvStore {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, String> {
        match &self.0 {
            Some(store) => store.get(key).map_err(|e| e.to_string()),
            None => Ok(None),
        }
    }
    fn set(&self, key: &str, value: &[u8]) -> Result<(), String> {
        match &self.0 {
            Some(store) => store.set(key, value).map_err(|e| e.to_string()),
            None => Err("no key-value store".into()),
        }
    }
}
