//! A test OpenID Connect issuer: signing keys generated in the test (ES256 on P-256,
//! EdDSA on Ed25519, RS256 on a 2048-bit RSA key), a wiremock server answering discovery
//! (`/.well-known/openid-configuration`) and the JWKS (`/jwks`), and JWTs signed with the
//! `jsonwebtoken` crate (pure-Rust crypto), so the application verifies real tokens from a
//! real (local) issuer over HTTP.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::jwk::{Jwk, PublicKeyUse};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};
use std::time::{SystemTime, UNIX_EPOCH};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

/// The audience the tests configure (`oidc_audience`).
pub const AUDIENCE: &str = "kg-agent";
/// Where the tests' issuer puts roles (`oidc_roles_claim`).
pub const ROLES_CLAIM: &str = "realm_access.roles";

/// A private signing key and the public JWK that verifies it.
pub struct SigningKey {
    pub kid: String,
    pub alg: Algorithm,
    key: EncodingKey,
    /// The public key as a JWK (with `kid`, `alg` and `use: sig`).
    pub jwk: Value,
}

impl SigningKey {
    /// A fresh P-256 key (ES256).
    pub fn es256(kid: &str) -> SigningKey {
        use p256::pkcs8::EncodePrivateKey;
        let secret = p256::SecretKey::random(&mut rand_core::OsRng);
        let der = secret.to_pkcs8_der().expect("PKCS#8 of a P-256 key");
        Self::new(
            kid,
            Algorithm::ES256,
            EncodingKey::from_ec_der(der.as_bytes()),
        )
    }

    /// A fresh Ed25519 key (EdDSA).
    pub fn ed25519(kid: &str) -> SigningKey {
        use ed25519_dalek::pkcs8::{EncodePrivateKey, KeypairBytes};
        let signing = ed25519_dalek::SigningKey::generate(&mut rand_core::OsRng);
        // PKCS#8 v1 (no public key inside): the form jsonwebtoken derives the JWK from.
        let der = KeypairBytes {
            secret_key: signing.to_bytes(),
            public_key: None,
        }
        .to_pkcs8_der()
        .expect("PKCS#8 of an Ed25519 key");
        Self::new(
            kid,
            Algorithm::EdDSA,
            EncodingKey::from_ed_der(der.as_bytes()),
        )
    }

    /// A fresh 2048-bit RSA key (RS256); takes a moment to generate.
    pub fn rs256(kid: &str) -> SigningKey {
        use rsa::pkcs1::EncodeRsaPrivateKey;
        let private = rsa::RsaPrivateKey::new(&mut rand_core::OsRng, 2048).expect("an RSA key");
        let der = private.to_pkcs1_der().expect("PKCS#1 of an RSA key");
        Self::new(
            kid,
            Algorithm::RS256,
            EncodingKey::from_rsa_der(der.as_bytes()),
        )
    }

    fn new(kid: &str, alg: Algorithm, key: EncodingKey) -> SigningKey {
        let mut jwk = Jwk::from_encoding_key(&key, alg).expect("the public JWK of a key");
        jwk.common.key_id = Some(kid.to_string());
        jwk.common.public_key_use = Some(PublicKeyUse::Signature);
        SigningKey {
            kid: kid.to_string(),
            alg,
            key,
            jwk: serde_json::to_value(&jwk).expect("a JWK serialises"),
        }
    }

    /// A JWT of `claims` signed by this key, with its `kid`.
    pub fn sign(&self, claims: &Value) -> String {
        self.sign_as(Some(&self.kid), claims)
    }

    /// A JWT of `claims` signed by this key, naming `kid` (or none) in its header.
    pub fn sign_as(&self, kid: Option<&str>, claims: &Value) -> String {
        let mut header = Header::new(self.alg);
        header.kid = kid.map(str::to_string);
        jsonwebtoken::encode(&header, claims, &self.key).expect("signing a JWT")
    }
}

/// An HS256 JWT of `claims`, signed with a shared `secret`.
pub fn hs256(secret: &[u8], kid: Option<&str>, claims: &Value) -> String {
    let mut header = Header::new(Algorithm::HS256);
    header.kid = kid.map(str::to_string);
    jsonwebtoken::encode(&header, claims, &EncodingKey::from_secret(secret)).expect("HS256")
}

/// An unsigned JWT (`alg: none`, empty signature) of `claims`.
pub fn unsigned(kid: &str, claims: &Value) -> String {
    let header = json!({"alg": "none", "typ": "JWT", "kid": kid});
    format!(
        "{}.{}.",
        b64url(header.to_string().as_bytes()),
        b64url(claims.to_string().as_bytes())
    )
}

/// `token` with its payload replaced by `claims` (header and signature kept): a forgery.
pub fn with_payload(token: &str, claims: &Value) -> String {
    let parts: Vec<&str> = token.split('.').collect();
    format!(
        "{}.{}.{}",
        parts[0],
        b64url(claims.to_string().as_bytes()),
        parts[2]
    )
}

pub fn b64url(bytes: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

/// Seconds since the Unix epoch.
pub fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("after 1970")
        .as_secs() as i64
}

/// A local issuer serving discovery and a JWKS.
pub struct Issuer {
    pub server: MockServer,
}

impl Issuer {
    /// Serving the public keys of `keys`.
    pub async fn start(keys: &[&SigningKey]) -> Issuer {
        let issuer = Issuer {
            server: MockServer::start().await,
        };
        issuer.serve(keys).await;
        issuer
    }

    /// From now on the JWKS holds exactly `keys` (a key rotation). Forgets the requests
    /// received so far.
    pub async fn serve(&self, keys: &[&SigningKey]) {
        self.server.reset().await;
        let url = self.url();
        Mock::given(method("GET"))
            .and(path("/.well-known/openid-configuration"))
            .respond_with(ResponseTemplate::new(200).set_body_json(json!({
                "issuer": url,
                "jwks_uri": format!("{url}/jwks"),
                "id_token_signing_alg_values_supported": ["RS256", "ES256", "EdDSA"],
            })))
            .mount(&self.server)
            .await;
        let jwks: Vec<&Value> = keys.iter().map(|k| &k.jwk).collect();
        Mock::given(method("GET"))
            .and(path("/jwks"))
            .respond_with(ResponseTemplate::new(200).set_body_json(json!({ "keys": jwks })))
            .mount(&self.server)
            .await;
    }

    /// The issuer identifier (and origin): `http://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        self.server.uri()
    }

    /// How many requests reached `path` since the last `serve`.
    pub async fn requests_to(&self, wanted: &str) -> usize {
        self.server
            .received_requests()
            .await
            .unwrap_or_default()
            .iter()
            .filter(|r| r.url.path() == wanted)
            .count()
    }

    /// The variables that make the application trust this issuer, with `auth_mode`.
    pub fn variables(&self, auth_mode: &str) -> Vec<(&'static str, String)> {
        vec![
            ("auth_mode", auth_mode.to_string()),
            ("oidc_issuer", self.url()),
            ("oidc_origin", self.url()),
            ("oidc_audience", AUDIENCE.to_string()),
            ("oidc_roles_claim", ROLES_CLAIM.to_string()),
        ]
    }

    /// Valid claims (for ten minutes) of `sub` with `roles` under `realm_access.roles`.
    pub fn claims(&self, sub: &str, roles: &[&str]) -> Value {
        let now = now();
        json!({
            "iss": self.url(),
            "sub": sub,
            "aud": AUDIENCE,
            "iat": now,
            "nbf": now - 5,
            "exp": now + 600,
            "realm_access": {"roles": roles},
            "email": format!("{sub}@example.test"),
        })
    }
}
