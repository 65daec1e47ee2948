//! The one-pass reading of an answer (`parse_run_response`) gives exactly what the reading
//! through a `serde_json::Value` tree (`parse_result_via_tree`) gives: same rows, counters,
//! bookmarks, plan and notifications, same errors, for typed and plain JSON, keys in any
//! order, odd and wrong shapes included.

use neo4j_client::{HttpResponse, parse_result_via_tree, parse_run_response};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

/// JSON with its keys in a chosen order (and possibly repeated), which `serde_json::Value`
/// (a sorted map) cannot express.
#[derive(Debug, Clone)]
enum J {
    Null,
    Bool(bool),
    Int(i64),
    UInt(u64),
    Float(f64),
    Str(String),
    Arr(Vec<J>),
    Obj(Vec<(String, J)>),
}

impl J {
    fn write(&self, out: &mut String) {
        match self {
            J::Null => out.push_str("null"),
            J::Bool(b) => out.push_str(&b.to_string()),
            J::Int(i) => out.push_str(&i.to_string()),
            J::UInt(u) => out.push_str(&u.to_string()),
            // `{:?}` keeps a `.0` (a float, not an integer) and uses exponents for large ones.
            J::Float(f) => out.push_str(&format!("{f:?}")),
            J::Str(s) => out.push_str(&serde_json::to_string(s).unwrap()),
            J::Arr(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    item.write(out);
                }
                out.push(']');
            }
            J::Obj(entries) => {
                out.push('{');
                for (i, (k, v)) in entries.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(&serde_json::to_string(k).unwrap());
                    out.push(':');
                    v.write(out);
                }
                out.push('}');
            }
        }
    }

    fn text(&self) -> String {
        let mut out = String::new();
        self.write(&mut out);
        out
    }
}

fn s(text: &str) -> J {
    J::Str(text.into())
}

/// An object with its entries in a random order.
fn shuffled(entries: Vec<(String, J)>) -> impl Strategy<Value = J> {
    Just(entries).prop_shuffle().prop_map(J::Obj)
}

fn short_text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z]{0,6}",
        Just("é\"\\\n".to_string()),
        Just("AQID".to_string()),
    ]
}

fn scalar() -> impl Strategy<Value = J> {
    prop_oneof![
        Just(J::Null),
        any::<bool>().prop_map(J::Bool),
        any::<i64>().prop_map(J::Int),
        (i64::MAX as u64..=u64::MAX).prop_map(J::UInt),
        prop_oneof![
            any::<f64>().prop_filter("finite", |f| f.is_finite()),
            Just(1.0),
            Just(-0.0)
        ]
        .prop_map(J::Float),
        short_text().prop_map(J::Str),
    ]
}

/// The `_value` text of a typed scalar: right and wrong for its type.
fn scalar_raw() -> impl Strategy<Value = J> {
    prop_oneof![
        any::<i64>().prop_map(|i| J::Str(i.to_string())),
        any::<f64>().prop_map(|f| J::Str(f.to_string())),
        prop_oneof![
            Just("NaN"),
            Just("Infinity"),
            Just("-Infinity"),
            Just("1e400"),
            Just("x")
        ]
        .prop_map(s),
        Just(s("AQID")),
        Just(s("not base64!")),
        Just(s("2024-01-02")),
        Just(s("SRID=4326;POINT (1.2 3.4)")),
        scalar(),
    ]
}

const SCALAR_TYPES: &[&str] = &[
    "Null",
    "Boolean",
    "Integer",
    "Float",
    "String",
    "Base64",
    "Date",
    "Time",
    "LocalTime",
    "DateTime",
    "OffsetDateTime",
    "ZonedDateTime",
    "LocalDateTime",
    "Duration",
    "Point",
    "Vector",
    "Unheard",
];

