//! Citations: ids that occur in the evidence AND in the answer. An id the answer mentions
//! but no evidence holds is never cited, so a made-up entity cannot look sourced.

use crate::synthesis::Evidence;
use kg_wit::types::BatchSummary;
use serde_json::Value as Json;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Citation {
    /// An entity id or a document/chunk id present in the evidence.
    pub reference: String,
    pub label: String,
}

/// Keys whose string values are ids.
const ID_KEYS: &[&str] = &["id", "entity_id", "document_id", "doc_id", "chunk_id"];
/// Keys that name the object an id belongs to.
const LABEL_KEYS: &[&str] = &["name", "caption", "title", "label"];

/// Every (id, label) the evidence holds, in first-seen order.
pub fn known_references(evidence: &[Evidence], batch: Option<&BatchSummary>) -> Vec<Citation> {
    let mut found: Vec<Citation> = Vec::new();
    let mut add = |reference: &str, label: Option<&str>| {
        let reference = reference.trim();
        if reference.is_empty() || found.iter().any(|c| c.reference == reference) {
            return;
        }
        found.push(Citation {
            reference: reference.to_string(),
            label: label.unwrap_or(reference).to_string(),
        });
    };
    for item in evidence {
        if let Some(document) = item.source.strip_prefix("document:") {
            add(document, None);
        }
        if let Ok(data) = serde_json::from_str::<Json>(&item.data) {
            walk(&data, &mut add);
        }
    }
    if let Some(batch) = batch {
        for outcome in batch.successes.iter().chain(&batch.failures) {
            add(&outcome.entity_id, None);
        }
    }
    found
}

fn walk(value: &Json, add: &mut impl FnMut(&str, Option<&str>)) {
    match value {
        Json::Object(object) => {
            let label = LABEL_KEYS
                .iter()
                .find_map(|k| object.get(*k).and_then(Json::as_str));
            for key in ID_KEYS {
                if let Some(id) = object.get(*key).and_then(Json::as_str) {
                    add(id, label);
                }
            }
            object.values().for_each(|v| walk(v, add));
        }
        Json::Array(items) => items.iter().for_each(|v| walk(v, add)),
        _ => {}
    }
}

/// The known references the answer mentions, as whole tokens, in the answer's order.
pub fn cite(answer: &str, known: &[Citation]) -> Vec<Citation> {
    let mut cited: Vec<(usize, Citation)> = known
        .iter()
        .filter_map(|c| mention(answer, &c.reference).map(|at| (at, c.clone())))
        .collect();
    cited.sort_by_key(|(at, _)| *at);
    cited.into_iter().map(|(_, c)| c).collect()
}

/// Where `reference` first occurs in `text` not glued to a longer id ("PO-1" is not in "PO-12").
fn mention(text: &str, reference: &str) -> Option<usize> {
    let glued = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
    text.match_indices(reference).map(|(at, _)| at).find(|&at| {
        let before = text[..at].chars().next_back();
        let after = text[at + reference.len()..].chars().next();
        !before.is_some_and(glued) && !after.is_some_and(glued)
    })
}
