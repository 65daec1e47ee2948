//! Resource limits on the statement's text (issue #14): constructs whose cost the text
//! alone does not bound are refused before anything reaches the graph, with the construct
//! named and a bounded way to write it.
//!
//! - `range(a, b[, step])` must have integer-literal bounds (and step) and make at most
//!   [`MAX_RANGE_ELEMENTS`] integers; all of a statement's ranges together at most
//!   [`MAX_RANGE_PRODUCT`] (nested comprehensions and `UNWIND`s multiply). A list
//!   comprehension, `reduce`, `UNWIND` or `size()` over a range is bounded by the range.
//! - A variable-length relationship (`-[*]-`, `-[:T*2..]-`) and a quantified path pattern
//!   (`-->+`, `-[:T]->{1,}`, `((a)--(b)){2,}`) must have an upper bound of at most
//!   [`MAX_HOPS`]. `shortestPath`/`allShortestPaths` are breadth-first searches the graph
//!   stops at the first (shortest) length, so an unbounded one is accepted there.
//!
//! What the text cannot bound (a cross product of large labels, say) is left to the graph's
//! own time limit (`maxExecutionTime`, sent with every read) and memory limits.

use super::lexer::{Spanned, Token};

/// The most integers one `range()` may make. A list of 100,000 integers is about 2 MB
/// in Neo4j's heap (and in devgraph's), far below any sane transaction memory limit, and
/// more than any question over this graph needs (it has hundreds of nodes; a row answer
/// is capped at 1,000 rows); `range(1, 100000000)` is 100 million, gigabytes.
pub const MAX_RANGE_ELEMENTS: i128 = 100_000;
/// The most integers all of a statement's ranges together may make, multiplied (two
/// nested ranges of 1,000 are fine; two of 100,000 make 10^10 values).
pub const MAX_RANGE_PRODUCT: i128 = 1_000_000;
/// The longest variable-length pattern: 10 hops already reach every node of a connected
/// graph of this shape many times over; each extra hop multiplies the paths by the mean
/// degree.
pub const MAX_HOPS: i128 = 10;

/// A construct refused for its cost.
#[derive(Debug, Clone, PartialEq)]
pub struct TooExpensive {
    /// Which construct: `range`, `variable_length_relationship` or `quantified_path`.
    pub construct: &'static str,
    /// The construct as written (comments removed).
    pub excerpt: String,
    /// What is wrong and what to do instead.
    pub message: String,
}

pub fn check(clean: &str, tokens: &[Spanned]) -> Result<(), TooExpensive> {
    let text = |from: usize, to: usize| -> String {
        let (a, b) = (tokens[from].start, tokens[to.min(tokens.len() - 1)].end);
        clean.get(a..b).unwrap_or_default().trim().to_string()
    };
    let kinds: Vec<&Token> = tokens.iter().map(|t| &t.token).collect();
    let mut product: i128 = 1;
    let shortest = shortest_path_spans(&kinds);
    let in_shortest = |i: usize| shortest.iter().any(|(a, b)| (*a..=*b).contains(&i));
    // Open brackets, innermost last: `true` for the `[` of a relationship pattern.
    let mut brackets: Vec<bool> = Vec::new();
    let mut i = 0;
    while i < kinds.len() {
        let t = kinds[i];
        let before = i.checked_sub(1).map(|j| kinds[j]);
        // Quantified path patterns: `+`, `*` or `{m,n}` right after a relationship
        // pattern (`]->`, `]-`, `-->`, `--`) or a parenthesised path, before a node.
        if let Some((upper, end)) = quantifier(&kinds, i) {
            // From the arrow (and the `]` before it) or the closing `))`.
            let mut from = i - 1;
            if kinds[from].is_sym(')') {
                from -= 1;
            } else {
                while from > 0 && matches!(kinds[from - 1], Token::Sym('-' | '>' | '<')) {
                    from -= 1;
                }
                if from > 0 && kinds[from - 1].is_sym(']') {
                    from -= 1;
                }
            }
            check_upper(
                upper,
                in_shortest(i),
                "quantified_path",
                text(from, end),
                "a quantified path pattern",
                "give it an upper bound, e.g. `{1,3}`",
            )?;
            i = end + 1;
            continue;
        }
        match t {
            Token::Sym('[') => brackets.push(before.is_some_and(|b| b.is_sym('-'))),
            // A map or a parenthesised expression inside a relationship's brackets (its
            // properties) is not the length: `-[r {w: 2*3}]-`.
            Token::Sym('(' | '{') => brackets.push(false),
            Token::Sym(']' | ')' | '}') => {
                brackets.pop();
            }
            // `*` inside a relationship pattern's brackets: a variable length.
            Token::Sym('*') if brackets.last() == Some(&true) => {
                let (upper, after) = hops(&kinds, i + 1);
                let end = (i..kinds.len())
                    .find(|&j| kinds[j].is_sym(']'))
                    .unwrap_or(after);
                let open = (0..i).rev().find(|&j| kinds[j].is_sym('[')).unwrap_or(i);
                check_upper(
                    upper,
                    in_shortest(i),
                    "variable_length_relationship",
                    text(open, end),
                    "a variable-length relationship",
                    "give it an upper bound, e.g. `[:SUPPLIES*1..3]`",
                )?;
                i = after;
                continue;
            }
            _ => {}
        }
        if t.keyword().as_deref() == Some("RANGE")
            && !before.is_some_and(|b| b.is_sym('.') || b.is_sym(':'))
            && kinds.get(i + 1).is_some_and(|n| n.is_sym('('))
        {
            let (args, close) = arguments(&kinds, i + 2);
            let excerpt = text(i, close);
            let elements = range_elements(&args).ok_or_else(|| TooExpensive {
                construct: "range",
                excerpt: excerpt.clone(),
                message: format!(
                    "`{excerpt}`: range() bounds must be integer literals (a parameter or an expression could make any number of values); write the numbers, at most {MAX_RANGE_ELEMENTS} apart, or UNWIND a parameter list"
                ),
            })?;
            if elements > MAX_RANGE_ELEMENTS {
                return Err(TooExpensive {
                    construct: "range",
                    excerpt: excerpt.clone(),
                    message: format!(
                        "`{excerpt}` makes {elements} values, more than the {MAX_RANGE_ELEMENTS} a range may make; use a smaller range, or aggregate over the graph's data instead of generated numbers"
                    ),
                });
            }
            product = product.saturating_mul(elements.max(1));
            if product > MAX_RANGE_PRODUCT {
                return Err(TooExpensive {
                    construct: "range",
                    excerpt: excerpt.clone(),
                    message: format!(
                        "the statement's ranges together make more than {MAX_RANGE_PRODUCT} values (up to `{excerpt}`); use fewer or smaller ranges"
                    ),
                });
            }
        }
        i += 1;
    }
    Ok(())
}

