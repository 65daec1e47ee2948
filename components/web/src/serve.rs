//! What to answer for a request: plain functions over the embedded table, tested natively.

/// One file of the built web app, with its pre-compressed variants.
#[derive(Debug)]
pub struct Asset {
    pub path: &'static str,
    pub content_type: &'static str,
    pub etag: &'static str,
    pub identity: &'static [u8],
    pub gzip: Option<&'static [u8]>,
    pub brotli: Option<&'static [u8]>,
}

/// The page may load only its own scripts, styles and API; no inline script, no frames,
/// no plugins. `img-src data:` is for the empty favicon; `style-src` has no
/// 'unsafe-inline' (styles set through the CSSOM by the graph view are allowed).
pub const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; \
frame-ancestors 'none'";

/// The OpenID Connect issuer origin the page may `fetch` (discovery and the token
/// endpoint, for the browser's sign-in), from the component's variables: only when
/// `auth_mode` includes `oidc`, `oidc_client_id` is set (the app signs in with the issuer)
/// and `oidc_origin` is a plain `http(s)://host[:port]` (anything else, e.g. a value that
/// would smuggle another directive into the policy, is ignored).
pub fn issuer_origin(
    auth_mode: Option<&str>,
    client_id: Option<&str>,
    origin: Option<&str>,
) -> Option<String> {
    let oidc = auth_mode?
        .split(',')
        .any(|m| m.trim().eq_ignore_ascii_case("oidc"));
    if !oidc || client_id.is_none_or(|c| c.trim().is_empty()) {
        return None;
    }
    let origin = origin?.trim().trim_end_matches('/');
    let rest = origin
        .strip_prefix("https://")
        .or_else(|| origin.strip_prefix("http://"))?;
    let (host, port) = match rest.rsplit_once(':') {
        Some((h, p)) if !h.ends_with(']') || rest.starts_with('[') => (h, Some(p)),
        _ => (rest, None),
    };
    let host_ok = !host.is_empty()
        && (host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-')
            || (host.starts_with('[')
                && host.ends_with(']')
                && host[1..host.len() - 1]
                    .bytes()
                    .all(|b| b.is_ascii_hexdigit() || b == b':')));
    let port_ok =
        port.is_none_or(|p| !p.is_empty() && p.len() <= 5 && p.bytes().all(|b| b.is_ascii_digit()));
    (host_ok && port_ok).then(|| origin.to_ascii_lowercase())
}

/// Lets the page connect to `origin` as well as to itself (`connect-src`), in every
/// Content-Security-Policy header of `reply`.
pub fn allow_connect(reply: &mut Reply, origin: &str) {
    for (name, value) in &mut reply.headers {
        if name.eq_ignore_ascii_case("content-security-policy") {
            *value = value.replace(
                "connect-src 'self'",
                &format!("connect-src 'self' {origin}"),
            );
        }
    }
}

pub const INDEX_CACHE: &str = "no-cache";
pub const ASSET_CACHE: &str = "public, max-age=31536000, immutable";

#[derive(Debug, PartialEq)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(&'static str, String)>,
    pub body: Vec<u8>,
}

