//! Neo4j 5's vector and full-text indexes on Grafeo's own HNSW and BM25 indexes.
//!
//! Statements are rewritten before Grafeo sees them:
//! - `CREATE VECTOR INDEX n [IF NOT EXISTS] FOR (c:L) ON c.p OPTIONS {indexConfig: {...}}`
//!   and `CREATE FULLTEXT INDEX n [IF NOT EXISTS] FOR (c:L) ON EACH [c.p] [OPTIONS ...]`
//!   become Grafeo's `CREATE INDEX n … USING VECTOR|TEXT {…}` (analyzer `cjk` → Grafeo's
//!   CJK bigram tokenizer, as Lucene's CJKAnalyzer does);
//! - `CALL db.index.vector.queryNodes(i, k, v) YIELD node, score` and
//!   `CALL db.index.fulltext.queryNodes(i, q) YIELD node, score` become
//!   `CALL grafeo.search.vector|text(...)` on the index's label and property, followed by
//!   the rest of the statement. Vector scores are Neo4j's cosine score `(1 + cos) / 2`.
//!
//! Grafeo's vector index holds only vector values, while Neo4j clients send embeddings as
//! JSON lists: [`store_vectors`] passes parameter lists of at least [`MIN_VECTOR_LEN`]
//! floats as vectors.

use crate::errors::{Neo4jError, from_grafeo};
use grafeo::Value;
use grafeo::session::Session;
use serde_json::{Map, Value as Json};
use std::collections::HashMap;

/// Shorter float lists stay lists (so ordinary numeric properties keep their type).
pub const MIN_VECTOR_LEN: usize = 16;
/// Neo4j's full-text procedure returns every match unless given `{limit: n}`; Grafeo's
/// needs a k.
const FULLTEXT_K: usize = 10_000;

/// The statement Grafeo should run instead of `statement`, if it needs rewriting.
pub fn rewrite(
    session: &Session,
    statement: &str,
    parameters: &Map<String, Json>,
) -> Result<Option<String>, Neo4jError> {
    // Every statement passes here; only index DDL and procedure calls are rewritten, and
    // tokenising the whole text of every other statement first was a tenth of a large
    // write's planning.
    if !crate::constraints::starts_with_any(statement, &["CREATE", "CALL"]) {
        return Ok(None);
    }
    let tokens = tokens(statement);
    let words: Vec<String> = tokens
        .iter()
        .take(3)
        .map(|t| t.text.to_ascii_uppercase())
        .collect();
    match words.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["CREATE", "VECTOR", "INDEX"] => create_index(&tokens, parameters, Kind::Vector).map(Some),
        ["CREATE", "FULLTEXT", "INDEX"] => {
            create_index(&tokens, parameters, Kind::Fulltext).map(Some)
        }
        _ => procedure_call(session, statement, parameters),
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Vector,
    Fulltext,
}

#[derive(Debug, Clone, PartialEq)]
struct Token {
    text: String,
    start: usize,
    end: usize,
}

/// Identifiers, back-quoted names, `$params`, quoted strings, numbers, single symbols.
fn tokens(statement: &str) -> Vec<Token> {
    let chars: Vec<(usize, char)> = statement.char_indices().collect();
    let end_of = |i: usize| chars.get(i).map_or(statement.len(), |(b, _)| *b);
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let (start, c) = chars[i];
        let mut j = i + 1;
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        if c == '`' || c == '\'' || c == '"' {
            while j < chars.len() && chars[j].1 != c {
                j += if chars[j].1 == '\\' { 2 } else { 1 };
            }
            j = (j + 1).min(chars.len());
        } else if c.is_alphanumeric()
            || c == '_'
            || c == '$'
            || c == '.' && i + 1 < chars.len() && chars[i + 1].1.is_ascii_digit()
        {
            while j < chars.len()
                && (chars[j].1.is_alphanumeric()
                    || chars[j].1 == '_'
                    || chars[j].1 == '.' && c.is_ascii_digit())
            {
                j += 1;
            }
        }
        let end = end_of(j);
        out.push(Token {
            text: statement[start..end].to_string(),
            start,
            end,
        });
        i = j;
    }
    out
}

fn unquote(text: &str) -> String {
    let inner = |q: char| text.strip_prefix(q).and_then(|t| t.strip_suffix(q));
    inner('`')
        .or_else(|| inner('\''))
        .or_else(|| inner('"'))
        .unwrap_or(text)
        .to_string()
}

