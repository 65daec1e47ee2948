//! Who the graph tools answer (the graph profile's visibility policy): the request's
//! caller, and whether the answer goes into a model's context. The dispatcher is the only
//! component that knows either, so it hands the query tools the audience before a call
//! whenever it changed (`kg:query-tools` `use-audience`); the component redacts for it.
//!
//! Answers that go to a model: the agent's tool calls (the LLM reads them) and MCP's (an
//! MCP client is a model's host). What the policy shows to people only (`"people"`,
//! `llm = false`) is withheld from both; a person sees it through the HTTP API and the web
//! app.
//!
//! The action executor's records pass here too: a change to a property the audience may
//! not see keeps its place in outcomes, reports and the action log, without its values.

use kg_graph_profile::View;
use kg_wit::kg::action_executor::action_executor::{BatchPoll, LogPage};
use kg_wit::kg::query_tools::query_tools::{self, Audience};
use kg_wit::types::{BatchSummary, EntityOutcome, PropertyChange};
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

/// What the current audience is denied under the declared policy. A profile that does not
/// load withholds every recorded value (the query tools refuse to answer then too).
pub fn view() -> Option<View> {
    let (roles, for_model) = STATE.with(|s| {
        let s = s.borrow();
        (s.roles.clone(), s.for_model)
    });
    let loaded = kg_spin::graph_profile::load().ok()?;
    Some(
        loaded
            .declared
            .policy
            .view(&kg_graph_profile::Audience { roles, for_model }),
    )
}

/// A recorded change's values as the audience may see them: a property it may not see
/// has its `before` and `after` replaced by `{"withheld": true}`, a map no graph property
/// can hold, so the change stays listed (that something changed is not hidden).
fn withhold(changes: &mut [PropertyChange], view: Option<&View>) {
    const WITHHELD: &str = r#"{"withheld":true}"#;
    for change in changes {
        if view.is_none_or(|v| v.property_name_hidden(&change.property)) {
            for value in [&mut change.before, &mut change.after] {
                if value.is_some() {
                    *value = Some(WITHHELD.to_string());
                }
            }
        }
    }
}

/// Withholds what the audience may not see from an outcome.
pub fn withhold_in_outcome(outcome: &mut EntityOutcome, view: Option<&View>) {
    withhold(&mut outcome.changes, view);
}

/// Withholds what the audience may not see from a batch's report.
pub fn withhold_in_summary(summary: &mut BatchSummary, view: Option<&View>) {
    for outcome in summary
        .successes
        .iter_mut()
        .chain(summary.failures.iter_mut())
    {
        withhold_in_outcome(outcome, view);
    }
}

/// Withholds what the audience may not see from a batch's progress or report.
pub fn withhold_in_poll(poll: &mut BatchPoll, view: Option<&View>) {
    match poll {
        BatchPoll::Progress(outcomes) => {
            for outcome in outcomes {
                withhold_in_outcome(outcome, view);
            }
        }
        BatchPoll::Finished(summary) => withhold_in_summary(summary, view),
        BatchPoll::Pending => {}
    }
}

/// Withholds what the audience may not see from a page of the action log.
pub fn withhold_in_log(page: &mut LogPage, view: Option<&View>) {
    for entry in &mut page.entries {
        withhold(&mut entry.changes, view);
    }
}
