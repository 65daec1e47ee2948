//! The prompt templates (prompts/, mounted at /prompts): checked whole before any chat
//! turn starts, so a broken template refuses the request up front, naming its file and
//! line, instead of failing halfway (or being papered over by a fallback) mid-turn; and
//! listed with their content hashes in `/health`.

use kg_http::ApiError;
use serde_json::{Value, json};

/// Every prompt in every language loads and parses; else a 500 `prompt_template_invalid`
/// whose message and detail name the file and line.
pub fn check() -> Result<(), ApiError> {
    kg_prompts::check_all().map_err(|e| kg_agent_core::react::prompt_error(&e))
}

/// `/health`'s `prompts`: each prompt and language, the file it comes from and its hash
/// (or the error that makes it unusable).
pub fn versions() -> Value {
    kg_prompts::versions()
        .into_iter()
        .map(|v| match v.loaded {
            Ok((file, hash)) => {
                json!({"name": v.name, "lang": v.lang.tag(), "file": file, "hash": hash})
            }
            Err(e) => json!({"name": v.name, "lang": v.lang.tag(), "file": e.file, "error": e.to_string()}),
        })
        .collect()
}
