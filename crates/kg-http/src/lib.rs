//! The dispatcher's HTTP surface, kept free of Spin so it is tested natively.

pub mod actions;
pub mod auth_config;
pub mod body;
pub mod chat;
pub mod error;
pub mod headers;
pub mod health;
pub mod limits;
pub mod liveness;
pub mod query;
pub mod readiness;
pub mod routes;
pub mod sse;

pub use error::ApiError;
pub use routes::{Access, Route, route};
