//! The agent's tools (`kg_agent_core::toolbox`) bound to the components over WIT, each
//! graph call inside the request's bookmark chain (`crate::causal`).

use kg_agent_core::toolbox::{Backend, Toolbox};
use kg_wit::kg::action_executor::action_executor::{self, ActionSpec, ActionSummary, Validation};
use kg_wit::kg::query_tools::query_tools::{self, ToolResult, ToolSpec};
use kg_wit::kg::retriever::retriever::{self, SearchRequest, SearchResponse};
use kg_wit::types::{Caller, Error};

pub struct WitBackend;

pub type WitTools = Toolbox<WitBackend>;

impl Backend for WitBackend {
    fn list_tools(&mut self) -> Vec<ToolSpec> {
        query_tools::list_tools()
    }
    fn call_tool(&mut self, name: &str, arguments: &str) -> Result<ToolResult, Error> {
        // The tool's answer goes into the model's context.
        crate::audience::for_model(|| {
            crate::causal::query_tools(|| query_tools::call_tool(name, arguments))
        })
    }
    fn search(&mut self, request: &SearchRequest) -> Result<SearchResponse, Error> {
        crate::causal::retriever(|| retriever::search(request))
    }
    fn list_actions(&mut self, entity_type: Option<&str>) -> Result<Vec<ActionSummary>, Error> {
        action_executor::list_actions(entity_type)
    }
    fn get_action(&mut self, entity_type: &str, action_name: &str) -> Result<ActionSpec, Error> {
        action_executor::get_action(entity_type, action_name)
    }
    fn validate(
        &mut self,
        caller: &Caller,
        entity_type: &str,
        action_name: &str,
        ids: &[String],
        parameters: &str,
    ) -> Result<Vec<Validation>, Error> {
        crate::causal::executor(|| {
            action_executor::validate(caller, entity_type, action_name, ids, parameters)
        })
    }
}
