//! Neo4j 5's full-text indexes, kept by devgraph itself (Grafeo's BM25 index covers one
//! label and one property and has no prefix queries; Neo4j's cover several labels and
//! properties and answer Lucene's query language).
//!
//! - `CREATE FULLTEXT INDEX [name] [IF NOT EXISTS] FOR (n:A|B) ON EACH [n.p, n.q]
//!   [OPTIONS {indexConfig: {`fulltext.analyzer`: …}}]`: the definition is kept here (and in
//!   `FILE.fulltext.json` with `--data`), with Neo4j's schema rules: an equivalent index
//!   (`EquivalentSchemaRuleAlreadyExists`), a name taken (`IndexWithNameAlreadyExists`,
//!   `ConstraintWithNameAlreadyExists`), the same labels and properties under another name
//!   (`IndexAlreadyExists`); `IF NOT EXISTS` makes each of them a no-op. `DROP INDEX name
//!   [IF EXISTS]` drops it; for a name no index has, Neo4j's `Schema.IndexDropFailed`.
//! - `db.index.fulltext.queryNodes(name, query [, {limit, skip}])` (see [`crate::indexes`])
//!   answers from an inverted index built here from the nodes of the index's labels (a
//!   node of several of them once), per property, with the index's analyzer. Outside an
//!   explicit transaction the built index is kept until the graph's next commit (Grafeo's
//!   epoch); inside one it is built afresh from what the transaction sees, as Neo4j's
//!   index sees the transaction's own writes.
//! - The query is Lucene's classic syntax over every property of the index: words
//!   (analysed like the text: `prd-001` is `prd` OR `001`), `prefix*` and wildcards
//!   (`a?c*`, lower-cased, not analysed), `"phrases"`, `field:…`, `AND`/`OR`/`NOT`/`&&`/
//!   `||`/`!`/`+`/`-`, parentheses, `^boost`, `\` escapes, with Lucene's rules for how they
//!   combine. Scores are Lucene's: BM25 (k1 1.2, b 0.75) per property for words and
//!   phrases, a constant 1 per property for prefixes and wildcards, summed over the
//!   clauses that match. Fuzzy (`~`), range (`[a TO b]`) and regular-expression (`/…/`)
//!   queries fail loudly.

use crate::errors::{Neo4jError, from_grafeo};
use crate::indexes::{Token, resolve, tokens};
use grafeo::Value;
use grafeo::session::Session;
use serde_json::{Value as Json, json};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// The analyzers of `fulltext.analyzer` devgraph knows (Neo4j's names).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Analyzer {
    /// Neo4j's default: Lucene's standard tokenizer, lower-cased, no stop words.
    StandardNoStopWords,
    /// The same without English stop words.
    Standard,
    /// As `standard` (devgraph does not stem).
    English,
    /// Pairs of Chinese, Japanese and Korean characters, other words whole, without
    /// English stop words (Lucene's CJKAnalyzer).
    Cjk,
    /// Runs of letters, lower-cased.
    Simple,
    /// Runs of non-whitespace, as written.
    Whitespace,
    /// The whole text as one term.
    Keyword,
}

/// Lucene's English stop words (`EnglishAnalyzer.ENGLISH_STOP_WORDS_SET`).
const ENGLISH_STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is", "it",
    "no", "not", "of", "on", "or", "such", "that", "the", "their", "then", "there", "these",
    "they", "this", "to", "was", "will", "with",
];

/// Lucene's CJKAnalyzer stop words.
const CJK_STOP_WORDS: &[&str] = &[
    "a", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is", "it", "no",
    "not", "of", "on", "or", "s", "such", "t", "that", "the", "their", "then", "there", "these",
    "they", "this", "to", "was", "will", "with", "www",
];

/// The runs of letters and digits of `text`, lower-cased (Lucene's standard tokenizer, as
/// far as devgraph goes: `PO-0003-L1` gives `po`, `0003`, `l1`).
fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
}

impl Analyzer {
    pub fn parse(name: &str) -> Option<Analyzer> {
        Some(match name.to_ascii_lowercase().as_str() {
            "standard-no-stop-words" => Analyzer::StandardNoStopWords,
            "standard" => Analyzer::Standard,
            "english" => Analyzer::English,
            "cjk" => Analyzer::Cjk,
            "simple" => Analyzer::Simple,
            "whitespace" => Analyzer::Whitespace,
            "keyword" => Analyzer::Keyword,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Analyzer::StandardNoStopWords => "standard-no-stop-words",
            Analyzer::Standard => "standard",
            Analyzer::English => "english",
            Analyzer::Cjk => "cjk",
            Analyzer::Simple => "simple",
            Analyzer::Whitespace => "whitespace",
            Analyzer::Keyword => "keyword",
        }
    }

    /// The terms of `text`, in order.
    pub fn terms(self, text: &str) -> Vec<String> {
        use grafeo_core::index::text::{CjkBigramTokenizer, Tokenizer};
        let without = |stop: &[&str], terms: Vec<String>| -> Vec<String> {
            terms
                .into_iter()
                .filter(|t| !stop.contains(&t.as_str()))
                .collect()
        };
        match self {
            Analyzer::StandardNoStopWords => words(text).collect(),
            Analyzer::Standard | Analyzer::English => {
                without(ENGLISH_STOP_WORDS, words(text).collect())
            }
            Analyzer::Cjk => without(CJK_STOP_WORDS, CjkBigramTokenizer::new().tokenize(text)),
            Analyzer::Simple => text
                .split(|c: char| !c.is_alphabetic())
                .filter(|w| !w.is_empty())
                .map(str::to_lowercase)
                .collect(),
            Analyzer::Whitespace => text.split_whitespace().map(str::to_string).collect(),
            Analyzer::Keyword => {
                if text.is_empty() {
                    Vec::new()
                } else {
                    vec![text.to_string()]
                }
            }
        }
    }

    /// A prefix or wildcard term as Lucene normalises it (lower-cased, not split).
    fn normalize(self, term: &str) -> String {
        match self {
            Analyzer::Whitespace | Analyzer::Keyword => term.to_string(),
            _ => term.to_lowercase(),
        }
    }
}

/// One full-text index as Neo4j defines it.
#[derive(Clone, Debug, PartialEq)]
pub struct FulltextIndex {
    pub name: String,
    pub labels: Vec<String>,
    pub properties: Vec<String>,
    pub analyzer: Analyzer,
}

impl FulltextIndex {
    /// Neo4j's description of its schema: `(:A:B {p, q})`.
    pub fn schema(&self) -> String {
        format!(
            "(:{} {{{}}})",
            self.labels.join(":"),
            self.properties.join(", ")
        )
    }

    fn same_schema(&self, other: &FulltextIndex) -> bool {
        self.labels == other.labels && self.properties == other.properties
    }

    fn to_json(&self) -> Json {
        json!({"name": self.name, "labels": self.labels, "properties": self.properties, "analyzer": self.analyzer.name()})
    }

