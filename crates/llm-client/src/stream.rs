//! Streamed completions: an incremental parser over the raw bytes of an SSE body.
//!
//! [`StreamParser::feed`] takes chunks exactly as they arrive from the network (cut
//! anywhere, even inside a UTF-8 character or a `\r\n`) and returns the events completed
//! so far; [`StreamParser::finish`] returns the assembled [`ChatResponse`]. The sync
//! transport hands over the whole body at once; an async caller feeds it chunk by chunk
//! (through [`crate::BodyReader`]).

use crate::error::LlmError;
use crate::message::ToolCall;
use crate::response::{ChatResponse, Usage};
use serde_json::Value as Json;

#[derive(Debug, Clone, PartialEq)]
pub enum StreamEvent {
    /// Assistant text produced since the previous event.
    Content(String),
    /// A tool call began (its id and name arrive first, arguments after).
    ToolCallStarted {
        index: usize,
        id: String,
        name: String,
    },
    /// A fragment of a tool call's JSON arguments.
    ToolCallArguments {
        index: usize,
        fragment: String,
    },
    Finished {
        reason: String,
    },
    Usage(Usage),
}

#[derive(Debug, Default)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
}

#[derive(Debug, Default)]
pub struct StreamParser {
    /// Bytes after the last complete line.
    pending: Vec<u8>,
    /// `data:` lines of the event being read (SSE joins them with `\n`).
    data: Vec<String>,
    done: bool,
    content: String,
    calls: Vec<(usize, PartialCall)>,
    finish_reason: Option<String>,
    usage: Option<Usage>,
    model: Option<String>,
}

impl StreamParser {
    pub fn new() -> Self {
        Self::default()
    }

    /// True once `data: [DONE]` arrived.
    pub fn is_done(&self) -> bool {
        self.done
    }

