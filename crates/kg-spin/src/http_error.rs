//! A failed outbound request in words: the host's `wasi:http` error code as a reason a
//! person can read (`connection refused`), never its Rust debug form
//! (`ErrorCode::ConnectionRefused`), which would leak internal type names into health
//! reports and error messages.

use spin_sdk::http::ErrorCode;

pub fn describe(code: &ErrorCode) -> String {
    match code {
        ErrorCode::DnsTimeout => "DNS lookup timed out".into(),
        ErrorCode::DnsError(_) => "DNS lookup failed".into(),
        ErrorCode::ConnectionRefused => "connection refused".into(),
        ErrorCode::ConnectionTimeout => "connection timed out".into(),
        ErrorCode::ConnectionReadTimeout => "reading the answer timed out".into(),
        ErrorCode::ConnectionWriteTimeout => "sending the request timed out".into(),
        ErrorCode::ConnectionTerminated => "the connection closed".into(),
        ErrorCode::HttpResponseTimeout => "no answer in time".into(),
        ErrorCode::InternalError(Some(message)) => format!("host error: {message}"),
        other => variant_words(&format!("{other:?}")),
    }
}

/// `ErrorCode::TlsCertificateError` or `DestinationIpProhibited` (a Debug form, payload
/// dropped) → `tls certificate error` / `destination ip prohibited`.
fn variant_words(debug: &str) -> String {
    let name = debug.rsplit("::").next().unwrap_or(debug);
    let name = name.split(['(', ' ', '{']).next().unwrap_or(name);
    let mut words = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_uppercase() && i > 0 {
            words.push(' ');
        }
        words.extend(c.to_lowercase());
    }
    if words.is_empty() {
        "the request failed".into()
    } else {
        words
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_read_as_words_without_type_names() {
        assert_eq!(
            describe(&ErrorCode::ConnectionRefused),
            "connection refused"
        );
        for code in [
            ErrorCode::TlsCertificateError,
            ErrorCode::DestinationIpProhibited,
            ErrorCode::HttpRequestBodySize(Some(10)),
            ErrorCode::InternalError(None),
        ] {
            let text = describe(&code);
            assert!(
                !text.contains("ErrorCode") && !text.contains('(') && !text.is_empty(),
                "{text}"
            );
        }
        assert_eq!(
            describe(&ErrorCode::TlsCertificateError),
            "tls certificate error"
        );
        assert_eq!(
            describe(&ErrorCode::HttpRequestBodySize(Some(10))),
            "http request body size"
        );
    }
}