    fn from_json(value: &Json) -> Option<FulltextIndex> {
        let strings = |key: &str| -> Option<Vec<String>> {
            value[key]
                .as_array()?
                .iter()
                .map(|v| v.as_str().map(str::to_string))
                .collect()
        };
        Some(FulltextIndex {
            name: value["name"].as_str()?.to_string(),
            labels: strings("labels")?,
            properties: strings("properties")?,
            analyzer: Analyzer::parse(
                value["analyzer"]
                    .as_str()
                    .unwrap_or("standard-no-stop-words"),
            )?,
        })
    }

    /// Its row of `SHOW INDEXES` (without `id`).
    pub fn show_row(&self) -> Json {
        json!({
            "name": self.name,
            "type": "FULLTEXT",
            "state": "ONLINE",
            "populationPercent": 100.0,
            "entityType": "NODE",
            "labelsOrTypes": self.labels,
            "properties": self.properties,
            "indexProvider": "fulltext-1.0",
            "owningConstraint": null,
            "lastRead": null,
            "readCount": null,
        })
    }
}

/// The full-text indexes of one graph, and the inverted indexes built for them.
#[derive(Default)]
pub struct Fulltext {
    indexes: Mutex<Vec<FulltextIndex>>,
    /// By index name: the graph epoch it was built at, and the index.
    built: Mutex<HashMap<String, (u64, Arc<Built>)>>,
    /// Where the definitions are saved (with `--data`).
    file: Mutex<Option<PathBuf>>,
}

impl Fulltext {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<FulltextIndex>> {
        self.indexes.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn get(&self, name: &str) -> Option<FulltextIndex> {
        self.lock().iter().find(|i| i.name == name).cloned()
    }

    pub fn list(&self) -> Vec<FulltextIndex> {
        self.lock().clone()
    }

    /// Reads the definitions saved in `file` (if it exists) and saves there from now on.
    pub fn restore(&self, file: &Path) -> Result<usize, String> {
        *self.file.lock().unwrap_or_else(|p| p.into_inner()) = Some(file.to_path_buf());
        let Ok(text) = std::fs::read_to_string(file) else {
            return Ok(0);
        };
        let saved: Vec<Json> =
            serde_json::from_str(&text).map_err(|e| format!("{}: {e}", file.display()))?;
        let indexes: Vec<FulltextIndex> =
            saved.iter().filter_map(FulltextIndex::from_json).collect();
        let count = indexes.len();
        *self.lock() = indexes;
        Ok(count)
    }

    fn save(&self, indexes: &[FulltextIndex]) -> Result<(), Neo4jError> {
        let Some(file) = self.file.lock().unwrap_or_else(|p| p.into_inner()).clone() else {
            return Ok(());
        };
        let text = Json::Array(indexes.iter().map(FulltextIndex::to_json).collect()).to_string();
        let temporary = file.with_extension("tmp");
        std::fs::write(&temporary, text)
            .and_then(|()| std::fs::rename(&temporary, &file))
            .map_err(|e| {
                Neo4jError::new(
                    500,
                    "Neo.DatabaseError.General.UnknownError",
                    format!(
                        "could not save the full-text indexes to {}: {e}",
                        file.display()
                    ),
                )
            })
    }

