//! The stored run: the character the engine reads, a run's state as the server keeps it in
//! `dnd_zone_run`, and each lock's frozen evaluation ([`Check`]).
//!
//! Plain serialisable values with no behaviour beyond reading themselves: the state machine
//! in [`super`] moves them, and [`super::view`] decides what a player may see of them.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::format::LockKind;
use crate::roll;
use crate::rules::{self, EncounterKind, LEVEL_RANGE, MAX_KEY_BYTES, MAX_KEYS};
use crate::zone::{Ability, NodeId, Zone, normalize_key};

/// One change to a character sheet: what `!char level 5` does to the sender's own sheet (in a
/// sandbox) and `!char set @user level 5` to another's (an admin).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "edit", rename_all = "snake_case")]
pub enum CharEdit {
    Level { level: u32 },
    Score { ability: Ability, score: i32 },
    Grant { key: String },
    Revoke { key: String },
}

/// What the engine needs to know about the player.
///
/// JSON: `{"level":3,"scores":{"str":10,"dex":10,"con":10,"int":10,"wis":14,"cha":10},
/// "keys":["skull_key"],"xp":300}`; every field may be left out (level 1, scores 10, no keys,
/// no XP). A new player's character is [`Character::starting`].
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
    /// Experience earned under the built-in rules ([`crate::rules::LEVEL_XP`]).
    #[serde(skip_serializing_if = "is_zero")]
    pub xp: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl Default for Character {
    fn default() -> Self {
        Character {
            level: 1,
            scores: [10; 6],
            keys: BTreeSet::new(),
            xp: 0,
        }
    }
}

impl Character {
    /// The one default character: the standard scores ([`rules::STARTING_SCORES`], a new
    /// player's on the server) at `level`, no keys, no XP. What a playtest, `zonegraph play`
    /// and the wasm module play with unless told otherwise (at the zone's `min_level`), and
    /// what the difficulty model predicts for.
    pub fn standard(level: u32) -> Self {
        Character {
            level: level.clamp(*LEVEL_RANGE.start(), *LEVEL_RANGE.end()),
            scores: rules::STARTING_SCORES,
            ..Character::default()
        }
    }

    /// [`Character::standard`] at `zone`'s `min_level`.
    pub fn standard_for(zone: &crate::zone::Zone) -> Self {
        Character::standard(zone.min_level)
    }

    /// A new character: [`rules::STARTING_LEVEL`], `scores`, no keys and no XP.
    pub fn starting(scores: [i32; 6]) -> Self {
        Character {
            level: rules::STARTING_LEVEL,
            scores,
            ..Character::default()
        }
    }

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

    /// Adds a key; false when it is empty after normalising, already held, longer than
    /// [`MAX_KEY_BYTES`], or the character already holds [`MAX_KEYS`].
    pub fn add_key(&mut self, key: &str) -> bool {
        let key = normalize_key(key);
        !key.is_empty()
            && key.len() <= MAX_KEY_BYTES
            && self.keys.len() < MAX_KEYS
            && self.keys.insert(key)
    }

    /// Removes a key; false when it was not held.
    pub fn remove_key(&mut self, key: &str) -> bool {
        self.keys.remove(&normalize_key(key))
    }

    /// Applies `edit`, refusing a key that breaks the limits of [`Character::add_key`].
    pub fn edit(&mut self, edit: &CharEdit) -> Result<(), super::Refusal> {
        match edit {
            CharEdit::Level { level } => self.level = *level,
            CharEdit::Score { ability, score } => self.set_score(*ability, *score),
            CharEdit::Grant { key } => {
                if normalize_key(key).len() > MAX_KEY_BYTES {
                    return Err(super::Refusal::KeyTooLong {
                        max_bytes: MAX_KEY_BYTES,
                    });
                }
                if !self.has_key(key) && self.keys.len() >= MAX_KEYS {
                    return Err(super::Refusal::TooManyKeys { max: MAX_KEYS });
                }
                self.add_key(key);
            }
            CharEdit::Revoke { key } => {
                self.remove_key(key);
            }
        }
        Ok(())
    }

