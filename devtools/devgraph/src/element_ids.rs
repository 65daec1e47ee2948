//! Neo4j 5's element ids on Grafeo's: devgraph writes a node as `4:devgraph:<id>` and a
//! relationship as `5:devgraph:<id>` (see [`crate::values`]), while Grafeo's `elementId()`
//! answers `n:<id>` / `e:<id>`. So `elementId(x)` in a statement becomes
//! `replace(replace(elementId(x), 'n:', '4:devgraph:'), 'e:', '5:devgraph:')`, the ids a
//! client read from devgraph's answers, and a column named by it is named `elementId(x)`
//! again. A look-up by element id, `WHERE elementId(v) = $p` (or `'…'`, or
//! `elementId(v) IN $p`), also pins `id(v)` to the number in the id, bound to a parameter
//! of its own, so Grafeo seeks the node instead of scanning every node (Neo4j's
//! `NodeByElementIdSeek`); an id of another shape (`abc`, another database's) finds
//! nothing, as on Neo4j.

use serde_json::{Map, Value as Json};

/// Parameters this module binds are named with this prefix and a number.
const PARAMETER_PREFIX: &str = "__devgraph_element_id_";

/// What [`elementId`](rewrite) becomes, for the expression `argument`.
fn neo4j_form(argument: &str) -> String {
    format!("replace(replace(elementId({argument}), 'n:', '4:devgraph:'), 'e:', '5:devgraph:')")
}

/// The statement with devgraph's element ids, and the parameters it adds.
pub struct Rewritten {
    pub statement: String,
    pub parameters: Vec<(String, Json)>,
}

/// The id number in one of devgraph's element ids (`4:devgraph:18` → 18).
fn number(element_id: &Json) -> Json {
    element_id
        .as_str()
        .and_then(|id| {
            id.strip_prefix("4:devgraph:")
                .or_else(|| id.strip_prefix("5:devgraph:"))
        })
        .filter(|digits| !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|digits| digits.parse::<i64>().ok())
        .map_or(Json::Null, Json::from)
}

fn is_identifier_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_'
}

fn is_identifier(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// Where the quoted text (string or name) opening at `at` ends (after its closing quote).
fn skip_quoted(bytes: &[u8], at: usize) -> usize {
    let quote = bytes[at];
    let mut i = at + 1;
    while i < bytes.len() {
        if bytes[i] == b'\\' && quote != b'`' {
            i += 2;
            continue;
        }
        if bytes[i] == quote {
            // A doubled back-tick stays inside a name.
            if quote == b'`' && bytes.get(i + 1) == Some(&b'`') {
                i += 2;
                continue;
            }
            return i + 1;
        }
        i += 1;
    }
    bytes.len()
}

/// Where the comment opening at `at` ends, if one opens there.
fn skip_comment(bytes: &[u8], at: usize) -> Option<usize> {
    match (bytes[at], bytes.get(at + 1)) {
        (b'/', Some(b'/')) => Some(
            bytes[at..]
                .iter()
                .position(|&b| b == b'\n')
                .map_or(bytes.len(), |n| at + n),
        ),
        (b'/', Some(b'*')) => {
            Some(statement_find(bytes, at + 2, b"*/").map_or(bytes.len(), |n| n + 2))
        }
        _ => None,
    }
}

fn statement_find(bytes: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    bytes
        .get(from..)?
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|n| from + n)
}

/// The position after `text[at..]`'s white space.
fn skip_space(bytes: &[u8], mut at: usize) -> usize {
    while at < bytes.len() && bytes[at].is_ascii_whitespace() {
        at += 1;
    }
    at
}

/// The word (letters, digits, `_`) at `at`, upper-cased.
fn word_at(bytes: &[u8], at: usize) -> String {
    let end = (at..bytes.len())
        .find(|&i| !is_identifier(bytes[i]))
        .unwrap_or(bytes.len());
    String::from_utf8_lossy(&bytes[at..end]).to_ascii_uppercase()
}

/// The last word or symbol before `at` (upper-cased), skipping white space.
fn previous_token(bytes: &[u8], at: usize) -> String {
    let mut end = at;
    while end > 0 && bytes[end - 1].is_ascii_whitespace() {
        end -= 1;
    }
    let mut start = end;
    while start > 0 && is_identifier(bytes[start - 1]) {
        start -= 1;
    }
    if start == end && end > 0 {
        start = end - 1;
    }
    String::from_utf8_lossy(&bytes[start..end]).to_ascii_uppercase()
}

/// Words that may follow a complete condition of a `WHERE`.
const AFTER_CONDITION: &[&str] = &[
    "AND", "OR", "XOR", "RETURN", "WITH", "UNION", "ORDER", "LIMIT", "SKIP", "MATCH", "OPTIONAL",
    "CALL", "UNWIND", "SET", "DELETE", "DETACH", "REMOVE", "MERGE", "CREATE", "FOREACH", "THEN",
    "ELSE", "END", "WHEN", "FINISH",
];

