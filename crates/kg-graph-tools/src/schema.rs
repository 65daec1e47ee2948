use crate::graph_error::graph_error;
use crate::session::Graph;
use kg_wit::types::{Error, ErrorCode};
use neo4j_client::Transport;
use serde_json::json;

/// After a statement that matched `label` in a pattern every row needs (`MATCH (n:Label)`):
/// an unknown label is the same not-found error [`require_label`] gives, checked only when
/// the statement `found` nothing. Rows prove the label exists, so the tool needs no
/// `db.labels()` round trip before its statement, and a turn of such calls sends one graph
/// request per call; nothing found costs the look-up the check before the statement did.
///
/// A name the graph might refuse as a token (empty, a control character, very long) is
/// checked before the statement instead ([`require_odd_label_first`]): the caller then
/// gets the not-found error, never the graph's syntax error.
pub fn require_label_unless_found<T: Transport>(
    client: &Graph<'_, T>,
    label: &str,
    found: bool,
) -> Result<(), Error> {
    if found {
        return Ok(());
    }
    require_label(label, &client.labels(&[label]).map_err(graph_error)?)
}

/// Checks `label` against the graph's labels before a statement uses it when it is not a
/// name the statement can carry as is (see [`require_label_unless_found`]); any other name
/// is left to the check after the statement.
pub fn require_odd_label_first<T: Transport>(
    client: &Graph<'_, T>,
    label: &str,
) -> Result<(), Error> {
    // A plain name counts as found here: its check is the one after the statement. A
    // label the audience may not see is checked now, and is not in the list it is checked
    // against: it is refused exactly as a label the graph lacks.
    let hidden = !client.view().label_visible(label);
    require_label_unless_found(client, label, is_plain_name(label) && !hidden)
}

/// The longest name sent in a statement unchecked.
const PLAIN_NAME_MAX_CHARS: usize = 256;

/// A name any Neo4j accepts as a back-tick-quoted token.
fn is_plain_name(name: &str) -> bool {
    !name.is_empty()
        && name.chars().count() <= PLAIN_NAME_MAX_CHARS
        && !name.chars().any(char::is_control)
}

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
    fn only_ordinary_names_go_unchecked_into_a_statement() {
        for name in ["Supplier", "Purchase Order", "a`b", "Lieferant_ä", "供应商"] {
            assert!(is_plain_name(name), "{name}");
        }
        let long = "L".repeat(PLAIN_NAME_MAX_CHARS + 1);
        for name in ["", "a\u{0}b", "tab\there", long.as_str()] {
            assert!(!is_plain_name(name), "{name:?}");
        }
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
