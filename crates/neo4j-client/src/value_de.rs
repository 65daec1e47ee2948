//! Row values read straight from the answer's bytes into [`Value`], with the exact
//! semantics of [`decode_typed`](crate::decode_typed) and
//! [`decode_plain`](crate::decode_plain) but without first building a `serde_json::Value`
//! tree of the whole answer (maps of every `{"$type": …, "_value": …}` wrapper) and then
//! walking and dropping it: that tree was most of a query tool call's parsing time.
//!
//! Only what the tree reading needs to look at twice is buffered: a wrapper whose `_value`
//! comes before its `$type` (then the `_value` is read as JSON and decoded once the type is
//! known), the scalars (a string or number, read as JSON and then decoded as the tree
//! reading decodes them), and raw values kept in [`Value::Unknown`]. Where streaming could
//! differ from the tree reading (a duplicated `$type` or `_value`, a plain object whose
//! `properties` itself looks like a node), this fails with [`DIVERGES`] and the caller
//! reads the answer the old way (`client.rs`), so the result is the same in every case.

use crate::value::{
    Value, decode_plain, decode_typed_parts, decode_typed_scalar, is_path, split_path,
};
use serde::Deserialize;
use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value as Json};
use std::collections::BTreeMap;
use std::fmt;

/// The error that sends the caller back to the tree reading.
pub(crate) const DIVERGES: &str = "the streamed reading may differ here: read the tree";

fn diverges<E: de::Error>() -> E {
    E::custom(DIVERGES)
}

/// One value of a row: typed JSON (`application/vnd.neo4j.query`) or plain JSON.
#[derive(Clone, Copy)]
pub(crate) struct ValueSeed {
    pub typed: bool,
}

impl<'de> DeserializeSeed<'de> for ValueSeed {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(ValueVisitor { typed: self.typed })
    }
}

struct ValueVisitor {
    typed: bool,
}

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a Query API value")
    }

    // Scalars read as `decode_plain` reads the `serde_json::Value` these calls would build.
    fn visit_bool<E>(self, b: bool) -> Result<Value, E> {
        Ok(Value::Boolean(b))
    }

    fn visit_i64<E>(self, i: i64) -> Result<Value, E> {
        Ok(Value::Integer(i))
    }

    fn visit_u64<E>(self, u: u64) -> Result<Value, E> {
        // `Number::as_i64` fails above `i64::MAX`, then `as_f64` is taken.
        Ok(i64::try_from(u).map_or(Value::Float(u as f64), Value::Integer))
    }

    fn visit_f64<E>(self, f: f64) -> Result<Value, E> {
        // serde_json's tree turns a float that is not finite into `null`.
        Ok(if f.is_finite() {
            Value::Float(f)
        } else {
            Value::Null
        })
    }

    fn visit_str<E>(self, s: &str) -> Result<Value, E> {
        Ok(Value::String(s.to_owned()))
    }

    fn visit_string<E>(self, s: String) -> Result<Value, E> {
        Ok(Value::String(s))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }

    // An array is read plainly even in typed JSON: `decode_typed` falls back to
    // `decode_plain` for anything that is not a wrapper, items included.
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(item) = seq.next_element_seed(ValueSeed { typed: false })? {
            items.push(item);
        }
        Ok(if is_path(&items) {
            split_path(items)
        } else {
            Value::List(items)
        })
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Value, A::Error> {
        if self.typed {
            typed_object(map)
        } else {
            plain_object(map)
        }
    }
}

/// `_value` before its `$type` is kept as JSON; after it, it is decoded at once.
enum Pending {
    Decoded(Value),
    Raw(Json),
}

