//! The player view is the one owner of what a player may know: no chat reply and no chat map
//! names a room, a DC, a level or a key that the view does not hold. Random zones, random
//! characters and random play through the real command pipeline. (The run page's payload,
//! `GET /api/runs/{token}` with its drawing, is checked the same way through a real server
//! in the workspace's `tests/`.)

use proptest::prelude::*;
use zonegraph_core::bot::{self, Context, Player};
use zonegraph_core::chat;
use zonegraph_core::command::Syntax;
use zonegraph_core::engine::{self, Character};
use zonegraph_core::map::{self, MapOptions, MapView};
use zonegraph_core::zone::{self, Ability, Zone};

use crate::leaks::{check_output, key_id, zone_json};

const T0: i64 = 1_767_225_600_000;

/// Plays `steps` commands chosen by `picks` and checks every output after each.
fn play_and_check(
    zone: &Zone,
    character: Character,
    picks: &[u8],
    steps: usize,
) -> Result<(), String> {
    let zones = vec![zone.clone()];
    let mut player = Player {
        character,
        run: None,
    };
    let cx = |i: usize| Context {
        now: T0 + i as i64 * 1000,
        new_run_id: format!("pv-{}", picks.first().copied().unwrap_or(0)),
        run_link: Some("https://zones.example/run/0123".into()),
        fork_timeout_ms: engine::DEFAULT_FORK_TIMEOUT_MS,
        syntax: Syntax::Chat,
        authority: bot::Authority::Sandbox,
    };
    let mut pick = picks.iter().copied().cycle();
    for i in 0..steps {
        let text = if i == 0 {
            "!zone enter pv".to_string()
        } else {
            match pick.next().unwrap_or(0) % 6 {
                0 | 1 => "!zone advance".to_string(),
                2 | 3 => format!("!zone go {}", 1 + pick.next().unwrap_or(0) % 4),
                4 => "!zone status".to_string(),
                _ => "!zone map".to_string(),
            }
        };
        let response = bot::handle(&zones, &mut player, &text, &cx(i));
        let Some(run) = player.run.as_ref() else {
            continue;
        };
        let view = engine::player_view(zone, run, &player.character);
        // "Room X of Y" kept per zone (per secrets on the map) is what working it out afresh
        // from the player's knowledge gives.
        let known = engine::view::knowledge(zone, run);
        let afresh = zonegraph_core::paths::longest_path_len_within(zone, &|ix| {
            known[ix.index()] != engine::Knowledge::Hidden
        })
        .unwrap_or(0)
        .max(run.room_number());
        if view.status.room_total != afresh {
            return Err(format!(
                "room total {} kept, {afresh} afresh, after {text:?}",
                view.status.room_total
            ));
        }
        let view_json = serde_json::to_string(&view).map_err(|e| e.to_string())?;
        for reply in &response.replies {
            check_output(zone, &view_json, &reply.text, &format!("reply to {text:?}"))?;
            check_output(
                zone,
                &view_json,
                &reply.html,
                &format!("html reply to {text:?}"),
            )?;
        }
        let drawn = map::render_map(zone, &MapView::of_run(zone, run), &MapOptions::default());
        check_output(zone, &view_json, &drawn, "the chat map")?;
        if view_json.contains(&run.run_id) {
            return Err("the player view holds the run id".into());
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn no_player_facing_output_tells_more_than_the_player_view(
        widths in proptest::collection::vec(1usize..4, 1..6),
        picks in proptest::collection::vec(any::<u8>(), 8..64),
        wis in 1i32..=20,
        dex in 1i32..=20,
        level in 1u32..=9,
        key in proptest::option::of(0usize..4),
    ) {
        let (zone, _) = zone::load(&zone_json(&widths, &picks)).expect("the generated zone parses");
        let mut character = Character { level, ..Character::default() };
        character.set_score(Ability::Wis, wis);
        character.set_score(Ability::Dex, dex);
        if let Some(k) = key {
            character.add_key(&key_id(k));
        }
        if let Err(e) = play_and_check(&zone, character, &picks, 40) {
            prop_assert!(false, "{}\nzone: {}", e, zone_json(&widths, &picks));
        }
    }
}

/// The Crypt's fork after a failed Perception check: the chapel is "something" everywhere.
#[test]
fn a_room_behind_a_failed_perception_check_is_unknown_on_every_map() {
    let text = include_str!("../../../../zones/crypt_valdris.json");
    let (zone, _) = zone::load(text).expect("crypt parses");
    // crypt-6: the chapel wall's d20 is 9; WIS 10 fails DC 12.
    let zones = vec![zone.clone()];
    let mut player = Player::default();
    let cx = Context {
        now: T0,
        new_run_id: "crypt-6".into(),
        run_link: None,
        fork_timeout_ms: engine::DEFAULT_FORK_TIMEOUT_MS,
        syntax: Syntax::Chat,
        authority: bot::Authority::Sandbox,
    };
    for line in [
        "!zone enter crypt_valdris",
        "!zone advance",
        "!zone advance",
    ] {
        bot::handle(&zones, &mut player, line, &cx);
    }
    let run = player.run.clone().expect("a run");
    let menu = chat::status(&engine::status(&zone, &run, &player.character)).text;
    assert!(menu.contains("2. something (locked"), "{menu}");
    let drawn = map::render_map(&zone, &MapView::of_run(&zone, &run), &MapOptions::default());
    assert!(!drawn.contains("Side Chapel"), "{drawn}");
    let view = engine::player_view(&zone, &run, &player.character);
    let j = serde_json::to_string(&view).expect("serialises");
    assert!(
        !j.contains("Side Chapel") && !j.contains("side_chapel"),
        "{j}"
    );
    assert_eq!(
        view.rooms.iter().filter(|r| r.label.is_none()).count(),
        1,
        "one unknown room"
    );
    // Before the refusal the menu shows no DC; after it, the roll is in the view and the chat.
    assert!(!j.contains("\"dc\""));
    let refused = bot::handle(&zones, &mut player, "!zone go 2", &cx);
    assert!(
        refused.replies[0].text.contains("Perception 9 vs DC 12"),
        "{refused:?}"
    );
    let run = player.run.clone().expect("a run");
    let view = engine::player_view(&zone, &run, &player.character);
    let j = serde_json::to_string(&view).expect("serialises");
    assert!(j.contains("\"dc\":12"), "{j}");
    let status = chat::status(&view.status).text;
    assert!(
        status.contains("2. something (locked: Perception 9 vs DC 12"),
        "{status}"
    );
}