/// A literal or `$param` as text (strings) or number.
fn resolve(token: &str, parameters: &Map<String, Json>) -> Result<Json, Neo4jError> {
    if let Some(name) = token.strip_prefix('$') {
        return parameters.get(name).cloned().ok_or_else(|| {
            Neo4jError::new(
                400,
                "Neo.ClientError.Statement.ParameterMissing",
                format!("Expected parameter(s): {name}"),
            )
        });
    }
    if token.starts_with('\'') || token.starts_with('"') {
        return Ok(Json::String(unquote(token)));
    }
    serde_json::from_str(token).map_err(|_| {
        syntax(format!(
            "expected a literal or a parameter, found `{token}`"
        ))
    })
}

fn syntax(message: impl Into<String>) -> Neo4jError {
    Neo4jError::new(400, "Neo.ClientError.Statement.SyntaxError", message)
}

fn is_name(text: &str) -> bool {
    !text.is_empty() && text.chars().all(|c| c.is_alphanumeric() || c == '_')
}

/// `CREATE VECTOR|FULLTEXT INDEX name [IF NOT EXISTS] FOR (v:Label) ON …` in Grafeo's form.
fn create_index(
    tokens: &[Token],
    parameters: &Map<String, Json>,
    kind: Kind,
) -> Result<String, Neo4jError> {
    let t: Vec<&str> = tokens.iter().map(|t| t.text.as_str()).collect();
    let upper = |i: usize| t.get(i).map(|s| s.to_ascii_uppercase()).unwrap_or_default();
    let name = unquote(t.get(3).copied().unwrap_or_default());
    if !is_name(&name) {
        return Err(syntax(
            "devgraph needs a name for the index: CREATE … INDEX name …",
        ));
    }
    let mut i = 4;
    let if_not_exists = upper(i) == "IF";
    if if_not_exists {
        i += 3;
    }
    // FOR ( v : Label ) ON
    let expect = |i: usize, what: &str| {
        if upper(i) == what {
            Ok(())
        } else {
            Err(syntax(format!(
                "expected {what} at `{}`",
                t.get(i).copied().unwrap_or("end")
            )))
        }
    };
    expect(i, "FOR")?;
    expect(i + 1, "(")?;
    let variable = t.get(i + 2).copied().unwrap_or_default();
    expect(i + 3, ":")?;
    let label = unquote(t.get(i + 4).copied().unwrap_or_default());
    expect(i + 5, ")")?;
    expect(i + 6, "ON")?;
    i += 7;
    let mut properties = Vec::new();
    while i < t.len() && upper(i) != "OPTIONS" {
        if t[i] == variable && t.get(i + 1) == Some(&".") {
            properties.push(unquote(t.get(i + 2).copied().unwrap_or_default()));
            i += 3;
        } else if let Some(p) = t[i].strip_prefix(&format!("{variable}.")) {
            properties.push(unquote(p));
            i += 1;
        } else {
            i += 1;
        }
    }
    let [property] = properties.as_slice() else {
        return Err(syntax(format!(
            "devgraph indexes exactly one property, found {properties:?}"
        )));
    };
    if !is_name(&label) || !is_name(property) {
        return Err(syntax(
            "devgraph indexes labels and properties made of letters, digits and _",
        ));
    }
    // OPTIONS {indexConfig: {`key`: value, …}}: the keys we know, wherever they appear.
    let mut config: HashMap<String, Json> = HashMap::new();
    for w in (i..t.len()).collect::<Vec<_>>().windows(3) {
        if t[w[1]] == ":" && unquote(t[w[0]]).contains('.') {
            config.insert(unquote(t[w[0]]), resolve(t[w[2]], parameters)?);
        }
    }
    let exists = if if_not_exists { " IF NOT EXISTS" } else { "" };
    let using = match kind {
        Kind::Vector => {
            let dimensions = config
                .get("vector.dimensions")
                .and_then(Json::as_u64)
                .ok_or_else(|| syntax("devgraph needs `vector.dimensions` in the index config"))?;
            let metric = match config
                .get("vector.similarity_function")
                .and_then(Json::as_str)
            {
                None => "cosine".to_string(),
                Some(f) if f.eq_ignore_ascii_case("cosine") => "cosine".into(),
                Some(f) if f.eq_ignore_ascii_case("euclidean") => "euclidean".into(),
                Some(f) => return Err(syntax(format!("unknown vector.similarity_function {f}"))),
            };
            format!("VECTOR {{dimensions: {dimensions}, metric: '{metric}'}}")
        }
        Kind::Fulltext => {
            let tokenizer = match config.get("fulltext.analyzer").and_then(Json::as_str) {
                Some("cjk") => "cjk_bigram",
                Some("english") => "simple",
                _ => "standard",
            };
            format!("TEXT {{tokenizer: '{tokenizer}'}}")
        }
    };
    Ok(format!(
        "CREATE INDEX {name}{exists} FOR (n:{label}) ON (n.{property}) USING {using}"
    ))
}