impl Reply {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Encoding {
    Brotli,
    Gzip,
    Identity,
}

/// Reads `Accept-Encoding` (RFC 9110 §12.5.3): the q-values decide, `q=0` refuses, `*`
/// stands for any coding not named; brotli wins a tie with gzip (it is smaller).
pub fn accepted(header: Option<&str>, has_br: bool, has_gzip: bool) -> Encoding {
    let Some(header) = header else {
        return Encoding::Identity;
    };
    let mut br: Option<f32> = None;
    let mut gz: Option<f32> = None;
    let mut star: Option<f32> = None;
    for item in header.split(',') {
        let mut parts = item.split(';');
        let coding = parts.next().unwrap_or("").trim().to_ascii_lowercase();
        let mut q = 1.0f32;
        for p in parts {
            let p = p.trim();
            if let Some(v) = p.strip_prefix("q=").or_else(|| p.strip_prefix("Q=")) {
                q = v.trim().parse::<f32>().unwrap_or(0.0).clamp(0.0, 1.0);
            }
        }
        match coding.as_str() {
            "br" => br = Some(q),
            "gzip" | "x-gzip" => gz = Some(q),
            "*" => star = Some(q),
            _ => {}
        }
    }
    let br = if has_br {
        br.or(star).unwrap_or(0.0)
    } else {
        0.0
    };
    let gz = if has_gzip {
        gz.or(star).unwrap_or(0.0)
    } else {
        0.0
    };
    if br > 0.0 && br >= gz {
        Encoding::Brotli
    } else if gz > 0.0 {
        Encoding::Gzip
    } else {
        Encoding::Identity
    }
}

fn security_headers(headers: &mut Vec<(&'static str, String)>) {
    headers.push(("content-security-policy", CSP.into()));
    headers.push(("x-content-type-options", "nosniff".into()));
    headers.push(("referrer-policy", "no-referrer".into()));
    headers.push(("x-frame-options", "DENY".into()));
}

/// A JSON error, `{"error": {"code", "message"}}`, with the security headers.
pub fn error(status: u16, code: &str, message: &str) -> Reply {
    let body = format!(
        "{{\"error\":{{\"code\":\"{code}\",\"message\":\"{}\"}}}}",
        message.replace('\\', "\\\\").replace('"', "\\\"")
    );
    let mut headers = vec![
        ("content-type", "application/json".to_string()),
        ("cache-control", "no-store".to_string()),
    ];
    if status == 405 {
        headers.push(("allow", "GET, HEAD".into()));
    }
    security_headers(&mut headers);
    Reply {
        status,
        headers,
        body: body.into_bytes(),
    }
}

/// Answers `method path` from `assets`. `/` is the app's `index.html` (revalidated on every
/// load: `no-cache` with an ETag); `/assets/*` are content-hashed files cached for a year;
/// anything else is a JSON 404.
pub fn serve(
    assets: &[Asset],
    method: &str,
    path: &str,
    accept_encoding: Option<&str>,
    if_none_match: Option<&str>,
) -> Reply {
    let path = path.split(['?', '#']).next().unwrap_or("");
    let head = method.eq_ignore_ascii_case("HEAD");
    if !head && !method.eq_ignore_ascii_case("GET") {
        return error(405, "method_not_allowed", "only GET and HEAD");
    }
    let (wanted, index) = match path {
        "" | "/" | "/index.html" => ("/index.html", true),
        p if p.starts_with("/assets/") => (p, false),
        _ => return error(404, "not_found", "no such page"),
    };
    let Some(asset) = assets.iter().find(|a| a.path == wanted) else {
        return error(404, "not_found", "no such asset");
    };
    let mut headers = vec![
        ("content-type", asset.content_type.to_string()),
        (
            "cache-control",
            if index { INDEX_CACHE } else { ASSET_CACHE }.to_string(),
        ),
        ("etag", asset.etag.to_string()),
    ];
    let compressible = asset.gzip.is_some() || asset.brotli.is_some();
    if compressible {
        headers.push(("vary", "Accept-Encoding".into()));
    }
    security_headers(&mut headers);
    if let Some(tags) = if_none_match
        && tags
            .split(',')
            .any(|t| t.trim() == asset.etag || t.trim() == "*")
    {
        return Reply {
            status: 304,
            headers,
            body: Vec::new(),
        };
    }
    let (body, coding) = match accepted(
        accept_encoding,
        asset.brotli.is_some(),
        asset.gzip.is_some(),
    ) {
        Encoding::Brotli => (asset.brotli.unwrap_or(asset.identity), Some("br")),
        Encoding::Gzip => (asset.gzip.unwrap_or(asset.identity), Some("gzip")),
        Encoding::Identity => (asset.identity, None),
    };
    if let Some(c) = coding {
        headers.push(("content-encoding", c.into()));
    }
    headers.push(("content-length", body.len().to_string()));
    Reply {
        status: 200,
        headers,
        body: if head { Vec::new() } else { body.to_vec() },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TABLE: &[Asset] = &[
        Asset {
            path: "/index.html",
            content_type: "text/html; charset=utf-8",
            etag: "\"abc\"",
            identity: b"<html>index</html>",
            gzip: Some(b"GZ-index"),
            brotli: Some(b"BR-index"),
        },
        Asset {
            path: "/assets/app-1234.js",
            content_type: "text/javascript; charset=utf-8",
            etag: "\"def\"",
            identity: b"console.log(1)",
            gzip: Some(b"GZ-js"),
            brotli: None,
        },
    ];

    fn get(path: &str, ae: Option<&str>) -> Reply {
        serve(TABLE, "GET", path, ae, None)
    }

    #[test]
    fn index_is_revalidated_and_assets_are_immutable() {
        for p in ["/", "/index.html", "/?x=1"] {
            let r = get(p, None);
            assert_eq!(r.status, 200, "{p}");
            assert_eq!(r.header("cache-control"), Some("no-cache"));
            assert_eq!(r.header("content-type"), Some("text/html; charset=utf-8"));
            assert_eq!(r.body, b"<html>index</html>");
        }
        let r = get("/assets/app-1234.js", None);
        assert_eq!(r.status, 200);
        assert_eq!(
            r.header("cache-control"),
            Some("public, max-age=31536000, immutable")
        );
        assert_eq!(r.header("vary"), Some("Accept-Encoding"));
        assert_eq!(r.header("content-encoding"), None);
    }

    #[test]
    fn every_answer_carries_the_security_headers() {
        for r in [
            get("/", None),
            get("/assets/app-1234.js", None),
            get("/assets/nope.js", None),
            serve(TABLE, "POST", "/", None, None),
        ] {
            let csp = r.header("content-security-policy").unwrap_or_default();
            assert!(csp.starts_with("default-src 'self'"), "{csp}");
            assert!(csp.contains("connect-src 'self'"));
            assert!(!csp.contains("unsafe-inline") && !csp.contains("unsafe-eval"));
            assert_eq!(r.header("x-content-type-options"), Some("nosniff"));
        }
    }

    #[test]
    fn the_issuer_origin_is_allowed_only_for_browser_sign_in() {
        let ok = |mode, client, origin| issuer_origin(Some(mode), client, Some(origin));
        assert_eq!(
            ok("api_key,oidc", Some("web"), "https://kc.example.com/").as_deref(),
            Some("https://kc.example.com")
        );
        assert_eq!(
            ok("oidc", Some("web"), "http://127.0.0.1:8089").as_deref(),
            Some("http://127.0.0.1:8089")
        );
        assert_eq!(
            ok("oidc", Some("web"), "https://[::1]:8443").as_deref(),
            Some("https://[::1]:8443")
        );
        assert_eq!(ok("api_key", Some("web"), "https://kc.example.com"), None);
        assert_eq!(ok("oidc", None, "https://kc.example.com"), None);
        assert_eq!(ok("oidc", Some(" "), "https://kc.example.com"), None);
        for bad in [
            "kc.example.com",
            "ftp://kc.example.com",
            "https://kc.example.com/realms/acme",
            "https://kc.example.com; script-src *",
            "https://a b",
            "https://kc.example.com:80a",
            "https://",
        ] {
            assert_eq!(ok("oidc", Some("web"), bad), None, "{bad}");
        }
        let mut r = get("/", None);
        allow_connect(&mut r, "https://kc.example.com");
        let csp = r.header("content-security-policy").unwrap_or_default();
        assert!(
            csp.contains("connect-src 'self' https://kc.example.com;"),
            "{csp}"
        );
        assert!(csp.contains("script-src 'self';"), "{csp}");
    }

    #[test]
    fn unknown_assets_and_pages_are_json_404s() {
        for p in [
            "/assets/nope.js",
            "/assets/",
            "/assets/../index.html",
            "/other",
        ] {
            let r = get(p, Some("gzip"));
            assert_eq!(r.status, 404, "{p}");
            assert_eq!(r.header("content-type"), Some("application/json"));
            let body = String::from_utf8(r.body).unwrap_or_default();
            assert!(body.contains("\"code\":\"not_found\""), "{body}");
        }
    }

    #[test]
    fn methods_other_than_get_and_head_are_refused() {
        let r = serve(TABLE, "POST", "/", None, None);
        assert_eq!(r.status, 405);
        assert_eq!(r.header("allow"), Some("GET, HEAD"));
        let r = serve(TABLE, "HEAD", "/", Some("br"), None);
        assert_eq!(r.status, 200);
        assert!(r.body.is_empty());
        assert_eq!(r.header("content-length"), Some("8"));
        assert_eq!(r.header("content-encoding"), Some("br"));
    }

    #[test]
    fn encoding_follows_accept_encoding() {
        let enc = |ae| get("/", ae).header("content-encoding").map(str::to_string);
        assert_eq!(enc(None), None);
        assert_eq!(enc(Some("gzip, deflate, br, zstd")).as_deref(), Some("br"));
        assert_eq!(enc(Some("gzip")).as_deref(), Some("gzip"));
        assert_eq!(enc(Some("br;q=0, gzip")).as_deref(), Some("gzip"));
        assert_eq!(enc(Some("br;q=0.5, gzip;q=0.9")).as_deref(), Some("gzip"));
        assert_eq!(enc(Some("*")).as_deref(), Some("br"));
        assert_eq!(enc(Some("*;q=0")), None);
        assert_eq!(enc(Some("identity")), None);
        assert_eq!(enc(Some("GZIP;Q=1")).as_deref(), Some("gzip"));
        assert_eq!(enc(Some("br;q=nonsense")), None);
        // The variant the client gets is the one served.
        assert_eq!(get("/", Some("gzip")).body, b"GZ-index");
        // No brotli file: gzip even when br is preferred.
        let r = get("/assets/app-1234.js", Some("br, gzip"));
        assert_eq!(r.header("content-encoding"), Some("gzip"));
        assert_eq!(r.body, b"GZ-js");
    }

    #[test]
    fn a_matching_etag_is_a_304() {
        let r = serve(TABLE, "GET", "/", Some("gzip"), Some("\"zzz\", \"abc\""));
        assert_eq!(r.status, 304);
        assert!(r.body.is_empty());
        assert_eq!(serve(TABLE, "GET", "/", None, Some("\"zzz\"")).status, 200);
    }
}
