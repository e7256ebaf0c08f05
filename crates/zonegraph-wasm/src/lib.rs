//! zonegraph-wasm: zonegraph-core as a WebAssembly module for browsers and JavaScript.
//!
//! A thin façade: convert in, call the core (through [`api`]), convert out. This is the only
//! crate of the workspace that knows `JsValue`. Results are plain JS objects shaped exactly
//! like the core's JSON (`zonegraph check --json`), so keys stay snake_case; export names are
//! camelCase. Every failure reaches JS as a thrown `Error` with the core's message and a
//! stable `code` property; no input may panic (a panic would trap the whole module).
//!
//! Build the package with `cargo xtask wasm-pack`; the TypeScript declarations below are
//! written by hand so they say precisely what each object holds.

pub mod api;

use serde::Serialize;
use wasm_bindgen::prelude::*;

use crate::api::ApiError;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_namespace = console, js_name = error)]
    fn console_error(message: &str);
}

/// Runs when the module is instantiated: report panics on the console before the trap, so a
/// bug shows its message instead of only `RuntimeError: unreachable`.
#[wasm_bindgen(start)]
pub fn start() {
    std::panic::set_hook(Box::new(|info| {
        console_error(&format!(
            "zonegraph-wasm panicked (a bug, please report it): {info}"
        ));
    }));
}

/// Checks one zone: every finding and the stats, the entry `zonegraph check --json` prints
/// for it (`file` names it in messages; default `zone.json`). Throws a `ZonegraphError`
/// (`code: "parse_error"`, with `line`/`column`/`path`) when the text is not a zone file.
#[wasm_bindgen(js_name = checkZone, unchecked_return_type = "CheckedZone")]
pub fn check_zone(
    #[wasm_bindgen(unchecked_param_type = "string | ZoneFile")] zone: JsValue,
    file: Option<String>,
) -> Result<JsValue, JsValue> {
    let text = zone_text(&zone, "checkZone: zone")?;
    let file = file.unwrap_or_else(|| "zone.json".to_string());
    to_js(&api::check_zone(&text, &file).map_err(error)?)
}

/// Checks zones together, as `zonegraph check --json` checks files: the checks across zones
/// (`duplicate_node` between zones, `key_never_granted`) see them all. One entry per zone, in
/// order; a zone that cannot be read has `parse_error` in its entry instead of throwing.
/// Each element is zone text, a zone object, or `{file, zone}` (default file `zones[i]`).
#[wasm_bindgen(js_name = checkZones, unchecked_return_type = "CheckedZone[]")]
pub fn check_zones(
    #[wasm_bindgen(unchecked_param_type = "ReadonlyArray<string | ZoneFile | ZoneSource>")]
    zones: JsValue,
) -> Result<JsValue, JsValue> {
    if !js_sys::Array::is_array(&zones) {
        return Err(error(ApiError::new(
            "invalid_argument",
            "checkZones: zones must be an array of zone texts, zone objects or {file, zone}",
        )));
    }
    let sources = js_sys::Array::from(&zones)
        .iter()
        .enumerate()
        .map(|(i, z)| zone_source(&z, i))
        .collect::<Result<Vec<_>, _>>()?;
    to_js(&api::check_zones(&sources))
}

/// Route analysis of one zone: longest and shortest path, routes, choke points and the pass
/// chances of every lock (the `stats` of `checkZone`).
#[wasm_bindgen(js_name = analyzeZone, unchecked_return_type = "ZoneStats")]
pub fn analyze_zone(
    #[wasm_bindgen(unchecked_param_type = "string | ZoneFile")] zone: JsValue,
) -> Result<JsValue, JsValue> {
    let text = zone_text(&zone, "analyzeZone: zone")?;
    to_js(&api::analyze_zone(&text).map_err(error)?)
}

