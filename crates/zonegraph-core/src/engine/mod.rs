//! The navigation engine: a pure state machine over a zone's graph.
//!
//! Every function takes the zone, the run and the character and returns typed [`Event`]s or a
//! typed [`Refusal`]; [`crate::chat`] turns both into words. Nothing here reads a clock or
//! draws a random number: callers pass `now` (unix milliseconds) and the run id, and every
//! roll is [`roll::d20`] of the run id and the passage. The stored run lives in [`run`],
//! what a player may see of it in [`view`].

pub mod run;
pub mod view;

use std::collections::BTreeSet;

use petgraph::graph::NodeIndex;
use serde::{Deserialize, Serialize};

use crate::format::{LockKind, NodeKind};
use crate::narration;
use crate::roll;
use crate::rules::{self, EncounterKind, MAX_KEY_BYTES, MAX_KEYS};
use crate::zone::{Ability, Lock, NodeId, Zone, legacy_node_id, normalize_key};

pub use run::{
    CharEdit, Character, Check, EncounterCheck, ForkOption, LockReason, MetFork, Outcome,
    PendingEncounter, PendingFork, Run,
};
pub use view::{
    EncounterView, ExitState, ExitView, Knowledge, Phase, PlayerView, Status, exit_views,
    player_view, status, visible_to_player,
};

/// How long a fork waits for the player before the first open option is taken (six hours,
/// as the original design proposed).
pub const DEFAULT_FORK_TIMEOUT_MS: i64 = 6 * 60 * 60 * 1000;

/// When a fork is due: at `now`, with forks waiting `timeout_ms`, a fork offered at or
/// before the instant this returns is due, and its first open option is taken for the
/// player. The one statement of that rule: [`expire`] asks it of a run's fork, and a host
/// that keeps forks' offer times in a database selects the due ones against it.
pub fn forks_due_offered_by(now: i64, timeout_ms: i64) -> i64 {
    now.saturating_sub(timeout_ms)
}

/// Everything that happens, in order. The chat module words these; hosts can hook a combat
/// resolution onto `Arrived`'s kind.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    Entered {
        zone_id: String,
        zone_name: String,
    },
    Moved {
        from: NodeId,
        to: NodeId,
    },
    RegionTransition {
        from_region: String,
        from_name: String,
        to_region: String,
        to_name: String,
    },
    Arrived {
        node: NodeId,
        kind: NodeKind,
        label: String,
        room_number: usize,
        room_total: usize,
        /// The room's `content.extra`, as the designer wrote it, for the host game.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        extra: Option<serde_json::Map<String, serde_json::Value>>,
    },
    Narration {
        node: NodeId,
        text: String,
    },
    RoomCleared {
        node: NodeId,
        kind: NodeKind,
        label: String,
    },
    KeyGranted {
        node: NodeId,
        key_id: String,
        /// What players read for it (the zone's `keys`, else the id's words).
        name: String,
    },
    Harvested {
        node: NodeId,
        harvest_ref: String,
        /// What players read for it (the zone's `harvests`, else the id's words).
        name: String,
    },
    /// A fork waits for `!zone go N`; `waiting` when no option is open.
    ForkOffered {
        at: NodeId,
        label: String,
        options: Vec<ExitView>,
        waiting: bool,
    },
    /// The fork timed out and its first open option was taken.
    PickedForYou {
        option: usize,
        to_node: NodeId,
        label: String,
    },
    Victory {
        node: NodeId,
        label: String,
    },
    DeadEnd {
        node: NodeId,
        label: String,
    },
    Abandoned {
        node: NodeId,
        label: String,
    },
    /// A rest camp healed the run's wounds.
    Rested {
        node: NodeId,
        label: String,
        healed: u32,
    },
    /// The room holds an encounter: the run stays until `!zone fight` or `!zone flee`.
    EncounterStarted {
        node: NodeId,
        kind: EncounterKind,
        label: String,
    },
    /// The built-in resolver's check: d20 + modifier against the DC.
    EncounterRolled {
        check: EncounterCheck,
    },
    /// A host game decided the encounter; its message is shown word for word.
    HostDecided {
        node: NodeId,
        kind: EncounterKind,
        outcome: Verdict,
        message: Option<String>,
    },
    /// A lost check: `wounds` of `max`.
    Wounded {
        wounds: u32,
        max: u32,
    },
    /// The run ended in defeat.
    Defeated {
        node: NodeId,
        label: String,
    },
    /// The player fled: the run ended.
    Fled {
        node: NodeId,
        label: String,
    },
    /// Experience for clearing a room (built-in rules).
    XpGained {
        node: NodeId,
        amount: u32,
    },
    /// The character reached a new level (built-in rules).
    LevelUp {
        level: u32,
    },
    /// The loot roll of a cleared room: `d20` × `loot_bias`, rounded down, against
    /// [`rules::LOOT_DC`].
    LootRolled {
        node: NodeId,
        d20: u32,
        loot_bias: String,
        total: u32,
        dc: u32,
        found: bool,
    },
}

