//! What carrying a gogobee character over decides: how its level and XP map onto the
//! built-in rules' and back. The one owner of that mapping (the first sheet reads it, the
//! opt-in write-back writes it).
//!
//! The two games count XP differently. gogobee's `dnd_character.dnd_xp` is the XP earned
//! *toward the next level* (it drops to the surplus at each level-up), on its own curve
//! (`dndXPTable` in gogobee's `internal/plugin/dnd_xp.go`, at commit `1ee4276b`); ours is
//! the total earned, on [`rules::LEVEL_XP`]. A character keeps its level and its progress
//! through that level, as a fraction of the level's span, both ways; at level 20 (both
//! games' cap) there is no span and the XP toward the next level is 0.

use zonegraph_core::rules;

use crate::db::GogobeeProgress;

/// gogobee's `dndXPTable`: level `L` needs `GOGOBEE_XP[L - 1]` XP in total from level 1.
pub const GOGOBEE_XP: [u32; 20] = [
    0, 300, 900, 1_700, 2_700, 4_300, 6_500, 9_000, 11_500, 14_000, 18_000, 22_000, 26_000, 30_000,
    34_000, 44_000, 54_000, 64_000, 74_000, 85_000,
];

/// The levels of both games (gogobee's table has one XP figure per level of ours).
const LEVELS: std::ops::RangeInclusive<u32> = zonegraph_core::rules::LEVEL_RANGE;

/// The XP a level spans in `table` (0 at the cap).
fn span(table: &[u32; 20], level: u32) -> u32 {
    let i = level as usize;
    if i >= table.len() {
        0
    } else {
        table[i] - table[i - 1]
    }
}

/// gogobee's `(dnd_level, dnd_xp)` as our total XP at that level, or why it cannot be
/// (a level outside 1..=20). XP at or past the level's cost (which gogobee would have
/// turned into a level) counts as the level's end, just short of the next.
pub fn xp_from_gogobee(level: u32, toward_next: u32) -> Result<u32, String> {
    if !LEVELS.contains(&level) {
        return Err(format!(
            "level {level} is outside {} to {}",
            LEVELS.start(),
            LEVELS.end()
        ));
    }
    let start = rules::LEVEL_XP[level as usize - 1];
    let (theirs, ours) = (span(&GOGOBEE_XP, level), span(&rules::LEVEL_XP, level));
    if theirs == 0 {
        return Ok(start);
    }
    let done = u64::from(toward_next.min(theirs - 1));
    let scaled = done * u64::from(ours) / u64::from(theirs);
    Ok(start + u32::try_from(scaled).unwrap_or(ours - 1).min(ours - 1))
}

/// Our `(level, total XP)` as gogobee's `(dnd_level, dnd_xp)`: the same level, and the
/// progress through it in gogobee's XP (0 when an admin set the level above what the XP
/// reaches, and at the cap).
pub fn xp_to_gogobee(level: u32, total: u32) -> (u32, u32) {
    let level = level.clamp(*LEVELS.start(), *LEVELS.end());
    let start = rules::LEVEL_XP[level as usize - 1];
    let (theirs, ours) = (span(&GOGOBEE_XP, level), span(&rules::LEVEL_XP, level));
    if theirs == 0 || total <= start {
        return (level, 0);
    }
    let done = u64::from((total - start).min(ours - 1));
    let scaled = done * u64::from(theirs) / u64::from(ours);
    (
        level,
        u32::try_from(scaled).unwrap_or(theirs - 1).min(theirs - 1),
    )
}

/// gogobee's `computeMaxHP` (its D&D character layer, beside `LoadDnDCharacter`): the class's hit die at level 1 and
/// its average after, plus the CON modifier each level (at least 1 a level). `None` for a
/// class gogobee does not know (its own code then gives 1).
pub fn gogobee_max_hp(class: &str, con: i32, level: u32) -> Option<i64> {
    let (die, avg) = match class {
        "fighter" => (10, 6),
        "rogue" | "cleric" | "ranger" => (8, 5),
        "mage" => (6, 4),
        _ => return None,
    };
    let con_mod = i64::from(zonegraph_core::roll::modifier(con));
    let mut hp = (die + con_mod).max(1);
    for _ in 2..=level {
        hp += (avg + con_mod).max(1);
    }
    Some(hp)
}