/// Rewrites a statement that starts with one of Neo4j's index procedures.
fn procedure_call(
    session: &Session,
    statement: &str,
    parameters: &Map<String, Json>,
) -> Result<Option<String>, Neo4jError> {
    let tokens = tokens(statement);
    let Some(first) = tokens.first() else {
        return Ok(None);
    };
    if !first.text.eq_ignore_ascii_case("CALL") {
        return Ok(None);
    }
    // The dotted name arrives as identifier and `.` tokens, up to the parenthesis.
    let open = tokens
        .iter()
        .position(|t| t.text == "(")
        .unwrap_or(tokens.len());
    let procedure: String = tokens[1..open]
        .iter()
        .map(|t| t.text.to_ascii_lowercase())
        .collect();
    let kind = match procedure.as_str() {
        "db.index.vector.querynodes" => Kind::Vector,
        "db.index.fulltext.querynodes" => Kind::Fulltext,
        _ => return Ok(None),
    };
    // Arguments: the tokens between the parentheses, split at top-level commas.
    let mut args: Vec<(usize, usize)> = Vec::new();
    let mut depth = 0;
    let mut arg_start = None;
    let mut close = None;
    for (n, t) in tokens.iter().enumerate().skip(open) {
        match t.text.as_str() {
            "(" | "[" | "{" => {
                depth += 1;
                if depth == 1 {
                    arg_start = Some(t.end);
                    continue;
                }
            }
            ")" | "]" | "}" => {
                depth -= 1;
                if depth == 0 {
                    args.extend(arg_start.map(|s| (s, t.start)));
                    close = Some(n);
                    break;
                }
            }
            "," if depth == 1 => {
                args.extend(arg_start.map(|s| (s, t.start)));
                arg_start = Some(t.end);
            }
            _ => {}
        }
    }
    let close = close.ok_or_else(|| syntax(format!("unclosed argument list of {procedure}")))?;
    let arg = |i: usize| args.get(i).map(|(s, e)| statement[*s..*e].trim());
    let yielded: Vec<&str> = tokens[close + 1..]
        .iter()
        .take(4)
        .map(|t| t.text.as_str())
        .collect();
    if yielded.len() < 4
        || !yielded[0].eq_ignore_ascii_case("YIELD")
        || yielded[1] != "node"
        || yielded[2] != ","
        || yielded[3] != "score"
    {
        return Err(syntax(format!(
            "devgraph supports {procedure}(…) followed by `YIELD node, score`"
        )));
    }
    let rest = tokens.get(close + 5).map_or("", |t| &statement[t.start..]);
    let index = resolve(arg(0).unwrap_or_default(), parameters)?;
    let index = index.as_str().unwrap_or_default();
    let (label, property) = index_target(session, index, kind)?;
    let call = match kind {
        Kind::Vector => {
            let (Some(k), Some(vector)) = (arg(1), arg(2)) else {
                return Err(syntax(
                    "db.index.vector.queryNodes takes (index, k, vector)",
                ));
            };
            format!(
                "CALL grafeo.search.vector('{label}', '{property}', {vector}, {k}) YIELD node_id, distance \
                 MATCH (node) WHERE id(node) = node_id WITH node, 1.0 - distance / 2.0 AS score"
            )
        }
        Kind::Fulltext => {
            let query = arg(1)
                .ok_or_else(|| syntax("db.index.fulltext.queryNodes takes (index, query)"))?;
            // Neo4j's options map: only `limit` matters here.
            let limit = arg(2)
                .and_then(|options| {
                    let inner = options.trim().strip_prefix('{')?.strip_suffix('}')?;
                    inner.split(',').find_map(|entry| {
                        let (key, value) = entry.split_once(':')?;
                        (key.trim() == "limit").then(|| value.trim().to_string())
                    })
                })
                .unwrap_or_else(|| FULLTEXT_K.to_string());
            format!(
                "CALL grafeo.search.text('{label}', '{property}', {query}, {limit}) YIELD node_id, score \
                 MATCH (node) WHERE id(node) = node_id WITH node, score"
            )
        }
    };
    Ok(Some(format!("{call} {rest}")))
}

