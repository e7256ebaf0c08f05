//! The run page's payload tells no more than the player view: random zones, random
//! characters and random play through a real server, and after every command the real
//! `GET /api/runs/{token}` checked against the view the core's own pipeline gives the same
//! player (the same commands, the same run id): the view is that view, nothing in the payload
//! names a room, key, DC or level the view does not hold, and the drawing is the layout of
//! that view with exactly its rooms and passages, no passage crossing an empty row or column
//! (a hidden room leaves no gap where it stands).

use std::collections::BTreeSet;

use proptest::prelude::*;
use serde_json::Value;
use zonegraph_core::bot::{self, Context, Player};
use zonegraph_core::command::Syntax;
use zonegraph_core::engine::{self, Character, PlayerView};
use zonegraph_core::layout::{DRAWING_SCALE, Drawing};
use zonegraph_core::rules;
use zonegraph_core::validate;
use zonegraph_core::zone::{self, Ability, Zone};

use super::token_of;
use crate::leaks::{check_output, key_id, zone_json};
use crate::support::{ADMIN, Ctx, say1};

const T0: i64 = 1_767_225_600_000;
const USER: &str = "@pv:test";

/// The sheet a new player of the test server has, as the admin then sets it.
struct Sheet {
    level: u32,
    wis: i32,
    dex: i32,
    key: Option<usize>,
}

impl Sheet {
    fn character(&self) -> Character {
        let mut c = Character::starting(rules::STARTING_SCORES);
        c.level = self.level;
        c.set_score(Ability::Wis, self.wis);
        c.set_score(Ability::Dex, self.dex);
        if let Some(k) = self.key {
            c.add_key(&key_id(k));
        }
        c
    }

    fn commands(&self) -> Vec<String> {
        let mut out = vec![
            format!("!char set {USER} level {}", self.level),
            format!("!char set {USER} wis {}", self.wis),
            format!("!char set {USER} dex {}", self.dex),
        ];
        if let Some(k) = self.key {
            out.push(format!("!char grant {USER} {}", key_id(k)));
        }
        out
    }
}

/// The `steps` commands `picks` chooses: enter, then moves, status and maps.
fn commands(picks: &[u8], steps: usize) -> Vec<String> {
    let mut pick = picks.iter().copied().cycle();
    let mut out = vec!["!zone enter pv".to_string(), "!zone map".to_string()];
    for _ in 2..steps {
        out.push(match pick.next().unwrap_or(0) % 7 {
            0 | 1 => "!zone advance".to_string(),
            2 | 3 => format!("!zone go {}", 1 + pick.next().unwrap_or(0) % 4),
            4 => "!zone fight".to_string(),
            5 => "!zone status".to_string(),
            _ => "!zone map".to_string(),
        });
    }
    out
}

/// The view with the time the fork was offered left out (the server's clock is not the
/// test's).
fn timeless(mut view: Value) -> Value {
    view["status"]["fork_created_at"] = Value::Null;
    view
}

