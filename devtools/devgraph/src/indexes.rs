//! Neo4j 5's vector indexes on Grafeo's own HNSW index, and the procedures of vector and
//! full-text indexes (the full-text indexes themselves are devgraph's, see
//! [`crate::fulltext`]).
//!
//! Statements are rewritten before Grafeo sees them:
//! - `CREATE VECTOR INDEX n [IF NOT EXISTS] FOR (c:L) ON c.p OPTIONS {indexConfig: {...}}`
//!   becomes Grafeo's `CREATE INDEX n … USING VECTOR {…}`;
//! - `CALL db.index.vector.queryNodes(i, k, v) [YIELD node, score]` becomes
//!   `CALL grafeo.search.vector(...)` on the index's label and property, followed by the
//!   rest of the statement. Vector scores are Neo4j's cosine score `(1 + cos) / 2`;
//! - `CALL db.index.fulltext.queryNodes(i, q [, {limit, skip}]) [YIELD node, score]`
//!   becomes an `UNWIND` of the hits [`crate::fulltext`] computes (bound to
//!   [`HITS_PARAMETER`]), each node looked up by id, followed by the rest of the statement
//!   (a full-text index Grafeo holds, made by an older devgraph, is searched with
//!   `grafeo.search.text`).
//!
//! `YIELD` may name `node` and `score` in any order, with `AS` aliases; without `YIELD`,
//! a standalone call returns both.
//!
//! Grafeo's vector index holds only vector values, while Neo4j clients send embeddings as
//! JSON lists: [`store_vectors`] passes parameter lists of at least [`MIN_VECTOR_LEN`]
//! floats as vectors.

use crate::errors::{Neo4jError, from_grafeo};
use crate::graph::Graph;
use grafeo::Value;
use grafeo::session::Session;
use serde_json::{Map, Value as Json, json};
use std::borrow::Cow;
use std::collections::HashMap;

/// Shorter float lists stay lists (so ordinary numeric properties keep their type).
pub const MIN_VECTOR_LEN: usize = 16;
/// Neo4j's full-text procedure returns every match unless given `{limit: n}`; Grafeo's
/// needs a k.
const FULLTEXT_K: usize = 10_000;

/// The parameter that carries a full-text query's hits (a name no client uses).
pub const HITS_PARAMETER: &str = "__devgraph_fulltext_hits";

