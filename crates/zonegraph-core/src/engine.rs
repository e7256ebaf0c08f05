//! The navigation engine: a pure state machine over a zone's graph (seed G4–G6, §8 defaults).
//!
//! Every function takes the zone, the run and the character and returns typed [`Event`]s or a
//! typed [`Refusal`]; [`crate::chat`] turns both into words. Nothing here reads a clock or
//! draws a random number: callers pass `now` (unix milliseconds) and the run id, and every
//! roll is [`roll::d20`] of the run id and the passage.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use petgraph::graph::NodeIndex;
use serde::{Deserialize, Serialize};

use crate::analysis::longest_path_len;
use crate::format::{LockKind, NodeKind};
use crate::narration;
use crate::roll;
use crate::zone::{Ability, Lock, NodeId, Zone, legacy_node_id, normalize_key};

/// How long a fork waits for the player before the first open option is taken (seed §8.3).
pub const DEFAULT_FORK_TIMEOUT_MS: i64 = 6 * 60 * 60 * 1000;

/// Lowest and highest level a character may have.
pub const LEVEL_RANGE: std::ops::RangeInclusive<u32> = 1..=20;
/// Lowest and highest ability score.
pub const SCORE_RANGE: std::ops::RangeInclusive<i32> = 1..=30;

/// What the engine needs to know about the player.
///
/// JSON: `{"level":3,"scores":{"str":10,"dex":10,"con":10,"int":10,"wis":14,"cha":10},
/// "keys":["skull_key"]}`; every field may be left out (level 1, scores 10, no keys).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Character {
    pub level: u32,
    /// Scores in `[str, dex, con, int, wis, cha]` order; see [`Ability::index`].
    #[serde(with = "scores_serde")]
    pub scores: [i32; 6],
    /// Keys held, normalised with [`normalize_key`].
    #[serde(deserialize_with = "keys_serde::deserialize")]
    pub keys: BTreeSet<String>,
}

impl Default for Character {
    fn default() -> Self {
        Character {
            level: 1,
            scores: [10; 6],
            keys: BTreeSet::new(),
        }
    }
}

impl Character {
    pub fn score(&self, ability: Ability) -> i32 {
        self.scores[ability.index()]
    }

    /// floor((score − 10) / 2).
    pub fn modifier(&self, ability: Ability) -> i32 {
        roll::modifier(self.score(ability))
    }

    pub fn set_score(&mut self, ability: Ability, score: i32) {
        self.scores[ability.index()] = score;
    }

    /// Whether the character holds `key` (compared normalised).
    pub fn has_key(&self, key: &str) -> bool {
        self.keys.contains(&normalize_key(key))
    }

    /// Adds a key; false when it is empty after normalising or already held.
    pub fn add_key(&mut self, key: &str) -> bool {
        let key = normalize_key(key);
        !key.is_empty() && self.keys.insert(key)
    }

    /// Removes a key; false when it was not held.
    pub fn remove_key(&mut self, key: &str) -> bool {
        self.keys.remove(&normalize_key(key))
    }

    /// Keeps the keys a run granted, so they open locks in later runs and other zones.
    pub fn keep_keys_from(&mut self, run: &Run) {
        self.keys.extend(run.keys_granted.iter().cloned());
    }
}

mod scores_serde {
    use std::collections::BTreeMap;

    use serde::ser::SerializeMap;
    use serde::{Deserialize, Deserializer, Serializer};

    use crate::zone::Ability;

    /// Serialises in the familiar str, dex, con, int, wis, cha order.
    pub fn serialize<S: Serializer>(scores: &[i32; 6], s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(6))?;
        for a in Ability::ALL {
            m.serialize_entry(a.as_str(), &scores[a.index()])?;
        }
        m.end()
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<[i32; 6], D::Error> {
        let map = BTreeMap::<Ability, i32>::deserialize(d)?;
        let mut scores = [10; 6];
        for (a, v) in map {
            scores[a.index()] = v;
        }
        Ok(scores)
    }
}

mod keys_serde {
    use std::collections::BTreeSet;

    use serde::{Deserialize, Deserializer};

