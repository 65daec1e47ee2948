//! The action-executor component: binds `kg:agent/action-executor`. The catalog and the
//! executor arrive with issue #5.

use kg_wit::types::{BatchSummary, ComponentStatus, EntityOutcome, Error, Json};

wit_bindgen::generate!({
    path: "../../wit",
    world: "action-executor-component",
    with: { "kg:agent/types@0.1.0": kg_wit::types },
});

use exports::kg::agent::action_executor::{
    ActionSpec, ActionSummary, BatchPoll, BatchRun, ExecutionRequest, Guest, GuestBatchRun,
    LogPage, Validation,
};

struct ActionExecutor;

/// Never constructed until batch execution exists; `start_batch` refuses first.
struct PendingBatch;

impl GuestBatchRun for PendingBatch {
    fn total(&self) -> u32 {
        0
    }

    fn next(&self, _wait_ms: u32) -> Result<BatchPoll, Error> {
        Err(Error::not_implemented("batch execution", 5))
    }

    fn cancel(&self) {}
}

impl Guest for ActionExecutor {
    type BatchRun = PendingBatch;

    fn status() -> ComponentStatus {
        kg_spin::status(
            "action-executor",
            env!("CARGO_PKG_VERSION"),
            vec![
                kg_spin::configuration_check(kg_spin::NEO4J_VARIABLES),
                kg_spin::pending_check("action catalog and execution", 5),
            ],
        )
    }

    fn list_actions(_entity_type: Option<String>) -> Result<Vec<ActionSummary>, Error> {
        Err(Error::not_implemented("the action catalog", 5))
    }

    fn get_action(_entity_type: String, _action_name: String) -> Result<ActionSpec, Error> {
        Err(Error::not_implemented("the action catalog", 5))
    }

    fn validate(
        _entity_type: String,
        _action_name: String,
        _entity_ids: Vec<String>,
        _parameters: Json,
    ) -> Result<Vec<Validation>, Error> {
        Err(Error::not_implemented("precondition validation", 5))
    }

    fn execute(_request: ExecutionRequest) -> Result<BatchSummary, Error> {
        Err(Error::not_implemented("action execution", 5))
    }

    fn start_batch(_request: ExecutionRequest) -> Result<BatchRun, Error> {
        Err(Error::not_implemented("batch execution", 5))
    }

    fn action_log(_cursor: Option<String>, _limit: u32) -> Result<LogPage, Error> {
        Err(Error::not_implemented("the action log", 5))
    }

    fn undo(_log_id: String, _actor: Option<String>) -> Result<EntityOutcome, Error> {
        Err(Error::not_implemented("undo", 5))
    }
}

export!(ActionExecutor);
