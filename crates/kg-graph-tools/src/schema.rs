use kg_wit::types::{Error, ErrorCode};
use serde_json::json;

/// An unknown label is a not-found error that lists the close matches.
pub fn require_label(label: &str, known: &[String]) -> Result<(), Error> {
    if known.iter().any(|k| k == label) {
        return Ok(());
    }
    let suggestions = close_matches(label, known);
    let mut e = Error::new(
        ErrorCode::NotFound,
        match suggestions.first() {
            Some(best) => {
                format!("no class (label) `{label}` in the graph; did you mean `{best}`?")
            }
            None => format!("no class (label) `{label}` in the graph"),
        },
    );
    e.detail = Some(json!({"did_you_mean": suggestions, "known_labels": known}).to_string());
    Err(e)
}

/// An unknown relationship type is a not-found error that lists the close matches.
pub fn require_relationship_type(rel_type: &str, known: &[String]) -> Result<(), Error> {
    if known.iter().any(|k| k == rel_type) {
        return Ok(());
    }
    let mut e = Error::new(
        ErrorCode::NotFound,
        format!("no relationship type `{rel_type}` in the graph"),
    );
    e.detail = Some(
        json!({"did_you_mean": close_matches(rel_type, known), "known_types": known}).to_string(),
    );
    Err(e)
}

/// Known names closest to `name`, best first: case-insensitive equality, plural or
/// singular forms and small edit distances (`PurchaseOrders` → `PurchaseOrder`).
pub fn close_matches(name: &str, known: &[String]) -> Vec<String> {
    let wanted = name.to_lowercase();
    let mut scored: Vec<(f64, &String)> = known
        .iter()
        .map(|k| {
            let candidate = k.to_lowercase();
            let score = if candidate == wanted {
                1.0
            } else if candidate.trim_end_matches('s') == wanted.trim_end_matches('s') {
                0.99
            } else {
                strsim::jaro_winkler(&wanted, &candidate)
            };
            (score, k)
        })
        .filter(|(score, _)| *score >= 0.85)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(b.1)));
    scored.into_iter().take(3).map(|(_, k)| k.clone()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn known() -> Vec<String> {
        ["Supplier", "PurchaseOrder", "Product", "Payment", "Invoice"]
            .iter()
            .map(|s| s.to_string())
            .collect()
    }

    #[test]
    fn suggests_the_intended_name() {
        assert_eq!(
            close_matches("PurchaseOrders", &known())[0],
            "PurchaseOrder"
        );
        assert_eq!(close_matches("supplier", &known())[0], "Supplier");
        assert_eq!(close_matches("Suplier", &known())[0], "Supplier");
        assert!(close_matches("Warehouse", &known()).is_empty());
    }
}