    use crate::zone::normalize_key;

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<BTreeSet<String>, D::Error> {
        let keys = Vec::<String>::deserialize(d)?;
        // `extend`, not `collect`: collecting into a BTreeSet sorts first (more wasm).
        let mut set = BTreeSet::new();
        set.extend(
            keys.iter()
                .map(|k| normalize_key(k))
                .filter(|k| !k.is_empty()),
        );
        Ok(set)
    }
}

/// Why a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The boss was defeated.
    Victory,
    /// A room with no way on (a dead-end secret) ended the run quietly.
    DeadEnd,
    /// The player gave up.
    Abandoned,
}

/// One run through one zone: what the server stores in `dnd_zone_run` and the viewer receives.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Run {
    pub run_id: String,
    pub zone_id: String,
    pub current_node: NodeId,
    /// Rooms in the order first reached; each room once.
    pub visited_nodes: Vec<NodeId>,
    /// The seed's `node_choices`: the fork waiting for the player, if any.
    #[serde(default)]
    pub pending_fork: Option<PendingFork>,
    /// Regions the run has crossed out of.
    #[serde(default)]
    pub cleared_regions: BTreeSet<String>,
    /// Harvest nodes cleared in this run: node id → harvest_ref.
    #[serde(default)]
    pub harvested: BTreeMap<NodeId, String>,
    /// Keys granted by rooms during this run (normalised).
    #[serde(default)]
    pub keys_granted: BTreeSet<String>,
    /// Secret rooms whose lock the run passed (so the player may see them).
    #[serde(default)]
    pub revealed_secrets: BTreeSet<NodeId>,
    pub started_at: i64,
    pub last_action_at: i64,
    #[serde(default)]
    pub completed_at: Option<i64>,
    #[serde(default)]
    pub boss_defeated: bool,
    #[serde(default)]
    pub abandoned: bool,
    #[serde(default)]
    pub outcome: Option<Outcome>,
}

impl Run {
    /// A run that has just begun in `current`, having visited `visited`.
    fn fresh(run_id: &str, zone: &Zone, current: NodeId, visited: Vec<NodeId>, now: i64) -> Run {
        Run {
            run_id: run_id.to_string(),
            zone_id: zone.id.clone(),
            current_node: current,
            visited_nodes: visited,
            pending_fork: None,
            cleared_regions: BTreeSet::new(),
            harvested: BTreeMap::new(),
            keys_granted: BTreeSet::new(),
            revealed_secrets: BTreeSet::new(),
            started_at: now,
            last_action_at: now,
            completed_at: None,
            boss_defeated: false,
            abandoned: false,
            outcome: None,
        }
    }

    /// Whether the run has ended (victory, dead end or abandoned).
    pub fn is_over(&self) -> bool {
        self.outcome.is_some()
    }

    /// Room X of "Room X of Y": how many rooms the run has reached.
    pub fn room_number(&self) -> usize {
        self.visited_nodes.len()
    }
}

/// A fork waiting for the player: every exit's lock evaluated once, at arrival, and frozen.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PendingFork {
    pub at: NodeId,
    pub created_at: i64,
    /// In menu order ([`Zone::exits`]); option `n` is `options[n - 1]`.
    pub options: Vec<ForkOption>,
}

/// One option of a pending fork.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ForkOption {
    pub to_node: NodeId,
    pub open: bool,
    pub check: Check,
}

/// A lock's frozen evaluation: the roll and what it was compared with.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(
    tag = "lock",
    rename_all = "snake_case",
    deny_unknown_fields,
    try_from = "CheckRepr"
)]
pub enum Check {
    None,
    PerceptionCheck {
        d20: u32,
        modifier: i32,
        dc: u32,
    },
    StatCheck {
        ability: Ability,
        d20: u32,
        modifier: i32,
        dc: u32,
    },
    KeyRequired {
        key_id: String,
        held: bool,
    },
    LevelMin {
        min_level: u32,
        level: u32,
    },
    RegionClear {
        region_id: String,
        cleared: bool,
    },
    /// Unusable lock data: never opens.
    Invalid {
        lock_kind: LockKind,
    },
    /// A failed check with its numbers removed, in a [`player_view`] of the run.
    Hidden {
        lock_kind: LockKind,
    },
}

