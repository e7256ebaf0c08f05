//! Ships `zones/*.json` inside the viewer: a new zone file appears in the gallery without a
//! code change.

use std::fmt::Write as _;
use std::path::Path;

fn main() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../zones");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| {
                    let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
                    name.ends_with(".json") && !name.ends_with(".schema.json")
                })
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    let mut out = String::from("&[\n");
    for path in &files {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let _ = writeln!(
            out,
            "    ({name:?}, include_str!({:?})),",
            path.canonicalize().unwrap_or_else(|_| path.clone())
        );
    }
    out.push(']');
    let target = Path::new(&std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("zones.rs");
    std::fs::write(target, out).expect("OUT_DIR is writable");
}