/// A host game's decision of an encounter (the server's `--host-hook`), as its JSON reads:
/// `{"outcome": "won"|"lost"|"fled", "message"?: "...", "keys"?: ["..."]}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostOutcome {
    pub outcome: Verdict,
    /// Shown to the player word for word instead of the built-in words.
    #[serde(default)]
    pub message: Option<String>,
    /// Keys the encounter grants.
    #[serde(default)]
    pub keys: Vec<String>,
}

/// How an encounter a host game decided went.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The room is cleared and the run moves on.
    Won,
    /// The run ends in defeat.
    Lost,
    /// The run ends: the player fled.
    Fled,
}

/// Who decides an encounter.
#[derive(Clone, Copy, Debug)]
pub enum Referee<'a> {
    /// The built-in rules ([`crate::rules`]): dice, wounds, XP and loot.
    BuiltIn,
    /// A host game: its decision of the encounter (`None` before it has decided: the
    /// encounter is refused with [`Refusal::AwaitingHost`]); no XP, loot or wounds from the
    /// built-in rules.
    Host(Option<&'a HostOutcome>),
}

/// What a host game is asked to decide: the encounter waiting in a run's current room.
/// (The server adds the user and the run's token.)
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EncounterRequest {
    pub zone_id: String,
    pub tier: u8,
    pub room: EncounterRoom,
    pub character: Character,
}

/// The room of an [`EncounterRequest`].
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EncounterRoom {
    pub node_id: NodeId,
    pub kind: NodeKind,
    pub label: String,
    pub encounter_override: String,
    pub loot_bias: f64,
    /// The room's `content.extra`, as the designer wrote it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extra: Option<serde_json::Map<String, serde_json::Value>>,
}

/// Why a command was refused. Worded by [`crate::chat::refusal`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "refusal", rename_all = "snake_case")]
pub enum Refusal {
    /// The player has no active run.
    NoRun,
    /// The player already has an active run (for hosts that allow one run per player).
    AlreadyInRun {
        zone_name: String,
    },
    /// No zone by that name.
    UnknownZone {
        given: String,
        known: Vec<String>,
    },
    /// The zone cannot be played (no single entry room).
    Unplayable {
        zone_name: String,
    },
    LevelTooLow {
        zone_name: String,
        min_level: u32,
        level: u32,
    },
    RunOver {
        outcome: Outcome,
    },
    /// The run belongs to another zone than the one passed.
    WrongZone {
        run_zone: String,
        zone: String,
    },
    /// The run names a room the zone does not have.
    UnknownRoom {
        node: String,
    },
    /// A legacy room index past the zone's rooms.
    LegacyRoomUnknown {
        current_room: usize,
        rooms: usize,
    },
    NoForkPending,
    /// `!zone advance`, `fight` or `flee` while a fork waits for a choice.
    ForkPending {
        options: usize,
    },
    /// The same while every option of the fork is locked: no choice opens, and waiting
    /// does not either (the checks were made once); only leaving helps.
    ForkBarred {
        options: usize,
    },
    NotANumber {
        given: String,
        max: usize,
    },
    OutOfRange {
        given: String,
        max: usize,
    },
    Locked {
        option: usize,
        label: Option<String>,
        reason: LockReason,
    },
    /// `!char key add` with a key id longer than [`MAX_KEY_BYTES`].
    KeyTooLong {
        max_bytes: usize,
    },
    /// `!char key add` when the character already holds [`MAX_KEYS`].
    TooManyKeys {
        max: usize,
    },
    /// A player tried to edit their own sheet: only the server's admins set it (outside a
    /// sandbox).
    SheetLocked,
    /// `!char set`, `!char grant` or `!char revoke` from someone who is not an admin.
    AdminsOnly,
    /// The run's zone is no longer loaded (withdrawn from the host between starts).
    ZoneWithdrawn {
        zone_id: String,
        run_over: bool,
    },
    /// `!zone fight` or `!zone flee` with no encounter in the room.
    NoEncounter,
    /// An encounter a host game must decide, asked without its decision (the host was busy).
    AwaitingHost,
    /// The host game refused this player's call (a sheet out of the rules' range, a player
    /// it does not know): theirs alone, nothing happened. `encounter`: the call was the
    /// encounter's, else the sheet's.
    HostRefused {
        encounter: bool,
    },
    /// `!zone go` while an encounter bars the way.
    EncounterPending {
        kind: EncounterKind,
    },
}

