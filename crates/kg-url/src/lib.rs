//! The http(s) URLs kg-agent is configured with (`neo4j_origin`, `llm_origin` +
//! `llm_base_path`, `oidc_issuer`, `otel_exporter_otlp_endpoint`, `public_url`) and the
//! URLs its components send requests to, parsed by the `url` crate (WHATWG URL Standard):
//! IPv6 hosts, default ports, user info and percent-encoding are its business, not ours.
//! A configuration value is checked once, where it is read, and a bad one is an error that
//! names the variable and says what was expected.

mod error;
mod parse;
mod parts;

pub use error::UrlError;
pub use parse::{http_base, http_origin, http_url};
pub use parts::{RequestTarget, request_target, server_address};
pub use url::Url;