    /// Adds experience; the new level when it reached one by [`crate::rules::LEVEL_XP`] (a
    /// level an admin set higher is kept).
    pub fn gain_xp(&mut self, amount: u32) -> Option<u32> {
        self.xp = self.xp.saturating_add(amount);
        let level = rules::level_for_xp(self.xp);
        (level > self.level).then(|| {
            self.level = level;
            level
        })
    }

    /// Keeps the keys a run granted, so they open locks in later runs and other zones (up to
    /// the limits of [`Character::add_key`]; the run itself still holds every key it found).
    pub fn keep_keys_from(&mut self, run: &Run) {
        for key in &run.keys_granted {
            if !self.keys.contains(key) {
                self.add_key(key);
            }
        }
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
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The boss was defeated.
    Victory,
    /// A room with no way on (a dead-end secret) ended the run quietly.
    DeadEnd,
    /// The player gave up.
    Abandoned,
    /// Too many wounds, or a host game said the encounter was lost.
    Defeat,
    /// The player fled an encounter.
    Fled,
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
    /// The fork waiting for the player, if any (stored in the `node_choices` column).
    #[serde(default)]
    pub pending_fork: Option<PendingFork>,
    /// The forks and locked passages the run met and left, in order, as evaluated then and
    /// which way it went: what play insight reads (pass rates, choices).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub forks_met: Vec<MetFork>,
    /// The character's level when the run started (0: not known, a run from before it was
    /// kept).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub level: u32,
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
    /// Perception passages `(from, to)` whose check the run failed: a room every way into
    /// which is among them stays "something" to the player.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub missed_passages: BTreeSet<(NodeId, NodeId)>,
    /// The encounter waiting in the current room: the run cannot move on until it is resolved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encounter: Option<PendingEncounter>,
    /// Failed encounter checks since the last rest camp; [`crate::rules::MAX_WOUNDS`] end the
    /// run.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub wounds: u32,
    /// Experience this run earned (built-in rules).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub xp_earned: u32,
    /// Rooms whose loot roll found loot.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub loot: BTreeSet<NodeId>,
    /// The last encounter check the chat showed (built-in rules).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_check: Option<EncounterCheck>,
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
    /// `visited_nodes` as a set, for [`Run::has_visited`]; never stored nor compared.
    #[serde(skip)]
    pub visited_index: VisitedIndex,
}

/// Rooms of a run's list up to which [`Run::has_visited`] reads the list itself.
const VISITED_SCAN: usize = 16;

/// A run's `visited_nodes` as a set, built on the first look-up past [`VISITED_SCAN`] rooms and
/// then extended by the rooms added since (the list only ever grows at its end; a list that
/// changed otherwise is seen by its length or last room and read again). So a step's look-up
/// costs log n, and a replay that steps a long run stays linear in its length. A clone starts
/// empty; two are always equal.
#[derive(Default)]
pub struct VisitedIndex(std::sync::Mutex<Option<(usize, BTreeSet<NodeId>)>>);

impl Clone for VisitedIndex {
    fn clone(&self) -> VisitedIndex {
        VisitedIndex::default()
    }
}

impl PartialEq for VisitedIndex {
    fn eq(&self, _: &VisitedIndex) -> bool {
        true
    }
}

impl std::fmt::Debug for VisitedIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("VisitedIndex")
    }
}

impl Run {
    /// A run that has just begun in `current`, having visited `visited`.
    pub(super) fn fresh(
        run_id: &str,
        zone: &Zone,
        current: NodeId,
        visited: Vec<NodeId>,
        now: i64,
    ) -> Run {
        Run {
            run_id: run_id.to_string(),
            zone_id: zone.id.clone(),
            current_node: current,
            visited_nodes: visited,
            pending_fork: None,
            forks_met: Vec::new(),
            level: 0,
            cleared_regions: BTreeSet::new(),
            harvested: BTreeMap::new(),
            keys_granted: BTreeSet::new(),
            revealed_secrets: BTreeSet::new(),
            missed_passages: BTreeSet::new(),
            encounter: None,
            wounds: 0,
            xp_earned: 0,
            loot: BTreeSet::new(),
            last_check: None,
            started_at: now,
            last_action_at: now,
            completed_at: None,
            boss_defeated: false,
            abandoned: false,
            outcome: None,
            visited_index: VisitedIndex::default(),
        }
    }