/// A look-up `= operand` / `IN operand` right after an `elementId(v)` call ending at `at`:
/// (the operator, the operand's text, where it ends).
fn lookup_after(statement: &str, at: usize) -> Option<(&'static str, &str, usize)> {
    let bytes = statement.as_bytes();
    let i = skip_space(bytes, at);
    let (operator, i) = if bytes.get(i) == Some(&b'=') && bytes.get(i + 1) != Some(&b'~') {
        ("=", i + 1)
    } else if word_at(bytes, i) == "IN" && i + 2 < bytes.len() && !is_identifier(bytes[i + 2]) {
        ("IN", i + 2)
    } else {
        return None;
    };
    let start = skip_space(bytes, i);
    let end = match bytes.get(start)? {
        b'$' => {
            let end = (start + 1..bytes.len())
                .find(|&k| !is_identifier(bytes[k]))
                .unwrap_or(bytes.len());
            (end > start + 1).then_some(end)?
        }
        b'\'' | b'"' if operator == "=" => skip_quoted(bytes, start),
        _ => return None,
    };
    // The operand must be the whole right-hand side.
    let next = skip_space(bytes, end);
    let complete = next >= bytes.len()
        || matches!(bytes[next], b')' | b';' | b'}' | b',' | b']')
        || AFTER_CONDITION.contains(&word_at(bytes, next).as_str());
    complete.then(|| (operator, &statement[start..end], end))
}

/// `statement` with devgraph's element ids, if it calls `elementId`.
pub fn rewrite(statement: &str, parameters: &Map<String, Json>) -> Option<Rewritten> {
    let bytes = statement.as_bytes();
    if !bytes
        .windows(9)
        .any(|w| w.eq_ignore_ascii_case(b"elementid"))
    {
        return None;
    }
    let mut out = String::with_capacity(statement.len() + 64);
    let mut added: Vec<(String, Json)> = Vec::new();
    let mut copied = 0;
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if matches!(c, b'\'' | b'"' | b'`') {
            i = skip_quoted(bytes, i);
            continue;
        }
        if let Some(end) = skip_comment(bytes, i) {
            i = end;
            continue;
        }
        if !is_identifier_start(c)
            || (i > 0 && (is_identifier(bytes[i - 1]) || bytes[i - 1] == b'$'))
        {
            i += 1;
            continue;
        }
        let word_end = (i..bytes.len())
            .find(|&k| !is_identifier(bytes[k]))
            .unwrap_or(bytes.len());
        let word = &statement[i..word_end];
        let open = skip_space(bytes, word_end);
        // `x.elementId` is a property.
        let property = previous_token(bytes, i) == ".";
        if !word.eq_ignore_ascii_case("elementId") || property || bytes.get(open) != Some(&b'(') {
            i = word_end;
            continue;
        }
        // The argument, up to the matching parenthesis.
        let mut depth = 0;
        let mut k = open;
        let mut close = None;
        while k < bytes.len() {
            match bytes[k] {
                b'\'' | b'"' | b'`' => {
                    k = skip_quoted(bytes, k);
                    continue;
                }
                b'(' => depth += 1,
                b')' => {
                    depth -= 1;
                    if depth == 0 {
                        close = Some(k);
                        break;
                    }
                }
                _ => {}
            }
            k += 1;
        }
        let Some(close) = close else {
            break;
        };
        let argument = statement[open + 1..close].trim();
        out.push_str(&statement[copied..i]);
        let general = neo4j_form(argument);
        let variable = !argument.is_empty()
            && (argument.bytes().all(is_identifier)
                || (argument.starts_with('`')
                    && skip_quoted(argument.as_bytes(), 0) == argument.len()));
        let before = previous_token(bytes, i);
        // Where the comparison is a condition of its own (not under NOT or XOR, whose
        // answer for a null would differ).
        let seekable = variable && matches!(before.as_str(), "WHERE" | "AND" | "OR" | "(");
        match lookup_after(statement, close + 1).filter(|_| seekable) {
            Some((operator, operand, end)) => {
                let pinned = if let Some(name) = operand.strip_prefix('$') {
                    let value = parameters.get(name);
                    let numbers = match (operator, value) {
                        ("IN", Some(Json::Array(ids))) => {
                            Json::Array(ids.iter().map(number).filter(|n| !n.is_null()).collect())
                        }
                        ("IN", _) => Json::Null,
                        (_, Some(id)) => number(id),
                        (_, None) => Json::Null,
                    };
                    let parameter = format!("{PARAMETER_PREFIX}{}", added.len());
                    added.push((parameter.clone(), numbers));
                    format!("${parameter}")
                } else {
                    // A literal id: its number, inline.
                    let text = &operand[1..operand.len() - 1];
                    number(&Json::String(text.to_string())).to_string()
                };
                out.push_str(&format!(
                    "(id({argument}) {operator} {pinned} AND {general} {operator} {operand})"
                ));
                copied = end;
                i = end;
            }
            None => {
                out.push_str(&general);
                copied = close + 1;
                i = close + 1;
            }
        }
    }
    if copied == 0 {
        return None;
    }
    out.push_str(&statement[copied..]);
    Some(Rewritten {
        statement: out,
        parameters: added,
    })
}