/// [`Check`] as stored, read flat. The derived reader for an internally tagged enum buffers
/// every object it reads and is ~19 KB of wasm on its own; this one is a plain struct and
/// gives the same errors (unknown lock, missing or unexpected field).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CheckRepr {
    lock: CheckTag,
    d20: Option<u32>,
    modifier: Option<i32>,
    dc: Option<u32>,
    ability: Option<Ability>,
    key_id: Option<String>,
    held: Option<bool>,
    min_level: Option<u32>,
    level: Option<u32>,
    region_id: Option<String>,
    cleared: Option<bool>,
    lock_kind: Option<LockKind>,
}

#[derive(Clone, Copy, Deserialize)]
#[serde(rename_all = "snake_case")]
enum CheckTag {
    None,
    PerceptionCheck,
    StatCheck,
    KeyRequired,
    LevelMin,
    RegionClear,
    Invalid,
    Hidden,
}

impl TryFrom<CheckRepr> for Check {
    type Error = String;

    fn try_from(r: CheckRepr) -> Result<Check, String> {
        let CheckRepr {
            lock,
            mut d20,
            mut modifier,
            mut dc,
            mut ability,
            mut key_id,
            mut held,
            mut min_level,
            mut level,
            mut region_id,
            mut cleared,
            mut lock_kind,
        } = r;
        // Takes a field the variant needs: "missing field" when absent.
        fn need<T>(v: &mut Option<T>, name: &str) -> Result<T, String> {
            v.take().ok_or_else(|| format!("missing field `{name}`"))
        }
        let check = match lock {
            CheckTag::None => Check::None,
            CheckTag::PerceptionCheck => Check::PerceptionCheck {
                d20: need(&mut d20, "d20")?,
                modifier: need(&mut modifier, "modifier")?,
                dc: need(&mut dc, "dc")?,
            },
            CheckTag::StatCheck => Check::StatCheck {
                ability: need(&mut ability, "ability")?,
                d20: need(&mut d20, "d20")?,
                modifier: need(&mut modifier, "modifier")?,
                dc: need(&mut dc, "dc")?,
            },
            CheckTag::KeyRequired => Check::KeyRequired {
                key_id: need(&mut key_id, "key_id")?,
                held: need(&mut held, "held")?,
            },
            CheckTag::LevelMin => Check::LevelMin {
                min_level: need(&mut min_level, "min_level")?,
                level: need(&mut level, "level")?,
            },
            CheckTag::RegionClear => Check::RegionClear {
                region_id: need(&mut region_id, "region_id")?,
                cleared: need(&mut cleared, "cleared")?,
            },
            CheckTag::Invalid => Check::Invalid {
                lock_kind: need(&mut lock_kind, "lock_kind")?,
            },
            CheckTag::Hidden => Check::Hidden {
                lock_kind: need(&mut lock_kind, "lock_kind")?,
            },
        };
        // Whatever the variant did not take does not belong to it.
        let extra = [
            ("d20", d20.is_some()),
            ("modifier", modifier.is_some()),
            ("dc", dc.is_some()),
            ("ability", ability.is_some()),
            ("key_id", key_id.is_some()),
            ("held", held.is_some()),
            ("min_level", min_level.is_some()),
            ("level", level.is_some()),
            ("region_id", region_id.is_some()),
            ("cleared", cleared.is_some()),
            ("lock_kind", lock_kind.is_some()),
        ];
        match extra.iter().find(|(_, present)| *present) {
            Some((name, _)) => Err(format!("unknown field `{name}` for this lock")),
            None => Ok(check),
        }
    }
}

impl Check {
    pub fn passes(&self) -> bool {
        match self {
            Check::None => true,
            Check::PerceptionCheck { d20, modifier, dc }
            | Check::StatCheck {
                d20, modifier, dc, ..
            } => total(*d20, *modifier) >= i64::from(*dc),
            Check::KeyRequired { held, .. } => *held,
            Check::LevelMin { min_level, level } => level >= min_level,
            Check::RegionClear { cleared, .. } => *cleared,
            Check::Invalid { .. } | Check::Hidden { .. } => false,
        }
    }

