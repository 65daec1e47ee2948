//! A deterministic stand-in for an OpenAI-compatible `/v1/embeddings` endpoint: a hashed
//! bag of features, L2-normalised, so texts sharing words get similar vectors. Features:
//! lower-cased Latin words and their character trigrams (so "payments" is near "payment"),
//! CJK characters and character bigrams. It is not a semantic model: it ranks by shared
//! surface features, differently weighted than BM25.

use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

pub const DIMENSIONS: usize = 256;

/// The embedding of one text.
pub fn embed(text: &str) -> Vec<f32> {
    let mut vector = vec![0f32; DIMENSIONS];
    let mut add = |feature: &str, weight: f32| {
        vector[(fnv1a(feature) % DIMENSIONS as u64) as usize] += weight;
    };
    let lower = text.to_lowercase();
    let mut word = String::new();
    let mut cjk_run: Vec<char> = Vec::new();
    let flush_word = |word: &mut String, add: &mut dyn FnMut(&str, f32)| {
        if word.chars().count() >= 2 {
            add(&format!("w:{word}"), 1.0);
            let padded: Vec<char> = format!("^{word}$").chars().collect();
            for t in padded.windows(3) {
                add(&format!("t:{}", t.iter().collect::<String>()), 0.4);
            }
        }
        word.clear();
    };
    let flush_cjk = |run: &mut Vec<char>, add: &mut dyn FnMut(&str, f32)| {
        for c in run.iter() {
            add(&format!("c:{c}"), 0.5);
        }
        for pair in run.windows(2) {
            add(&format!("b:{}{}", pair[0], pair[1]), 1.0);
        }
        run.clear();
    };
    for c in lower.chars() {
        if is_cjk(c) {
            flush_word(&mut word, &mut add);
            cjk_run.push(c);
        } else if c.is_alphanumeric() {
            flush_cjk(&mut cjk_run, &mut add);
            word.push(c);
        } else {
            flush_word(&mut word, &mut add);
            flush_cjk(&mut cjk_run, &mut add);
        }
    }
    flush_word(&mut word, &mut add);
    flush_cjk(&mut cjk_run, &mut add);
    let norm = vector.iter().map(|v| v * v).sum::<f32>().sqrt();
    if norm > 0.0 {
        vector.iter_mut().for_each(|v| *v /= norm);
    } else {
        // An empty text still needs a valid (non-zero) vector.
        vector[0] = 1.0;
    }
    vector
}

fn is_cjk(c: char) -> bool {
    matches!(c as u32, 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF | 0x3040..=0x30FF | 0xAC00..=0xD7AF)
}

fn fnv1a(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

struct Embeddings;

impl Respond for Embeddings {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let body: Value = match serde_json::from_slice(&request.body) {
            Ok(body) => body,
            Err(e) => return ResponseTemplate::new(400).set_body_string(e.to_string()),
        };
        let inputs: Vec<String> = match &body["input"] {
            Value::String(s) => vec![s.clone()],
            Value::Array(items) => items
                .iter()
                .map(|v| v.as_str().unwrap_or_default().to_string())
                .collect(),
            _ => return ResponseTemplate::new(400).set_body_string("`input` is required"),
        };
        let data: Vec<Value> = inputs
            .iter()
            .enumerate()
            .map(|(i, text)| json!({"object": "embedding", "index": i, "embedding": embed(text)}))
            .collect();
        ResponseTemplate::new(200).set_body_json(json!({
            "object": "list",
            "data": data,
            "model": body["model"],
            "usage": {"prompt_tokens": 0, "total_tokens": 0},
        }))
    }
}

/// Starts the stub; point `llm_origin` at its `uri()` (with `llm_base_path` `/v1`).
pub async fn start() -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/embeddings"))
        .respond_with(Embeddings)
        .mount(&server)
        .await;
    server
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cosine(a: &[f32], b: &[f32]) -> f32 {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }

    #[test]
    fn similar_texts_are_closer_than_unrelated_ones() {
        let q = embed("How are supplier payments approved?");
        let near = embed("Payment approval for suppliers needs two signatures.");
        let far = embed("The warehouse opens at eight.");
        assert!(cosine(&q, &near) > cosine(&q, &far));
        let zh = embed("供应商付款如何审批");
        assert!(cosine(&zh, &embed("供应商付款需要审批")) > cosine(&zh, &embed("仓库八点开门")));
        assert_eq!(embed("x y"), embed("x y"));
    }
}
