//! Business keys a text mentions (`PO-0001`, `SUP-007`, `PRD-036`): words of letters,
//! digits, `-` and `_` holding at least one letter and one digit. Ingest links each chunk
//! to the graph nodes whose `id` is one of them, so the agent can go from a passage to the
//! entities it is about.

use std::collections::BTreeSet;

const MIN_LEN: usize = 3;
const MAX_LEN: usize = 64;
/// A document mentioning more than this many keys is linked on the first ones only.
pub const MAX_KEYS: usize = 500;

pub fn candidate_keys(text: &str) -> Vec<String> {
    let mut keys = BTreeSet::new();
    for word in text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_')) {
        let word = word.trim_matches(|c| c == '-' || c == '_');
        if (MIN_LEN..=MAX_LEN).contains(&word.len())
            && word.chars().any(|c| c.is_ascii_digit())
            && word.chars().any(|c| c.is_ascii_alphabetic())
        {
            keys.insert(word.to_string());
        }
        if keys.len() >= MAX_KEYS {
            break;
        }
    }
    keys.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_business_keys_and_nothing_else() {
        let text =
            "Order PO-0001 (supplier SUP-007), 5,000 EUR; see PO-0001 again, 订单PRD-036。 2026 x1";
        assert_eq!(candidate_keys(text), ["PO-0001", "PRD-036", "SUP-007"]);
        assert!(candidate_keys("plain words and 12345").is_empty());
    }
}