    pub fn lock_kind(&self) -> LockKind {
        match self {
            Check::None => LockKind::None,
            Check::PerceptionCheck { .. } => LockKind::PerceptionCheck,
            Check::StatCheck { .. } => LockKind::StatCheck,
            Check::KeyRequired { .. } => LockKind::KeyRequired,
            Check::LevelMin { .. } => LockKind::LevelMin,
            Check::RegionClear { .. } => LockKind::RegionClear,
            Check::Invalid { lock_kind } | Check::Hidden { lock_kind } => *lock_kind,
        }
    }

    /// Why the check failed, for a refusal; `None` when it passed.
    pub fn reason(&self, zone: &Zone) -> Option<LockReason> {
        if self.passes() {
            return None;
        }
        Some(match self {
            Check::None => return None,
            Check::PerceptionCheck { d20, modifier, dc } => LockReason::Perception {
                total: total(*d20, *modifier),
                dc: *dc,
            },
            Check::StatCheck {
                ability,
                d20,
                modifier,
                dc,
            } => LockReason::Stat {
                ability: *ability,
                total: total(*d20, *modifier),
                dc: *dc,
            },
            Check::KeyRequired { .. } => LockReason::Key,
            Check::LevelMin { min_level, level } => LockReason::Level {
                min_level: *min_level,
                level: *level,
            },
            Check::RegionClear { region_id, .. } => LockReason::Region {
                region_name: zone.region_name(region_id).to_string(),
            },
            Check::Invalid { .. } | Check::Hidden { .. } => LockReason::Sealed,
        })
    }
}

fn total(d20: u32, modifier: i32) -> i64 {
    i64::from(d20) + i64::from(modifier)
}

/// Why a locked option cannot be taken. The only place a DC is ever shown to the player.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum LockReason {
    Perception {
        total: i64,
        dc: u32,
    },
    Stat {
        ability: Ability,
        total: i64,
        dc: u32,
    },
    Level {
        min_level: u32,
        level: u32,
    },
    Key,
    Region {
        region_name: String,
    },
    /// The passage's lock data is unusable.
    Sealed,
}

/// Whether an exit was tested, and how it went.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExitState {
    /// No lock, or a lock the run passed at this fork.
    Open,
    /// A lock that failed at this fork.
    Locked,
    /// A lock not tested yet: locks are tested when the player reaches the fork.
    Unchecked,
}

/// An exit as the player may see it: a secret's id, label and kind stay hidden until the
/// lock into it was passed, and a failed Perception check hides what is there.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExitView {
    /// 1-based menu number.
    pub number: usize,
    /// `None` when hidden from the player.
    pub to_node: Option<NodeId>,
    /// `None` when hidden from the player ("something").
    pub label: Option<String>,
    /// `None` when hidden or locked.
    pub kind: Option<NodeKind>,
    pub state: ExitState,
    pub lock: LockKind,
    /// The edge's hint, or a generic teaser when the hint is empty; only for a lock that
    /// failed or was not tested yet.
    pub teaser: Option<String>,
}

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
    /// The run's zone is no longer loaded (withdrawn from the host between starts).
    ZoneWithdrawn {
        zone_id: String,
        run_over: bool,
    },
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&crate::chat::refusal(self).text)
    }
}

impl std::error::Error for Refusal {}

/// What `!zone status` shows. Labels of rooms the player may not see are already removed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Status {
    pub run_id: String,
    pub zone_id: String,
    pub zone_name: String,
    pub node: NodeId,
    pub label: String,
    /// `None` when the run names a room the zone does not have.
    pub kind: Option<NodeKind>,
    /// The current region's name, in a multi-region zone.
    pub region: Option<String>,
    pub room_number: usize,
    pub room_total: usize,
    pub phase: Phase,
    pub exits: Vec<ExitView>,
    /// When the pending fork was offered.
    pub fork_created_at: Option<i64>,
    /// Keys held: the character's and those granted in this run.
    pub keys: BTreeSet<String>,
}