    /// The hits of `query` on `index`, best first (equal scores by node id), after `skip`,
    /// at most `limit`: (node id, score).
    pub fn search(
        &self,
        db: &grafeo::GrafeoDB,
        session: &Session,
        index: &FulltextIndex,
        query: &str,
        skip: usize,
        limit: Option<usize>,
    ) -> Result<Vec<(i64, f64)>, Neo4jError> {
        let parsed = parse_query(query)?;
        let built = if session.in_transaction() {
            // What the transaction sees, its own writes included.
            Arc::new(Built::build(session, index)?)
        } else {
            let epoch = db.current_epoch().0;
            let cached = self
                .built
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .get(&index.name)
                .filter(|(at, built)| *at == epoch && built.index == *index)
                .map(|(_, built)| built.clone());
            match cached {
                Some(built) => built,
                None => {
                    let built = Arc::new(Built::build(session, index)?);
                    self.built
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .insert(index.name.clone(), (epoch, built.clone()));
                    built
                }
            }
        };
        let mut hits: Vec<(i64, f64)> = built
            .evaluate(&parsed)
            .into_iter()
            .map(|(doc, score)| (built.nodes[doc as usize], score))
            .collect();
        hits.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        Ok(hits
            .into_iter()
            .skip(skip)
            .take(limit.unwrap_or(usize::MAX))
            .collect())
    }
}

fn quote(name: &str) -> String {
    format!("`{}`", name.replace('`', "``"))
}

/// Neo4j's name for an unnamed index: `index_` and eight hex digits of its schema (not
/// Neo4j's own hash).
fn generated_name(labels: &[String], properties: &[String]) -> String {
    let mut hash: u32 = 0x811c_9dc5;
    for byte in format!("FULLTEXT:{}:{}", labels.join("|"), properties.join("|")).bytes() {
        hash ^= u32::from(byte);
        hash = hash.wrapping_mul(0x0100_0193);
    }
    format!("index_{hash:08x}")
}

/// Full-text and index DDL devgraph answers itself.
#[derive(Debug, PartialEq)]
enum Ddl {
    Create {
        index: FulltextIndex,
        if_not_exists: bool,
    },
    Drop {
        name: String,
        if_exists: bool,
    },
    /// `CREATE [VECTOR|RANGE] INDEX name …` of another kind: only its name is checked here.
    CreateOther {
        name: String,
        if_not_exists: bool,
    },
    /// `CREATE CONSTRAINT name …`: only its name is checked here.
    Constraint {
        name: String,
    },
}

/// The second word of `statement` (letters, digits, `_`), upper-cased.
fn second_word(statement: &str) -> String {
    let text = statement.trim_start();
    let word = |text: &str| {
        text.find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(text.len())
    };
    let rest = text[word(text)..].trim_start();
    rest[..word(rest)].to_ascii_uppercase()
}

fn name_of(token: &str) -> String {
    match token.strip_prefix('`').and_then(|t| t.strip_suffix('`')) {
        Some(inner) => inner.replace("``", "`"),
        None => token.to_string(),
    }
}

fn syntax(message: impl Into<String>) -> Neo4jError {
    Neo4jError::new(400, "Neo.ClientError.Statement.SyntaxError", message)
}

/// The full-text DDL, `DROP INDEX`, or the name of another `CREATE … INDEX` in `statement`.
fn parse_ddl(
    statement: &str,
    parameters: &serde_json::Map<String, Json>,
) -> Result<Option<Ddl>, Neo4jError> {
    // Every statement passes here: only index and constraint DDL is tokenised.
    let ddl = if crate::constraints::starts_with_any(statement, &["CREATE"]) {
        matches!(
            second_word(statement).as_str(),
            "INDEX"
                | "FULLTEXT"
                | "VECTOR"
                | "RANGE"
                | "BTREE"
                | "TEXT"
                | "POINT"
                | "LOOKUP"
                | "CONSTRAINT"
        )
    } else {
        crate::constraints::starts_with_any(statement, &["DROP"])
            && second_word(statement) == "INDEX"
    };
    if !ddl {
        return Ok(None);
    }
    let tokens: Vec<Token> = tokens(statement);
    let t: Vec<&str> = tokens.iter().map(|t| t.text.as_str()).collect();
    let upper = |i: usize| t.get(i).map(|s| s.to_ascii_uppercase()).unwrap_or_default();
    if upper(0) == "DROP" {
        if upper(1) != "INDEX" {
            return Ok(None);
        }
        let Some(name) = t.get(2) else {
            return Err(syntax("DROP INDEX needs the index's name"));
        };
        return Ok(Some(Ddl::Drop {
            name: name_of(name),
            if_exists: upper(3) == "IF" && upper(4) == "EXISTS",
        }));
    }
    if upper(1) == "CONSTRAINT" {
        return Ok(t
            .get(2)
            .filter(|_| !matches!(upper(2).as_str(), "IF" | "FOR" | "ON"))
            .map(|name| Ddl::Constraint {
                name: name_of(name),
            }));
    }
    // CREATE [FULLTEXT|VECTOR|RANGE|…] INDEX [name] [IF NOT EXISTS] FOR …
    let fulltext = upper(1) == "FULLTEXT";
    let mut i = if upper(1) == "INDEX" {
        2
    } else if upper(2) == "INDEX" {
        3
    } else {
        return Ok(None);
    };
    let mut name = None;
    if upper(i) != "IF" && upper(i) != "FOR" && upper(i) != "ON" {
        name = t.get(i).map(|n| name_of(n));
        i += 1;
    }
    let if_not_exists = upper(i) == "IF" && upper(i + 1) == "NOT" && upper(i + 2) == "EXISTS";
    if if_not_exists {
        i += 3;
    }
    if !fulltext {
        return Ok(name.map(|name| Ddl::CreateOther {
            name,
            if_not_exists,
        }));
    }
    let expect = |i: usize, what: &str| {
        if upper(i) == what {
            Ok(())
        } else {
            Err(syntax(format!(
                "devgraph takes `CREATE FULLTEXT INDEX [name] [IF NOT EXISTS] FOR (n:A|B) ON EACH [n.p, n.q] [OPTIONS {{…}}]` (node indexes only): expected {what} at `{}`",
                t.get(i).copied().unwrap_or("the end")
            )))
        }
    };
    // FOR ( v : A | B ) ON EACH [ v.p , v.q ]
    expect(i, "FOR")?;
    expect(i + 1, "(")?;
    let variable = t.get(i + 2).copied().unwrap_or_default();
    expect(i + 3, ":")?;
    i += 4;
    let mut labels = Vec::new();
    loop {
        let Some(label) = t.get(i) else {
            return Err(syntax("expected a label"));
        };
        labels.push(name_of(label));
        i += 1;
        if matches!(t.get(i), Some(&"|") | Some(&":")) {
            i += 1;
            continue;
        }
        break;
    }
    expect(i, ")")?;
    expect(i + 1, "ON")?;
    expect(i + 2, "EACH")?;
    expect(i + 3, "[")?;
    i += 4;
    let mut properties = Vec::new();
    loop {
        if t.get(i) != Some(&variable) || t.get(i + 1) != Some(&".") {
            return Err(syntax(format!(
                "expected `{variable}.property` at `{}`",
                t.get(i).copied().unwrap_or("the end")
            )));
        }
        let Some(property) = t.get(i + 2) else {
            return Err(syntax("expected a property"));
        };
        properties.push(name_of(property));
        i += 3;
        if t.get(i) == Some(&",") {
            i += 1;
            continue;
        }
        break;
    }
    expect(i, "]")?;
    i += 1;
    // OPTIONS {indexConfig: {`fulltext.analyzer`: 'cjk', …}}: the keys devgraph knows.
    let mut analyzer = Analyzer::StandardNoStopWords;
    if upper(i) == "OPTIONS" {
        for w in (i..t.len()).collect::<Vec<_>>().windows(3) {
            if t[w[1]] == ":" && name_of(t[w[0]]) == "fulltext.analyzer" {
                let value = resolve(t[w[2]], parameters)?;
                let text = value.as_str().unwrap_or_default();
                analyzer = Analyzer::parse(text).ok_or_else(|| {
                    Neo4jError::new(
                        400,
                        "Neo.ClientError.Statement.ArgumentError",
                        format!("devgraph does not know the full-text analyzer `{text}` (it knows standard-no-stop-words, standard, english, cjk, simple, whitespace, keyword)"),
                    )
                })?;
            }
        }
    } else if i < t.len() && t[i] != ";" {
        return Err(syntax(format!("unexpected `{}`", t[i])));
    }
    let name = name.unwrap_or_else(|| generated_name(&labels, &properties));
    Ok(Some(Ddl::Create {
        index: FulltextIndex {
            name,
            labels,
            properties,
            analyzer,
        },
        if_not_exists,
    }))
}

fn name_taken_by_index(name: &str) -> Neo4jError {
    Neo4jError::new(
        400,
        "Neo.ClientError.Schema.IndexWithNameAlreadyExists",
        format!("There already exists an index called '{name}'."),
    )
}

/// Answers full-text DDL and `DROP INDEX`, and refuses another index named as a full-text
/// one: `Some(changed)` when the statement was answered here, `None` to let it run on.
pub fn ddl(
    fulltext: &Fulltext,
    session: &Session,
    statement: &str,
    parameters: &serde_json::Map<String, Json>,
    read_only: bool,
) -> Result<Option<bool>, Neo4jError> {
    let Some(ddl) = parse_ddl(statement, parameters)? else {
        return Ok(None);
    };
    if read_only {
        return Err(Neo4jError::access_mode());
    }
    match ddl {
        // Neo4j (observed on 5.26.30): even with IF NOT EXISTS.
        Ddl::Constraint { name } if fulltext.get(&name).is_some() => {
            Err(name_taken_by_index(&name))
        }
        Ddl::Constraint { .. } => Ok(None),
        Ddl::CreateOther {
            name,
            if_not_exists,
        } => {
            if fulltext.get(&name).is_none() {
                return Ok(None);
            }
            if if_not_exists {
                return Ok(Some(false));
            }
            Err(name_taken_by_index(&name))
        }
        Ddl::Drop { name, if_exists } => {
            let mut indexes = fulltext.lock();
            if let Some(at) = indexes.iter().position(|i| i.name == name) {
                indexes.remove(at);
                fulltext.save(&indexes)?;
                drop(indexes);
                fulltext
                    .built
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .remove(&name);
                return Ok(Some(true));
            }
            drop(indexes);
            // Grafeo's own indexes (range, vector) are dropped by Grafeo.
            let grafeo = session
                .execute_cypher("SHOW INDEXES")
                .map_err(|e| from_grafeo(&e))?;
            if grafeo
                .rows()
                .iter()
                .any(|row| row.first().and_then(Value::as_str) == Some(name.as_str()))
            {
                return Ok(None);
            }
            let drop_failed = |message: String| {
                Neo4jError::new(500, "Neo.DatabaseError.Schema.IndexDropFailed", message)
            };
            // Neo4j (observed on 5.26.30): a constraint's index, even with IF EXISTS.
            if crate::constraints::list(session)?
                .iter()
                .any(|c| c.name == name)
            {
                return Err(drop_failed(format!(
                    "Unable to drop index: Index belongs to constraint: `{name}`"
                )));
            }
            if if_exists {
                return Ok(Some(false));
            }
            Err(drop_failed(format!(
                "Unable to drop index called `{name}`. There is no such index."
            )))
        }
        Ddl::Create {
            index,
            if_not_exists,
        } => {
            let mut indexes = fulltext.lock();
            if let Some(same_name) = indexes.iter().find(|i| i.name == index.name) {
                if if_not_exists {
                    return Ok(Some(false));
                }
                if same_name.same_schema(&index) {
                    let listed = crate::schema_rules::show_rows(
                        session,
                        indexes.iter().map(FulltextIndex::show_row).collect(),
                    )?;
                    let id = listed
                        .iter()
                        .find(|row| row["name"] == index.name.as_str())
                        .and_then(|row| row["id"].as_i64())
                        .unwrap_or(0);
                    return Err(Neo4jError::new(
                        400,
                        "Neo.ClientError.Schema.EquivalentSchemaRuleAlreadyExists",
                        format!(
                            "An equivalent index already exists, 'Index( id={id}, name='{}', type='FULLTEXT', schema={}, indexProvider='fulltext-1.0' )'.",
                            index.name,
                            index.schema()
                        ),
                    ));
                }
                return Err(name_taken_by_index(&index.name));
            }
            if crate::schema_rules::grafeo_indexes(session)?
                .iter()
                .any(|i| i.name == index.name)
            {
                if if_not_exists {
                    return Ok(Some(false));
                }
                return Err(name_taken_by_index(&index.name));
            }
            if crate::constraints::list(session)?
                .iter()
                .any(|c| c.name == index.name)
            {
                if if_not_exists {
                    return Ok(Some(false));
                }
                return Err(Neo4jError::new(
                    400,
                    "Neo.ClientError.Schema.ConstraintWithNameAlreadyExists",
                    format!("There already exists a constraint called '{}'.", index.name),
                ));
            }
            if indexes.iter().any(|i| i.same_schema(&index)) {
                if if_not_exists {
                    return Ok(Some(false));
                }
                return Err(Neo4jError::new(
                    400,
                    "Neo.ClientError.Schema.IndexAlreadyExists",
                    format!("There already exists an index {}.", index.schema()),
                ));
            }
            indexes.push(index);
            fulltext.save(&indexes)?;
            Ok(Some(true))
        }
    }
}

// ---------------------------------------------------------------------------------------
// The inverted index.

/// One posting: a document and the positions of the term in the property.
struct Posting {
    doc: u32,
    positions: Vec<u32>,
}

/// The terms of one property over the documents that have it.
#[derive(Default)]
struct Field {
    terms: BTreeMap<String, Vec<Posting>>,
    /// Length (in terms) of the property of each document that has it.
    lengths: HashMap<u32, u32>,
    total_length: u64,
}

/// Lucene's BM25 parameters.
const K1: f64 = 1.2;
const B: f64 = 0.75;
/// Positions between the values of a list (Lucene's position increment gap).
const VALUE_GAP: u32 = 100;

impl Field {
    fn idf(&self, document_frequency: usize) -> f64 {
        let n = self.lengths.len() as f64;
        let df = document_frequency as f64;
        (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
    }

    /// BM25 of a term (or phrase) that occurs `frequency` times in `doc`.
    fn bm25(&self, idf: f64, frequency: usize, doc: u32) -> f64 {
        let length = f64::from(self.lengths.get(&doc).copied().unwrap_or(1));
        let average = self.total_length as f64 / self.lengths.len().max(1) as f64;
        let frequency = frequency as f64;
        idf * frequency / (frequency + K1 * (1.0 - B + B * length / average.max(1e-9)))
    }
}

/// The inverted index of one full-text index at one moment.
pub struct Built {
    index: FulltextIndex,
    /// Document number → node id.
    nodes: Vec<i64>,
    /// One per property of the index, in its order.
    fields: Vec<Field>,
}

impl Built {
    fn build(session: &Session, index: &FulltextIndex) -> Result<Built, Neo4jError> {
        let mut built = Built {
            index: index.clone(),
            nodes: Vec::new(),
            fields: index.properties.iter().map(|_| Field::default()).collect(),
        };
        let mut seen: HashSet<i64> = HashSet::new();
        let columns: Vec<String> = index
            .properties
            .iter()
            .enumerate()
            .map(|(i, p)| format!("n.{} AS p{i}", quote(p)))
            .collect();
        for label in &index.labels {
            let statement = format!(
                "MATCH (n:{}) RETURN id(n) AS id, {}",
                quote(label),
                columns.join(", ")
            );
            let result = session
                .execute_cypher(&statement)
                .map_err(|e| from_grafeo(&e))?;
            for row in result.rows() {
                let Some(Value::Int64(id)) = row.first() else {
                    continue;
                };
                if !seen.insert(*id) {
                    continue;
                }
                let doc = built.nodes.len() as u32;
                let mut any = false;
                for (f, value) in row.iter().skip(1).enumerate() {
                    let texts: Vec<&str> = match value {
                        Value::String(s) => vec![s.as_str()],
                        Value::List(items) => items.iter().filter_map(Value::as_str).collect(),
                        _ => continue,
                    };
                    let field = &mut built.fields[f];
                    let mut position = 0u32;
                    let mut length = 0u32;
                    let mut positions: HashMap<String, Vec<u32>> = HashMap::new();
                    for (n, text) in texts.iter().enumerate() {
                        if n > 0 {
                            position += VALUE_GAP;
                        }
                        for term in index.analyzer.terms(text) {
                            positions.entry(term).or_default().push(position);
                            position += 1;
                            length += 1;
                        }
                    }
                    if length == 0 {
                        continue;
                    }
                    any = true;
                    field.lengths.insert(doc, length);
                    field.total_length += u64::from(length);
                    for (term, positions) in positions {
                        field
                            .terms
                            .entry(term)
                            .or_default()
                            .push(Posting { doc, positions });
                    }
                }
                if any {
                    built.nodes.push(*id);
                } else {
                    seen.remove(id);
                }
            }
        }
        Ok(built)
    }

