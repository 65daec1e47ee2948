//! A client for Neo4j's Query API v2 (`POST /db/{db}/query/v2`, explicit transactions under
//! `/query/v2/tx`). HTTP goes through [`Transport`], so the same code runs inside a Spin
//! component (spin-sdk outbound HTTP) and in native tests; nothing here does I/O itself.

mod bookmarks;
mod client;
mod config;
mod error;
mod notifications;
mod result_de;
mod telemetry;
mod transport;
mod value;
mod value_de;

pub use bookmarks::Bookmarks;
pub use client::{
    AccessMode, Client, Counters, QueryResult, Transaction, parse_result_via_tree,
    parse_run_response,
};
pub use config::{Auth, AuthConfigError, Config};
pub use error::{ErrorKind, Neo4jError, SCHEMA_ALREADY_EXISTS, TOO_EXPENSIVE};
pub use kg_url::Url;
pub use notifications::{Notification, Position};
pub use telemetry::{
    finish as record_statement, propagate as propagate_trace_context, summarise as query_summary,
};
pub use transport::{
    HttpRequest, HttpResponse, Method, Transport, TransportError, TransportErrorKind,
};
pub use value::{Value, decode_plain, decode_typed};
