//! The façade in plain Rust: what each export computes, with serde results and typed errors.
//!
//! Nothing here knows JsValue, so the native tests run exactly this code and write the parity
//! fixture the browser tests compare against. `lib.rs` only converts in and out.

use serde::Serialize;
use zonegraph_core::{Diagnostic, analysis, diagnostic, format, roll, share, zone};

/// An error as JS sees it: an `Error` whose `message` is the core's message, with a stable
/// `code` and, for zone text that is not valid JSON or not the format, where.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ApiError {
    pub code: &'static str,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
}

impl ApiError {
    pub fn new(code: &'static str, message: impl Into<String>) -> Self {
        ApiError {
            code,
            message: message.into(),
            line: None,
            column: None,
            path: None,
        }
    }
}

impl From<format::ParseError> for ApiError {
    fn from(e: format::ParseError) -> Self {
        ApiError {
            code: "parse_error",
            message: e.located(),
            line: e.line,
            column: e.column,
            path: e.path.filter(|p| !p.is_empty() && p != "." && p != "?"),
        }
    }
}

impl From<share::ShareError> for ApiError {
    fn from(e: share::ShareError) -> Self {
        ApiError::new(e.code(), e.to_string())
    }
}

/// Counts for one zone (`--stats`).
// TODO(validate): replace with `zonegraph_core::validate`'s stats type when it lands; these
// four fields are the ones the core can compute today.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ZoneStats {
    pub nodes: usize,
    pub edges: usize,
    /// Rooms with two or more exits.
    pub forks: usize,
    /// Rooms on the longest entry→boss route; `null` without a single entry, boss and route.
    pub longest_path: Option<usize>,
}

/// One zone's findings, shaped like an entry of `zonegraph check --json`'s `zones` array.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ZoneReport {
    pub zone_id: String,
    pub diagnostics: Vec<Diagnostic>,
    pub stats: ZoneStats,
}

/// Checks one zone file's text.
pub fn check_zone(text: &str) -> Result<ZoneReport, ApiError> {
    let mut reports = check_sources(&[text])?;
    reports
        .pop()
        .ok_or_else(|| ApiError::new("internal", "checking one zone returned no report"))
}

/// Checks zone files together (cross-zone findings need them all at once).
pub fn check_zones(texts: &[&str]) -> Result<Vec<ZoneReport>, ApiError> {
    check_sources(texts)
}

/// The one place that calls the core's checker.
///
/// TODO(validate): when `zonegraph_core::validate::check_sources` lands, this body becomes one
/// call to it (the texts in, the `--json` zone reports with every finding and the full stats
/// out), and `ZoneStats` becomes its stats type. Until then: parse errors, the structural
/// findings of `zone::build` and the stats above; no semantic checks or lints, and no
/// cross-zone checks (`duplicate_node` across files, `key_never_granted`).
fn check_sources(texts: &[&str]) -> Result<Vec<ZoneReport>, ApiError> {
    texts
        .iter()
        .map(|text| {
            let (zone, mut diagnostics) = zone::load(text)?;
            diagnostic::sort(&mut diagnostics);
            let forks = zone
                .node_indices()
                .filter(|&ix| zone.exits(ix).len() >= 2)
                .count();
            Ok(ZoneReport {
                zone_id: zone.id.clone(),
                diagnostics,
                stats: ZoneStats {
                    nodes: zone.graph.node_count(),
                    edges: zone.graph.edge_count(),
                    forks,
                    longest_path: analysis::longest_path_len(&zone),
                },
            })
        })
        .collect()
}

/// The deterministic d20 for the lock on `from → to` in run `run_id`.
pub fn roll_d20(run_id: &str, from: &str, to: &str) -> u32 {
    roll::d20(run_id, from, to)
}

/// `z1:` + base64url(zlib(zone JSON)).
pub fn encode_share_link(zone_json: &str) -> Result<String, ApiError> {
    Ok(share::encode(zone_json)?)
}

/// The zone JSON text of a share link (fragment with or without `#`, or a whole URL).
pub fn decode_share_link(link: &str) -> Result<String, ApiError> {
    Ok(share::decode(link)?)
}

/// What this module is and the limits it enforces.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct VersionInfo {
    /// The zonegraph-wasm crate version.
    pub version: &'static str,
    /// The zone file format version this build reads and writes.
    pub format_version: u32,
    pub share_prefix: &'static str,
    pub share_max_payload: usize,
    pub share_max_inflated: usize,
}

pub fn version_info() -> VersionInfo {
    VersionInfo {
        version: env!("CARGO_PKG_VERSION"),
        format_version: format::FORMAT_VERSION,
        share_prefix: share::PREFIX,
        share_max_payload: share::MAX_PAYLOAD,
        share_max_inflated: share::MAX_INFLATED,
    }
}