/// What the write-back (`serve --gogobee-write-back`) writes to gogobee's row `old` for our
/// sheet at `level` with `xp`: gogobee's level and XP toward the next for them, and on a
/// level gained its hit points as its own level-up sets them (the new level's maximum, the
/// current raised by the gain). `None` when that is not ahead of what gogobee holds: the
/// write-back never lowers a character gogobee advanced meanwhile.
pub fn written_back(old: &GogobeeProgress, level: u32, xp: u32) -> Option<GogobeeProgress> {
    let (to_level, toward) = xp_to_gogobee(level, xp);
    let (to_level, toward) = (i64::from(to_level), i64::from(toward));
    if (to_level, toward) <= (old.level, old.xp) {
        return None;
    }
    let mut new = old.clone();
    new.level = to_level;
    new.xp = toward;
    if to_level > old.level {
        let con = i32::try_from(old.con).unwrap_or(10);
        let max = gogobee_max_hp(&old.class, con, level.clamp(*LEVELS.start(), *LEVELS.end()))
            .unwrap_or(old.hp_max)
            // gogobee gives at least 1 a level.
            .max(old.hp_max + (to_level - old.level));
        new.hp_max = max;
        new.hp_current = (old.hp_current + (max - old.hp_max)).min(max);
    }
    Some(new)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_carried_character_keeps_its_level_and_its_progress_through_it() {
        // Level 14 halfway to 15 in gogobee (2,000 of 4,000) is level 14 halfway in ours.
        let ours = xp_from_gogobee(14, 2_000).expect("in range");
        assert_eq!(rules::level_for_xp(ours), 14);
        assert_eq!(ours, 7_600 + (9_200 - 7_600) / 2);
        assert_eq!(xp_to_gogobee(14, ours), (14, 2_000));
        // Every level and progress maps to the same level, and back within one XP.
        for level in LEVELS {
            for toward in [0, 1, 150, 299, 1_000, 3_999, 10_000, u32::MAX] {
                let ours = xp_from_gogobee(level, toward).expect("in range");
                assert_eq!(rules::level_for_xp(ours), level, "{level} {toward}");
                let (l, back) = xp_to_gogobee(level, ours);
                assert_eq!(l, level);
                let theirs = span(&GOGOBEE_XP, level);
                let want = toward.min(theirs.saturating_sub(1));
                let step = theirs / span(&rules::LEVEL_XP, level).max(1) + 1;
                assert!(
                    back <= want && want - back <= step,
                    "{level} {toward}: {back}"
                );
            }
        }
        assert_eq!(xp_from_gogobee(20, 9_999), Ok(rules::LEVEL_XP[19]));
        assert!(xp_from_gogobee(0, 0).is_err() && xp_from_gogobee(21, 0).is_err());
        // An admin's level above the XP: no progress through it yet.
        assert_eq!(xp_to_gogobee(10, 0), (10, 0));
    }

    #[test]
    fn the_write_back_advances_gogobee_and_never_lowers_it() {
        let old = GogobeeProgress {
            level: 14,
            xp: 2_000,
            class: "fighter".into(),
            con: 14,
            hp_max: 116,
            hp_current: 100,
        };
        // Our level 14 three quarters through: gogobee's 3,000 of 4,000.
        let ours = 7_600 + 1_200;
        let new = written_back(&old, 14, ours).expect("ahead");
        assert_eq!((new.level, new.xp, new.hp_max), (14, 3_000, 116));
        // Level 15: gogobee's fighter at CON 14 has 12 + 14 × 8 = 124.
        let new = written_back(&old, 15, 9_200).expect("ahead");
        assert_eq!(
            (new.level, new.xp, new.hp_max, new.hp_current),
            (15, 0, 124, 108)
        );
        // Behind or level with gogobee: nothing written.
        assert_eq!(written_back(&old, 14, 8_400), None);
        assert_eq!(written_back(&old, 13, 7_500), None);
    }

    #[test]
    fn max_hp_is_gogobees() {
        // Fighter, CON 14 (+2): 12 at level 1, +8 a level.
        assert_eq!(gogobee_max_hp("fighter", 14, 1), Some(12));
        assert_eq!(gogobee_max_hp("fighter", 14, 3), Some(28));
        // Mage with CON 3 (-4): at least 1 a level.
        assert_eq!(gogobee_max_hp("mage", 3, 2), Some(3));
        assert_eq!(gogobee_max_hp("bard", 10, 2), None);
    }
}
