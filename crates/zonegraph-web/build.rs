//! Ships `zones/*.json` inside the viewer: a new zone file appears in the gallery without a
//! code change.

use std::fmt::Write as _;
use std::path::Path;

fn main() {
    // The run-time variable, not env!: a build-script binary can be reused from another
    // checkout that shares the target dir, and its compile-time path may be gone.
    let manifest_dir = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let dir = Path::new(&manifest_dir).join("../../zones");
    println!("cargo:rerun-if-changed={}", dir.display());
    let entries = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot read the shipped zones in {}: {e}", dir.display()));
    let mut files: Vec<_> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(zonegraph_core::format::is_zone_file_name)
        })
        .collect();
    assert!(!files.is_empty(), "no zone files in {}", dir.display());
    #[allow(
        clippy::disallowed_methods,
        reason = "the build script runs natively; its sort is not in the wasm"
    )]
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
