//! The rule classifier: fast, deterministic, bilingual. It is confident only where the
//! wording leaves no doubt; everything else gets a low confidence so hybrid routing asks
//! the LLM.

use crate::decision::{Decision, Intent, Mode};
use crate::lexicon::*;
use crate::text::{has_han, is_decoration, is_question, normalise, words};

/// Classifies `message` by rules alone.
pub fn classify(message: &str) -> Decision {
    let (intent, confidence, reason) = judge(&normalise(message));
    let clarification = (intent == Intent::Clarify).then(|| clarifying_question(message));
    Decision {
        intent,
        confidence,
        method: Mode::Rule,
        reason,
        refined_question: message.trim().to_string(),
        clarification,
        warnings: vec![],
    }
}

/// What to ask when the message says nothing we can act on: the built-in
/// `clarification` prompt in the message's language.
pub fn clarifying_question(message: &str) -> String {
    let lang = kg_prompts::Lang::chinese_if(has_han(message));
    kg_prompts::built_in_prompt(kg_prompts::CLARIFICATION, lang).render(&[])
}

fn judge(norm: &str) -> (Intent, f32, String) {
    if norm.is_empty() {
        return (Intent::Clarify, 0.9, "the message is empty".into());
    }
    if is_small_talk(norm) {
        return (
            Intent::Answer,
            0.95,
            "greeting, thanks or small talk".into(),
        );
    }
    if let Some(rest) = strip_greeting(norm) {
        let (intent, confidence, reason) = judge(rest);
        return (intent, confidence, format!("{reason} (after a greeting)"));
    }
    let tokens = words(norm);
    let imperative = strip_politeness(norm);
    if let Some(verb) = leading_action_verb(&imperative) {
        return (
            Intent::Action,
            0.9,
            format!("starts with the action verb `{verb}`"),
        );
    }
    let question = is_question(norm, &tokens);
    if let Some(cue) = document_cue(norm, &tokens) {
        return (
            Intent::Document,
            0.85,
            format!("mentions `{cue}`, which points at documents"),
        );
    }
    if let Some(verb) = chinese_action_verb(&imperative) {
        return if question {
            (
                Intent::Query,
                0.6,
                format!("asks a question around the action verb `{verb}`"),
            )
        } else {
            (
                Intent::Action,
                0.9,
                format!("asks to `{verb}` (action verb, not a question)"),
            )
        };
    }
    if let Some(verb) = tokens
        .iter()
        .find(|w| ACTION_VERBS_EN.contains(&w.as_str()))
    {
        return if question {
            (
                Intent::Query,
                0.6,
                format!("asks a question around the action verb `{verb}`"),
            )
        } else {
            (
                Intent::Action,
                0.75,
                format!("mentions the action verb `{verb}`"),
            )
        };
    }
    if let Some(cue) = query_cue(norm, &tokens) {
        return (
            Intent::Query,
            0.85,
            format!("asks about graph data (`{cue}`)"),
        );
    }
    let short = tokens.len() <= 2 && !norm.chars().any(|c| c.is_ascii_digit());
    if short && !question && !has_han(norm) || (has_han(norm) && norm.chars().count() <= 2) {
        return (
            Intent::Answer,
            0.5,
            "a short remark with no question or request".into(),
        );
    }
    (
        Intent::Query,
        0.6,
        "no rule matched; a question is the default".into(),
    )
}

/// Every segment between punctuation is a small-talk phrase ("hi, thanks!").
fn is_small_talk(norm: &str) -> bool {
    let mut segments = norm
        .split(|c: char| is_decoration(c) && c != ' ' && c != '\'')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .peekable();
    segments.peek().is_some()
        && segments.all(|s| SMALL_TALK_EN.contains(&s) || SMALL_TALK_ZH.contains(&s))
}

/// The rest of a message that opens with a greeting, if there is a rest.
fn strip_greeting(norm: &str) -> Option<&str> {
    GREETING_PREFIXES.iter().find_map(|g| {
        let rest = norm.strip_prefix(g)?;
        // "hi" must not match "history": an ASCII greeting ends at a non-letter.
        if g.is_ascii() && rest.starts_with(|c: char| c.is_alphanumeric()) {
            return None;
        }
        let rest = rest.trim_start_matches(is_decoration);
        (!rest.is_empty()).then_some(rest)
    })
}

/// The message without leading politeness ("please", "could you", "请帮我").
fn strip_politeness(norm: &str) -> String {
    let mut rest = norm.trim();
    loop {
        let before = rest;
        for p in POLITE_PREFIXES_EN {
            if let Some(r) = rest.strip_prefix(p)
                && (r.is_empty() || r.starts_with(|c: char| !c.is_alphanumeric()))
            {
                rest = r.trim_start_matches(is_decoration);
            }
        }
        for p in POLITE_PREFIXES_ZH {
            if let Some(r) = rest.strip_prefix(p) {
                rest = r.trim_start_matches(is_decoration);
            }
        }
        if rest == before {
            return rest.to_string();
        }
    }
}

fn leading_action_verb(imperative: &str) -> Option<&'static str> {
    let first = words(imperative).into_iter().next()?;
    ACTION_VERBS_EN.iter().copied().find(|v| *v == first)
}

/// A Chinese action verb used as a verb, not as a state ("已付款", "被取消的").
fn chinese_action_verb(text: &str) -> Option<&'static str> {
    ACTION_VERBS_ZH.iter().copied().find(|verb| {
        text.match_indices(verb).any(|(at, _)| {
            let before = text[..at].chars().next_back();
            !before.is_some_and(|c| ZH_STATE_MARKERS.contains(&c))
        })
    })
}

fn document_cue(norm: &str, tokens: &[String]) -> Option<&'static str> {
    DOCUMENT_CUES_EN
        .iter()
        .copied()
        .find(|c| tokens.iter().any(|t| t == c))
        .or_else(|| DOCUMENT_CUES_ZH.iter().copied().find(|c| norm.contains(c)))
}

fn query_cue(norm: &str, tokens: &[String]) -> Option<&'static str> {
    let spaced = format!(" {} ", tokens.join(" "));
    QUERY_CUES_EN
        .iter()
        .copied()
        .find(|c| spaced.contains(&format!(" {c} ")))
        .or_else(|| QUERY_CUES_ZH.iter().copied().find(|c| norm.contains(c)))
}