    /// The fields a clause searches: all, or the one it names (none if the index lacks it).
    fn fields_of(&self, field: &Option<String>) -> Vec<usize> {
        match field {
            None => (0..self.fields.len()).collect(),
            Some(name) => self
                .index
                .properties
                .iter()
                .position(|p| p == name)
                .into_iter()
                .collect(),
        }
    }

    /// The documents `query` matches, with their scores (`None`: the query analysed to
    /// nothing, and Lucene drops it).
    fn matches(&self, query: &Query) -> Option<HashMap<u32, f64>> {
        let mut out: HashMap<u32, f64> = HashMap::new();
        match query {
            Query::Term { field, text } => {
                let terms = self.index.analyzer.terms(text);
                if terms.is_empty() {
                    return None;
                }
                for f in self.fields_of(field) {
                    let field = &self.fields[f];
                    for term in &terms {
                        let Some(postings) = field.terms.get(term) else {
                            continue;
                        };
                        let idf = field.idf(postings.len());
                        for p in postings {
                            *out.entry(p.doc).or_default() +=
                                field.bm25(idf, p.positions.len(), p.doc);
                        }
                    }
                }
            }
            Query::Phrase { field, text } => {
                let terms = self.index.analyzer.terms(text);
                if terms.len() <= 1 {
                    return self.matches(&Query::Term {
                        field: field.clone(),
                        text: terms.into_iter().next()?,
                    });
                }
                for f in self.fields_of(field) {
                    let field = &self.fields[f];
                    let Some(lists) = terms
                        .iter()
                        .map(|t| field.terms.get(t))
                        .collect::<Option<Vec<_>>>()
                    else {
                        continue;
                    };
                    let idf: f64 = lists.iter().map(|l| field.idf(l.len())).sum();
                    let by_doc: Vec<HashMap<u32, &Vec<u32>>> = lists
                        .iter()
                        .map(|l| l.iter().map(|p| (p.doc, &p.positions)).collect())
                        .collect();
                    for first in lists[0] {
                        let frequency = first
                            .positions
                            .iter()
                            .filter(|&&start| {
                                by_doc.iter().enumerate().skip(1).all(|(k, docs)| {
                                    docs.get(&first.doc)
                                        .is_some_and(|ps| ps.contains(&(start + k as u32)))
                                })
                            })
                            .count();
                        if frequency > 0 {
                            *out.entry(first.doc).or_default() +=
                                field.bm25(idf, frequency, first.doc);
                        }
                    }
                }
            }
            Query::Wildcard { field, pattern } => {
                let pattern = self.index.analyzer.normalize(pattern);
                for f in self.fields_of(field) {
                    let field = &self.fields[f];
                    let mut docs: HashSet<u32> = HashSet::new();
                    let mut add = |postings: &Vec<Posting>| {
                        docs.extend(postings.iter().map(|p| p.doc));
                    };
                    match pattern.strip_suffix('*') {
                        Some(prefix) if !prefix.contains(['*', '?']) => {
                            for (_, postings) in field
                                .terms
                                .range(prefix.to_string()..)
                                .take_while(|(t, _)| t.starts_with(prefix))
                            {
                                add(postings);
                            }
                        }
                        _ => {
                            for (term, postings) in &field.terms {
                                if glob(&pattern, term) {
                                    add(postings);
                                }
                            }
                        }
                    }
                    // Lucene's constant score for a multi-term query: 1 per field.
                    for doc in docs {
                        *out.entry(doc).or_default() += 1.0;
                    }
                }
            }
            Query::Boost(inner, boost) => {
                let mut inner = self.matches(inner)?;
                inner.values_mut().for_each(|s| *s *= boost);
                return Some(inner);
            }
            Query::Bool(clauses) => {
                let mut must: Vec<HashMap<u32, f64>> = Vec::new();
                let mut should: Vec<HashMap<u32, f64>> = Vec::new();
                let mut must_not: HashSet<u32> = HashSet::new();
                for (occur, clause) in clauses {
                    let Some(found) = self.matches(clause) else {
                        continue;
                    };
                    match occur {
                        Occur::Must => must.push(found),
                        Occur::Should => should.push(found),
                        Occur::MustNot => must_not.extend(found.keys().copied()),
                    }
                }
                if must.is_empty() && should.is_empty() {
                    return Some(out);
                }
                let candidates: HashSet<u32> = match must.split_first() {
                    Some((first, rest)) => first
                        .keys()
                        .copied()
                        .filter(|d| rest.iter().all(|m| m.contains_key(d)))
                        .collect(),
                    None => should.iter().flat_map(|s| s.keys().copied()).collect(),
                };
                for doc in candidates {
                    if must_not.contains(&doc) {
                        continue;
                    }
                    let score: f64 = must
                        .iter()
                        .chain(should.iter())
                        .filter_map(|m| m.get(&doc))
                        .sum();
                    out.insert(doc, score);
                }
            }
        }
        Some(out)
    }