fn check_upper(
    upper: Option<i128>,
    shortest: bool,
    construct: &'static str,
    excerpt: String,
    what: &str,
    instead: &str,
) -> Result<(), TooExpensive> {
    match upper {
        None if shortest => Ok(()),
        None => Err(TooExpensive {
            construct,
            message: format!(
                "`{excerpt}` is {what} without an upper bound: it can enumerate every path of the graph; {instead} (at most {MAX_HOPS} hops), or use shortestPath"
            ),
            excerpt,
        }),
        Some(n) if n > MAX_HOPS => Err(TooExpensive {
            construct,
            message: format!(
                "`{excerpt}` is {what} of up to {n} hops, more than {MAX_HOPS}: the paths multiply with every hop; {instead}"
            ),
            excerpt,
        }),
        Some(_) => Ok(()),
    }
}

/// After `*` in a relationship pattern: `]` (unbounded), `n`, `n..`, `..m`, `n..m`. The
/// upper bound, if any, and the index after the length.
fn hops(kinds: &[&Token], mut i: usize) -> (Option<i128>, usize) {
    let lower = integer(kinds.get(i).copied());
    if lower.is_some() {
        i += 1;
    }
    let dots = kinds.get(i).is_some_and(|t| t.is_sym('.'))
        && kinds.get(i + 1).is_some_and(|t| t.is_sym('.'));
    if !dots {
        // `*` alone is unbounded; `*n` is exactly n.
        return (lower, i);
    }
    i += 2;
    match integer(kinds.get(i).copied()) {
        Some(upper) => (Some(upper), i + 1),
        None => (None, i),
    }
}

/// A quantifier at `i`: its upper bound (None: unbounded) and the index of its last token.
fn quantifier(kinds: &[&Token], i: usize) -> Option<(Option<i128>, usize)> {
    let t = kinds[i];
    let before = i.checked_sub(1).map(|j| kinds[j])?;
    let before2 = i.checked_sub(2).map(|j| kinds[j]);
    // The end of a relationship pattern: `]->`/`]-`/`-->`/`--`, or `)` of a path in
    // parentheses (`((a)-->(b))+`).
    let after_relationship = (before.is_sym('>') || before.is_sym('-'))
        && before2.is_some_and(|b| b.is_sym('-') || b.is_sym(']'));
    let after_group =
        before.is_sym(')') && before2.is_some_and(|b| b.is_sym(')')) && path_group(kinds, i - 1);
    if !after_relationship && !after_group {
        return None;
    }
    match t {
        Token::Sym('+' | '*') if after_group || kinds.get(i + 1).is_some_and(|n| n.is_sym('(')) => {
            Some((None, i))
        }
        Token::Sym('{') => {
            // `{n}`, `{n,}`, `{,m}`, `{n,m}`: numbers and one comma only.
            let close = (i + 1..kinds.len()).find(|&j| kinds[j].is_sym('}'))?;
            let inner = &kinds[i + 1..close];
            if inner.is_empty()
                || !inner
                    .iter()
                    .all(|t| matches!(t, Token::Number(_)) || t.is_sym(','))
            {
                return None;
            }
            let comma = inner.iter().position(|t| t.is_sym(','));
            let upper = match comma {
                None => integer(inner.first().copied()),
                Some(c) => integer(inner.get(c + 1).copied()),
            };
            Some((upper, close))
        }
        _ => None,
    }
}