/// Checks the drawing of a payload against the view the player has.
fn check_drawing(view: &PlayerView, map: &Value) -> Result<(), String> {
    let keys: BTreeSet<&str> = map
        .as_object()
        .ok_or("the drawing is an object")?
        .keys()
        .map(String::as_str)
        .collect();
    if keys != BTreeSet::from(["rooms", "passages"]) {
        return Err(format!("the drawing holds {keys:?}"));
    }
    let drawing: Drawing = serde_json::from_value(map.clone()).map_err(|e| e.to_string())?;
    if drawing != Drawing::of_view(view) {
        return Err("the drawing is not the layout of the player's view".into());
    }
    let rooms: BTreeSet<u32> = drawing.rooms.iter().map(|r| r[0]).collect();
    let all_rooms: BTreeSet<u32> = (0..view.rooms.len() as u32).collect();
    if rooms != all_rooms || drawing.rooms.len() != view.rooms.len() {
        return Err(format!(
            "the drawing's rooms {rooms:?} are not the view's {} rooms",
            view.rooms.len()
        ));
    }
    let passages: BTreeSet<usize> = drawing.passages.iter().map(|p| p.passage).collect();
    if passages != (0..view.passages.len()).collect() || drawing.passages.len() != passages.len() {
        return Err(format!(
            "the drawing's passages {passages:?} are not the view's {} passages",
            view.passages.len()
        ));
    }
    // No passage crosses a row or a column that holds no room: the gap a hidden room would
    // leave where it stands. (Parts of the view that no passage joins may stand apart.)
    for (what, at) in [("column", 1), ("row", 2)] {
        let used: BTreeSet<u32> = drawing.rooms.iter().map(|r| r[at]).collect();
        let (first, last) = match (used.first(), used.last()) {
            (Some(&f), Some(&l)) => (f, l),
            _ => continue,
        };
        if first != 0 {
            return Err(format!(
                "the first {what} is empty: the rooms take {used:?}"
            ));
        }
        for empty in (first..=last).filter(|i| !used.contains(i)) {
            let line = f64::from(empty) * DRAWING_SCALE;
            for p in &drawing.passages {
                let along = p.points.iter().map(|point| f64::from(point[at - 1]));
                let low = along.clone().fold(f64::INFINITY, f64::min);
                let high = along.fold(f64::NEG_INFINITY, f64::max);
                if low < line && line < high {
                    return Err(format!(
                        "passage {} crosses the empty {what} {empty} (the rooms take {used:?})\n\
                         drawing: {map}",
                        p.passage
                    ));
                }
            }
        }
        // No passage runs beyond the last row or column the rooms take.
        let most = (f64::from(last) + 1.0) * DRAWING_SCALE;
        for p in &drawing.passages {
            for point in &p.points {
                let v = f64::from(point[at - 1]);
                if v < -DRAWING_SCALE || v > most {
                    return Err(format!(
                        "passage {} runs to {point:?}, beyond the rooms' {what}s",
                        p.passage
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Plays `picks` on a server holding `zone` only, and the same commands through the core's
/// pipeline; checks the run page's payload after every command.
fn play_and_check(zone_text: &str, zone: &Zone, sheet: &Sheet, picks: &[u8]) -> Result<(), String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let zones = dir.path().join("zones");
    std::fs::create_dir_all(&zones).map_err(|e| e.to_string())?;
    std::fs::write(zones.join("pv.json"), zone_text).map_err(|e| e.to_string())?;
    let (_server, mut c) = Ctx::new(dir.path()).zones(zones).spawn();
    for cmd in sheet.commands() {
        say1(&mut c, ADMIN, &cmd);
    }
    // The core's pipeline, for the same player: the run id the test server gives a user's
    // first run.
    let core_zones = vec![zone.clone()];
    let mut player = Player {
        character: sheet.character(),
        run: None,
    };
    let cx = Context {
        now: T0,
        new_run_id: format!("{USER}/1"),
        run_link: None,
        fork_timeout_ms: engine::DEFAULT_FORK_TIMEOUT_MS,
        syntax: Syntax::Chat,
        authority: bot::Authority::Player,
    };
    let mut token = None;
    for cmd in commands(picks, 30) {
        let said = say1(&mut c, USER, &cmd);
        bot::handle(&core_zones, &mut player, &cmd, &cx);
        if token.is_none() && said.contains("/run/") {
            token = Some(token_of(&said));
        }
        let (Some(token), Some(run)) = (&token, &player.run) else {
            continue;
        };
        let expected = engine::player_view(zone, run, &player.character);
        let view_json = serde_json::to_string(&expected).map_err(|e| e.to_string())?;
        let r = c
            .get(&format!("/api/runs/{token}"))
            .map_err(|e| e.to_string())?;
        if r.status != 200 {
            return Err(format!("after {cmd:?}: {} {}", r.status, r.text()));
        }
        let payload = r.json();
        let want = timeless(serde_json::to_value(&expected).map_err(|e| e.to_string())?);
        if timeless(payload["view"].clone()) != want {
            return Err(format!(
                "after {cmd:?} the payload's view is not the player's view:\n{}\nwanted:\n{want}",
                payload["view"]
            ));
        }
        check_output(
            zone,
            &view_json,
            &r.text(),
            &format!("the payload after {cmd:?}"),
        )?;
        if r.text().contains(&run.run_id) {
            return Err(format!("the payload after {cmd:?} holds the run id"));
        }
        check_drawing(&expected, &payload["map"]).map_err(|e| format!("after {cmd:?}: {e}"))?;
    }
    if token.is_none() {
        return Err("no run link was given".into());
    }
    Ok(())
}

proptest! {
    // A server a case: few cases, each a whole run.
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn the_run_page_payload_tells_no_more_than_the_player_view(
        widths in proptest::collection::vec(1usize..4, 1..6),
        picks in proptest::collection::vec(any::<u8>(), 8..64),
        wis in 1i32..=20,
        dex in 1i32..=20,
        level in 1u32..=9,
        key in proptest::option::of(0usize..4),
    ) {
        let text = zone_json(&widths, &picks);
        let checked = validate::check_sources(&[("pv.json".to_string(), text.clone())]);
        // The server leaves out a zone with errors; those are the core test's.
        prop_assume!(!checked[0].has_errors());
        let (zone, _) = zone::load(&text).expect("the generated zone parses");
        let sheet = Sheet { level, wis, dex, key };
        if let Err(e) = play_and_check(&text, &zone, &sheet, &picks) {
            prop_assert!(false, "{}\nzone: {}", e, text);
        }
    }
}