/// A typed wrapper `{"$type": …, "_value": …}` with the keys in either order, sometimes an
/// extra key, a missing or repeated one, or a `$type` that is not a string.
fn wrapper(
    type_name: impl Strategy<Value = J>,
    value: impl Strategy<Value = J>,
) -> impl Strategy<Value = J> {
    (type_name, value, 0..40u8).prop_flat_map(|(t, v, odd)| {
        let mut entries = vec![
            ("$type".to_string(), t.clone()),
            ("_value".to_string(), v.clone()),
        ];
        match odd {
            0 => entries.push(("extra".into(), J::Int(1))),
            1 => {
                entries.pop();
            }
            2 => {
                entries.remove(0);
            }
            3 => entries.push(("$type".into(), s("String"))),
            4 => entries.push(("_value".into(), v)),
            5 => entries[0].1 = J::Int(7),
            6 => entries.push(("elementId".into(), s("4:x:1"))),
            _ => {}
        }
        shuffled(entries)
    })
}

/// A graph element's `_value` with some fields missing, of the wrong type, or extra.
fn element_value(inner: BoxedStrategy<J>) -> impl Strategy<Value = J> {
    let text = prop_oneof![4 => short_text().prop_map(J::Str), 1 => scalar()];
    let labels = prop_oneof![
        4 => prop::collection::vec(prop_oneof![4 => short_text().prop_map(J::Str), 1 => scalar()], 0..3).prop_map(J::Arr),
        1 => scalar(),
    ];
    let properties = prop_oneof![
        4 => prop::collection::vec(("[a-c]{1}", inner.clone()), 0..3).prop_map(J::Obj),
        1 => inner,
    ];
    (
        text.clone(),
        text.clone(),
        text.clone(),
        text,
        labels,
        properties,
        prop::collection::vec(any::<bool>(), 7),
    )
        .prop_flat_map(|(id, start, end, ty, labels, properties, keep)| {
            let all = [
                ("_element_id", id),
                ("_start_node_element_id", start),
                ("_end_node_element_id", end),
                ("_type", ty),
                ("_labels", labels),
                ("_properties", properties),
                ("other", J::Null),
            ];
            let entries = all
                .into_iter()
                .zip(keep)
                .filter(|(_, k)| *k)
                .map(|((k, v), _)| (k.to_string(), v))
                .collect();
            shuffled(entries)
        })
}

/// A plain-JSON node or relationship (documented keys), sometimes with a wrong field.
fn plain_element(inner: BoxedStrategy<J>) -> impl Strategy<Value = J> {
    let properties = prop_oneof![
        4 => prop::collection::vec(("[a-c]{1}", inner.clone()), 0..3).prop_map(J::Obj),
        1 => inner,
    ];
    (
        any::<bool>(),
        short_text(),
        properties,
        prop::collection::vec(any::<bool>(), 6),
    )
        .prop_flat_map(|(node, id, properties, keep)| {
            let mut entries = vec![("elementId".to_string(), J::Str(id))];
            if node {
                entries.push(("labels".into(), J::Arr(vec![s("A"), J::Int(1)])));
            } else {
                entries.push(("startNodeElementId".into(), s("4:x:1")));
                entries.push(("endNodeElementId".into(), s("4:x:2")));
                entries.push(("type".into(), s("R")));
            }
            entries.push(("properties".into(), properties));
            entries.push(("x".into(), J::Bool(true)));
            // Drop some keys now and then (then it is a map).
            let entries = entries
                .into_iter()
                .zip(keep.into_iter().map(|k| k || node))
                .filter(|(_, k)| *k)
                .map(|(e, _)| e)
                .collect();
            shuffled(entries)
        })
}