/// The deterministic d20 (1–20) for the lock on the passage `from → to` in run `runId`: the
/// same number the bot and the native core roll.
#[wasm_bindgen(js_name = rollD20)]
pub fn roll_d20(
    #[wasm_bindgen(js_name = runId, unchecked_param_type = "string")] run_id: JsValue,
    #[wasm_bindgen(unchecked_param_type = "string")] from: JsValue,
    #[wasm_bindgen(unchecked_param_type = "string")] to: JsValue,
) -> Result<u32, JsValue> {
    let s = |v: &JsValue, name: &str| {
        v.as_string().ok_or_else(|| {
            error(ApiError::new(
                "invalid_argument",
                format!("rollD20: {name} must be a string"),
            ))
        })
    };
    Ok(api::roll_d20(
        &s(&run_id, "runId")?,
        &s(&from, "from")?,
        &s(&to, "to")?,
    ))
}

/// The share-link fragment (without `#`) for a zone: `z1:` + base64url(zlib(JSON)).
/// A string is encoded as given; an object is encoded as compact JSON.
#[wasm_bindgen(js_name = encodeShareLink)]
pub fn encode_share_link(
    #[wasm_bindgen(js_name = zoneJson, unchecked_param_type = "string | ZoneFile")]
    zone_json: JsValue,
) -> Result<String, JsValue> {
    let text = zone_text(&zone_json, "encodeShareLink: zoneJson")?;
    api::encode_share_link(&text).map_err(error)
}

/// The zone JSON text of a share link: `z1:…`, `#z1:…` or a whole URL ending in `#z1:…`.
/// Bounded: a payload over 64 KB or an inflated size over 2 MB throws
/// (`share_payload_too_large`, `share_inflated_too_large`), as does a corrupt link.
#[wasm_bindgen(js_name = decodeShareLink)]
pub fn decode_share_link(
    #[wasm_bindgen(unchecked_param_type = "string")] fragment: JsValue,
) -> Result<String, JsValue> {
    let link = fragment.as_string().ok_or_else(|| {
        error(ApiError::new(
            "invalid_argument",
            "decodeShareLink: fragment must be a string",
        ))
    })?;
    api::decode_share_link(&link).map_err(error)
}

/// This module's version, the zone format version it reads, and its share-link limits.
#[wasm_bindgen(js_name = versionInfo, unchecked_return_type = "VersionInfo")]
pub fn version_info() -> Result<JsValue, JsValue> {
    to_js(&api::version_info())
}

/// Zone text from a JS argument: a string as is, any other object as JSON.
fn zone_text(value: &JsValue, what: &str) -> Result<String, JsValue> {
    if let Some(text) = value.as_string() {
        return Ok(text);
    }
    let invalid = || {
        error(ApiError::new(
            "invalid_argument",
            format!("{what} must be zone JSON text or a zone object"),
        ))
    };
    if !value.is_object() || value.is_function() {
        return Err(invalid());
    }
    // JSON.stringify throws on cycles and BigInt; both are not zones.
    match js_sys::JSON::stringify(value) {
        Ok(s) => s.as_string().ok_or_else(invalid),
        Err(_) => Err(invalid()),
    }
}

/// `{file, zone}`, or a bare zone named after its position.
fn zone_source(value: &JsValue, i: usize) -> Result<(String, String), JsValue> {
    let what = format!("checkZones: zones[{i}]");
    let get = |k: &str| js_sys::Reflect::get(value, &JsValue::from_str(k)).ok();
    let is_source = value.is_object()
        && get("format").is_some_and(|f| f.is_undefined())
        && get("zone").is_some_and(|z| !z.is_undefined());
    if is_source {
        let file = get("file").and_then(|f| f.as_string()).ok_or_else(|| {
            error(ApiError::new(
                "invalid_argument",
                format!("{what}.file must be a string"),
            ))
        })?;
        let zone = get("zone").unwrap_or(JsValue::UNDEFINED);
        return Ok((file, zone_text(&zone, &format!("{what}.zone"))?));
    }
    Ok((format!("zones[{i}]"), zone_text(value, &what)?))
}

