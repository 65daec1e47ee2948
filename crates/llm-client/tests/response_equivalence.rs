//! The typed answer parser gives exactly what the `serde_json::Value` walk it replaced
//! (tests/oracle) gave, answer or error, for generated answers: with and without tool
//! calls, arguments as text or an object, null or odd-typed fields, unknown and repeated
//! keys, escaped keys, numbers a tree refuses, errors, and documents cut or corrupted.

mod oracle;

use llm_client::{LlmError, parse_chat_response};
use proptest::prelude::*;

/// A JSON document as written, so keys can repeat and tokens be anything.
#[derive(Debug, Clone)]
enum Doc {
    /// A token written as is.
    Raw(String),
    Arr(Vec<Doc>),
    /// Keys are written as is too (already quoted).
    Obj(Vec<(String, Doc)>),
}

impl Doc {
    fn write(&self, spaced: bool, out: &mut String) {
        let comma = if spaced { ",\n " } else { "," };
        match self {
            Doc::Raw(token) => out.push_str(token),
            Doc::Arr(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(comma);
                    }
                    item.write(spaced, out);
                }
                out.push(']');
            }
            Doc::Obj(fields) => {
                out.push('{');
                for (i, (key, value)) in fields.iter().enumerate() {
                    if i > 0 {
                        out.push_str(comma);
                    }
                    out.push_str(key);
                    out.push_str(if spaced { " : " } else { ":" });
                    value.write(spaced, out);
                }
                out.push('}');
            }
        }
    }
}

fn quoted(text: &str) -> String {
    serde_json::to_string(text).unwrap()
}

fn text() -> impl Strategy<Value = String> {
    "[a-z \"\\\\\n\u{1}é中{}:,]{0,10}"
}

fn string() -> impl Strategy<Value = Doc> {
    text().prop_map(|t| Doc::Raw(quoted(&t)))
}

/// Scalars, including what a tree reads differently from a skip: numbers out of range,
/// integers past u64 and u32, negative zero, lone surrogates, escapes.
fn scalar() -> impl Strategy<Value = Doc> {
    prop_oneof![
        prop_oneof![
            Just("null"),
            Just("true"),
            Just("false"),
            Just("0"),
            Just("-0"),
            Just("7"),
            Just("-3"),
            Just("1.0"),
            Just("2.5e3"),
            Just("1e999"),
            Just("-1e999"),
            Just("4294967296"),
            Just("18446744073709551615"),
            Just("18446744073709551616"),
            Just("\"\""),
            Just(r#""\ud800""#),
            Just(r#""\ud83d\ude00""#),
            Just(r#""\u00e9\n\"""#),
        ]
        .prop_map(|t| Doc::Raw(t.to_string())),
        string(),
        (0u64..2_000).prop_map(|n| Doc::Raw(n.to_string())),
    ]
}

/// Keys: the ones the parser reads (some written with an escape), and others.
fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        prop_oneof![
            Just("error"),
            Just("choices"),
            Just("usage"),
            Just("model"),
            Just("message"),
            Just("finish_reason"),
            Just("content"),
            Just("tool_calls"),
            Just("id"),
            Just("function"),
            Just("name"),
            Just("arguments"),
            Just("prompt_tokens"),
            Just("completion_tokens"),
            Just("index"),
            Just("type"),
        ]
        .prop_map(quoted),
        Just(r#""con\u0074ent""#.to_string()),
        Just(r#""\u0063hoices""#.to_string()),
        text().prop_map(|t| quoted(&t)),
    ]
}

fn value() -> impl Strategy<Value = Doc> {
    scalar().prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Doc::Arr),
            proptest::collection::vec((key(), inner), 0..4).prop_map(Doc::Obj),
        ]
    })
}

