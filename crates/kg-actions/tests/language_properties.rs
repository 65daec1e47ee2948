//! Properties of the expression language over generated inputs.

use kg_actions::expr::{
    CypherParams, Scope, ValueType, check_expr, compile_expr, parse_effect, parse_expr,
};
use proptest::prelude::*;
use std::collections::BTreeMap;

fn scope() -> Scope {
    let props: BTreeMap<String, ValueType> = [
        ("n".to_string(), ValueType::Number),
        ("s".to_string(), ValueType::String),
        ("b".to_string(), ValueType::Boolean),
    ]
    .into();
    Scope {
        bindings: [("this".to_string(), ("T".to_string(), props))].into(),
        params: [("p".to_string(), ValueType::Number)].into(),
    }
}

/// Well-typed numeric expressions as text.
fn number() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        Just("this.n".to_string()),
        Just("$p".to_string()),
        (0u32..1000).prop_map(|i| i.to_string()),
        (0u32..1000).prop_map(|i| format!("{i}.5")),
    ];
    leaf.prop_recursive(4, 32, 2, |inner| {
        (
            inner.clone(),
            prop_oneof![Just("+"), Just("-"), Just("*"), Just("/")],
            inner,
        )
            .prop_map(|(a, op, b)| format!("({a} {op} {b})"))
    })
}

/// Well-typed boolean expressions as text, with string literals holding anything.
fn boolean() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        Just("this.b".to_string()),
        (
            number(),
            prop_oneof![Just("<"), Just(">="), Just("=="), Just("!=")],
            number()
        )
            .prop_map(|(a, op, b)| format!("{a} {op} {b}")),
        "[a-z '\"]{0,12}".prop_map(|s| format!("this.s == '{}'", s.replace('\'', "\\'"))),
        Just("this.s is not null".to_string()),
        Just("this.s in ['a', 'b']".to_string()),
    ];
    leaf.prop_recursive(3, 24, 2, |inner| {
        prop_oneof![
            (
                inner.clone(),
                prop_oneof![Just("and"), Just("or")],
                inner.clone()
            )
                .prop_map(|(a, op, b)| format!("({a} {op} {b})")),
            inner.prop_map(|a| format!("not {a}")),
        ]
    })
}

proptest! {
    #[test]
    fn parsing_never_panics(text in "\\PC{0,80}") {
        let _ = parse_expr(&text);
        let _ = parse_effect(&text);
    }

    /// Every generated boolean expression parses, checks as a boolean, and compiles to
    /// Cypher whose only quotes are the back-ticks around property names: every literal
    /// travels as a parameter.
    #[test]
    fn well_typed_expressions_compile_without_inline_values(text in boolean()) {
        let expr = parse_expr(&text).unwrap();
        prop_assert_eq!(check_expr(&expr, &scope()), Ok(ValueType::Boolean));
        let mut params = CypherParams::default();
        let cypher = compile_expr(&expr, &mut params);
        prop_assert!(!cypher.contains('\'') && !cypher.contains('"'), "{}", cypher);
        let opens = cypher.matches('(').count();
        prop_assert_eq!(opens, cypher.matches(')').count());
        for name in params.values.keys() {
            let reference = format!("${name}");
            prop_assert!(cypher.contains(&reference));
        }
    }

    /// A numeric expression is never accepted where a boolean is needed.
    #[test]
    fn numbers_are_not_conditions(text in number()) {
        let expr = parse_expr(&text).unwrap();
        let t = check_expr(&expr, &scope()).unwrap();
        prop_assert!(matches!(t, ValueType::Integer | ValueType::Number));
        let negated = parse_expr(&format!("not ({text})")).unwrap();
        prop_assert!(check_expr(&negated, &scope()).is_err());
    }
}
