use neo4j_client::{AccessMode, Client, Transport};
use serde_json::Map;

/// The labels in use, from the live schema.
pub fn labels<T: Transport>(client: &Client<T>) -> Result<Vec<String>, neo4j_client::Neo4jError> {
    let result = client.run(
        "CALL db.labels() YIELD label RETURN label ORDER BY label LIMIT 1000",
        Map::new(),
        AccessMode::Read,
    )?;
    Ok(result
        .rows
        .iter()
        .filter_map(|r| r.first()?.as_str().map(str::to_string))
        .collect())
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
