//! Compiles checked expressions to Cypher. Every literal becomes a parameter; entity names
//! become prefixed Cypher variables and property names back-tick-quoted identifiers, so no
//! value or name from the catalog is ever spliced into the statement as text.

use super::{BinaryOp, Expr, Literal};
use serde_json::{Map, Value as Json};

/// The parameters a statement collects while expressions compile.
#[derive(Debug, Default, Clone)]
pub struct CypherParams {
    pub values: Map<String, Json>,
    next: usize,
}

impl CypherParams {
    /// Adds a value and returns the `$name` that refers to it.
    pub fn add(&mut self, value: Json) -> String {
        let name = format!("v{}", self.next);
        self.next += 1;
        self.values.insert(name.clone(), value);
        format!("${name}")
    }
}

/// The Cypher variable of an entity binding.
pub fn variable(binding: &str) -> String {
    format!("e_{binding}")
}

/// The Cypher parameter holding action parameter `name`.
pub fn action_param(name: &str) -> String {
    format!("$p_{name}")
}

pub fn quote(name: &str) -> String {
    format!("`{}`", name.replace('`', "``"))
}

pub fn compile_expr(expr: &Expr, params: &mut CypherParams) -> String {
    match expr {
        Expr::Literal(l) => params.add(literal_json(l)),
        Expr::Param(name, _) => action_param(name),
        Expr::Property {
            binding, property, ..
        } => format!("{}.{}", variable(binding), quote(property)),
        Expr::Now => "$now".into(),
        Expr::Today => "$today".into(),
        Expr::Caller => "$actor".into(),
        Expr::Exists(binding, _) => format!("({} IS NOT NULL)", variable(binding)),
        Expr::Not(inner, _) => format!("(NOT {})", compile_expr(inner, params)),
        Expr::Neg(inner, _) => format!("(-{})", compile_expr(inner, params)),
        Expr::IsNull { expr, negated } => format!(
            "({} IS {}NULL)",
            compile_expr(expr, params),
            if *negated { "NOT " } else { "" }
        ),
        Expr::In { expr, list, .. } => {
            let list = params.add(Json::Array(list.iter().map(literal_json).collect()));
            format!("({} IN {list})", compile_expr(expr, params))
        }
        Expr::Binary {
            op, left, right, ..
        } => {
            let (l, r) = (compile_expr(left, params), compile_expr(right, params));
            let op = match op {
                BinaryOp::And => "AND",
                BinaryOp::Or => "OR",
                BinaryOp::Eq => "=",
                BinaryOp::Ne => "<>",
                BinaryOp::Lt => "<",
                BinaryOp::Le => "<=",
                BinaryOp::Gt => ">",
                BinaryOp::Ge => ">=",
                BinaryOp::Add => "+",
                BinaryOp::Sub => "-",
                BinaryOp::Mul => "*",
                BinaryOp::Div => "/",
            };
            format!("({l} {op} {r})")
        }
    }
}

fn literal_json(l: &Literal) -> Json {
    match l {
        Literal::Str(s) => Json::String(s.clone()),
        Literal::Int(i) => Json::from(*i),
        Literal::Float(x) => serde_json::Number::from_f64(*x).map_or(Json::Null, Json::Number),
        Literal::Bool(b) => Json::Bool(*b),
        Literal::Null => Json::Null,
    }
}

#[cfg(test)]
mod tests {
    use super::super::parse_expr;
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn compiles_with_parameters() {
        let mut p = CypherParams::default();
        let e = parse_expr("this.status == 'approved' and account.balance >= this.amount * 1.5")
            .unwrap();
        assert_eq!(
            compile_expr(&e, &mut p),
            "((e_this.`status` = $v0) AND (e_account.`balance` >= (e_this.`amount` * $v1)))"
        );
        assert_eq!(p.values["v0"], "approved");
        assert_eq!(p.values["v1"], 1.5);
        let e = parse_expr("$reason is not null or not exists(supplier)").unwrap();
        assert_eq!(
            compile_expr(&e, &mut p),
            "(($p_reason IS NOT NULL) OR (NOT (e_supplier IS NOT NULL)))"
        );
    }

    proptest! {
        /// Whatever a string literal holds, it reaches Cypher only as a parameter.
        #[test]
        fn string_literals_never_reach_the_statement(s in "[^'\\\\\n]{0,40}") {
            let text = format!("this.status == '{s}'");
            let e = parse_expr(&text).unwrap();
            let mut p = CypherParams::default();
            let cypher = compile_expr(&e, &mut p);
            prop_assert_eq!(cypher, "(e_this.`status` = $v0)");
            prop_assert_eq!(&p.values["v0"], &Json::String(s));
        }
    }
}