/// Per-call working state: the lazily computed "of Y" total (the player's map does not
/// change within one step).
struct Ctx {
    total: Option<usize>,
}

impl Ctx {
    fn new() -> Ctx {
        Ctx { total: None }
    }

    fn total(&mut self, zone: &Zone, run: &Run) -> usize {
        let t = *self
            .total
            .get_or_insert_with(|| view::room_total(zone, run));
        t.max(run.room_number())
    }
}

/// Starts a run at the zone's entry.
pub fn start(
    zone: &Zone,
    run_id: &str,
    character: &Character,
    now: i64,
) -> Result<(Run, Vec<Event>), Refusal> {
    let entry = zone.entry().ok_or_else(|| Refusal::Unplayable {
        zone_name: zone.name.clone(),
    })?;
    if character.level < zone.min_level {
        return Err(Refusal::LevelTooLow {
            zone_name: zone.name.clone(),
            min_level: zone.min_level,
            level: character.level,
        });
    }
    let mut run = Run::fresh(run_id, zone, zone.node(entry).id.clone(), Vec::new(), now);
    run.level = character.level;
    let mut events = vec![Event::Entered {
        zone_id: zone.id.clone(),
        zone_name: zone.name.clone(),
    }];
    let mut ctx = Ctx::new();
    travel(
        zone,
        &mut run,
        character,
        None,
        entry,
        now,
        &mut ctx,
        &mut events,
    );
    Ok((run, events))
}

/// Clears the current room and moves on: the run ends at the boss or a room with no exits,
/// walks on through a single open exit, or offers a fork. In a room with an unresolved
/// encounter it fights first, by the built-in rules ([`fight`]).
pub fn advance(
    zone: &Zone,
    run: &mut Run,
    character: &Character,
    now: i64,
) -> Result<Vec<Event>, Refusal> {
    advance_as(zone, run, character, Referee::BuiltIn, now)
}

/// [`advance`], with the encounter (if any) decided by `referee`.
pub fn advance_as(
    zone: &Zone,
    run: &mut Run,
    character: &Character,
    referee: Referee<'_>,
    now: i64,
) -> Result<Vec<Event>, Refusal> {
    let at = active_room(zone, run)?;
    fork_first(run)?;
    run.last_action_at = now;
    let mut events = Vec::new();
    let pending = pending_encounter(zone, run);
    let fought = pending.is_some();
    if fought && matches!(referee, Referee::Host(None)) {
        return Err(Refusal::AwaitingHost);
    }
    if pending.is_some() {
        run.encounter = pending;
    }
    if fought && !resolve(zone, run, character, at, referee, now, &mut events) {
        return Ok(events);
    }
    let mut ctx = Ctx::new();
    clear_room(zone, run, at, true, &mut events);
    if let Referee::BuiltIn = referee {
        reward(zone, run, at, fought, &mut events);
    }
    let node = zone.node(at);
    if node.is_boss {
        run.boss_defeated = true;
        end(run, Outcome::Victory, now);
        events.push(Event::Victory {
            node: node.id.clone(),
            label: narration::room_label(node).to_string(),
        });
        return Ok(events);
    }
    if let Some(next) = leave(zone, run, character, at, now, &mut events) {
        travel(
            zone,
            run,
            character,
            Some(at),
            next,
            now,
            &mut ctx,
            &mut events,
        );
    }
    Ok(events)
}

/// Resolves the encounter of the current room (`!zone fight`): a win clears the room and
/// moves on as [`advance`] does; a loss wounds (built-in) or ends the run (a host's "lost").
pub fn fight(
    zone: &Zone,
    run: &mut Run,
    character: &Character,
    referee: Referee<'_>,
    now: i64,
) -> Result<Vec<Event>, Refusal> {
    active_room(zone, run)?;
    fork_first(run)?;
    if pending_encounter(zone, run).is_none() {
        return Err(Refusal::NoEncounter);
    }
    advance_as(zone, run, character, referee, now)
}

/// A fork waiting for a choice comes first: what else a player asks for is refused, pointing
/// to `!zone go` (or, when every way is locked, to leaving).
fn fork_first(run: &Run) -> Result<(), Refusal> {
    match &run.pending_fork {
        Some(fork) if fork.options.iter().any(|o| o.open) => Err(Refusal::ForkPending {
            options: fork.options.len(),
        }),
        Some(fork) => Err(Refusal::ForkBarred {
            options: fork.options.len(),
        }),
        None => Ok(()),
    }
}