/// A typed-JSON object: a `{"$type", "_value"}` wrapper in any key order, or else (no
/// `$type` string, no `_value`) an object read plainly, as `decode_typed` does.
fn typed_object<'de, A: MapAccess<'de>>(mut map: A) -> Result<Value, A::Error> {
    let mut type_name: Option<TypeTag> = None;
    let mut value: Option<Pending> = None;
    // Other keys matter only when this turns out not to be a wrapper.
    let mut others = Map::new();
    while let Some(key) = map.next_key::<WrapperKey>()? {
        match key {
            WrapperKey::Type => {
                if type_name.is_some() {
                    return Err(diverges());
                }
                type_name = Some(map.next_value()?);
            }
            WrapperKey::Value => {
                if value.is_some() {
                    return Err(diverges());
                }
                value = Some(match type_name.as_ref().and_then(TypeTag::name) {
                    Some(t) => {
                        Pending::Decoded(map.next_value_seed(TypedValueSeed { type_name: t })?)
                    }
                    None => Pending::Raw(map.next_value()?),
                });
            }
            WrapperKey::Other(key) => {
                if matches!(value, Some(Pending::Decoded(_))) {
                    map.next_value::<IgnoredAny>()?;
                } else {
                    others.insert(key, map.next_value()?);
                }
            }
        }
    }
    match (type_name.as_ref().and_then(TypeTag::name), value) {
        (Some(_), Some(Pending::Decoded(v))) => Ok(v),
        (Some(t), Some(Pending::Raw(raw))) => Ok(decode_typed_parts(t, &raw)),
        (_, value) => {
            // Not a wrapper (a `Decoded` value needs a `$type` string, so it is not here).
            if let Some(t) = type_name {
                others.insert("$type".into(), t.into_json());
            }
            if let Some(Pending::Raw(raw)) = value {
                others.insert("_value".into(), raw);
            }
            Ok(decode_plain(&Json::Object(others)))
        }
    }
}