/// Where a run stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "phase", rename_all = "snake_case")]
pub enum Phase {
    /// In a room that `!zone advance` clears.
    InRoom,
    /// A fork waits for `!zone go N`.
    Fork,
    /// A fork with no open option: the run waits.
    Waiting,
    Over {
        outcome: Outcome,
    },
}

/// Per-call working state: the visited set (so long merge chains stay linear) and the
/// lazily computed "of Y" total.
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

    fn total(&mut self, zone: &Zone, visited: usize) -> usize {
        let t = *self
            .total
            .get_or_insert_with(|| longest_path_len(zone).unwrap_or(0));
        t.max(visited)
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
        return Err(Refusal::Locked {
            option: n,
            label: visible_label(zone, run, option),
            reason: option.check.reason(zone).unwrap_or(LockReason::Sealed),
        });
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

/// Warms up a run known only by a legacy `current_room` index (seed G4): the current room is
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

/// What `!zone status` reports.
pub fn status(zone: &Zone, run: &Run, character: &Character) -> Status {
    let node = zone.node_by_id(run.current_node.as_str());
    let phase = match (run.outcome, &run.pending_fork) {
        (Some(outcome), _) => Phase::Over { outcome },
        (None, Some(f)) if f.options.iter().any(|o| o.open) => Phase::Fork,
        (None, Some(_)) => Phase::Waiting,
        (None, None) => Phase::InRoom,
    };
    let exits = if run.is_over() {
        Vec::new()
    } else {
        exit_views(zone, run)
    };
    let room_number = run.room_number();
    Status {
        run_id: run.run_id.clone(),
        zone_id: zone.id.clone(),
        zone_name: zone.name.clone(),
        node: run.current_node.clone(),
        label: node.map_or_else(
            || run.current_node.to_string(),
            |n| narration::room_label(n).to_string(),
        ),
        kind: node.map(|n| n.kind),
        region: node
            .filter(|n| !n.region_id.is_empty())
            .map(|n| zone.region_name(&n.region_id).to_string()),
        room_number,
        room_total: longest_path_len(zone).unwrap_or(0).max(room_number),
        phase,
        exits,
        fork_created_at: run.pending_fork.as_ref().map(|f| f.created_at),
        keys: character
            .keys
            .iter()
            .chain(&run.keys_granted)
            .cloned()
            .collect(),
    }
}

/// Whether the player may see `node`: a secret room stays hidden until the lock into it was
/// passed or it was visited; every other room of the zone is visible.
pub fn visible_to_player(zone: &Zone, run: &Run, node: &str) -> bool {
    match zone.node_by_id(node) {
        None => false,
        Some(n) if n.kind != NodeKind::Secret => true,
        Some(n) => run.revealed_secrets.contains(&n.id) || run.visited_nodes.contains(&n.id),
    }
}

/// The run as a player may see it (the viewer's run-map link): a pending option into a room
/// the player may not see loses its `to_node`, and every failed check loses its numbers, so
/// the link tells no more than the chat. Menu numbering is kept.
pub fn player_view(zone: &Zone, run: &Run) -> Run {
    let mut out = run.clone();
    if let Some(fork) = out.pending_fork.as_mut() {
        for o in &mut fork.options {
            let unnoticed = o.check.lock_kind() == LockKind::PerceptionCheck && !o.open;
            if unnoticed || !visible_to_player(zone, run, o.to_node.as_str()) {
                o.to_node = NodeId(String::new());
            }
            if !o.open {
                o.check = Check::Hidden {
                    lock_kind: o.check.lock_kind(),
                };
            }
        }
    }
    out
}

/// The exits of the current room as the player sees them: the pending fork's frozen results
/// when there is one, otherwise the untested locks.
pub fn exit_views(zone: &Zone, run: &Run) -> Vec<ExitView> {
    if let Some(fork) = run
        .pending_fork
        .as_ref()
        .filter(|f| f.at == run.current_node)
    {
        return fork
            .options
            .iter()
            .enumerate()
            .map(|(i, o)| {
                let lock = o.check.lock_kind();
                let hint = zone
                    .node_index(fork.at.as_str())
                    .zip(zone.node_index(o.to_node.as_str()))
                    .and_then(|(a, b)| zone.graph.find_edge(a, b))
                    .map(|e| zone.graph[e].hint.clone())
                    .unwrap_or_default();
                view(
                    zone,
                    run,
                    i + 1,
                    &o.to_node,
                    lock,
                    if o.open {
                        ExitState::Open
                    } else {
                        ExitState::Locked
                    },
                    &hint,
                )
            })
            .collect();
    }
    let Some(at) = zone.node_index(run.current_node.as_str()) else {
        return Vec::new();
    };
    zone.exits(at)
        .into_iter()
        .enumerate()
        .map(|(i, e)| {
            let edge = &zone.graph[e];
            let to = &zone.node(zone.target(e)).id;
            let state = if edge.lock.is_locked() {
                ExitState::Unchecked
            } else {
                ExitState::Open
            };
            view(zone, run, i + 1, to, edge.lock.kind(), state, &edge.hint)
        })
        .collect()
}

fn view(
    zone: &Zone,
    run: &Run,
    number: usize,
    to: &NodeId,
    lock: LockKind,
    state: ExitState,
    hint: &str,
) -> ExitView {
    // Not noticed: a Perception lock that failed or was not rolled yet hides what is there.
    let unnoticed = lock == LockKind::PerceptionCheck && state != ExitState::Open;
    let shown = !unnoticed && visible_to_player(zone, run, to.as_str());
    let node = zone.node_by_id(to.as_str());
    let teaser = (state != ExitState::Open).then(|| {
        let hint = hint.trim();
        if hint.is_empty() {
            narration::generic_teaser(lock).to_string()
        } else {
            hint.to_string()
        }
    });
    ExitView {
        number,
        to_node: shown.then(|| to.clone()),
        label: node
            .filter(|_| shown)
            .map(|n| narration::room_label(n).to_string()),
        kind: node
            .filter(|_| shown && state == ExitState::Open)
            .map(|n| n.kind),
        state,
        lock,
        teaser,
    }
}

fn visible_label(zone: &Zone, run: &Run, option: &ForkOption) -> Option<String> {
    if option.check.lock_kind() == LockKind::PerceptionCheck && !option.open {
        return None;
    }
    if !visible_to_player(zone, run, option.to_node.as_str()) {
        return None;
    }
    zone.node_by_id(option.to_node.as_str())
        .map(|n| narration::room_label(n).to_string())
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
            }
        })
        .collect();
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
        let room_total = ctx.total(zone, run.visited_nodes.len());
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

