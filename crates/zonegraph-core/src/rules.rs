//! The built-in game rules: starting scores, experience, levels, encounter checks, wounds and
//! loot, as `const` tables that the engine, docs/guide/game.md and the tests all read.
//!
//! These rules apply when no host game is connected. A host game (the server's
//! `--host-hook`) supplies its own character sheets and encounter outcomes instead; see
//! [`crate::engine::HostOutcome`].

use serde::{Deserialize, Serialize};

use crate::format::NodeKind;
use crate::roll;
use crate::zone::{Ability, Node};

/// The scores a new character starts with, in `[str, dex, con, int, wis, cha]` order: the
/// standard array. A host may start characters with another array ([`crate::engine::Character::starting`]).
pub const STARTING_SCORES: [i32; 6] = [15, 14, 13, 12, 10, 8];

/// The level a new character starts at.
pub const STARTING_LEVEL: u32 = 1;

/// Lowest and highest level a character may have.
pub const LEVEL_RANGE: std::ops::RangeInclusive<u32> = 1..=20;

/// Lowest and highest ability score.
pub const SCORE_RANGE: std::ops::RangeInclusive<i32> = 1..=30;

/// Most keys a character holds: a player's state stays small whatever they do.
pub const MAX_KEYS: usize = 64;

/// Longest key id, in bytes (after normalising).
pub const MAX_KEY_BYTES: usize = 64;

/// Experience needed for each level: level `n` needs `LEVEL_XP[n - 1]` XP in total.
pub const LEVEL_XP: [u32; 20] = [
    0, 100, 250, 450, 700, 1_000, 1_400, 1_900, 2_500, 3_200, 4_000, 5_000, 6_200, 7_600, 9_200,
    11_000, 13_000, 15_500, 18_500, 22_000,
];

/// Experience for clearing a room, by room kind, at tier 1; a zone of tier `t` gives `t`
/// times as much. Fork and merge rooms have nothing to clear. A room with an
/// `encounter_override` that is none of trap, elite or boss gives the elite's XP.
pub const ROOM_XP: [(NodeKind, u32); 10] = [
    (NodeKind::Entry, 0),
    (NodeKind::Exploration, 10),
    (NodeKind::Trap, 20),
    (NodeKind::Elite, 40),
    (NodeKind::Boss, 100),
    (NodeKind::Harvest, 10),
    (NodeKind::RestCamp, 0),
    (NodeKind::Secret, 25),
    (NodeKind::Fork, 0),
    (NodeKind::Merge, 0),
];

/// The encounter check's DC at tier 1, by encounter kind; each tier above 1 adds 1.
pub const ENCOUNTER_DC: [(EncounterKind, u32); 3] = [
    (EncounterKind::Trap, 11),
    (EncounterKind::Elite, 12),
    (EncounterKind::Boss, 13),
];

/// Wounds that end a run in defeat: the third failed encounter check.
pub const MAX_WOUNDS: u32 = 3;

/// The loot roll: a d20 times the room's `loot_bias` (default 1), rounded down, finds loot
/// when it reaches this.
pub const LOOT_DC: u32 = 15;

/// What kind of fight a room holds.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EncounterKind {
    Trap,
    Elite,
    Boss,
}

impl EncounterKind {
    pub fn as_str(self) -> &'static str {
        match self {
            EncounterKind::Trap => "trap",
            EncounterKind::Elite => "elite",
            EncounterKind::Boss => "boss",
        }
    }
}

/// The encounter a room starts, if any: trap, elite and boss rooms (and the zone's boss,
/// whatever its kind), and any room with an `encounter_override` (fought as an elite unless
/// it is a trap or boss room).
pub fn encounter_kind(node: &Node) -> Option<EncounterKind> {
    if node.is_boss || node.kind == NodeKind::Boss {
        return Some(EncounterKind::Boss);
    }
    match node.kind {
        NodeKind::Trap => Some(EncounterKind::Trap),
        NodeKind::Elite => Some(EncounterKind::Elite),
        _ if !node.content.encounter_override.trim().is_empty() => Some(EncounterKind::Elite),
        _ => None,
    }
}

/// The DC of an encounter in a zone of `tier` (tiers below 1 count as 1).
pub fn encounter_dc(tier: u8, kind: EncounterKind) -> u32 {
    let base = ENCOUNTER_DC
        .iter()
        .find(|(k, _)| *k == kind)
        .map_or(12, |(_, dc)| *dc);
    base + u32::from(tier.max(1)) - 1
}

