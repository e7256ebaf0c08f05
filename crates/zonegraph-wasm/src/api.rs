//! The façade in plain Rust: what each export computes, with serde results and typed errors.
//!
//! Nothing here knows JsValue, so the native tests run exactly this code and write the parity
//! fixture the browser tests compare against. `lib.rs` only converts in and out.

use serde::Serialize;
use zonegraph_core::bot::{self, Player};
use zonegraph_core::command::Syntax;
use zonegraph_core::engine::{self, Character, Event, PlayerView, Run};
use zonegraph_core::{Reply, Zone, format, roll, share, zone};

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

/// A zone's grid layout: cells for rooms (hints respected, layered otherwise) and routes for
/// passages, for drawing.
pub fn layout_zone(text: &str) -> Result<zonegraph_core::layout::Layout, ApiError> {
    let (zone, _) = zone::load(text)?;
    Ok(zonegraph_core::layout::layout(&zone))
}

/// Options of [`render_map`], all optional (the chat's defaults otherwise).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MapOptionsIn {
    pub cell_width: Option<usize>,
    pub max_rows: Option<usize>,
    pub max_columns: Option<usize>,
    pub run_link: Option<String>,
}

/// The `!zone map` text: the designer's view without a run, the player's with one (JSON of
/// the core's `Run`).
pub fn render_map(
    text: &str,
    run_json: Option<&str>,
    options_json: Option<&str>,
) -> Result<String, ApiError> {
    let (zone, _) = zone::load(text)?;
    let view = match run_json {
        Some(run) => {
            let run: zonegraph_core::Run = from_json(run, "run")?;
            zonegraph_core::map::MapView::of_run(&zone, &run)
        }
        None => zonegraph_core::map::MapView::designer(),
    };
    let given: MapOptionsIn = match options_json {
        Some(o) => from_json(o, "options")?,
        None => MapOptionsIn::default(),
    };
    let defaults = zonegraph_core::map::MapOptions::default();
    let opts = zonegraph_core::map::MapOptions {
        cell_width: given.cell_width.unwrap_or(defaults.cell_width),
        max_rows: given.max_rows.unwrap_or(defaults.max_rows),
        max_columns: given.max_columns.unwrap_or(defaults.max_columns),
        run_link: given.run_link,
    };
    Ok(zonegraph_core::map::render_map(&zone, &view, &opts))
}

/// Reads an argument given as JSON (a run, a character, options): `invalid_argument` naming
/// the argument otherwise. Plain serde_json, not serde_path_to_error as for zone files: the
/// path would double the size of every run and character deserialiser in the module, and
/// these objects come from programs, not from people typing.
pub fn from_json<T: serde::de::DeserializeOwned>(text: &str, what: &str) -> Result<T, ApiError> {
    serde_json::from_str(text).map_err(|e| {
        let msg = e.to_string();
        let msg = msg.rfind(" at line ").map_or(msg.as_str(), |i| &msg[..i]);
        ApiError::new("invalid_argument", format!("{what}: {msg}"))
    })
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

/// Everything the run's player may know of the zone ([`engine::player_view`], the one owner):
/// what the run-map page draws and `!zone status` words. No lock data, no run id.
pub fn player_view(
    zone_text: &str,
    run_json: &str,
    character_json: Option<&str>,
) -> Result<PlayerView, ApiError> {
    let (zone, _) = zone::load(zone_text)?;
    let run: Run = from_json(run_json, "run")?;
    let character: Character = match character_json {
        Some(c) => from_json(c, "character")?,
        None => Character::standard_for(&zone),
    };
    Ok(engine::player_view(&zone, &run, &character))
}

/// Options of [`command`]; `Default` is what a chat room wants.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommandOptions {
    /// `Chat` wants `!zone`/`!char`; `Loose` (a terminal, a playtest box) does not.
    pub syntax: Syntax,
    /// How long a fork waits before its first open option is taken.
    pub fork_timeout_ms: i64,
    /// The player's run-map link, named by `!zone map`.
    pub run_link: Option<String>,
}

impl Default for CommandOptions {
    fn default() -> Self {
        CommandOptions {
            syntax: Syntax::Chat,
            fork_timeout_ms: engine::DEFAULT_FORK_TIMEOUT_MS,
            run_link: None,
        }
    }
}

/// What one line of chat text did: the replies to send, in order, the events, and the
/// player's state after it (to keep and pass to the next call).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CommandResult {
    pub replies: Vec<Reply>,
    pub events: Vec<Event>,
    pub player: Player,
}

/// One line of a player's chat text through the bot's one pipeline ([`bot::handle`]): parse,
/// apply a fork that timed out, answer. `zone_texts` are every zone the bot offers; the
/// player is its character and run (JSON; a new player has neither); `run_id` is the id a
/// run started by this text gets.
pub fn command(
    zone_texts: &[String],
    character_json: Option<&str>,
    run_json: Option<&str>,
    text: &str,
    now: i64,
    run_id: &str,
    options: &CommandOptions,
) -> Result<CommandResult, ApiError> {
    let zones = load_zones(zone_texts)?;
    command_on(&zones, character_json, run_json, text, now, run_id, options)
}

/// Parses and builds every zone once, for [`command_on`] to reuse (the `Zones` handle);
/// a zone that does not parse is an error naming it (`zones[2]: …`).
pub fn load_zones(zone_texts: &[String]) -> Result<Vec<Zone>, ApiError> {
    zone_texts
        .iter()
        .enumerate()
        .map(|(i, t)| {
            zone::load(t).map(|(z, _)| z).map_err(|e| {
                let mut e = ApiError::from(e);
                if zone_texts.len() > 1 {
                    e.message = format!("zones[{i}]: {}", e.message);
                }
                e
            })
        })
        .collect()
}

/// [`command`] on zones [`load_zones`] built already.
pub fn command_on(
    zones: &[Zone],
    character_json: Option<&str>,
    run_json: Option<&str>,
    text: &str,
    now: i64,
    run_id: &str,
    options: &CommandOptions,
) -> Result<CommandResult, ApiError> {
    // The player's two parts are read with the readers `player_view` uses already: a derived
    // reader for `{character, run}` would add its own to the module.
    let mut player = Player {
        // A new player, as the server starts one.
        character: match character_json {
            Some(c) => from_json(c, "player.character")?,
            None => Character::standard(zonegraph_core::rules::STARTING_LEVEL),
        },
        run: run_json.map(|r| from_json(r, "player.run")).transpose()?,
    };
    let cx = bot::Context {
        now,
        new_run_id: run_id.to_string(),
        run_link: options.run_link.clone(),
        fork_timeout_ms: options.fork_timeout_ms,
        syntax: options.syntax,
        authority: bot::Authority::Sandbox,
    };
    let out = bot::handle(zones, &mut player, text, &cx);
    Ok(CommandResult {
        replies: out.replies,
        events: out.events,
        player,
    })
}
