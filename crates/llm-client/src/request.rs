//! One Chat Completions request and its JSON body.

use crate::message::Message;
use serde_json::{Map, Value as Json, json};

/// A function the model may call, described by a JSON Schema of its arguments.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    /// JSON Schema (`{"type": "object", "properties": …}`).
    pub parameters: Json,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ToolChoice {
    Auto,
    None,
    Required,
    /// Force a call of this function.
    Function(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResponseFormat {
    Text,
    /// `{"type": "json_object"}`: the model must answer one JSON object.
    JsonObject,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ChatRequest {
    pub messages: Vec<Message>,
    pub tools: Vec<ToolSpec>,
    /// Sent only with tools (some servers refuse `tool_choice` without them).
    pub tool_choice: Option<ToolChoice>,
    pub response_format: ResponseFormat,
    pub temperature: Option<f32>,
    pub max_tokens: Option<u32>,
}

impl ChatRequest {
    pub fn new(messages: Vec<Message>) -> Self {
        ChatRequest {
            messages,
            tools: vec![],
            tool_choice: None,
            response_format: ResponseFormat::Text,
            temperature: None,
            max_tokens: None,
        }
    }

    pub fn with_tools(mut self, tools: Vec<ToolSpec>, choice: ToolChoice) -> Self {
        self.tools = tools;
        self.tool_choice = Some(choice);
        self
    }

    pub fn json_mode(mut self) -> Self {
        self.response_format = ResponseFormat::JsonObject;
        self
    }

    pub fn temperature(mut self, t: f32) -> Self {
        self.temperature = Some(t);
        self
    }

    pub fn max_tokens(mut self, n: u32) -> Self {
        self.max_tokens = Some(n);
        self
    }

    /// The body for `model`; `stream` adds `stream: true` and asks for usage in the last chunk.
    pub fn body(&self, model: &str, stream: bool) -> Json {
        let mut body = Map::new();
        body.insert("model".into(), json!(model));
        body.insert(
            "messages".into(),
            Json::Array(self.messages.iter().map(Message::to_json).collect()),
        );
        if !self.tools.is_empty() {
            let tools: Vec<Json> = self
                .tools
                .iter()
                .map(|t| {
                    json!({
                        "type": "function",
                        "function": {
                            "name": t.name,
                            "description": t.description,
                            "parameters": t.parameters,
                        },
                    })
                })
                .collect();
            body.insert("tools".into(), Json::Array(tools));
            if let Some(choice) = &self.tool_choice {
                let value = match choice {
                    ToolChoice::Auto => json!("auto"),
                    ToolChoice::None => json!("none"),
                    ToolChoice::Required => json!("required"),
                    ToolChoice::Function(name) => {
                        json!({"type": "function", "function": {"name": name}})
                    }
                };
                body.insert("tool_choice".into(), value);
            }
        }
        if self.response_format == ResponseFormat::JsonObject {
            body.insert("response_format".into(), json!({"type": "json_object"}));
        }
        if let Some(t) = self.temperature.filter(|t| t.is_finite()) {
            body.insert("temperature".into(), json!(t));
        }
        if let Some(n) = self.max_tokens {
            body.insert("max_tokens".into(), json!(n));
        }
        body.insert("stream".into(), json!(stream));
        if stream {
            body.insert("stream_options".into(), json!({"include_usage": true}));
        }
        Json::Object(body)
    }
}