    /// Whether `id` is in the run's list of rooms reached (`visited_nodes`), in log n.
    pub fn has_visited(&self, id: &NodeId) -> bool {
        let list = &self.visited_nodes;
        if list.len() <= VISITED_SCAN {
            return list.contains(id);
        }
        let mut kept = self
            .visited_index
            .0
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        let (seen, set) = kept.get_or_insert_with(|| (0, BTreeSet::new()));
        let same = *seen <= list.len() && (*seen == 0 || set.contains(&list[*seen - 1]));
        if !same || set.len() != *seen {
            *seen = 0;
            set.clear();
        }
        set.extend(list[*seen..].iter().cloned());
        *seen = list.len();
        set.contains(id)
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

/// An encounter waiting in the run's current room.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PendingEncounter {
    pub at: NodeId,
    pub kind: EncounterKind,
    /// Checks made so far: the next one is attempt `attempts + 1`.
    #[serde(default)]
    pub attempts: u32,
}

/// One encounter check of the built-in rules: d20 + modifier against the DC.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EncounterCheck {
    pub node: NodeId,
    pub kind: EncounterKind,
    /// 1 for the first check in the room, 2 for the next, …
    pub attempt: u32,
    pub d20: u32,
    pub modifier: i32,
    pub dc: u32,
    pub won: bool,
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

/// A fork (or a lone locked passage) a run left: its options as they were evaluated, and
/// the one taken (`picked`: by the fork timeout, not the player).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MetFork {
    pub at: NodeId,
    pub options: Vec<ForkOption>,
    /// Index into `options` of the way taken.
    pub taken: usize,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub picked: bool,
}

/// One option of a pending fork.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ForkOption {
    pub to_node: NodeId,
    pub open: bool,
    pub check: Check,
    /// A refused `!zone go` told the player this option's roll or requirement.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub revealed: bool,
}

/// A lock's frozen evaluation: the roll and what it was compared with.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
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
}

/// [`Check`] as stored, read flat. The derived reader for an internally tagged enum buffers
/// every object it reads and is ~19 KB of wasm on its own; this one is a plain struct and
/// gives the same errors (unknown lock, missing or unexpected field).
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
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

#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
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
            Check::Invalid { .. } => false,
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
            Check::Invalid { lock_kind } => *lock_kind,
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
            Check::Invalid { .. } => LockReason::Sealed,
        })
    }
}

fn total(d20: u32, modifier: i32) -> i64 {
    i64::from(d20) + i64::from(modifier)
}

/// Why a locked option cannot be taken. The only place a DC is ever shown to the player.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
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

#[cfg(test)]
mod visited_index_tests {
    use super::*;

    /// [`Run::has_visited`] answers what the list says: as the list grows past the scan
    /// length one room at a time and many at once, after a clone, and after the list is
    /// replaced by a shorter or a different one.
    #[test]
    fn has_visited_agrees_with_the_list_however_it_changes() {
        let (zone, _) = crate::zone::build(&crate::synth::layered("v", 3, 1, 1));
        let id = |i: usize| NodeId(format!("room_{i}"));
        let mut run = Run::fresh("r", &zone, id(0), Vec::new(), 0);
        let agrees = |run: &Run, upto: usize| {
            for i in 0..upto {
                assert_eq!(
                    run.has_visited(&id(i)),
                    run.visited_nodes.contains(&id(i)),
                    "room {i} of {} listed",
                    run.visited_nodes.len()
                );
            }
        };
        for i in 0..3 * VISITED_SCAN {
            run.visited_nodes.push(id(i));
            agrees(&run, 4 * VISITED_SCAN);
        }
        run.visited_nodes
            .extend((3 * VISITED_SCAN..5 * VISITED_SCAN).map(id));
        agrees(&run, 6 * VISITED_SCAN);
        let copy = run.clone();
        agrees(&copy, 6 * VISITED_SCAN);
        run.visited_nodes.truncate(2 * VISITED_SCAN);
        agrees(&run, 6 * VISITED_SCAN);
        run.visited_nodes = (100..100 + 3 * VISITED_SCAN).map(id).collect();
        agrees(&run, 200);
        run.visited_nodes = (0..4 * VISITED_SCAN).rev().map(id).collect();
        agrees(&run, 200);
    }
}
