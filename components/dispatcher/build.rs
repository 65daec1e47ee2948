//! Embeds docs/openapi.json without its layout (the whitespace outside strings): the
//! document is kept indented for people and diffs, and served as compact JSON, which
//! keeps ~100 KB out of the component. Key order and every string stay as written.

use std::path::Path;

fn main() {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/openapi.json");
    println!("cargo:rerun-if-changed={}", source.display());
    let text = std::fs::read_to_string(&source).expect("docs/openapi.json reads");
    let out =
        Path::new(&std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("openapi.json");
    std::fs::write(out, compact(&text)).expect("OUT_DIR/openapi.json writes");
}

/// JSON text without whitespace between tokens.
fn compact(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let (mut in_string, mut escaped) = (false, false);
    for c in text.chars() {
        if in_string {
            out.push(c);
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
        } else if c == '"' {
            in_string = true;
            out.push(c);
        } else if !c.is_whitespace() {
            out.push(c);
        }
    }
    out
}
