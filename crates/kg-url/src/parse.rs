use crate::UrlError;
use url::Url;

const ORIGIN: &str = "scheme://host[:port] with an http or https scheme and nothing after the port, e.g. http://127.0.0.1:7474 or https://[2001:db8::1]:7473";
const BASE: &str = "an http(s) URL without query or fragment, e.g. http://127.0.0.1:11434/v1";
const ANY: &str = "an absolute http(s) URL, e.g. https://id.example.com/realms/acme";

/// `scheme://host[:port]`: what `allowed_outbound_hosts` lists, and where the Neo4j and
/// LLM clients put their own paths. One trailing `/` is tolerated (it is the root path).
pub fn http_origin(variable: &str, text: &str) -> Result<Url, UrlError> {
    let url = http_url_as(variable, text, ORIGIN)?;
    let fail = |reason: String| Err(error(variable, reason, ORIGIN));
    if url.path() != "/" {
        return fail(format!(
            "`{}` has a path ({})",
            shown(text, &url),
            url.path()
        ));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return fail(format!("`{}` has a query or fragment", shown(text, &url)));
    }
    Ok(url)
}

/// An http(s) URL that others are appended to (`{base}/chat/completions`,
/// `{endpoint}/v1/traces`): a path is fine, a query or fragment would end up in the middle.
pub fn http_base(variable: &str, text: &str) -> Result<Url, UrlError> {
    let url = http_url_as(variable, text, BASE)?;
    if url.query().is_some() || url.fragment().is_some() {
        return Err(error(
            variable,
            format!("`{}` has a query or fragment", shown(text, &url)),
            BASE,
        ));
    }
    Ok(url)
}

/// Any absolute http(s) URL with a host and no user info.
pub fn http_url(variable: &str, text: &str) -> Result<Url, UrlError> {
    http_url_as(variable, text, ANY)
}

fn http_url_as(variable: &str, text: &str, expected: &'static str) -> Result<Url, UrlError> {
    let text = text.trim();
    if text.is_empty() {
        return Err(error(variable, "it is empty".into(), expected));
    }
    // The URL Standard drops tabs and line breaks inside a URL without a word; a value
    // compared as text (an issuer with `iss`) or pasted with a stray newline must not
    // silently become another URL.
    if text.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(error(
            variable,
            "it contains whitespace or a control character".into(),
            expected,
        ));
    }
    // `graph:7474` parses as a URL with the scheme `graph`: say what was meant.
    if !text.contains("://") && !text.contains('@') {
        return Err(error(
            variable,
            format!("`{text}` has no scheme (http:// or https://)"),
            expected,
        ));
    }
    let url = Url::parse(text).map_err(|e| {
        // The parser's reason, and the value only if it cannot hold a password.
        let value = if text.contains('@') {
            String::new()
        } else {
            format!(" `{text}`")
        };
        // The workspace pins `idna_adapter` 1.0 (ASCII only: the Unicode tables of its
        // default cost every component ~210 KB), so an internationalised host name must
        // come in the form DNS uses anyway.
        let hint = if e == url::ParseError::IdnaError && !text.is_ascii() {
            "; write a non-ASCII host name in its xn-- (punycode) form"
        } else {
            ""
        };
        error(
            variable,
            format!("the value{value} is not a URL ({e}{hint})"),
            expected,
        )
    })?;
    let fail = |reason: String| Err(error(variable, reason, expected));
    if !url.username().is_empty() || url.password().is_some() {
        return fail(
            "it carries user info (`user:password@`); credentials belong in their secret variables, never in a URL"
                .into(),
        );
    }
    if !matches!(url.scheme(), "http" | "https") {
        return fail(format!(
            "`{}` has the scheme `{}`",
            shown(text, &url),
            url.scheme()
        ));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return fail(format!("`{}` has no host", shown(text, &url)));
    }
    Ok(url)
}

/// The value for an error message: as given, or, when it holds user info, as parsed with
/// the user info left out.
fn shown(text: &str, url: &Url) -> String {
    if text.contains('@') {
        let mut bare = url.clone();
        let _ = bare.set_username("");
        let _ = bare.set_password(None);
        bare.to_string()
    } else {
        text.trim().to_string()
    }
}

fn error(variable: &str, reason: String, expected: &'static str) -> UrlError {
    UrlError {
        variable: variable.to_string(),
        reason,
        expected,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_are_scheme_host_and_port() {
        for (text, serialised) in [
            ("http://127.0.0.1:7474", "http://127.0.0.1:7474/"),
            ("http://127.0.0.1:7474/", "http://127.0.0.1:7474/"),
            (
                " https://x.databases.neo4j.io ",
                "https://x.databases.neo4j.io/",
            ),
            ("http://[::1]:7474", "http://[::1]:7474/"),
            ("HTTP://Graph.Example:80", "http://graph.example/"),
            (
                "http://xn--bcher-kva.example",
                "http://xn--bcher-kva.example/",
            ),
        ] {
            let url = http_origin("neo4j_origin", text).unwrap();
            assert_eq!(url.as_str(), serialised, "{text}");
        }
    }

    #[test]
    fn bad_origins_name_the_variable_and_why() {
        for (text, says) in [
            ("", "it is empty"),
            ("127.0.0.1:7474", "`127.0.0.1:7474` has no scheme"),
            ("graph:7474", "has no scheme (http:// or https://)"),
            ("mailto:x@y", "has the scheme `mailto`"),
            ("bolt://graph:7687", "has the scheme `bolt`"),
            ("http://", "is not a URL (empty host)"),
            ("http://graph:99999", "is not a URL (invalid port number)"),
            ("http://[::1", "is not a URL (invalid IPv6 address)"),
            ("http://graph:7474/db", "has a path (/db)"),
            ("http://graph:7474?x=1", "has a query or fragment"),
            ("http://neo4j:s3cret@graph:7474", "carries user info"),
            ("http://gra\nph:7474", "whitespace or a control character"),
            ("http://graph :7474", "whitespace or a control character"),
            ("http://bücher.example", "its xn-- (punycode) form"),
        ] {
            let e = http_origin("neo4j_origin", text).unwrap_err().to_string();
            assert!(e.starts_with("variable `neo4j_origin`: "), "{e}");
            assert!(e.contains(says), "{text:?}: {e}");
            assert!(e.contains("expected scheme://host[:port]"), "{e}");
            assert!(!e.contains("s3cret"), "{e}");
        }
    }

    #[test]
    fn bases_keep_their_path() {
        let url = http_base("llm_base_path", "http://127.0.0.1:11434/v1").unwrap();
        assert_eq!(url.path(), "/v1");
        let e = http_base("llm_base_path", "http://h/v1?key=x").unwrap_err();
        assert!(e.to_string().contains("query or fragment"), "{e}");
    }

    #[test]
    fn user_info_is_never_echoed() {
        for text in [
            "http://u:pw-secret@h/x?y",
            "http://u:pw-secret@[::1",
            "ftp://u:pw-secret@h",
        ] {
            for e in [
                http_url("v", text).err(),
                http_base("v", text).err(),
                http_origin("v", text).err(),
            ] {
                let e = e.expect("refused").to_string();
                assert!(!e.contains("pw-secret"), "{e}");
            }
        }
    }
}