/// An object of the given fields (each maybe left out), a few other keys (which may
/// repeat a field), in any order; or, now and then, any value in its place.
fn object(fields: Vec<(&'static str, BoxedStrategy<Doc>)>) -> impl Strategy<Value = Doc> {
    let fields: Vec<_> = fields
        .into_iter()
        .map(|(name, value)| {
            proptest::option::weighted(0.85, value.prop_map(move |v| (quoted(name), v)))
        })
        .collect();
    let object = (fields, proptest::collection::vec((key(), value()), 0..3))
        .prop_map(|(fields, extra)| {
            fields
                .into_iter()
                .flatten()
                .chain(extra)
                .collect::<Vec<_>>()
        })
        .prop_shuffle()
        .prop_map(Doc::Obj);
    prop_oneof![9 => object, 1 => value()]
}

fn call() -> impl Strategy<Value = Doc> {
    let arguments = prop_oneof![
        // JSON text in a string, an object, nothing, or anything.
        value().prop_map(|v| {
            let mut text = String::new();
            v.write(false, &mut text);
            Doc::Raw(quoted(&text))
        }),
        proptest::collection::vec((key(), value()), 0..4).prop_map(Doc::Obj),
        Just(Doc::Raw("null".into())),
        value(),
    ];
    let name = prop_oneof![4 => string(), 1 => Just(Doc::Raw("\"\"".into())), 1 => value()];
    let function = object(vec![
        ("name", name.boxed()),
        ("arguments", arguments.boxed()),
    ]);
    let id = prop_oneof![3 => string(), 1 => Just(Doc::Raw("\"\"".into())), 1 => value()];
    let kind = Just(Doc::Raw("\"function\"".into()));
    object(vec![
        ("id", id.boxed()),
        ("type", kind.boxed()),
        ("function", function.boxed()),
    ])
}

fn message() -> impl Strategy<Value = Doc> {
    let content = prop_oneof![3 => string(), 2 => Just(Doc::Raw("null".into())), 1 => value()];
    let calls = prop_oneof![
        4 => proptest::collection::vec(call(), 0..4).prop_map(Doc::Arr),
        1 => value(),
    ];
    let role = Just(Doc::Raw("\"assistant\"".into()));
    object(vec![
        ("role", role.boxed()),
        ("content", content.boxed()),
        ("tool_calls", calls.boxed()),
    ])
}

fn answer() -> impl Strategy<Value = Doc> {
    let reason = prop_oneof![3 => string(), 1 => value()];
    let choice = object(vec![
        ("message", message().boxed()),
        ("finish_reason", reason.boxed()),
    ]);
    let choices = prop_oneof![
        5 => proptest::collection::vec(choice, 0..3).prop_map(Doc::Arr),
        1 => value(),
    ];
    let usage = object(vec![
        ("prompt_tokens", scalar().boxed()),
        ("completion_tokens", scalar().boxed()),
    ]);
    let error = prop_oneof![
        4 => Just(Doc::Raw("null".into())),
        1 => value(),
    ];
    let error = proptest::option::weighted(0.3, error);
    (
        object(vec![
            ("choices", choices.boxed()),
            ("usage", usage.boxed()),
            ("model", string().boxed()),
        ]),
        error,
    )
        .prop_map(|(answer, error)| match (answer, error) {
            (Doc::Obj(mut fields), Some(error)) => {
                fields.push((quoted("error"), error));
                Doc::Obj(fields)
            }
            (answer, _) => answer,
        })
}

/// A byte that breaks or changes a document where it lands.
fn corruption() -> impl Strategy<Value = Option<(usize, Option<u8>)>> {
    let byte = prop_oneof![
        Just(b'}'),
        Just(b']'),
        Just(b','),
        Just(b'"'),
        Just(b'\\'),
        Just(b'1'),
        Just(b' '),
        Just(0xff),
        Just(0x01),
    ];
    // At an index: cut the document there, or put the byte there.
    proptest::option::weighted(0.2, (any::<usize>(), proptest::option::of(byte)))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4096))]

    #[test]
    fn the_typed_parser_answers_what_the_tree_walk_answered(
        doc in answer(),
        spaced: bool,
        corruption in corruption(),
    ) {
        let mut text = String::new();
        doc.write(spaced, &mut text);
        let mut body = text.into_bytes();
        if let Some((at, byte)) = corruption {
            let at = at % (body.len() + 1);
            match byte {
                Some(byte) if at < body.len() => body[at] = byte,
                _ => body.truncate(at),
            }
        }
        prop_assert_eq!(
            parse_chat_response(&body),
            oracle::parse_chat_response(&body),
            "{}", String::from_utf8_lossy(&body)
        );
    }
}