    /// Consumes one chunk of the body; returns the events it completed.
    pub fn feed(&mut self, chunk: &[u8]) -> Result<Vec<StreamEvent>, LlmError> {
        self.pending.extend_from_slice(chunk);
        let mut events = Vec::new();
        while let Some(end) = self.pending.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = self.pending.drain(..=end).collect();
            let line = String::from_utf8_lossy(&line[..line.len() - 1]);
            self.line(line.trim_end_matches('\r'), &mut events)?;
        }
        Ok(events)
    }

    /// Ends the body: flushes an unterminated last event and assembles the answer.
    pub fn finish(mut self) -> Result<(ChatResponse, Vec<StreamEvent>), LlmError> {
        let mut events = Vec::new();
        if !self.pending.is_empty() {
            let rest = std::mem::take(&mut self.pending);
            let line = String::from_utf8_lossy(&rest).into_owned();
            self.line(line.trim_end_matches('\r'), &mut events)?;
        }
        self.dispatch(&mut events)?;
        if !self.done && self.finish_reason.is_none() {
            return Err(LlmError::BadResponse(
                "the stream ended before `[DONE]` or a finish_reason".into(),
            ));
        }
        self.calls.sort_by_key(|(index, _)| *index);
        let tool_calls = self
            .calls
            .into_iter()
            .map(|(index, call)| {
                if call.name.is_empty() {
                    return Err(LlmError::BadResponse(format!(
                        "streamed tool call {index} never received a name"
                    )));
                }
                Ok(ToolCall {
                    id: if call.id.is_empty() {
                        format!("call_{index}")
                    } else {
                        call.id
                    },
                    name: call.name,
                    arguments: call.arguments,
                })
            })
            .collect::<Result<_, _>>()?;
        Ok((
            ChatResponse {
                content: self.content,
                tool_calls,
                finish_reason: self.finish_reason,
                usage: self.usage,
                model: self.model,
            },
            events,
        ))
    }

    fn line(&mut self, line: &str, events: &mut Vec<StreamEvent>) -> Result<(), LlmError> {
        if line.is_empty() {
            return self.dispatch(events);
        }
        // Comments (`: keep-alive`), `event:`, `id:` and `retry:` carry nothing we use.
        if let Some(value) = line.strip_prefix("data:") {
            self.data
                .push(value.strip_prefix(' ').unwrap_or(value).to_string());
        }
        Ok(())
    }

    fn dispatch(&mut self, events: &mut Vec<StreamEvent>) -> Result<(), LlmError> {
        if self.data.is_empty() {
            return Ok(());
        }
        let data = std::mem::take(&mut self.data).join("\n");
        if self.done {
            return Ok(());
        }
        if data.trim() == "[DONE]" {
            self.done = true;
            return Ok(());
        }
        let chunk: Json = serde_json::from_str(&data).map_err(|e| {
            LlmError::BadResponse(format!("a stream chunk is not JSON ({e}): {data}"))
        })?;
        self.chunk(&chunk, events)
    }

    fn chunk(&mut self, chunk: &Json, events: &mut Vec<StreamEvent>) -> Result<(), LlmError> {
        if let Some(error) = chunk.get("error").filter(|e| !e.is_null()) {
            return Err(LlmError::BadResponse(format!(
                "the stream reported an error: {error}"
            )));
        }
        if self.model.is_none() {
            self.model = chunk
                .get("model")
                .and_then(Json::as_str)
                .map(str::to_string);
        }
        let choice = chunk
            .get("choices")
            .and_then(Json::as_array)
            .and_then(|c| c.first());
        if let Some(delta) = choice.and_then(|c| c.get("delta")) {
            if let Some(text) = delta.get("content").and_then(Json::as_str)
                && !text.is_empty()
            {
                self.content.push_str(text);
                events.push(StreamEvent::Content(text.to_string()));
            }
            if let Some(calls) = delta.get("tool_calls").and_then(Json::as_array) {
                for (position, call) in calls.iter().enumerate() {
                    self.tool_call_delta(call, position, events);
                }
            }
        }
        if let Some(reason) = choice
            .and_then(|c| c.get("finish_reason"))
            .and_then(Json::as_str)
        {
            self.finish_reason = Some(reason.to_string());
            events.push(StreamEvent::Finished {
                reason: reason.to_string(),
            });
        }
        if let Some(usage) = chunk.get("usage").and_then(Usage::from_json) {
            self.usage = Some(usage);
            events.push(StreamEvent::Usage(usage));
        }
        Ok(())
    }

    /// Fragments are keyed by `index`; a server that omits it sends whole calls, so the
    /// position in the list stands in.
    fn tool_call_delta(&mut self, call: &Json, position: usize, events: &mut Vec<StreamEvent>) {
        let index = call
            .get("index")
            .and_then(Json::as_u64)
            .map_or(position, |i| usize::try_from(i).unwrap_or(usize::MAX));
        let slot = match self.calls.iter().position(|(i, _)| *i == index) {
            Some(slot) => slot,
            None => {
                self.calls.push((index, PartialCall::default()));
                self.calls.len() - 1
            }
        };
        let partial = &mut self.calls[slot].1;
        let function = call.get("function");
        let id = call.get("id").and_then(Json::as_str).unwrap_or_default();
        let name = function
            .and_then(|f| f.get("name"))
            .and_then(Json::as_str)
            .unwrap_or_default();
        let starts = partial.name.is_empty() && !name.is_empty();
        if !id.is_empty() && partial.id.is_empty() {
            partial.id = id.to_string();
        }
        if starts {
            partial.name = name.to_string();
            events.push(StreamEvent::ToolCallStarted {
                index,
                id: partial.id.clone(),
                name: partial.name.clone(),
            });
        }
        let fragment = match function.and_then(|f| f.get("arguments")) {
            Some(Json::String(text)) => text.clone(),
            Some(Json::Null) | None => String::new(),
            Some(other) => other.to_string(),
        };
        if !fragment.is_empty() {
            partial.arguments.push_str(&fragment);
            events.push(StreamEvent::ToolCallArguments { index, fragment });
        }
    }
}
