//! OpenID Connect bearer JWTs (issue #13) against a local issuer (`kg_e2e::oidc`): keys
//! generated in the test, discovery and JWKS served over HTTP by wiremock, the application
//! started with `auth_mode=api_key,oidc`. Valid ES256, EdDSA and RS256 tokens work with
//! the roles of `realm_access.roles`; expired, not-yet-valid, foreign, unsigned, HMAC,
//! forged and unknown-key tokens are 401; the JWKS is cached and refreshed on rotation.

use kg_e2e::oidc::{self, Issuer, SigningKey};
use kg_e2e::{AppHost, Stack, auth};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

async fn stack_for(issuer: &Issuer, mode: &str, extra: &[(&str, String)]) -> Stack {
    let mut variables = issuer.variables(mode);
    variables.extend(extra.iter().cloned());
    Stack::start_with(&variables).await.unwrap()
}

async fn get(host: &AppHost, token: &str, path: &str) -> (u16, Value) {
    host.get_as(Some(token), path).await.unwrap()
}

/// A 401 `invalid_token` with the RFC 6750 challenge.
async fn assert_refused(host: &AppHost, what: &str, token: &str) {
    let response = host
        .request_as(Some(token), "GET", "/tools", "")
        .await
        .unwrap();
    let status = response.status().as_u16();
    let challenge = response
        .headers()
        .get("www-authenticate")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let body: Value = response.json().await.unwrap_or(Value::Null);
    assert_eq!(status, 401, "{what}: {body}");
    assert_eq!(body["error"]["code"], "invalid_token", "{what}: {body}");
    assert!(
        challenge.contains("Bearer") && challenge.contains(r#"error="invalid_token""#),
        "{what}: `{challenge}`"
    );
}

#[tokio::test]
async fn the_issuers_tokens_carry_subject_and_roles_and_every_bad_token_is_401() {
    let es = SigningKey::es256("es-1");
    let ed = SigningKey::ed25519("ed-1");
    let rs = SigningKey::rs256("rs-1");
    let issuer = Issuer::start(&[&es, &ed, &rs]).await;
    let stack = stack_for(&issuer, "api_key,oidc", &[]).await;
    let host = &stack.host;
    let sub = "auth0|alice-4711";
    let claims = issuer.claims(sub, &["operator"]);

    // Each algorithm; the roles come from realm_access.roles (operator: no setup).
    for key in [&es, &ed, &rs] {
        let token = key.sign(&claims);
        let (status, tools) = get(host, &token, "/tools").await;
        assert_eq!(status, 200, "{:?}: {tools}", key.alg);
        let (status, e) = host
            .send_as(Some(&token), "POST", "/actions/setup", "{}")
            .await
            .unwrap();
        assert_eq!(status, 403, "{:?}: {e}", key.alg);
        assert_eq!(e["error"]["code"], "forbidden");
        assert_eq!(e["error"]["detail"]["permission"], "actions:setup");
    }
    // An audience list that includes ours is ours.
    let mut listed = claims.clone();
    listed["aud"] = json!(["account", oidc::AUDIENCE]);
    assert_eq!(get(host, &es.sign(&listed), "/tools").await.0, 200);

    // The actor of an execute is the token's subject.
    let draft = stack
        .graph
        .query("MATCH (o:PurchaseOrder {status: 'draft'})-[:PLACED_WITH]->(:Supplier {blocked: false}) RETURN o.id ORDER BY o.id LIMIT 1")
        .await
        .unwrap()[0][0]
        .as_str()
        .unwrap()
        .to_string();
    let (status, r) = host
        .send_as(
            Some(&es.sign(&claims)),
            "POST",
            "/actions/PurchaseOrder/approve/execute",
            &json!({"entity_ids": [draft]}).to_string(),
        )
        .await
        .unwrap();
    assert_eq!((status, r["succeeded"].as_u64()), (200, Some(1)), "{r}");
    let actor = stack
        .graph
        .query(&format!(
            "MATCH (l:ActionLog {{entity_id: '{draft}'}}) RETURN l.actor"
        ))
        .await
        .unwrap();
    assert_eq!(actor, vec![json!([sub])]);

    // API keys keep working beside OIDC.
    assert_eq!(get(host, auth::ADMIN, "/tools").await.0, 200);
    assert_eq!(get(host, auth::VIEWER, "/tools").await.0, 200);

    let now = oidc::now();
    let with = |edit: &dyn Fn(&mut Value)| {
        let mut c = claims.clone();
        edit(&mut c);
        c
    };
    let expired = with(&|c| {
        c["iat"] = json!(now - 1200);
        c["nbf"] = json!(now - 1200);
        c["exp"] = json!(now - 600);
    });
    let not_yet = with(&|c| {
        c["nbf"] = json!(now + 600);
        c["exp"] = json!(now + 1200);
    });
    let other_audience = with(&|c| c["aud"] = json!("another-service"));
    let no_audience = with(&|c| {
        c.as_object_mut().unwrap().remove("aud");
    });
    let other_issuer = with(&|c| c["iss"] = json!("https://issuer.example"));
    let no_expiry = with(&|c| {
        c.as_object_mut().unwrap().remove("exp");
    });
    let admin = with(&|c| c["realm_access"]["roles"] = json!(["admin"]));
    let stranger = SigningKey::es256("es-1");
    let unknown = SigningKey::es256("es-unknown");
    let cases: Vec<(&str, String)> = vec![
        ("expired", es.sign(&expired)),
        ("not valid yet (nbf)", es.sign(&not_yet)),
        ("another audience", es.sign(&other_audience)),
        ("no audience", es.sign(&no_audience)),
        ("another issuer", es.sign(&other_issuer)),
        ("no expiry", es.sign(&no_expiry)),
        ("alg: none", oidc::unsigned("es-1", &claims)),
        (
            "HS256 with some secret",
            oidc::hs256(b"some-secret", Some("es-1"), &claims),
        ),
        (
            "HS256 without a kid",
            oidc::hs256(b"some-secret", None, &claims),
        ),
        (
            "HS256 keyed with the public JWK (algorithm confusion)",
            oidc::hs256(es.jwk.to_string().as_bytes(), Some("es-1"), &claims),
        ),
        (
            "signed by another key under a served kid",
            stranger.sign(&claims),
        ),
        (
            "signed by a key the JWKS does not have",
            unknown.sign(&claims),
        ),
        (
            "an ES256 key under the RS256 kid",
            es.sign_as(Some("rs-1"), &claims),
        ),
        (
            "roles edited after signing",
            oidc::with_payload(&es.sign(&claims), &admin),
        ),
        ("a truncated signature", {
            let t = es.sign(&claims);
            t[..t.len() - 4].to_string()
        }),
        ("four segments", format!("{}.x", es.sign(&claims))),
    ];
    for (what, token) in &cases {
        assert_refused(host, what, token).await;
    }
    // Still serving good tokens afterwards.
    assert_eq!(get(host, &ed.sign(&claims), "/tools").await.0, 200);
}

#[tokio::test]
async fn the_jwks_is_fetched_once_for_many_requests() {
    let es = SigningKey::es256("es-1");
    let issuer = Issuer::start(&[&es]).await;
    let stack = stack_for(&issuer, "api_key,oidc", &[]).await;
    for i in 0..20 {
        let token = es.sign(&issuer.claims(&format!("user-{i}"), &["viewer"]));
        let (status, body) = get(&stack.host, &token, "/tools").await;
        assert_eq!(status, 200, "request {i}: {body}");
    }
    assert_eq!(
        issuer.requests_to("/jwks").await,
        1,
        "one JWKS fetch for 20 requests"
    );
    assert!(
        issuer
            .requests_to("/.well-known/openid-configuration")
            .await
            <= 1
    );
}

/// Key rotation: a new key is accepted once the JWKS serves it (an unknown `kid` triggers a
/// refresh); a removed key is refused once the cache is refreshed, which an unknown `kid`
/// forces after the refresh rate limit (~30 s): this test takes about half a minute.
#[tokio::test]
async fn a_rotated_in_key_is_accepted_and_a_removed_key_refused_after_refresh() {
    let old = SigningKey::es256("k-old");
    let new = SigningKey::ed25519("k-new");
    let issuer = Issuer::start(&[&old]).await;
    let stack = stack_for(&issuer, "api_key,oidc", &[]).await;
    let host = &stack.host;
    let claims = issuer.claims("rotating-user", &["viewer"]);
    assert_eq!(get(host, &old.sign(&claims), "/tools").await.0, 200);

    issuer.serve(&[&old, &new]).await;
    let started = Instant::now();
    let accepted_after = loop {
        let (status, body) = get(host, &new.sign(&claims), "/tools").await;
        if status == 200 {
            break started.elapsed();
        }
        assert_eq!(status, 401, "{body}");
        assert!(
            started.elapsed() < Duration::from_secs(45),
            "the new key was never accepted"
        );
        tokio::time::sleep(Duration::from_secs(1)).await;
    };
    let refreshed_at = Instant::now();
    eprintln!(
        "rotation: the new key was accepted after {} ms",
        accepted_after.as_millis()
    );
    assert!(
        issuer.requests_to("/jwks").await >= 1,
        "the JWKS was fetched again"
    );

    // The old key leaves the JWKS; after the refresh rate limit, an unknown kid forces a
    // refresh and the old key is refused.
    issuer.serve(&[&new]).await;
    let limit = Duration::from_secs(31);
    tokio::time::sleep(limit.saturating_sub(refreshed_at.elapsed())).await;
    let probe = SigningKey::es256("k-probe");
    let started = Instant::now();
    loop {
        assert_refused(host, "an unknown kid", &probe.sign(&claims)).await;
        let (status, _) = get(host, &old.sign(&claims), "/tools").await;
        if status == 401 {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(40),
            "the removed key was still accepted {} s after it left the JWKS",
            refreshed_at.elapsed().as_secs()
        );
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    assert_refused(host, "the removed key", &old.sign(&claims)).await;
    eprintln!(
        "rotation: the removed key was refused {} ms after the previous refresh",
        refreshed_at.elapsed().as_millis()
    );
    assert_eq!(get(host, &new.sign(&claims), "/tools").await.0, 200);
}

/// `oidc_jwks_ttl_s`: once the cached JWKS is older than that, a request fetches it again,
/// so a key removed from the issuer stops working without any unknown kid. Fetches are at
/// most once per 30 s per issuer, so with a TTL of 2 s the refetch comes 30 s after the
/// first fetch: this test takes about half a minute.
#[tokio::test]
async fn the_cached_jwks_expires_after_its_ttl() {
    let old = SigningKey::es256("k-old");
    let new = SigningKey::es256("k-new");
    let issuer = Issuer::start(&[&old]).await;
    let stack = stack_for(
        &issuer,
        "api_key,oidc",
        &[("oidc_jwks_ttl_s", "2".to_string())],
    )
    .await;
    let host = &stack.host;
    let claims = issuer.claims("ttl-user", &["viewer"]);
    assert_eq!(get(host, &old.sign(&claims), "/tools").await.0, 200);
    let fetched = Instant::now();
    issuer.serve(&[&new]).await;
    tokio::time::sleep(Duration::from_secs(31).saturating_sub(fetched.elapsed())).await;
    // A token not seen before (the service remembers verified tokens for up to 60 s, so
    // the very token above would still pass within that minute).
    let mut unseen = claims.clone();
    unseen["jti"] = json!("after-the-ttl");
    assert_refused(
        host,
        "a key gone from the refetched JWKS",
        &old.sign(&unseen),
    )
    .await;
    assert_eq!(issuer.requests_to("/jwks").await, 1, "refetched once");
    assert_eq!(get(host, &new.sign(&claims), "/tools").await.0, 200);
}

/// `auth_mode=oidc` alone: API keys are not accepted; a configured shared secret admits
/// HS256 tokens signed with it (and only with it).
#[tokio::test]
async fn oidc_alone_refuses_api_keys_and_hs256_needs_the_configured_secret() {
    let es = SigningKey::es256("es-1");
    let issuer = Issuer::start(&[&es]).await;
    let secret = "a-shared-secret-of-at-least-32-bytes!";
    let stack = stack_for(&issuer, "oidc", &[("oidc_hs_secret", secret.to_string())]).await;
    let host = &stack.host;
    let claims = issuer.claims("hs-user", &["viewer"]);
    assert_eq!(get(host, &es.sign(&claims), "/tools").await.0, 200);
    assert_eq!(
        get(
            host,
            &oidc::hs256(secret.as_bytes(), None, &claims),
            "/tools"
        )
        .await
        .0,
        200
    );
    assert_refused(
        host,
        "HS256 with another secret",
        &oidc::hs256(b"not-the-shared-secret-at-all-xxxxx", None, &claims),
    )
    .await;
    assert_refused(host, "an API key with auth_mode=oidc", auth::ADMIN).await;
    let response = host.request_as(None, "GET", "/tools", "").await.unwrap();
    assert_eq!(response.status(), 401);
}
