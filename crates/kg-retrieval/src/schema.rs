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

/// The lookup of a document by `id` and the key that makes two concurrent first ingests
/// of one id conflict (so one retries and replaces the other's) instead of storing two
/// documents: Neo4j's `MERGE` on a uniquely constrained property locks the key, Grafeo
/// claims it (first writer wins). Its backing index serves the lookups.
pub const DOCUMENT_KEY: &str = "document_id_unique";
/// The plain index earlier versions created on the same property; Neo4j refuses the
/// constraint while it exists.
pub const LEGACY_DOCUMENT_INDEX: &str = "document_id";

pub fn document_key_ddl() -> String {
    format!(
        "CREATE CONSTRAINT {DOCUMENT_KEY} IF NOT EXISTS FOR (d:{DOCUMENT_LABEL}) REQUIRE d.id IS UNIQUE"
    )
}

pub fn legacy_document_index_drop() -> String {
    format!("DROP INDEX {LEGACY_DOCUMENT_INDEX} IF EXISTS")
}

/// The plain lookup index, kept when the key cannot be created (e.g. a graph that holds
/// one id twice already).
pub fn legacy_document_index_ddl() -> String {
    format!("CREATE INDEX {LEGACY_DOCUMENT_INDEX} IF NOT EXISTS FOR (d:{DOCUMENT_LABEL}) ON (d.id)")
}

/// Chunk ids (`{document id}#{position}`-style, unique by construction): the key makes a
/// second chunk of one id an error (the ingest rolls back whole) rather than a duplicate
/// search hit, and serves citation look-ups by chunk id.
pub const CHUNK_KEY: &str = "chunk_id_unique";

pub fn chunk_key_ddl() -> String {
    format!(
        "CREATE CONSTRAINT {CHUNK_KEY} IF NOT EXISTS FOR (c:{CHUNK_LABEL}) REQUIRE c.id IS UNIQUE"
    )
}

/// The property index for a document's chunks by `document_id`.
pub fn lookup_index_ddl() -> [String; 1] {
    [format!(
        "CREATE INDEX chunk_document_id IF NOT EXISTS FOR (c:{CHUNK_LABEL}) ON (c.document_id)"
    )]
}

/// Metadata keys become property names: letters, digits and `_`, at most 64.
pub fn metadata_key_problem(key: &str) -> Option<String> {
    let ok = !key.is_empty()
        && key.len() <= 64
        && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    (!ok).then(|| format!("metadata key `{key}` must be 1-64 ASCII letters, digits or underscores"))
}
