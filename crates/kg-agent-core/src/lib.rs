//! The agent's logic, free of Spin (DESIGN.md §2): the dispatcher drives it with the real
//! key-value store, LLM and components; tests drive it with fakes.

pub mod answers;
pub mod approval;
pub mod attach;
pub mod calls;
pub mod config;
pub mod events;
pub mod follow;
pub mod legacy;
pub mod memory;
pub mod ownership;
pub mod react;
pub mod replay;
pub mod stream;
pub mod telemetry;
pub mod toolbox;
pub mod turn;
