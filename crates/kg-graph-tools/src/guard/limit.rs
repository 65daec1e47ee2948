//! LIMIT enforcement: every UNION branch's final RETURN gets a LIMIT of at most `cap`
//! (appended when missing, clamped when larger). A LIMIT must be an integer literal, so
//! its value is known without running the query.

use super::Refusal;
use super::lexer::{Spanned, Token};

pub fn enforce(clean: &str, tokens: &[Spanned], cap: usize) -> Result<String, Refusal> {
    // Edits as (byte range in `clean`, replacement), applied back to front.
    let mut edits: Vec<(std::ops::Range<usize>, String)> = Vec::new();
    for branch in branches(tokens) {
        let last_return = branch
            .iter()
            .rposition(|(depth, t)| *depth == 0 && t.token.keyword().as_deref() == Some("RETURN"))
            .ok_or_else(|| {
                Refusal(
                    "a read query must end with RETURN (e.g. `CALL db.labels() YIELD label RETURN label`)"
                        .into(),
                )
            })?;
        let tail = &branch[last_return..];
        match tail
            .iter()
            .position(|(depth, t)| *depth == 0 && t.token.keyword().as_deref() == Some("LIMIT"))
        {
            Some(at) => {
                let value = &tail[at + 1..];
                let [(_, number)] = value else {
                    return Err(Refusal(
                        "LIMIT must be the last clause and an integer literal, e.g. `LIMIT 25`"
                            .into(),
                    ));
                };
                let Token::Number(text) = &number.token else {
                    return Err(Refusal(
                        "LIMIT must be an integer literal, e.g. `LIMIT 25`".into(),
                    ));
                };
                let asked: usize = text.parse().map_err(|_| {
                    Refusal(format!(
                        "LIMIT must be a non-negative integer, not `{text}`"
                    ))
                })?;
                if asked > cap {
                    edits.push((number.start..number.end, cap.to_string()));
                }
            }
            None => {
                let end = branch.last().map_or(0, |(_, t)| t.end);
                edits.push((end..end, format!(" LIMIT {cap}")));
            }
        }
    }
    // From the first token (a leading `PROFILE` the caller took off is not part of it).
    let start = tokens.first().map_or(0, |t| t.start);
    let end = tokens.last().map_or(0, |t| t.end);
    let mut statement = clean[..end].to_string();
    edits.sort_by_key(|(range, _)| std::cmp::Reverse(range.start));
    for (range, text) in edits {
        statement.replace_range(range, &text);
    }
    Ok(statement[start..].trim().to_string())
}

/// The tokens of each UNION branch, with their bracket depth.
fn branches(tokens: &[Spanned]) -> Vec<Vec<(usize, &Spanned)>> {
    let mut branches = vec![Vec::new()];
    let mut depth = 0usize;
    let mut skip_all = false;
    for t in tokens {
        match &t.token {
            Token::Sym('(' | '{' | '[') => depth += 1,
            Token::Sym(')' | '}' | ']') => depth = depth.saturating_sub(1),
            _ => {}
        }
        let word = t.token.keyword();
        if depth == 0 && word.as_deref() == Some("UNION") {
            branches.push(Vec::new());
            skip_all = true;
            continue;
        }
        if skip_all && word.as_deref() == Some("ALL") {
            skip_all = false;
            continue;
        }
        skip_all = false;
        if let Some(branch) = branches.last_mut() {
            branch.push((depth, t));
        }
    }
    branches
}
