//! One Chat Completions request and its JSON body.

use crate::message::Message;
use serde_json::Value as Json;
use std::ops::Deref;
use std::sync::Arc;

/// A function the model may call, described by a JSON Schema of its arguments.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    /// JSON Schema (`{"type": "object", "properties": …}`) as compact JSON text, written
    /// into the body as it is: the schemas come as text from the component that owns the
    /// tools, and parsing them into a tree only to print them again cost a turn about as
    /// much as a tool call. Whoever builds a spec hands valid JSON (see
    /// [`ToolSpec::schema_or_object`]).
    pub parameters: String,
}

impl ToolSpec {
    /// `schema` when it is one JSON value, otherwise the schema of any object (a component
    /// that sends invalid JSON is a bug; the request must still be valid JSON).
    pub fn schema_or_object(schema: String) -> String {
        if serde_json::from_str::<serde::de::IgnoredAny>(&schema).is_ok() {
            schema
        } else {
            r#"{"type":"object"}"#.to_string()
        }
    }
}

/// The tools a request offers, with their JSON written once: a ReAct turn offers the same
/// tools at every step, so each step's body copies them instead of serialising every
/// schema again. Cloning shares them.
#[derive(Debug, Clone, Default)]
pub struct Tools {
    specs: Arc<[ToolSpec]>,
    /// The `tools` array of the body.
    json: Arc<str>,
}

impl Tools {
    /// The `tools` array as the body carries it.
    pub fn json(&self) -> &str {
        &self.json
    }
}

impl From<Vec<ToolSpec>> for Tools {
    fn from(specs: Vec<ToolSpec>) -> Tools {
        let mut json = Vec::with_capacity(256 * specs.len() + 2);
        json.push(b'[');
        for (i, spec) in specs.iter().enumerate() {
            if i > 0 {
                json.push(b',');
            }
            crate::body::tool(&mut json, spec);
        }
        json.push(b']');
        Tools {
            specs: specs.into(),
            // serde_json writes UTF-8.
            json: String::from_utf8_lossy(&json).into(),
        }
    }
}

impl Deref for Tools {
    type Target = [ToolSpec];
    fn deref(&self) -> &[ToolSpec] {
        &self.specs
    }
}

impl PartialEq for Tools {
    fn eq(&self, other: &Tools) -> bool {
        self.specs == other.specs
    }
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
    pub tools: Tools,
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
            tools: Tools::default(),
            tool_choice: None,
            response_format: ResponseFormat::Text,
            temperature: None,
            max_tokens: None,
        }
    }

    /// `tools`: a `Vec<ToolSpec>`, or [`Tools`] serialised once and shared by requests.
    pub fn with_tools(mut self, tools: impl Into<Tools>, choice: ToolChoice) -> Self {
        self.tools = tools.into();
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

    /// The body for `model` as JSON text; `stream` adds `stream: true` and asks for usage
    /// in the last chunk.
    pub fn body_bytes(&self, model: &str, stream: bool) -> Vec<u8> {
        crate::body::write(self, model, stream)
    }

    /// [`ChatRequest::body_bytes`] as a JSON tree.
    pub fn body(&self, model: &str, stream: bool) -> Json {
        crate::body::tree(&self.body_bytes(model, stream))
    }
}

#[cfg(test)]
mod schema_tests {
    use super::ToolSpec;

    #[test]
    fn a_schema_that_is_not_json_becomes_any_object() {
        let schema = r#"{"type":"object","properties":{"a":{"type":"string"}}}"#;
        assert_eq!(ToolSpec::schema_or_object(schema.into()), schema);
        for broken in ["", "{", r#"{"type": }"#, "{} {}"] {
            assert_eq!(
                ToolSpec::schema_or_object(broken.into()),
                r#"{"type":"object"}"#,
                "{broken:?}"
            );
        }
    }
}