/// Runs from the encounter of the current room (`!zone flee`): the run ends.
pub fn flee(zone: &Zone, run: &mut Run, now: i64) -> Result<Vec<Event>, Refusal> {
    let at = active_room(zone, run)?;
    fork_first(run)?;
    if pending_encounter(zone, run).is_none() {
        return Err(Refusal::NoEncounter);
    }
    let mut events = Vec::new();
    fled(zone, run, at, now, &mut events);
    Ok(events)
}

/// The encounter waiting in the run's current room, if the run is active.
///
/// A run stored before encounters existed may stand in a trap, elite or boss room with no
/// encounter recorded and no fork offered: a run that won there would have moved on or been
/// offered a fork, so that room's encounter is still to fight (attempt 1).
pub fn pending_encounter(zone: &Zone, run: &Run) -> Option<PendingEncounter> {
    let at = active_room(zone, run).ok()?;
    if let Some(e) = run.encounter.as_ref().filter(|e| e.at == run.current_node) {
        return Some(e.clone());
    }
    // Not a room met again through a loop (it was cleared then): the newest room only.
    if run.pending_fork.is_some() || run.visited_nodes.last() != Some(&run.current_node) {
        return None;
    }
    let node = zone.node(at);
    rules::encounter_kind(node).map(|kind| PendingEncounter {
        at: node.id.clone(),
        kind,
        attempts: 0,
    })
}

/// What a host game must decide before `!zone fight` (or `!zone advance`) can go on: the
/// encounter waiting in the run's current room, if any.
pub fn encounter_request(
    zone: &Zone,
    run: &Run,
    character: &Character,
) -> Option<EncounterRequest> {
    pending_encounter(zone, run)?;
    let node = zone.node_by_id(run.current_node.as_str())?;
    Some(EncounterRequest {
        zone_id: zone.id.clone(),
        tier: zone.tier,
        room: EncounterRoom {
            node_id: node.id.clone(),
            kind: node.kind,
            label: narration::room_label(node).to_string(),
            encounter_override: node.content.encounter_override.clone(),
            loot_bias: node.content.loot_bias,
            extra: node.content.extra.clone(),
        },
        character: character.clone(),
    })
}

/// Decides the pending encounter in room `at`; true when it was won (the room may be
/// cleared), false when the run stays (wounded) or ended.
#[allow(clippy::too_many_arguments)] // internal step function; the arguments are the state
fn resolve(
    zone: &Zone,
    run: &mut Run,
    character: &Character,
    at: NodeIndex,
    referee: Referee<'_>,
    now: i64,
    ev: &mut Vec<Event>,
) -> bool {
    let Some(enc) = run.encounter.as_mut() else {
        return true;
    };
    enc.attempts = enc.attempts.saturating_add(1);
    let (kind, attempt) = (enc.kind, enc.attempts);
    let node = zone.node(at);
    match referee {
        Referee::BuiltIn => {
            let d20 = rules::encounter_d20(&run.run_id, node.id.as_str(), attempt);
            let modifier = rules::encounter_modifier(kind, character.level, &character.scores);
            let dc = rules::encounter_dc(zone.tier, kind);
            let won = i64::from(d20) + i64::from(modifier) >= i64::from(dc);
            let check = EncounterCheck {
                node: node.id.clone(),
                kind,
                attempt,
                d20,
                modifier,
                dc,
                won,
            };
            // The chat shows it: the player view holds it from now on.
            run.last_check = Some(check.clone());
            ev.push(Event::EncounterRolled { check });
            if won {
                run.encounter = None;
                return true;
            }
            run.wounds = run.wounds.saturating_add(1);
            ev.push(Event::Wounded {
                wounds: run.wounds,
                max: rules::MAX_WOUNDS,
            });
            if run.wounds >= rules::MAX_WOUNDS {
                defeated(zone, run, at, now, ev);
            }
            false
        }
        Referee::Host(None) => {
            // Asked without the decision: nothing happens (the caller checks first).
            if let Some(enc) = run.encounter.as_mut() {
                enc.attempts = enc.attempts.saturating_sub(1);
            }
            false
        }
        Referee::Host(Some(decision)) => {
            ev.push(Event::HostDecided {
                node: node.id.clone(),
                kind,
                outcome: decision.outcome,
                message: decision.message.clone(),
            });
            for key in &decision.keys {
                let key = normalize_key(key);
                if !key.is_empty()
                    && key.len() <= MAX_KEY_BYTES
                    && run.keys_granted.len() < MAX_KEYS
                    && run.keys_granted.insert(key.clone())
                {
                    ev.push(Event::KeyGranted {
                        node: node.id.clone(),
                        name: zone.key_name(&key),
                        key_id: key,
                    });
                }
            }
            match decision.outcome {
                Verdict::Won => {
                    run.encounter = None;
                    true
                }
                Verdict::Lost => {
                    defeated(zone, run, at, now, ev);
                    false
                }
                Verdict::Fled => {
                    fled(zone, run, at, now, ev);
                    false
                }
            }
        }
    }
}