    fn evaluate(&self, query: &Query) -> HashMap<u32, f64> {
        self.matches(query).unwrap_or_default()
    }
}

/// Whether `text` matches `pattern` (`*` any run, `?` one character).
fn glob(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    let (mut pi, mut ti) = (0, 0);
    let (mut star, mut mark) = (None, 0);
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some(pi);
            mark = ti;
            pi += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ti = mark;
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

// ---------------------------------------------------------------------------------------
// Lucene's classic query syntax.

#[derive(Clone, Copy, Debug, PartialEq)]
enum Occur {
    Must,
    Should,
    MustNot,
}

#[derive(Clone, Debug, PartialEq)]
enum Query {
    /// A word, analysed (several terms: any of them).
    Term {
        field: Option<String>,
        text: String,
    },
    /// `"a phrase"`, analysed: its terms in a row.
    Phrase {
        field: Option<String>,
        text: String,
    },
    /// `prefix*`, `a?c`: lower-cased, not analysed.
    Wildcard {
        field: Option<String>,
        pattern: String,
    },
    Boost(Box<Query>, f64),
    Bool(Vec<(Occur, Query)>),
}

#[derive(Clone, Debug, PartialEq)]
enum Lexeme {
    And(String),
    Or(String),
    Not(String),
    Plus,
    Minus,
    Open,
    Close,
    Colon,
    Caret(f64),
    Quoted(String),
    /// A term, unescaped, and whether it has an unescaped `*` or `?`.
    Word(String, bool),
}

/// The procedure's error for a query it cannot parse.
fn parse_error(detail: impl std::fmt::Display) -> Neo4jError {
    Neo4jError::new(
        400,
        "Neo.ClientError.Procedure.ProcedureCallFailed",
        format!(
            "Failed to invoke procedure `db.index.fulltext.queryNodes`: Caused by: org.apache.lucene.queryparser.classic.ParseException: {detail}"
        ),
    )
}

fn unsupported(what: &str) -> Neo4jError {
    Neo4jError::new(
        400,
        "Neo.ClientError.Procedure.ProcedureCallFailed",
        format!(
            "Failed to invoke procedure `db.index.fulltext.queryNodes`: devgraph does not support {what} in full-text queries"
        ),
    )
}

/// Lucene's special characters: they end a term unless escaped.
fn special(c: char) -> bool {
    matches!(
        c,
        '+' | '-' | '!' | '(' | ')' | ':' | '^' | '[' | ']' | '"' | '{' | '}' | '~' | '\\' | '/'
    )
}

fn lex(query: &str) -> Result<Vec<(usize, Lexeme)>, Neo4jError> {
    let chars: Vec<char> = query.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let at = i;
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        let next = chars.get(i + 1).copied();
        let lexeme = match c {
            '(' => Lexeme::Open,
            ')' => Lexeme::Close,
            ':' => Lexeme::Colon,
            '+' => Lexeme::Plus,
            '-' => Lexeme::Minus,
            '!' => Lexeme::Not("!".into()),
            '&' if next == Some('&') => {
                i += 1;
                Lexeme::And("&&".into())
            }
            '|' if next == Some('|') => {
                i += 1;
                Lexeme::Or("||".into())
            }
            '^' => {
                let mut j = i + 1;
                while j < chars.len() && (chars[j].is_ascii_digit() || chars[j] == '.') {
                    j += 1;
                }
                let number: String = chars[i + 1..j].iter().collect();
                let boost = number.parse::<f64>().map_err(|_| {
                    parse_error(format!(
                        "Encountered \"^\" at line 1, column {at}: expected a number"
                    ))
                })?;
                i = j;
                out.push((at, Lexeme::Caret(boost)));
                continue;
            }
            '"' => {
                let mut text = String::new();
                let mut j = i + 1;
                while j < chars.len() && chars[j] != '"' {
                    if chars[j] == '\\' && j + 1 < chars.len() {
                        j += 1;
                    }
                    text.push(chars[j]);
                    j += 1;
                }
                if j >= chars.len() {
                    return Err(parse_error(format!(
                        "Lexical error at line 1, column {}.  Encountered: <EOF> after : \"\\\"{text}\"",
                        chars.len()
                    )));
                }
                i = j + 1;
                out.push((at, Lexeme::Quoted(text)));
                continue;
            }
            '~' => return Err(unsupported("fuzzy and proximity queries (`~`)")),
            '[' | ']' | '{' | '}' => return Err(unsupported("range queries")),
            '/' => return Err(unsupported("regular-expression queries (`/…/`)")),
            _ => {
                let mut text = String::new();
                let mut wild = false;
                let mut j = i;
                while j < chars.len() {
                    let d = chars[j];
                    if d == '\\' {
                        if let Some(&escaped) = chars.get(j + 1) {
                            text.push(escaped);
                            j += 2;
                            continue;
                        }
                        return Err(parse_error(format!(
                            "Lexical error at line 1, column {}.  Encountered: <EOF> after : \"\\\\\"",
                            chars.len()
                        )));
                    }
                    let inside = j > i && (d == '-' || d == '+');
                    if d.is_whitespace() || (special(d) && !inside) {
                        break;
                    }
                    if d == '*' || d == '?' {
                        wild = true;
                    }
                    text.push(d);
                    j += 1;
                }
                i = j;
                let lexeme = match text.as_str() {
                    "AND" if !wild => Lexeme::And(text),
                    "OR" if !wild => Lexeme::Or(text),
                    "NOT" if !wild => Lexeme::Not(text),
                    _ => Lexeme::Word(text, wild),
                };
                out.push((at, lexeme));
                continue;
            }
        };
        out.push((at, lexeme));
        i += 1;
    }
    Ok(out)
}

struct Parser {
    lexemes: Vec<(usize, Lexeme)>,
    at: usize,
    /// The query's length, in characters (where `<EOF>` is).
    end: usize,
}

#[derive(Clone, Copy, PartialEq)]
enum Conjunction {
    None,
    And,
    Or,
}

#[derive(Clone, Copy, PartialEq)]
enum Modifier {
    None,
    Required,
    Prohibited,
}

impl Parser {
    fn peek(&self) -> Option<&Lexeme> {
        self.lexemes.get(self.at).map(|(_, l)| l)
    }