/// Plain JS objects through the core's own JSON, so the module returns exactly what
/// `zonegraph check --json` prints (numbers past 2^53, such as a huge `routes`, become the
/// nearest double as with any JSON; serde-wasm-bindgen would refuse them).
fn to_js<T: Serialize>(value: &T) -> Result<JsValue, JsValue> {
    let text = serde_json::to_string(value).map_err(|e| {
        error(ApiError::new(
            "internal",
            format!("could not convert the result: {e}"),
        ))
    })?;
    js_sys::JSON::parse(&text).map_err(|_| {
        error(ApiError::new(
            "internal",
            "could not convert the result: JSON.parse refused it",
        ))
    })
}

/// A JS `Error` named `ZonegraphError` with `code` and, when known, `line`, `column`, `path`.
fn error(e: ApiError) -> JsValue {
    let err = js_sys::Error::new(&e.message);
    err.set_name("ZonegraphError");
    let set = |key: &str, value: JsValue| {
        // Setting a property on a fresh Error object cannot fail.
        let _ = js_sys::Reflect::set(&err, &JsValue::from_str(key), &value);
    };
    set("code", JsValue::from_str(e.code));
    if let Some(line) = e.line {
        set("line", JsValue::from(line as f64));
    }
    if let Some(column) = e.column {
        set("column", JsValue::from(column as f64));
    }
    if let Some(path) = &e.path {
        set("path", JsValue::from_str(path));
    }
    err.into()
}

#[wasm_bindgen(typescript_custom_section)]
const TS_TYPES: &'static str = r#"
/** The ten room kinds. */
export type NodeKind =
  | "entry" | "exploration" | "trap" | "elite" | "boss"
  | "harvest" | "rest_camp" | "secret" | "fork" | "merge";

/** The six lock kinds. */
export type LockKind =
  | "none" | "perception_check" | "key_required" | "level_min" | "region_clear" | "stat_check";

/** A lock's data: `{dc}`, `{key_id}`, `{min_level}`, `{region_id}` or `{stat, dc}`. */
export interface LockData {
  dc?: number;
  key_id?: string;
  min_level?: number;
  region_id?: string;
  /** `str`, `dex`, `con`, `int`, `wis` or `cha`, in any case. */
  stat?: string;
}

/** Per-room payload (`content_json`). */
export interface ContentFile {
  encounter_override?: string;
  harvest_ref?: string;
  /** Default 1.0. */
  loot_bias?: number;
  narration?: string;
  allow_self_loop?: boolean;
  grants_key?: string;
}

/** One room (`zone_node`). */
export interface NodeFile {
  node_id: string;
  kind: NodeKind;
  label?: string;
  is_entry?: boolean;
  is_boss?: boolean;
  region_id?: string;
  pos_x?: number;
  pos_y?: number;
  content?: ContentFile;
}

/** One passage (`zone_edge`). Menu order: weight ascending, then `to_node`. */
export interface EdgeFile {
  from_node: string;
  to_node: string;
  lock_kind?: LockKind;
  lock_data?: LockData;
  hint?: string;
  /** Default 1. */
  weight?: number;
}

/** One region of a multi-region zone. */
export interface RegionFile {
  region_id: string;
  name: string;
  order: number;
}

/** A zone file, format 1 (zones/zone.schema.json): `nodes` + `edges`, or `room_kinds`. */
export interface ZoneFile {
  $schema?: string;
  format: 1;
  zone_id: string;
  name: string;
  tier: number;
  min_level: number;
  max_level: number;
  regions?: RegionFile[];
  allow_loops?: boolean;
  nodes?: NodeFile[];
  edges?: EdgeFile[];
  room_kinds?: NodeKind[];
}

export type Severity = "error" | "warning";

/** Every finding's stable code. */
export type DiagnosticCode =
  | "no_nodes" | "entry_count" | "boss_count" | "duplicate_node" | "unknown_node"
  | "self_loop" | "orphan_node" | "boss_unreachable" | "cycle" | "bad_lock_data"
  | "unknown_region" | "kind_flag_mismatch"
  | "too_few_forks" | "secret_loot_bias" | "missing_hint" | "soft_lock" | "dead_end"
  | "key_never_granted" | "level_above_zone" | "impossible_dc" | "trivial_dc"
  | "boss_has_exits";

