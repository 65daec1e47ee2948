//! Recursive-descent parser. Precedence, loosest first: `or`, `and`, `not`, comparisons
//! (`== != < <= > >=`, `in [...]`, `is [not] null`), `+ -`, `* /`, unary `-`.

use super::lexer::{Pos, Token, tokenize};
use super::{BinaryOp, Effect, Expr, ExprError, Literal};

const RESERVED: &[&str] = &[
    "and", "or", "not", "in", "is", "null", "true", "false", "set", "create", "link",
];

pub fn parse_expr(text: &str) -> Result<Expr, ExprError> {
    let mut p = Parser::new(text)?;
    let expr = p.expr()?;
    p.end()?;
    Ok(expr)
}

pub fn parse_effect(text: &str) -> Result<Effect, ExprError> {
    let mut p = Parser::new(text)?;
    let pos = p.pos();
    let effect = match p.next_ident()?.as_str() {
        "set" => {
            let (binding, property, pos) = p.property()?;
            p.expect(&Token::Assign, "`=`")?;
            let value = p.expr()?;
            Effect::Set {
                binding,
                property,
                value,
                pos,
            }
        }
        "create" => {
            let label = p.name("a label")?;
            let name = p.name("a name for the new node")?;
            p.expect(&Token::LBrace, "`{`")?;
            let mut properties = Vec::new();
            if !p.eat(&Token::RBrace) {
                loop {
                    let key = p.name("a property name")?;
                    p.expect(&Token::Colon, "`:`")?;
                    properties.push((key, p.expr()?));
                    if p.eat(&Token::RBrace) {
                        break;
                    }
                    p.expect(&Token::Comma, "`,` or `}`")?;
                }
            }
            Effect::Create {
                label,
                name,
                properties,
                pos,
            }
        }
        "link" => {
            let from = p.name("the source node")?;
            p.expect(&Token::Minus, "`-[:TYPE]->`")?;
            p.expect(&Token::LBracket, "`[`")?;
            p.expect(&Token::Colon, "`:`")?;
            let rel_type = p.name("a relationship type")?;
            p.expect(&Token::RBracket, "`]`")?;
            p.expect(&Token::ArrowRight, "`->`")?;
            let to = p.name("the target node")?;
            Effect::Link {
                from,
                rel_type,
                to,
                pos,
            }
        }
        other => {
            return Err(ExprError::at(
                pos,
                format!("an effect starts with `set`, `create` or `link`, not `{other}`"),
            ));
        }
    };
    p.end()?;
    Ok(effect)
}

struct Parser {
    tokens: Vec<(Token, Pos)>,
    at: usize,
    end: Pos,
}

