//! Type checking against the catalog's declared property and parameter types: unknown
//! entities, properties and parameters, and type mismatches are load-time errors.

use super::{BinaryOp, Effect, Expr, ExprError, Literal, Pos};
use std::collections::BTreeMap;
use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ValueType {
    String,
    Integer,
    Number,
    Boolean,
    /// The type of the literal `null`: compatible with every type.
    Null,
}

impl ValueType {
    fn numeric(self) -> bool {
        matches!(
            self,
            ValueType::Integer | ValueType::Number | ValueType::Null
        )
    }

    /// Whether a value of type `other` may be stored where `self` is declared.
    pub fn accepts(self, other: ValueType) -> bool {
        self == other
            || other == ValueType::Null
            || (self == ValueType::Number && other == ValueType::Integer)
    }

    fn comparable(self, other: ValueType) -> bool {
        self == other
            || self == ValueType::Null
            || other == ValueType::Null
            || (self.numeric() && other.numeric())
    }
}

impl fmt::Display for ValueType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ValueType::String => "string",
            ValueType::Integer => "integer",
            ValueType::Number => "number",
            ValueType::Boolean => "boolean",
            ValueType::Null => "null",
        })
    }
}

/// What an expression may refer to.
#[derive(Debug, Clone, Default)]
pub struct Scope {
    /// Binding name (`this`, a related entity, a created node) → (label, property types).
    pub bindings: BTreeMap<String, (String, BTreeMap<String, ValueType>)>,
    pub params: BTreeMap<String, ValueType>,
}

impl Scope {
    fn property(&self, binding: &str, property: &str, pos: Pos) -> Result<ValueType, ExprError> {
        let Some((label, properties)) = self.bindings.get(binding) else {
            let known: Vec<&str> = self.bindings.keys().map(String::as_str).collect();
            return Err(ExprError::at(
                pos,
                format!("unknown entity `{binding}` (known: {})", known.join(", ")),
            ));
        };
        properties.get(property).copied().ok_or_else(|| {
            let known: Vec<&str> = properties.keys().map(String::as_str).collect();
            ExprError::at(
                pos,
                format!(
                    "unknown property `{property}` of {label} `{binding}` (known: {})",
                    known.join(", ")
                ),
            )
        })
    }
}

pub fn check_expr(expr: &Expr, scope: &Scope) -> Result<ValueType, ExprError> {
    use ValueType::*;
    Ok(match expr {
        Expr::Literal(l) => literal_type(l),
        Expr::Param(name, pos) => *scope.params.get(name).ok_or_else(|| {
            let known: Vec<&str> = scope
                .params
                .keys()
                .map(std::string::String::as_str)
                .collect();
            ExprError::at(
                *pos,
                format!(
                    "unknown parameter `${name}` (declared: {})",
                    known.join(", ")
                ),
            )
        })?,
        Expr::Property {
            binding,
            property,
            pos,
        } => scope.property(binding, property, *pos)?,
        Expr::Now | Expr::Today | Expr::Caller => ValueType::String,
        Expr::Exists(binding, pos) => {
            if !scope.bindings.contains_key(binding) {
                return Err(ExprError::at(*pos, format!("unknown entity `{binding}`")));
            }
            Boolean
        }
        Expr::Not(inner, pos) => {
            expect(check_expr(inner, scope)?, Boolean, *pos, "`not`")?;
            Boolean
        }
        Expr::Neg(inner, pos) => {
            let t = check_expr(inner, scope)?;
            if !t.numeric() {
                return Err(ExprError::at(*pos, format!("cannot negate a {t}")));
            }
            t
        }
        Expr::IsNull { expr, .. } => {
            check_expr(expr, scope)?;
            Boolean
        }
        Expr::In { expr, list, pos } => {
            let t = check_expr(expr, scope)?;
            if let Some(bad) = list.iter().find(|l| !t.comparable(literal_type(l))) {
                return Err(ExprError::at(
                    *pos,
                    format!("`in` compares a {t} with {bad}, a {}", literal_type(bad)),
                ));
            }
            Boolean
        }
        Expr::Binary {
            op,
            left,
            right,
            pos,
        } => {
            let (l, r) = (check_expr(left, scope)?, check_expr(right, scope)?);
            match op {
                BinaryOp::And | BinaryOp::Or => {
                    let what = if *op == BinaryOp::And {
                        "`and`"
                    } else {
                        "`or`"
                    };
                    expect(l, Boolean, *pos, what)?;
                    expect(r, Boolean, *pos, what)?;
                    Boolean
                }
                BinaryOp::Eq | BinaryOp::Ne => {
                    if !l.comparable(r) {
                        return Err(ExprError::at(
                            *pos,
                            format!("cannot compare a {l} with a {r}"),
                        ));
                    }
                    Boolean
                }
                BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge => {
                    let ordered = (l.numeric() && r.numeric())
                        || (l.comparable(r) && matches!(l, String | Null));
                    if !ordered {
                        return Err(ExprError::at(*pos, format!("cannot order a {l} and a {r}")));
                    }
                    Boolean
                }
                BinaryOp::Add if l == String || r == String => String,
                BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Div => {
                    if !(l.numeric() && r.numeric()) {
                        return Err(ExprError::at(
                            *pos,
                            format!("arithmetic needs numbers, got a {l} and a {r}"),
                        ));
                    }
                    if l == Integer && r == Integer && *op != BinaryOp::Div {
                        Integer
                    } else {
                        Number
                    }
                }
            }
        }
    })
}

