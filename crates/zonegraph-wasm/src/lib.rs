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
/// chances of every lock, and the difficulty at `min_level` and `max_level` (the `stats` of
/// `checkZone`).
#[wasm_bindgen(js_name = analyzeZone, unchecked_return_type = "ZoneStats")]
pub fn analyze_zone(
    #[wasm_bindgen(unchecked_param_type = "string | ZoneFile")] zone: JsValue,
) -> Result<JsValue, JsValue> {
    let text = zone_text(&zone, "analyzeZone: zone")?;
    to_js(&api::analyze_zone(&text).map_err(error)?)
}

/// A zone's grid layout for drawing: a cell per room (the `pos_x`/`pos_y` hints when every
/// room has them, a deterministic layered layout otherwise; never two rooms in one cell) and
/// a polyline per passage.
#[wasm_bindgen(js_name = layoutZone, unchecked_return_type = "Layout")]
pub fn layout_zone(
    #[wasm_bindgen(unchecked_param_type = "string | ZoneFile")] zone: JsValue,
) -> Result<JsValue, JsValue> {
    let text = zone_text(&zone, "layoutZone: zone")?;
    to_js(&api::layout_zone(&text).map_err(error)?)
}

/// The ASCII map the chat shows (`!zone map`): the designer's view of the whole zone, or with
/// a run (as the core serialises it) the player's view of that run.
// Declared by hand in the TypeScript section: wasm-bindgen cannot mark `run` and `options`
// optional.
#[wasm_bindgen(js_name = renderMap, skip_typescript)]
pub fn render_map(
    #[wasm_bindgen(unchecked_param_type = "string | ZoneFile")] zone: JsValue,
    #[wasm_bindgen(unchecked_param_type = "Run | null")] run: Option<JsValue>,
    #[wasm_bindgen(unchecked_param_type = "MapOptions | null")] options: Option<JsValue>,
) -> Result<String, JsValue> {
    let text = zone_text(&zone, "renderMap: zone")?;
    let none = JsValue::UNDEFINED;
    let run = optional_json(run.as_ref().unwrap_or(&none), "renderMap: run")?;
    let options = optional_json(options.as_ref().unwrap_or(&none), "renderMap: options")?;
    api::render_map(&text, run.as_deref(), options.as_deref()).map_err(error)
}

/// Everything the run's player may know of the zone (the core's one player view): rooms
/// (undiscovered secrets absent, rooms behind a failed Perception check without id, label or
/// kind), passages with their lock kind and hint only, and `status`, the data behind
/// `!zone status`. What the run-map page draws; no lock data, no run id.
// Declared by hand in the TypeScript section: wasm-bindgen cannot mark `character` optional.
#[wasm_bindgen(js_name = playerView, skip_typescript)]
pub fn player_view(
    #[wasm_bindgen(unchecked_param_type = "string | ZoneFile")] zone: JsValue,
    #[wasm_bindgen(unchecked_param_type = "Run")] run: JsValue,
    #[wasm_bindgen(unchecked_param_type = "Character | null")] character: Option<JsValue>,
) -> Result<JsValue, JsValue> {
    let text = zone_text(&zone, "playerView: zone")?;
    let run = optional_json(&run, "playerView: run")?.ok_or_else(|| {
        error(ApiError::new(
            "invalid_argument",
            "playerView: run must be a run object",
        ))
    })?;
    let character = optional_json(
        character.as_ref().unwrap_or(&JsValue::UNDEFINED),
        "playerView: character",
    )?;
    to_js(&api::player_view(&text, &run, character.as_deref()).map_err(error)?)
}

