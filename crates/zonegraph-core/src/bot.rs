//! The bot: one line of a player's chat text applied to their character and run, answered in
//! chat words — the one command pipeline.
//!
//! Every host — the server (HTTP API and Matrix), the terminal's `play`, the viewer's
//! playtest, the wasm module and the tests — calls [`handle`] with the player's text and
//! stored state, and gets back the replies and events while the state is updated in place:
//! parse, apply a fork that timed out, answer. So they all behave and speak alike. Hosts own
//! storage, the clock and run ids; this module owns none.

use serde::{Deserialize, Serialize};

use crate::chat::{self, Reply};
use crate::command::{self, Command, Syntax};
use crate::engine::{self, Character, Event, Refusal, Run};
use crate::map;
use crate::zone::{self, Zone};

/// What the bot keeps per player.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Player {
    pub character: Character,
    /// The active run, or the last one (kept so `!zone status` and `!zone map` still work
    /// after it ended).
    pub run: Option<Run>,
}

impl Player {
    /// The run that is still going, if any.
    pub fn active_run(&self) -> Option<&Run> {
        self.run.as_ref().filter(|r| !r.is_over())
    }
}

/// What the host supplies for one command.
#[derive(Clone, Debug)]
pub struct Context {
    /// Unix milliseconds.
    pub now: i64,
    /// The id a run started by this command gets (`!zone enter`).
    pub new_run_id: String,
    /// The player's run-map link, for `!zone map`.
    pub run_link: Option<String>,
    /// How long a fork waits before the first open option is taken.
    pub fork_timeout_ms: i64,
    /// Whether the text must start with `!zone`/`!char` (a chat room) or not (a terminal).
    pub syntax: Syntax,
}

/// Finds a zone by id or by name, case-insensitively.
pub fn find_zone<'a>(zones: &'a [Zone], given: &str) -> Option<&'a Zone> {
    let g = given.trim();
    zones
        .iter()
        .find(|z| z.id.eq_ignore_ascii_case(g))
        .or_else(|| zones.iter().find(|z| z.name.eq_ignore_ascii_case(g)))
}

/// What one line of chat text did.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Response {
    /// The replies to send, in order (a "picked for you" notice first).
    pub replies: Vec<Reply>,
    /// What happened, in order, for hosts that react to it (a combat hook, a live map).
    pub events: Vec<Event>,
    /// The run a `!zone enter` replaced, as it stood then (it had ended, perhaps by the fork
    /// timeout this very command applied): a host that stores runs one row each writes it.
    #[serde(skip)]
    pub replaced_run: Option<Run>,
}

/// Applies one line of `player`'s chat `text`: a fork that timed out before it is resolved
/// first (its "picked for you" notice comes first, whatever the text says), then the command
/// is parsed and answered. `player` is updated in place.
pub fn handle(zones: &[Zone], player: &mut Player, text: &str, cx: &Context) -> Response {
    let mut out = Response::default();
    if let Some(events) = sweep_events(zones, player, cx) {
        out.replies.push(chat::events(&events));
        out.events.extend(events);
    }
    match command::parse_with(text, cx.syntax) {
        Ok(cmd) => {
            // A run whose zone was withdrawn must not keep the player from other zones.
            if matches!(cmd, Command::Enter { .. })
                && let Some(reply) = abandon_withdrawn(zones, player, cx.now)
            {
                out.replies.push(reply);
            }
            match answer(zones, player, &cmd, cx, &mut out) {
                Ok(reply) => out.replies.push(reply),
                Err(refusal) => out.replies.push(chat::refusal(&refusal)),
            }
        }
        Err(e) => out.replies.push(chat::command_error(&e)),
    }
    out
}

/// Abandons the player's active run when its zone is no longer loaded (withdrawn between
/// starts): it cannot go on, and must not keep the player from other zones. The reply to
/// send, or `None` when there is no such run.
pub fn abandon_withdrawn(zones: &[Zone], player: &mut Player, now: i64) -> Option<Reply> {
    let run = player.run.as_mut().filter(|r| !r.is_over())?;
    if zones.iter().any(|z| z.id == run.zone_id) {
        return None;
    }
    engine::abandon_without_zone(run, now).ok()?;
    Some(chat::abandoned_withdrawn(&run.zone_id))
}

/// Applies the fork timeout to the player's run (the server's sweeper, between commands);
/// the notice to send, if a choice was made.
pub fn sweep(zones: &[Zone], player: &mut Player, cx: &Context) -> Option<Reply> {
    sweep_events(zones, player, cx).map(|events| chat::events(&events))
}

