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
use crate::engine::{
    self, CharEdit, Character, EncounterRequest, Event, HostOutcome, Referee, Refusal, Run,
};
use crate::map;
use crate::zone::Zone;

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

/// Who may edit character sheets, as the host decides for the sender of one command.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Authority {
    /// A player: `!char` shows the sheet; only admins set it.
    #[default]
    Player,
    /// An operator: edits their own sheet and, through the host, anyone's
    /// (`!char set @user …`, `!char grant`, `!char revoke`).
    Admin,
    /// A designer's playtest (the terminal, the viewer, a `--sandbox` server): everyone edits
    /// their own sheet.
    Sandbox,
}

impl Authority {
    fn edits_own_sheet(self) -> bool {
        matches!(self, Authority::Admin | Authority::Sandbox)
    }
}

/// An admin's edit of `user`'s sheet, for the host to apply to that user's stored character
/// (with [`Character::edit`]) and answer with [`chat::admin_edited`] or [`chat::refusal`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct AdminEdit {
    pub user: String,
    pub edit: CharEdit,
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
    /// Who may edit character sheets.
    pub authority: Authority,
}

/// Who decides encounters and keeps character sheets, as the host says for one command.
#[derive(Clone, Copy, Debug, Default)]
pub enum Game<'a> {
    /// The built-in rules ([`crate::rules`]): dice decide encounters, clearing rooms earns
    /// XP and levels.
    #[default]
    BuiltIn,
    /// A host game decides encounters and owns the sheet (no built-in XP). `None` until it
    /// has decided the encounter this command meets: the command then changes nothing and
    /// comes back as [`Response::encounter_request`]; the host asks its game and calls again,
    /// from the same stored state, with the decision.
    Host(Option<&'a HostOutcome>),
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
    /// An admin's edit of a user's sheet: the host applies it and adds the reply.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub admin_edit: Option<AdminEdit>,
    /// Under [`Game::Host`] with no decision: the encounter the host game must decide before
    /// this command can be answered. The command's replies and state are to be dropped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub encounter_request: Option<EncounterRequest>,
    /// The command's word ([`Command::verb`]); `None` when the text was no command. For a
    /// host's log, never the text itself.
    #[serde(skip)]
    pub verb: Option<&'static str>,
    /// Whether the command was carried out, as data beside its words (a host's log).
    #[serde(skip)]
    pub handled: Handled,
}

/// What became of the command of a [`Response`], beside its words: for a host's log or
/// metrics. A refused command changed nothing of the command's own (a fork that timed out
/// before it did still move).
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Handled {
    /// Carried out (or, for an admin's edit of another sheet, handed to the host).
    #[default]
    Done,
    /// Understood, and refused: no run, a locked way, not an admin…
    Refused(Refusal),
    /// The text was not a command the bot understands.
    NotUnderstood(command::CommandError),
}

/// Applies one line of `player`'s chat `text`: a fork that timed out before it is resolved
/// first (its "picked for you" notice comes first, whatever the text says), then the command
/// is parsed and answered. `player` is updated in place. Encounters are decided by the
/// built-in rules; see [`handle_as`].
pub fn handle(zones: &[Zone], player: &mut Player, text: &str, cx: &Context) -> Response {
    handle_as(zones, player, text, cx, Game::BuiltIn)
}

