//! `GET /graph/policy` (admins): the graph profile's visibility policy as declared, each
//! rule with its line, and where the profile came from. Read-only; a profile that does not
//! parse is a 500 naming its line (the query tools refuse every call then too).

use kg_http::ApiError;
use serde_json::json;
use spin_sdk::http::Response;

pub fn handle() -> Result<Response, ApiError> {
    let loaded = kg_spin::graph_profile::load()
        .map_err(|e| ApiError::new(500, "graph_profile_invalid", e))?;
    let mut report = loaded.declared.policy.report();
    report["source"] = json!(loaded.source);
    Ok(crate::json_response(200, &report))
}
