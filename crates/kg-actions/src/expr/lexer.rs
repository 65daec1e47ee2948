//! Tokens of the expression language, each with its position (1-based line and column
//! within the expression text) so errors can point at it.

use super::ExprError;

#[derive(Debug, Clone, PartialEq)]
pub enum Token {
    Ident(String),
    Param(String),
    Str(String),
    Int(i64),
    Float(f64),
    Dot,
    Comma,
    Colon,
    LParen,
    RParen,
    LBracket,
    RBracket,
    LBrace,
    RBrace,
    Plus,
    Minus,
    Star,
    Slash,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Assign,
    /// `-[:` … `]->` and `<-[:` … `]-` are lexed from these pieces.
    ArrowRight,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pos {
    pub line: usize,
    pub column: usize,
}

pub fn tokenize(text: &str) -> Result<Vec<(Token, Pos)>, ExprError> {
    let chars: Vec<char> = text.chars().collect();
    let mut tokens = Vec::new();
    let (mut i, mut line, mut column) = (0, 1, 1);
    while i < chars.len() {
        let c = chars[i];
        let pos = Pos { line, column };
        let start = i;
        let token = match c {
            '\n' => {
                i += 1;
                line += 1;
                column = 1;
                continue;
            }
            c if c.is_whitespace() => {
                i += 1;
                column += 1;
                continue;
            }
            '#' => {
                // A comment runs to the end of the line.
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
                continue;
            }
            '\'' | '"' => {
                let (value, end) = string(&chars, i, pos)?;
                i = end;
                Token::Str(value)
            }
            c if c.is_ascii_digit() => {
                let mut end = i;
                while end < chars.len() && (chars[end].is_ascii_digit() || chars[end] == '_') {
                    end += 1;
                }
                let is_float =
                    end + 1 < chars.len() && chars[end] == '.' && chars[end + 1].is_ascii_digit();
                if is_float {
                    end += 1;
                    while end < chars.len() && chars[end].is_ascii_digit() {
                        end += 1;
                    }
                }
                let digits: String = chars[i..end].iter().filter(|c| **c != '_').collect();
                i = end;
                if is_float {
                    Token::Float(
                        digits
                            .parse()
                            .map_err(|_| ExprError::at(pos, format!("bad number `{digits}`")))?,
                    )
                } else {
                    Token::Int(digits.parse().map_err(|_| {
                        ExprError::at(pos, format!("integer `{digits}` is too large"))
                    })?)
                }
            }
            '$' => {
                let end = ident_end(&chars, i + 1);
                if end == i + 1 {
                    return Err(ExprError::at(
                        pos,
                        "`$` must be followed by a parameter name",
                    ));
                }
                let name: String = chars[i + 1..end].iter().collect();
                i = end;
                Token::Param(name)
            }
            c if c.is_ascii_alphabetic() || c == '_' => {
                let end = ident_end(&chars, i);
                let name: String = chars[i..end].iter().collect();
                i = end;
                Token::Ident(name)
            }
            _ => {
                let two: String = chars[i..(i + 2).min(chars.len())].iter().collect();
                let (token, width) = match two.as_str() {
                    "==" => (Token::Eq, 2),
                    "!=" | "<>" => (Token::Ne, 2),
                    "<=" => (Token::Le, 2),
                    ">=" => (Token::Ge, 2),
                    "->" => (Token::ArrowRight, 2),
                    _ => (
                        match c {
                            '.' => Token::Dot,
                            ',' => Token::Comma,
                            ':' => Token::Colon,
                            '(' => Token::LParen,
                            ')' => Token::RParen,
                            '[' => Token::LBracket,
                            ']' => Token::RBracket,
                            '{' => Token::LBrace,
                            '}' => Token::RBrace,
                            '+' => Token::Plus,
                            '-' => Token::Minus,
                            '*' => Token::Star,
                            '/' => Token::Slash,
                            '<' => Token::Lt,
                            '>' => Token::Gt,
                            '=' => Token::Assign,
                            other => {
                                return Err(ExprError::at(
                                    pos,
                                    format!("unexpected character `{other}`"),
                                ));
                            }
                        },
                        1,
                    ),
                };
                i += width;
                token
            }
        };
        column += i - start;
        tokens.push((token, pos));
    }
    Ok(tokens)
}

fn ident_end(chars: &[char], mut i: usize) -> usize {
    while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
        i += 1;
    }
    i
}

/// A quoted string with `\\`, `\'`, `\"`, `\n` and `\t` escapes; returns the value and the
/// index after the closing quote.
fn string(chars: &[char], start: usize, pos: Pos) -> Result<(String, usize), ExprError> {
    let quote = chars[start];
    let mut value = String::new();
    let mut i = start + 1;
    while i < chars.len() {
        match chars[i] {
            c if c == quote => return Ok((value, i + 1)),
            '\n' => break,
            '\\' if i + 1 < chars.len() => {
                value.push(match chars[i + 1] {
                    'n' => '\n',
                    't' => '\t',
                    other => other,
                });
                i += 2;
            }
            c => {
                value.push(c);
                i += 1;
            }
        }
    }
    Err(ExprError::at(pos, "unterminated string"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<Token> {
        tokenize(text).unwrap().into_iter().map(|t| t.0).collect()
    }

    #[test]
    fn tokens_and_positions() {
        assert_eq!(
            kinds("this.amount >= 1_000.5 and $x != 'a\\'b'"),
            vec![
                Token::Ident("this".into()),
                Token::Dot,
                Token::Ident("amount".into()),
                Token::Ge,
                Token::Float(1000.5),
                Token::Ident("and".into()),
                Token::Param("x".into()),
                Token::Ne,
                Token::Str("a'b".into()),
            ]
        );
        let tokens = tokenize("a\n  == b").unwrap();
        assert_eq!(tokens[1].1, Pos { line: 2, column: 3 });
    }

    #[test]
    fn errors_point_at_the_problem() {
        let e = tokenize("x == 'open").unwrap_err();
        assert_eq!((e.line, e.column), (1, 6));
        let e = tokenize("a ; b").unwrap_err();
        assert!(e.message.contains("`;`"), "{e}");
    }
}
