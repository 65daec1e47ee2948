//! `GET /health/live` as plain data: the liveness component (components/liveness, where
//! spin.toml routes the path) and the dispatcher (for a manifest that does not) answer it
//! with this, so the two cannot drift.

use crate::headers::{self, Context};

/// A liveness answer: status, headers (content type included when there is a body), body.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Option<String>,
}

/// The body of a live instance's answer.
pub fn body() -> serde_json::Value {
    serde_json::json!({"status": "ok"})
}

/// The answer to a request to `/health/live`: 200 to GET, the API's CORS preflight to
/// OPTIONS, a JSON 405 to anything else; every one with the API's common headers.
/// `origin` is the request's `Origin`; `cors_allowed_origins` and `auth_mode` are the
/// variables' values.
pub fn answer(
    method: &str,
    origin: Option<&str>,
    cors_allowed_origins: &str,
    auth_mode: &str,
) -> Answer {
    let ctx = Context {
        allowed_origin: origin.and_then(|o| headers::allowed(o, cors_allowed_origins)),
        anonymous_mode: headers::anonymous(auth_mode),
        auth_ms: None,
    };
    let (status, body, mut fields) = match method {
        "GET" => (200, Some(body()), headers::common(&ctx)),
        "OPTIONS" => (204, None, headers::preflight(&ctx)),
        other => {
            let error = crate::ApiError::new(
                405,
                "method_not_allowed",
                format!("{other} is not allowed on /health/live; use GET"),
            );
            let mut fields = headers::common(&ctx);
            fields.push(("allow".into(), "GET, OPTIONS".into()));
            (405, Some(error.to_json()), fields)
        }
    };
    if body.is_some() {
        fields.push(("content-type".into(), "application/json".into()));
    }
    Answer {
        status,
        headers: fields,
        body: body.map(|b| b.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header<'a>(answer: &'a Answer, name: &str) -> Option<&'a str> {
        answer
            .headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    #[test]
    fn get_is_200_ok_with_the_common_headers() {
        let a = answer("GET", None, "", "api_key");
        assert_eq!(a.status, 200);
        assert_eq!(a.body.as_deref(), Some(r#"{"status":"ok"}"#));
        assert_eq!(header(&a, "x-content-type-options"), Some("nosniff"));
        assert_eq!(header(&a, "content-type"), Some("application/json"));
        assert_eq!(header(&a, headers::AUTH_WARNING), None);
    }

    #[test]
    fn cors_and_the_anonymous_warning_follow_the_variables() {
        let list = "https://app.example";
        let allowed = answer("GET", Some("https://app.example"), list, "none");
        assert_eq!(
            header(&allowed, "access-control-allow-origin"),
            Some("https://app.example")
        );
        assert!(header(&allowed, headers::AUTH_WARNING).is_some());
        let refused = answer("GET", Some("https://evil.example"), list, "api_key");
        assert_eq!(header(&refused, "access-control-allow-origin"), None);
        let preflight = answer("OPTIONS", Some("https://app.example"), list, "api_key");
        assert_eq!(preflight.status, 204);
        assert_eq!(preflight.body, None);
        assert!(header(&preflight, "access-control-allow-methods").is_some());
    }

    #[test]
    fn any_other_method_is_a_json_405() {
        for method in ["POST", "DELETE", "HEAD", "PUT", "BREW"] {
            let a = answer(method, None, "", "");
            assert_eq!(a.status, 405, "{method}");
            assert_eq!(header(&a, "allow"), Some("GET, OPTIONS"));
            let body: serde_json::Value =
                serde_json::from_str(a.body.as_deref().unwrap_or_default()).unwrap_or_default();
            assert_eq!(body["error"]["code"], "method_not_allowed", "{method}");
        }
    }
}
