//! A successful Query API answer (`data.fields`, `data.values`, `counters`, `bookmarks`,
//! `profiledQueryPlan`, notifications) read straight into a [`QueryResult`], its rows
//! through `value_de.rs`, without the `serde_json::Value` tree `parse_body` builds.
//!
//! This reading is strict where the tree reading is lenient: anything it does not expect
//! (a field of another type, a repeated key, an `errors` list, a body that is not one JSON
//! object) makes it give up, and `client.rs` reads the answer the old way. So it returns
//! `Some` only where the result is the one the tree reading gives.

use crate::client::{Counters, QueryResult};
use crate::value::Value;
use crate::value_de::ValueSeed;
use serde::Deserialize;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value as Json};
use std::fmt;

/// The answer in `body`, or `None` where only the tree reading can say what it is.
pub(crate) fn parse(body: &[u8], typed: bool) -> Option<QueryResult> {
    let mut de = serde_json::Deserializer::from_slice(body);
    let result = de.deserialize_map(Answer { typed }).ok()?;
    // Trailing bytes make the tree reading call the answer "not JSON".
    de.end().ok()?;
    Some(result)
}

fn gives_up<E: de::Error>() -> E {
    E::custom(crate::value_de::DIVERGES)
}

/// Sets `slot` once: a repeated key is left to the tree reading (its last value wins).
fn once<T, E: de::Error>(slot: &mut Option<T>, value: T) -> Result<(), E> {
    if slot.replace(value).is_some() {
        return Err(gives_up());
    }
    Ok(())
}

struct Answer {
    typed: bool,
}

impl<'de> Visitor<'de> for Answer {
    type Value = QueryResult;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a Query API answer")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<QueryResult, A::Error> {
        let mut data: Option<(Vec<String>, Vec<Vec<Value>>)> = None;
        let mut counters: Option<Option<Counters>> = None;
        let mut bookmarks: Option<Option<Vec<String>>> = None;
        let mut profile: Option<Json> = None;
        let mut errors: Option<Json> = None;
        // `notifications` and `gqlStatusObjects`, as `notifications::parse` reads them.
        let mut notes = Map::new();
        while let Some(key) = map.next_key::<AnswerKey>()? {
            match key {
                AnswerKey::Data => once(&mut data, map.next_value_seed(Data(self.typed))?)?,
                AnswerKey::Counters => once(&mut counters, map.next_value()?)?,
                AnswerKey::Bookmarks => once(&mut bookmarks, map.next_value()?)?,
                AnswerKey::Profile => once(&mut profile, map.next_value()?)?,
                AnswerKey::Errors => once(&mut errors, map.next_value()?)?,
                AnswerKey::Note(name) => {
                    if notes.insert(name.into(), map.next_value()?).is_some() {
                        return Err(gives_up());
                    }
                }
                AnswerKey::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        // An error in the body is `parse_body`'s to report.
        if errors
            .as_ref()
            .and_then(Json::as_array)
            .is_some_and(|e| !e.is_empty())
        {
            return Err(gives_up());
        }
        let (fields, rows) = data.unwrap_or_default();
        Ok(QueryResult {
            fields,
            rows,
            counters: counters.flatten(),
            bookmarks: bookmarks.flatten().unwrap_or_default(),
            profile: profile.filter(Json::is_object),
            notifications: if notes.is_empty() {
                Vec::new()
            } else {
                crate::notifications::parse(&Json::Object(notes))
            },
        })
    }
}

enum AnswerKey {
    Data,
    Counters,
    Bookmarks,
    Profile,
    Errors,
    Note(&'static str),
    Other,
}

impl<'de> Deserialize<'de> for AnswerKey {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl Visitor<'_> for KeyVisitor {
            type Value = AnswerKey;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a key")
            }
            fn visit_str<E>(self, s: &str) -> Result<AnswerKey, E> {
                Ok(match s {
                    "data" => AnswerKey::Data,
                    "counters" => AnswerKey::Counters,
                    "bookmarks" => AnswerKey::Bookmarks,
                    "profiledQueryPlan" => AnswerKey::Profile,
                    "errors" => AnswerKey::Errors,
                    "notifications" => AnswerKey::Note("notifications"),
                    "gqlStatusObjects" => AnswerKey::Note("gqlStatusObjects"),
                    _ => AnswerKey::Other,
                })
            }
        }
        d.deserialize_str(KeyVisitor)
    }
}

/// `data`: its `fields` and `values` (none for `null`).
struct Data(bool);