/// Checks one effect; a `create` adds its node to the scope for the effects after it.
/// `labels` are the declared entity types (label → property types).
pub fn check_effect(
    effect: &Effect,
    scope: &mut Scope,
    labels: &BTreeMap<String, BTreeMap<String, ValueType>>,
) -> Result<(), ExprError> {
    match effect {
        Effect::Set {
            binding,
            property,
            value,
            pos,
        } => {
            let declared = scope.property(binding, property, *pos)?;
            let actual = check_expr(value, scope)?;
            if !declared.accepts(actual) {
                return Err(ExprError::at(
                    *pos,
                    format!("`{binding}.{property}` is a {declared}; the value is a {actual}"),
                ));
            }
        }
        Effect::Create {
            label,
            name,
            properties,
            pos,
        } => {
            let Some(types) = labels.get(label) else {
                let known: Vec<&str> = labels.keys().map(String::as_str).collect();
                return Err(ExprError::at(
                    *pos,
                    format!(
                        "unknown entity type `{label}` (declared: {})",
                        known.join(", ")
                    ),
                ));
            };
            if scope.bindings.contains_key(name) {
                return Err(ExprError::at(*pos, format!("`{name}` is already bound")));
            }
            for (key, value) in properties {
                let declared = types.get(key).copied().ok_or_else(|| {
                    ExprError::at(*pos, format!("unknown property `{key}` of {label}"))
                })?;
                let actual = check_expr(value, scope)?;
                if !declared.accepts(actual) {
                    return Err(ExprError::at(
                        *pos,
                        format!("{label}.{key} is a {declared}; the value is a {actual}"),
                    ));
                }
            }
            scope
                .bindings
                .insert(name.clone(), (label.clone(), types.clone()));
        }
        Effect::Link { from, to, pos, .. } => {
            for end in [from, to] {
                if !scope.bindings.contains_key(end) {
                    return Err(ExprError::at(*pos, format!("unknown entity `{end}`")));
                }
            }
        }
    }
    Ok(())
}

fn literal_type(l: &Literal) -> ValueType {
    match l {
        Literal::Str(_) => ValueType::String,
        Literal::Int(_) => ValueType::Integer,
        Literal::Float(_) => ValueType::Number,
        Literal::Bool(_) => ValueType::Boolean,
        Literal::Null => ValueType::Null,
    }
}

fn expect(actual: ValueType, wanted: ValueType, pos: Pos, what: &str) -> Result<(), ExprError> {
    if wanted.accepts(actual) {
        Ok(())
    } else {
        Err(ExprError::at(
            pos,
            format!("{what} needs a {wanted}, got a {actual}"),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::super::{parse_effect, parse_expr};
    use super::*;

    fn scope() -> Scope {
        let order: BTreeMap<String, ValueType> = [
            ("status", ValueType::String),
            ("amount", ValueType::Number),
            ("lines", ValueType::Integer),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        let supplier: BTreeMap<String, ValueType> =
            [("blocked".to_string(), ValueType::Boolean)].into();
        Scope {
            bindings: [
                ("this".to_string(), ("PurchaseOrder".to_string(), order)),
                ("supplier".to_string(), ("Supplier".to_string(), supplier)),
            ]
            .into(),
            params: [("reason".to_string(), ValueType::String)].into(),
        }
    }

    fn type_of(text: &str) -> Result<ValueType, ExprError> {
        check_expr(&parse_expr(text).unwrap(), &scope())
    }

    #[test]
    fn well_typed() {
        assert_eq!(
            type_of("this.status == 'approved' and not supplier.blocked"),
            Ok(ValueType::Boolean)
        );
        assert_eq!(
            type_of("this.amount * 2 + this.lines"),
            Ok(ValueType::Number)
        );
        assert_eq!(type_of("this.lines + 1"), Ok(ValueType::Integer));
        assert_eq!(type_of("'x' + this.amount"), Ok(ValueType::String));
        assert_eq!(
            type_of("this.status in ['a', null]"),
            Ok(ValueType::Boolean)
        );
    }

    #[test]
    fn ill_typed_with_reasons() {
        let e = type_of("this.stauts == 'x'").unwrap_err();
        assert!(e.message.contains("unknown property `stauts`"), "{e}");
        let e = type_of("this.amount == 'x'").unwrap_err();
        assert!(
            e.message.contains("cannot compare a number with a string"),
            "{e}"
        );
        let e = type_of("supplier.blocked and this.amount").unwrap_err();
        assert!(e.message.contains("`and` needs a boolean"), "{e}");
        let e = type_of("$nope == 1").unwrap_err();
        assert!(e.message.contains("unknown parameter `$nope`"), "{e}");
        let e = type_of("account.balance > 0").unwrap_err();
        assert!(e.message.contains("unknown entity `account`"), "{e}");
        let e = type_of("this.status - 1").unwrap_err();
        assert!(e.message.contains("arithmetic needs numbers"), "{e}");
    }

    #[test]
    fn effects_are_checked_and_create_binds() {
        let labels: BTreeMap<String, BTreeMap<String, ValueType>> = [(
            "Payment".to_string(),
            [("amount".to_string(), ValueType::Number)].into(),
        )]
        .into();
        let mut s = scope();
        let set_bad = parse_effect("set this.amount = 'ten'").unwrap();
        assert!(check_effect(&set_bad, &mut s, &labels).is_err());
        let create = parse_effect("create Payment p { amount: this.amount }").unwrap();
        check_effect(&create, &mut s, &labels).unwrap();
        let link = parse_effect("link p -[:PAYS]-> this").unwrap();
        check_effect(&link, &mut s, &labels).unwrap();
        let unknown = parse_effect("create Refund r { }").unwrap();
        assert!(check_effect(&unknown, &mut s, &labels).is_err());
    }
}
