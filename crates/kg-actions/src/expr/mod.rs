//! The catalog's expression language: preconditions are boolean expressions over the
//! entity (`this`), its related entities, the action's parameters and `now()`; effects set
//! properties, create nodes and link them. See `catalog/README.md` for the grammar.

mod check;
mod compile;
mod lexer;
mod parser;

pub use check::{Scope, ValueType, check_effect, check_expr};
pub use compile::{CypherParams, action_param, compile_expr, quote, variable};
pub use lexer::Pos;
pub use parser::{parse_effect, parse_expr};

use std::fmt;

#[derive(Debug, Clone, PartialEq)]
pub enum Literal {
    Str(String),
    Int(i64),
    Float(f64),
    Bool(bool),
    Null,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinaryOp {
    And,
    Or,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Add,
    Sub,
    Mul,
    Div,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    Literal(Literal),
    /// `$name`: an action parameter.
    Param(String, Pos),
    /// `binding.property`, e.g. `this.status`, `supplier.blocked`.
    Property {
        binding: String,
        property: String,
        pos: Pos,
    },
    /// `now()`: the execution time, RFC 3339 text.
    Now,
    /// `today()`: the execution date, `YYYY-MM-DD`.
    Today,
    /// `caller()`: the authenticated subject whose request runs the action (the approver
    /// who redeems an approval, for an action that needs one): what an effect records as
    /// the person, never a parameter the request could set to any name.
    Caller,
    /// `exists(binding)`: the related entity is present.
    Exists(String, Pos),
    Not(Box<Expr>, Pos),
    Neg(Box<Expr>, Pos),
    Binary {
        op: BinaryOp,
        left: Box<Expr>,
        right: Box<Expr>,
        pos: Pos,
    },
    /// `x in ['a', 'b']`
    In {
        expr: Box<Expr>,
        list: Vec<Literal>,
        pos: Pos,
    },
    /// `x is null` / `x is not null`
    IsNull {
        expr: Box<Expr>,
        negated: bool,
    },
}

/// One statement of an action's `effects`.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// `set binding.property = expr`
    Set {
        binding: String,
        property: String,
        value: Expr,
        pos: Pos,
    },
    /// `create Label name { property: expr, … }`
    Create {
        label: String,
        name: String,
        properties: Vec<(String, Expr)>,
        pos: Pos,
    },
    /// `link from -[:TYPE]-> to`
    Link {
        from: String,
        rel_type: String,
        to: String,
        pos: Pos,
    },
}

/// A problem in an expression, at a 1-based line and column of its text.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("line {line}, column {column}: {message}")]
pub struct ExprError {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

impl ExprError {
    pub fn at(pos: Pos, message: impl Into<String>) -> Self {
        ExprError {
            line: pos.line,
            column: pos.column,
            message: message.into(),
        }
    }
}

impl fmt::Display for Literal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Literal::Str(s) => write!(f, "{s:?}"),
            Literal::Int(i) => write!(f, "{i}"),
            Literal::Float(x) => write!(f, "{x}"),
            Literal::Bool(b) => write!(f, "{b}"),
            Literal::Null => write!(f, "null"),
        }
    }
}
