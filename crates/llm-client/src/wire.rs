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

use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value as Json;
use std::fmt;
use std::marker::PhantomData;

/// What a JSON value becomes when read leniently. Each kind of value a field does not
/// expect is read through (so the document is still checked) and gives `default()`.
pub(crate) trait Shape: Default {
    fn from_text(_text: &str) -> Self {
        Self::default()
    }
    fn from_u64(_n: u64) -> Self {
        Self::default()
    }
    fn from_map<'de, A: MapAccess<'de>>(mut map: A) -> Result<Self, A::Error> {
        while map.next_key::<Lenient<()>>()?.is_some() {
            map.next_value::<Lenient<()>>()?;
        }
        Ok(Self::default())
    }
    fn from_seq<'de, A: SeqAccess<'de>>(mut seq: A) -> Result<Self, A::Error> {
        while seq.next_element::<Lenient<()>>()?.is_some() {}
        Ok(Self::default())
    }
}

/// A value read as `T`'s [`Shape`]; `Lenient<()>` reads a value through and keeps nothing.
pub(crate) struct Lenient<T>(pub T);

impl<'de, T: Shape> Deserialize<'de> for Lenient<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer
            .deserialize_any(ShapeVisitor(PhantomData))
            .map(Lenient)
    }
}

struct ShapeVisitor<T>(PhantomData<T>);

