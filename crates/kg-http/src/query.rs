//! Query-string parameters.

/// The first value of `name` in a query string (`a=1&b=x%20y`), percent-decoded, with `+`
/// read as a space. A value that is not UTF-8 after decoding is lossily converted.
pub fn query_param(query: &str, name: &str) -> Option<String> {
    query.split('&').find_map(|pair| {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        (key == name).then(|| {
            percent_encoding::percent_decode_str(&value.replace('+', " "))
                .decode_utf8_lossy()
                .into_owned()
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_and_decodes() {
        assert_eq!(
            query_param("limit=5&cursor=2026%7CLOG-1", "cursor").as_deref(),
            Some("2026|LOG-1")
        );
        assert_eq!(
            query_param("entity_type=Purchase+Order", "entity_type").as_deref(),
            Some("Purchase Order")
        );
        assert_eq!(query_param("limit", "limit").as_deref(), Some(""));
        assert_eq!(query_param("", "limit"), None);
    }
}