fn defeated(zone: &Zone, run: &mut Run, at: NodeIndex, now: i64, ev: &mut Vec<Event>) {
    let node = zone.node(at);
    run.encounter = None;
    end(run, Outcome::Defeat, now);
    ev.push(Event::Defeated {
        node: node.id.clone(),
        label: narration::room_label(node).to_string(),
    });
}

fn fled(zone: &Zone, run: &mut Run, at: NodeIndex, now: i64, ev: &mut Vec<Event>) {
    let node = zone.node(at);
    run.encounter = None;
    // Over for every reader of the row, as an abandoned run is.
    run.abandoned = true;
    end(run, Outcome::Fled, now);
    ev.push(Event::Fled {
        node: node.id.clone(),
        label: narration::room_label(node).to_string(),
    });
}

/// The built-in rewards of a room just cleared with `!zone advance`: its XP, and a loot
/// roll when it held an encounter or its designer set a `loot_bias` other than 1.
fn reward(zone: &Zone, run: &mut Run, at: NodeIndex, fought: bool, ev: &mut Vec<Event>) {
    let node = zone.node(at);
    let xp = rules::room_xp(zone.tier, node);
    if xp > 0 {
        run.xp_earned = run.xp_earned.saturating_add(xp);
        ev.push(Event::XpGained {
            node: node.id.clone(),
            amount: xp,
        });
    }
    let bias = node.content.loot_bias;
    #[allow(clippy::float_cmp)] // 1.0 is the format's exact default
    let biased = bias != 1.0;
    if fought || biased {
        let d20 = rules::loot_d20(&run.run_id, node.id.as_str());
        let total = rules::loot_total(d20, bias);
        let found = total >= rules::LOOT_DC;
        if found {
            run.loot.insert(node.id.clone());
        }
        ev.push(Event::LootRolled {
            node: node.id.clone(),
            d20,
            loot_bias: crate::text::decimal(bias),
            total,
            dc: rules::LOOT_DC,
            found,
        });
    }
}

/// Takes option `choice` (the player's text, 1-based) of the pending fork.
pub fn choose(
    zone: &Zone,
    run: &mut Run,
    character: &Character,
    choice: &str,
    now: i64,
) -> Result<Vec<Event>, Refusal> {
    active_room(zone, run)?;
    if let Some(enc) = pending_encounter(zone, run) {
        return Err(Refusal::EncounterPending { kind: enc.kind });
    }
    let fork = run.pending_fork.as_ref().ok_or(Refusal::NoForkPending)?;
    let given = choice.trim();
    let max = fork.options.len();
    let n = match given.parse::<usize>() {
        Ok(n) => n,
        Err(_) if !given.is_empty() && given.bytes().all(|b| b.is_ascii_digit()) => {
            return Err(Refusal::OutOfRange {
                given: given.to_string(),
                max,
            });
        }
        Err(_) => {
            return Err(Refusal::NotANumber {
                given: given.to_string(),
                max,
            });
        }
    };
    if n == 0 || n > max {
        return Err(Refusal::OutOfRange {
            given: given.to_string(),
            max,
        });
    }
    let option = &fork.options[n - 1];
    if !option.open {
        let refusal = Refusal::Locked {
            option: n,
            label: view::option_label(zone, run, option),
            reason: option.check.reason(zone).unwrap_or(LockReason::Sealed),
        };
        // The refusal tells the roll: from now on the player's view holds it too.
        if let Some(o) = run
            .pending_fork
            .as_mut()
            .and_then(|f| f.options.get_mut(n - 1))
        {
            o.revealed = true;
        }
        return Err(refusal);
    }
    let mut events = Vec::new();
    take(zone, run, character, n - 1, now, &mut events)?;
    Ok(events)
}

