//! Attribute names from the OpenTelemetry semantic conventions (GenAI 1.37, database,
//! HTTP, error), and this service's own under `kg.`.

pub const GEN_AI_OPERATION_NAME: &str = "gen_ai.operation.name";
pub const GEN_AI_PROVIDER_NAME: &str = "gen_ai.provider.name";
pub const GEN_AI_REQUEST_MODEL: &str = "gen_ai.request.model";
pub const GEN_AI_RESPONSE_MODEL: &str = "gen_ai.response.model";
pub const GEN_AI_USAGE_INPUT_TOKENS: &str = "gen_ai.usage.input_tokens";
pub const GEN_AI_USAGE_OUTPUT_TOKENS: &str = "gen_ai.usage.output_tokens";
pub const GEN_AI_RESPONSE_FINISH_REASONS: &str = "gen_ai.response.finish_reasons";
pub const GEN_AI_REQUEST_MAX_TOKENS: &str = "gen_ai.request.max_tokens";
pub const GEN_AI_REQUEST_TEMPERATURE: &str = "gen_ai.request.temperature";
/// Only with content capture on: the messages sent, as JSON.
pub const GEN_AI_INPUT_MESSAGES: &str = "gen_ai.input.messages";
/// Only with content capture on: the answer, as JSON.
pub const GEN_AI_OUTPUT_MESSAGES: &str = "gen_ai.output.messages";
pub const GEN_AI_AGENT_NAME: &str = "gen_ai.agent.name";
pub const GEN_AI_CONVERSATION_ID: &str = "gen_ai.conversation.id";
pub const GEN_AI_TOOL_NAME: &str = "gen_ai.tool.name";
pub const GEN_AI_TOOL_CALL_ID: &str = "gen_ai.tool.call.id";
/// Only with content capture on.
pub const GEN_AI_TOOL_CALL_ARGUMENTS: &str = "gen_ai.tool.call.arguments";

pub const DB_SYSTEM_NAME: &str = "db.system.name";
pub const DB_NAMESPACE: &str = "db.namespace";
pub const DB_OPERATION_NAME: &str = "db.operation.name";
pub const DB_QUERY_SUMMARY: &str = "db.query.summary";
/// Only with statement capture on. Values are always parameters, never in the text.
pub const DB_QUERY_TEXT: &str = "db.query.text";
pub const DB_RESPONSE_STATUS_CODE: &str = "db.response.status_code";
pub const DB_RESPONSE_RETURNED_ROWS: &str = "db.response.returned_rows";

pub const SERVER_ADDRESS: &str = "server.address";
pub const SERVER_PORT: &str = "server.port";
pub const HTTP_REQUEST_METHOD: &str = "http.request.method";
pub const HTTP_ROUTE: &str = "http.route";
pub const HTTP_RESPONSE_STATUS_CODE: &str = "http.response.status_code";
pub const URL_PATH: &str = "url.path";
pub const ERROR_TYPE: &str = "error.type";

/// The kg-agent component that recorded a span.
pub const KG_COMPONENT: &str = "kg.component";
/// The ReAct step (1-based) an `agent step` span covers.
pub const KG_AGENT_STEP: &str = "kg.agent.step";
/// The prompt template(s) behind an LLM step and their content hashes (as `/health`
/// lists them), so a behaviour change can be tied to a prompt change.
pub const KG_PROMPT_NAME: &str = "kg.prompt.name";
pub const KG_PROMPT_HASH: &str = "kg.prompt.hash";
/// An action batch: what it did, to how many entities, and how it ended.
pub const KG_ACTION_NAME: &str = "kg.action.name";
pub const KG_ACTION_ENTITY_TYPE: &str = "kg.action.entity_type";
pub const KG_ACTION_ENTITY_COUNT: &str = "kg.action.entity_count";
pub const KG_ACTION_SUCCEEDED: &str = "kg.action.succeeded";
pub const KG_ACTION_FAILED: &str = "kg.action.failed";
pub const KG_ACTION_UNKNOWN: &str = "kg.action.unknown";
