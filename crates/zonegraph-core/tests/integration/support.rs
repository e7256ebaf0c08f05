//! The repository's files the tests read: the shipped zones and the viewer's fixture zones.

use std::path::{Path, PathBuf};

use zonegraph_core::format::is_zone_file_name;

/// The repository's root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The text of the shipped zone `id`.
pub fn zone_text(id: &str) -> String {
    std::fs::read_to_string(root().join(format!("zones/{id}.json"))).expect("zone file")
}

/// The zone files of `dir` (relative to the root), sorted.
pub fn zone_files(dir: &str) -> Vec<PathBuf> {
    let dir = root().join(dir);
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("readable entry").path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(is_zone_file_name)
        })
        .collect();
    paths.sort();
    paths
}
