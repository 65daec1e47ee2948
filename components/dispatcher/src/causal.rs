//! Read-your-writes on a Neo4j cluster: one bookmark chain per request (and, for the
//! agent, per conversation), carried across the graph components.
//!
//! Each graph component keeps its own chain for the request (its instance lives that
//! long): it sends the chain's bookmarks with every statement and advances it with every
//! answer. The dispatcher is the only one that sees every component, so it hands the
//! current chain to a component before calling it and takes the component's chain back
//! after. A read that follows a write (the agent re-querying the orders it just paid, on a
//! follower that has not applied the payment yet) then waits for the write instead of
//! missing it. The agent keeps the chain with the conversation, so the next turn's reads
//! wait for this turn's writes too (`kg_agent_core::memory::save_bookmarks`).
//!
//! The same calls carry the request's trace: each is a span, the component is handed its
//! context first and its spans are taken back after (`crate::telemetry::component_call`).

use kg_wit::kg::{
    action_executor::action_executor, query_tools::query_tools, retriever::retriever,
};
use std::cell::RefCell;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Component {
    QueryTools,
    Executor,
    Retriever,
}

#[derive(Default)]
struct Chain {
    bookmarks: Vec<String>,
    /// Bumped whenever `bookmarks` change.
    version: u64,
    /// The version each component was last handed (0: never).
    handed: [u64; 3],
}

thread_local! {
    static CHAIN: RefCell<Chain> = RefCell::new(Chain::default());
}

fn slot(component: Component) -> usize {
    match component {
        Component::QueryTools => 0,
        Component::Executor => 1,
        Component::Retriever => 2,
    }
}

/// Starts the request's chain from bookmarks remembered earlier (a conversation's).
pub fn resume(bookmarks: Vec<String>) {
    set(bookmarks);
}

/// The chain as it stands.
pub fn current() -> Vec<String> {
    CHAIN.with(|c| c.borrow().bookmarks.clone())
}

fn set(bookmarks: Vec<String>) {
    CHAIN.with(|c| {
        let mut chain = c.borrow_mut();
        if chain.bookmarks != bookmarks {
            chain.bookmarks = bookmarks;
            chain.version += 1;
        }
    });
}

/// The chain's bookmarks if `component` has not been handed this version yet.
fn due(component: Component) -> Option<Vec<String>> {
    CHAIN.with(|c| {
        let mut chain = c.borrow_mut();
        let i = slot(component);
        // A component that was never handed anything starts from an empty chain of its
        // own, so an empty chain needs no call either.
        if chain.handed[i] == chain.version || (chain.version == 0 && chain.bookmarks.is_empty()) {
            return None;
        }
        chain.handed[i] = chain.version;
        Some(chain.bookmarks.clone())
    })
}

/// What `component` answered with becomes the chain; the component itself already holds it.
fn took(component: Component, bookmarks: Vec<String>) {
    set(bookmarks);
    CHAIN.with(|c| {
        let mut chain = c.borrow_mut();
        let version = chain.version;
        chain.handed[slot(component)] = version;
    });
}

/// Calls the query tools inside the chain.
pub fn query_tools<T: crate::telemetry::Outcome>(call: impl FnOnce() -> T) -> T {
    crate::audience::hand_to_query_tools();
    if let Some(b) = due(Component::QueryTools) {
        query_tools::use_bookmarks(&b);
    }
    let answer = crate::telemetry::component_call(
        "query-tools",
        query_tools::use_trace_context,
        query_tools::take_spans,
        call,
    );
    took(Component::QueryTools, query_tools::graph_bookmarks());
    answer
}

/// Calls the action executor inside the chain (a batch's pulls included).
pub fn executor<T: crate::telemetry::Outcome>(call: impl FnOnce() -> T) -> T {
    if let Some(b) = due(Component::Executor) {
        action_executor::use_bookmarks(&b);
    }
    let answer = crate::telemetry::component_call(
        "action-executor",
        action_executor::use_trace_context,
        action_executor::take_spans,
        call,
    );
    took(Component::Executor, action_executor::graph_bookmarks());
    answer
}

/// Calls the retriever inside the chain.
pub fn retriever<T: crate::telemetry::Outcome>(call: impl FnOnce() -> T) -> T {
    if let Some(b) = due(Component::Retriever) {
        retriever::use_bookmarks(&b);
    }
    let answer = crate::telemetry::component_call(
        "retriever",
        retriever::use_trace_context,
        retriever::take_spans,
        call,
    );
    took(Component::Retriever, retriever::graph_bookmarks());
    answer
}