/// The modifier added to the encounter d20: trap, the DEX modifier; elite, the higher of
/// the STR and DEX modifiers; boss, the best modifier of all six scores plus half the level
/// (rounded down).
pub fn encounter_modifier(kind: EncounterKind, level: u32, scores: &[i32; 6]) -> i32 {
    let m = |a: Ability| roll::modifier(scores[a.index()]);
    match kind {
        EncounterKind::Trap => m(Ability::Dex),
        EncounterKind::Elite => m(Ability::Str).max(m(Ability::Dex)),
        EncounterKind::Boss => {
            let best = Ability::ALL.iter().map(|a| m(*a)).max().unwrap_or(0);
            let half = i32::try_from(level / 2).unwrap_or(i32::MAX);
            best.saturating_add(half)
        }
    }
}

/// The encounter d20 for attempt `attempt` (1, 2, …) at room `room` of run `run_id`: the
/// same SHA-1 formula as the locks ([`roll::d20`]) over `"{run_id}|{room}|fight {attempt}"`.
pub fn encounter_d20(run_id: &str, room: &str, attempt: u32) -> u32 {
    roll::d20(run_id, room, &format!("fight {attempt}"))
}

/// The loot d20 for room `room` of run `run_id`: [`roll::d20`] over `"{run_id}|{room}|loot"`.
pub fn loot_d20(run_id: &str, room: &str) -> u32 {
    roll::d20(run_id, room, "loot")
}

/// The loot roll's total: the d20 times the bias, rounded down (a negative or unusable bias,
/// or one so large the product is not finite, counts as 0).
pub fn loot_total(d20: u32, loot_bias: f64) -> u32 {
    let t = f64::from(d20) * loot_bias;
    if t.is_finite() && t > 0.0 {
        // Saturating float-to-int cast: a huge bias gives u32::MAX.
        t.floor() as u32
    } else {
        0
    }
}

/// XP for clearing a room of `kind` (the zone's boss counts as a boss) in a zone of `tier`.
pub fn room_xp(tier: u8, node: &Node) -> u32 {
    let kind = match encounter_kind(node) {
        Some(EncounterKind::Boss) => NodeKind::Boss,
        Some(EncounterKind::Elite) if node.kind != NodeKind::Elite => NodeKind::Elite,
        _ => node.kind,
    };
    let base = ROOM_XP
        .iter()
        .find(|(k, _)| *k == kind)
        .map_or(0, |(_, xp)| *xp);
    base.saturating_mul(u32::from(tier.max(1)))
}

/// The level `xp` reaches by [`LEVEL_XP`].
pub fn level_for_xp(xp: u32) -> u32 {
    let reached = LEVEL_XP.iter().take_while(|need| xp >= **need).count();
    u32::try_from(reached).unwrap_or(1).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn level_thresholds_rise_and_read_back() {
        assert!(LEVEL_XP.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(level_for_xp(0), 1);
        assert_eq!(level_for_xp(99), 1);
        assert_eq!(level_for_xp(100), 2);
        assert_eq!(level_for_xp(22_000), 20);
        assert_eq!(level_for_xp(u32::MAX), 20);
    }

    #[test]
    fn dcs_and_modifiers_follow_the_tables() {
        assert_eq!(encounter_dc(1, EncounterKind::Trap), 11);
        assert_eq!(encounter_dc(0, EncounterKind::Trap), 11);
        assert_eq!(encounter_dc(6, EncounterKind::Boss), 18);
        let s = STARTING_SCORES;
        assert_eq!(encounter_modifier(EncounterKind::Trap, 1, &s), 2);
        assert_eq!(encounter_modifier(EncounterKind::Elite, 1, &s), 2);
        assert_eq!(encounter_modifier(EncounterKind::Boss, 5, &s), 4);
        assert_eq!(
            encounter_modifier(EncounterKind::Boss, u32::MAX, &[30; 6]),
            i32::MAX
        );
    }

    #[test]
    fn loot_totals_round_down_and_never_go_negative() {
        assert_eq!(loot_total(10, 1.0), 10);
        assert_eq!(loot_total(7, 2.5), 17);
        assert_eq!(loot_total(20, -1.0), 0);
        assert_eq!(loot_total(20, f64::NAN), 0);
        assert_eq!(loot_total(20, 1e12), u32::MAX);
        assert_eq!(loot_total(20, f64::MAX), 0);
    }
}
