//! kg-agent's MCP server as plain Rust (no host types): the dispatcher's `/mcp` route hands
//! it a POST body and a [`Backend`] that reaches the HTTP API's own handlers.
//!
//! Stateless by choice: no `Mcp-Session-Id`. Every request carries its credential and its
//! `MCP-Protocol-Version`, so any instance answers any request and nothing about a client
//! is kept between requests (Spin instances live for one request; a session table in the
//! key-value store would cost a read on every call and buy nothing the protocol needs
//! here).
//!
//! Every tool *mirrors* an HTTP route ([`tools::Mirror`]): a call is turned into that
//! route's method, path and body and answered by the same handler, after the same
//! permission check, so an MCP client can do exactly what the same credential can do over
//! HTTP, no more.

pub mod authorization;
pub mod envelope;
pub mod jsonrpc;
pub mod prompts;
pub mod resources;
pub mod server;
pub mod tools;
pub mod version;

pub use server::{Backend, Handled, HttpAnswer, handle_post};
pub use tools::{Mirror, QueryTool};
