//! Reading our roles and the subject out of a verified token's claims. Identity providers
//! put roles in different places: Keycloak under `realm_access.roles` (or
//! `resource_access.<client>.roles`), Entra ID and most others in `roles` or `groups`, and
//! some only grant OAuth scopes (`scope`, `scp`: one space-separated string).

use serde_json::Value;

use crate::roles::Role;

/// The value at `path`: first the whole path as one top-level claim name (namespaced claims
/// such as `https://example.com/roles` contain dots), else a dotted path into nested objects.
pub(crate) fn claim_at<'a>(claims: &'a Value, path: &str) -> Option<&'a Value> {
    if let Some(value) = claims.get(path) {
        return Some(value);
    }
    path.split('.')
        .try_fold(claims, |value, key| value.get(key))
}

/// Role names found under `claim_path` (dotted path into nested objects); arrays of strings, a single string,
/// or a space-separated string for `scope`/`scp`. Returns our roles only (Role::parse_all). Missing claim → empty.
pub fn roles_from_claims(claims: &Value, claim_path: &str) -> Vec<Role> {
    let Some(value) = claim_at(claims, claim_path) else {
        return Vec::new();
    };
    let last = claim_path.rsplit('.').next().unwrap_or(claim_path);
    let space_separated = last == "scope" || last == "scp";
    match value {
        Value::String(s) if space_separated => Role::parse_all(s.split_whitespace()),
        Value::String(s) => Role::parse_all([s.as_str()]),
        // Non-string items (numbers, objects) are not role names; they are skipped.
        Value::Array(items) => Role::parse_all(items.iter().filter_map(Value::as_str)),
        _ => Vec::new(),
    }
}

/// The subject: the claim at `claim_path`, a non-empty string without control characters
/// (it is recorded as the actor and shown in logs).
pub(crate) fn subject_from_claims(claims: &Value, claim_path: &str) -> Option<String> {
    match claim_at(claims, claim_path)? {
        Value::String(s)
            if !s.trim().is_empty() && s.len() <= 256 && !s.chars().any(char::is_control) =>
        {
            Some(s.clone())
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn finds_roles_where_providers_put_them() {
        let claims = json!({
            "roles": ["Admin", "other"],
            "realm_access": {"roles": ["operator", "offline_access"]},
            "groups": "viewer",
            "scope": "openid profile approver viewer",
            "scp": ["operator"],
            "https://example.com/roles": ["approver"],
            "weird": [1, {"a": "admin"}, "viewer"],
        });
        assert_eq!(roles_from_claims(&claims, "roles"), vec![Role::Admin]);
        assert_eq!(
            roles_from_claims(&claims, "realm_access.roles"),
            vec![Role::Operator]
        );
        assert_eq!(roles_from_claims(&claims, "groups"), vec![Role::Viewer]);
        assert_eq!(
            roles_from_claims(&claims, "scope"),
            vec![Role::Viewer, Role::Approver]
        );
        assert_eq!(roles_from_claims(&claims, "scp"), vec![Role::Operator]);
        assert_eq!(
            roles_from_claims(&claims, "https://example.com/roles"),
            vec![Role::Approver]
        );
        assert_eq!(roles_from_claims(&claims, "weird"), vec![Role::Viewer]);
        assert!(roles_from_claims(&claims, "missing.path").is_empty());
        assert!(roles_from_claims(&json!({"roles": "viewer admin"}), "roles").is_empty());
        assert!(roles_from_claims(&json!({"roles": 3}), "roles").is_empty());
        assert!(roles_from_claims(&json!("not an object"), "roles").is_empty());
    }

    #[test]
    fn the_subject_is_a_non_empty_string() {
        assert_eq!(
            subject_from_claims(&json!({"sub": "u1"}), "sub").as_deref(),
            Some("u1")
        );
        assert_eq!(
            subject_from_claims(&json!({"user": {"email": "a@b"}}), "user.email").as_deref(),
            Some("a@b")
        );
        assert_eq!(subject_from_claims(&json!({"sub": ""}), "sub"), None);
        assert_eq!(subject_from_claims(&json!({"sub": 7}), "sub"), None);
        assert_eq!(subject_from_claims(&json!({"sub": "a\nb"}), "sub"), None);
        assert_eq!(subject_from_claims(&json!({}), "sub"), None);
    }
}
