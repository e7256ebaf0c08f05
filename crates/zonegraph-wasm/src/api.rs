//! The façade in plain Rust: what each export computes, with serde results and typed errors.
//!
//! Nothing here knows JsValue, so the native tests run exactly this code and write the parity
//! fixture the browser tests compare against. `lib.rs` only converts in and out.

use serde::Serialize;
use zonegraph_core::{format, roll, share, zone};

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

/// One zone file after checking, exactly as `zonegraph check --json` prints it:
/// `{file, zone_id, parse_error?, diagnostics, stats?}`.
pub use zonegraph_core::CheckedZone;
/// Route figures of one zone (`--stats`): paths, routes, choke points, lock pass chances.
pub use zonegraph_core::Stats;

/// Checks one zone file's text: every finding and the stats. A file that cannot be read at
/// all is an error here (`checkZones` reports it in the entry instead).
pub fn check_zone(text: &str, file: &str) -> Result<CheckedZone, ApiError> {
    let mut checked = check_zones(&[(file.to_string(), text.to_string())]);
    let one = checked
        .pop()
        .ok_or_else(|| ApiError::new("internal", "checking one zone returned no report"))?;
    match one.parse_error {
        Some(e) => Err(e.into()),
        None => Ok(one),
    }
}

/// Checks `(file name, text)` sources together, so the checks across zones see them all
/// (`duplicate_node` between zones, `key_never_granted`). One entry per source, in order.
pub fn check_zones(sources: &[(String, String)]) -> Vec<CheckedZone> {
    zonegraph_core::check_sources(sources)
}

/// The route analysis of one zone (also of an invalid one: the figures then describe the
/// graph as built).
pub fn analyze_zone(text: &str) -> Result<Stats, ApiError> {
    let (zone, _) = zone::load(text)?;
    Ok(zonegraph_core::stats(&zone))
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