/// The statement Grafeo should run instead of `statement`, if it needs rewriting (a
/// full-text query also binds [`HITS_PARAMETER`] in `parameters`).
pub fn rewrite(
    graph: &Graph,
    session: &Session,
    statement: &str,
    parameters: &mut Cow<'_, Map<String, Json>>,
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
        ["CREATE", "VECTOR", "INDEX"] => create_index(&tokens, parameters).map(Some),
        _ => procedure_call(graph, session, statement, parameters),
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Vector,
    Fulltext,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Token {
    pub text: String,
    pub start: usize,
    pub end: usize,
}

/// Identifiers, back-quoted names (`` `a``b` `` is one), `$params`, quoted strings,
/// numbers, single symbols.
pub(crate) fn tokens(statement: &str) -> Vec<Token> {
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
            loop {
                while j < chars.len() && chars[j].1 != c {
                    j += if chars[j].1 == '\\' && c != '`' { 2 } else { 1 };
                }
                j = (j + 1).min(chars.len());
                // A doubled back-tick inside a name is one back-tick.
                if c == '`' && j < chars.len() && chars[j].1 == '`' {
                    j += 1;
                    continue;
                }
                break;
            }
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
pub(crate) fn resolve(token: &str, parameters: &Map<String, Json>) -> Result<Json, Neo4jError> {
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

/// `CREATE VECTOR INDEX name [IF NOT EXISTS] FOR (v:Label) ON …` in Grafeo's form.
fn create_index(tokens: &[Token], parameters: &Map<String, Json>) -> Result<String, Neo4jError> {
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
    Ok(format!(
        "CREATE INDEX {name}{exists} FOR (n:{label}) ON (n.{property}) USING VECTOR {{dimensions: {dimensions}, metric: '{metric}'}}"
    ))
}

/// Neo4j's error for a procedure called on an index that does not exist (observed on
/// 5.26.30).
fn no_such_index(kind: Kind, name: &str) -> Neo4jError {
    let (procedure, what) = match kind {
        Kind::Vector => ("db.index.vector.queryNodes", "vector"),
        Kind::Fulltext => ("db.index.fulltext.queryNodes", "fulltext"),
    };
    Neo4jError::new(
        400,
        "Neo.ClientError.Procedure.ProcedureCallFailed",
        format!(
            "Failed to invoke procedure `{procedure}`: Caused by: java.lang.IllegalArgumentException: There is no such {what} schema index: {name}"
        ),
    )
}

/// `{limit: 10, skip: $s}`: the options' values by key.
fn options(
    text: &str,
    parameters: &Map<String, Json>,
) -> Result<HashMap<String, Json>, Neo4jError> {
    let t = tokens(text);
    let mut out = HashMap::new();
    for w in t.windows(3) {
        if w[1].text == ":" {
            out.insert(unquote(&w[0].text), resolve(&w[2].text, parameters)?);
        }
    }
    Ok(out)
}

/// A count from an option (`limit`, `skip`): a non-negative integer.
fn count(value: Option<&Json>, what: &str) -> Result<Option<usize>, Neo4jError> {
    match value {
        None | Some(Json::Null) => Ok(None),
        Some(v) => v
            .as_u64()
            .or_else(|| v.as_f64().filter(|f| *f >= 0.0).map(|f| f as u64))
            .map(|n| Some(n as usize))
            .ok_or_else(|| {
                Neo4jError::new(
                    400,
                    "Neo.ClientError.Procedure.ProcedureCallFailed",
                    format!("Failed to invoke procedure `db.index.fulltext.queryNodes`: `{what}` must be a non-negative integer, not {v}"),
                )
            }),
    }
}

/// What follows the procedure call: `YIELD node [AS a], score [AS b] <rest>`, or nothing.
/// The statement text that turns the internal `node` and `score` variables into what the
/// caller yielded, followed by the rest.
fn after_call(procedure: &str, text: &str) -> Result<String, Neo4jError> {
    let text = text.trim();
    let Some(yielded) = crate::schema::strip_word(text, "YIELD") else {
        if text.is_empty() || text == ";" {
            return Ok("RETURN node, score".to_string());
        }
        return Err(syntax(format!(
            "devgraph supports {procedure}(…) followed by `YIELD node, score` (or alone)"
        )));
    };
    let (items, rest) = crate::schema::yield_items(yielded);
    let mut projections = Vec::new();
    for (column, alias) in &items {
        if column == "*" {
            projections.push("node".to_string());
            projections.push("score".to_string());
        } else if column == "node" || column == "score" {
            projections.push(if alias == column {
                column.clone()
            } else {
                format!("{column} AS `{}`", alias.replace('`', "``"))
            });
        } else {
            return Err(syntax(format!(
                "`{procedure}` yields no `{column}` (it yields node, score)"
            )));
        }
    }
    let projection = projections.join(", ");
    let rest = rest.trim();
    Ok(if rest.is_empty() || rest == ";" {
        format!("RETURN {projection}")
    } else if crate::schema::strip_word(rest, "WHERE").is_some()
        && !rest
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .any(|w| w.eq_ignore_ascii_case("RETURN"))
    {
        let names: Vec<&str> = items.iter().map(|(_, alias)| alias.as_str()).collect();
        format!("WITH {projection} {rest} RETURN {}", names.join(", "))
    } else {
        format!("WITH {projection} {rest}")
    })
}

/// Rewrites a statement that starts with one of Neo4j's index procedures.
fn procedure_call(
    graph: &Graph,
    session: &Session,
    statement: &str,
    parameters: &mut Cow<'_, Map<String, Json>>,
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
    let (kind, procedure) = match procedure.as_str() {
        "db.index.vector.querynodes" => (Kind::Vector, "db.index.vector.queryNodes"),
        "db.index.fulltext.querynodes" => (Kind::Fulltext, "db.index.fulltext.queryNodes"),
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
    let arg = |i: usize| {
        args.get(i)
            .map(|(s, e)| statement[*s..*e].trim())
            .filter(|a| !a.is_empty())
    };
    let after = tokens.get(close + 1).map_or("", |t| &statement[t.start..]);
    let after = after_call(procedure, after)?;
    let index = resolve(arg(0).unwrap_or_default(), parameters)?;
    let index = index.as_str().unwrap_or_default().to_string();
    let call = match kind {
        Kind::Vector => {
            let (label, property) = index_target(session, &index, kind)?;
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
            let options = match arg(2) {
                Some(text) => options(text, parameters)?,
                None => HashMap::new(),
            };
            let limit = count(options.get("limit"), "limit")?;
            let skip = count(options.get("skip"), "skip")?.unwrap_or(0);
            match graph.fulltext.get(&index) {
                Some(definition) => {
                    let text = resolve(query, parameters)?;
                    let Some(text) = text.as_str() else {
                        return Err(Neo4jError::new(
                            400,
                            "Neo.ClientError.Statement.TypeError",
                            format!("The full-text query must be a string, not {text}"),
                        ));
                    };
                    let hits = graph.fulltext.search(
                        graph.db(),
                        session,
                        &definition,
                        text,
                        skip,
                        limit,
                    )?;
                    let hits: Vec<Json> =
                        hits.iter().map(|(id, score)| json!([id, score])).collect();
                    parameters
                        .to_mut()
                        .insert(HITS_PARAMETER.to_string(), Json::Array(hits));
                    format!(
                        "UNWIND ${HITS_PARAMETER} AS __devgraph_hit MATCH (node) WHERE id(node) = __devgraph_hit[0] \
                         WITH node, __devgraph_hit[1] AS score"
                    )
                }
                None => {
                    // A full-text index in Grafeo's own form (made by an older devgraph).
                    let (label, property) = index_target(session, &index, kind)?;
                    let limit = limit.unwrap_or(FULLTEXT_K) + skip;
                    format!(
                        "CALL grafeo.search.text('{label}', '{property}', {query}, {limit}) YIELD node_id, score \
                         MATCH (node) WHERE id(node) = node_id WITH node, score SKIP {skip}"
                    )
                }
            }
        }
    };
    Ok(Some(format!("{call} {after}")))
}

/// The label and property of the Grafeo index called `name`, which must be of `kind`.
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
    Err(no_such_index(kind, name))
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
        let out = create_index(&t, &params(json!({"dim": 64}))).unwrap();
        assert_eq!(
            out,
            "CREATE INDEX chunk_embedding IF NOT EXISTS FOR (n:Chunk) ON (n.embedding) USING VECTOR {dimensions: 64, metric: 'cosine'}"
        );
    }

    #[test]
    fn a_doubled_back_tick_stays_inside_the_name() {
        let t: Vec<String> = tokens("FOR (n:`Odd``Label`|`B`) ON EACH [n.`the name`]")
            .into_iter()
            .map(|t| t.text)
            .collect();
        assert_eq!(
            t,
            [
                "FOR",
                "(",
                "n",
                ":",
                "`Odd``Label`",
                "|",
                "`B`",
                ")",
                "ON",
                "EACH",
                "[",
                "n",
                ".",
                "`the name`",
                "]"
            ]
        );
    }

    #[test]
    fn yield_items_become_a_projection_of_node_and_score() {
        let p = "db.index.fulltext.queryNodes";
        assert_eq!(after_call(p, "").unwrap(), "RETURN node, score");
        assert_eq!(
            after_call(p, "YIELD node, score RETURN node, score").unwrap(),
            "WITH node, score RETURN node, score"
        );
        assert_eq!(
            after_call(
                p,
                "YIELD node, score WHERE node:`Product` RETURN node, score"
            )
            .unwrap(),
            "WITH node, score WHERE node:`Product` RETURN node, score"
        );
        assert_eq!(
            after_call(p, "YIELD score AS s, node AS n").unwrap(),
            "RETURN score AS `s`, node AS `n`"
        );
        assert_eq!(
            after_call(p, "YIELD node WHERE node.x = 1").unwrap(),
            "WITH node WHERE node.x = 1 RETURN node"
        );
        assert!(after_call(p, "YIELD nodes").is_err());
        assert!(after_call(p, "RETURN 1").is_err());
    }

    #[test]
    fn options_are_read_from_literals_and_parameters() {
        let o = options(
            "{limit: $candidates, skip: 2}",
            &params(json!({"candidates": 5})),
        )
        .unwrap();
        assert_eq!(o.get("limit"), Some(&json!(5)));
        assert_eq!(o.get("skip"), Some(&json!(2)));
    }
}