impl<'de, T: Shape> Visitor<'de> for ShapeVisitor<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<T, E> {
        Ok(T::default())
    }
    fn visit_i64<E: de::Error>(self, n: i64) -> Result<T, E> {
        // A tree holds a non-negative i64 as an unsigned number.
        Ok(u64::try_from(n).map_or_else(|_| T::default(), T::from_u64))
    }
    fn visit_u64<E: de::Error>(self, n: u64) -> Result<T, E> {
        Ok(T::from_u64(n))
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<T, E> {
        Ok(T::default())
    }
    fn visit_str<E: de::Error>(self, text: &str) -> Result<T, E> {
        Ok(T::from_text(text))
    }
    fn visit_unit<E: de::Error>(self) -> Result<T, E> {
        Ok(T::default())
    }
    fn visit_none<E: de::Error>(self) -> Result<T, E> {
        Ok(T::default())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<T, A::Error> {
        T::from_seq(seq)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
        T::from_map(map)
    }
}

/// Reads through anything.
impl Shape for () {}

/// A string; anything else is absent.
impl Shape for Option<String> {
    fn from_text(text: &str) -> Self {
        Some(text.to_owned())
    }
}

/// A non-negative integer (as `Value::as_u64` takes it); anything else is absent.
impl Shape for Option<u64> {
    fn from_u64(n: u64) -> Self {
        Some(n)
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

impl Shape for Answer {
    fn from_map<'de, A: MapAccess<'de>>(mut map: A) -> Result<Self, A::Error> {
        let mut answer = Answer::default();
        while let Some(key) = map.next_key::<AnswerKey>()? {
            match key {
                AnswerKey::Error => {
                    answer.error = Some(map.next_value::<Json>()?).filter(|e| !e.is_null());
                }
                AnswerKey::Choices => answer.choice = map.next_value::<Lenient<First>>()?.0.0,
                AnswerKey::Usage => answer.usage = map.next_value::<Lenient<Counts>>()?.0,
                AnswerKey::Model => answer.model = map.next_value::<Lenient<_>>()?.0,
                AnswerKey::Other => map.next_value::<Lenient<()>>()?.0,
            }
        }
        Ok(answer)
    }
}

/// The first choice of `choices`; the others are read through.
#[derive(Default)]
struct First(Option<Choice>);

impl Shape for First {
    fn from_seq<'de, A: SeqAccess<'de>>(mut seq: A) -> Result<Self, A::Error> {
        let first = seq.next_element::<Lenient<Choice>>()?.map(|c| c.0);
        while seq.next_element::<Lenient<()>>()?.is_some() {}
        Ok(First(first))
    }
}

#[derive(Default)]
pub(crate) struct Choice {
    /// Present whatever its kind (a null message is an empty one, as the walk had it).
    pub message: Option<AnswerMessage>,
    pub finish_reason: Option<String>,
}

impl Shape for Choice {
    fn from_map<'de, A: MapAccess<'de>>(mut map: A) -> Result<Self, A::Error> {
        let mut choice = Choice::default();
        while let Some(key) = map.next_key::<ChoiceKey>()? {
            match key {
                ChoiceKey::Message => choice.message = Some(map.next_value::<Lenient<_>>()?.0),
                ChoiceKey::FinishReason => {
                    choice.finish_reason = map.next_value::<Lenient<_>>()?.0;
                }
                ChoiceKey::Other => map.next_value::<Lenient<()>>()?.0,
            }
        }
        Ok(choice)
    }
}

#[derive(Default)]
pub(crate) struct AnswerMessage {
    pub content: Option<String>,
    /// `tool_calls` when it is an array, in order.
    pub tool_calls: Vec<Call>,
}

impl Shape for AnswerMessage {
    fn from_map<'de, A: MapAccess<'de>>(mut map: A) -> Result<Self, A::Error> {
        let mut message = AnswerMessage::default();
        while let Some(key) = map.next_key::<MessageKey>()? {
            match key {
                MessageKey::Content => message.content = map.next_value::<Lenient<_>>()?.0,
                MessageKey::ToolCalls => message.tool_calls = map.next_value::<Lenient<_>>()?.0,
                MessageKey::Other => map.next_value::<Lenient<()>>()?.0,
            }
        }
        Ok(message)
    }
}

impl Shape for Vec<Call> {
    fn from_seq<'de, A: SeqAccess<'de>>(mut seq: A) -> Result<Self, A::Error> {
        let mut calls = Vec::with_capacity(seq.size_hint().unwrap_or(1));
        while let Some(call) = seq.next_element::<Lenient<Call>>()? {
            calls.push(call.0);
        }
        Ok(calls)
    }
}

/// One element of `tool_calls`, as it came: `response` checks it.
#[derive(Default)]
pub(crate) struct Call {
    pub id: Option<String>,
    /// Present whatever its kind.
    pub function: Option<Function>,
}

impl Shape for Call {
    fn from_map<'de, A: MapAccess<'de>>(mut map: A) -> Result<Self, A::Error> {
        let mut call = Call::default();
        while let Some(key) = map.next_key::<CallKey>()? {
            match key {
                CallKey::Id => call.id = map.next_value::<Lenient<_>>()?.0,
                CallKey::Function => call.function = Some(map.next_value::<Lenient<_>>()?.0),
                CallKey::Other => map.next_value::<Lenient<()>>()?.0,
            }
        }
        Ok(call)
    }
}

#[derive(Default)]
pub(crate) struct Function {
    pub name: Option<String>,
    /// As it came (`Null` when absent): JSON text in a string, or (some local servers) an
    /// object, which is sent on as its compact text.
    pub arguments: Json,
}

impl Shape for Function {
    fn from_map<'de, A: MapAccess<'de>>(mut map: A) -> Result<Self, A::Error> {
        let mut function = Function::default();
        while let Some(key) = map.next_key::<FunctionKey>()? {
            match key {
                FunctionKey::Name => function.name = map.next_value::<Lenient<_>>()?.0,
                FunctionKey::Arguments => function.arguments = map.next_value()?,
                FunctionKey::Other => map.next_value::<Lenient<()>>()?.0,
            }
        }
        Ok(function)
    }
}

/// `usage`'s two counts, each when it is a non-negative integer.
#[derive(Default)]
pub(crate) struct Counts {
    pub prompt: Option<u64>,
    pub completion: Option<u64>,
}

impl Shape for Counts {
    fn from_map<'de, A: MapAccess<'de>>(mut map: A) -> Result<Self, A::Error> {
        let mut counts = Counts::default();
        while let Some(key) = map.next_key::<UsageKey>()? {
            match key {
                UsageKey::PromptTokens => counts.prompt = map.next_value::<Lenient<_>>()?.0,
                UsageKey::CompletionTokens => {
                    counts.completion = map.next_value::<Lenient<_>>()?.0;
                }
                UsageKey::Other => map.next_value::<Lenient<()>>()?.0,
            }
        }
        Ok(counts)
    }
}