/// Applies the fork timeout: once `timeout_ms` has passed since the fork was offered, the
/// first open option is taken for the player. With no open option the run keeps waiting.
pub fn expire(
    zone: &Zone,
    run: &mut Run,
    character: &Character,
    now: i64,
    timeout_ms: i64,
) -> Vec<Event> {
    if active_room(zone, run).is_err() {
        return Vec::new();
    }
    let Some(fork) = &run.pending_fork else {
        return Vec::new();
    };
    if fork.created_at > forks_due_offered_by(now, timeout_ms) {
        return Vec::new();
    }
    let Some(i) = fork.options.iter().position(|o| o.open) else {
        return Vec::new();
    };
    let to = fork.options[i].to_node.clone();
    let Some(label) = zone
        .node_by_id(to.as_str())
        .map(|n| narration::room_label(n).to_string())
    else {
        return Vec::new();
    };
    let mut events = vec![Event::PickedForYou {
        option: i + 1,
        to_node: to,
        label,
    }];
    match take(zone, run, character, i, now, &mut events) {
        Ok(()) => {
            if let Some(met) = run.forks_met.last_mut() {
                met.picked = true;
            }
            events
        }
        Err(_) => Vec::new(),
    }
}

/// Gives up the run.
pub fn abandon(zone: &Zone, run: &mut Run, now: i64) -> Result<Vec<Event>, Refusal> {
    abandon_without_zone(run, now)?;
    let label = zone
        .node_by_id(run.current_node.as_str())
        .map(|n| narration::room_label(n).to_string())
        .unwrap_or_else(|| run.current_node.to_string());
    Ok(vec![Event::Abandoned {
        node: run.current_node.clone(),
        label,
    }])
}

/// Ends a run as abandoned without its zone (a zone withdrawn from the host cannot name the
/// room the run stopped in): what [`abandon`] does to the run, with no event.
pub fn abandon_without_zone(run: &mut Run, now: i64) -> Result<(), Refusal> {
    if let Some(outcome) = run.outcome {
        return Err(Refusal::RunOver { outcome });
    }
    run.pending_fork = None;
    run.encounter = None;
    run.abandoned = true;
    end(run, Outcome::Abandoned, now);
    Ok(())
}

/// Warms up a run known only by a legacy `current_room` index (a run started before zones were
/// graphs): the current room is
/// `<zone>.r<current_room+1>` and rooms r1 up to it count as visited.
pub fn warm_up_legacy(
    zone: &Zone,
    run_id: &str,
    current_room: usize,
    now: i64,
) -> Result<Run, Refusal> {
    let rooms = zone.graph.node_count();
    let unknown = Refusal::LegacyRoomUnknown {
        current_room,
        rooms,
    };
    if current_room >= rooms {
        return Err(unknown);
    }
    let visited: Vec<NodeId> = (0..=current_room)
        .map(|i| NodeId(legacy_node_id(&zone.id, i)))
        .collect();
    if visited
        .iter()
        .any(|id| zone.node_index(id.as_str()).is_none())
    {
        return Err(unknown);
    }
    let current = visited[current_room].clone();
    Ok(Run::fresh(run_id, zone, current, visited, now))
}

/// The current room of an active run of this zone, or why there is none.
fn active_room(zone: &Zone, run: &Run) -> Result<NodeIndex, Refusal> {
    if run.zone_id != zone.id {
        return Err(Refusal::WrongZone {
            run_zone: run.zone_id.clone(),
            zone: zone.id.clone(),
        });
    }
    if let Some(outcome) = run.outcome {
        return Err(Refusal::RunOver { outcome });
    }
    zone.node_index(run.current_node.as_str())
        .ok_or_else(|| Refusal::UnknownRoom {
            node: run.current_node.to_string(),
        })
}

fn end(run: &mut Run, outcome: Outcome, now: i64) {
    run.outcome = Some(outcome);
    run.completed_at = Some(now);
    run.last_action_at = now;
}

/// Grants the room's key and records its harvest (once per run); `announce` adds the
/// RoomCleared event (fork and merge rooms have no encounter to clear).
fn clear_room(zone: &Zone, run: &mut Run, at: NodeIndex, announce: bool, ev: &mut Vec<Event>) {
    let node = zone.node(at);
    if announce {
        ev.push(Event::RoomCleared {
            node: node.id.clone(),
            kind: node.kind,
            label: narration::room_label(node).to_string(),
        });
    }
    if let Some(key) = &node.content.grants_key
        && run.keys_granted.insert(key.clone())
    {
        ev.push(Event::KeyGranted {
            node: node.id.clone(),
            key_id: key.clone(),
            name: zone.key_name(key),
        });
    }
    let harvest = node.content.harvest_ref.trim();
    if !harvest.is_empty() && !run.harvested.contains_key(&node.id) {
        run.harvested.insert(node.id.clone(), harvest.to_string());
        ev.push(Event::Harvested {
            node: node.id.clone(),
            harvest_ref: harvest.to_string(),
            name: zone.harvest_name(harvest),
        });
    }
}

