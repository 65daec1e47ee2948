//! The ReAct loop: the model sees the question and the tools, calls tools (several in one
//! step if it likes), reads their observations, and answers when it has enough. A failing
//! tool is an observation, not an error; at the step limit the loop stops and the caller
//! synthesises the best answer from what was gathered (seed 002 properties 8–10).

use crate::events::Event;
use crate::telemetry::PromptVersion;
use crate::turn::ports::{EventSink, ModelStream, Toolset};
use crate::turn::reply_stream::{Pulled, Show, pull};
use kg_http::ApiError;
use kg_prompts::{Lang, PromptError};
use llm_client::{
    ChatRequest, ChatResponse, LlmError, Message, ToolCall, ToolChoice, ToolSpec, Usage,
};
use serde_json::Value;

/// The ReAct step's system prompt: the `react` template (prompts/<lang>/react.txt, read
/// from the `/prompts` mount, else built in), with `react_action` appended on action turns.
pub fn system_prompt(set: Toolset, lang: Lang) -> Result<String, PromptError> {
    let base = kg_prompts::load(kg_prompts::REACT, lang)?.render(&[]);
    Ok(match set {
        Toolset::Query => base,
        Toolset::Action => {
            let action = kg_prompts::load(kg_prompts::REACT_ACTION, lang)?.render(&[]);
            format!("{base} {action}")
        }
    })
}

/// The system prompt of a direct answer (small talk; no tools): the `answer` template.
pub fn direct_answer_prompt(lang: Lang) -> Result<String, PromptError> {
    Ok(kg_prompts::load(kg_prompts::ANSWER, lang)?.render(&[]))
}

/// A prompt template that cannot be used: 500 `prompt_template_invalid`, naming the file
/// and line (the dispatcher checks every template before a turn starts, so this is the
/// same answer for a file broken mid-turn).
pub fn prompt_error(e: &PromptError) -> ApiError {
    ApiError::new(500, "prompt_template_invalid", e.to_string())
        .with_detail(serde_json::json!({"file": e.file, "line": e.line}))
}

/// What one ReAct step may write: a few tool calls or a short answer. Bounded so a model
/// that rambles (or loops inside one reply) stops on the server too.
pub const STEP_MAX_TOKENS: u32 = 768;
/// What a direct answer (small talk, no tools) may write.
pub const DIRECT_MAX_TOKENS: u32 = 512;
/// Tool calls one step runs at most (the first ones the model wrote).
pub const MAX_CALLS_PER_STEP: usize = 4;
/// Repeated identical calls after which the loop stops and the answer is synthesised.
const MAX_REPEATED_CALLS: u32 = 2;
const REPEATED_CALL: &str =
    "You already made this call with these arguments; do not repeat it. Its result was:";
const UNREADABLE_CALL: &str = "Your tool call could not be read. Call a tool with valid JSON arguments, or answer the question in plain text.";

fn refused(message: String) -> Observation {
    Observation {
        ok: false,
        content: serde_json::json!({"error": message}).to_string(),
        summary: format!("failed: {message}"),
        graph: None,
    }
}

/// The LLM, as the loop needs it.
pub trait Model {
    fn complete(&mut self, request: &ChatRequest) -> Result<ChatResponse, LlmError>;
    /// Sends `request` streamed, to be pulled a piece at a time (its text may be followed
    /// by tool calls, which come with the finished response). `Err` when the stream cannot
    /// start: the caller falls back to [`Model::complete`]. A failure once it started
    /// (after its retries) comes from a pull. By default a model does not stream.
    fn start_stream(&mut self, _request: &ChatRequest) -> Result<Box<dyn ModelStream>, LlmError> {
        Err(LlmError::NotConfigured("this model does not stream".into()))
    }
}

/// What a tool call produced.
#[derive(Debug, Clone, PartialEq)]
pub struct Observation {
    pub ok: bool,
    /// What the model reads next (compact JSON, or the error's message).
    pub content: String,
    /// One line for people.
    pub summary: String,
    /// A subgraph for the UI, when the tool returned one.
    pub graph: Option<Value>,
}

pub trait ToolRunner {
    fn run(&mut self, call: &ToolCall) -> Observation;
}