/// A plain-JSON object: a node or relationship when it has their documented keys, else a
/// map (`decode_plain`).
fn plain_object<'de, A: MapAccess<'de>>(mut map: A) -> Result<Value, A::Error> {
    let mut entries = BTreeMap::new();
    while let Some(key) = map.next_key::<String>()? {
        let value = map.next_value_seed(ValueSeed { typed: false })?;
        entries.insert(key, value);
    }
    let is_text = |k: &str| matches!(entries.get(k), Some(Value::String(_)));
    // A JSON array decodes to a list or (node, relationship, node…) a path.
    let labels_listed = matches!(
        entries.get("labels"),
        Some(Value::List(_) | Value::Path { .. })
    );
    if is_text("elementId") && labels_listed && entries.contains_key("properties") {
        let labels = match entries.remove("labels") {
            Some(Value::List(items)) => items
                .into_iter()
                .filter_map(|v| match v {
                    Value::String(s) => Some(s),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        };
        return Ok(Value::Node {
            element_id: take_text(&mut entries, "elementId"),
            labels,
            properties: plain_properties(entries.remove("properties"))?,
        });
    }
    if [
        "elementId",
        "startNodeElementId",
        "endNodeElementId",
        "type",
    ]
    .iter()
    .all(|k| is_text(k))
    {
        return Ok(Value::Relationship {
            element_id: take_text(&mut entries, "elementId"),
            start_node_element_id: take_text(&mut entries, "startNodeElementId"),
            end_node_element_id: take_text(&mut entries, "endNodeElementId"),
            rel_type: take_text(&mut entries, "type"),
            properties: plain_properties(entries.remove("properties"))?,
        });
    }
    Ok(Value::Map(entries))
}

fn take_text(entries: &mut BTreeMap<String, Value>, key: &str) -> String {
    match entries.remove(key) {
        Some(Value::String(s)) => s,
        _ => String::new(),
    }
}

/// A graph element's `properties`: an object's entries, else none. An object that itself
/// decoded as a node or relationship lost its other entries: the tree reading keeps them.
fn plain_properties<E: de::Error>(v: Option<Value>) -> Result<BTreeMap<String, Value>, E> {
    match v {
        Some(Value::Map(m)) => Ok(m),
        Some(Value::Node { .. } | Value::Relationship { .. }) => Err(diverges()),
        _ => Ok(BTreeMap::new()),
    }
}

/// The `$type` of a wrapper: one of the names `decode_typed` knows (no copy made), another
/// string, or something else, kept for the plain reading of the object.
enum TypeTag {
    Known(&'static str),
    Other(String),
    NotText(Json),
}

const KNOWN_TYPES: &[&str] = &[
    "Null",
    "Boolean",
    "Integer",
    "Float",
    "String",
    "Base64",
    "List",
    "Map",
    "Date",
    "Time",
    "LocalTime",
    "DateTime",
    "OffsetDateTime",
    "ZonedDateTime",
    "LocalDateTime",
    "Duration",
    "Point",
    "Node",
    "Relationship",
    "Path",
];

impl TypeTag {
    fn name(&self) -> Option<&str> {
        match self {
            TypeTag::Known(t) => Some(t),
            TypeTag::Other(t) => Some(t),
            TypeTag::NotText(_) => None,
        }
    }

    fn into_json(self) -> Json {
        match self {
            TypeTag::Known(t) => Json::String(t.to_string()),
            TypeTag::Other(t) => Json::String(t),
            TypeTag::NotText(json) => json,
        }
    }
}

impl<'de> Deserialize<'de> for TypeTag {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // A string is looked up without copying it; anything else is read as JSON.
        struct TagVisitor;
        impl<'de> Visitor<'de> for TagVisitor {
            type Value = TypeTag;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a type name")
            }
            fn visit_str<E>(self, s: &str) -> Result<TypeTag, E> {
                Ok(match KNOWN_TYPES.iter().find(|t| **t == s) {
                    Some(t) => TypeTag::Known(t),
                    None => TypeTag::Other(s.to_owned()),
                })
            }
            fn visit_bool<E>(self, b: bool) -> Result<TypeTag, E> {
                Ok(TypeTag::NotText(Json::Bool(b)))
            }
            fn visit_i64<E>(self, i: i64) -> Result<TypeTag, E> {
                Ok(TypeTag::NotText(Json::from(i)))
            }
            fn visit_u64<E>(self, u: u64) -> Result<TypeTag, E> {
                Ok(TypeTag::NotText(Json::from(u)))
            }
            fn visit_f64<E>(self, f: f64) -> Result<TypeTag, E> {
                Ok(TypeTag::NotText(json_f64(f)))
            }
            fn visit_unit<E>(self) -> Result<TypeTag, E> {
                Ok(TypeTag::NotText(Json::Null))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<TypeTag, A::Error> {
                Json::deserialize(SeqAccessDeserializer::new(seq)).map(TypeTag::NotText)
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<TypeTag, A::Error> {
                Json::deserialize(MapAccessDeserializer::new(map)).map(TypeTag::NotText)
            }
        }
        d.deserialize_any(TagVisitor)
    }
}

/// A float as serde_json's tree holds it (`null` when not finite).
fn json_f64(f: f64) -> Json {
    serde_json::Number::from_f64(f).map_or(Json::Null, Json::Number)
}

/// The keys of a typed wrapper.
enum WrapperKey {
    Type,
    Value,
    Other(String),
}

impl<'de> Deserialize<'de> for WrapperKey {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl Visitor<'_> for KeyVisitor {
            type Value = WrapperKey;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a key")
            }
            fn visit_str<E>(self, s: &str) -> Result<WrapperKey, E> {
                Ok(match s {
                    "$type" => WrapperKey::Type,
                    "_value" => WrapperKey::Value,
                    _ => WrapperKey::Other(s.to_owned()),
                })
            }
        }
        d.deserialize_str(KeyVisitor)
    }
}

/// The `_value` of a wrapper whose `$type` is known: containers are streamed, the rest
/// (scalars, and any type this client does not know) is read as JSON and decoded as
/// `decode_typed` does.
struct TypedValueSeed<'a> {
    type_name: &'a str,
}

impl<'de> DeserializeSeed<'de> for TypedValueSeed<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        match self.type_name {
            // Containers are streamed; numbers and booleans read without an allocation.
            "List" | "Path" | "Map" | "Node" | "Relationship" | "Integer" | "Float" | "Boolean" => {
                d.deserialize_any(self)
            }
            _ => Ok(decode_typed_scalar(self.type_name, Json::deserialize(d)?)),
        }
    }
}