/** One finding, as `zonegraph check --json` prints it. */
export interface Diagnostic {
  severity: Severity;
  code: DiagnosticCode;
  /** Lowercase, no trailing period. */
  message: string;
  node?: string;
  edge?: { from: string; to: string };
}

/** Why a zone file could not be read at all. */
export interface ParseErrorInfo {
  /** 1-based, when known. */
  line: number | null;
  column: number | null;
  /** JSON path such as `nodes[3].lable`, when known. */
  path: string | null;
  message: string;
}

/** Pass chance of a Perception or stat check for one ability modifier. */
export interface ModifierChance {
  modifier: number;
  /** 0 to 1. */
  chance: number;
}

/** Whether a character of this level passes a `level_min` lock. */
export interface LevelPass {
  level: number;
  passes: boolean;
}

/** A locked passage and the chance that a character gets through it. */
export interface LockStats {
  from: string;
  to: string;
  lock_kind: LockKind;
  /** For people: "Perception DC 12", "key skull_key", "level 5". */
  requirement: string;
  /** Perception and stat checks: the chance for each modifier from -1 to +5. */
  by_modifier: ModifierChance[] | null;
  /** Level locks: each level from the zone's min_level to max_level (at most 100). */
  by_level: LevelPass[] | null;
  /** Why there is no chance table (keys and regions depend on the run). */
  note: string | null;
}

/** Route figures of one zone (`zonegraph check --stats --json`). */
export interface ZoneStats {
  nodes: number;
  edges: number;
  /** Rooms with two or more exits. */
  forks: number;
  /** Rooms on the longest entry→boss route, ignoring locks; null when there is no route. */
  longest_path: number | null;
  /** Rooms on the shortest entry→boss route, ignoring locks; null when there is no route. */
  shortest_path: number | null;
  /** Distinct entry→boss routes; null when a loop makes it unbounded. Past 2^53 it is the
   * nearest double, as with any JSON. */
  routes: number | null;
  /** Rooms every entry→boss route passes, in route order. */
  choke_points: string[];
  /** Every locked passage, in file order. */
  locks: LockStats[];
}

/** One zone after checking: an entry of `zonegraph check --json`'s `zones`. Diagnostics are
 * sorted: errors first, then by code, node, edge, message. */
export interface CheckedZone {
  file: string;
  /** null when the file could not be parsed. */
  zone_id: string | null;
  /** Only from `checkZones` (`checkZone` throws instead). */
  parse_error?: ParseErrorInfo;
  diagnostics: Diagnostic[];
  /** Absent when the file could not be parsed. */
  stats?: ZoneStats;
}

/** A named zone for `checkZones`; the name appears in messages across zones. */
export interface ZoneSource {
  file: string;
  zone: string | ZoneFile;
}

export interface VersionInfo {
  /** The zonegraph-wasm version. */
  version: string;
  /** The zone file format version this build reads. */
  format_version: number;
  /** `"z1:"`. */
  share_prefix: string;
  /** Largest accepted share-link payload, in bytes (64 KB). */
  share_max_payload: number;
  /** Largest accepted inflated zone JSON, in bytes (2 MB). */
  share_max_inflated: number;
}

/** The `code` of every error this module throws. */
export type ZonegraphErrorCode =
  | "parse_error" | "invalid_argument" | "internal"
  | "share_prefix" | "share_empty" | "share_payload_too_large" | "share_base64"
  | "share_inflated_too_large" | "share_corrupt" | "share_not_utf8" | "share_zone_too_large";

/** What every export throws: an `Error` with a stable code (and, for parse errors, where). */
export interface ZonegraphError extends Error {
  name: "ZonegraphError";
  code: ZonegraphErrorCode;
  /** 1-based, for `parse_error` when known. */
  line?: number;
  column?: number;
  /** JSON path such as `nodes[3].lable`, for `parse_error` when known. */
  path?: string;
}
"#;