#[derive(Debug, Clone, PartialEq)]
pub struct Gathered {
    pub step: u32,
    pub call: ToolCall,
    pub observation: Observation,
}

#[derive(Debug, Clone, PartialEq)]
pub struct LoopOutcome {
    /// The model's own final answer; `None` when the step limit cut the loop short.
    pub answer: Option<String>,
    /// The answer's text already went out as `content` events (its step was streamed).
    pub answer_shown: bool,
    /// The model the endpoint said answered the last step (`model` of its response).
    pub model: Option<String>,
    /// Every tool call and its observation, in order.
    pub gathered: Vec<Gathered>,
    /// Model calls made.
    pub steps: u32,
    pub limit_reached: bool,
    /// The client went away: the loop stopped before its next model or tool call.
    pub cancelled: bool,
    pub usage: Usage,
}

pub struct Limits {
    /// Model calls at most (seed 002: 10 by default).
    pub max_steps: u32,
    /// The system prompt's version, recorded on each step's span (`None` when the trace
    /// is not recorded).
    pub prompt: Option<PromptVersion>,
}

/// Runs the loop. `messages` holds the system prompt, the history and the question. Once
/// the sink says the client is gone, no further model or tool call starts.
pub fn run(
    messages: Vec<Message>,
    tools: &[ToolSpec],
    model: &mut dyn Model,
    runner: &mut dyn ToolRunner,
    limits: &Limits,
    sink: &mut dyn EventSink,
) -> Result<LoopOutcome, LlmError> {
    let mut outcome = LoopOutcome {
        answer: None,
        answer_shown: false,
        model: None,
        gathered: Vec::new(),
        steps: 0,
        limit_reached: false,
        cancelled: false,
        usage: Usage::default(),
    };
    // One request for the whole loop: each step appends its tool calls and their results
    // to it, and the tools' JSON is written once (not the whole history and every schema
    // cloned, and the schemas serialised again, at every step).
    let mut request = ChatRequest::new(messages)
        .with_tools(tools.to_vec(), ToolChoice::Auto)
        .max_tokens(STEP_MAX_TOKENS);
    let mut seen = crate::calls::Seen::default();
    // Calls answered from an earlier identical one: a model that keeps repeating itself
    // is looping, and the answer is written from what it has.
    let mut repeated = 0u32;
    while outcome.steps < limits.max_steps {
        if repeated >= MAX_REPEATED_CALLS {
            break;
        }
        outcome.steps += 1;
        let step = outcome.steps;
        sink.emit(Event::Thinking {
            node: "agent".into(),
            display_name: format!("Reasoning (step {step})"),
            details: if step == 1 {
                "choosing tools".into()
            } else {
                format!("{} observations so far", outcome.gathered.len())
            },
            sub_status: format!("step {step} of at most {}", limits.max_steps),
        });
        if sink.gone() {
            outcome.steps -= 1;
            outcome.cancelled = true;
            return Ok(outcome);
        }
        // Open for the rest of the iteration: the step's LLM call and tool calls are
        // recorded as its children.
        let _step_span = crate::telemetry::step_span(step, limits.prompt.as_ref());
        let started = std::time::Instant::now();
        // Only a step before any tool ran can be the answer (after one, the summariser or
        // the plan's report is): only such a step is streamed.
        let may_answer = outcome.gathered.is_empty();
        let Some((response, shown)) = call_model(model, &request, may_answer, sink)? else {
            outcome.cancelled = true;
            return Ok(outcome);
        };
        if let Some(model) = response.model.as_ref().filter(|m| !m.is_empty()) {
            outcome.model = Some(model.clone());
        }
        let usage = response.usage.unwrap_or_default();
        sink.emit(crate::events::step_trace(
            step,
            crate::events::millis_since(started),
            usage.prompt_tokens,
            usage.completion_tokens,
            response.tool_calls.len(),
        ));
        if let Some(u) = response.usage {
            outcome.usage = Usage {
                prompt_tokens: outcome.usage.prompt_tokens.saturating_add(u.prompt_tokens),
                completion_tokens: outcome
                    .usage
                    .completion_tokens
                    .saturating_add(u.completion_tokens),
            };
        }
        let mut response = response;
        crate::calls::step_calls(&mut response, tools);
        crate::calls::distinct(&mut response.tool_calls);
        // A small model calls every tool it sees in one step (seen: the 0.5B, 16 different
        // calls); each result lengthens every later prompt, so a step runs a few.
        response.tool_calls.truncate(MAX_CALLS_PER_STEP);
        crate::calls::name_calls(&mut response.tool_calls, step);
        if response.tool_calls.is_empty() {
            if llm_client::looks_like_tool_call(&response.content) && step < limits.max_steps {
                // A call that could not be read is no answer: the model is told so.
                request
                    .messages
                    .push(Message::assistant(response.content.clone()));
                request.messages.push(Message::user(UNREADABLE_CALL));
                if shown {
                    sink.retract_content();
                }
                continue;
            }
            outcome.answer = Some(response.content);
            outcome.answer_shown = shown;
            return Ok(outcome);
        }
        if shown {
            // The text streamed in case it was the answer prefaced tool calls: it is
            // reasoning, and the answer written later replaces it.
            sink.emit(Event::Thinking {
                node: "agent".into(),
                display_name: format!("Reasoning (step {step})"),
                details: response.content.clone(),
                sub_status: "before calling tools".into(),
            });
            sink.retract_content();
        }
        let content = (!response.content.is_empty()).then(|| response.content.clone());
        request.messages.push(Message::assistant_tool_calls(
            content,
            response.tool_calls.clone(),
        ));
        for call in &response.tool_calls {
            if sink.gone() {
                outcome.cancelled = true;
                return Ok(outcome);
            }
            let mut fitted = call.clone();
            let fit = crate::calls::fit_call(&mut fitted, tools);
            let call = &fitted;
            sink.emit(Event::ToolCall {
                step,
                id: call.id.clone(),
                name: call.name.clone(),
                arguments: call
                    .arguments_json()
                    .unwrap_or(Value::String(call.arguments.clone())),
            });
            if sink.gone() {
                outcome.cancelled = true;
                return Ok(outcome);
            }
            let started = std::time::Instant::now();
            let observation = match fit {
                Err(message) => refused(message),
                Ok(()) => match seen.earlier(call) {
                    Some(earlier) => {
                        repeated += 1;
                        Observation {
                            ok: true,
                            content: format!("{REPEATED_CALL} {earlier}"),
                            summary: "repeated call: the earlier result".into(),
                            graph: None,
                        }
                    }
                    None => {
                        let observation = runner.run(call);
                        seen.record(call, &observation.content);
                        observation
                    }
                },
            };
            sink.emit(Event::ToolResult {
                step,
                id: call.id.clone(),
                name: call.name.clone(),
                ok: observation.ok,
                summary: observation.summary.clone(),
                latency_ms: crate::events::millis_since(started),
            });
            if let Some(graph) = &observation.graph {
                sink.emit(Event::GraphData(graph.clone()));
            }
            request.messages.push(Message::tool_result(
                call.id.clone(),
                observation.content.clone(),
            ));
            outcome.gathered.push(Gathered {
                step,
                call: call.clone(),
                observation,
            });
        }
    }
    outcome.limit_reached = true;
    Ok(outcome)
}

