//! Follow-up questions ("and their invoices?") and the rule fallback for rewriting them
//! when no LLM is available: carry the previous question's subject along.

use crate::text::{has_han, normalise, words};
use kg_wit::types::{Message, Role};

const FOLLOW_UP_OPENERS_EN: &[&str] = &[
    "and",
    "also",
    "what about",
    "how about",
    "and what about",
    "same for",
    "then",
    "but",
    "plus",
];
const REFERRING_WORDS_EN: &[&str] = &[
    "their", "them", "they", "its", "it", "those", "these", "that", "this", "his", "her", "theirs",
    "ones", "one",
];
const FOLLOW_UP_MARKERS_ZH: &[&str] = &[
    "那", "它", "他们", "她们", "它们", "这些", "那些", "这个", "那个", "还有", "其", "呢", "同样",
    "也",
];

/// The last user turn before this message, if any.
pub fn previous_question(history: &[Message]) -> Option<&str> {
    history
        .iter()
        .rev()
        .find(|m| m.role == Role::User && !m.content.trim().is_empty())
        .map(|m| m.content.as_str())
}

/// True when `message` leans on the conversation: it opens like a continuation or refers
/// back with a pronoun, and there is an earlier question to lean on.
pub fn is_follow_up(message: &str, history: &[Message]) -> bool {
    if previous_question(history).is_none() {
        return false;
    }
    let norm = normalise(message);
    if has_han(&norm) {
        return norm.chars().count() <= 20 && FOLLOW_UP_MARKERS_ZH.iter().any(|m| norm.contains(m));
    }
    let tokens = words(&norm);
    let spaced = format!("{} ", tokens.join(" "));
    let opens = FOLLOW_UP_OPENERS_EN
        .iter()
        .any(|o| spaced.starts_with(&format!("{o} ")));
    let refers = tokens
        .iter()
        .any(|t| REFERRING_WORDS_EN.contains(&t.as_str()));
    tokens.len() <= 12 && (opens || refers)
}

/// The subject of a question: entity ids (`PO-001`), quoted names and capitalised names
/// ("ACME"), else the question itself.
pub fn subject_of(question: &str) -> String {
    let mut found: Vec<String> = Vec::new();
    let mut push = |s: &str| {
        let s = s.trim_matches(|c: char| !c.is_alphanumeric()).to_string();
        if !s.is_empty() && !found.contains(&s) {
            found.push(s);
        }
    };
    for quoted in question
        .split(['"', '“', '”', '「', '」'])
        .skip(1)
        .step_by(2)
    {
        push(quoted);
    }
    for (position, word) in question
        .split(|c: char| !(c.is_alphanumeric() || c == '-' || c == '_'))
        .filter(|w| !w.is_empty())
        .enumerate()
    {
        let id_like = word.contains('-') && word.chars().any(|c| c.is_ascii_digit());
        let upper = word.chars().filter(|c| c.is_ascii_uppercase()).count();
        let name_like = word.is_ascii()
            && word.chars().next().is_some_and(|c| c.is_ascii_uppercase())
            && (position > 0 || upper >= 2)
            && word.chars().count() >= 2;
        if id_like || name_like {
            push(word);
        }
    }
    if found.is_empty() {
        question.trim().to_string()
    } else {
        found.join(", ")
    }
}

/// Without an LLM: the follow-up with the previous question's subject attached, so the
/// next step at least knows what "their" means.
pub fn rewrite_by_rule(message: &str, history: &[Message]) -> String {
    let Some(previous) = previous_question(history) else {
        return message.trim().to_string();
    };
    if !is_follow_up(message, history) {
        return message.trim().to_string();
    }
    let subject = subject_of(previous);
    if has_han(message) {
        format!("{}（指上一个问题：{}）", message.trim(), subject)
    } else {
        format!("{} (regarding: {})", message.trim(), subject)
    }
}
