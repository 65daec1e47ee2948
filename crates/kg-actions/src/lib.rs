//! Declarative actions on graph entities (DESIGN.md §5): the catalog and its expression
//! language, the Cypher that checks preconditions and applies effects atomically per chunk,
//! the batch state machine, and the action log with undo. Plain Rust: the
//! `action-executor` component drives it over Spin's outbound HTTP.

pub mod access;
pub mod approval;
pub mod batch;
pub mod catalog;
pub mod expr;
pub mod log;
pub mod outcome;
pub mod statement;
pub mod tools;
