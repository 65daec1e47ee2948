//! The tools' specs as text, for the component's `list-tools`. `specs()` (each tool's
//! `json!`) is the source; the table below is written from it by
//! `UPDATE_SPEC_TEXTS=1 cargo test -p kg-graph-tools spec_texts`, and the test
//! `spec_texts_are_the_specs_as_serde_json_prints_them` fails when the two differ. Every
//! agent turn lists the tools: building the trees, printing and freeing them took about
//! half as long as the turn's four tool calls (perf, 26 Nov); the text costs nothing.

#[rustfmt::skip]
mod generated;

pub use generated::SPEC_TEXTS;

#[cfg(test)]
mod tests {
    use super::SPEC_TEXTS;
    use std::fmt::Write;

    const PATH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/src/spec_texts/generated.rs");

    fn rendered() -> String {
        let mut out = String::from(
            "// Written by `UPDATE_SPEC_TEXTS=1 cargo test -p kg-graph-tools spec_texts` from\n\
             // `specs()`: do not edit by hand (see ../spec_texts.rs).\n\n\
             /// (name, description, JSON Schema of the arguments as compact JSON) of every tool.\n\
             pub const SPEC_TEXTS: &[(&str, &str, &str)] = &[\n",
        );
        for (name, description, schema) in crate::specs() {
            let text = serde_json::to_string(&schema).expect("a schema prints");
            // `{:?}` of a str is a valid Rust string literal with the same text.
            let _ = writeln!(out, "    ({name:?}, {description:?}, {text:?}),");
        }
        out.push_str("];\n");
        out
    }

    #[test]
    fn spec_texts_are_the_specs_as_serde_json_prints_them() {
        let expected = rendered();
        if std::env::var_os("UPDATE_SPEC_TEXTS").is_some() {
            // The compiled table is the old one until the next build: check it then.
            std::fs::write(PATH, &expected).expect("writing the spec texts");
            return;
        }
        let current = std::fs::read_to_string(PATH).expect("reading the spec texts");
        assert!(
            current == expected,
            "src/spec_texts/generated.rs is stale: run `UPDATE_SPEC_TEXTS=1 cargo test -p kg-graph-tools spec_texts`"
        );
        // And the compiled table is that file (not an older build of it).
        let specs = crate::specs();
        assert_eq!(SPEC_TEXTS.len(), specs.len());
        for ((name, description, text), (n, d, schema)) in SPEC_TEXTS.iter().zip(&specs) {
            assert_eq!((*name, *description), (*n, *d));
            let parsed: serde_json::Value = serde_json::from_str(text).expect("valid JSON");
            assert_eq!(&parsed, schema, "{name}");
        }
    }
}