/// A row value: typed wrappers of every kind, plain values and graph elements, nested.
fn value() -> impl Strategy<Value = J> {
    let leaf = prop_oneof![
        3 => wrapper(prop::sample::select(SCALAR_TYPES).prop_map(s), scalar_raw()),
        1 => scalar(),
    ];
    leaf.prop_recursive(4, 48, 4, |inner| {
        let inner = inner.boxed();
        let list = prop::collection::vec(inner.clone(), 0..4).prop_map(J::Arr);
        let map = prop::collection::vec(("[a-c$_]{1,2}", inner.clone()), 0..4).prop_map(J::Obj);
        let node = wrapper(Just(s("Node")), element_value(inner.clone())).boxed();
        let rel = wrapper(Just(s("Relationship")), element_value(inner.clone())).boxed();
        let path_items =
            prop::collection::vec(prop_oneof![node.clone(), rel.clone(), inner.clone()], 0..5);
        prop_oneof![
            wrapper(prop_oneof![Just(s("List")), Just(s("Path"))], list.clone()),
            wrapper(Just(s("Map")), map.clone()),
            wrapper(
                prop::sample::select(&["List", "Map", "Path", "Node", "Relationship"][..])
                    .prop_map(s),
                inner.clone(),
            ),
            node,
            rel,
            wrapper(Just(s("Path")), path_items.prop_map(J::Arr)),
            list,
            map,
            plain_element(inner.clone()),
            // A plain path: node, relationship, node.
            (
                plain_element(inner.clone()),
                plain_element(inner.clone()),
                plain_element(inner)
            )
                .prop_map(|(a, b, c)| J::Arr(vec![a, b, c])),
        ]
    })
}

fn notification() -> impl Strategy<Value = J> {
    prop_oneof![
        Just(J::Obj(vec![
            (
                "code".into(),
                s("Neo.ClientNotification.Statement.CartesianProduct")
            ),
            ("severity".into(), s("INFORMATION")),
            ("category".into(), s("PERFORMANCE")),
            (
                "position".into(),
                J::Obj(vec![
                    ("offset".into(), J::Int(0)),
                    ("line".into(), J::Int(1))
                ])
            ),
        ])),
        Just(J::Obj(vec![
            ("gqlStatus".into(), s("01N00")),
            ("statusDescription".into(), s("warn: x. y")),
            ("classification".into(), s("DEPRECATION")),
        ])),
        scalar(),
    ]
}

/// A whole answer: the documented keys in any order, some missing, wrong or repeated,
/// an `errors` list now and then.
fn body() -> impl Strategy<Value = String> {
    let fields = prop_oneof![
        12 => prop::collection::vec("[a-z]{1,3}".prop_map(J::Str), 0..4).prop_map(J::Arr),
        1 => Just(J::Arr(vec![s("a"), J::Int(1)])),
        1 => scalar(),
    ];
    let rows = prop_oneof![
        16 => prop::collection::vec(prop::collection::vec(value(), 0..4).prop_map(J::Arr), 0..4).prop_map(J::Arr),
        1 => Just(J::Arr(vec![J::Int(1)])),
        1 => scalar(),
    ];
    let data = (fields, rows, any::<u8>()).prop_flat_map(|(f, r, odd)| {
        let mut entries = vec![("fields".to_string(), f), ("values".to_string(), r)];
        match odd % 32 {
            0 => entries.push(("fields".into(), J::Arr(vec![]))),
            1 => entries.push(("other".into(), J::Int(1))),
            2 => entries.clear(),
            _ => {}
        }
        shuffled(entries)
    });
    let counters = prop_oneof![
        6 => Just(J::Obj(vec![
            ("containsUpdates".into(), J::Bool(true)),
            ("nodesCreated".into(), J::Int(2))
        ])),
        1 => Just(J::Obj(vec![("nodesCreated".into(), J::Int(-1))])),
        1 => Just(J::Obj(vec![
            ("nodesCreated".into(), J::Int(1)),
            ("nodesCreated".into(), J::Int(2))
        ])),
        1 => scalar(),
    ];
    let bookmarks = prop_oneof![
        6 => Just(J::Arr(vec![s("FB:kc")])),
        1 => Just(J::Arr(vec![s("FB:kc"), J::Int(1)])),
        1 => scalar(),
    ];
    let plan = prop_oneof![
        Just(J::Obj(vec![(
            "operatorType".into(),
            s("ProduceResults@neo4j")
        )])),
        scalar()
    ];
    let errors = prop_oneof![
        4 => Just(J::Arr(vec![])),
        1 => Just(J::Arr(vec![J::Obj(vec![
            ("code".into(), s("Neo.ClientError.Statement.SyntaxError")),
            ("message".into(), s("bad")),
        ])])),
        1 => Just(J::Arr(vec![J::Int(1)])),
    ];
    (
        data,
        counters,
        bookmarks,
        plan,
        prop::collection::vec(notification(), 0..3),
        errors,
        prop::collection::vec(any::<bool>(), 8),
        0..30u8,
    )
        .prop_flat_map(
            |(data, counters, bookmarks, plan, notes, errors, keep, odd)| {
                let all = [
                    ("data", data),
                    ("counters", counters),
                    ("bookmarks", bookmarks),
                    ("profiledQueryPlan", plan),
                    ("notifications", J::Arr(notes.clone())),
                    ("gqlStatusObjects", J::Arr(notes)),
                    ("errors", errors),
                    ("unknown", J::Obj(vec![])),
                ];
                // The data is nearly always there; the rest comes and goes.
                let mut entries: Vec<(String, J)> = all
                    .into_iter()
                    .zip(keep)
                    .enumerate()
                    .filter(|(i, (_, k))| *k || *i == 0)
                    .map(|(_, ((k, v), _))| (k.to_string(), v))
                    .collect();
                if odd == 0 {
                    entries.push(("bookmarks".into(), J::Arr(vec![])));
                }
                (shuffled(entries), Just(odd))
            },
        )
        .prop_map(|(answer, odd)| match odd {
            1 => format!("{} x", answer.text()),
            2 => format!("[{}]", answer.text()),
            3 => String::new(),
            _ => answer.text(),
        })
}