impl Parser {
    fn new(text: &str) -> Result<Self, ExprError> {
        let tokens = tokenize(text)?;
        let lines = text.split('\n').count();
        let last = text.rsplit('\n').next().unwrap_or_default();
        Ok(Parser {
            tokens,
            at: 0,
            end: Pos {
                line: lines,
                column: last.chars().count() + 1,
            },
        })
    }

    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.at).map(|t| &t.0)
    }

    fn pos(&self) -> Pos {
        self.tokens.get(self.at).map_or(self.end, |t| t.1)
    }

    fn eat(&mut self, token: &Token) -> bool {
        if self.peek() == Some(token) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn eat_word(&mut self, word: &str) -> bool {
        if matches!(self.peek(), Some(Token::Ident(w)) if w == word) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, token: &Token, what: &str) -> Result<(), ExprError> {
        if self.eat(token) {
            Ok(())
        } else {
            Err(self.unexpected(what))
        }
    }

    fn unexpected(&self, what: &str) -> ExprError {
        match self.peek() {
            Some(t) => ExprError::at(self.pos(), format!("expected {what}, found {t:?}")),
            None => ExprError::at(self.pos(), format!("expected {what}, found the end")),
        }
    }

    fn end(&self) -> Result<(), ExprError> {
        match self.peek() {
            None => Ok(()),
            Some(_) => Err(self.unexpected("the end")),
        }
    }

    fn next_ident(&mut self) -> Result<String, ExprError> {
        match self.peek() {
            Some(Token::Ident(name)) => {
                let name = name.clone();
                self.at += 1;
                Ok(name)
            }
            _ => Err(self.unexpected("a name")),
        }
    }

    /// An identifier that is not a keyword.
    fn name(&mut self, what: &str) -> Result<String, ExprError> {
        match self.peek() {
            Some(Token::Ident(name)) if !RESERVED.contains(&name.as_str()) => {
                let name = name.clone();
                self.at += 1;
                Ok(name)
            }
            _ => Err(self.unexpected(what)),
        }
    }

    fn property(&mut self) -> Result<(String, String, Pos), ExprError> {
        let pos = self.pos();
        let binding = self.name("an entity (`this` or a related entity)")?;
        self.expect(&Token::Dot, "`.`")?;
        let property = self.name("a property name")?;
        Ok((binding, property, pos))
    }

    fn expr(&mut self) -> Result<Expr, ExprError> {
        let mut left = self.and()?;
        loop {
            let pos = self.pos();
            if !self.eat_word("or") {
                return Ok(left);
            }
            let right = self.and()?;
            left = binary(BinaryOp::Or, left, right, pos);
        }
    }

    fn and(&mut self) -> Result<Expr, ExprError> {
        let mut left = self.not()?;
        loop {
            let pos = self.pos();
            if !self.eat_word("and") {
                return Ok(left);
            }
            let right = self.not()?;
            left = binary(BinaryOp::And, left, right, pos);
        }
    }

    fn not(&mut self) -> Result<Expr, ExprError> {
        let pos = self.pos();
        if self.eat_word("not") {
            return Ok(Expr::Not(Box::new(self.not()?), pos));
        }
        self.comparison()
    }

    fn comparison(&mut self) -> Result<Expr, ExprError> {
        let left = self.sum()?;
        let pos = self.pos();
        let op = match self.peek() {
            Some(Token::Eq) => BinaryOp::Eq,
            Some(Token::Ne) => BinaryOp::Ne,
            Some(Token::Lt) => BinaryOp::Lt,
            Some(Token::Le) => BinaryOp::Le,
            Some(Token::Gt) => BinaryOp::Gt,
            Some(Token::Ge) => BinaryOp::Ge,
            Some(Token::Ident(w)) if w == "in" => {
                self.at += 1;
                return Ok(Expr::In {
                    expr: Box::new(left),
                    list: self.literal_list()?,
                    pos,
                });
            }
            Some(Token::Ident(w)) if w == "is" => {
                self.at += 1;
                let negated = self.eat_word("not");
                if !self.eat_word("null") {
                    return Err(self.unexpected("`null`"));
                }
                return Ok(Expr::IsNull {
                    expr: Box::new(left),
                    negated,
                });
            }
            _ => return Ok(left),
        };
        self.at += 1;
        let right = self.sum()?;
        Ok(binary(op, left, right, pos))
    }

    fn literal_list(&mut self) -> Result<Vec<Literal>, ExprError> {
        self.expect(&Token::LBracket, "`[`")?;
        let mut list = Vec::new();
        if self.eat(&Token::RBracket) {
            return Ok(list);
        }
        loop {
            match self.primary()? {
                Expr::Literal(l) => list.push(l),
                _ => return Err(ExprError::at(self.pos(), "`in` lists hold literals only")),
            }
            if self.eat(&Token::RBracket) {
                return Ok(list);
            }
            self.expect(&Token::Comma, "`,` or `]`")?;
        }
    }

    fn sum(&mut self) -> Result<Expr, ExprError> {
        let mut left = self.product()?;
        loop {
            let pos = self.pos();
            let op = match self.peek() {
                Some(Token::Plus) => BinaryOp::Add,
                Some(Token::Minus) => BinaryOp::Sub,
                _ => return Ok(left),
            };
            self.at += 1;
            let right = self.product()?;
            left = binary(op, left, right, pos);
        }
    }

    fn product(&mut self) -> Result<Expr, ExprError> {
        let mut left = self.unary()?;
        loop {
            let pos = self.pos();
            let op = match self.peek() {
                Some(Token::Star) => BinaryOp::Mul,
                Some(Token::Slash) => BinaryOp::Div,
                _ => return Ok(left),
            };
            self.at += 1;
            let right = self.unary()?;
            left = binary(op, left, right, pos);
        }
    }

    fn unary(&mut self) -> Result<Expr, ExprError> {
        let pos = self.pos();
        if self.eat(&Token::Minus) {
            return Ok(match self.unary()? {
                Expr::Literal(Literal::Int(i)) => Expr::Literal(Literal::Int(-i)),
                Expr::Literal(Literal::Float(x)) => Expr::Literal(Literal::Float(-x)),
                other => Expr::Neg(Box::new(other), pos),
            });
        }
        self.primary()
    }

    fn primary(&mut self) -> Result<Expr, ExprError> {
        let pos = self.pos();
        let Some(token) = self.peek().cloned() else {
            return Err(self.unexpected("a value"));
        };
        self.at += 1;
        Ok(match token {
            Token::Str(s) => Expr::Literal(Literal::Str(s)),
            Token::Int(i) => Expr::Literal(Literal::Int(i)),
            Token::Float(x) => Expr::Literal(Literal::Float(x)),
            Token::Param(name) => Expr::Param(name, pos),
            Token::LParen => {
                let inner = self.expr()?;
                self.expect(&Token::RParen, "`)`")?;
                inner
            }
            Token::Ident(word) => match word.as_str() {
                "true" => Expr::Literal(Literal::Bool(true)),
                "false" => Expr::Literal(Literal::Bool(false)),
                "null" => Expr::Literal(Literal::Null),
                _ if self.peek() == Some(&Token::LParen) => self.call(&word, pos)?,
                _ if RESERVED.contains(&word.as_str()) => {
                    return Err(ExprError::at(pos, format!("unexpected keyword `{word}`")));
                }
                _ => {
                    self.expect(&Token::Dot, "`.` and a property name")?;
                    let property = self.name("a property name")?;
                    Expr::Property {
                        binding: word,
                        property,
                        pos,
                    }
                }
            },
            other => {
                return Err(ExprError::at(
                    pos,
                    format!("expected a value, found {other:?}"),
                ));
            }
        })
    }

    fn call(&mut self, function: &str, pos: Pos) -> Result<Expr, ExprError> {
        self.expect(&Token::LParen, "`(`")?;
        let expr = match function {
            "now" => Expr::Now,
            "today" => Expr::Today,
            "caller" => Expr::Caller,
            "exists" => Expr::Exists(self.name("an entity name")?, pos),
            other => {
                return Err(ExprError::at(
                    pos,
                    format!("unknown function `{other}` (known: now, today, caller, exists)"),
                ));
            }
        };
        self.expect(&Token::RParen, "`)`")?;
        Ok(expr)
    }
}