/// Resolves the exits of a cleared room: ends the run (no exits), returns the one open exit
/// to walk through, or offers a fork.
fn leave(
    zone: &Zone,
    run: &mut Run,
    character: &Character,
    at: NodeIndex,
    now: i64,
    ev: &mut Vec<Event>,
) -> Option<NodeIndex> {
    let exits = zone.exits(at);
    match exits.as_slice() {
        [] => {
            let node = zone.node(at);
            end(run, Outcome::DeadEnd, now);
            ev.push(Event::DeadEnd {
                node: node.id.clone(),
                label: narration::room_label(node).to_string(),
            });
            None
        }
        [one] => {
            let to = zone.target(*one);
            let check = evaluate(zone, run, character, at, to, &zone.graph[*one].lock);
            if check.passes() {
                // A lock passed on the way is met too (play insight counts its passes).
                if check != Check::None {
                    run.forks_met.push(MetFork {
                        at: zone.node(at).id.clone(),
                        options: vec![ForkOption {
                            to_node: zone.node(to).id.clone(),
                            open: true,
                            check,
                            revealed: false,
                        }],
                        taken: 0,
                        picked: false,
                    });
                }
                Some(to)
            } else {
                offer_fork(zone, run, character, at, now, ev);
                None
            }
        }
        _ => {
            offer_fork(zone, run, character, at, now, ev);
            None
        }
    }
}

/// Evaluates every exit's lock once, freezes the results and offers the menu.
fn offer_fork(
    zone: &Zone,
    run: &mut Run,
    character: &Character,
    at: NodeIndex,
    now: i64,
    ev: &mut Vec<Event>,
) {
    let options: Vec<ForkOption> = zone
        .exits(at)
        .into_iter()
        .map(|e| {
            let to = zone.target(e);
            let check = evaluate(zone, run, character, at, to, &zone.graph[e].lock);
            ForkOption {
                to_node: zone.node(to).id.clone(),
                open: check.passes(),
                check,
                revealed: false,
            }
        })
        .collect();
    for o in &options {
        if o.check.lock_kind() == LockKind::PerceptionCheck {
            let passage = (zone.node(at).id.clone(), o.to_node.clone());
            if o.open {
                run.missed_passages.remove(&passage);
            } else {
                run.missed_passages.insert(passage);
            }
        }
    }
    for o in options.iter().filter(|o| o.open) {
        if zone
            .node_by_id(o.to_node.as_str())
            .is_some_and(|n| n.kind == NodeKind::Secret)
        {
            run.revealed_secrets.insert(o.to_node.clone());
        }
    }
    let waiting = !options.iter().any(|o| o.open);
    let node = zone.node(at);
    run.pending_fork = Some(PendingFork {
        at: node.id.clone(),
        created_at: now,
        options,
    });
    ev.push(Event::ForkOffered {
        at: node.id.clone(),
        label: narration::room_label(node).to_string(),
        options: exit_views(zone, run),
        waiting,
    });
}

fn evaluate(
    zone: &Zone,
    run: &Run,
    character: &Character,
    from: NodeIndex,
    to: NodeIndex,
    lock: &Lock,
) -> Check {
    let roll = || {
        roll::d20(
            &run.run_id,
            zone.node(from).id.as_str(),
            zone.node(to).id.as_str(),
        )
    };
    match lock {
        Lock::None => Check::None,
        Lock::PerceptionCheck { dc } => Check::PerceptionCheck {
            d20: roll(),
            modifier: character.modifier(Ability::Wis),
            dc: *dc,
        },
        Lock::StatCheck { ability, dc } => Check::StatCheck {
            ability: *ability,
            d20: roll(),
            modifier: character.modifier(*ability),
            dc: *dc,
        },
        Lock::KeyRequired { key_id } => {
            let key = normalize_key(key_id);
            Check::KeyRequired {
                held: character.keys.contains(&key) || run.keys_granted.contains(&key),
                key_id: key,
            }
        }
        Lock::LevelMin { min_level } => Check::LevelMin {
            min_level: *min_level,
            level: character.level,
        },
        Lock::RegionClear { region_id } => Check::RegionClear {
            cleared: run.cleared_regions.contains(region_id),
            region_id: region_id.clone(),
        },
        Lock::Invalid { lock_kind } => Check::Invalid {
            lock_kind: *lock_kind,
        },
    }
}