impl TypedValueSeed<'_> {
    /// A container type with a `_value` of the wrong shape, kept raw.
    fn unknown<E>(&self, raw: Json) -> Result<Value, E> {
        Ok(Value::Unknown {
            type_name: self.type_name.to_string(),
            raw,
        })
    }
}

impl<'de> Visitor<'de> for TypedValueSeed<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "the value of a {}", self.type_name)
    }

    // Scalars as `decode_typed_parts` reads them for an `Integer` (a decimal string, else
    // a JSON integer within i64), a `Float` (a string `f64` parses, else any JSON number)
    // and a `Boolean`; any other scalar, or one of another type, is kept raw.
    fn visit_bool<E>(self, b: bool) -> Result<Value, E> {
        match self.type_name {
            "Boolean" => Ok(Value::Boolean(b)),
            _ => self.unknown(Json::Bool(b)),
        }
    }

    fn visit_i64<E>(self, i: i64) -> Result<Value, E> {
        match self.type_name {
            "Integer" => Ok(Value::Integer(i)),
            "Float" => Ok(Value::Float(i as f64)),
            _ => self.unknown(Json::from(i)),
        }
    }

    fn visit_u64<E>(self, u: u64) -> Result<Value, E> {
        match (self.type_name, i64::try_from(u)) {
            ("Integer", Ok(i)) => Ok(Value::Integer(i)),
            ("Float", _) => Ok(Value::Float(u as f64)),
            _ => self.unknown(Json::from(u)),
        }
    }

    fn visit_f64<E>(self, f: f64) -> Result<Value, E> {
        let raw = json_f64(f);
        match (self.type_name, &raw) {
            ("Float", Json::Number(_)) => Ok(Value::Float(f)),
            _ => self.unknown(raw),
        }
    }

    fn visit_str<E>(self, s: &str) -> Result<Value, E> {
        let parsed = match self.type_name {
            "Integer" => s.parse().ok().map(Value::Integer),
            "Float" => s.parse().ok().map(Value::Float),
            _ => None,
        };
        parsed.map_or_else(|| self.unknown(Json::String(s.to_owned())), Ok)
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        self.unknown(Json::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        if !matches!(self.type_name, "List" | "Path") {
            return self.unknown(Json::deserialize(SeqAccessDeserializer::new(seq))?);
        }
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(item) = seq.next_element_seed(ValueSeed { typed: true })? {
            items.push(item);
        }
        Ok(if self.type_name == "Path" {
            split_path(items)
        } else {
            Value::List(items)
        })
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        match self.type_name {
            "Map" => Ok(Value::Map(typed_entries(map)?)),
            "Node" | "Relationship" => {
                // Each field as `decode_typed` reads it: a string, else empty; the last
                // of a repeated key wins, as in a `serde_json` map.
                let mut text: [String; 4] = Default::default();
                let (mut labels, mut properties) = (Vec::new(), BTreeMap::new());
                while let Some(field) = map.next_key::<ElementField>()? {
                    match field {
                        ElementField::Text(i) => {
                            text[i] = map.next_value::<TextOrNone>()?.0.unwrap_or_default()
                        }
                        ElementField::Labels if self.type_name == "Node" => {
                            labels = map.next_value::<TextList>()?.0
                        }
                        ElementField::Properties => {
                            properties = map.next_value::<TypedProperties>()?.0
                        }
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                let [element_id, start, end, rel_type] = text;
                Ok(if self.type_name == "Node" {
                    Value::Node {
                        element_id,
                        labels,
                        properties,
                    }
                } else {
                    Value::Relationship {
                        element_id,
                        start_node_element_id: start,
                        end_node_element_id: end,
                        rel_type,
                        properties,
                    }
                })
            }
            _ => self.unknown(Json::deserialize(MapAccessDeserializer::new(map))?),
        }
    }
}

/// A typed map's entries (`Map`'s `_value`, a node's or relationship's `_properties`).
fn typed_entries<'de, A: MapAccess<'de>>(mut map: A) -> Result<BTreeMap<String, Value>, A::Error> {
    let mut entries = BTreeMap::new();
    while let Some(key) = map.next_key::<String>()? {
        let value = map.next_value_seed(ValueSeed { typed: true })?;
        entries.insert(key, value);
    }
    Ok(entries)
}

/// The keys of a typed node's or relationship's `_value`. A node reads only the element
/// id of the four texts; a relationship has no labels.
enum ElementField {
    /// 0 `_element_id`, 1 `_start_node_element_id`, 2 `_end_node_element_id`, 3 `_type`.
    Text(usize),
    Labels,
    Properties,
    Other,
}

impl<'de> Deserialize<'de> for ElementField {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct FieldVisitor;
        impl Visitor<'_> for FieldVisitor {
            type Value = ElementField;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a key")
            }
            fn visit_str<E>(self, s: &str) -> Result<ElementField, E> {
                Ok(match s {
                    "_element_id" => ElementField::Text(0),
                    "_start_node_element_id" => ElementField::Text(1),
                    "_end_node_element_id" => ElementField::Text(2),
                    "_type" => ElementField::Text(3),
                    "_labels" => ElementField::Labels,
                    "_properties" => ElementField::Properties,
                    _ => ElementField::Other,
                })
            }
        }
        d.deserialize_str(FieldVisitor)
    }
}