#[cfg(test)]
mod check_repr_tests {
    use super::*;

    #[test]
    fn every_check_reads_back_what_it_wrote() {
        let all = [
            Check::None,
            Check::PerceptionCheck {
                d20: 11,
                modifier: -1,
                dc: 12,
            },
            Check::StatCheck {
                ability: Ability::Str,
                d20: 3,
                modifier: 2,
                dc: 10,
            },
            Check::KeyRequired {
                key_id: "k".into(),
                held: true,
            },
            Check::LevelMin {
                min_level: 4,
                level: 2,
            },
            Check::RegionClear {
                region_id: "r".into(),
                cleared: false,
            },
            Check::Invalid {
                lock_kind: LockKind::StatCheck,
            },
            Check::Hidden {
                lock_kind: LockKind::PerceptionCheck,
            },
        ];
        for check in all {
            let json = serde_json::to_string(&check).expect("serialise");
            let back: Check = serde_json::from_str(&json).expect(&json);
            assert_eq!(back, check, "{json}");
        }
    }

    #[test]
    fn wrong_checks_are_refused_with_the_field() {
        let err = |json: &str| {
            serde_json::from_str::<Check>(json)
                .expect_err(json)
                .to_string()
        };
        assert!(err(r#"{"lock":"level_min","level":2}"#).contains("missing field `min_level`"));
        assert!(err(r#"{"lock":"none","dc":2}"#).contains("unknown field `dc`"));
        assert!(
            err(r#"{"lock":"level_min","min_level":1,"level":2,"x":1}"#)
                .contains("unknown field `x`")
        );
        assert!(err(r#"{"lock":"teleport"}"#).contains("unknown variant `teleport`"));
    }
}
