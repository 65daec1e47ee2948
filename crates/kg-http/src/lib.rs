//! The dispatcher's HTTP surface, kept free of Spin so it is tested natively.

pub mod body;
pub mod error;
pub mod health;
pub mod routes;

pub use error::ApiError;
pub use routes::{Route, route};
