//! The byte cap on a tool's result: an answer larger than [`MAX_RESULT_BYTES`] of JSON
//! loses items from the end of its largest arrays until it fits, and says it was cut.

use serde_json::Value as Json;

/// 256 KiB: plenty for an LLM's context, small enough for a WIT call and an HTTP answer.
pub const MAX_RESULT_BYTES: usize = 256 * 1024;

/// Shrinks `data` to at most `max` bytes of JSON; true when anything was removed.
pub fn cap(data: &mut Json, max: usize) -> bool {
    let mut cut = false;
    let mut size = data.to_string().len();
    while size > max {
        let Some(array) = largest_array(data) else {
            // No array left to shorten (one huge scalar): replace the answer by a note.
            *data =
                serde_json::json!({"error": "the result is too large to return", "bytes": size});
            return true;
        };
        // Drop about the share of items that is over the cap, at least one.
        let len = array.len();
        let keep = (len as f64 * max as f64 / size as f64).floor() as usize;
        array.truncate(keep.min(len - 1));
        cut = true;
        size = data.to_string().len();
    }
    cut
}

/// The non-empty array with the largest JSON text, anywhere in `value`.
fn largest_array(value: &mut Json) -> Option<&mut Vec<Json>> {
    fn find(value: &Json, path: &mut Vec<usize>, best: &mut Option<(usize, Vec<usize>)>) {
        let children: Vec<&Json> = match value {
            Json::Array(items) => {
                if !items.is_empty() {
                    let size = value.to_string().len();
                    if best.as_ref().is_none_or(|(s, _)| size > *s) {
                        *best = Some((size, path.clone()));
                    }
                }
                items.iter().collect()
            }
            Json::Object(map) => map.values().collect(),
            _ => return,
        };
        for (i, child) in children.into_iter().enumerate() {
            path.push(i);
            find(child, path, best);
            path.pop();
        }
    }
    let mut best = None;
    find(value, &mut Vec::new(), &mut best);
    let (_, path) = best?;
    let mut at = value;
    for i in path {
        at = match at {
            Json::Array(items) => items.get_mut(i)?,
            Json::Object(map) => map.values_mut().nth(i)?,
            _ => return None,
        };
    }
    at.as_array_mut()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    #[test]
    fn small_answers_are_untouched() {
        let mut data = json!({"rows": [[1, "a"], [2, "b"]]});
        assert!(!cap(&mut data, 1000));
        assert_eq!(data, json!({"rows": [[1, "a"], [2, "b"]]}));
    }

    #[test]
    fn the_largest_array_is_shortened_from_the_end() {
        let rows: Vec<Json> = (0..1000).map(|i| json!([i, "x".repeat(100)])).collect();
        let mut data = json!({"fields": ["i", "s"], "rows": rows});
        assert!(cap(&mut data, 10_000));
        assert!(data.to_string().len() <= 10_000);
        assert_eq!(data["fields"], json!(["i", "s"]));
        assert_eq!(data["rows"][0][0], 0);
        assert!(data["rows"].as_array().unwrap().len() > 50);
    }

    proptest! {
        #[test]
        fn the_result_always_fits(n in 0usize..300, width in 0usize..500, max in 50usize..20_000) {
            let rows: Vec<Json> = (0..n).map(|i| json!({"i": i, "s": "y".repeat(width)})).collect();
            let mut data = json!({"nested": {"rows": rows}});
            let before = data.to_string().len();
            let cut = cap(&mut data, max);
            prop_assert!(data.to_string().len() <= max.max(80));
            prop_assert_eq!(cut, before > max);
        }
    }
}
