//! The graph shape of documents and the two indexes search needs, in standard Neo4j 5 DDL.

/// `(:Document)-[:HAS_CHUNK]->(:Chunk)`; chunks carry `document_id` so filters need no hop.
pub const DOCUMENT_LABEL: &str = "Document";
pub const CHUNK_LABEL: &str = "Chunk";
pub const VECTOR_INDEX: &str = "chunk_embedding";
pub const FULLTEXT_INDEX: &str = "chunk_text";
/// Document metadata is stored as properties with this prefix, so a metadata key can never
/// overwrite `id`, `title` or `ingested_at`.
pub const METADATA_PREFIX: &str = "meta_";

/// The vector index for `dimensions`-long embeddings. The dimension is our own number (the
/// embedding length), formatted in because index options take no parameters everywhere.
pub fn vector_index_ddl(dimensions: usize) -> String {
    format!(
        "CREATE VECTOR INDEX {VECTOR_INDEX} IF NOT EXISTS FOR (c:{CHUNK_LABEL}) ON c.embedding \
         OPTIONS {{indexConfig: {{`vector.dimensions`: {dimensions}, `vector.similarity_function`: 'cosine'}}}}"
    )
}

/// The full-text index, with Lucene's CJK analyzer: Chinese, Japanese and Korean text is
/// indexed as overlapping character bigrams, other text as lower-cased words.
pub fn fulltext_index_ddl() -> String {
    format!(
        "CREATE FULLTEXT INDEX {FULLTEXT_INDEX} IF NOT EXISTS FOR (c:{CHUNK_LABEL}) ON EACH [c.text] \
         OPTIONS {{indexConfig: {{`fulltext.analyzer`: 'cjk'}}}}"
    )
}

/// Property indexes for the lookups by id: a document by `id`, its chunks by `document_id`.
pub fn lookup_index_ddl() -> [String; 2] {
    [
        format!("CREATE INDEX document_id IF NOT EXISTS FOR (d:{DOCUMENT_LABEL}) ON (d.id)"),
        format!(
            "CREATE INDEX chunk_document_id IF NOT EXISTS FOR (c:{CHUNK_LABEL}) ON (c.document_id)"
        ),
    ]
}

/// Metadata keys become property names: letters, digits and `_`, at most 64.
pub fn metadata_key_problem(key: &str) -> Option<String> {
    let ok = !key.is_empty()
        && key.len() <= 64
        && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    (!ok).then(|| format!("metadata key `{key}` must be 1-64 ASCII letters, digits or underscores"))
}