/// One step's LLM call, streamed whenever the model can (so that a call the turn drops,
/// its client gone or its deadline passed, stops on the server too, and a CPU model's
/// slow reply is read as it comes): its text is shown as it comes when the client reads a
/// stream and the step `may_answer` (the stream says only at its end whether tool calls
/// follow), except what may be a tool call written as text. `Some((response, shown))`, or
/// `None` when the client left or the deadline passed during the call (a cancellation, not
/// a failure).
fn call_model(
    model: &mut dyn Model,
    request: &ChatRequest,
    may_answer: bool,
    sink: &mut dyn EventSink,
) -> Result<Option<(ChatResponse, bool)>, LlmError> {
    if let Ok(mut stream) = model.start_stream(request) {
        let show = if may_answer && sink.streaming() {
            Show::Gated
        } else {
            Show::Nothing
        };
        return match pull(&mut *stream, sink, show) {
            Pulled::Finished { response, shown } => Ok(Some((response, shown))),
            Pulled::Stopped => Ok(None),
            Pulled::Failed(e) => Err(e),
        };
    }
    match model.complete(request) {
        Ok(response) => Ok(Some((response, false))),
        Err(_) if sink.gone() => Ok(None),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A model that calls `script[i]` tools at step i, then answers.
    struct Scripted {
        script: Vec<usize>,
        calls: u32,
        seen_tool_results: Vec<usize>,
    }

    impl Model for Scripted {
        fn complete(&mut self, request: &ChatRequest) -> Result<ChatResponse, LlmError> {
            let step = self.calls as usize;
            self.calls += 1;
            self.seen_tool_results.push(
                request
                    .messages
                    .iter()
                    .filter(|m| m.tool_call_id.is_some())
                    .count(),
            );
            let n = self.script.get(step).copied().unwrap_or(0);
            Ok(ChatResponse {
                content: if n == 0 {
                    format!("answer after {step} steps")
                } else {
                    String::new()
                },
                tool_calls: (0..n)
                    .map(|k| ToolCall {
                        id: format!("c{step}-{k}"),
                        name: if k % 3 == 2 {
                            "broken".into()
                        } else {
                            "search".into()
                        },
                        arguments: format!(r#"{{"q":"{step}-{k}"}}"#),
                    })
                    .collect(),
                finish_reason: None,
                usage: Some(Usage {
                    prompt_tokens: 1,
                    completion_tokens: 1,
                }),
                model: None,
            })
        }
    }

    /// The tools the scripted model calls.
    fn offered() -> Vec<ToolSpec> {
        ["search", "broken"]
            .into_iter()
            .map(|name| ToolSpec {
                name: name.into(),
                description: String::new(),
                parameters: r#"{"type":"object","properties":{"q":{"type":"string"}}}"#.into(),
            })
            .collect()
    }

    struct Tools;
    impl ToolRunner for Tools {
        fn run(&mut self, call: &ToolCall) -> Observation {
            let ok = call.name != "broken";
            Observation {
                ok,
                content: if ok {
                    "{}".into()
                } else {
                    "error: boom".into()
                },
                summary: call.id.clone(),
                graph: None,
            }
        }
    }

    fn run_script(script: Vec<usize>, max_steps: u32) -> (LoopOutcome, Scripted, Vec<Event>) {
        let mut model = Scripted {
            script,
            calls: 0,
            seen_tool_results: vec![],
        };
        let mut events = crate::turn::ports::Collected::default();
        let outcome = run(
            vec![Message::user("q")],
            &offered(),
            &mut model,
            &mut Tools,
            &Limits {
                max_steps,
                prompt: None,
            },
            &mut events,
        )
        .unwrap();
        (outcome, model, events.0)
    }

    /// A model and tools that record their calls' spans, as the LLM client and the
    /// dispatcher's tool runner do.
    struct Traced<T>(T);

    impl Model for Traced<Scripted> {
        fn complete(&mut self, request: &ChatRequest) -> Result<ChatResponse, LlmError> {
            let _span = kg_telemetry::span("chat", kg_telemetry::SpanKind::Client);
            self.0.complete(request)
        }
    }

    impl ToolRunner for Traced<Tools> {
        fn run(&mut self, call: &ToolCall) -> Observation {
            let _span = kg_telemetry::span("execute_tool", kg_telemetry::SpanKind::Internal);
            self.0.run(call)
        }
    }

    #[test]
    fn each_step_is_a_span_holding_its_llm_call_and_tool_calls() {
        kg_telemetry::begin(
            None,
            None,
            kg_telemetry::Settings {
                export: true,
                ..kg_telemetry::Settings::default()
            },
        );
        let mut model = Traced(Scripted {
            script: vec![2, 1, 0],
            calls: 0,
            seen_tool_results: vec![],
        });
        let prompt = PromptVersion {
            name: "react".into(),
            hash: "sha256:0123456789ab".into(),
        };
        let outcome = run(
            vec![Message::user("q")],
            &offered(),
            &mut model,
            &mut Traced(Tools),
            &Limits {
                max_steps: 10,
                prompt: Some(prompt.clone()),
            },
            &mut crate::turn::ports::Collected::default(),
        )
        .unwrap();
        assert_eq!(outcome.steps, 3);
        let spans = kg_telemetry::take_finished();
        let steps: Vec<&kg_telemetry::SpanData> =
            spans.iter().filter(|s| s.name == "agent step").collect();
        assert_eq!(steps.len(), 3);
        let attribute = |s: &kg_telemetry::SpanData, key: &str| {
            s.attributes
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.clone())
        };
        for (i, step) in steps.iter().enumerate() {
            let number = i as u32 + 1;
            assert_eq!(
                attribute(step, "kg.agent.step"),
                Some(kg_telemetry::Value::from(number))
            );
            assert_eq!(
                attribute(step, "kg.prompt.hash"),
                Some(kg_telemetry::Value::from(prompt.hash.as_str()))
            );
            let children: Vec<&str> = spans
                .iter()
                .filter(|s| s.parent_span_id == Some(step.span_id))
                .map(|s| s.name.as_str())
                .collect();
            let tools = [2, 1, 0][i];
            let mut expected = vec!["chat"];
            expected.extend(std::iter::repeat_n("execute_tool", tools));
            assert_eq!(children, expected, "step {number}");
            assert_eq!(step.parent_span_id, None, "steps are siblings");
        }
    }

    #[test]
    fn a_failing_tool_is_an_observation_and_the_loop_goes_on() {
        let (o, _, events) = run_script(vec![3, 0], 10);
        assert_eq!(o.answer.as_deref(), Some("answer after 1 steps"));
        assert!(!o.gathered[2].observation.ok);
        assert!(
            events
                .iter()
                .any(|e| matches!(e, Event::ToolResult { ok: false, .. }))
        );
    }

    proptest! {
        /// Property 9: never more model calls than the limit; the limit flag is set exactly
        /// when the model still wanted tools. Property 8: every observation is kept, in
        /// order, and the model sees all earlier ones at each step. Property 10: either the
        /// model answered or the caller is told to synthesise (limit reached).
        #[test]
        fn loop_invariants(script in proptest::collection::vec(0usize..4, 0..15), max_steps in 1u32..12) {
            let (o, model, events) = run_script(script.clone(), max_steps);
            prop_assert!(o.steps <= max_steps);
            prop_assert_eq!(model.calls, o.steps);
            let first_answer = script.iter().position(|n| *n == 0).unwrap_or(script.len());
            let wanted_steps = first_answer as u32 + 1;
            prop_assert_eq!(o.limit_reached, wanted_steps > max_steps);
            prop_assert_eq!(o.answer.is_some(), !o.limit_reached);
            let expected_calls: usize = script.iter().take(first_answer.min(max_steps as usize)).sum();
            prop_assert_eq!(o.gathered.len(), expected_calls);
            // At step i the model has seen every observation of the steps before it.
            let mut seen = 0;
            for (i, n) in model.seen_tool_results.iter().enumerate() {
                prop_assert_eq!(*n, seen);
                seen += script.get(i).copied().unwrap_or(0);
            }
            let calls = events.iter().filter(|e| matches!(e, Event::ToolCall { .. })).count();
            let results = events.iter().filter(|e| matches!(e, Event::ToolResult { .. })).count();
            prop_assert_eq!(calls, results);
            prop_assert_eq!(o.usage.prompt_tokens, o.steps);
            // Property 21: every reasoning step and every tool call has a latency > 0, and
            // each step's trace carries its token usage.
            let steps: Vec<&Value> = events.iter().filter_map(|e| match e {
                Event::Trace(t) if t["kind"] == "step" => Some(t),
                _ => None,
            }).collect();
            prop_assert_eq!(steps.len() as u32, o.steps);
            for t in steps {
                prop_assert!(t["latency_ms"].as_f64().unwrap_or(0.0) > 0.0);
                prop_assert!(t["usage"]["total_tokens"].is_u64());
            }
            for e in &events {
                if let Event::ToolResult { latency_ms, .. } = e {
                    prop_assert!(*latency_ms > 0.0);
                }
            }
        }
    }
}