/// The label and property of the index called `name`, which must be of `kind`.
fn index_target(session: &Session, name: &str, kind: Kind) -> Result<(String, String), Neo4jError> {
    let result = session
        .execute_cypher("SHOW INDEXES")
        .map_err(|e| from_grafeo(&e))?;
    let text = |v: &Value| v.as_str().map(str::to_string);
    let wanted = match kind {
        Kind::Vector => "vector",
        Kind::Fulltext => "text",
    };
    for row in result.rows() {
        if row.first().and_then(text).as_deref() == Some(name)
            && row
                .get(1)
                .and_then(text)
                .is_some_and(|t| t.to_ascii_lowercase().contains(wanted))
            && let (Some(label), Some(property)) =
                (row.get(2).and_then(text), row.get(3).and_then(text))
            && is_name(&label)
            && is_name(&property)
        {
            return Ok((label, property));
        }
    }
    let what = match kind {
        Kind::Vector => "vector",
        Kind::Fulltext => "fulltext",
    };
    Err(Neo4jError::new(
        400,
        "Neo.ClientError.Procedure.ProcedureCallFailed",
        format!("Failed to invoke procedure: There is no such {what} schema index: {name}"),
    ))
}

/// Lists of at least [`MIN_VECTOR_LEN`] floats, at any depth, become vectors.
pub fn store_vectors(parameters: &mut HashMap<String, Value>) {
    for value in parameters.values_mut() {
        to_vectors(value);
    }
}

fn to_vectors(value: &mut Value) {
    match value {
        Value::List(items) => {
            if items.len() >= MIN_VECTOR_LEN && items.iter().all(|v| matches!(v, Value::Float64(_)))
            {
                let vector: Vec<f32> = items
                    .iter()
                    .filter_map(|v| match v {
                        Value::Float64(f) => Some(*f as f32),
                        _ => None,
                    })
                    .collect();
                *value = Value::Vector(vector.into());
            } else if items.iter().any(holds_list_or_map) {
                // Grafeo's lists and maps are shared: rebuild the ones that change.
                let mut rebuilt: Vec<Value> = items.to_vec();
                rebuilt.iter_mut().for_each(to_vectors);
                *value = Value::List(rebuilt.into());
            }
        }
        Value::Map(map) if map.values().any(holds_list_or_map) => {
            let mut rebuilt = (**map).clone();
            rebuilt.values_mut().for_each(to_vectors);
            *value = Value::Map(std::sync::Arc::new(rebuilt));
        }
        _ => {}
    }
}

fn holds_list_or_map(value: &Value) -> bool {
    matches!(value, Value::List(_) | Value::Map(_))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn params(v: Json) -> Map<String, Json> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn vector_index_ddl_becomes_grafeo_ddl() {
        let ddl = "CREATE VECTOR INDEX chunk_embedding IF NOT EXISTS FOR (c:Chunk) ON c.embedding \
                   OPTIONS {indexConfig: {`vector.dimensions`: $dim, `vector.similarity_function`: 'cosine'}}";
        let t = tokens(ddl);
        let out = create_index(&t, &params(json!({"dim": 64})), Kind::Vector).unwrap();
        assert_eq!(
            out,
            "CREATE INDEX chunk_embedding IF NOT EXISTS FOR (n:Chunk) ON (n.embedding) USING VECTOR {dimensions: 64, metric: 'cosine'}"
        );
    }

    #[test]
    fn fulltext_ddl_maps_the_cjk_analyzer() {
        let ddl = "CREATE FULLTEXT INDEX chunk_text IF NOT EXISTS FOR (c:Chunk) ON EACH [c.text] \
                   OPTIONS {indexConfig: {`fulltext.analyzer`: 'cjk'}}";
        let out = create_index(&tokens(ddl), &Map::new(), Kind::Fulltext).unwrap();
        assert_eq!(
            out,
            "CREATE INDEX chunk_text IF NOT EXISTS FOR (n:Chunk) ON (n.text) USING TEXT {tokenizer: 'cjk_bigram'}"
        );
        let two = "CREATE FULLTEXT INDEX x FOR (c:Chunk) ON EACH [c.text, c.title]";
        assert!(create_index(&tokens(two), &Map::new(), Kind::Fulltext).is_err());
    }
}