/// Whether the `)` at `close` ends a parenthesised path pattern `((a)-…-(b))`, not a
/// function call or an expression in parentheses.
fn path_group(kinds: &[&Token], close: usize) -> bool {
    let mut depth = 0usize;
    let mut open = None;
    for j in (0..=close).rev() {
        match kinds[j] {
            Token::Sym(')') => depth += 1,
            Token::Sym('(') => {
                depth -= 1;
                if depth == 0 {
                    open = Some(j);
                    break;
                }
            }
            _ => {}
        }
    }
    let Some(open) = open else {
        return false;
    };
    let called = open.checked_sub(1).is_some_and(|b| {
        kinds[b].name().is_some()
            && !matches!(kinds[b].keyword().as_deref(), Some("MATCH" | "OPTIONAL"))
    });
    let node_first = kinds.get(open + 1).is_some_and(|t| t.is_sym('('));
    let has_arrow = kinds[open..close].iter().any(|t| t.is_sym('-'));
    !called && node_first && has_arrow
}

/// Token ranges of `shortestPath(…)` / `allShortestPaths(…)` and `SHORTEST k` / `ANY
/// SHORTEST` path patterns (to the end of the pattern's parentheses).
fn shortest_path_spans(kinds: &[&Token]) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    for (i, t) in kinds.iter().enumerate() {
        let word = t.keyword();
        let function = matches!(word.as_deref(), Some("SHORTESTPATH" | "ALLSHORTESTPATHS"))
            && kinds.get(i + 1).is_some_and(|n| n.is_sym('('));
        let gql = word.as_deref() == Some("SHORTEST");
        if function || gql {
            let (_, close) = arguments(kinds, i + 2);
            let close = if gql {
                // The pattern after `SHORTEST [k] [GROUPS]`: up to the clause's end.
                (i..kinds.len())
                    .find(|&j| {
                        matches!(
                            kinds[j].keyword().as_deref(),
                            Some("WHERE" | "RETURN" | "WITH" | "MATCH" | "OPTIONAL" | "UNWIND")
                        )
                    })
                    .unwrap_or(kinds.len())
            } else {
                close
            };
            spans.push((i, close));
        }
    }
    spans
}

/// The top-level arguments from `i` (just after `(`) to the matching `)`: each argument's
/// tokens, and the index of the `)`.
fn arguments<'a>(kinds: &[&'a Token], mut i: usize) -> (Vec<Vec<&'a Token>>, usize) {
    let mut args = vec![Vec::new()];
    let mut depth = 0usize;
    while let Some(t) = kinds.get(i) {
        match t {
            Token::Sym('(' | '[' | '{') => depth += 1,
            Token::Sym(')') if depth == 0 => break,
            Token::Sym(')' | ']' | '}') => depth = depth.saturating_sub(1),
            Token::Sym(',') if depth == 0 => {
                args.push(Vec::new());
                i += 1;
                continue;
            }
            _ => {}
        }
        if let Some(arg) = args.last_mut() {
            arg.push(*t);
        }
        i += 1;
    }
    (args, i.min(kinds.len().saturating_sub(1)))
}

/// How many integers `range(args)` makes, when every argument is an integer literal.
fn range_elements(args: &[Vec<&Token>]) -> Option<i128> {
    let literal = |arg: &Vec<&Token>| -> Option<i128> {
        match arg.as_slice() {
            [n] => integer(Some(n)),
            [sign, n] if sign.is_sym('-') => integer(Some(n)).map(|v| -v),
            [sign, n] if sign.is_sym('+') => integer(Some(n)),
            _ => None,
        }
    };
    let (start, end, step) = match args {
        [a, b] => (literal(a)?, literal(b)?, 1),
        [a, b, s] => (literal(a)?, literal(b)?, literal(s)?),
        _ => return None,
    };
    if step == 0 {
        // The graph refuses a zero step itself.
        return Some(0);
    }
    let span = (end - start) / step;
    Some(if span < 0 { 0 } else { span + 1 })
}

/// An integer literal's value: decimal, `0x`, `0o`, with `_` separators. Not a float.
fn integer(token: Option<&Token>) -> Option<i128> {
    let Some(Token::Number(text)) = token else {
        return None;
    };
    let digits: String = text.chars().filter(|c| *c != '_').collect();
    let lower = digits.to_ascii_lowercase();
    if let Some(hex) = lower.strip_prefix("0x") {
        i128::from_str_radix(hex, 16).ok()
    } else if let Some(oct) = lower.strip_prefix("0o") {
        i128::from_str_radix(oct, 8).ok()
    } else {
        // Too large for i128 is still far too large: saturate rather than refuse to read.
        if lower.chars().all(|c| c.is_ascii_digit()) {
            Some(lower.parse::<i128>().unwrap_or(i128::MAX))
        } else {
            None
        }
    }
}
