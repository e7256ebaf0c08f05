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
use crate::zone::{Ability, Lock, NodeId, Zone, legacy_node_id, normalize_key};

pub use run::{
    CharEdit, Character, Check, ForkOption, LockReason, MAX_KEY_BYTES, MAX_KEYS, Outcome,
    PendingFork, Run,
};
pub use view::{
    ExitState, ExitView, Knowledge, Phase, PlayerView, Status, exit_views, player_view, status,
    visible_to_player,
};

/// How long a fork waits for the player before the first open option is taken (six hours,
/// as the original design proposed).
pub const DEFAULT_FORK_TIMEOUT_MS: i64 = 6 * 60 * 60 * 1000;

/// Lowest and highest level a character may have.
pub const LEVEL_RANGE: std::ops::RangeInclusive<u32> = 1..=20;
/// Lowest and highest ability score.
pub const SCORE_RANGE: std::ops::RangeInclusive<i32> = 1..=30;

/// Everything that happens, in order. The chat module words these; hosts can hook a combat
/// resolution onto `Arrived`'s kind.
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
    },
    Harvested {
        node: NodeId,
        harvest_ref: String,
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
    /// `!zone advance` while a fork waits for a choice.
    ForkPending {
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
}

/// Per-call working state: the visited set (so long merge chains stay linear) and the
/// lazily computed "of Y" total (the player's map does not change within one step).
struct Ctx {
    visited: BTreeSet<NodeId>,
    total: Option<usize>,
}

impl Ctx {
    fn new(run: &Run) -> Ctx {
        let mut visited = BTreeSet::new();
        visited.extend(run.visited_nodes.iter().cloned());
        Ctx {
            visited,
            total: None,
        }
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
    let mut events = vec![Event::Entered {
        zone_id: zone.id.clone(),
        zone_name: zone.name.clone(),
    }];
    let mut ctx = Ctx::new(&run);
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
/// walks on through a single open exit, or offers a fork.
pub fn advance(
    zone: &Zone,
    run: &mut Run,
    character: &Character,
    now: i64,
) -> Result<Vec<Event>, Refusal> {
    let at = active_room(zone, run)?;
    if let Some(fork) = &run.pending_fork {
        return Err(Refusal::ForkPending {
            options: fork.options.len(),
        });
    }
    run.last_action_at = now;
    let mut events = Vec::new();
    let mut ctx = Ctx::new(run);
    clear_room(zone, run, at, true, &mut events);
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

/// Takes option `choice` (the player's text, 1-based) of the pending fork.
pub fn choose(
    zone: &Zone,
    run: &mut Run,
    character: &Character,
    choice: &str,
    now: i64,
) -> Result<Vec<Event>, Refusal> {
    active_room(zone, run)?;
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
    if now.saturating_sub(fork.created_at) < timeout_ms {
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
        Ok(()) => events,
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
        });
    }
    let harvest = node.content.harvest_ref.trim();
    if !harvest.is_empty() && !run.harvested.contains_key(&node.id) {
        run.harvested.insert(node.id.clone(), harvest.to_string());
        ev.push(Event::Harvested {
            node: node.id.clone(),
            harvest_ref: harvest.to_string(),
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
    run.pending_fork = None;
    run.last_action_at = now;
    let mut ctx = Ctx::new(run);
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
        let room_number = if ctx.visited.insert(node.id.clone()) {
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
