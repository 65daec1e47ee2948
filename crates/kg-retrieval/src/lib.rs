//! Hybrid document retrieval (seed 002 §3, DESIGN.md §6) as plain Rust: chunking, an
//! OpenAI-compatible embeddings client, documents and chunks in Neo4j with a vector and a
//! full-text index, and search fusing both with weighted Reciprocal Rank Fusion. All I/O goes
//! through neo4j-client's `Transport`, so it runs in a Spin component and in native tests.

pub mod chunking;
pub mod documents;
pub mod embeddings;
pub mod errors;
pub mod fulltext_query;
pub mod fusion;
pub mod mentions;
pub mod retry;
pub mod schema;
pub mod search;
pub mod time;

pub use documents::{delete, ingest, list};
pub use embeddings::{Embed, EmbeddingClient, EmbeddingConfig, EmbeddingError};
pub use search::search;
