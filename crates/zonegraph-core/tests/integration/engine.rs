//! The navigation engine, its chat text and the command parser.
//!
//! Most cases are scripts played through the real command pipeline (`bot::handle`, wrapped by
//! `Host` with a scripted clock), exactly as the bot and the terminal call it. Transcripts are
//! snapshots.

use std::collections::BTreeSet;

use proptest::prelude::*;
use serde_json::json;
use zonegraph_core::bot::{self, Player};
use zonegraph_core::chat;
use zonegraph_core::command::{self, Syntax};
use zonegraph_core::engine::{
    self, Character, DEFAULT_FORK_TIMEOUT_MS, Event, Outcome, Phase, Refusal, Run,
};
use zonegraph_core::roll;
use zonegraph_core::rules::{self, EncounterKind};
use zonegraph_core::zone::{self, Ability, Zone};
use zonegraph_core::{LockKind, NodeKind};

const CRYPT: &str = include_str!("../../../../zones/crypt_valdris.json");
const T0: i64 = 1_767_225_600_000; // 2026-01-01T00:00:00Z
const HOUR: i64 = 60 * 60 * 1000;

fn load(text: &str) -> Zone {
    let (zone, diags) = zone::load(text).expect("test zone parses");
    assert!(
        diags
            .iter()
            .all(|d| d.code == zonegraph_core::Code::BadLockData),
        "{diags:?}"
    );
    zone
}

fn crypt() -> Zone {
    load(CRYPT)
}

/// A character with WIS `score` for the Perception locks, and STR 18 (+4) for the fights.
fn wis(score: i32) -> Character {
    let mut c = Character::default();
    c.set_score(Ability::Wis, score);
    c.set_score(Ability::Str, 18);
    c
}

/// A player at the real command pipeline ([`bot::handle`]), as the terminal's `play` is:
/// loose syntax, a clock that the script moves, a fixed run id.
struct Host<'a> {
    zones: Vec<Zone>,
    run_id: &'a str,
    player: Player,
    now: i64,
}

impl<'a> Host<'a> {
    fn new(zone: &Zone, run_id: &'a str, character: Character) -> Self {
        Host {
            zones: vec![zone.clone()],
            run_id,
            player: Player {
                character,
                run: None,
            },
            now: T0,
        }
    }

    fn context(&self) -> bot::Context {
        bot::Context {
            now: self.now,
            new_run_id: self.run_id.to_string(),
            run_link: Some("http://x/run/abc".to_string()),
            fork_timeout_ms: DEFAULT_FORK_TIMEOUT_MS,
            syntax: Syntax::Loose,
            authority: bot::Authority::Sandbox,
        }
    }

    /// Runs one line and returns the reply text. `@+Nh` lets N hours pass and applies the
    /// fork timeout, as the server's sweeper does.
    fn exec(&mut self, line: &str) -> String {
        if let Some(hours) = line.strip_prefix("@+").and_then(|h| h.strip_suffix('h')) {
            self.now += hours.parse::<i64>().expect("hours") * HOUR;
            let cx = self.context();
            return bot::sweep(&self.zones, &mut self.player, &cx)
                .map(|r| r.text)
                .unwrap_or_default();
        }
        self.now += 1000;
        let cx = self.context();
        let response = bot::handle(&self.zones, &mut self.player, line, &cx);
        let texts: Vec<String> = response.replies.into_iter().map(|r| r.text).collect();
        texts.join("\n")
    }

    fn run(&self) -> &Run {
        self.player.run.as_ref().expect("a run was started")
    }
}

/// Plays `script` and returns the transcript: each line, then its reply.
fn play(host: &mut Host<'_>, script: &[&str]) -> String {
    let mut out = String::new();
    for line in script {
        out.push_str(&format!("> {line}\n"));
        let reply = host.exec(line);
        for l in reply.lines() {
            out.push_str(&format!("  {l}\n"));
        }
    }
    out
}

fn ids(run: &Run) -> Vec<&str> {
    run.visited_nodes.iter().map(|n| n.as_str()).collect()
}

// ---- names and the designer's data --------------------------------------------------------

#[test]
fn keys_and_harvests_read_as_names_and_extra_passes_through_untouched() {
    let zone = load(
        &json!({
            "format": 1, "zone_id": "grove", "name": "Grove", "tier": 1, "min_level": 1, "max_level": 3,
            "keys": {"tidewarden_sigil": "the Tidewarden's Sigil"},
            "nodes": [
                {"node_id": "grove.gate", "kind": "entry", "label": "Gate", "is_entry": true},
                {"node_id": "grove.beds", "kind": "harvest", "label": "Beds",
                 "content": {"harvest_ref": "glowcap_mushrooms", "grants_key": "Tidewarden_Sigil",
                             "extra": {"music": "grove_theme", "loot_table": 7, "phases": [1, 2]}}},
                {"node_id": "grove.shed", "kind": "exploration", "label": "Shed",
                 "content": {"grants_key": "rusty-shed_key"}},
                {"node_id": "grove.boss", "kind": "boss", "label": "Old Root", "is_boss": true}
            ],
            "edges": [
                {"from_node": "grove.gate", "to_node": "grove.beds"},
                {"from_node": "grove.beds", "to_node": "grove.shed"},
                {"from_node": "grove.shed", "to_node": "grove.boss"}
            ]
        })
        .to_string(),
    );
    let mut host = Host::new(&zone, "g-1", Character::default());
    let t = play(
        &mut host,
        &["enter grove", "advance", "advance", "advance", "status"],
    );
    // The file's name where it gives one, else the id's words; never the id itself.
    assert!(t.contains("You find a key: the Tidewarden's Sigil."), "{t}");
    assert!(
        t.contains("You gather what grows here: Glowcap Mushrooms."),
        "{t}"
    );
    assert!(t.contains("You find a key: Rusty Shed Key."), "{t}");
    assert!(
        t.contains("Keys: Rusty Shed Key, the Tidewarden's Sigil."),
        "{t}"
    );
    assert!(
        !t.contains("tidewarden_sigil") && !t.contains("glowcap_mushrooms"),
        "{t}"
    );

    // The events carry both the id (for the host's inventory) and the name; the room's extra
    // comes with its arrival exactly as written.
    let mut host = Host::new(&zone, "g-2", Character::default());
    host.exec("enter grove");
    host.now += 1000;
    let cx = host.context();
    let r = bot::handle(&host.zones, &mut host.player, "advance", &cx);
    let events = serde_json::to_value(&r.events).expect("events");
    let arrived = events
        .as_array()
        .and_then(|l| l.iter().find(|e| e["event"] == "arrived"))
        .expect("arrived");
    assert_eq!(arrived["node"], "grove.beds");
    assert_eq!(
        arrived["extra"],
        json!({"music": "grove_theme", "loot_table": 7, "phases": [1, 2]})
    );
    let r = bot::handle(&host.zones, &mut host.player, "advance", &cx);
    let events = serde_json::to_value(&r.events).expect("events");
    let key = events
        .as_array()
        .and_then(|l| l.iter().find(|e| e["event"] == "key_granted"))
        .expect("key granted");
    assert_eq!(key["key_id"], "tidewarden_sigil");
    assert_eq!(key["name"], "the Tidewarden's Sigil");
    let harvest = events
        .as_array()
        .and_then(|l| l.iter().find(|e| e["event"] == "harvested"))
        .expect("harvested");
    assert_eq!(harvest["harvest_ref"], "glowcap_mushrooms");
    assert_eq!(harvest["name"], "Glowcap Mushrooms");
    // A room without extra says nothing of it.
    let arrived_shed = events
        .as_array()
        .and_then(|l| l.iter().find(|e| e["event"] == "arrived"))
        .expect("arrived at the shed");
    assert!(arrived_shed.get("extra").is_none(), "{arrived_shed}");

    // The file round-trips: names and extra are kept as written.
    let file = zone.to_file();
    assert_eq!(file.keys["tidewarden_sigil"], "the Tidewarden's Sigil");
    let beds = file
        .nodes
        .as_ref()
        .expect("nodes")
        .iter()
        .find(|n| n.node_id == "grove.beds");
    assert_eq!(
        beds.and_then(|n| n.content.extra.clone())
            .map(serde_json::Value::Object),
        Some(json!({"music": "grove_theme", "loot_table": 7, "phases": [1, 2]}))
    );
}

// ---- dice ------------------------------------------------------------------------------

#[test]
fn d20_vectors_match_python_hashlib() {
    // int.from_bytes(hashlib.sha1(b"run1|a|b").digest()[:2], "big") % 20 + 1
    let check = |run: &str, from: &str, to: &str, expect: u32| {
        assert_eq!(roll::d20(run, from, to), expect, "{run}|{from}|{to}");
    };
    check("run1", "a", "b", 13);
    check("run1", "b", "a", 13);
    check("", "", "", 4);
    check("ünï", "α", "β", 2);
    check(
        "crypt-7",
        "crypt_valdris.fork",
        "crypt_valdris.side_chapel",
        16,
    );
    check(
        "crypt-7",
        "crypt_valdris.side_chapel",
        "crypt_valdris.secret_chamber",
        19,
    );
    check(
        "crypt-6",
        "crypt_valdris.fork",
        "crypt_valdris.side_chapel",
        9,
    );
    check(
        "crypt-2",
        "crypt_valdris.side_chapel",
        "crypt_valdris.secret_chamber",
        2,
    );
}

// ---- character -------------------------------------------------------------------------