fn sweep_events(zones: &[Zone], player: &mut Player, cx: &Context) -> Option<Vec<Event>> {
    let run = player.run.as_mut().filter(|r| !r.is_over())?;
    let zone = zone_of(zones, run).ok()?;
    let events = engine::expire(zone, run, &player.character, cx.now, cx.fork_timeout_ms);
    if events.is_empty() {
        return None;
    }
    player.character.keep_keys_from(run);
    Some(events)
}

fn answer(
    zones: &[Zone],
    player: &mut Player,
    command: &Command,
    cx: &Context,
    out: &mut Response,
) -> Result<Reply, Refusal> {
    // Words the engine's events and keeps them for the host.
    let said = |events: Vec<Event>, out: &mut Response| {
        let reply = chat::events(&events);
        out.events.extend(events);
        reply
    };
    match command {
        Command::Help => Ok(chat::help()),
        Command::List => {
            let list: Vec<&Zone> = zones.iter().collect();
            Ok(chat::zone_list(&list, &player.character))
        }
        Command::Enter { zone } => {
            if let Some(run) = player.active_run() {
                let zone_name = zones
                    .iter()
                    .find(|z| z.id == run.zone_id)
                    .map_or_else(|| run.zone_id.clone(), |z| z.name.clone());
                return Err(Refusal::AlreadyInRun { zone_name });
            }
            let z = find_zone(zones, zone).ok_or_else(|| Refusal::UnknownZone {
                given: zone.trim().to_string(),
                known: zones.iter().map(|z| z.id.clone()).collect(),
            })?;
            let (run, events) = engine::start(z, &cx.new_run_id, &player.character, cx.now)?;
            out.replaced_run = player.run.replace(run);
            Ok(said(events, out))
        }
        Command::Status => {
            let (zone, run) = current(zones, player)?;
            Ok(chat::status(&engine::status(zone, run, &player.character)))
        }
        Command::Advance => {
            let (zone, run) = current_mut(zones, &mut player.run)?;
            let events = engine::advance(zone, run, &player.character, cx.now)?;
            player.character.keep_keys_from(run);
            Ok(said(events, out))
        }
        Command::Go { choice } => {
            let (zone, run) = current_mut(zones, &mut player.run)?;
            let events = engine::choose(zone, run, &player.character, choice, cx.now)?;
            player.character.keep_keys_from(run);
            Ok(said(events, out))
        }
        Command::Map => {
            let (zone, run) = current(zones, player)?;
            let view = map::MapView::of_run(zone, run);
            let drawn = map::render_map(zone, &view, &map::MapOptions::default());
            Ok(chat::map(&drawn, cx.run_link.as_deref()))
        }
        Command::Abandon => {
            if let Some(reply) = abandon_withdrawn(zones, player, cx.now) {
                return Ok(reply);
            }
            let (zone, run) = current_mut(zones, &mut player.run)?;
            let events = engine::abandon(zone, run, cx.now)?;
            Ok(said(events, out))
        }
        Command::CharShow => Ok(chat::character(&player.character)),
        Command::CharLevel { level } => {
            player.character.level = *level;
            Ok(chat::character(&player.character))
        }
        Command::CharScore { ability, score } => {
            player.character.set_score(*ability, *score);
            Ok(chat::character(&player.character))
        }
        Command::CharKeyAdd { key } => {
            let c = &mut player.character;
            if zone::normalize_key(key).len() > engine::MAX_KEY_BYTES {
                return Err(Refusal::KeyTooLong {
                    max_bytes: engine::MAX_KEY_BYTES,
                });
            }
            if !c.has_key(key) && c.keys.len() >= engine::MAX_KEYS {
                return Err(Refusal::TooManyKeys {
                    max: engine::MAX_KEYS,
                });
            }
            c.add_key(key);
            Ok(chat::character(c))
        }
        Command::CharKeyRemove { key } => {
            player.character.remove_key(key);
            Ok(chat::character(&player.character))
        }
    }
}

/// The player's run (active or last) and its zone.
fn current<'a>(zones: &'a [Zone], player: &'a Player) -> Result<(&'a Zone, &'a Run), Refusal> {
    let run = player.run.as_ref().ok_or(Refusal::NoRun)?;
    Ok((zone_of(zones, run)?, run))
}

fn current_mut<'a>(
    zones: &'a [Zone],
    run: &'a mut Option<Run>,
) -> Result<(&'a Zone, &'a mut Run), Refusal> {
    let run = run.as_mut().ok_or(Refusal::NoRun)?;
    Ok((zone_of(zones, run)?, run))
}

/// The zone a run belongs to; a zone that is no longer loaded was withdrawn.
fn zone_of<'a>(zones: &'a [Zone], run: &Run) -> Result<&'a Zone, Refusal> {
    zones
        .iter()
        .find(|z| z.id == run.zone_id)
        .ok_or_else(|| Refusal::ZoneWithdrawn {
            zone_id: run.zone_id.clone(),
            run_over: run.is_over(),
        })
}