/// Skips the rest of an array or object a lenient reader has no use for.
fn skip_seq<'de, A: SeqAccess<'de>>(mut seq: A) -> Result<(), A::Error> {
    while seq.next_element::<IgnoredAny>()?.is_some() {}
    Ok(())
}

fn skip_map<'de, A: MapAccess<'de>>(mut map: A) -> Result<(), A::Error> {
    while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
    Ok(())
}

/// Implements the visits of a lenient reader that are not its one expected shape: any
/// other value is read (to stay in step) and gives `Default`.
macro_rules! otherwise_default {
    () => {
        fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
            Ok(Default::default())
        }
        fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
            Ok(Default::default())
        }
        fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
            Ok(Default::default())
        }
        fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
            Ok(Default::default())
        }
        fn visit_unit<E>(self) -> Result<Self::Value, E> {
            Ok(Default::default())
        }
    };
}

/// A string, or `None` for anything else (`Json::as_str`).
#[derive(Default)]
struct TextOrNone(Option<String>);

impl<'de> Deserialize<'de> for TextOrNone {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = TextOrNone;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("anything")
            }
            fn visit_str<E>(self, s: &str) -> Result<TextOrNone, E> {
                Ok(TextOrNone(Some(s.to_owned())))
            }
            fn visit_string<E>(self, s: String) -> Result<TextOrNone, E> {
                Ok(TextOrNone(Some(s)))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<TextOrNone, A::Error> {
                skip_seq(seq).map(|()| TextOrNone(None))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<TextOrNone, A::Error> {
                skip_map(map).map(|()| TextOrNone(None))
            }
            otherwise_default!();
        }
        d.deserialize_any(V)
    }
}

/// An array's strings (others skipped), or none for anything else (a node's `_labels`).
#[derive(Default)]
struct TextList(Vec<String>);

impl<'de> Deserialize<'de> for TextList {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = TextList;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("anything")
            }
            fn visit_str<E>(self, _: &str) -> Result<TextList, E> {
                Ok(TextList::default())
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<TextList, A::Error> {
                let mut texts = Vec::new();
                while let Some(item) = seq.next_element::<TextOrNone>()? {
                    texts.extend(item.0);
                }
                Ok(TextList(texts))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<TextList, A::Error> {
                skip_map(map).map(|()| TextList::default())
            }
            otherwise_default!();
        }
        d.deserialize_any(V)
    }
}

/// An object's entries as typed values, or none for anything else (`_properties`).
#[derive(Default)]
struct TypedProperties(BTreeMap<String, Value>);

impl<'de> Deserialize<'de> for TypedProperties {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = TypedProperties;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("anything")
            }
            fn visit_str<E>(self, _: &str) -> Result<TypedProperties, E> {
                Ok(TypedProperties::default())
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<TypedProperties, A::Error> {
                skip_seq(seq).map(|()| TypedProperties::default())
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<TypedProperties, A::Error> {
                typed_entries(map).map(TypedProperties)
            }
            otherwise_default!();
        }
        d.deserialize_any(V)
    }
}
