//! Who the graph tools answer (the graph profile's visibility policy): the request's
//! caller, and whether the answer goes into a model's context. The dispatcher is the only
//! component that knows either, so it hands the query tools the audience before a call
//! whenever it changed (`kg:query-tools` `use-audience`); the component redacts for it.
//!
//! Answers that go to a model: the agent's tool calls (the LLM reads them) and MCP's (an
//! MCP client is a model's host). What the policy shows to people only (`"people"`,
//! `llm = false`) is withheld from both; a person sees it through the HTTP API and the web
//! app.

use kg_wit::kg::query_tools::query_tools::{self, Audience};
use std::cell::RefCell;

#[derive(Default)]
struct State {
    roles: Vec<String>,
    for_model: bool,
    /// What the query tools were last handed (None: nothing yet, they answer the narrowest
    /// audience).
    handed: Option<(Vec<String>, bool)>,
}

thread_local! {
    static STATE: RefCell<State> = RefCell::new(State::default());
}

/// The request's caller, by role name.
pub fn caller(roles: &[String]) {
    STATE.with(|s| s.borrow_mut().roles = roles.to_vec());
}

/// Runs `f` with answers going to a model.
pub fn for_model<T>(f: impl FnOnce() -> T) -> T {
    let before = STATE.with(|s| std::mem::replace(&mut s.borrow_mut().for_model, true));
    let answer = f();
    STATE.with(|s| s.borrow_mut().for_model = before);
    answer
}

/// Hands the query tools the current audience if they do not hold it yet.
pub fn hand_to_query_tools() {
    let due = STATE.with(|s| {
        let mut s = s.borrow_mut();
        let current = (s.roles.clone(), s.for_model);
        if s.handed.as_ref() == Some(&current) {
            return None;
        }
        s.handed = Some(current.clone());
        Some(current)
    });
    if let Some((roles, for_model)) = due {
        query_tools::use_audience(&Audience { roles, for_model });
    }
}