/// Takes option `index` of the pending fork.
fn take(
    zone: &Zone,
    run: &mut Run,
    character: &Character,
    index: usize,
    now: i64,
    ev: &mut Vec<Event>,
) -> Result<(), Refusal> {
    let fork = run.pending_fork.as_ref().ok_or(Refusal::NoForkPending)?;
    let from = zone
        .node_index(fork.at.as_str())
        .ok_or_else(|| Refusal::UnknownRoom {
            node: fork.at.to_string(),
        })?;
    let to_id = &fork.options[index].to_node;
    let to = zone
        .node_index(to_id.as_str())
        .ok_or_else(|| Refusal::UnknownRoom {
            node: to_id.to_string(),
        })?;
    if let Some(fork) = run.pending_fork.take() {
        run.forks_met.push(MetFork {
            at: fork.at,
            options: fork.options,
            taken: index,
            picked: false,
        });
    }
    run.last_action_at = now;
    let mut ctx = Ctx::new();
    travel(zone, run, character, Some(from), to, now, &mut ctx, ev);
    Ok(())
}

/// Moves into `to` and on through every fork and merge room that needs no player, until a
/// room with an encounter, a fork that needs the player, or the end. Iterative: merge chains
/// may be very long.
#[allow(clippy::too_many_arguments)] // internal step function; the arguments are the state
fn travel(
    zone: &Zone,
    run: &mut Run,
    character: &Character,
    mut from: Option<NodeIndex>,
    mut to: NodeIndex,
    now: i64,
    ctx: &mut Ctx,
    ev: &mut Vec<Event>,
) {
    // Rooms passed through in this one step; meeting one again (a loop of merge rooms) makes
    // the player choose instead of walking in circles forever.
    let mut this_step = BTreeSet::new();
    loop {
        this_step.insert(to);
        let node = zone.node(to);
        if let Some(f) = from {
            let prev = zone.node(f);
            ev.push(Event::Moved {
                from: prev.id.clone(),
                to: node.id.clone(),
            });
            if prev.region_id != node.region_id {
                if !prev.region_id.is_empty() {
                    run.cleared_regions.insert(prev.region_id.clone());
                }
                ev.push(Event::RegionTransition {
                    from_region: prev.region_id.clone(),
                    from_name: zone.region_name(&prev.region_id).to_string(),
                    to_region: node.region_id.clone(),
                    to_name: zone.region_name(&node.region_id).to_string(),
                });
            }
        }
        run.current_node = node.id.clone();
        let first_visit = !run.has_visited(&node.id);
        let room_number = if first_visit {
            run.visited_nodes.push(node.id.clone());
            run.visited_nodes.len()
        } else {
            run.visited_nodes
                .iter()
                .position(|v| *v == node.id)
                .map_or(run.visited_nodes.len(), |p| p + 1)
        };
        let room_total = ctx.total(zone, run);
        ev.push(Event::Arrived {
            node: node.id.clone(),
            kind: node.kind,
            label: narration::room_label(node).to_string(),
            room_number,
            room_total,
            extra: node.content.extra.clone(),
        });
        let text = if node.content.narration.trim().is_empty() {
            let seed = format!(
                "{}|{}",
                run.run_id,
                run.visited_nodes.len().saturating_sub(1)
            );
            narration::flavour(node.kind, &seed).to_string()
        } else {
            node.content.narration.trim().to_string()
        };
        ev.push(Event::Narration {
            node: node.id.clone(),
            text,
        });
        if node.kind == NodeKind::RestCamp && run.wounds > 0 {
            ev.push(Event::Rested {
                node: node.id.clone(),
                label: narration::room_label(node).to_string(),
                healed: run.wounds,
            });
            run.wounds = 0;
        }
        // A room met again was cleared before: its encounter is over.
        if let Some(kind) = rules::encounter_kind(node).filter(|_| first_visit) {
            run.encounter = Some(PendingEncounter {
                at: node.id.clone(),
                kind,
                attempts: 0,
            });
            ev.push(Event::EncounterStarted {
                node: node.id.clone(),
                kind,
                label: narration::room_label(node).to_string(),
            });
            return;
        }
        if node.is_boss || !node.kind.is_passthrough() {
            return;
        }
        clear_room(zone, run, to, false, ev);
        match leave(zone, run, character, to, now, ev) {
            Some(next) if this_step.contains(&next) => {
                offer_fork(zone, run, character, to, now, ev);
                return;
            }
            Some(next) => {
                from = Some(to);
                to = next;
            }
            None => return,
        }
    }
}
