//! Small text helpers shared by the rules.

/// Lower case, trimmed, without the punctuation and emoji people put around small talk.
pub fn normalise(message: &str) -> String {
    message
        .trim()
        .to_lowercase()
        .trim_matches(|c: char| is_decoration(c))
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// Punctuation (ASCII and full-width) and symbols that carry no intent.
pub fn is_decoration(c: char) -> bool {
    c.is_ascii_punctuation()
        || c.is_whitespace()
        || "。，、！？；：～…“”‘’（）【】《》~😀🙂😊👋🙏❤".contains(c)
}

/// True when the text contains Chinese (Han) characters.
pub fn has_han(text: &str) -> bool {
    text.chars().any(is_han)
}

pub fn is_han(c: char) -> bool {
    matches!(c, '\u{4e00}'..='\u{9fff}' | '\u{3400}'..='\u{4dbf}' | '\u{f900}'..='\u{faff}')
}

/// ASCII words of the text, lower case.
pub fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '-'))
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// Whether the message asks something rather than orders something.
pub fn is_question(normalised_with_marks: &str, words: &[String]) -> bool {
    const EN: &[&str] = &[
        "what", "which", "who", "whom", "whose", "when", "where", "why", "how", "is", "are", "was",
        "were", "do", "does", "did", "can", "could", "should", "would", "will", "has", "have",
        "list", "show", "find", "count", "tell", "give", "describe",
    ];
    const ZH: &[&str] = &[
        "吗",
        "哪",
        "多少",
        "什么",
        "是否",
        "几",
        "怎么",
        "如何",
        "为什么",
        "谁",
        "列出",
        "查询",
        "查看",
        "显示",
        "统计",
        "有没有",
        "告诉",
    ];
    normalised_with_marks.contains('?')
        || normalised_with_marks.contains('？')
        || words.first().is_some_and(|w| EN.contains(&w.as_str()))
        || ZH.iter().any(|m| normalised_with_marks.contains(m))
}