    /// Lucene's message for the lexeme where the parser stopped.
    fn encountered(&self) -> Neo4jError {
        match self.lexemes.get(self.at) {
            None => parse_error(format!(
                "Encountered \"<EOF>\" at line 1, column {}.",
                self.end
            )),
            Some((column, lexeme)) => {
                let (kind, image) = match lexeme {
                    Lexeme::And(image) => ("AND", image.clone()),
                    Lexeme::Or(image) => ("OR", image.clone()),
                    Lexeme::Not(image) => ("NOT", image.clone()),
                    Lexeme::Close => ("RPAREN", ")".into()),
                    Lexeme::Colon => ("COLON", ":".into()),
                    Lexeme::Caret(_) => ("CARAT", "^".into()),
                    Lexeme::Plus => ("PLUS", "+".into()),
                    Lexeme::Minus => ("MINUS", "-".into()),
                    other => ("TERM", format!("{other:?}")),
                };
                parse_error(format!(
                    "Encountered \" <{kind}> \"{image} \"\" at line 1, column {column}."
                ))
            }
        }
    }

    /// `Modifiers Clause (Conjunction Modifiers Clause)*`, as Lucene's `Query` production.
    fn query(&mut self, nested: bool) -> Result<Query, Neo4jError> {
        let mut clauses: Vec<(Occur, Query)> = Vec::new();
        let mut first = true;
        loop {
            match self.peek() {
                None => break,
                Some(Lexeme::Close) if nested => break,
                _ => {}
            }
            let mut conjunction = Conjunction::None;
            if !first {
                match self.peek() {
                    Some(Lexeme::And(_)) => conjunction = Conjunction::And,
                    Some(Lexeme::Or(_)) => conjunction = Conjunction::Or,
                    _ => {}
                }
                if conjunction != Conjunction::None {
                    self.at += 1;
                }
            }
            let modifier = match self.peek() {
                Some(Lexeme::Plus) => Modifier::Required,
                Some(Lexeme::Minus) | Some(Lexeme::Not(_)) => Modifier::Prohibited,
                _ => Modifier::None,
            };
            if modifier != Modifier::None {
                self.at += 1;
            }
            let clause = self.clause()?;
            // Lucene's `addClause` (default operator OR).
            if conjunction == Conjunction::And
                && let Some(last) = clauses.last_mut()
                && last.0 != Occur::MustNot
            {
                last.0 = Occur::Must;
            }
            let occur = match modifier {
                Modifier::Prohibited => Occur::MustNot,
                Modifier::Required => Occur::Must,
                Modifier::None if conjunction == Conjunction::And => Occur::Must,
                Modifier::None => Occur::Should,
            };
            clauses.push((occur, clause));
            first = false;
        }
        if clauses.is_empty() {
            return Err(self.encountered());
        }
        if clauses.len() == 1 && clauses[0].0 == Occur::Should {
            return Ok(clauses.remove(0).1);
        }
        Ok(Query::Bool(clauses))
    }

