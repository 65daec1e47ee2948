//! The labels and relationship types a statement names, so the tool can check them against
//! the live schema. A name after `:` is a label, or a relationship type inside the brackets
//! of a relationship pattern (`-[r:TYPE]-`); `|`, `&` and `!` continue a label expression.
//! Map literals (`{key: value}`) and type predicates (`x :: STRING`) are not names.

use super::lexer::Token;

#[derive(Clone, Copy, PartialEq)]
enum Bracket {
    Paren,
    Map,
    List,
    Relationship,
}

pub fn collect(tokens: &[&Token]) -> (Vec<String>, Vec<String>) {
    let mut labels: Vec<String> = Vec::new();
    let mut types: Vec<String> = Vec::new();
    let mut stack: Vec<Bracket> = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        let t = tokens[i];
        let before = i.checked_sub(1).map(|j| tokens[j]);
        match t {
            Token::Sym('(') => stack.push(Bracket::Paren),
            Token::Sym('{') => stack.push(Bracket::Map),
            Token::Sym('[') => stack.push(if before.is_some_and(|b| b.is_sym('-')) {
                Bracket::Relationship
            } else {
                Bracket::List
            }),
            Token::Sym(')') | Token::Sym('}') | Token::Sym(']') => {
                stack.pop();
            }
            Token::Sym(':') => {
                let inner = stack.last().copied();
                let type_predicate = tokens.get(i + 1).is_some_and(|n| n.is_sym(':'))
                    || before.is_some_and(|b| b.is_sym(':'));
                let after_name_or_open = match before {
                    Some(b) => {
                        b.name().is_some() || b.is_sym('(') || b.is_sym('[') || b.is_sym(')')
                    }
                    None => false,
                };
                if inner != Some(Bracket::Map) && !type_predicate && after_name_or_open {
                    let into = if inner == Some(Bracket::Relationship) {
                        &mut types
                    } else {
                        &mut labels
                    };
                    i = label_expression(tokens, i + 1, into);
                    continue;
                }
            }
            _ => {}
        }
        i += 1;
    }
    (labels, types)
}

/// Reads `A|B&!C:D` from `i`, adding each name; returns the index after it.
fn label_expression(tokens: &[&Token], mut i: usize, into: &mut Vec<String>) -> usize {
    loop {
        while tokens.get(i).is_some_and(|t| t.is_sym('!')) {
            i += 1;
        }
        match tokens.get(i).and_then(|t| t.name()) {
            Some(name) => {
                if !into.iter().any(|n| n == name) {
                    into.push(name.to_string());
                }
                i += 1;
            }
            None => return i,
        }
        match tokens.get(i) {
            Some(t) if t.is_sym('|') || t.is_sym('&') || t.is_sym(':') => i += 1,
            _ => return i,
        }
    }
}
