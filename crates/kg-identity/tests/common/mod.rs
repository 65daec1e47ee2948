//! Shared by the integration tests: an identity provider behind the `Fetch` boundary, an
//! in-memory `Store`, and real signing keys.
// Each test binary uses a different part of this module.
#![allow(dead_code)]

use std::cell::{Cell, RefCell};
use std::collections::HashMap;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::jwk::{Jwk, JwkSet};
use jsonwebtoken::{Algorithm, EncodingKey, Header, encode};
use kg_identity::{AuthConfig, Fetch, OidcConfig, Store};
use serde_json::{Value, json};

pub const ISSUER: &str = "https://kc.example.com/realms/acme";
pub const AUDIENCE: &str = "kg-agent";
pub const JWKS_URI: &str = "https://kc.example.com/realms/acme/protocol/openid-connect/certs";
pub const DISCOVERY: &str = "https://kc.example.com/realms/acme/.well-known/openid-configuration";
pub const HS_SECRET: &str = "an-hmac-secret-of-at-least-32-bytes!";

/// The identity provider, as the `Fetch` host boundary sees it: it serves a discovery
/// document and a JWKS, counts requests, and can be taken down.
pub struct Provider {
    responses: RefCell<HashMap<String, (u16, Vec<u8>)>>,
    calls: RefCell<Vec<String>>,
    pub down: Cell<bool>,
}

impl Provider {
    pub fn new() -> Provider {
        let provider = Provider {
            responses: RefCell::new(HashMap::new()),
            calls: RefCell::new(Vec::new()),
            down: Cell::new(false),
        };
        provider.serve(
            DISCOVERY,
            200,
            json!({"issuer": ISSUER, "jwks_uri": JWKS_URI}),
        );
        provider
    }

    pub fn serve(&self, url: &str, status: u16, body: Value) {
        self.responses
            .borrow_mut()
            .insert(url.to_string(), (status, body.to_string().into_bytes()));
    }

    /// Publishes exactly these keys.
    pub fn publish(&self, keys: &[&TestKey]) {
        let set = JwkSet {
            keys: keys.iter().map(|k| k.jwk.clone()).collect(),
        };
        self.serve(JWKS_URI, 200, serde_json::to_value(set).unwrap());
    }

    pub fn count(&self, url: &str) -> usize {
        self.calls.borrow().iter().filter(|u| *u == url).count()
    }

    pub fn total(&self) -> usize {
        self.calls.borrow().len()
    }
}

impl Fetch for Provider {
    fn get(&self, url: &str) -> Result<(u16, Vec<u8>), String> {
        self.calls.borrow_mut().push(url.to_string());
        if self.down.get() {
            return Err("connection refused".into());
        }
        Ok(self
            .responses
            .borrow()
            .get(url)
            .cloned()
            .unwrap_or((404, b"not found".to_vec())))
    }
}

#[derive(Default)]
pub struct MemStore(pub RefCell<HashMap<String, Vec<u8>>>);

impl Store for MemStore {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, String> {
        Ok(self.0.borrow().get(key).cloned())
    }
    fn set(&self, key: &str, value: &[u8]) -> Result<(), String> {
        self.0.borrow_mut().insert(key.to_string(), value.to_vec());
        Ok(())
    }
}

/// A store that fails every call.
pub struct BrokenStore;

impl Store for BrokenStore {
    fn get(&self, _: &str) -> Result<Option<Vec<u8>>, String> {
        Err("store down".into())
    }
    fn set(&self, _: &str, _: &[u8]) -> Result<(), String> {
        Err("store down".into())
    }
}

/// A signing key and its public JWK.
pub struct TestKey {
    pub alg: Algorithm,
    pub kid: String,
    pub encoding: EncodingKey,
    pub jwk: Jwk,
}