fn response(status: u16, typed: bool, body: String) -> HttpResponse {
    let content_type = if typed {
        "application/vnd.neo4j.query; charset=utf-8"
    } else {
        "application/json"
    };
    HttpResponse {
        status,
        headers: vec![("content-type".into(), content_type.into())],
        body: body.into_bytes(),
    }
}

/// Compared through `Debug`: a NaN float is equal to itself there.
fn same(response: &HttpResponse) -> Result<(), TestCaseError> {
    let one_pass = format!("{:?}", parse_run_response(response));
    let tree = format!("{:?}", parse_result_via_tree(response));
    prop_assert_eq!(
        one_pass,
        tree,
        "body: {}",
        String::from_utf8_lossy(&response.body)
    );
    Ok(())
}

/// Run on a thread with a large stack: building the recursive strategies' value trees
/// takes more than a test thread's default 2 MiB.
#[test]
fn one_pass_reading_equals_the_tree_reading() {
    let run = || {
        let status = prop_oneof![8 => Just(200u16), 4 => Just(202), 1 => Just(400), 1 => Just(404), 1 => Just(503)];
        let mut runner = TestRunner::new(Config::with_cases(2000));
        if let Err(e) = runner.run(&(body(), any::<bool>(), status), |(body, typed, status)| {
            same(&response(status, typed, body))
        }) {
            panic!("{e}");
        }
    };
    std::thread::Builder::new()
        .stack_size(64 << 20)
        .spawn(run)
        .unwrap()
        .join()
        .unwrap();
}

#[test]
fn the_golden_answers_read_the_same_both_ways() {
    for name in [
        "run_typed.json",
        "run_plain.json",
        "begin.json",
        "error_syntax.json",
    ] {
        let body = std::fs::read_to_string(format!(
            "{}/tests/golden/{name}",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap();
        for typed in [true, false] {
            let r = response(202, typed, body.clone());
            assert_eq!(
                format!("{:?}", parse_run_response(&r)),
                format!("{:?}", parse_result_via_tree(&r)),
                "{name}"
            );
        }
    }
}
