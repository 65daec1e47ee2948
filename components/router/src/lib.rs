//! The router component: binds `kg:agent/router`. Routing logic arrives with issue #6.

use kg_wit::types::{ComponentStatus, Error};

wit_bindgen::generate!({
    path: "../../wit",
    world: "router-component",
    with: { "kg:agent/types@0.1.0": kg_wit::types },
});

use exports::kg::agent::router::{Guest, RouteDecision, RouteRequest};

struct Router;

impl Guest for Router {
    fn status() -> ComponentStatus {
        kg_spin::status(
            "router",
            env!("CARGO_PKG_VERSION"),
            vec![
                kg_spin::configuration_check(kg_spin::LLM_VARIABLES),
                kg_spin::pending_check("intent routing", 6),
            ],
        )
    }

    fn route(_request: RouteRequest) -> Result<RouteDecision, Error> {
        Err(Error::not_implemented("intent routing", 6))
    }
}

export!(Router);