impl TestKey {
    fn new(alg: Algorithm, kid: &str, encoding: EncodingKey) -> TestKey {
        let mut jwk = Jwk::from_encoding_key(&encoding, alg).unwrap();
        jwk.common.key_id = Some(kid.to_string());
        TestKey {
            alg,
            kid: kid.to_string(),
            encoding,
            jwk,
        }
    }

    /// The fixed RSA-2048 test key (generating one in a debug build is slow).
    pub fn rsa(kid: &str) -> TestKey {
        let pem = include_bytes!("../data/rsa-test-key.pem");
        TestKey::new(
            Algorithm::RS256,
            kid,
            EncodingKey::from_rsa_pem(pem).unwrap(),
        )
    }

    /// A fresh P-256 key.
    pub fn ec(kid: &str) -> TestKey {
        use p256::pkcs8::EncodePrivateKey;
        let secret = p256::SecretKey::random(&mut rand_core::OsRng);
        let der = secret.to_pkcs8_der().unwrap();
        TestKey::new(
            Algorithm::ES256,
            kid,
            EncodingKey::from_ec_der(der.as_bytes()),
        )
    }

    /// A fresh Ed25519 key.
    pub fn ed(kid: &str) -> TestKey {
        use ed25519_dalek::pkcs8::EncodePrivateKey;
        let signing = ed25519_dalek::SigningKey::generate(&mut rand_core::OsRng);
        let der = signing.to_pkcs8_der().unwrap();
        // `Jwk::from_encoding_key` takes PKCS#8 v1 only (48 bytes); ed25519-dalek writes v2
        // (with the public key), so this JWK is written by hand.
        let jwk: Jwk = serde_json::from_value(json!({
            "kty": "OKP", "crv": "Ed25519", "alg": "EdDSA", "kid": kid,
            "x": b64(signing.verifying_key().as_bytes()),
        }))
        .unwrap();
        let encoding = EncodingKey::from_ed_der(der.as_bytes());
        TestKey {
            alg: Algorithm::EdDSA,
            kid: kid.to_string(),
            encoding,
            jwk,
        }
    }

    /// A token with these claims, naming this key's kid.
    pub fn sign(&self, claims: &Value) -> String {
        let mut header = Header::new(self.alg);
        header.kid = Some(self.kid.clone());
        encode(&header, claims, &self.encoding).unwrap()
    }

    /// A token naming no kid.
    pub fn sign_without_kid(&self, claims: &Value) -> String {
        encode(&Header::new(self.alg), claims, &self.encoding).unwrap()
    }
}

/// The wall clock jsonwebtoken checks `exp` and `nbf` against.
pub fn now() -> i64 {
    jsonwebtoken::get_current_timestamp() as i64
}

/// Valid claims for `sub`, expiring in ten minutes.
pub fn claims(sub: &str, roles: &[&str]) -> Value {
    json!({"iss": ISSUER, "aud": AUDIENCE, "sub": sub, "exp": now() + 600, "iat": now(), "roles": roles})
}

pub fn b64(bytes: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

/// An unsigned token (`alg: none`): test data, base64url-joined by hand.
pub fn unsigned_token(claims: &Value) -> String {
    let header = json!({"alg": "none", "typ": "JWT"});
    format!(
        "{}.{}.",
        b64(header.to_string().as_bytes()),
        b64(claims.to_string().as_bytes())
    )
}

pub fn oidc_config() -> OidcConfig {
    OidcConfig {
        issuer: ISSUER.into(),
        audiences: vec![AUDIENCE.into()],
        roles_claim: "roles".into(),
        subject_claim: "sub".into(),
        jwks_ttl_s: 3600,
        clock_skew_s: 60,
        hs_secret: None,
        jwks_uri: None,
    }
}

pub fn oidc_only(oidc: OidcConfig) -> AuthConfig {
    AuthConfig {
        api_keys: None,
        oidc: Some(oidc),
        anonymous: false,
    }
}

pub fn bearer(token: &str) -> String {
    format!("Bearer {token}")
}
