//! A Cypher lexer for the read-only guard: enough of the grammar to find keywords, names,
//! procedure calls and clause boundaries. Comments are dropped, string literals become one
//! opaque token, back-tick names are unquoted. Outside string literals only printable ASCII
//! is accepted, so full-width or homoglyph keywords and invisible characters cannot hide a
//! clause from the checks (Neo4j does not read them as keywords either, but an unfamiliar
//! character is refused rather than guessed at).

#[derive(Debug, Clone, PartialEq)]
pub enum Token {
    /// An identifier or keyword, as written.
    Word(String),
    /// A back-tick-quoted name, unquoted.
    Quoted(String),
    /// A string literal (its content is a value and never inspected).
    Str,
    Number(String),
    /// `$name`.
    Param(String),
    Sym(char),
}

impl Token {
    /// The keyword this token spells, upper-cased (only bare words are keywords).
    pub fn keyword(&self) -> Option<String> {
        match self {
            Token::Word(w) => Some(w.to_ascii_uppercase()),
            _ => None,
        }
    }

    pub fn is_sym(&self, c: char) -> bool {
        matches!(self, Token::Sym(s) if *s == c)
    }

    /// A name: a bare word or a back-tick-quoted one.
    pub fn name(&self) -> Option<&str> {
        match self {
            Token::Word(w) | Token::Quoted(w) => Some(w),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Spanned {
    pub token: Token,
    /// Byte range in [`Lexed::clean`].
    pub start: usize,
    pub end: usize,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Lexed {
    /// The statement with every comment replaced by one space.
    pub clean: String,
    pub tokens: Vec<Spanned>,
}

/// Characters that render as nothing or reorder text: refused even inside back-ticks.
fn invisible(c: char) -> bool {
    matches!(c as u32,
        0x00AD | 0x034F | 0x061C | 0x115F | 0x1160 | 0x17B4 | 0x17B5 | 0x180E
        | 0x200B..=0x200F | 0x202A..=0x202E | 0x2060..=0x206F | 0x3164 | 0xFE00..=0xFE0F
        | 0xFEFF | 0xFFA0 | 0xE0000..=0xE007F)
        || c.is_control()
}

pub fn lex(statement: &str) -> Result<Lexed, String> {
    let chars: Vec<(usize, char)> = statement.char_indices().collect();
    let mut clean = String::with_capacity(statement.len());
    let mut tokens = Vec::new();
    let mut i = 0;
    let at = |i: usize| chars.get(i).map(|(_, c)| *c);
    while let Some(c) = at(i) {
        let next = at(i + 1);
        // Comments: replaced by a space so the words around them stay apart.
        if c == '/' && next == Some('/') {
            // Any character some parser could take for a line end ends the comment, so
            // what follows is checked (and a non-ASCII one is then refused).
            while let Some(c) = at(i) {
                if matches!(
                    c,
                    '\n' | '\r' | '\u{0B}' | '\u{0C}' | '\u{85}' | '\u{2028}' | '\u{2029}'
                ) {
                    break;
                }
                i += 1;
            }
            clean.push(' ');
            continue;
        }
        if c == '/' && next == Some('*') {
            i += 2;
            loop {
                match (at(i), at(i + 1)) {
                    (Some('*'), Some('/')) => {
                        i += 2;
                        break;
                    }
                    (Some(_), _) => i += 1,
                    (None, _) => return Err("unterminated /* comment".into()),
                }
            }
            clean.push(' ');
            continue;
        }
        let start = clean.len();
        if c == '\'' || c == '"' {
            let quote = c;
            let from = i;
            i += 1;
            loop {
                match at(i) {
                    Some('\\') if at(i + 1).is_some() => i += 2,
                    Some(q) if q == quote => {
                        i += 1;
                        break;
                    }
                    Some(_) => i += 1,
                    None => return Err("unterminated string literal".into()),
                }
            }
            clean.extend(chars[from..i].iter().map(|(_, c)| *c));
            tokens.push(Spanned {
                token: Token::Str,
                start,
                end: clean.len(),
            });
            continue;
        }
        if c == '`' {
            let (name, after) = quoted_name(&chars, i)?;
            clean.extend(chars[i..after].iter().map(|(_, c)| *c));
            i = after;
            tokens.push(Spanned {
                token: Token::Quoted(name),
                start,
                end: clean.len(),
            });
            continue;
        }
        if !c.is_ascii() || (c.is_ascii_control() && !c.is_ascii_whitespace()) {
            return Err(format!(
                "character U+{:04X} outside a string literal: only ASCII is accepted there (full-width, look-alike or invisible characters are refused)",
                c as u32
            ));
        }
        if c.is_ascii_whitespace() {
            clean.push(c);
            i += 1;
            continue;
        }
        let word = |from: usize| {
            let mut to = from;
            while at(to).is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
                to += 1;
            }
            to
        };
        let (token, after) = if c.is_ascii_alphabetic() || c == '_' {
            let to = word(i);
            (Token::Word(text(&chars, i, to)), to)
        } else if c.is_ascii_digit() {
            (
                Token::Number(text(&chars, i, number_end(&chars, i))),
                number_end(&chars, i),
            )
        } else if c == '$' {
            match next {
                Some('`') => {
                    let (name, after) = quoted_name(&chars, i + 1)?;
                    (Token::Param(name), after)
                }
                Some(n) if n.is_ascii_alphanumeric() || n == '_' => {
                    let to = word(i + 1);
                    (Token::Param(text(&chars, i + 1, to)), to)
                }
                _ => return Err("`$` must start a parameter name".into()),
            }
        } else if c == '\\' {
            return Err("a backslash outside a string literal".into());
        } else {
            (Token::Sym(c), i + 1)
        };
        clean.extend(chars[i..after].iter().map(|(_, c)| *c));
        i = after;
        tokens.push(Spanned {
            token,
            start,
            end: clean.len(),
        });
    }
    Ok(Lexed { clean, tokens })
}

/// Where a number starting at `from` ends: `0x1F`, `0o17`, `1_000`, `2.5e-3`. Letters
/// after it are a separate word, as Cypher reads them: `1CREATE` is `1` and `CREATE`.
fn number_end(chars: &[(usize, char)], from: usize) -> usize {
    let at = |i: usize| chars.get(i).map(|(_, c)| *c);
    let digits = |mut i: usize, ok: fn(char) -> bool| {
        while at(i).is_some_and(|c| ok(c) || c == '_') {
            i += 1;
        }
        i
    };
    if at(from) == Some('0') {
        match at(from + 1) {
            Some('x' | 'X') => return digits(from + 2, |c| c.is_ascii_hexdigit()),
            Some('o' | 'O') => return digits(from + 2, |c| ('0'..='7').contains(&c)),
            _ => {}
        }
    }
    let mut to = digits(from, |c| c.is_ascii_digit());
    // A fraction, but not the `..` of a range such as `*1..3`.
    if at(to) == Some('.') && at(to + 1).is_some_and(|d| d.is_ascii_digit()) {
        to = digits(to + 1, |c| c.is_ascii_digit());
    }
    if matches!(at(to), Some('e' | 'E')) {
        let sign = usize::from(matches!(at(to + 1), Some('+' | '-')));
        if at(to + 1 + sign).is_some_and(|d| d.is_ascii_digit()) {
            to = digits(to + 1 + sign, |c| c.is_ascii_digit());
        }
    }
    to
}

fn text(chars: &[(usize, char)], from: usize, to: usize) -> String {
    chars[from..to].iter().map(|(_, c)| *c).collect()
}

/// A back-tick name starting at `from` (the opening back-tick): the name and the index
/// after the closing one. A doubled back-tick is a literal one.
fn quoted_name(chars: &[(usize, char)], from: usize) -> Result<(String, usize), String> {
    let mut name = String::new();
    let mut i = from + 1;
    loop {
        match (chars.get(i).map(|p| p.1), chars.get(i + 1).map(|p| p.1)) {
            (Some('`'), Some('`')) => {
                name.push('`');
                i += 2;
            }
            (Some('`'), _) => return Ok((name, i + 1)),
            (Some(c), _) if invisible(c) => {
                return Err(format!(
                    "invisible or control character U+{:04X} in a back-tick name",
                    c as u32
                ));
            }
            (Some(c), _) => {
                name.push(c);
                i += 1;
            }
            (None, _) => return Err("unterminated back-tick name".into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(s: &str) -> Vec<Token> {
        lex(s)
            .unwrap()
            .tokens
            .into_iter()
            .map(|t| t.token)
            .collect()
    }

    #[test]
    fn comments_and_strings_hide_nothing_and_show_nothing() {
        let lexed = lex("MATCH (n) // CREATE (x)\nRETURN '/* DELETE */' /* SET */ AS s").unwrap();
        let words: Vec<String> = lexed
            .tokens
            .iter()
            .filter_map(|t| t.token.keyword())
            .collect();
        assert_eq!(words, ["MATCH", "N", "RETURN", "AS", "S"]);
        assert!(!lexed.clean.contains("CREATE") && !lexed.clean.contains("SET"));
        assert!(lexed.clean.contains("'/* DELETE */'"));
    }

    #[test]
    fn escapes_and_backticks() {
        assert_eq!(
            kinds(r"RETURN 'it\'s' AS `a``b`"),
            [
                Token::Word("RETURN".into()),
                Token::Str,
                Token::Word("AS".into()),
                Token::Quoted("a`b".into())
            ]
        );
        assert_eq!(
            kinds("[*1..3]"),
            [
                Token::Sym('['),
                Token::Sym('*'),
                Token::Number("1".into()),
                Token::Sym('.'),
                Token::Sym('.'),
                Token::Number("3".into()),
                Token::Sym(']')
            ]
        );
        assert_eq!(kinds("$p"), [Token::Param("p".into())]);
        assert_eq!(
            kinds("1CREATE 0x1F 2.5e-3 1_000"),
            [
                Token::Number("1".into()),
                Token::Word("CREATE".into()),
                Token::Number("0x1F".into()),
                Token::Number("2.5e-3".into()),
                Token::Number("1_000".into())
            ]
        );
    }

    #[test]
    fn refuses_what_it_cannot_read() {
        for bad in [
            "MATCH (n) /* open",
            "RETURN 'open",
            "MATCH (n:`open",
            "ＣＲＥＡＴＥ (n)",
            "CRE\u{200B}ATE (n)",
            "МATCH (n) RETURN n", // Cyrillic М
            "MATCH (n:`Sup\u{200D}plier`) RETURN n",
            "RETURN \\u0041",
            "MATCH (n) // note\u{2028}DETACH DELETE n",
        ] {
            assert!(lex(bad).is_err(), "{bad}");
        }
        // Unicode inside a string literal is a value, not syntax.
        assert!(lex("RETURN 'Ｃafé\u{200B}' AS s").is_ok());
    }
}