/// Cases the generator reaches only by chance, each with what both parsers must say.
#[test]
fn edge_cases_agree_and_say_what_is_expected() {
    let cases: [(&str, Result<&str, &str>); 12] = [
        // A repeated key: the last wins, as in a tree.
        (
            r#"{"choices":[{"message":{"content":"a","content":"b"}}]}"#,
            Ok("b"),
        ),
        (
            r#"{"choices":[{"message":{"content":"a"}}],"choices":5}"#,
            Err("no `choices`"),
        ),
        (
            r#"{"error":{"m":1},"error":null,"choices":[{"message":null}]}"#,
            Ok(""),
        ),
        // A key written with an escape is the same key.
        (r#"{"choices":[{"message":{"con\u0074ent":"c"}}]}"#, Ok("c")),
        // What a tree refuses in a field nobody reads is still invalid JSON.
        (
            r#"{"x":1e999,"choices":[{"message":{}}]}"#,
            Err("invalid JSON: number out of range"),
        ),
        (
            r#"{"x":"\ud800","choices":[{"message":{}}]}"#,
            Err("invalid JSON: unexpected end of hex escape"),
        ),
        (
            r#"{"choices":[{"message":{}}]} x"#,
            Err("invalid JSON: trailing characters"),
        ),
        (r#"[{"choices":[]}]"#, Err("no `choices`")),
        (
            r#"{"choices":[7]}"#,
            Err("the first choice has no `message`"),
        ),
        (
            r#"{"choices":[{"message":{"tool_calls":[{"function":{"name":"f"}},3]}}]}"#,
            Err("tool call 1 has no `function`"),
        ),
        (
            r#"{"choices":[{"message":{"tool_calls":[{"function":null}]}}]}"#,
            Err("tool call 0 has no name"),
        ),
        (
            r#"{"error":false,"choices":[]}"#,
            Err("the answer is an error: false"),
        ),
    ];
    for (body, expected) in cases {
        let typed = parse_chat_response(body.as_bytes());
        assert_eq!(
            typed,
            oracle::parse_chat_response(body.as_bytes()),
            "{body}"
        );
        match (&typed, expected) {
            (Ok(answer), Ok(content)) => assert_eq!(answer.content, content, "{body}"),
            (Err(LlmError::BadResponse(message)), Err(start)) => {
                assert!(message.starts_with(start), "{body}: {message}")
            }
            _ => panic!("{body}: {typed:?}"),
        }
    }
    // Arguments as an object are passed on as its compact text (keys sorted, as a tree
    // prints them); a missing id is named by the call's position.
    let body = br#"{"choices":[{"message":{"tool_calls":[{"function":{"name":"f","arguments":{"b":[1, 2.50],"a":"x"}}}]}}],"usage":{"prompt_tokens":4294967296,"completion_tokens":-1}}"#;
    let answer = parse_chat_response(body).unwrap();
    assert_eq!(answer, oracle::parse_chat_response(body).unwrap());
    assert_eq!(answer.tool_calls[0].arguments, r#"{"a":"x","b":[1,2.5]}"#);
    assert_eq!(answer.tool_calls[0].id, "call_0");
    assert_eq!(
        answer.usage.map(|u| (u.prompt_tokens, u.completion_tokens)),
        Some((u32::MAX, 0))
    );
}