/// One line of a player's chat text through the bot's one command pipeline, as the chat bot
/// runs it: parsed (`options.syntax`: `"chat"` wants `!zone`/`!char`, `"loose"` does not), a
/// fork that timed out is taken first, then the command is answered. `zones` is the zone, or
/// every zone the bot offers; `player` is `{character, run}` as the previous call returned it
/// (null for a new player); `runId` is the id a run started by this text gets. Returns
/// `{replies, events, player}`: keep `player` for the next call.
// Declared by hand in the TypeScript section: wasm-bindgen cannot mark `options` optional.
#[wasm_bindgen(skip_typescript)]
pub fn command(
    #[wasm_bindgen(unchecked_param_type = "string | ZoneFile | ReadonlyArray<string | ZoneFile>")]
    zones: JsValue,
    #[wasm_bindgen(unchecked_param_type = "Player | null")] player: JsValue,
    text: JsValue,
    now: f64,
    #[wasm_bindgen(js_name = runId)] run_id: JsValue,
    #[wasm_bindgen(unchecked_param_type = "CommandOptions | null")] options: Option<JsValue>,
) -> Result<JsValue, JsValue> {
    let zones = Zones::load(zones)?;
    zones.command(player, text, now, run_id, options)
}

/// The zones a bot offers, parsed and built once: `Zones.load(files)`, then
/// `zones.command(player, text, now, runId)` as often as needed, without parsing and
/// building every zone on every call as the plain `command` does. Free it with `free()` when
/// done (or let the JavaScript engine collect it).
#[wasm_bindgen(skip_typescript)]
#[derive(Debug)]
pub struct Zones {
    zones: Vec<zonegraph_core::Zone>,
}

#[wasm_bindgen]
impl Zones {
    /// Parses and builds `files` (one zone, or an array of them: text or objects); throws
    /// naming the first that does not parse.
    #[wasm_bindgen(skip_typescript)]
    pub fn load(
        #[wasm_bindgen(
            unchecked_param_type = "string | ZoneFile | ReadonlyArray<string | ZoneFile>"
        )]
        files: JsValue,
    ) -> Result<Zones, JsValue> {
        let texts = if js_sys::Array::is_array(&files) {
            js_sys::Array::from(&files)
                .iter()
                .enumerate()
                .map(|(i, z)| zone_text(&z, &format!("Zones.load: files[{i}]")))
                .collect::<Result<Vec<_>, _>>()?
        } else {
            vec![zone_text(&files, "Zones.load: files")?]
        };
        Ok(Zones {
            zones: api::load_zones(&texts).map_err(error)?,
        })
    }

    /// The zone ids, in order.
    #[wasm_bindgen(getter, skip_typescript)]
    pub fn ids(&self) -> Vec<String> {
        self.zones.iter().map(|z| z.id.clone()).collect()
    }

    /// [`command`] on these zones.
    #[wasm_bindgen(skip_typescript)]
    pub fn command(
        &self,
        player: JsValue,
        text: JsValue,
        now: f64,
        #[wasm_bindgen(js_name = runId)] run_id: JsValue,
        options: Option<JsValue>,
    ) -> Result<JsValue, JsValue> {
        let (character, run) = player_parts(&player)?;
        let string = |v: &JsValue, name: &str| {
            v.as_string().ok_or_else(|| {
                error(ApiError::new(
                    "invalid_argument",
                    format!("command: {name} must be a string"),
                ))
            })
        };
        let text = string(&text, "text")?;
        let run_id = string(&run_id, "runId")?;
        let now = time_arg(now, "command: now")?;
        let options = command_options(options.as_ref().unwrap_or(&JsValue::UNDEFINED))?;
        to_js(
            &api::command_on(
                &self.zones,
                character.as_deref(),
                run.as_deref(),
                &text,
                now,
                &run_id,
                &options,
            )
            .map_err(error)?,
        )
    }
}

/// The fields of an options-like object: `None` for null/undefined, an error for anything
/// but a plain object or for a key not in `known`. Read with `Reflect`, not serde: a derived
/// reader per options type is kilobytes of wasm.
fn fields(value: &JsValue, what: &str, known: &[&str]) -> Result<Option<js_sys::Object>, JsValue> {
    if value.is_null() || value.is_undefined() {
        return Ok(None);
    }
    let invalid = |msg: String| error(ApiError::new("invalid_argument", msg));
    if !value.is_object() || value.is_function() || js_sys::Array::is_array(value) {
        return Err(invalid(format!("{what} must be an object")));
    }
    let object = js_sys::Object::from(value.clone());
    for key in js_sys::Object::keys(&object).iter() {
        let key = key.as_string().unwrap_or_default();
        if !known.contains(&key.as_str()) {
            return Err(invalid(format!(
                "{what}: unknown field `{key}`, expected one of {}",
                known.join(", ")
            )));
        }
    }
    Ok(Some(object))
}