    /// `[field :] (word | "phrase" | ( query )) [^boost]`.
    fn clause(&mut self) -> Result<Query, Neo4jError> {
        let mut field = None;
        if let (Some((_, Lexeme::Word(name, false))), Some((_, Lexeme::Colon))) =
            (self.lexemes.get(self.at), self.lexemes.get(self.at + 1))
        {
            field = Some(name.clone());
            self.at += 2;
        }
        let query = match self.lexemes.get(self.at).map(|(_, l)| l.clone()) {
            Some(Lexeme::Word(text, wild)) => {
                self.at += 1;
                if wild {
                    Query::Wildcard {
                        field,
                        pattern: text,
                    }
                } else {
                    Query::Term { field, text }
                }
            }
            Some(Lexeme::Quoted(text)) => {
                self.at += 1;
                Query::Phrase { field, text }
            }
            Some(Lexeme::Open) => {
                self.at += 1;
                let inner = self.query(true)?;
                if self.peek() != Some(&Lexeme::Close) {
                    return Err(self.encountered());
                }
                self.at += 1;
                match field {
                    None => inner,
                    Some(name) => with_field(inner, &name),
                }
            }
            _ => return Err(self.encountered()),
        };
        if let Some(Lexeme::Caret(boost)) = self.peek() {
            let boost = *boost;
            self.at += 1;
            return Ok(Query::Boost(Box::new(query), boost));
        }
        Ok(query)
    }
}

/// `field:( … )`: every clause inside searches `field` unless it names another.
fn with_field(query: Query, name: &str) -> Query {
    let set = |field: Option<String>| field.or_else(|| Some(name.to_string()));
    match query {
        Query::Term { field, text } => Query::Term {
            field: set(field),
            text,
        },
        Query::Phrase { field, text } => Query::Phrase {
            field: set(field),
            text,
        },
        Query::Wildcard { field, pattern } => Query::Wildcard {
            field: set(field),
            pattern,
        },
        Query::Boost(inner, boost) => Query::Boost(Box::new(with_field(*inner, name)), boost),
        Query::Bool(clauses) => Query::Bool(
            clauses
                .into_iter()
                .map(|(o, q)| (o, with_field(q, name)))
                .collect(),
        ),
    }
}

fn parse_query(query: &str) -> Result<Query, Neo4jError> {
    let mut parser = Parser {
        lexemes: lex(query)?,
        at: 0,
        end: query.chars().count(),
    };
    let parsed = parser.query(false)?;
    if parser.at < parser.lexemes.len() {
        return Err(parser.encountered());
    }
    Ok(parsed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index(labels: &[&str], properties: &[&str]) -> FulltextIndex {
        FulltextIndex {
            name: "kg_graph_search".into(),
            labels: labels.iter().map(|s| s.to_string()).collect(),
            properties: properties.iter().map(|s| s.to_string()).collect(),
            analyzer: Analyzer::StandardNoStopWords,
        }
    }

    /// An index over documents given as one text per property.
    fn built(docs: &[&[Option<&str>]]) -> Built {
        let properties: Vec<String> = (0..docs[0].len()).map(|i| format!("p{i}")).collect();
        let props: Vec<&str> = properties.iter().map(String::as_str).collect();
        let index = index(&["L"], &props);
        let mut built = Built {
            index: index.clone(),
            nodes: Vec::new(),
            fields: props.iter().map(|_| Field::default()).collect(),
        };
        for (doc, texts) in docs.iter().enumerate() {
            built.nodes.push(doc as i64 * 10);
            for (f, text) in texts.iter().enumerate() {
                let Some(text) = text else { continue };
                let terms = index.analyzer.terms(text);
                if terms.is_empty() {
                    continue;
                }
                let field = &mut built.fields[f];
                field.lengths.insert(doc as u32, terms.len() as u32);
                field.total_length += terms.len() as u64;
                let mut positions: HashMap<String, Vec<u32>> = HashMap::new();
                for (p, term) in terms.into_iter().enumerate() {
                    positions.entry(term).or_default().push(p as u32);
                }
                for (term, positions) in positions {
                    field.terms.entry(term).or_default().push(Posting {
                        doc: doc as u32,
                        positions,
                    });
                }
            }
        }
        built
    }

    fn hits(built: &Built, query: &str) -> Vec<(i64, f64)> {
        let mut hits: Vec<(i64, f64)> = built
            .evaluate(&parse_query(query).unwrap())
            .into_iter()
            .map(|(d, s)| (built.nodes[d as usize], s))
            .collect();
        hits.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        hits
    }

    fn ids(built: &Built, query: &str) -> Vec<i64> {
        hits(built, query).into_iter().map(|(id, _)| id).collect()
    }

    #[test]
    fn the_standard_analyzer_splits_on_non_alphanumerics_and_lower_cases() {
        assert_eq!(
            Analyzer::StandardNoStopWords.terms("PO-0003-L1 ACME Industrial"),
            ["po", "0003", "l1", "acme", "industrial"]
        );
        assert_eq!(
            Analyzer::Standard.terms("The parts and the PO"),
            ["parts", "po"]
        );
        assert_eq!(
            Analyzer::Cjk.terms("差旅报销 and more"),
            ["差旅", "旅报", "报销", "more"]
        );
    }

    #[test]
    fn prefix_tokens_joined_by_and_must_all_match_some_property() {
        // (id, name, country)
        let b = built(&[
            &[Some("PO-0003"), None, None],
            &[Some("PO-0030"), None, None],
            &[Some("SUP-001"), Some("ACME Industrial"), Some("DE")],
            &[Some("SUP-004"), Some("Delta Polymers"), Some("PL")],
            &[Some("PRD-001"), Some("Part 1"), None],
            &[Some("PRD-010"), Some("Part 10"), None],
            &[Some("PRD-021"), Some("Part 21"), None],
        ]);
        // As Neo4j 5.26.30 answered on the demo dataset: a prefix scores 1 per property.
        assert_eq!(hits(&b, "po* AND 0003*"), vec![(0, 2.0)]);
        assert_eq!(hits(&b, "acme*"), vec![(20, 1.0)]);
        assert_eq!(ids(&b, "part* AND 1*"), vec![40, 50]);
        assert_eq!(ids(&b, "de*"), vec![20, 30]);
        assert_eq!(ids(&b, "ACME*"), vec![20]);
        // `property:` searches that property only (here they are p0, p1, p2).
        assert_eq!(ids(&b, "p1:acme*"), vec![20]);
        assert!(ids(&b, "p0:acme*").is_empty());
        assert!(ids(&b, "name:acme*").is_empty(), "no such property");
        // Matching more clauses ranks first.
        assert_eq!(hits(&b, "prd* part* 1*")[0], (40, 3.0));
    }

    #[test]
    fn booleans_follow_lucenes_classic_parser() {
        let b = built(&[
            &[Some("SUP-001"), Some("ACME Industrial"), Some("DE")],
            &[Some("SUP-002"), Some("Borealis Components"), Some("SE")],
            &[Some("SUP-004"), Some("Delta Polymers"), Some("DE")],
        ]);
        // SUP-004 matches `de*` in two properties (Delta, DE): 1 each.
        assert_eq!(hits(&b, "de* OR se*"), vec![(20, 2.0), (0, 1.0), (10, 1.0)]);
        assert_eq!(ids(&b, "de* NOT delta*"), vec![0]);
        assert_eq!(ids(&b, "sup* AND NOT 001*"), vec![10, 20]);
        assert_eq!(ids(&b, "sup* AND -001* AND -002*"), vec![20]);
        assert_eq!(ids(&b, "+de* -acme*"), vec![20]);
        assert_eq!(ids(&b, "(acme* OR delta*) AND de"), vec![0, 20]);
        assert!(ids(&b, "NOT acme*").is_empty(), "a purely negative query");
        assert_eq!(ids(&b, "*cme"), vec![0]);
        assert_eq!(ids(&b, "acm?"), vec![0]);
        assert_eq!(ids(&b, r"sup\-001"), vec![0, 10, 20]);
        // A boost multiplies.
        assert_eq!(hits(&b, "acme*^3")[0], (0, 3.0));
    }

    /// Observed on Neo4j 5.26.30 with a full-text index on (id, name, country) and a node
    /// {id: 'ZED-1', name: 'Zed Zedson', country: 'zed'}: a prefix scores 1 per property
    /// it matches in, clauses add up, a boost multiplies.
    #[test]
    fn prefix_scores_add_up_per_property_and_clause_as_on_neo4j() {
        let b = built(&[&[Some("ZED-1"), Some("Zed Zedson"), Some("zed")]]);
        assert_eq!(hits(&b, "zed*"), vec![(0, 3.0)]);
        assert_eq!(hits(&b, "zed* AND zeds*"), vec![(0, 4.0)]);
        assert_eq!(hits(&b, "zed*^3"), vec![(0, 9.0)]);
        // BM25 for words and phrases (Neo4j: 2.85 and 1.92; only the order matters).
        let word = hits(&b, "zed")[0].1;
        let phrase = hits(&b, "\"zed zedson\"")[0].1;
        assert!(word > phrase && phrase > 0.0, "{word} {phrase}");
    }

    #[test]
    fn words_and_phrases_score_bm25_rarer_first() {
        let b = built(&[
            &[Some("PRD-001"), Some("Part 1")],
            &[Some("PRD-002"), Some("Part 2")],
            &[Some("PRD-003"), Some("Part 3")],
            &[Some("SUP-001"), Some("ACME Industrial")],
        ]);
        let found = hits(&b, "prd-001");
        // prd OR 001: PRD-001 has both, SUP-001 the rare 001.
        assert_eq!(found[0].0, 0);
        assert!(found.iter().any(|(id, _)| *id == 30));
        assert_eq!(found.len(), 4);
        let acme = hits(&b, "acme")[0].1;
        let part = hits(&b, "part")[0].1;
        assert!(acme > part && part > 0.0, "{acme} {part}");
        assert_eq!(ids(&b, "\"part 1\""), vec![0]);
        assert!(ids(&b, "\"1 part\"").is_empty());
        assert_eq!(ids(&b, "\"po 0003\" OR \"prd 002\""), vec![10]);
    }

    #[test]
    fn malformed_queries_fail_as_lucenes_parser_does() {
        let e = parse_query("AND").unwrap_err();
        assert_eq!(e.code, "Neo.ClientError.Procedure.ProcedureCallFailed");
        assert!(
            e.message
                .contains("ParseException: Encountered \" <AND> \"AND \"\" at line 1, column 0."),
            "{}",
            e.message
        );
        let e = parse_query("acme* AND").unwrap_err();
        assert!(
            e.message
                .contains("Encountered \"<EOF>\" at line 1, column 9."),
            "{}",
            e.message
        );
        assert!(parse_query("").is_err());
        assert!(parse_query("(acme").is_err());
        assert!(parse_query("acme~2").is_err());
        assert!(parse_query("[a TO b]").is_err());
        assert!(parse_query("a) b").is_err());
    }

    #[test]
    fn glob_matches_stars_and_question_marks() {
        assert!(glob("a*", "acme"));
        assert!(glob("*cme", "acme"));
        assert!(glob("a?m*", "acme"));
        assert!(!glob("a?m", "acme"));
        assert!(glob("*", ""));
    }

    #[test]
    fn parses_multi_label_multi_property_ddl() {
        let ddl = parse_ddl(
            "CREATE FULLTEXT INDEX kg_graph_search IF NOT EXISTS FOR (n:`Supplier`|`Odd``Label`) ON EACH [n.`id`, n.`the name`, n.country]",
            &serde_json::Map::new(),
        )
        .unwrap()
        .unwrap();
        assert_eq!(
            ddl,
            Ddl::Create {
                index: FulltextIndex {
                    name: "kg_graph_search".into(),
                    labels: vec!["Supplier".into(), "Odd`Label".into()],
                    properties: vec!["id".into(), "the name".into(), "country".into()],
                    analyzer: Analyzer::StandardNoStopWords,
                },
                if_not_exists: true
            }
        );
        let Some(Ddl::Create { index, .. }) = parse_ddl(
            "CREATE FULLTEXT INDEX chunk_text FOR (c:Chunk) ON EACH [c.text] OPTIONS {indexConfig: {`fulltext.analyzer`: 'cjk'}}",
            &serde_json::Map::new(),
        )
        .unwrap() else {
            panic!()
        };
        assert_eq!(index.analyzer, Analyzer::Cjk);
        assert_eq!(index.schema(), "(:Chunk {text})");
        assert_eq!(
            parse_ddl("DROP INDEX `x` IF EXISTS", &serde_json::Map::new()).unwrap(),
            Some(Ddl::Drop {
                name: "x".into(),
                if_exists: true
            })
        );
        assert_eq!(
            parse_ddl(
                "CREATE INDEX kg_key_Supplier_name IF NOT EXISTS FOR (n:`Supplier`) ON (n.`name`)",
                &serde_json::Map::new()
            )
            .unwrap(),
            Some(Ddl::CreateOther {
                name: "kg_key_Supplier_name".into(),
                if_not_exists: true
            })
        );
        assert_eq!(
            parse_ddl(
                "CREATE CONSTRAINT c IF NOT EXISTS FOR (n:L) REQUIRE n.p IS UNIQUE",
                &serde_json::Map::new()
            )
            .unwrap(),
            Some(Ddl::Constraint { name: "c".into() })
        );
        for other in [
            "CREATE (n:Index)",
            "CREATE (:Index {name: 'CREATE INDEX x FOR (n:L) ON (n.p)'})",
            "DROP CONSTRAINT c",
            "MATCH (n) RETURN n",
        ] {
            assert_eq!(
                parse_ddl(other, &serde_json::Map::new()).unwrap(),
                None,
                "{other}"
            );
        }
        assert!(
            parse_ddl(
                "CREATE FULLTEXT INDEX r FOR ()-[r:T]-() ON EACH [r.p]",
                &serde_json::Map::new()
            )
            .is_err()
        );
    }
}