/// A column Grafeo named after a rewritten call, named as the client wrote it:
/// `replace(replace(elementId(n), 'n:', …), …)` → `elementId(n)`.
pub fn column_name(column: &str) -> String {
    const HEAD: &str = "replace(replace(elementId(";
    const TAIL: &str = ", 'n:', '4:devgraph:'), 'e:', '5:devgraph:')";
    let mut out = String::new();
    let mut rest = column;
    while let Some(at) = rest.find(HEAD) {
        let inner = &rest[at + HEAD.len()..];
        // The argument ends at the parenthesis that closes `elementId(`.
        let mut depth = 1;
        let mut end = None;
        for (n, c) in inner.char_indices() {
            match c {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        end = Some(n);
                        break;
                    }
                }
                _ => {}
            }
        }
        let Some(end) = end.filter(|&end| inner[end + 1..].starts_with(TAIL)) else {
            out.push_str(&rest[..at + HEAD.len()]);
            rest = inner;
            continue;
        };
        out.push_str(&rest[..at]);
        out.push_str("elementId(");
        out.push_str(&inner[..end]);
        out.push(')');
        rest = &inner[end + 1 + TAIL.len()..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn params(v: Json) -> Map<String, Json> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn a_lookup_by_element_id_pins_the_node_id() {
        let r = rewrite(
            "MATCH (n) WHERE elementId(n) = $id RETURN n LIMIT 2",
            &params(json!({"id": "4:devgraph:18"})),
        )
        .unwrap();
        assert_eq!(
            r.statement,
            "MATCH (n) WHERE (id(n) = $__devgraph_element_id_0 AND replace(replace(elementId(n), 'n:', '4:devgraph:'), 'e:', '5:devgraph:') = $id) RETURN n LIMIT 2"
        );
        assert_eq!(
            r.parameters,
            vec![("__devgraph_element_id_0".to_string(), json!(18))]
        );
        // Malformed or foreign ids pin nothing.
        for id in [
            json!("abc"),
            json!("4:other:18"),
            json!("4:devgraph:x"),
            json!(123),
            json!(null),
        ] {
            let r = rewrite(
                "MATCH (n) WHERE elementId(n) = $id RETURN n",
                &params(json!({ "id": id })),
            )
            .unwrap();
            assert_eq!(r.parameters[0].1, Json::Null, "{id}");
        }
        let r = rewrite(
            "MATCH (a), (b) WHERE elementId(a) IN $ids AND elementId(b) = '5:devgraph:3' RETURN a",
            &params(json!({"ids": ["4:devgraph:1", "abc", "4:devgraph:2"]})),
        )
        .unwrap();
        assert!(
            r.statement
                .contains("(id(a) IN $__devgraph_element_id_0 AND "),
            "{}",
            r.statement
        );
        assert!(r.statement.contains("(id(b) = 3 AND "), "{}", r.statement);
        assert_eq!(r.parameters[0].1, json!([1, 2]));
    }

    #[test]
    fn other_uses_become_neo4j_shaped_ids() {
        let r = rewrite(
            "MATCH (n) RETURN elementId(n), n ORDER BY elementId(n) // elementId(x)",
            &Map::new(),
        )
        .unwrap();
        assert_eq!(
            r.statement,
            "MATCH (n) RETURN replace(replace(elementId(n), 'n:', '4:devgraph:'), 'e:', '5:devgraph:'), n ORDER BY replace(replace(elementId(n), 'n:', '4:devgraph:'), 'e:', '5:devgraph:') // elementId(x)"
        );
        // Not a condition's whole right-hand side, or not a plain variable: no seek.
        let r = rewrite(
            "MATCH (n) WHERE elementId(n) = $id + 'x' OR elementId(head([n])) = $id RETURN 1",
            &Map::new(),
        )
        .unwrap();
        assert!(!r.statement.contains("id(n) ="), "{}", r.statement);
        assert!(r.parameters.is_empty());
        // Strings, names and properties are left alone.
        assert!(
            rewrite(
                "RETURN 'elementId(n)', n.elementId, `elementId`",
                &Map::new()
            )
            .is_none()
        );
        assert!(rewrite("MATCH (n) RETURN n", &Map::new()).is_none());
    }

    #[test]
    fn columns_get_back_the_name_the_client_wrote() {
        assert_eq!(column_name(&neo4j_form("n")), "elementId(n)");
        assert_eq!(
            column_name(&format!("{} > 'x'", neo4j_form("head(nodes(p))"))),
            "elementId(head(nodes(p))) > 'x'"
        );
        assert_eq!(column_name("n.id"), "n.id");
    }
}
