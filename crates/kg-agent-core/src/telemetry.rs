//! The agent's own spans, after the OpenTelemetry GenAI conventions: the turn as a whole
//! (`invoke_agent kg-agent`), each ReAct step (`agent step`, wrapping the step's LLM call
//! and tool calls, which nest under it because the recorder parents spans by scope), and
//! each action batch (`action batch`, from its start to its summary, its pulls under it).
//! While nothing is recorded these cost an empty handle and no prompt hashing.

use crate::turn::ports::Toolset;
use kg_prompts::Lang;
use kg_telemetry::{ActiveSpan, SpanKind, attr};
use kg_wit::types::BatchSummary;

/// The name this agent goes by in `gen_ai.agent.name`.
pub const AGENT_NAME: &str = "kg-agent";

/// The prompt behind a step: its template name(s) and content hash(es), as `/health`
/// lists them (`react+react_action` for an action turn's two templates).
#[derive(Debug, Clone, PartialEq)]
pub struct PromptVersion {
    pub name: String,
    pub hash: String,
}

/// The span of the whole turn (GenAI `invoke_agent`, in process so INTERNAL).
pub fn turn_span(conversation: &str) -> ActiveSpan {
    let mut span = kg_telemetry::span("invoke_agent", SpanKind::Internal);
    if span.is_recording() {
        span.rename(&format!("invoke_agent {AGENT_NAME}"));
        span.set(attr::GEN_AI_OPERATION_NAME, "invoke_agent");
        span.set(attr::GEN_AI_AGENT_NAME, AGENT_NAME);
        span.set(attr::GEN_AI_CONVERSATION_ID, conversation);
    }
    span
}

/// The span of one ReAct step (or of a direct answer's single LLM call). The name stays
/// the same for every step (span names are for grouping); the step is an attribute.
pub fn step_span(step: u32, prompt: Option<&PromptVersion>) -> ActiveSpan {
    let mut span = kg_telemetry::span("agent step", SpanKind::Internal);
    if span.is_recording() {
        span.set(attr::KG_AGENT_STEP, step);
        if let Some(prompt) = prompt {
            span.set(attr::KG_PROMPT_NAME, prompt.name.as_str());
            span.set(attr::KG_PROMPT_HASH, prompt.hash.as_str());
        }
    }
    span
}

/// The version of the ReAct system prompt for `set`, only while the trace is recorded
/// (hashing reads the templates again). A template that cannot be loaded has no version:
/// the turn refuses it on its own when it renders the prompt.
pub fn react_prompt(set: Toolset, lang: Lang) -> Option<PromptVersion> {
    let mut specs = vec![kg_prompts::REACT];
    if set == Toolset::Action {
        specs.push(kg_prompts::REACT_ACTION);
    }
    prompt_version(&specs, lang)
}

/// The version of the direct-answer prompt, only while the trace is recorded.
pub fn answer_prompt(lang: Lang) -> Option<PromptVersion> {
    prompt_version(&[kg_prompts::ANSWER], lang)
}

fn prompt_version(specs: &[kg_prompts::Spec], lang: Lang) -> Option<PromptVersion> {
    if !kg_telemetry::is_recording() {
        return None;
    }
    let mut names = Vec::with_capacity(specs.len());
    let mut hashes = Vec::with_capacity(specs.len());
    for spec in specs {
        hashes.push(kg_prompts::prompt_hash(*spec, lang).ok()?);
        names.push(spec.name);
    }
    Some(PromptVersion {
        name: names.join("+"),
        hash: hashes.join("+"),
    })
}

/// The span of one action batch, opened before it starts.
pub fn batch_span(entity_type: &str, action_name: &str, entity_count: usize) -> ActiveSpan {
    let mut span = kg_telemetry::span("action batch", SpanKind::Internal);
    if span.is_recording() {
        span.set(attr::KG_ACTION_NAME, action_name);
        span.set(attr::KG_ACTION_ENTITY_TYPE, entity_type);
        span.set(attr::KG_ACTION_ENTITY_COUNT, entity_count);
    }
    span
}

/// Records how a batch ended on its span. Failed entities are outcomes the report
/// states, not an error of the span.
pub fn batch_finished(span: &mut ActiveSpan, summary: &BatchSummary) {
    span.set(attr::KG_ACTION_SUCCEEDED, summary.succeeded);
    span.set(attr::KG_ACTION_FAILED, summary.failed);
    span.set(attr::KG_ACTION_UNKNOWN, summary.unknown);
}

/// The span of one tool call of the agent (GenAI `execute_tool`); its arguments only with
/// content capture on.
pub fn tool_span(call: &llm_client::ToolCall) -> ActiveSpan {
    let mut span = kg_telemetry::span("execute_tool", SpanKind::Internal);
    if span.is_recording() {
        span.rename(&format!("execute_tool {}", call.name));
        span.set(attr::GEN_AI_OPERATION_NAME, "execute_tool");
        span.set(attr::GEN_AI_TOOL_NAME, call.name.as_str());
        span.set(attr::GEN_AI_TOOL_CALL_ID, call.id.as_str());
        if kg_telemetry::capture_content() {
            span.set(attr::GEN_AI_TOOL_CALL_ARGUMENTS, call.arguments.as_str());
        }
    }
    span
}

/// A failed tool call is an error span; its message is the observation's summary only
/// with content capture on (it may quote the user's data).
pub fn tool_outcome(span: &mut ActiveSpan, observation: &crate::react::Observation) {
    if !observation.ok {
        let message = if kg_telemetry::capture_content() {
            observation.summary.as_str()
        } else {
            "the tool call failed"
        };
        span.fail("tool_error", message);
    }
}