fn binary(op: BinaryOp, left: Expr, right: Expr, pos: Pos) -> Expr {
    Expr::Binary {
        op,
        left: Box::new(left),
        right: Box::new(right),
        pos,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn precedence() {
        let e = parse_expr("not a.x == 1 or b.y > 2 and c.z").unwrap();
        let Expr::Binary {
            op: BinaryOp::Or,
            left,
            right,
            ..
        } = e
        else {
            panic!("or at the top")
        };
        assert!(matches!(*left, Expr::Not(..)));
        assert!(matches!(
            *right,
            Expr::Binary {
                op: BinaryOp::And,
                ..
            }
        ));
        let e = parse_expr("a.x - b.y * 2 >= -3").unwrap();
        let Expr::Binary {
            op: BinaryOp::Ge,
            left,
            right,
            ..
        } = e
        else {
            panic!()
        };
        assert!(matches!(
            *left,
            Expr::Binary {
                op: BinaryOp::Sub,
                ..
            }
        ));
        assert_eq!(*right, Expr::Literal(Literal::Int(-3)));
    }

    #[test]
    fn membership_null_and_functions() {
        assert!(matches!(
            parse_expr("this.status in ['draft', 'approved']").unwrap(),
            Expr::In { ref list, .. } if list.len() == 2
        ));
        assert!(matches!(
            parse_expr("this.paid_at is not null").unwrap(),
            Expr::IsNull { negated: true, .. }
        ));
        assert!(matches!(
            parse_expr("exists(account)").unwrap(),
            Expr::Exists(..)
        ));
        let e = parse_expr("upper(this.x)").unwrap_err();
        assert!(e.message.contains("unknown function"), "{e}");
    }

    #[test]
    fn effects() {
        assert!(matches!(
            parse_effect("set account.balance = account.balance - this.amount").unwrap(),
            Effect::Set { ref binding, .. } if binding == "account"
        ));
        let Effect::Create {
            label,
            name,
            properties,
            ..
        } = parse_effect("create Payment payment { id: 'PAY-' + this.id, amount: this.amount }")
            .unwrap()
        else {
            panic!()
        };
        assert_eq!(
            (label.as_str(), name.as_str(), properties.len()),
            ("Payment", "payment", 2)
        );
        assert_eq!(
            parse_effect("link payment -[:PAYS]-> this").unwrap(),
            Effect::Link {
                from: "payment".into(),
                rel_type: "PAYS".into(),
                to: "this".into(),
                pos: Pos { line: 1, column: 1 }
            }
        );
        let e = parse_effect("delete this").unwrap_err();
        assert!(e.message.contains("`set`, `create` or `link`"), "{e}");
    }

    #[test]
    fn syntax_errors_have_positions() {
        let e = parse_expr("this.status == ").unwrap_err();
        assert_eq!((e.line, e.column), (1, 16));
        let e = parse_expr("this.status ==\n  'a' 'b'").unwrap_err();
        assert_eq!((e.line, e.column), (2, 7));
        assert!(parse_expr("this.").is_err());
        assert!(parse_expr("(a.b").is_err());
    }
}
