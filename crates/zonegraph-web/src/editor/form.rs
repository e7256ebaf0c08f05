//! What the editor page's forms and lists show: a lock's fields and their captions, the
//! numbers typed into fields, the rooms to pick from, the findings' count.

use zonegraph_core::diagnostic::Diagnostic;
use zonegraph_core::format::{EdgeFile, ZoneFile};

use super::{default_lock_data, rooms};

/// The fields of a passage's lock data, as its form shows them: the keys its lock kind
/// starts with ([`default_lock_data`]), then any others the file has, each with the file's
/// value, else the kind's default.
pub fn lock_fields(edge: &EdgeFile) -> Vec<(String, serde_json::Value)> {
    let defaults = default_lock_data(edge.lock_kind);
    let mut keys: Vec<String> = defaults.keys().cloned().collect();
    keys.extend(
        edge.lock_data
            .keys()
            .filter(|k| !keys.contains(k))
            .cloned()
            .collect::<Vec<_>>(),
    );
    keys.into_iter()
        .map(|k| {
            let value = edge
                .lock_data
                .get(&k)
                .or_else(|| defaults.get(&k))
                .cloned()
                .unwrap_or_default();
            (k, value)
        })
        .collect()
}

/// A lock data key in words, for its form field.
pub fn lock_data_caption(key: &str) -> String {
    match key {
        "dc" => "Difficulty (DC)".into(),
        "key_id" => "Key id".into(),
        "min_level" => "Lowest level".into(),
        "region_id" => "Region to clear".into(),
        "stat" => "Ability".into(),
        k => format!("Lock data: {k}"),
    }
}

/// A whole number typed into a form field, held between `lo` and `hi`; `None` when it is
/// no number.
pub fn form_number(text: &str, lo: i64, hi: i64) -> Option<i64> {
    text.trim().parse::<i64>().ok().map(|v| v.clamp(lo, hi))
}

/// A decimal number field's value ("0.5", ".5", "2"), or `None` when it is not a finite
/// number. Read by serde_json's number parser, which the page has anyway (`str::parse::<f64>`
/// would bring its own, KBs of WebAssembly).
pub fn form_decimal(text: &str) -> Option<f64> {
    let t = text.trim();
    let t = if t.starts_with('.') {
        format!("0{t}")
    } else {
        t.to_string()
    };
    serde_json::from_str::<f64>(&t)
        .ok()
        .filter(|v| v.is_finite())
}

/// Every room of the file as (id, what a list shows for it), in file order: "Label (id)",
/// or the id of a room without a label.
pub fn room_names(f: &ZoneFile) -> Vec<(String, String)> {
    rooms(f)
        .iter()
        .map(|n| {
            let name = if n.label.is_empty() {
                n.node_id.clone()
            } else {
                format!("{} ({})", n.label, n.node_id)
            };
            (n.node_id.clone(), name)
        })
        .collect()
}

/// The findings in a line: "2 errors, 1 warning", or that there are none.
pub fn findings_words(diagnostics: &[Diagnostic]) -> String {
    if diagnostics.is_empty() {
        return "No findings: the zone is clean.".to_string();
    }
    let errors = diagnostics.iter().filter(|d| d.is_error()).count();
    let warnings = diagnostics.len() - errors;
    let plural = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
    format!(
        "{}, {}",
        plural(errors, "error"),
        plural(warnings, "warning")
    )
}
