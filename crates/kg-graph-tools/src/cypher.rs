/// Back-tick quotes a label or relationship type (doubling embedded back-ticks): Cypher
/// cannot take them as parameters. Whatever the name, the quote cannot be closed early
/// (the property test below), so a name the tool checks against the live schema only
/// after its statement found nothing (`schema::require_label_unless_found`) stays a name.
pub fn quote_name(name: &str) -> String {
    format!("`{}`", name.replace('`', "``"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn quoting() {
        assert_eq!(quote_name("Supplier"), "`Supplier`");
        assert_eq!(quote_name("a`b"), "`a``b`");
    }

    proptest! {
        #[test]
        fn a_quoted_name_never_closes_early(name in ".{0,20}") {
            let q = quote_name(&name);
            let inner = &q[1..q.len() - 1];
            // Inside, back-ticks only come in pairs: the quote cannot be escaped.
            prop_assert!(inner.replace("``", "").find('`').is_none());
        }
    }
}
