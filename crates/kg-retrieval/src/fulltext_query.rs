//! A user's question as a Lucene query for `db.index.fulltext.queryNodes`: every Lucene
//! operator character escaped and the operator words lower-cased, so the question is
//! matched as plain words (any of them, BM25-ranked) and never fails to parse.

const SPECIAL: &[char] = &[
    '+', '-', '&', '|', '!', '(', ')', '{', '}', '[', ']', '^', '"', '~', '*', '?', ':', '\\', '/',
];

pub fn lucene_query(question: &str) -> String {
    let mut out = String::with_capacity(question.len() + 8);
    for word in question.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        let word = match word {
            "AND" | "OR" | "NOT" | "TO" => word.to_lowercase(),
            _ => word.to_string(),
        };
        for c in word.chars() {
            if SPECIAL.contains(&c) {
                out.push('\\');
            }
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn operators_are_escaped() {
        assert_eq!(lucene_query("a AND (b) c:d"), r"a and \(b\) c\:d");
        assert_eq!(lucene_query("  付款  流程？"), "付款 流程？");
        assert_eq!(lucene_query("x*"), r"x\*");
    }

    proptest! {
        /// Every special character is preceded by an unescaped backslash.
        #[test]
        fn no_special_character_is_left_bare(q in "\\PC{0,40}") {
            let out = lucene_query(&q);
            let chars: Vec<char> = out.chars().collect();
            let mut i = 0;
            while i < chars.len() {
                if chars[i] == '\\' {
                    prop_assert!(i + 1 < chars.len() && SPECIAL.contains(&chars[i + 1]));
                    i += 2;
                } else {
                    prop_assert!(!SPECIAL.contains(&chars[i]), "{}", out);
                    i += 1;
                }
            }
        }
    }
}
