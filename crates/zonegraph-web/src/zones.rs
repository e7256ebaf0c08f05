//! The zones shipped with the build (`zones/*.json`, gathered by `build.rs`).

/// `(file name, JSON text)`, sorted by file name.
pub const SHIPPED: &[(&str, &str)] = include!(concat!(env!("OUT_DIR"), "/zones.rs"));

/// The shipped zone whose file is `<id>.json`.
pub fn shipped(id: &str) -> Option<(&'static str, &'static str)> {
    SHIPPED
        .iter()
        .find(|(file, _)| file.strip_suffix(".json") == Some(id))
        .copied()
}
