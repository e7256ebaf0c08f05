//! The player view is the one owner of what a player may know: no player-facing output (chat
//! replies, the chat map, the run-map JSON) names a room, a DC, a level or a key that the
//! view does not hold. Random zones, random characters and random play through the real
//! command pipeline.

use std::collections::BTreeSet;

use proptest::prelude::*;
use serde_json::json;
use zonegraph_core::bot::{self, Context, Player};
use zonegraph_core::chat;
use zonegraph_core::command::Syntax;
use zonegraph_core::engine::{self, Character};
use zonegraph_core::map::{self, MapOptions, MapView};
use zonegraph_core::zone::{self, Ability, Zone};

const T0: i64 = 1_767_225_600_000;

/// Distinct tokens, none a substring of another: `pv.r1x` is not inside `pv.r12x`.
fn room_id(n: usize) -> String {
    format!("pv.r{n}x")
}
fn room_label(n: usize) -> String {
    format!("Chamber-{n}-Zq")
}
fn key_id(n: usize) -> String {
    format!("key{n}q")
}

/// A layered zone whose every room, label and key is a distinct token, with locks of every
/// kind, secrets, and Perception walls in front of rooms that have no other way in.
fn zone_json(widths: &[usize], picks: &[u8]) -> String {
    let mut pick = picks.iter().copied().cycle();
    let mut next = move || usize::from(pick.next().unwrap_or(0));
    let mut nodes = vec![
        json!({"node_id": room_id(0), "kind": "entry", "is_entry": true,
                                "label": room_label(0)}),
    ];
    let mut layers = vec![vec![0usize]];
    let mut n = 1;
    for &w in widths {
        let mut layer = Vec::new();
        for _ in 0..w {
            let kind = ["exploration", "trap", "elite", "fork", "merge", "secret"][next() % 6];
            let mut content = json!({});
            if next() % 4 == 0 {
                content["grants_key"] = json!(key_id(next() % 4));
            }
            nodes.push(
                json!({"node_id": room_id(n), "kind": kind, "label": room_label(n),
                              "content": content}),
            );
            layer.push(n);
            n += 1;
        }
        layers.push(layer);
    }
    let boss = n;
    nodes.push(
        json!({"node_id": room_id(boss), "kind": "boss", "is_boss": true,
                      "label": room_label(boss)}),
    );
    layers.push(vec![boss]);
    let lock = move |r: usize| match r % 9 {
        0 | 1 => json!({"lock_kind": "perception_check", "lock_data": {"dc": 5 + r % 17}}),
        2 => json!({"lock_kind": "stat_check", "lock_data": {"stat": "dex", "dc": 6 + r % 15}}),
        3 => json!({"lock_kind": "key_required", "lock_data": {"key_id": key_id(r % 4)}}),
        4 => json!({"lock_kind": "level_min", "lock_data": {"min_level": 2 + r % 7}}),
        _ => json!({}),
    };
    let mut edges = Vec::new();
    for pair in layers.windows(2) {
        let (here, there) = (&pair[0], &pair[1]);
        let mut reached = vec![false; there.len()];
        for &from in here {
            for _ in 0..1 + next() % 2 {
                let t = next() % there.len();
                reached[t] = true;
                let mut e = lock(next());
                e["from_node"] = json!(room_id(from));
                e["to_node"] = json!(room_id(there[t]));
                e["hint"] = json!(format!("hint {from}"));
                edges.push(e);
            }
        }
        for (t, seen) in reached.iter().enumerate() {
            if !seen {
                let mut e = lock(next());
                e["from_node"] = json!(room_id(here[0]));
                e["to_node"] = json!(room_id(there[t]));
                edges.push(e);
            }
        }
    }
    // Keep one passage per pair of rooms (a graph, not a multigraph).
    let mut seen = BTreeSet::new();
    edges.retain(|e| seen.insert((e["from_node"].to_string(), e["to_node"].to_string())));
    json!({"format": 1, "zone_id": "pv", "name": "View Test", "tier": 2, "min_level": 1,
           "max_level": 9, "allow_loops": false, "nodes": nodes, "edges": edges})
    .to_string()
}

/// Every run of a number after `prefix` in `text` ("DC 12" → 12).
fn numbers_after(text: &str, prefix: &str) -> BTreeSet<u64> {
    let mut out = BTreeSet::new();
    for (i, _) in text.match_indices(prefix) {
        let digits: String = text[i + prefix.len()..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        if let Ok(n) = digits.parse() {
            out.insert(n);
        }
    }
    out
}

/// Checks one output against the player view it was sent with.
fn check_output(zone: &Zone, view_json: &str, output: &str, what: &str) -> Result<(), String> {
    for ix in zone.graph.node_indices() {
        let node = zone.node(ix);
        for token in [node.id.as_str(), node.label.as_str()] {
            if output.contains(token) && !view_json.contains(token) {
                return Err(format!(
                    "{what} names {token:?}, which the view does not hold"
                ));
            }
        }
        if let Some(k) = &node.content.grants_key
            && output.contains(k.as_str())
            && !view_json.contains(k.as_str())
        {
            return Err(format!(
                "{what} names the key {k:?}, which the view does not hold"
            ));
        }
    }
    for e in zone.graph.edge_weights() {
        if let zone::Lock::KeyRequired { key_id } = &e.lock
            && output.contains(key_id.as_str())
            && !view_json.contains(key_id.as_str())
        {
            return Err(format!("{what} names the key {key_id:?} of a lock"));
        }
    }
    let view_dcs = numbers_after(view_json, "\"dc\":");
    for dc in numbers_after(output, "DC ") {
        if !view_dcs.contains(&dc) {
            return Err(format!(
                "{what} shows DC {dc}, which the view does not hold"
            ));
        }
    }
    let view_levels = numbers_after(view_json, "\"min_level\":");
    for level in numbers_after(output, "requires level ") {
        if !view_levels.contains(&level) {
            return Err(format!(
                "{what} shows level {level}, which the view does not hold"
            ));
        }
    }
    Ok(())
}

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
        // What `GET /api/runs/{token}` serves: the view and the chat's status words.
        let payload = json!({"view": view, "status": chat::status(&view.status)}).to_string();
        check_output(zone, &view_json, &payload, "the run JSON")?;
        if payload.contains(&run.run_id) {
            return Err("the run JSON holds the run id".into());
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
    let text = include_str!("../../zones/crypt_valdris.json");
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
