//! Embeds the built web app: writes `$OUT_DIR/assets.rs`, a table of every file of
//! `web/dist` with its pre-compressed `.gz`/`.br` siblings (made by web/scripts/compress.mjs).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            walk(&path, out);
        } else {
            out.push(path);
        }
    }
}

fn content_type(path: &str) -> &'static str {
    match path.rsplit('.').next().unwrap_or("") {
        "html" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "json" | "map" => "application/json",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "ico" => "image/x-icon",
        "woff2" => "font/woff2",
        "txt" => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

/// FNV-1a, for the ETag of index.html.
fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf29ce484222325u64, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x100000001b3)
    })
}

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    let dist = manifest.join("../../web/dist");
    println!("cargo:rerun-if-changed={}", dist.display());
    println!("cargo:rerun-if-changed=build.rs");
    if !dist.join("index.html").is_file() {
        panic!(
            "\n\nkg-web: {} is missing: build the web app first:\n    (cd web && npm ci && npm run build)\nor run scripts/setup.sh, which does it.\n\n",
            dist.join("index.html").display()
        );
    }
    let mut files = Vec::new();
    walk(&dist, &mut files);
    files.sort();
    let mut table = String::from("&[\n");
    for file in &files {
        let name = file.to_string_lossy();
        if name.ends_with(".gz") || name.ends_with(".br") {
            continue;
        }
        println!("cargo:rerun-if-changed={name}");
        let rel = file
            .strip_prefix(&dist)
            .expect("under dist")
            .to_string_lossy()
            .replace('\\', "/");
        let sibling = |ext: &str| {
            let p = format!("{name}.{ext}");
            if Path::new(&p).is_file() {
                format!("Some(include_bytes!({p:?}))")
            } else {
                "None".to_string()
            }
        };
        let bytes = std::fs::read(file).expect("read dist file");
        writeln!(
            table,
            "    Asset {{ path: {:?}, content_type: {:?}, etag: \"\\\"{:016x}\\\"\", identity: include_bytes!({:?}), gzip: {}, brotli: {} }},",
            format!("/{rel}"),
            content_type(&rel),
            fnv(&bytes),
            name,
            sibling("gz"),
            sibling("br"),
        )
        .expect("write");
    }
    table.push(']');
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR")).join("assets.rs");
    std::fs::write(out, table).expect("write assets.rs");
}