fn get(object: &js_sys::Object, key: &str) -> JsValue {
    js_sys::Reflect::get(object, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
}

/// `{character, run}`: each as JSON, `None` when absent (a new player).
type PlayerJson = (Option<String>, Option<String>);

fn player_parts(player: &JsValue) -> Result<PlayerJson, JsValue> {
    let Some(p) = fields(player, "command: player", &["character", "run"])? else {
        return Ok((None, None));
    };
    Ok((
        optional_json(&get(&p, "character"), "command: player.character")?,
        optional_json(&get(&p, "run"), "command: player.run")?,
    ))
}

fn command_options(options: &JsValue) -> Result<api::CommandOptions, JsValue> {
    let what = "command: options";
    let mut out = api::CommandOptions::default();
    let Some(o) = fields(options, what, &["syntax", "fork_timeout_ms", "run_link"])? else {
        return Ok(out);
    };
    let invalid = |msg: &str| error(ApiError::new("invalid_argument", format!("{what}.{msg}")));
    let syntax = get(&o, "syntax");
    if !syntax.is_undefined() && !syntax.is_null() {
        out.syntax = match syntax.as_string().as_deref() {
            Some("chat") => zonegraph_core::command::Syntax::Chat,
            Some("loose") => zonegraph_core::command::Syntax::Loose,
            _ => return Err(invalid("syntax must be \"chat\" or \"loose\"")),
        };
    }
    let timeout = get(&o, "fork_timeout_ms");
    if !timeout.is_undefined() && !timeout.is_null() {
        let ms = timeout
            .as_f64()
            .ok_or_else(|| invalid("fork_timeout_ms must be a number"))?;
        out.fork_timeout_ms = time_arg(ms, &format!("{what}.fork_timeout_ms"))?;
    }
    let link = get(&o, "run_link");
    if !link.is_undefined() && !link.is_null() {
        out.run_link = Some(
            link.as_string()
                .ok_or_else(|| invalid("run_link must be a string"))?,
        );
    }
    Ok(out)
}

/// A time in milliseconds from a JS number: finite and a whole number of milliseconds.
fn time_arg(ms: f64, what: &str) -> Result<i64, JsValue> {
    // 2^53: every integer up to it is exact in a JS number.
    const MAX: f64 = 9_007_199_254_740_992.0;
    if ms.is_finite() && ms.fract() == 0.0 && ms.abs() <= MAX {
        Ok(ms as i64)
    } else {
        Err(error(ApiError::new(
            "invalid_argument",
            format!("{what} must be a whole number of milliseconds"),
        )))
    }
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

/// JSON of an optional object argument: `None` for `null`/`undefined`.
fn optional_json(value: &JsValue, what: &str) -> Result<Option<String>, JsValue> {
    if value.is_null() || value.is_undefined() {
        return Ok(None);
    }
    let invalid = || {
        error(ApiError::new(
            "invalid_argument",
            format!("{what} must be an object"),
        ))
    };
    if !value.is_object() || value.is_function() || js_sys::Array::is_array(value) {
        return Err(invalid());
    }
    match js_sys::JSON::stringify(value) {
        Ok(s) => s.as_string().map(Some).ok_or_else(invalid),
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

/// Plain JS objects (maps as objects, `None` as `null`), the same shape as the core's JSON
/// that `zonegraph check --json` prints. Every integer the core returns is within 2^53 (route
/// counts saturate at `analysis::MAX_ROUTES`), so numbers stay exact.
fn to_js<T: Serialize>(value: &T) -> Result<JsValue, JsValue> {
    value
        .serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .map_err(|e| {
            error(ApiError::new(
                "internal",
                format!("could not convert the result: {e}"),
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
  /** The designer's own data for the host game, passed on untouched (at most 4096 bytes of
   *  JSON): in `arrived` events and a host's encounter request. */
  extra?: Record<string, unknown>;
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
  /** What players read for a key id; a key without one reads as its words capitalised. */
  keys?: Record<string, string>;
  /** What players read for a room's `harvest_ref`. */
  harvests?: Record<string, string>;
}

export type Severity = "error" | "warning";

/** Every finding's stable code. */
export type DiagnosticCode =
  | "no_nodes" | "entry_count" | "boss_count" | "duplicate_node" | "unknown_node"
  | "self_loop" | "orphan_node" | "boss_unreachable" | "cycle" | "bad_lock_data"
  | "unknown_region" | "kind_flag_mismatch" | "extra_too_large"
  | "too_few_forks" | "secret_loot_bias" | "missing_hint" | "soft_lock" | "dead_end"
  | "key_never_granted" | "level_above_zone" | "impossible_dc" | "trivial_dc"
  | "boss_has_exits" | "too_hard" | "too_easy";

/** One finding, as `zonegraph check --json` prints it. */
export interface Diagnostic {
  severity: Severity;
  code: DiagnosticCode;
  /** Lowercase, no trailing period. */
  message: string;
  node?: string;
  edge?: { from: string; to: string };
  /**
   * Context, not findings of their own: for `soft_lock` and `dead_end`, the rooms from which a
   * run that fails every lock can only end up here. File order, at most 16 (the core's
   * `validate::MAX_RELATED_ROOMS`); absent when none.
   */
  related?: string[];
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
  /** Under the built-in rules, at both ends of the zone's level range; null when the zone is
   * not modelled (no single entry and boss, a loop on the way, more than 8 keys and regions
   * named by locks). */
  difficulty: Difficulty | null;
  /** The drawing (`layoutZone`): crossings, upward passages, overridden hints. */
  drawing: LayoutStats;
}

/** The zone's difficulty for a character of `min_level` and one of `max_level`. */
export interface Difficulty {
  min_level: LevelDifficulty;
  max_level: LevelDifficulty;
}

/** Exact figures for one level (standard array, no keys, the level fixed for the run), for a
 * player who takes the open option with the best odds at each fork; rounded to 4 decimals. */
export interface LevelDifficulty {
  level: number;
  /** Chance of beating the boss, 0 to 1. */
  win_chance: number;
  /** Wounds taken over the run (every lost encounter check, healed or not). */
  expected_wounds: number;
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

/** Where a layout's cells came from. */
export type LayoutMode = "hints" | "layered";

/** How a passage is routed: into the next row, down across rows, within a row, back up (a
 * loop), or from a room to itself. */
export type RouteKind = "down" | "long" | "same_row" | "back" | "self_loop";

/** A room's cell. */
export interface LayoutNode {
  id: string;
  col: number;
  row: number;
}

/** A passage's route. */
export interface LayoutEdge {
  /** Index of the passage in the file's `edges` array. */
  edge: number;
  from: string;
  to: string;
  lock: LockKind;
  route: RouteKind;
  /** Polyline in cell units from the room's centre to the other's: straight out of a room,
   * one straight line across the channel between two rows, straight in. */
  points: [number, number][];
}

/** `layoutZone`'s result. */
export interface Layout {
  mode: LayoutMode;
  /** Columns (largest column + 1). */
  width: number;
  /** Rows (largest row + 1). */
  height: number;
  /** Every room, in file order. */
  nodes: LayoutNode[];
  /** Every passage, in file order. */
  edges: LayoutEdge[];
  /** What the layout changed or decided, for designers. */
  notes: string[];
  /** What a reader of the drawing sees, counted on the polylines. */
  stats: LayoutStats;
}

/** `Layout.stats`. */
export interface LayoutStats {
  /** Points where two passages cross (passages that share a room meet there). */
  crossings: number;
  /** Passages drawn against their band's reading direction: those that close a loop. */
  upward: number;
  /** Hinted rooms drawn elsewhere than their hint, with why (the first 64). */
  overridden: { id: string; why: string }[];
  /** How many hinted rooms were drawn elsewhere, all told. */
  overridden_total: number;
}

/** `renderMap` options; each defaults to what the chat uses. */
export interface MapOptions {
  /** Characters per grid column (clamped to 12..=40; default 24). */
  cell_width?: number;
  /** Grid rows shown at most (clamped to 1..=100; default 24). */
  max_rows?: number;
  /** Grid columns shown at most (clamped to 1..=12; default 5). */
  max_columns?: number;
  /** The run's browser map, named when the chat map leaves something out. */
  run_link?: string;
}

/** A frozen lock evaluation of a fork option. */
export type Check =
  | { lock: "none" }
  | { lock: "perception_check"; d20: number; modifier: number; dc: number }
  | { lock: "stat_check"; ability: "str" | "dex" | "con" | "int" | "wis" | "cha"; d20: number; modifier: number; dc: number }
  | { lock: "key_required"; key_id: string; held: boolean }
  | { lock: "level_min"; min_level: number; level: number }
  | { lock: "region_clear"; region_id: string; cleared: boolean }
  | { lock: "invalid"; lock_kind: LockKind };

/** A fork waiting for the player; option `n` is `options[n - 1]`. */
export interface PendingFork {
  at: string;
  created_at: number;
  /** `revealed`: a refused `!zone go` told the player this option's roll or requirement. */
  options: { to_node: string; open: boolean; check: Check; revealed?: boolean }[];
}

/** One run through one zone, as the core serialises it (and the server stores it). */
export interface Run {
  run_id: string;
  zone_id: string;
  current_node: string;
  /** Rooms in the order first reached. */
  visited_nodes: string[];
  pending_fork?: PendingFork | null;
  cleared_regions?: string[];
  /** Harvest rooms cleared: node id → harvest_ref. */
  harvested?: Record<string, string>;
  keys_granted?: string[];
  revealed_secrets?: string[];
  /** Perception passages `[from, to]` whose check the run failed. */
  missed_passages?: [string, string][];
  /** The encounter waiting in the current room: the run cannot move on until it is resolved. */
  encounter?: { at: string; kind: EncounterKind; attempts?: number } | null;
  /** Failed encounter checks since the last rest camp (3 end the run). */
  wounds?: number;
  /** Experience this run earned (built-in rules). */
  xp_earned?: number;
  /** Rooms whose loot roll found loot. */
  loot?: string[];
  /** The last encounter check the chat showed. */
  last_check?: EncounterCheck | null;
  started_at: number;
  last_action_at: number;
  completed_at?: number | null;
  boss_defeated?: boolean;
  abandoned?: boolean;
  outcome?: Outcome | null;
}

/** What kind of fight a room holds. */
export type EncounterKind = "trap" | "elite" | "boss";

/** One encounter check of the built-in rules: d20 + modifier against the DC. */
export interface EncounterCheck {
  node: string;
  kind: EncounterKind;
  attempt: number;
  d20: number;
  modifier: number;
  dc: number;
  won: boolean;
}

/** What the engine needs to know about the player; every field may be left out (level 1,
 * every score 10, no keys, no XP). */
export interface Character {
  level?: number;
  scores?: { str?: number; dex?: number; con?: number; int?: number; wis?: number; cha?: number };
  keys?: string[];
  /** Experience under the built-in rules. */
  xp?: number;
}

export type Outcome = "victory" | "dead_end" | "abandoned" | "defeat" | "fled";

/** One exit of the current room as the player sees it. */
export interface ExitView {
  /** 1-based menu number. */
  number: number;
  /** null when hidden from the player. */
  to_node: string | null;
  /** null when hidden ("something"). */
  label: string | null;
  /** null when hidden or locked. */
  kind: NodeKind | null;
  state: "open" | "locked" | "unchecked";
  lock: LockKind;
  /** The hint (or a generic teaser) of a lock that failed or was not tested yet. */
  teaser: string | null;
  /** The frozen roll or requirement, once a refused `!zone go` has told the player. */
  revealed?: LockReason;
}

/** Everything that happens, in order. */
export type Event =
  | { event: "entered"; zone_id: string; zone_name: string }
  | { event: "moved"; from: string; to: string }
  | { event: "region_transition"; from_region: string; from_name: string; to_region: string; to_name: string }
  | { event: "arrived"; node: string; kind: NodeKind; label: string; room_number: number; room_total: number; extra?: Record<string, unknown> }
  | { event: "narration"; node: string; text: string }
  | { event: "room_cleared"; node: string; kind: NodeKind; label: string }
  | { event: "key_granted"; node: string; key_id: string; name: string }
  | { event: "harvested"; node: string; harvest_ref: string; name: string }
  | { event: "fork_offered"; at: string; label: string; options: ExitView[]; waiting: boolean }
  | { event: "picked_for_you"; option: number; to_node: string; label: string }
  | { event: "victory"; node: string; label: string }
  | { event: "dead_end"; node: string; label: string }
  | { event: "abandoned"; node: string; label: string }
  | { event: "rested"; node: string; label: string; healed: number }
  | { event: "encounter_started"; node: string; kind: EncounterKind; label: string }
  | { event: "encounter_rolled"; check: EncounterCheck }
  | { event: "host_decided"; node: string; kind: EncounterKind; outcome: "won" | "lost" | "fled"; message: string | null }
  | { event: "wounded"; wounds: number; max: number }
  | { event: "defeated"; node: string; label: string }
  | { event: "fled"; node: string; label: string }
  | { event: "xp_gained"; node: string; amount: number }
  | { event: "level_up"; level: number }
  | { event: "loot_rolled"; node: string; d20: number; loot_bias: string; total: number; dc: number; found: boolean };

/** Why a locked fork option refused. */
export type LockReason =
  | { reason: "perception"; total: number; dc: number }
  | { reason: "stat"; ability: "str" | "dex" | "con" | "int" | "wis" | "cha"; total: number; dc: number }
  | { reason: "level"; min_level: number; level: number }
  | { reason: "key" }
  | { reason: "region"; region_name: string }
  | { reason: "sealed" };

/** One chat reply: plain text, and HTML with every label, hint and narration escaped. */
export interface Reply {
  text: string;
  html: string;
  /**
   * For the player's eyes only (their run-map link, their sheet): send it to them privately
   * when answering in a room others read. Absent when false.
   */
  private?: true;
  /**
   * The run-map link the words carry (`!zone map` on a host with run links), as data: a
   * host that must shorten the words can still point at the map. Absent when there is none.
   */
  link?: string;
  /**
   * The numbered options the words list (a fork's menu), as data: `!zone go <number>`, on
   * line `line` of `text` (0 is the first), worded `words`. Absent when there are none.
   */
  choices?: Choice[];
}

/** One numbered option of a reply. */
export interface Choice {
  number: number;
  line: number;
  words: string;
}

/** What `!zone status` shows. */
export interface Status {
  zone_id: string;
  zone_name: string;
  node: string;
  label: string;
  kind: NodeKind | null;
  /** The current region's name, in a multi-region zone. */
  region: string | null;
  /** X of "Room X of Y": rooms the run has reached. */
  room_number: number;
  /** Y: rooms on the longest entry-to-boss route through rooms the player may know. */
  room_total: number;
  phase: { phase: "in_room" } | { phase: "fork" } | { phase: "waiting" } | { phase: "over"; outcome: Outcome };
  exits: ExitView[];
  fork_created_at: number | null;
  /** Keys held: the character's and those granted in this run. */
  keys: string[];
  /** What players read for each of `keys`, in the same order. */
  key_names: string[];
  /** The encounter that bars the way on (`!zone fight` or `!zone flee`). */
  encounter?: { kind: EncounterKind; attempts: number; max_wounds: number; dc: number };
  /** Wounds since the last rest camp. */
  wounds?: number;
  /** The last encounter check the chat showed. */
  last_check?: EncounterCheck;
}

/** A region as the player may know it. */
export interface RegionView {
  region_id: string;
  name: string;
}

/** A room on the player's map. An unknown room (behind a failed Perception check) has no id,
 * label or kind. */
export interface RoomView {
  id: string | null;
  label: string | null;
  kind: NodeKind | null;
  /** `""` in a single-region zone, and for an unknown room. */
  region_id: string;
  is_entry: boolean;
  is_boss: boolean;
  /** The designer's layout hint: `[column, row]`. */
  pos: [number, number] | null;
  /** Position in the visited path (1-based), when the run reached the room. */
  visit: number | null;
  current: boolean;
  /** Its menu number when the pending fork names it as an option. */
  option: number | null;
}

/** A passage on the player's map: its lock kind and hint, never the lock's data. */
export interface PassageView {
  /** Indices into `PlayerView.rooms`. */
  from: number;
  to: number;
  lock: LockKind;
  hint: string;
  /** The run walked it. */
  walked: boolean;
  /** Its menu number at the pending fork, when the menu names where it leads. */
  option: number | null;
}

/** Everything a player may know of a zone during a run (`playerView`): what the run-map page
 * draws. Undiscovered secrets are absent; no lock data, no run id. */
export interface PlayerView {
  zone_id: string;
  zone_name: string;
  tier: number;
  regions: RegionView[];
  /** Rooms on the player's map, in the zone file's order. */
  rooms: RoomView[];
  /** Passages between rooms on the map, in the zone file's order. */
  passages: PassageView[];
  /** `!zone status` as data. */
  status: Status;
}

/** What the bot keeps per player: pass what `command` returned to the next call. */
export interface Player {
  character?: Character;
  /** The active run, or the last one. */
  run?: Run | null;
}

/** `command` options; each has a default. */
export interface CommandOptions {
  /** `"chat"` (default): only `!zone …`/`!char …` are commands. `"loose"`: the `!` and the
   * `!zone` prefix are optional (`go 2`, `status`), as in a terminal. */
  syntax?: "chat" | "loose";
  /** How long a fork waits before its first open option is taken (default six hours). */
  fork_timeout_ms?: number;
  /** The player's run-map link, named by `!zone map`. */
  run_link?: string;
}

/** What one line of chat text did. */
export interface CommandResult {
  /** The replies to send, in order (a "picked for you" notice first). */
  replies: Reply[];
  events: Event[];
  /** The player's state after the command: keep it and pass it to the next call. */
  player: { character: Character; run: Run | null };
}

/** Everything the run's player may know of the zone. */
export function playerView(zone: string | ZoneFile, run: Run, character?: Character | null): PlayerView;

/** One line of a player's chat text through the bot's command pipeline. */
export function command(
  zones: string | ZoneFile | ReadonlyArray<string | ZoneFile>,
  player: Player | null,
  text: string,
  now: number,
  runId: string,
  options?: CommandOptions | null,
): CommandResult;

/** The zones a bot offers, parsed and built once (`command` parses every zone on every
 *  call). Free it with `free()` when done. */
export class Zones {
  private constructor();
  free(): void;
  /** Parses and builds the zones; throws (`ZonegraphError`) naming the first that does not
   *  parse. */
  static load(files: string | ZoneFile | ReadonlyArray<string | ZoneFile>): Zones;
  /** The zone ids, in order. */
  readonly ids: string[];
  /** One line of a player's chat text, as `command`, on these zones. */
  command(
    player: Player | null,
    text: string,
    now: number,
    runId: string,
    options?: CommandOptions | null,
  ): CommandResult;
}

/** The ASCII map the chat shows: the designer's view without a run, the player's with one. */
export function renderMap(zone: string | ZoneFile, run?: Run | null, options?: MapOptions | null): string;

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