impl<'de> DeserializeSeed<'de> for Data {
    type Value = (Vec<String>, Vec<Vec<Value>>);

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Data {
    type Value = (Vec<String>, Vec<Vec<Value>>);

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("the answer's data")
    }

    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(Default::default())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut fields: Option<Option<Vec<String>>> = None;
        let mut rows: Option<Vec<Vec<Value>>> = None;
        while let Some(key) = map.next_key::<DataKey>()? {
            match key {
                DataKey::Fields => once(&mut fields, map.next_value()?)?,
                DataKey::Values => once(&mut rows, map.next_value_seed(Rows(self.0))?)?,
                DataKey::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok((
            fields.flatten().unwrap_or_default(),
            rows.unwrap_or_default(),
        ))
    }
}

enum DataKey {
    Fields,
    Values,
    Other,
}

impl<'de> Deserialize<'de> for DataKey {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl Visitor<'_> for KeyVisitor {
            type Value = DataKey;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a key")
            }
            fn visit_str<E>(self, s: &str) -> Result<DataKey, E> {
                Ok(match s {
                    "fields" => DataKey::Fields,
                    "values" => DataKey::Values,
                    _ => DataKey::Other,
                })
            }
        }
        d.deserialize_str(KeyVisitor)
    }
}

/// `data.values`: rows of values (none for `null`).
struct Rows(bool);

impl<'de> DeserializeSeed<'de> for Rows {
    type Value = Vec<Vec<Value>>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Rows {
    type Value = Vec<Vec<Value>>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("rows")
    }

    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(Vec::new())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut rows = Vec::new();
        while let Some(row) = seq.next_element_seed(Row(self.0))? {
            rows.push(row);
        }
        Ok(rows)
    }
}

/// One row: an array of values.
struct Row(bool);

impl<'de> DeserializeSeed<'de> for Row {
    type Value = Vec<Value>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Row {
    type Value = Vec<Value>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a row")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut values = Vec::new();
        while let Some(value) = seq.next_element_seed(ValueSeed { typed: self.0 })? {
            values.push(value);
        }
        Ok(values)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::HttpResponse;

    fn tree(body: &str, typed: bool) -> QueryResult {
        let content_type = if typed {
            "application/vnd.neo4j.query"
        } else {
            "application/json"
        };
        crate::client::parse_result_via_tree(&HttpResponse {
            status: 200,
            headers: vec![("content-type".into(), content_type.into())],
            body: body.as_bytes().to_vec(),
        })
        .expect("a successful answer")
    }

    fn golden(name: &str) -> String {
        let path = format!("{}/tests/golden/{name}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read_to_string(path).expect("a golden answer")
    }

    /// The answers a server sends are read in one pass (the equivalence test in
    /// `tests/parse_equivalence.rs` passes too if everything falls back).
    #[test]
    fn well_formed_answers_are_read_in_one_pass_as_the_tree_reads_them() {
        let reordered = r#"{"bookmarks": ["FB:1"], "data": {"values": [[
            {"_value": "7", "$type": "Integer"},
            {"_value": {"_properties": {"n": {"_value": "x", "$type": "String"}},
                        "_labels": ["A", 1], "_element_id": "4:a:1"}, "$type": "Node"},
            {"$type": "List", "extra": 1, "_value": [1, {"$type": "Float", "_value": "NaN"}]},
            {"$type": 5, "_value": 1},
            {"$type": "Vector", "_value": {"dims": 3}}
        ]], "fields": ["a", "b", "c", "d", "e"]}, "counters": {"nodesCreated": 1},
        "notifications": [{"code": "Neo.ClientNotification.Statement.CartesianProduct",
                           "category": "PERFORMANCE"}]}"#;
        for (body, typed) in [
            (golden("run_typed.json"), true),
            (golden("run_plain.json"), false),
            (reordered.to_string(), true),
        ] {
            let one_pass = parse(body.as_bytes(), typed).expect("read in one pass");
            assert_eq!(format!("{one_pass:?}"), format!("{:?}", tree(&body, typed)));
        }
    }

    #[test]
    fn what_only_the_tree_reading_knows_is_left_to_it() {
        for body in [
            r#"{"errors": [{"code": "Neo.ClientError.Statement.SyntaxError"}]}"#,
            r#"{"data": null, "data": {"fields": ["a"]}}"#,
            r#"{"data": {"fields": ["a", 1]}}"#,
            r#"{"data": {"values": [[{"$type": "String", "_value": "a", "$type": "Integer"}]]}}"#,
            r#"{"data": {}} trailing"#,
            "[]",
            "",
        ] {
            assert!(parse(body.as_bytes(), true).is_none(), "{body}");
        }
    }
}