/// [`handle`], with encounters decided as `game` says.
pub fn handle_as(
    zones: &[Zone],
    player: &mut Player,
    text: &str,
    cx: &Context,
    game: Game<'_>,
) -> Response {
    let mut out = Response::default();
    if let Some(events) = sweep_events(zones, player, cx) {
        out.replies.push(chat::events(&events));
        out.events.extend(events);
    }
    match command::parse_with(text, cx.syntax) {
        Ok(cmd) => {
            out.verb = Some(cmd.verb());
            // A run whose zone was withdrawn must not keep the player from other zones.
            if matches!(cmd, Command::Enter { .. })
                && let Some(reply) = abandon_withdrawn(zones, player, cx.now)
            {
                out.replies.push(reply);
            }
            if let Command::CharAdmin { user, edit } = cmd {
                match cx.authority {
                    Authority::Admin => out.admin_edit = Some(AdminEdit { user, edit }),
                    Authority::Player | Authority::Sandbox => {
                        out.replies.push(chat::refusal(&Refusal::AdminsOnly));
                        out.handled = Handled::Refused(Refusal::AdminsOnly);
                    }
                }
                return out;
            }
            match answer(zones, player, &cmd, cx, game, &mut out) {
                // A command waiting for the host's decision has nothing to say yet.
                Ok(_) if out.encounter_request.is_some() => {}
                Ok(reply) => out.replies.push(reply),
                Err(refusal) => {
                    out.replies.push(chat::refusal(&refusal));
                    out.handled = Handled::Refused(refusal);
                }
            }
        }
        Err(e) => {
            out.replies.push(chat::command_error(&e));
            out.handled = Handled::NotUnderstood(e);
        }
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
    sweep_told(zones, player, cx).map(|(reply, _)| reply)
}

/// [`sweep`], with the events the notice words (for a host game that follows them).
pub fn sweep_told(
    zones: &[Zone],
    player: &mut Player,
    cx: &Context,
) -> Option<(Reply, Vec<Event>)> {
    sweep_events(zones, player, cx).map(|events| (chat::events(&events), events))
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
    game: Game<'_>,
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
        Command::Advance | Command::Fight => {
            let (zone, run) = current_mut(zones, &mut player.run)?;
            let referee = match game {
                Game::BuiltIn => Referee::BuiltIn,
                Game::Host(decision) => Referee::Host(decision),
            };
            if let Game::Host(None) = game
                && let Some(request) = engine::encounter_request(zone, run, &player.character)
            {
                out.encounter_request = Some(request);
                return Ok(Reply::default());
            }
            let mut events = if *command == Command::Fight {
                engine::fight(zone, run, &player.character, referee, cx.now)?
            } else {
                engine::advance_as(zone, run, &player.character, referee, cx.now)?
            };
            player.character.keep_keys_from(run);
            if let Game::BuiltIn = game {
                gain_xp(&mut player.character, &mut events);
            }
            Ok(said(events, out))
        }
        Command::Flee => {
            let (zone, run) = current_mut(zones, &mut player.run)?;
            let events = engine::flee(zone, run, cx.now)?;
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
        Command::CharLevel { level } => edit_own(player, cx, CharEdit::Level { level: *level }),
        Command::CharScore { ability, score } => edit_own(
            player,
            cx,
            CharEdit::Score {
                ability: *ability,
                score: *score,
            },
        ),
        Command::CharKeyAdd { key } => edit_own(player, cx, CharEdit::Grant { key: key.clone() }),
        Command::CharKeyRemove { key } => {
            edit_own(player, cx, CharEdit::Revoke { key: key.clone() })
        }
        // Taken out by `handle`: the host applies it to another user's sheet.
        Command::CharAdmin { .. } => Err(Refusal::AdminsOnly),
    }
}

/// Adds the XP the events earned to the character (built-in rules) and tells a new level.
fn gain_xp(character: &mut Character, events: &mut Vec<Event>) {
    let earned = events
        .iter()
        .map(|e| match e {
            Event::XpGained { amount, .. } => *amount,
            _ => 0,
        })
        .fold(0u32, u32::saturating_add);
    if let Some(level) = character.gain_xp(earned) {
        events.push(Event::LevelUp { level });
    }
}

/// The sender's edit of their own sheet, when [`Context::authority`] allows it.
fn edit_own(player: &mut Player, cx: &Context, edit: CharEdit) -> Result<Reply, Refusal> {
    if !cx.authority.edits_own_sheet() {
        return Err(Refusal::SheetLocked);
    }
    player.character.edit(&edit)?;
    Ok(chat::character(&player.character))
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
