//! A whole answer read straight into the few fields the client uses, instead of into a
//! `serde_json::Value` tree that is then walked (which allocated every key, number and
//! string of the document, ids and metadata included, only to drop them).
//!
//! The reading is lenient in exactly the way the tree walk was: a field of an unexpected
//! kind reads as absent rather than failing, a repeated key's last value wins (as in a
//! tree's map), and every value is read through `deserialize_any`, as a tree is, so a
//! document is invalid JSON, with the same error, exactly when it was before (skipping a
//! value with `IgnoredAny` would accept numbers out of range and invalid UTF-8 that a tree
//! refuses). The checks (an `error`, no choice, no message, a bad tool call) are made by
//! `response::parse_chat_response` on what this reads, in the order the walk made them.
//!
//! One visitor reads every field, handed a [`Slot`] to fill in place: serde_json's
//! `deserialize_any` is instantiated once for it, where a visitor type per field cost the
//! dispatcher's Wasm 14 KB more (and returning each field by value, ~20 % more time). The
//! owner of a slot resets it before a value is read into it, so a repeated key's last
//! value wins and a value of another sort than the slot's leaves it absent or empty.

use serde::Deserialize;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value as Json;
use std::fmt;

/// Where a value goes; a value of another sort than the slot's is read through and
/// leaves it as its owner reset it.
enum Slot<'a> {
    Nothing,
    Text(&'a mut Option<String>),
    /// A non-negative integer, as `Value::as_u64` takes one.
    Count(&'a mut Option<u64>),
    Answer(&'a mut Answer),
    /// An array: its first element, as a choice.
    Choices(&'a mut Option<Choice>),
    Choice(&'a mut Choice),
    Message(&'a mut AnswerMessage),
    /// An array: each element, as a call.
    Calls(&'a mut Vec<Call>),
    Call(&'a mut Call),
    Function(&'a mut Function),
    Counts(&'a mut Counts),
}

/// Reads the next value of `map` into `slot`.
fn value<'de, A: MapAccess<'de>>(map: &mut A, slot: Slot) -> Result<(), A::Error> {
    map.next_value_seed(slot)
}

impl<'de> DeserializeSeed<'de> for Slot<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Slot<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E: de::Error>(self, n: i64) -> Result<(), E> {
        // A tree holds a non-negative i64 as an unsigned number.
        match u64::try_from(n) {
            Ok(n) => self.visit_u64(n),
            Err(_) => Ok(()),
        }
    }
    fn visit_u64<E: de::Error>(self, n: u64) -> Result<(), E> {
        if let Slot::Count(count) = self {
            *count = Some(n);
        }
        Ok(())
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E: de::Error>(self, text: &str) -> Result<(), E> {
        if let Slot::Text(slot) = self {
            *slot = Some(text.to_owned());
        }
        Ok(())
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_none<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        match self {
            Slot::Choices(slot) => {
                // There is a first choice, whatever its sort, when the array is not empty.
                let first = slot.insert(Choice::default());
                if seq.next_element_seed(Slot::Choice(first))?.is_none() {
                    *slot = None;
                }
            }
            Slot::Calls(calls) => loop {
                calls.push(Call::default());
                let Some(call) = calls.last_mut() else { break };
                if seq.next_element_seed(Slot::Call(call))?.is_none() {
                    calls.pop();
                    break;
                }
            },
            _ => {}
        }
        while seq.next_element_seed(Slot::Nothing)?.is_some() {}
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        match self {
            Slot::Answer(answer) => read_answer(&mut map, answer),
            Slot::Choice(choice) => read_choice(&mut map, choice),
            Slot::Message(message) => read_message(&mut map, message),
            Slot::Call(call) => read_call(&mut map, call),
            Slot::Function(function) => read_function(&mut map, function),
            Slot::Counts(counts) => read_counts(&mut map, counts),
            _ => {
                while map.next_key_seed(Slot::Nothing)?.is_some() {
                    value(&mut map, Slot::Nothing)?;
                }
                Ok(())
            }
        }
    }
}

/// The whole answer as `serde_json::from_slice` reads it (any other value than an object
/// is an answer without choices).
pub(crate) struct Whole(pub Answer);

impl<'de> Deserialize<'de> for Whole {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let mut answer = Answer::default();
        Slot::Answer(&mut answer).deserialize(deserializer)?;
        Ok(Whole(answer))
    }
}

/// The keys read; the derive matches them without allocating.
#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "snake_case")]
enum AnswerKey {
    Error,
    Choices,
    Usage,
    Model,
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "snake_case")]
enum ChoiceKey {
    Message,
    FinishReason,
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "snake_case")]
enum MessageKey {
    Content,
    ToolCalls,
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "snake_case")]
enum CallKey {
    Id,
    Function,
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "snake_case")]
enum FunctionKey {
    Name,
    Arguments,
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "snake_case")]
enum UsageKey {
    PromptTokens,
    CompletionTokens,
    #[serde(other)]
    Other,
}

/// The whole answer.
#[derive(Default)]
pub(crate) struct Answer {
    /// `error` when it is there and not null (kept as a tree: it is quoted whole).
    pub error: Option<Json>,
    /// The first element of `choices`, when that is a non-empty array.
    pub choice: Option<Choice>,
    pub usage: Counts,
    pub model: Option<String>,
}

fn read_answer<'de, A: MapAccess<'de>>(map: &mut A, answer: &mut Answer) -> Result<(), A::Error> {
    while let Some(key) = map.next_key::<AnswerKey>()? {
        match key {
            AnswerKey::Error => {
                answer.error = Some(map.next_value::<Json>()?).filter(|e| !e.is_null());
            }
            AnswerKey::Choices => {
                answer.choice = None;
                value(map, Slot::Choices(&mut answer.choice))?;
            }
            AnswerKey::Usage => {
                answer.usage = Counts::default();
                value(map, Slot::Counts(&mut answer.usage))?;
            }
            AnswerKey::Model => {
                answer.model = None;
                value(map, Slot::Text(&mut answer.model))?;
            }
            AnswerKey::Other => value(map, Slot::Nothing)?,
        }
    }
    Ok(())
}

#[derive(Default)]
pub(crate) struct Choice {
    /// Present whatever its sort (a null message is an empty one, as the walk had it).
    pub message: Option<AnswerMessage>,
    pub finish_reason: Option<String>,
}

fn read_choice<'de, A: MapAccess<'de>>(map: &mut A, choice: &mut Choice) -> Result<(), A::Error> {
    while let Some(key) = map.next_key::<ChoiceKey>()? {
        match key {
            ChoiceKey::Message => {
                let message = choice.message.insert(AnswerMessage::default());
                value(map, Slot::Message(message))?;
            }
            ChoiceKey::FinishReason => {
                choice.finish_reason = None;
                value(map, Slot::Text(&mut choice.finish_reason))?;
            }
            ChoiceKey::Other => value(map, Slot::Nothing)?,
        }
    }
    Ok(())
}

#[derive(Default)]
pub(crate) struct AnswerMessage {
    pub content: Option<String>,
    /// `tool_calls` when it is an array, in order.
    pub tool_calls: Vec<Call>,
}

fn read_message<'de, A: MapAccess<'de>>(
    map: &mut A,
    message: &mut AnswerMessage,
) -> Result<(), A::Error> {
    while let Some(key) = map.next_key::<MessageKey>()? {
        match key {
            MessageKey::Content => {
                message.content = None;
                value(map, Slot::Text(&mut message.content))?;
            }
            MessageKey::ToolCalls => {
                message.tool_calls.clear();
                value(map, Slot::Calls(&mut message.tool_calls))?;
            }
            MessageKey::Other => value(map, Slot::Nothing)?,
        }
    }
    Ok(())
}

/// One element of `tool_calls`, as it came: `response` checks it.
#[derive(Default)]
pub(crate) struct Call {
    pub id: Option<String>,
    /// Present whatever its sort.
    pub function: Option<Function>,
}

fn read_call<'de, A: MapAccess<'de>>(map: &mut A, call: &mut Call) -> Result<(), A::Error> {
    while let Some(key) = map.next_key::<CallKey>()? {
        match key {
            CallKey::Id => {
                call.id = None;
                value(map, Slot::Text(&mut call.id))?;
            }
            CallKey::Function => {
                let function = call.function.insert(Function::default());
                value(map, Slot::Function(function))?;
            }
            CallKey::Other => value(map, Slot::Nothing)?,
        }
    }
    Ok(())
}

#[derive(Default)]
pub(crate) struct Function {
    pub name: Option<String>,
    /// As it came (`Null` when absent): JSON text in a string, or (some local servers) an
    /// object, which is sent on as its compact text.
    pub arguments: Json,
}

fn read_function<'de, A: MapAccess<'de>>(
    map: &mut A,
    function: &mut Function,
) -> Result<(), A::Error> {
    while let Some(key) = map.next_key::<FunctionKey>()? {
        match key {
            FunctionKey::Name => {
                function.name = None;
                value(map, Slot::Text(&mut function.name))?;
            }
            FunctionKey::Arguments => function.arguments = map.next_value()?,
            FunctionKey::Other => value(map, Slot::Nothing)?,
        }
    }
    Ok(())
}

/// `usage`'s two counts, each when it is a non-negative integer.
#[derive(Default)]
pub(crate) struct Counts {
    pub prompt: Option<u64>,
    pub completion: Option<u64>,
}

fn read_counts<'de, A: MapAccess<'de>>(map: &mut A, counts: &mut Counts) -> Result<(), A::Error> {
    while let Some(key) = map.next_key::<UsageKey>()? {
        match key {
            UsageKey::PromptTokens => {
                counts.prompt = None;
                value(map, Slot::Count(&mut counts.prompt))?;
            }
            UsageKey::CompletionTokens => {
                counts.completion = None;
                value(map, Slot::Count(&mut counts.completion))?;
            }
            UsageKey::Other => value(map, Slot::Nothing)?,
        }
    }
    Ok(())
}