#[test]
fn character_json_shape_round_trips_and_defaults() {
    let mut c = Character::default();
    c.set_score(Ability::Wis, 14);
    c.level = 3;
    c.add_key("  Skull_Key ");
    let j = serde_json::to_string(&c).expect("serialises");
    assert_eq!(
        j,
        r#"{"level":3,"scores":{"str":10,"dex":10,"con":10,"int":10,"wis":14,"cha":10},"keys":["skull_key"]}"#
    );
    assert_eq!(serde_json::from_str::<Character>(&j).expect("parses"), c);
    let partial: Character =
        serde_json::from_str(r#"{"scores":{"wis":14},"keys":[" SKULL_key"]}"#).expect("parses");
    assert_eq!(partial, c_with(1, 14, &["skull_key"]));
    assert_eq!(
        serde_json::from_str::<Character>("{}").expect("parses"),
        Character::default()
    );
    assert!(serde_json::from_str::<Character>(r#"{"scores":{"luck":3}}"#).is_err());
    assert_eq!(c.modifier(Ability::Wis), 2);
    assert_eq!(c_with(1, 9, &[]).modifier(Ability::Wis), -1);
    assert!(c.has_key("SKULL_KEY"));
    // Experience is written once there is some, and read back.
    assert_eq!(c.gain_xp(99), None);
    assert_eq!(
        c.gain_xp(1),
        None,
        "level 3 was set higher than 100 XP reaches"
    );
    let j = serde_json::to_string(&c).expect("serialises");
    assert!(j.ends_with(r#","xp":100}"#), "{j}");
    assert_eq!(serde_json::from_str::<Character>(&j).expect("parses"), c);
    assert_eq!(c.gain_xp(350), Some(4), "450 XP is level 4");
}

fn c_with(level: u32, wis_score: i32, keys: &[&str]) -> Character {
    let mut c = Character::default();
    c.set_score(Ability::Wis, wis_score);
    c.level = level;
    for k in keys {
        c.add_key(k);
    }
    c
}

// ---- the Crypt of Valdris ----------------------------------------------------------------

#[test]
fn crypt_secret_route() {
    let zone = crypt();
    // crypt-7 rolls 16 at the chapel wall and 19 at the altar: with WIS 14 (+2) both
    // Perception checks (DC 12, DC 15) pass (found by trying crypt-0, crypt-1, …).
    let mut host = Host::new(&zone, "crypt-7", wis(14));
    let t = play(
        &mut host,
        &[
            "!zone enter crypt_valdris",
            "!zone advance",
            "!zone advance",
            "!zone status",
            "!zone go 2",
            "!zone advance",
            "!zone go 2",
            "!zone status",
            "!zone advance",
            "!zone advance",
            "!zone status",
        ],
    );
    insta::assert_snapshot!("crypt_secret_route", t);
    let run = host.run();
    assert_eq!(
        ids(run),
        [
            "crypt_valdris.entry",
            "crypt_valdris.corridor",
            "crypt_valdris.fork",
            "crypt_valdris.side_chapel",
            "crypt_valdris.secret_chamber",
            "crypt_valdris.antechamber",
            "crypt_valdris.boss",
        ]
    );
    assert_eq!(run.outcome, Some(Outcome::Victory));
    assert!(run.boss_defeated);
    assert!(
        run.revealed_secrets
            .contains(&"crypt_valdris.secret_chamber".into())
    );
}

#[test]
fn crypt_failed_perception() {
    let zone = crypt();
    // crypt-6 rolls 9 at the chapel wall: 9 + 2 = 11 against DC 12.
    let mut host = Host::new(&zone, "crypt-6", wis(14));
    let t = play(
        &mut host,
        &[
            "!zone enter crypt_valdris",
            "!zone advance",
            "!zone advance",
            "!zone go 2",
            "!zone status",
            "!zone go 1",
            "!zone advance",
            "!zone advance",
        ],
    );
    insta::assert_snapshot!("crypt_failed_perception", t);
    assert!(t.contains("Option 2 is locked: Perception 11 vs DC 12."));
    assert!(
        !t.contains("Side Chapel"),
        "a failed Perception check hides the label"
    );
    assert!(!t.contains("Hidden Reliquary"));
    assert_eq!(host.run().outcome, Some(Outcome::Victory));
}

#[test]
fn crypt_main_hall_route_and_chapel_without_the_secret() {
    let zone = crypt();
    let mut host = Host::new(&zone, "crypt-7", wis(14));
    play(
        &mut host,
        &[
            "enter crypt_valdris",
            "advance",
            "advance",
            "go 1",
            "advance",
            "advance",
            // The boss may take more than one try; once it falls, these are refused.
            "fight",
            "fight",
        ],
    );
    let run = host.run();
    assert_eq!(run.outcome, Some(Outcome::Victory));
    assert!(ids(run).contains(&"crypt_valdris.main_hall"));
    assert_eq!(run.visited_nodes.len(), 6);

    // crypt-2 passes the wall (17 + 2) but not the altar (2 + 2 vs 15).
    let mut host = Host::new(&zone, "crypt-2", wis(14));
    let t = play(
        &mut host,
        &[
            "enter crypt_valdris",
            "advance",
            "advance",
            "go 2",
            "advance",
            "go 2",
        ],
    );
    insta::assert_snapshot!("crypt_chapel_secret_missed", t);
    assert!(t.contains("Perception 4 vs DC 15"));
    assert!(!t.contains("Hidden Reliquary"));
    let run = host.run();
    assert!(!engine::visible_to_player(
        &zone,
        run,
        "crypt_valdris.secret_chamber"
    ));
    assert!(engine::visible_to_player(
        &zone,
        run,
        "crypt_valdris.side_chapel"
    ));
    assert!(!engine::visible_to_player(
        &zone,
        run,
        "crypt_valdris.nowhere"
    ));
}

#[test]
fn fork_and_merge_rooms_resolve_at_once() {
    let zone = crypt();
    let (mut run, ev) = engine::start(&zone, "crypt-7", &wis(14), T0).expect("starts");
    assert_eq!(ev.len(), 3, "{ev:?}"); // entered, arrived, narration
    engine::advance(&zone, &mut run, &wis(14), T0).expect("entry");
    let ev = engine::advance(&zone, &mut run, &wis(14), T0).expect("corridor");
    // The fork room is entered and its menu offered in the same step.
    assert_eq!(run.current_node.as_str(), "crypt_valdris.fork");
    assert!(matches!(
        ev.last(),
        Some(Event::ForkOffered { waiting: false, .. })
    ));
    let fork = run.pending_fork.as_ref().expect("fork");
    assert_eq!(fork.created_at, T0);
    assert_eq!(fork.options.len(), 2);
    assert!(fork.options.iter().all(|o| o.open));
    // Status while at the fork is the same menu.
    let st = engine::status(&zone, &run, &wis(14));
    assert_eq!(st.phase, Phase::Fork);
    // "of 6": the Hidden Reliquary is not on the player's map until its wall is passed.
    assert_eq!((st.room_number, st.room_total), (3, 6));
    // The menu's options are data too: each names the line of the words that lists it.
    let reply = chat::status(&st);
    let lines: Vec<&str> = reply.text.lines().collect();
    assert_eq!(
        reply.choices.iter().map(|c| c.number).collect::<Vec<_>>(),
        [1, 2]
    );
    for c in &reply.choices {
        assert_eq!(
            lines[c.line],
            format!("  {}. {}", c.number, c.words),
            "{reply:?}"
        );
    }
    // A reply without a menu has none, and a notice said after a dropped count keeps its
    // options on their lines.
    assert!(chat::character(&wis(14)).choices.is_empty());
    let later = chat::after_dropped_notices(&reply, 3);
    let later_lines: Vec<&str> = later.text.lines().collect();
    for c in &later.choices {
        assert_eq!(later_lines[c.line], format!("  {}. {}", c.number, c.words));
    }
    assert_eq!(later.choices.len(), 2);
    // Joined into one message after another reply, the options keep their lines too.
    let one = chat::one_message(&[chat::character(&wis(14)), reply.clone()]).expect("two replies");
    let one_lines: Vec<&str> = one.text.lines().collect();
    assert_eq!(one.choices.len(), 2);
    for c in &one.choices {
        assert_eq!(
            one_lines[c.line],
            format!("  {}. {}", c.number, c.words),
            "{one:?}"
        );
    }
    assert!(one.text.starts_with(&chat::character(&wis(14)).text));
    assert!(chat::one_message(&[]).is_none());
}

// ---- refusals --------------------------------------------------------------------------

/// A zone with one fork offering every lock kind.
fn lock_zoo() -> Zone {
    load(
        &json!({
            "format": 1, "zone_id": "zoo", "name": "Lock Zoo", "tier": 2,
            "min_level": 2, "max_level": 6,
            "regions": [
                {"region_id": "hall", "name": "The Hall", "order": 1},
                {"region_id": "vault", "name": "The Vault", "order": 2}
            ],
            "nodes": [
                {"node_id": "zoo.entry", "kind": "entry", "label": "Gate", "is_entry": true, "region_id": "hall"},
                {"node_id": "zoo.open", "kind": "exploration", "label": "Open Room", "region_id": "hall"},
                {"node_id": "zoo.eye", "kind": "harvest", "label": "Mossy Grotto", "region_id": "hall"},
                {"node_id": "zoo.str", "kind": "trap", "label": "Rubble <Heap>", "region_id": "hall"},
                {"node_id": "zoo.lvl", "kind": "elite", "label": "Champion's Ring", "region_id": "hall"},
                {"node_id": "zoo.key", "kind": "rest_camp", "label": "Locked Camp", "region_id": "hall"},
                {"node_id": "zoo.reg", "kind": "exploration", "label": "Vault Door", "region_id": "hall"},
                {"node_id": "zoo.bad", "kind": "exploration", "label": "Broken Door", "region_id": "hall"},
                {"node_id": "zoo.sec", "kind": "secret", "label": "Secret Den", "region_id": "hall"},
                {"node_id": "zoo.boss", "kind": "boss", "label": "Warden", "is_boss": true, "region_id": "vault"}
            ],
            "edges": [
                {"from_node": "zoo.entry", "to_node": "zoo.open", "weight": 1},
                {"from_node": "zoo.entry", "to_node": "zoo.eye", "weight": 2,
                 "lock_kind": "perception_check", "lock_data": {"dc": 30}, "hint": "Moss <moves>."},
                {"from_node": "zoo.entry", "to_node": "zoo.str", "weight": 3,
                 "lock_kind": "stat_check", "lock_data": {"stat": "str", "dc": 30}, "hint": "Heavy stones."},
                {"from_node": "zoo.entry", "to_node": "zoo.lvl", "weight": 4,
                 "lock_kind": "level_min", "lock_data": {"min_level": 5}},
                {"from_node": "zoo.entry", "to_node": "zoo.key", "weight": 5,
                 "lock_kind": "key_required", "lock_data": {"key_id": "Camp Key"}, "hint": "A rusted padlock."},
                {"from_node": "zoo.entry", "to_node": "zoo.reg", "weight": 6,
                 "lock_kind": "region_clear", "lock_data": {"region_id": "vault"}},
                {"from_node": "zoo.entry", "to_node": "zoo.bad", "weight": 7,
                 "lock_kind": "perception_check", "hint": "A door with no handle."},
                {"from_node": "zoo.entry", "to_node": "zoo.sec", "weight": 8,
                 "lock_kind": "stat_check", "lock_data": {"stat": "int", "dc": 30}, "hint": "Odd masonry."},
                {"from_node": "zoo.open", "to_node": "zoo.boss"},
                {"from_node": "zoo.eye", "to_node": "zoo.boss"},
                {"from_node": "zoo.str", "to_node": "zoo.boss"},
                {"from_node": "zoo.lvl", "to_node": "zoo.boss"},
                {"from_node": "zoo.key", "to_node": "zoo.boss"},
                {"from_node": "zoo.reg", "to_node": "zoo.boss"},
                {"from_node": "zoo.bad", "to_node": "zoo.boss"},
                {"from_node": "zoo.sec", "to_node": "zoo.boss"}
            ]
        })
        .to_string(),
    )
}

#[test]
fn every_refusal() {
    let zone = lock_zoo();
    // CHA 30 wins the boss check at the first try (a boss check adds the best modifier);
    // the other scores stay 10 so that the stat locks fail.
    let mut ch = Character {
        level: 3,
        ..Character::default()
    };
    ch.set_score(Ability::Cha, 30);
    let mut host = Host::new(&zone, "zoo-1", ch);
    let t = play(
        &mut host,
        &[
            "!zone status",
            "!zone advance",
            "!zone go 1",
            "!zone abandon",
            "!char level 1",
            "!zone enter zoo",
            "!char level 3",
            "!zone go 1",
            "!zone enter zoo",
            "!zone enter zoo",
            "!zone go 1",
            "!zone status",
            "!zone advance",
            "!zone advance",
            "!zone fight",
            "!zone flee",
            "!zone go",
            "!zone go abc",
            "!zone go 0",
            "!zone go 9",
            "!zone go 99999999999999999999999",
            "!zone go 2",
            "!zone go 3",
            "!zone go 4",
            "!zone go 5",
            "!zone go 6",
            "!zone go 7",
            "!zone go 8",
            "!zone status",
            "!zone go 1",
            "!zone advance",
            "!zone advance",
            "!zone go 1",
            "!zone abandon",
        ],
    );
    insta::assert_snapshot!("every_refusal", t);
    for expect in [
        "You are not in a zone.",
        "Lock Zoo requires level 2 (you are 1).",
        "You are already in Lock Zoo.",
        "A fork waits for your choice first: pick one with !zone go <n> (1-8); !zone go alone shows the ways again.",
        "\"abc\" is not a number. Pick an option with !zone go <n> (1-8).",
        "There is no option 0. Pick 1-8.",
        "There is no option 9. Pick 1-8.",
        "Option 2 is locked: Perception ",
        "Option 3 (Rubble <Heap>) is locked: Strength",
        "Option 4 (Champion's Ring) is locked: requires level 5 (you are 3).",
        "Option 5 (Locked Camp) is locked: you don't have the key.",
        "Option 6 (Vault Door) is locked: requires clearing The Vault.",
        "is locked: the way is sealed.",
        "Option 8 is locked: Intelligence",
        "There is no choice to make right now.",
        "This run is over (victory).",
    ] {
        assert!(t.contains(expect), "missing {expect:?} in\n{t}");
    }
    // The teasers never show a hidden label, nor a DC before a refusal told it.
    assert!(!t.contains("Secret Den"));
    assert!(!t.contains("Mossy Grotto"));
    let before_refusals = &t[..t.find("is locked").expect("a refusal")];
    assert!(!before_refusals.contains("DC "), "{before_refusals}");
    assert!(t.contains("2. something (locked: Perception 7 vs DC 30 — Moss <moves>.)"));

    // The refusals a host raises itself, and the engine's guards against broken state.
    let other = crypt();
    let run = host.run().clone();
    let mut r2 = run.clone();
    let wrong = engine::advance(&other, &mut r2, &Character::default(), T0);
    assert!(matches!(wrong, Err(Refusal::WrongZone { .. })));
    let mut broken = run.clone();
    broken.outcome = None;
    broken.current_node = "zoo.gone".into();
    let gone = engine::advance(&zone, &mut broken, &Character::default(), T0);
    let no_entry = load(&CRYPT.replace("\"is_entry\": true,", ""));
    let unplayable = engine::start(&no_entry, "x", &Character::default(), T0).map(|_| ());
    let texts: Vec<String> = [
        wrong.map(|_| ()),
        gone.map(|_| ()),
        unplayable,
        Err(Refusal::UnknownZone {
            given: "nope".into(),
            known: vec!["crypt_valdris".into(), "zoo".into()],
        }),
        engine::warm_up_legacy(&zone, "x", 99, T0).map(|_| ()),
    ]
    .into_iter()
    .map(|r| chat::refusal(&r.expect_err("refused")).text)
    .collect();
    insta::assert_snapshot!("host_refusals", texts.join("\n"));
}

#[test]
fn lock_teasers_in_prompt_and_status_html() {
    let zone = lock_zoo();
    let ch = Character {
        level: 3,
        ..Character::default()
    };
    let (mut run, _) = engine::start(&zone, "zoo-1", &ch, T0).expect("starts");
    // Before the fork is reached the locks are untested: status shows teasers only.
    let before = chat::status(&engine::status(&zone, &run, &ch));
    insta::assert_snapshot!("zoo_status_before_fork", before.text);
    let ev = engine::advance(&zone, &mut run, &ch, T0).expect("advances");
    let prompt = chat::events(&ev);
    insta::assert_snapshot!("zoo_fork_prompt", prompt.text);
    insta::assert_snapshot!("zoo_fork_prompt_html", prompt.html);
    assert!(prompt.html.contains("Rubble &lt;Heap&gt;"));
    assert!(prompt.html.contains("Moss &lt;moves&gt;."));
    assert!(!prompt.html.contains("<Heap>"));
    assert!(!prompt.text.contains("Secret Den"));
    assert!(
        prompt
            .text
            .contains("(locked — it feels too dangerous for you yet)")
    );
    // Every lock kind appears once, frozen.
    let kinds: BTreeSet<LockKind> = run
        .pending_fork
        .as_ref()
        .expect("fork")
        .options
        .iter()
        .map(|o| o.check.lock_kind())
        .collect();
    assert_eq!(kinds.len(), LockKind::ALL.len());
}

#[test]
fn locks_are_frozen_at_the_fork() {
    let zone = lock_zoo();
    let mut ch = Character {
        level: 3,
        ..Character::default()
    };
    let (mut run, _) = engine::start(&zone, "zoo-1", &ch, T0).expect("starts");
    engine::advance(&zone, &mut run, &ch, T0).expect("advances");
    // Levelling up or finding the key after the fork was offered changes nothing.
    ch.level = 9;
    ch.add_key("camp key");
    let r = engine::choose(&zone, &mut run, &ch, "4", T0);
    assert!(matches!(r, Err(Refusal::Locked { option: 4, .. })), "{r:?}");
    let r = engine::choose(&zone, &mut run, &ch, "5", T0);
    assert!(matches!(r, Err(Refusal::Locked { option: 5, .. })), "{r:?}");
    // A new run with the key and the level opens both.
    let (mut run, _) = engine::start(&zone, "zoo-2", &ch, T0).expect("starts");
    engine::advance(&zone, &mut run, &ch, T0).expect("advances");
    engine::choose(&zone, &mut run, &ch, " 5 ", T0).expect("the key opens the camp");
    assert_eq!(run.current_node.as_str(), "zoo.key");
}

// ---- fork timeout ----------------------------------------------------------------------

#[test]
fn fork_timeout_picks_the_first_open_option() {
    let zone = crypt();
    let mut host = Host::new(&zone, "crypt-7", wis(14));
    play(&mut host, &["enter crypt_valdris", "advance", "advance"]);
    let created = host.run().pending_fork.as_ref().expect("fork").created_at;
    let run = host.player.run.as_mut().expect("run");
    let ch = wis(14);
    let early = engine::expire(
        &zone,
        run,
        &ch,
        created + 6 * HOUR - 1,
        DEFAULT_FORK_TIMEOUT_MS,
    );
    assert!(early.is_empty());
    assert!(run.pending_fork.is_some());
    // The instant a database selects due forks against is the one `expire` decides by.
    let due_at = |now| engine::forks_due_offered_by(now, DEFAULT_FORK_TIMEOUT_MS);
    assert!(created > due_at(created + 6 * HOUR - 1));
    assert_eq!(due_at(created + 6 * HOUR), created);
    let ev = engine::expire(&zone, run, &ch, created + 6 * HOUR, DEFAULT_FORK_TIMEOUT_MS);
    assert!(matches!(
        ev.first(),
        Some(Event::PickedForYou { option: 1, label, .. }) if label == "Main Hall"
    ));
    assert_eq!(run.current_node.as_str(), "crypt_valdris.main_hall");
    assert!(run.pending_fork.is_none());
    insta::assert_snapshot!("fork_timeout", chat::events(&ev).text);
    // Nothing pending: nothing happens.
    assert!(engine::expire(&zone, run, &ch, created + 100 * HOUR, 0).is_empty());
}

#[test]
fn fork_timeout_is_measured_from_the_fork_and_waits_without_an_open_option() {
    let zone = crypt();
    // crypt-6 fails the wall: the first open option is still option 1.
    let mut host = Host::new(&zone, "crypt-6", wis(14));
    let t = play(
        &mut host,
        &[
            "enter crypt_valdris",
            "advance",
            "advance",
            "@+5h",
            "go 2",
            "@+1h",
        ],
    );
    assert!(t.contains("option 1 was picked for you: Main Hall"), "{t}");

    // A fork whose only way on is locked waits forever.
    let zone = load(
        &json!({
            "format": 1, "zone_id": "w", "name": "Waiting Room", "tier": 1, "min_level": 1, "max_level": 2,
            "nodes": [
                {"node_id": "w.a", "kind": "entry", "label": "Hall", "is_entry": true},
                {"node_id": "w.b", "kind": "exploration", "label": "Gallery"},
                {"node_id": "w.c", "kind": "exploration", "label": "Study"},
                {"node_id": "w.boss", "kind": "boss", "label": "Lord", "is_boss": true}
            ],
            "edges": [
                {"from_node": "w.a", "to_node": "w.b", "lock_kind": "key_required", "lock_data": {"key_id": "k"}},
                {"from_node": "w.a", "to_node": "w.c", "lock_kind": "level_min", "lock_data": {"min_level": 4}},
                {"from_node": "w.b", "to_node": "w.boss"},
                {"from_node": "w.c", "to_node": "w.boss"}
            ]
        })
        .to_string(),
    );
    let mut host = Host::new(&zone, "w-1", Character::default());
    let t = play(
        &mut host,
        &[
            "enter w", "advance", "@+7h", "status", "advance", "fight", "go",
        ],
    );
    insta::assert_snapshot!("fork_waiting", t);
    // Nothing but leaving helps, and every refusal says so.
    assert_eq!(t.matches("waiting will not open").count(), 5, "{t}");
    assert!(!t.contains("only wait"), "{t}");
    let run = host.run();
    assert!(!run.is_over());
    assert_eq!(run.current_node.as_str(), "w.a");
    assert_eq!(
        engine::status(&zone, run, &Character::default()).phase,
        Phase::Waiting
    );
}

// ---- regions and keys --------------------------------------------------------------------

fn two_regions() -> Zone {
    load(
        &json!({
            "format": 1, "zone_id": "deep", "name": "The Deep", "tier": 2, "min_level": 1, "max_level": 5,
            "regions": [
                {"region_id": "upper", "name": "Upper Caverns", "order": 1},
                {"region_id": "lower", "name": "Fungal Deep", "order": 2}
            ],
            "nodes": [
                {"node_id": "deep.mouth", "kind": "entry", "label": "Cave Mouth", "is_entry": true, "region_id": "upper"},
                {"node_id": "deep.ledge", "kind": "harvest", "label": "Mushroom Ledge", "region_id": "upper",
                 "content": {"harvest_ref": "glowcap", "narration": "Glowcaps light the ledge blue."}},
                {"node_id": "deep.shaft", "kind": "fork", "label": "Shaft Bottom", "region_id": "lower"},
                {"node_id": "deep.back", "kind": "exploration", "label": "Back Stair", "region_id": "lower"},
                {"node_id": "deep.front", "kind": "exploration", "label": "Front Stair", "region_id": "lower"},
                {"node_id": "deep.boss", "kind": "boss", "label": "Mycelium Queen", "is_boss": true, "region_id": "lower"}
            ],
            "edges": [
                {"from_node": "deep.mouth", "to_node": "deep.ledge"},
                {"from_node": "deep.ledge", "to_node": "deep.shaft"},
                {"from_node": "deep.shaft", "to_node": "deep.back", "lock_kind": "region_clear",
                 "lock_data": {"region_id": "lower"}, "hint": "Sealed by spores."},
                {"from_node": "deep.shaft", "to_node": "deep.front", "lock_kind": "region_clear",
                 "lock_data": {"region_id": "upper"}},
                {"from_node": "deep.back", "to_node": "deep.boss"},
                {"from_node": "deep.front", "to_node": "deep.boss"}
            ]
        })
        .to_string(),
    )
}

#[test]
fn region_transitions_and_region_clear_locks() {
    let zone = two_regions();
    let mut host = Host::new(&zone, "deep-1", Character::default());
    let t = play(
        &mut host,
        &[
            "enter deep",
            "advance",
            "status",
            "advance",
            "go 1",
            "go 2",
            "advance",
            "advance",
        ],
    );
    insta::assert_snapshot!("regions", t);
    assert!(t.contains("You leave Upper Caverns behind and cross into Fungal Deep."));
    assert!(t.contains("Option 1 (Back Stair) is locked: requires clearing Fungal Deep."));
    let run = host.run();
    assert_eq!(run.cleared_regions, BTreeSet::from(["upper".to_string()]));
    assert_eq!(
        run.harvested.get(&"deep.ledge".into()).map(String::as_str),
        Some("glowcap")
    );
    assert_eq!(run.outcome, Some(Outcome::Victory));
}

#[test]
fn a_key_granted_in_one_zone_opens_a_lock_in_another() {
    let armoury = load(
        &json!({
            "format": 1, "zone_id": "armoury", "name": "Armoury", "tier": 1, "min_level": 1, "max_level": 3,
            "nodes": [
                {"node_id": "armoury.door", "kind": "entry", "label": "Door", "is_entry": true},
                {"node_id": "armoury.rack", "kind": "exploration", "label": "Weapon Rack",
                 "content": {"grants_key": " Skull Key "}},
                {"node_id": "armoury.boss", "kind": "boss", "label": "Quartermaster", "is_boss": true}
            ],
            "edges": [
                {"from_node": "armoury.door", "to_node": "armoury.rack"},
                {"from_node": "armoury.rack", "to_node": "armoury.boss"}
            ]
        })
        .to_string(),
    );
    let vault = load(
        &json!({
            "format": 1, "zone_id": "vault", "name": "Vault", "tier": 1, "min_level": 1, "max_level": 3,
            "nodes": [
                {"node_id": "vault.door", "kind": "entry", "label": "Vault Door", "is_entry": true},
                {"node_id": "vault.ossuary", "kind": "secret", "label": "Ossuary", "content": {"loot_bias": 2.0}},
                {"node_id": "vault.hall", "kind": "exploration", "label": "Hall"},
                {"node_id": "vault.boss", "kind": "boss", "label": "Lich", "is_boss": true}
            ],
            "edges": [
                {"from_node": "vault.door", "to_node": "vault.hall"},
                {"from_node": "vault.door", "to_node": "vault.ossuary", "lock_kind": "key_required",
                 "lock_data": {"key_id": "skull_key"}, "hint": "A skull-shaped keyhole."},
                {"from_node": "vault.ossuary", "to_node": "vault.boss"},
                {"from_node": "vault.hall", "to_node": "vault.boss"}
            ]
        })
        .to_string(),
    );
    // Without the key the ossuary stays shut and hidden.
    let mut host = Host::new(&vault, "v-1", Character::default());
    let t = play(&mut host, &["enter vault", "advance", "go 2"]);
    assert!(
        t.contains("Option 2 is locked: you don't have the key."),
        "{t}"
    );
    assert!(!t.contains("Ossuary"));

    let strong = Character {
        level: 5,
        scores: [20; 6],
        ..Character::default()
    };
    let mut host = Host::new(&armoury, "a-1", strong);
    let t = play(
        &mut host,
        &["enter armoury", "advance", "advance", "fight", "fight"],
    );
    assert!(t.contains("You find a key: Skull Key."), "{t}");
    assert_eq!(host.run().outcome, Some(Outcome::Victory), "{t}");
    let mut ch = host.player.character.clone();
    ch.keep_keys_from(host.run());
    assert!(ch.has_key("SKULL KEY"));
    // The armoury grants "skull key"; the vault wants "skull_key": different keys.
    let mut host = Host::new(&vault, "v-1", ch.clone());
    let t = play(&mut host, &["enter vault", "advance", "go 2"]);
    assert!(t.contains("you don't have the key"), "{t}");

    ch.add_key("Skull_Key");
    let mut host = Host::new(&vault, "v-1", ch);
    let t = play(
        &mut host,
        &[
            "enter vault",
            "advance",
            "go 2",
            "advance",
            "status",
            "advance",
        ],
    );
    insta::assert_snapshot!("key_from_another_zone", t);
    assert!(
        host.run()
            .revealed_secrets
            .contains(&"vault.ossuary".into())
    );
    assert_eq!(host.run().outcome, Some(Outcome::Victory));
}

#[test]
fn keys_granted_in_a_run_open_later_locks_of_that_run() {
    let zone = load(
        &json!({
            "format": 1, "zone_id": "k", "name": "Keyhouse", "tier": 1, "min_level": 1, "max_level": 3,
            "nodes": [
                {"node_id": "k.a", "kind": "entry", "label": "Porch", "is_entry": true, "content": {"grants_key": "brass"}},
                {"node_id": "k.b", "kind": "merge", "label": "Landing"},
                {"node_id": "k.boss", "kind": "boss", "label": "Owner", "is_boss": true}
            ],
            "edges": [
                {"from_node": "k.a", "to_node": "k.b"},
                {"from_node": "k.b", "to_node": "k.boss", "lock_kind": "key_required", "lock_data": {"key_id": "BRASS"}}
            ]
        })
        .to_string(),
    );
    let ch = Character::default();
    let (mut run, _) = engine::start(&zone, "k", &ch, T0).expect("starts");
    let ev = engine::advance(&zone, &mut run, &ch, T0).expect("advances");
    // The single exit's key lock passes with the run's key: auto-advance through the merge.
    assert!(
        ev.iter()
            .any(|e| matches!(e, Event::KeyGranted { key_id, .. } if key_id == "brass"))
    );
    assert_eq!(run.current_node.as_str(), "k.boss");
    assert_eq!(run.keys_granted, BTreeSet::from(["brass".to_string()]));
}

// ---- legacy --------------------------------------------------------------------------------

#[test]
fn legacy_warm_up() {
    let zone = load(
        r#"{"format":1,"zone_id":"old","name":"Old Mine","tier":1,"min_level":1,"max_level":3,
            "room_kinds":["entry","exploration","trap","rest_camp","boss"]}"#,
    );
    let mut run = engine::warm_up_legacy(&zone, "legacy-1", 2, T0).expect("warms up");
    assert_eq!(run.current_node.as_str(), "old.r3");
    assert_eq!(ids(&run), ["old.r1", "old.r2", "old.r3"]);
    assert_eq!(run.room_number(), 3);
    let ch = Character::default();
    let st = engine::status(&zone, &run, &ch);
    assert_eq!((st.room_number, st.room_total), (3, 5));
    insta::assert_snapshot!("legacy_status", chat::status(&st).text);
    engine::advance(&zone, &mut run, &ch, T0).expect("r3");
    engine::advance(&zone, &mut run, &ch, T0).expect("r4");
    assert_eq!(run.current_node.as_str(), "old.r5");
    engine::advance(&zone, &mut run, &ch, T0).expect("boss");
    assert_eq!(run.outcome, Some(Outcome::Victory));
    assert!(matches!(
        engine::warm_up_legacy(&zone, "x", 5, T0),
        Err(Refusal::LegacyRoomUnknown {
            current_room: 5,
            rooms: 5
        })
    ));
    assert!(engine::warm_up_legacy(&zone, "x", usize::MAX, T0).is_err());
    assert!(engine::warm_up_legacy(&crypt(), "x", 0, T0).is_err());
    let first = engine::warm_up_legacy(&zone, "x", 0, T0).expect("room 0");
    assert_eq!(ids(&first), ["old.r1"]);
}

// ---- state --------------------------------------------------------------------------------

#[test]
fn run_serde_round_trip() {
    let zone = two_regions();
    let ch = Character::default();
    let (mut run, _) = engine::start(&zone, "deep-1", &ch, T0).expect("starts");
    engine::advance(&zone, &mut run, &ch, T0 + 1).expect("mouth");
    engine::advance(&zone, &mut run, &ch, T0 + 2).expect("ledge");
    assert!(run.pending_fork.is_some());
    let j = serde_json::to_string_pretty(&run).expect("serialises");
    insta::assert_snapshot!("run_json", j);
    let back: Run = serde_json::from_str(&j).expect("parses");
    assert_eq!(back, run);
    // Events serialise, tagged.
    let ev = engine::choose(&zone, &mut run, &ch, "2", T0 + 3).expect("front");
    let j = serde_json::to_value(&ev).expect("serialises");
    assert_eq!(j[0]["event"], "moved");
}

#[test]
fn narration_is_deterministic_and_overridable() {
    let zone = crypt();
    let ch = wis(14);
    let (_, a) = engine::start(&zone, "crypt-7", &ch, T0).expect("starts");
    let (_, b) = engine::start(&zone, "crypt-7", &ch, T0 + 5).expect("starts");
    assert_eq!(a, b);
    assert!(a.iter().any(|e| matches!(e,
        Event::Narration { text, .. } if text.starts_with("Cold air spills"))));
    let (mut run, _) = engine::start(&zone, "crypt-7", &ch, T0).expect("starts");
    let ev = engine::advance(&zone, &mut run, &ch, T0).expect("entry");
    let line = ev
        .iter()
        .find_map(|e| match e {
            Event::Narration { text, .. } => Some(text.clone()),
            _ => None,
        })
        .expect("corridor narration");
    let table = zonegraph_core::narration::table(NodeKind::Exploration);
    assert_eq!(line, table[roll::pick("crypt-7|1", table.len())]);
}

#[test]
fn long_merge_chain_is_iterative_and_the_reply_stays_short() {
    let n = 100_000;
    let mut nodes =
        vec![json!({"node_id": "c.0", "kind": "entry", "is_entry": true, "label": "Start"})];
    let mut edges = Vec::new();
    for i in 1..n {
        nodes.push(json!({"node_id": format!("c.{i}"), "kind": "merge", "label": format!("M{i}")}));
        edges.push(json!({"from_node": format!("c.{}", i - 1), "to_node": format!("c.{i}")}));
    }
    nodes.push(json!({"node_id": "c.boss", "kind": "boss", "is_boss": true, "label": "End"}));
    edges.push(json!({"from_node": format!("c.{}", n - 1), "to_node": "c.boss"}));
    let zone = load(
        &json!({"format": 1, "zone_id": "c", "name": "Chain", "tier": 1, "min_level": 1,
                "max_level": 2, "nodes": nodes, "edges": edges})
        .to_string(),
    );
    let ch = Character::default();
    let (mut run, _) = engine::start(&zone, "c", &ch, T0).expect("starts");
    let ev = engine::advance(&zone, &mut run, &ch, T0).expect("walks the chain");
    assert_eq!(run.current_node.as_str(), "c.boss");
    assert_eq!(run.visited_nodes.len(), n + 1);
    let reply = chat::events(&ev);
    assert!(reply.text.len() < 4000, "{}", reply.text.len());
    assert!(reply.text.contains("you pass through 99990 more rooms"));
}

#[test]
fn a_loop_of_merge_rooms_asks_instead_of_spinning() {
    let zone = load(
        &json!({
            "format": 1, "zone_id": "l", "name": "Loop", "tier": 1, "min_level": 1, "max_level": 2,
            "allow_loops": true,
            "nodes": [
                {"node_id": "l.a", "kind": "entry", "is_entry": true},
                {"node_id": "l.b", "kind": "merge"},
                {"node_id": "l.c", "kind": "merge"},
                {"node_id": "l.boss", "kind": "boss", "is_boss": true}
            ],
            "edges": [
                {"from_node": "l.a", "to_node": "l.b"},
                {"from_node": "l.b", "to_node": "l.c"},
                {"from_node": "l.c", "to_node": "l.b"},
                {"from_node": "l.a", "to_node": "l.boss", "lock_kind": "level_min", "lock_data": {"min_level": 20}}
            ]
        })
        .to_string(),
    );
    let ch = Character::default();
    let (mut run, _) = engine::start(&zone, "l", &ch, T0).expect("starts");
    engine::advance(&zone, &mut run, &ch, T0).expect("fork at a");
    engine::choose(&zone, &mut run, &ch, "1", T0).expect("into the loop");
    let fork = run.pending_fork.as_ref().expect("the loop asks");
    assert_eq!(fork.at.as_str(), "l.c");
    assert_eq!(ids(&run), ["l.a", "l.b", "l.c"]);
}

#[test]
fn help_char_map_and_list_text() {
    let zone = crypt();
    let mut host = Host::new(&zone, "h", Character::default());
    let t = play(
        &mut host,
        &[
            "!zone help",
            "!zone list",
            "!char",
            "!char wis 14",
            "!char Strength 8",
            "!char key add Skull Key",
            "!char key remove nope",
            "!char level 3",
            "!zone map",
            "!zone dance",
            "!char fly",
        ],
    );
    insta::assert_snapshot!("help_char_map_list", t);
    let m = chat::map("a<b", Some("http://h/run/x?a=1&b=2"));
    assert_eq!(
        m.html,
        "<pre>a&lt;b</pre>\nRun map: <a href=\"http://h/run/x?a=1&amp;b=2\">http://h/run/x?a=1&amp;b=2</a>"
    );
    assert_eq!(
        chat::escape(r#"<a href="x">'&'</a>"#),
        "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
    );
}

// ---- commands ------------------------------------------------------------------------------

/// Who may edit a sheet, through the pipeline: the reply, the sheet after and the admin edit
/// handed to the host.
#[test]
fn the_authority_decides_who_edits_a_sheet() {
    use bot::Authority::{Admin, Player as P, Sandbox};
    let zones = vec![crypt()];
    let check = |authority: bot::Authority, text: &str, expect: &str, level: u32| {
        let mut player = Player::default();
        let cx = bot::Context {
            now: T0,
            new_run_id: "r".into(),
            run_link: None,
            fork_timeout_ms: DEFAULT_FORK_TIMEOUT_MS,
            syntax: Syntax::Chat,
            authority,
        };
        let r = bot::handle(&zones, &mut player, text, &cx);
        let said: Vec<String> = r.replies.into_iter().map(|r| r.text).collect();
        let got = format!("{} | {:?}", said.join("\n"), r.admin_edit);
        assert!(got.contains(expect), "{authority:?} {text}: {got}");
        assert_eq!(player.character.level, level, "{authority:?} {text}");
    };
    let locked = "Your character sheet is set by this server's admins, not by you: ask one to \
                  run !char set <you> level <n> (or !char grant <you> <key>). !char shows it.";
    check(P, "!char level 5", locked, 1);
    check(P, "!char wis 14", locked, 1);
    check(P, "!char key add skull_key", locked, 1);
    check(P, "!char key remove skull_key", locked, 1);
    check(P, "!char", "Level 1 ", 1);
    check(Sandbox, "!char level 5", "Level 5 ", 5);
    check(Admin, "!char level 5", "Level 5 ", 5);
    let admins_only =
        "Only this server's admins (named with --admin) may set another user's sheet.";
    check(P, "!char set @p:x level 5", admins_only, 1);
    check(Sandbox, "!char grant @p:x k", admins_only, 1);
    check(
        Admin,
        "!char set @p:x level 5",
        r#" | Some(AdminEdit { user: "@p:x", edit: Level { level: 5 } })"#,
        1,
    );
}

fn check_cmd(input: &str, expect: &str) {
    let got = match command::parse(input) {
        Ok(c) => format!("{c:?}"),
        Err(e) => format!("error: {e}"),
    };
    assert_eq!(got, expect, "parse({input:?})");
}

fn check_loose(input: &str, expect: &str) {
    let got = match command::parse_loose(input) {
        Ok(c) => format!("{c:?}"),
        Err(e) => format!("error: {e}"),
    };
    assert_eq!(got, expect, "parse_loose({input:?})");
}

#[test]
fn command_parsing() {
    check_cmd("!zone help", "Help");
    check_cmd("!zone", "Help");
    check_cmd("  !ZONE   List ", "List");
    check_cmd(
        "!zone enter Crypt of  Valdris",
        r#"Enter { zone: "Crypt of Valdris" }"#,
    );
    check_cmd("!zone status", "Status");
    check_cmd("!zone advance", "Advance");
    check_cmd("!zone go 2", r#"Go { choice: "2" }"#);
    check_cmd("!zone CHOOSE 1", r#"Go { choice: "1" }"#);
    check_cmd("!zone go two", r#"Go { choice: "two" }"#);
    check_cmd("!zone map", "Map");
    check_cmd("!zone abandon", "Abandon");
    check_cmd("!char", "CharShow");
    check_cmd(
        "!char set @p:x level 5",
        r#"CharAdmin { user: "@p:x", edit: Level { level: 5 } }"#,
    );
    check_cmd(
        "!char SET @p:x Wisdom 14",
        r#"CharAdmin { user: "@p:x", edit: Score { ability: Wis, score: 14 } }"#,
    );
    check_cmd(
        "!char grant @p:x Skull Key",
        r#"CharAdmin { user: "@p:x", edit: Grant { key: "Skull Key" } }"#,
    );
    check_cmd(
        "!char revoke @p:x skull_key",
        r#"CharAdmin { user: "@p:x", edit: Revoke { key: "skull_key" } }"#,
    );
    check_cmd(
        "!char set",
        "error: missing user: use !char set <user> level|<ability> <n>",
    );
    check_cmd(
        "!char set @p:x",
        "error: missing level or ability: use !char set <user> level|<ability> <n>",
    );
    check_cmd("!char set @p:x level 21", "error: level 21 is outside 1-20");
    check_cmd(
        "!char set @p:x luck 3",
        "error: unknown command !char set <user> luck",
    );
    check_cmd(
        "!char grant @p:x",
        "error: missing key: use !char grant <user> <key>",
    );
    check_cmd("!char level 5", "CharLevel { level: 5 }");
    check_cmd("!char str 14", "CharScore { ability: Str, score: 14 }");
    check_cmd("!char WIS 3", "CharScore { ability: Wis, score: 3 }");
    check_cmd("!char charisma 18", "CharScore { ability: Cha, score: 18 }");
    check_cmd(
        "!char key add Skull Key",
        r#"CharKeyAdd { key: "Skull Key" }"#,
    );
    check_cmd(
        "!char key remove skull_key",
        r#"CharKeyRemove { key: "skull_key" }"#,
    );

    check_cmd("", "error: empty command");
    check_cmd("   ", "error: empty command");
    check_cmd(
        "hello",
        r#"error: "hello" is not a command (commands start with !zone or !char)"#,
    );
    check_cmd("!zone dance", "error: unknown command !zone dance");
    // `!zone go` alone shows the ways again: the status, with the fork's menu.
    check_cmd("!zone go", "Status");
    check_cmd(
        "!zone go 1 2",
        r#"error: unexpected "2" after the command: use !zone go <n>"#,
    );
    check_cmd(
        "!zone status now",
        r#"error: unexpected "now" after the command: use !zone status"#,
    );
    check_cmd("!zone enter", "error: missing zone: use !zone enter <zone>");
    check_cmd("!char level", "error: missing level: use !char level <n>");
    check_cmd(
        "!char level x",
        r#"error: "x" is not a valid level: use !char level <n>"#,
    );
    check_cmd("!char level 0", "error: level 0 is outside 1-20");
    check_cmd(
        "!char level 99999999999999999999",
        r#"error: "99999999999999999999" is not a valid level: use !char level <n>"#,
    );
    check_cmd("!char str 31", "error: score 31 is outside 1-30");
    check_cmd(
        "!char key",
        "error: missing add or remove: use !char key add|remove <key>",
    );
    check_cmd(
        "!char key add",
        "error: missing key: use !char key add|remove <key>",
    );
    check_cmd(
        "!char key polish k",
        "error: unknown command !char key polish",
    );
    check_cmd("!char fly", "error: unknown command !char fly");

    check_loose("status", "Status");
    check_loose("go 2", r#"Go { choice: "2" }"#);
    check_loose("2", r#"Go { choice: "2" }"#);
    check_loose("zone advance", "Advance");
    check_loose("!zone advance", "Advance");
    check_loose("char level 3", "CharLevel { level: 3 }");
    check_loose("!char", "CharShow");
    check_loose("dance", "error: unknown command !zone dance");
    check_loose("", "error: empty command");
    insta::assert_snapshot!(
        "command_error_reply",
        chat::command_error(&command::parse("!zone dance").expect_err("unknown")).text
    );
}

// ---- property: random zones ------------------------------------------------------------------

/// splitmix64: a tiny deterministic generator so a failing seed replays exactly.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// A layered DAG: one entry, one boss, every room on a path to the boss, some dead-end
/// secrets, random locks of every kind (including one with broken data).
fn random_zone(widths: &[usize], rng: &mut Rng) -> String {
    const KINDS: [&str; 8] = [
        "exploration",
        "trap",
        "elite",
        "harvest",
        "rest_camp",
        "fork",
        "merge",
        "secret",
    ];
    let mut layers: Vec<Vec<String>> = vec![vec!["r.entry".into()]];
    let mut nodes = vec![
        json!({"node_id": "r.entry", "kind": "entry", "is_entry": true,
                                "region_id": "up", "label": "Entry"}),
    ];
    let half = widths.len() / 2;
    for (l, &w) in widths.iter().enumerate() {
        let mut layer = Vec::new();
        for i in 0..w {
            let id = format!("r.n{l}_{i}");
            let mut content = json!({});
            if rng.below(5) == 0 {
                content["grants_key"] = json!(format!("k{}", rng.below(3)));
            }
            if rng.below(5) == 0 {
                content["harvest_ref"] = json!("herbs");
            }
            nodes.push(json!({"node_id": id, "kind": KINDS[rng.below(KINDS.len())],
                "label": format!("Room {l}.{i}"), "region_id": if l < half { "up" } else { "down" },
                "content": content}));
            layer.push(id);
        }
        layers.push(layer);
    }
    layers.push(vec!["r.boss".into()]);
    nodes.push(json!({"node_id": "r.boss", "kind": "boss", "is_boss": true,
                      "region_id": "down", "label": "Boss"}));
    let mut edges = Vec::new();
    fn lock(rng: &mut Rng) -> serde_json::Value {
        match rng.below(10) {
            0 => json!({"lock_kind": "perception_check", "lock_data": {"dc": 1 + rng.below(25)}}),
            1 => {
                json!({"lock_kind": "stat_check", "lock_data": {"stat": "dex", "dc": 1 + rng.below(25)}})
            }
            2 => {
                json!({"lock_kind": "key_required", "lock_data": {"key_id": format!("k{}", rng.below(3))}})
            }
            3 => json!({"lock_kind": "level_min", "lock_data": {"min_level": 1 + rng.below(6)}}),
            4 => json!({"lock_kind": "region_clear", "lock_data": {"region_id": "up"}}),
            5 => json!({"lock_kind": "perception_check"}), // broken data: never opens
            _ => json!({}),
        }
    }
    for l in 0..layers.len() - 1 {
        let (here, next) = (&layers[l], &layers[l + 1]);
        let mut has_in = vec![false; next.len()];
        for from in here {
            let k = 1 + rng.below(next.len().min(3));
            for _ in 0..k {
                let t = rng.below(next.len());
                has_in[t] = true;
                let mut e = lock(rng);
                e["from_node"] = json!(from);
                e["to_node"] = json!(next[t]);
                edges.push(e);
            }
            if rng.below(6) == 0 {
                let id = format!("{from}_secret");
                nodes.push(json!({"node_id": id, "kind": "secret", "label": "Nook",
                                  "content": {"loot_bias": 2.0}}));
                let mut e = lock(rng);
                e["from_node"] = json!(from);
                e["to_node"] = json!(id);
                edges.push(e);
            }
        }
        for (t, seen) in has_in.iter().enumerate() {
            if !seen {
                let mut e = lock(rng);
                e["from_node"] = json!(here[rng.below(here.len())]);
                e["to_node"] = json!(next[t]);
                edges.push(e);
            }
        }
    }
    json!({"format": 1, "zone_id": "r", "name": "Random", "tier": 1, "min_level": 1,
           "max_level": 5, "allow_loops": false,
           "regions": [{"region_id": "up", "name": "Up", "order": 1},
                       {"region_id": "down", "name": "Down", "order": 2}],
           "nodes": nodes, "edges": edges})
    .to_string()
}

/// Plays a zone with random (sometimes invalid) choices until it ends or waits.
fn random_play(zone: &Zone, seed: u64, rng: &mut Rng) -> Run {
    let mut ch = Character {
        level: 1 + rng.below(5) as u32,
        ..Character::default()
    };
    for a in Ability::ALL {
        ch.set_score(a, 3 + rng.below(16) as i32);
    }
    if rng.below(2) == 0 {
        ch.add_key("k0");
    }
    let mut now = T0;
    let (mut run, ev) = engine::start(zone, &format!("p{seed}"), &ch, now).expect("starts");
    let _ = chat::events(&ev);
    for _ in 0..10_000 {
        now += 1 + rng.below(3 * HOUR as usize) as i64;
        let _ = chat::status(&engine::status(zone, &run, &ch));
        let back: Run =
            serde_json::from_str(&serde_json::to_string(&run).expect("ser")).expect("round-trips");
        assert_eq!(back, run);
        if run.is_over() {
            return run;
        }
        let result = match &run.pending_fork {
            Some(f) if !f.options.iter().any(|o| o.open) => return run,
            Some(f) => match rng.below(10) {
                0 => Ok(engine::expire(
                    zone,
                    &mut run,
                    &ch,
                    now,
                    DEFAULT_FORK_TIMEOUT_MS,
                )),
                1 => engine::choose(zone, &mut run, &ch, "x", now),
                2 => engine::advance(zone, &mut run, &ch, now),
                _ => {
                    let n = 1 + rng.below(f.options.len() + 1);
                    engine::choose(zone, &mut run, &ch, &n.to_string(), now)
                }
            },
            None => engine::advance(zone, &mut run, &ch, now),
        };
        match result {
            Ok(ev) => {
                let _ = chat::events(&ev);
            }
            Err(r) => {
                let _ = chat::refusal(&r);
                assert!(run.pending_fork.is_some(), "refused without a fork: {r:?}");
            }
        }
    }
    panic!("the run neither ended nor waited");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn random_zones_end_at_the_boss_a_dead_end_secret_or_a_waiting_fork(
        widths in proptest::collection::vec(1usize..5, 1..7),
        seed in any::<u64>(),
    ) {
        let mut rng = Rng(seed);
        let zone = load(&random_zone(&widths, &mut rng));
        let run = random_play(&zone, seed, &mut rng);
        let node = zone.node_by_id(run.current_node.as_str()).expect("current room exists");
        match run.outcome {
            Some(Outcome::Victory) => {
                prop_assert!(node.is_boss);
                prop_assert!(run.boss_defeated);
            }
            Some(Outcome::DeadEnd) => prop_assert_eq!(node.kind, NodeKind::Secret),
            Some(Outcome::Abandoned) => prop_assert!(false, "nobody abandoned"),
            Some(Outcome::Fled) => prop_assert!(false, "nobody fled"),
            Some(Outcome::Defeat) => {
                prop_assert_eq!(run.wounds, zonegraph_core::rules::MAX_WOUNDS);
                prop_assert!(zonegraph_core::rules::encounter_kind(node).is_some());
            }
            None => {
                let fork = run.pending_fork.as_ref().expect("waiting at a fork");
                prop_assert!(fork.options.iter().all(|o| !o.open));
            }
        }
        let unique: BTreeSet<_> = run.visited_nodes.iter().collect();
        prop_assert_eq!(unique.len(), run.visited_nodes.len());
        for s in &run.revealed_secrets {
            prop_assert!(engine::visible_to_player(&zone, &run, s.as_str()));
        }
    }
}

// ---- endings and redaction ------------------------------------------------------------------

#[test]
fn the_boss_ends_the_run_even_with_exits_and_a_dead_end_secret_ends_quietly() {
    let zone = load(
        &json!({
            "format": 1, "zone_id": "e", "name": "Ends", "tier": 1, "min_level": 1, "max_level": 2,
            "nodes": [
                {"node_id": "e.a", "kind": "entry", "label": "Porch", "is_entry": true},
                {"node_id": "e.nook", "kind": "secret", "label": "Nook", "content": {"harvest_ref": "dust"}},
                {"node_id": "e.boss", "kind": "boss", "label": "Keeper", "is_boss": true},
                {"node_id": "e.after", "kind": "exploration", "label": "Afterwards"}
            ],
            "edges": [
                {"from_node": "e.a", "to_node": "e.boss"},
                {"from_node": "e.a", "to_node": "e.nook", "weight": 2},
                {"from_node": "e.boss", "to_node": "e.after"}
            ]
        })
        .to_string(),
    );
    let mut host = Host::new(&zone, "e", Character::default());
    let t = play(
        &mut host,
        &["enter e", "advance", "go 2", "advance", "status"],
    );
    insta::assert_snapshot!("dead_end_secret", t);
    assert_eq!(host.run().outcome, Some(Outcome::DeadEnd));
    assert!(!host.run().boss_defeated);
    assert_eq!(host.run().harvested.len(), 1);

    let hero = Character {
        level: 5,
        scores: [20; 6],
        ..Character::default()
    };
    let mut host = Host::new(&zone, "e", hero);
    let t = play(&mut host, &["enter e", "advance", "go 1", "fight", "fight"]);
    assert!(t.contains("Boss check: "), "{t}");
    let run = host.run();
    assert_eq!(run.outcome, Some(Outcome::Victory));
    assert_eq!(run.current_node.as_str(), "e.boss");
    assert!(run.completed_at.is_some());

    let mut host = Host::new(&zone, "e", Character::default());
    let t = play(&mut host, &["enter e", "abandon", "status", "advance"]);
    assert!(t.contains("You abandon the run in Porch."), "{t}");
    assert!(t.contains("This run is over: abandoned."), "{t}");
    assert!(host.run().abandoned);
}

#[test]
fn player_view_redacts_hidden_rooms_and_failed_checks() {
    let zone = crypt();
    let ch = wis(14);
    // crypt-2 passes the wall and fails the altar (DC 15).
    let (mut run, _) = engine::start(&zone, "crypt-2", &ch, T0).expect("starts");
    engine::advance(&zone, &mut run, &ch, T0).expect("entry");
    engine::advance(&zone, &mut run, &ch, T0).expect("corridor");
    engine::choose(&zone, &mut run, &ch, "2", T0).expect("chapel");
    engine::advance(&zone, &mut run, &ch, T0).expect("chapel cleared");
    let view = engine::player_view(&zone, &run, &ch);
    let j = serde_json::to_string(&view).expect("serialises");
    assert!(!j.contains("secret_chamber"), "{j}");
    assert!(!j.contains("Reliquary"), "{j}");
    assert!(
        !j.contains("15"),
        "no DC, level or number the chat did not show: {j}"
    );
    assert!(!j.contains("crypt-2"), "no run id: {j}");
    let exits = &view.status.exits;
    assert_eq!(exits.len(), 2, "menu numbering is kept");
    assert_eq!(
        exits[0].to_node.as_ref().map(|n| n.as_str()),
        Some("crypt_valdris.antechamber")
    );
    assert_eq!(exits[1].to_node, None, "the failed altar is \"something\"");
    // The engine's own run still has everything.
    assert!(
        serde_json::to_string(&run)
            .expect("ser")
            .contains("secret_chamber")
    );
    // Status and prompts never name the secret either.
    let st = chat::status(&engine::status(&zone, &run, &ch));
    assert!(!st.text.contains("Reliquary") && !st.html.contains("Reliquary"));
    assert!(
        !serde_json::to_string(&engine::status(&zone, &run, &ch))
            .expect("ser")
            .contains("secret_chamber")
    );
}

#[test]
fn extreme_scores_do_not_overflow() {
    let c: Character = serde_json::from_str(
        r#"{"level":4294967295,"scores":{"str":-2147483648,"wis":2147483647}}"#,
    )
    .expect("parses");
    assert_eq!(c.modifier(Ability::Str), -1_073_741_829);
    assert_eq!(c.modifier(Ability::Wis), 1_073_741_818);
    let zone = lock_zoo();
    let (mut run, _) = engine::start(&zone, "x", &c, T0).expect("starts");
    engine::advance(&zone, &mut run, &c, T0).expect("advances");
    for n in 1..=8 {
        let mut r = run.clone();
        let _ = engine::choose(&zone, &mut r, &c, &n.to_string(), T0);
    }
    assert_eq!(roll::modifier(9), -1);
    assert_eq!(roll::modifier(10), 0);
    assert_eq!(roll::modifier(11), 0);
}

proptest! {
    #[test]
    fn any_text_parses_or_errors_without_panicking(text in "\\PC{0,40}") {
        for parsed in [command::parse(&text), command::parse_loose(&text)] {
            match parsed {
                Ok(_) => {}
                Err(e) => prop_assert!(!chat::command_error(&e).text.is_empty()),
            }
        }
    }

    #[test]
    fn any_choice_text_is_taken_or_refused(text in "\\PC{0,24}") {
        let zone = crypt();
        let ch = wis(14);
        let (mut run, _) = engine::start(&zone, "crypt-7", &ch, T0).expect("starts");
        engine::advance(&zone, &mut run, &ch, T0).expect("entry");
        engine::advance(&zone, &mut run, &ch, T0).expect("corridor");
        match engine::choose(&zone, &mut run, &ch, &text, T0) {
            Ok(_) => prop_assert!(matches!(text.trim(), "1" | "2" | "01" | "02" | "001" | "002")
                || text.trim().trim_start_matches('0').len() == 1),
            Err(r) => prop_assert!(!chat::refusal(&r).text.is_empty()),
        }
    }
}

/// The pipeline applies a timed-out fork before any text, even one that is no command: the
/// "picked for you" notice comes first, in every host (they all call `bot::handle`).
#[test]
fn a_mistyped_command_still_delivers_the_fork_timeout() {
    let zone = crypt();
    let mut host = Host::new(&zone, "crypt-7", wis(14));
    for line in ["enter crypt_valdris", "advance", "advance"] {
        host.exec(line);
    }
    assert!(host.run().pending_fork.is_some());
    host.now += 7 * HOUR;
    let cx = bot::Context {
        syntax: Syntax::Chat,
        authority: bot::Authority::Sandbox,
        ..host.context()
    };
    let response = bot::handle(&host.zones, &mut host.player, "!zone dacne", &cx);
    assert_eq!(response.replies.len(), 2, "{response:?}");
    assert!(
        response.replies[0]
            .text
            .starts_with("You lingered too long at the fork, so option 1 was picked for you"),
        "{response:?}"
    );
    assert!(
        response.replies[1].text.contains("Unknown command"),
        "{response:?}"
    );
    assert!(matches!(
        response.events.first(),
        Some(Event::PickedForYou { option: 1, .. })
    ));
    assert_eq!(host.run().current_node.as_str(), "crypt_valdris.main_hall");
}

/// A player's state stays small: at most 64 keys of at most 64 bytes, refused in words.
#[test]
fn keys_are_capped_in_number_and_length() {
    let zone = crypt();
    let mut host = Host::new(&zone, "k", Character::default());
    let long = "k".repeat(rules::MAX_KEY_BYTES + 1);
    let t = host.exec(&format!("char key add {long}"));
    assert_eq!(t, "That key id is too long: at most 64 bytes.");
    assert!(host.player.character.keys.is_empty());
    let t = host.exec(&format!(
        "char key add {}",
        "k".repeat(rules::MAX_KEY_BYTES)
    ));
    assert!(t.contains("Keys:"), "{t}");
    for i in 1..rules::MAX_KEYS {
        host.exec(&format!("char key add key_{i}"));
    }
    assert_eq!(host.player.character.keys.len(), rules::MAX_KEYS);
    let t = host.exec("char key add one_too_many");
    assert!(t.starts_with("You already hold 64 keys"), "{t}");
    assert_eq!(host.player.character.keys.len(), rules::MAX_KEYS);
    // A key already held is no new key: adding it again is fine.
    let t = host.exec("char key add key_1");
    assert!(t.contains("Keys:"), "{t}");
}

/// What is for the player's eyes only is marked so by the core, once, for every transport:
/// the run-map link and the sheet; the run's progress, menus and refusals are not.
#[test]
fn only_the_run_link_and_the_sheet_are_private() {
    let zone = crypt();
    let mut host = Host::new(&zone, "private", wis(10));
    let mut private = Vec::new();
    for line in [
        "!zone enter crypt_valdris",
        "!zone advance",
        "!zone advance",
        "!zone status",
        "!zone map",
        "!char",
        "!char level 3",
        "!zone go 9",
        "!zone help",
        "!zone list",
    ] {
        host.now += 1000;
        let cx = host.context();
        let response = bot::handle(&host.zones, &mut host.player, line, &cx);
        for r in response.replies {
            if r.private {
                private.push(line);
            }
        }
    }
    // (`!char level 3` in a sandbox answers with the edited sheet.)
    assert_eq!(private, ["!zone map", "!char", "!char level 3"]);
    // Without a link (the terminal), the map is the player's screen alone anyway: not marked.
    let mut cx = host.context();
    cx.run_link = None;
    let response = bot::handle(&host.zones, &mut host.player, "!zone map", &cx);
    assert!(response.replies.iter().all(|r| !r.private));
    // The JSON every transport sends says so only when it is true.
    let json = serde_json::to_value(chat::character(&wis(10))).expect("json");
    assert_eq!(json["private"], true);
    let json = serde_json::to_value(chat::help()).expect("json");
    assert!(json.get("private").is_none(), "{json}");
}

// ---- encounters and the built-in rules -------------------------------------------------------

/// Gate → Spike Hall (trap) → Campfire (rest camp) → Guard Post (elite) → Throne (boss).
fn gauntlet() -> Zone {
    load(
        &json!({
            "format": 1, "zone_id": "g", "name": "Gauntlet", "tier": 1, "min_level": 1, "max_level": 3,
            "nodes": [
                {"node_id": "g.gate", "kind": "entry", "label": "Gate", "is_entry": true},
                {"node_id": "g.spikes", "kind": "trap", "label": "Spike Hall"},
                {"node_id": "g.camp", "kind": "rest_camp", "label": "Campfire"},
                {"node_id": "g.guard", "kind": "elite", "label": "Guard Post",
                 "content": {"grants_key": "guard_key"}},
                {"node_id": "g.throne", "kind": "boss", "label": "Throne", "is_boss": true,
                 "content": {"encounter_override": "iron_king", "loot_bias": 1.5}}
            ],
            "edges": [
                {"from_node": "g.gate", "to_node": "g.spikes"},
                {"from_node": "g.spikes", "to_node": "g.camp"},
                {"from_node": "g.camp", "to_node": "g.guard"},
                {"from_node": "g.guard", "to_node": "g.throne"}
            ]
        })
        .to_string(),
    )
}

/// A new player's sheet under the built-in rules.
fn newcomer() -> Character {
    Character::starting(rules::STARTING_SCORES)
}

/// Whether attempt `attempt` at `room` of run `run` wins for `c` in a tier-1 zone.
fn wins(run: &str, room: &str, kind: EncounterKind, attempt: u32, c: &Character) -> bool {
    let total = rules::encounter_d20(run, room, attempt) as i32
        + rules::encounter_modifier(kind, c.level, &c.scores);
    total >= rules::encounter_dc(1, kind) as i32
}

/// The first run id `g-N` whose encounter rolls satisfy `pred` (as the server tests pick
/// users): the transcripts stay deterministic, and say which rolls they rely on.
fn run_where(pred: impl Fn(&str) -> bool) -> String {
    (0..100_000)
        .map(|i| format!("g-{i}"))
        .find(|r| pred(r))
        .expect("some run id rolls that way")
}

#[test]
fn a_boss_must_be_fought_and_a_rest_camp_heals() {
    let zone = gauntlet();
    let c = newcomer();
    // The trap wounds once, then falls; the camp heals; the guard falls; the boss needs two.
    let run = run_where(|r| {
        !wins(r, "g.spikes", EncounterKind::Trap, 1, &c)
            && wins(r, "g.spikes", EncounterKind::Trap, 2, &c)
            && wins(r, "g.guard", EncounterKind::Elite, 1, &c)
            && !wins(r, "g.throne", EncounterKind::Boss, 1, &c)
            && wins(r, "g.throne", EncounterKind::Boss, 2, &c)
    });
    let mut host = Host::new(&zone, &run, c);
    let t = play(
        &mut host,
        &[
            "enter g", "flee", "advance", "advance", "status", "go 1", "fight", "advance",
            "advance", "status", "advance", "fight", "char",
        ],
    );
    insta::assert_snapshot!("gauntlet_won", t.replace(&run, "<run>"));
    assert!(
        t.contains("There is nothing to fight here."),
        "no flight without a fight: {t}"
    );
    assert!(t.contains("Trap check: "), "{t}");
    assert!(t.contains("You are wounded (1 of 3)."), "{t}");
    assert!(t.contains("The trap bars the way on"), "go is refused: {t}");
    assert!(t.contains("your 1 wound heals"), "{t}");
    assert!(t.contains("Boss check: "), "{t}");
    assert!(t.contains("You gain 100 XP."), "{t}");
    let run = host.run();
    assert_eq!(run.outcome, Some(Outcome::Victory));
    assert!(run.boss_defeated);
    // Trap 20 + elite 40 + boss 100 at tier 1: level 2 (100 XP).
    assert_eq!(run.xp_earned, 160);
    assert_eq!(host.player.character.xp, 160);
    assert_eq!(host.player.character.level, 2);
    assert!(host.player.character.has_key("guard_key"));
    assert_eq!(
        run.wounds, 1,
        "the boss's wound, after the camp healed the trap's"
    );
}

#[test]
fn the_third_wound_ends_the_run_in_defeat() {
    let zone = gauntlet();
    let c = newcomer();
    let run = run_where(|r| (1..=3).all(|a| !wins(r, "g.spikes", EncounterKind::Trap, a, &c)));
    let mut host = Host::new(&zone, &run, c);
    let t = play(
        &mut host,
        &[
            "enter g", "advance", "fight", "fight", "fight", "status", "fight", "go 1",
        ],
    );
    insta::assert_snapshot!("gauntlet_defeat", t.replace(&run, "<run>"));
    assert!(t.contains("You are wounded (3 of 3)."), "{t}");
    assert!(t.contains("Your run ends in defeat."), "{t}");
    assert!(t.contains("This run is over: defeat."), "{t}");
    assert!(t.contains("This run is over (defeat)."), "{t}");
    let run = host.run();
    assert_eq!(run.outcome, Some(Outcome::Defeat));
    assert_eq!(run.current_node.as_str(), "g.spikes");
    assert_eq!(run.visited_nodes.len(), 2, "the run never passed the trap");
    assert_eq!(host.player.character.xp, 0);
    // A new run starts whole.
    host.exec("enter g");
    assert_eq!(host.run().wounds, 0);
}

#[test]
fn fleeing_ends_the_run() {
    let zone = gauntlet();
    let mut host = Host::new(&zone, "g-flee", newcomer());
    let t = play(
        &mut host,
        &["enter g", "advance", "flee", "status", "fight"],
    );
    assert!(
        t.contains("You flee from Spike Hall. Your run ends here."),
        "{t}"
    );
    assert!(t.contains("This run is over: you fled."), "{t}");
    let run = host.run();
    assert_eq!(run.outcome, Some(Outcome::Fled));
    assert!(run.abandoned, "over for every reader of the row");
    assert!(run.encounter.is_none());
}

#[test]
fn a_host_game_decides_encounters_in_its_own_words() {
    let zone = gauntlet();
    let zones = vec![zone.clone()];
    let mut host = Host::new(&zone, "g-host", newcomer());
    host.exec("enter g");
    host.exec("advance");
    let cx = host.context();
    // Without its decision, the command is handed back as a question and says nothing.
    let mut asked = host.player.clone();
    let r = bot::handle_as(&zones, &mut asked, "fight", &cx, bot::Game::Host(None));
    assert!(r.replies.is_empty(), "{r:?}");
    let q = r.encounter_request.expect("a question for the host");
    let q = serde_json::to_value(&q).expect("serialises");
    assert_eq!(
        q,
        json!({"zone_id": "g", "tier": 1,
               "room": {"node_id": "g.spikes", "kind": "trap", "label": "Spike Hall",
                        "encounter_override": "", "loot_bias": 1.0},
               "character": {"level": 1, "keys": [],
                             "scores": {"str": 15, "dex": 14, "con": 13, "int": 12, "wis": 10, "cha": 8}}})
    );
    // `advance` on the encounter asks the same; `status` needs no decision.
    let mut again = host.player.clone();
    let r = bot::handle_as(&zones, &mut again, "advance", &cx, bot::Game::Host(None));
    assert!(r.encounter_request.is_some());
    let r = bot::handle_as(&zones, &mut again, "status", &cx, bot::Game::Host(None));
    assert!(r.encounter_request.is_none() && !r.replies.is_empty());

    // With it: the host's words, its keys, and no built-in XP.
    let won: engine::HostOutcome = serde_json::from_value(json!({
        "outcome": "won", "message": "The spikes retract at your <command>.", "keys": ["Spike Key"]
    }))
    .expect("the host's answer parses");
    let mut player = host.player.clone();
    let r = bot::handle_as(
        &zones,
        &mut player,
        "fight",
        &cx,
        bot::Game::Host(Some(&won)),
    );
    let text = &r.replies[0].text;
    assert!(
        text.starts_with("The spikes retract at your <command>.\n"),
        "{text}"
    );
    assert!(
        r.replies[0].html.contains("&lt;command&gt;"),
        "escaped in HTML"
    );
    assert!(text.contains("You find a key: Spike Key."), "{text}");
    assert!(!text.contains("XP") && !text.contains("Loot"), "{text}");
    assert!(text.contains("Campfire"), "moved on: {text}");
    assert!(player.character.has_key("spike key"));
    assert_eq!(player.character.xp, 0);

    for (outcome, ended) in [("lost", Outcome::Defeat), ("fled", Outcome::Fled)] {
        let d: engine::HostOutcome =
            serde_json::from_value(json!({ "outcome": outcome })).expect("parses");
        let mut player = host.player.clone();
        let r = bot::handle_as(&zones, &mut player, "fight", &cx, bot::Game::Host(Some(&d)));
        let run = player.run.as_ref().expect("run");
        assert_eq!(run.outcome, Some(ended), "{r:?}");
        assert!(
            r.replies[0]
                .text
                .starts_with("The game master rules the trap: you "),
            "{r:?}"
        );
    }
}

/// Rooms whose encounter the events say was won.
fn won_rooms(events: &[Event], into: &mut BTreeSet<String>) {
    for e in events {
        if let Event::EncounterRolled { check } = e
            && check.won
        {
            into.insert(check.node.to_string());
        }
    }
}

/// Checks that `run` never got past an encounter it did not win.
fn no_encounter_passed(zone: &Zone, run: &Run, won: &BTreeSet<String>) -> Result<(), String> {
    for (i, id) in run.visited_nodes.iter().enumerate() {
        let node = zone
            .node_by_id(id.as_str())
            .ok_or("a visited room is in the zone")?;
        let left = i + 1 < run.visited_nodes.len() || run.current_node != *id;
        let cleared_here = run.current_node == *id
            && run.encounter.is_none()
            && !run.is_over()
            && run.pending_fork.is_some();
        if rules::encounter_kind(node).is_some()
            && (left || cleared_here || run.boss_defeated)
            && !won.contains(id.as_str())
        {
            return Err(format!("the run passed {id} without winning its encounter"));
        }
    }
    if run.encounter.is_some() && run.pending_fork.is_some() {
        return Err("an encounter and a fork at once".into());
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(100))]

    /// Random commands on generated zones (traps, elites, rest camps, forks): nothing panics,
    /// and no run moves on from an encounter it has not won.
    #[test]
    fn random_play_never_passes_an_unresolved_encounter(
        rooms in 4usize..40,
        width in 1usize..4,
        seed in any::<u64>(),
        picks in proptest::collection::vec(any::<u8>(), 16..120),
        level in 1u32..=8,
        score in 3i32..=18,
    ) {
        let file = zonegraph_core::synth::layered("s", rooms, width, seed);
        let zone = load(&zonegraph_core::format::to_pretty_json(&file));
        let c = Character { level, scores: [score; 6], ..Character::default() };
        let run_id = format!("prop-{seed}");
        let mut host = Host::new(&zone, &run_id, c);
        host.exec("enter s");
        let mut won = BTreeSet::new();
        let mut pick = picks.iter().copied();
        while let Some(p) = pick.next() {
            let line = match p % 10 {
                0..=3 => "advance".to_string(),
                4 | 5 => "fight".to_string(),
                6 => if p % 7 == 0 { "flee".to_string() } else { "status".to_string() },
                _ => format!("go {}", 1 + pick.next().unwrap_or(0) % 3),
            };
            host.now += 1000;
            let cx = host.context();
            let r = bot::handle(&host.zones, &mut host.player, &line, &cx);
            prop_assert!(!r.replies.is_empty(), "{} got no reply", line);
            won_rooms(&r.events, &mut won);
            let run = host.run();
            if let Err(e) = no_encounter_passed(&zone, run, &won) {
                prop_assert!(false, "{} after {:?}: {:?}", e, line, run);
            }
            if run.is_over() {
                prop_assert!(
                    run.outcome != Some(Outcome::Defeat) || run.wounds == rules::MAX_WOUNDS
                );
                break;
            }
        }
    }
}

/// The guide's rules tables (docs/guide/game.md), as the code's tables print them.
fn rules_tables() -> Vec<String> {
    let tiers = 1..=6u8;
    let head = |first: &str| {
        let mut s = format!("| {first} |");
        for t in tiers.clone() {
            s.push_str(&format!(" tier {t} |"));
        }
        s.push_str(&format!("\n|---|{}\n", "---|".repeat(tiers.len())));
        s
    };
    let mut xp = head("room cleared");
    for (kind, base) in rules::ROOM_XP {
        if base == 0 {
            continue;
        }
        xp.push_str(&format!("| {} |", kind.as_str().replace('_', " ")));
        for t in tiers.clone() {
            xp.push_str(&format!(" {} |", base * u32::from(t)));
        }
        xp.push('\n');
    }
    let mut dc = head("encounter DC");
    for (kind, _) in rules::ENCOUNTER_DC {
        dc.push_str(&format!("| {} |", kind.as_str()));
        for t in tiers.clone() {
            dc.push_str(&format!(" {} |", rules::encounter_dc(t, kind)));
        }
        dc.push('\n');
    }
    let mut levels = String::from("| level | XP |\n|---|---|\n");
    for (i, need) in rules::LEVEL_XP.iter().enumerate() {
        levels.push_str(&format!("| {} | {need} |\n", i + 1));
    }
    let s = rules::STARTING_SCORES;
    let start = format!(
        "STR {}, DEX {}, CON {}, INT {}, WIS {}, CHA {}",
        s[0], s[1], s[2], s[3], s[4], s[5]
    );
    vec![xp, dc, levels, start]
}

#[test]
fn the_guide_states_the_rules_the_code_plays() {
    let guide = include_str!("../../../../docs/guide/game.md");
    for table in rules_tables() {
        assert!(
            guide.contains(&table),
            "docs/guide/game.md does not hold this table of crates/zonegraph-core/src/rules.rs:\n{table}"
        );
    }
    assert!(guide.contains(&format!("{} wounds end the run", rules::MAX_WOUNDS)));
    assert!(guide.contains(&format!("vs {}", rules::LOOT_DC)));
}

/// A run stored before encounters existed, standing in the boss room: it still has to fight.
#[test]
fn a_run_stored_before_encounters_fights_the_room_it_stands_in() {
    let zone = gauntlet();
    let c = Character {
        level: 9,
        scores: [30; 6],
        ..Character::default()
    };
    let mut host = Host::new(&zone, "g-old", c.clone());
    for line in ["enter g", "advance", "fight", "advance", "fight"] {
        host.exec(line);
    }
    assert_eq!(host.run().current_node.as_str(), "g.throne");
    // The row as an older server wrote it: no encounter field.
    let mut old = serde_json::to_value(host.run()).expect("ser");
    let fields = old.as_object_mut().expect("object");
    for f in ["encounter", "wounds", "xp_earned", "loot", "last_check"] {
        fields.remove(f);
    }
    let mut run: Run = serde_json::from_value(old).expect("an old row still loads");
    assert!(run.encounter.is_none());
    let status = engine::status(&zone, &run, &c);
    assert!(status.encounter.is_some(), "the view shows the fight too");
    let events = engine::advance(&zone, &mut run, &c, T0).expect("advances");
    assert!(
        matches!(events.first(), Some(Event::EncounterRolled { check }) if check.attempt == 1),
        "{events:?}"
    );
}

/// A response says, as data, which command it answered and whether it was carried out,
/// refused or not understood: what a host logs, without reading the words back or logging
/// the text typed.
#[test]
fn a_response_names_its_command_and_whether_it_was_carried_out() {
    let crypt = crypt();
    let mut host = Host::new(&crypt, "v-1", Character::default());
    let mut said = |line: &str| {
        host.now += 1000;
        let cx = host.context();
        let r = bot::handle(&host.zones, &mut host.player, line, &cx);
        (r.verb, r.handled)
    };
    assert_eq!(
        said("status"),
        (Some("status"), bot::Handled::Refused(Refusal::NoRun))
    );
    assert_eq!(
        said("enter crypt_valdris"),
        (Some("enter"), bot::Handled::Done)
    );
    assert_eq!(said("choose 1").0, Some("go"));
    assert_eq!(
        said("char wis 14"),
        (Some("char score"), bot::Handled::Done)
    );
    assert_eq!(said("char set @a:x level 3").0, Some("char set"));
    let (verb, handled) = said("xyzzy plugh");
    assert_eq!(verb, None);
    assert!(
        matches!(
            handled,
            bot::Handled::NotUnderstood(command::CommandError::Unknown { .. })
        ),
        "{handled:?}"
    );
}
