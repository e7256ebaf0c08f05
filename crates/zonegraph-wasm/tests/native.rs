//! Native side of the parity tests: runs the façade natively on every zone in `zones/` and on
//! a table of broken inputs, and keeps `tests/parity.json` current. The browser tests
//! (`tests/web.rs`) feed the same inputs to the wasm exports and expect the same outputs.
#![cfg(not(target_arch = "wasm32"))]

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use zonegraph_wasm::api;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

const MINIMAL: &str = r#"{"format":1,"zone_id":"t","name":"T","tier":1,"min_level":1,"max_level":2,
"nodes":[{"node_id":"t.a","kind":"entry","is_entry":true},{"node_id":"t.b","kind":"boss","is_boss":true}],
"edges":[{"from_node":"t.a","to_node":"t.b"}]}"#;

/// Inputs that are not valid zones, by name: structural findings and outright errors.
fn broken_inputs() -> Vec<(&'static str, String)> {
    vec![
        ("empty_text", String::new()),
        ("truncated_json", "{\"format\": 1, \"zone_id\": ".into()),
        ("not_an_object", "[1, 2, 3]".into()),
        ("wrong_format_version", MINIMAL.replace("\"format\":1", "\"format\":2")),
        ("unknown_field", MINIMAL.replace("\"kind\":\"boss\"", "\"kind\":\"boss\",\"lable\":\"x\"")),
        ("unknown_kind", MINIMAL.replace("\"kind\":\"boss\"", "\"kind\":\"dragon\"")),
        ("nodes_without_edges", MINIMAL.replace(",\n\"edges\":[{\"from_node\":\"t.a\",\"to_node\":\"t.b\"}]", "")),
        ("no_nodes", MINIMAL.replace(
            "[{\"node_id\":\"t.a\",\"kind\":\"entry\",\"is_entry\":true},{\"node_id\":\"t.b\",\"kind\":\"boss\",\"is_boss\":true}]",
            "[]",
        )),
        ("duplicate_node", MINIMAL.replace("\"node_id\":\"t.b\"", "\"node_id\":\"t.a\"")),
        ("unknown_node", MINIMAL.replace("\"to_node\":\"t.b\"", "\"to_node\":\"t.nowhere\"")),
        ("bad_lock_data", MINIMAL.replace(
            "\"to_node\":\"t.b\"",
            "\"to_node\":\"t.b\",\"lock_kind\":\"stat_check\",\"lock_data\":{\"stat\":\"luck\",\"dc\":40}",
        )),
        ("minimal", MINIMAL.to_string()),
        ("legacy_room_kinds", r#"{"format":1,"zone_id":"old","name":"Old","tier":1,"min_level":1,"max_level":2,"room_kinds":["exploration","trap","boss"]}"#.into()),
        ("unicode", MINIMAL.replace("\"name\":\"T\"", "\"name\":\"Крипта 🐉 \\u00e9\"")),
        ("many_routes", many_routes(60)),
    ]
}

/// A chain of `layers` diamonds: 2^layers routes, more than a JS number holds exactly unless a
/// power of two (this checks the JSON conversion of large counts).
fn many_routes(layers: usize) -> String {
    let mut nodes = vec![r#"{"node_id":"m.n0","kind":"entry","is_entry":true}"#.to_string()];
    let mut edges = Vec::new();
    for i in 0..layers {
        for side in ["a", "b"] {
            nodes.push(format!(
                r#"{{"node_id":"m.{side}{i}","kind":"exploration"}}"#
            ));
            edges.push(format!(
                r#"{{"from_node":"m.n{i}","to_node":"m.{side}{i}"}}"#
            ));
            let next = i + 1;
            edges.push(format!(
                r#"{{"from_node":"m.{side}{i}","to_node":"m.n{next}"}}"#
            ));
        }
        let kind = if i + 1 == layers {
            r#""boss","is_boss":true"#
        } else {
            r#""merge""#
        };
        nodes.push(format!(r#"{{"node_id":"m.n{}","kind":{kind}}}"#, i + 1));
    }
    format!(
        r#"{{"format":1,"zone_id":"m","name":"Many","tier":5,"min_level":1,"max_level":9,"nodes":[{}],"edges":[{}]}}"#,
        nodes.join(","),
        edges.join(",")
    )
}

fn outcome<T: serde::Serialize>(r: Result<T, api::ApiError>) -> Value {
    match r {
        Ok(v) => json!({ "ok": v }),
        Err(e) => json!({ "error": e }),
    }
}

/// `(dir/name, text)` of the `*.json` files in a workspace directory (schemas excluded), sorted.
fn json_files(dir: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = std::fs::read_dir(root().join(dir))
        .unwrap_or_else(|e| panic!("read {dir}/: {e}"))
        .map(|e| e.expect("dir entry").path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(zonegraph_core::format::is_zone_file_name)
        })
        .map(|p| {
            let name = p
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or("")
                .to_string();
            let text = std::fs::read_to_string(&p).expect("read json");
            (format!("{dir}/{name}"), text)
        })
        .collect();
    out.sort();
    out
}

/// Builds the whole fixture from the native façade.
fn fixture() -> Value {
    let mut zones = Vec::new();
    let mut all_zone_texts = Vec::new();
    // The shipped zones, then the core's validator fixtures (one per finding code).
    for dir in ["zones", "tests/fixtures/invalid"] {
        for (name, text) in json_files(dir) {
            zones.push(json!({
                "name": name,
                "input": text,
                "check": outcome(api::check_zone(&text, "zone.json")),
                "analyze": outcome(api::analyze_zone(&text)),
                "layout": outcome(api::layout_zone(&text)),
                "map": outcome(api::render_map(&text, None, None)),
                "share": outcome(api::encode_share_link(&text)),
            }));
            if dir == "zones" {
                all_zone_texts.push((name, text));
            }
        }
    }
    for (name, text) in broken_inputs() {
        zones.push(json!({
            "name": name,
            "input": text,
            "check": outcome(api::check_zone(&text, "zone.json")),
            "analyze": outcome(api::analyze_zone(&text)),
            "layout": outcome(api::layout_zone(&text)),
            "map": outcome(api::render_map(&text, None, None)),
            "share": outcome(api::encode_share_link(&text)),
        }));
    }
    // All shipped zones together (the checks across zones), and a mixed set with a zone
    // repeated (duplicate_node between zones) and an unreadable file (parse_error entry).
    let check_all = api::check_zones(&all_zone_texts);
    let mixed_sources = vec![
        ("a.json".to_string(), MINIMAL.to_string()),
        ("b.json".to_string(), MINIMAL.to_string()),
        ("broken.json".to_string(), "{\"format\": 1,".to_string()),
    ];
    let check_mixed = json!({
        "sources": mixed_sources.iter().map(|(f, t)| json!({"file": f, "zone": t})).collect::<Vec<_>>(),
        "checked": api::check_zones(&mixed_sources),
    });

    let mut rolls = Vec::new();
    let ids = [
        "run-1",
        "run-2",
        "!AbCdEf:matrix.example.org/42",
        "",
        "Крипта 🐉",
    ];
    let edges = [
        ("crypt_valdris.fork", "crypt_valdris.side_chapel"),
        ("crypt_valdris.side_chapel", "crypt_valdris.secret_chamber"),
        ("a", "b"),
        ("", ""),
    ];
    for run_id in ids {
        for (from, to) in edges {
            rolls.push(json!({
                "run_id": run_id, "from": from, "to": to,
                "d20": api::roll_d20(run_id, from, to),
            }));
        }
    }

    // Share links that must fail, with the error each gives. Oversized payloads are built by
    // the browser test itself (64 KB of text in a fixture helps nobody).
    let bomb = {
        let packed = deflate_zlib(&vec![b' '; zonegraph_core::share::MAX_INFLATED + 1]);
        format!("z1:{}", base64url(&packed))
    };
    let mut corrupt = api::encode_share_link(MINIMAL).expect("encodes");
    corrupt.truncate(corrupt.len() - 5);
    let raw_deflate = format!("z1:{}", base64url(&deflate_raw(MINIMAL.as_bytes())));
    let mut bad_links = Vec::new();
    for (name, link) in [
        ("deflate_bomb", bomb),
        ("truncated", corrupt),
        ("bad_base64", "z1:ab$cd".to_string()),
        ("wrong_prefix", "pako:eNpLTEoGAAJNASc".to_string()),
        ("empty", "z1:".to_string()),
        ("raw_deflate", raw_deflate),
        (
            "whole_url",
            format!(
                "https://x.invalid/#{}",
                api::encode_share_link(MINIMAL).expect("encodes")
            ),
        ),
    ] {
        bad_links.push(json!({
            "name": name,
            "link": link,
            "decode": outcome(api::decode_share_link(&link)),
        }));
    }

    let commands = scripted_commands(&all_zone_texts);

    json!({
        "comment": "written by crates/zonegraph-wasm/tests/native.rs; ZONEGRAPH_BLESS=1 cargo test -p zonegraph-wasm --test native",
        "version": api::version_info(),
        "zones": zones,
        "check_all_zones": check_all,
        "check_mixed": check_mixed,
        "rolls": rolls,
        "commands": commands,
        "links": bad_links,
        "max_payload": zonegraph_core::share::MAX_PAYLOAD,
    })
}

/// Records `command` calls (the bot's one pipeline) with their inputs and output, so the
/// browser test can replay them one by one and compare. After a call that changes the
/// player's run, the record also holds `views`: `playerView` and `renderMap` of the run after
/// it, as the run-map page would ask for them.
struct Transcripts<'a> {
    /// The shipped zones, `(name, text)`.
    zones: &'a [(String, String)],
    calls: Vec<Value>,
}

impl Transcripts<'_> {
    fn text_of(&self, name: &str) -> &str {
        self.zones
            .iter()
            .find(|(n, _)| n == name)
            .map_or_else(|| panic!("no zone {name}"), |(_, t)| t.as_str())
    }

    /// One line of text from `player` (`{character, run}`, or null for a new player) with
    /// `zone_names` offered; the player after it (unchanged when the call throws).
    fn call(
        &mut self,
        zone_names: &[&str],
        player: &Value,
        text: &str,
        now: i64,
        run_id: &str,
        options: &Value,
    ) -> Value {
        let zone_texts: Vec<String> = zone_names
            .iter()
            .map(|n| self.text_of(n).to_string())
            .collect();
        let part = |k: &str| {
            Some(&player[k])
                .filter(|v| !v.is_null())
                .map(Value::to_string)
        };
        let out = api::command(
            &zone_texts,
            part("character").as_deref(),
            part("run").as_deref(),
            text,
            now,
            run_id,
            &options_of(options),
        );
        let next = out
            .as_ref()
            .ok()
            .map(|o| serde_json::to_value(&o.player).expect("player serialises"))
            .unwrap_or_else(|| player.clone());
        let mut record = json!({"zones": zone_names, "player": player, "text": text,
            "now": now, "run_id": run_id, "options": options, "output": outcome(out)});
        let views = (next["run"] != player["run"])
            .then(|| self.views(zone_names, &next))
            .flatten();
        if let Some(views) = views {
            record["views"] = views;
        }
        self.calls.push(record);
        next
    }

    /// `playerView` and `renderMap` of the player's run, in the zone it belongs to.
    fn views(&self, zone_names: &[&str], player: &Value) -> Option<Value> {
        let run = &player["run"];
        let zone = zone_names.iter().copied().find(|n| {
            serde_json::from_str::<Value>(self.text_of(n))
                .is_ok_and(|z| z["zone_id"] == run["zone_id"])
        })?;
        let text = self.text_of(zone);
        let (rj, cj) = (run.to_string(), player["character"].to_string());
        Some(json!({
            "zone": zone,
            "playerView": outcome(api::player_view(text, &rj, Some(&cj))),
            "renderMap": outcome(api::render_map(text, Some(&rj), None)),
        }))
    }
}

/// Chat transcripts through `command`, covering what a JS bot sees:
/// - every shipped zone played to its end in chat syntax: entered (after `!char level` when
///   the zone refuses the character's level), `!zone status` at every fork, the last option
///   tried first (a locked one is refused and reveals its roll) and then the first open one, the
///   first fork left once before and once past the fork timeout (a branch the play does not
///   continue from), and `!zone status` and a refused `!zone advance` after the end;
/// - the refusals and command errors, each from a state it leaves unchanged;
/// - the Crypt in a chat room that offers every zone (chatter, `!zone list`, `!char`, a
///   locked option, `!zone map` with a link, a fork left past the timeout);
/// - a zone played to its end in loose syntax.
fn scripted_commands(zones: &[(String, String)]) -> Vec<Value> {
    let mut t = Transcripts {
        zones,
        calls: Vec::new(),
    };
    let names: Vec<&str> = zones.iter().map(|(n, _)| n.as_str()).collect();
    let t0: i64 = 1_700_000_000_000;

    let character = json!({"level": 3, "scores": {"wis": 14, "str": 12}, "keys": ["Skull_Key"]});
    let timeout = json!({"fork_timeout_ms": 300_000});
    for &name in &names {
        let zone: Value = serde_json::from_str(t.text_of(name)).expect("zone is JSON");
        let run_id = format!("parity:{name}");
        let call = |t: &mut Transcripts, player: &Value, text: &str, now: i64| {
            t.call(&[name], player, text, now, &run_id, &timeout)
        };
        let mut now = t0;
        let enter = format!("!zone enter {}", s(&zone["zone_id"]));
        let mut player = json!({"character": character, "run": null});
        player = call(&mut t, &player, &enter, now);
        if player["run"].is_null() {
            // Level too low: the refusal is recorded; level up and enter again.
            let level = format!("!char level {}", zone["min_level"]);
            player = call(&mut t, &player, &level, now);
            player = call(&mut t, &player, &enter, now);
        }
        let mut timed_out = false;
        for _ in 0..80 {
            if !player["run"]["outcome"].is_null() {
                break;
            }
            now += 60_000;
            let fork = player["run"]["pending_fork"].clone();
            if fork.is_null() {
                player = call(&mut t, &player, "!zone advance", now);
                continue;
            }
            let at_fork = |p: &Value| p["run"]["pending_fork"]["at"] == fork["at"];
            if !timed_out {
                timed_out = true;
                let created = fork["created_at"].as_i64().expect("created_at");
                call(&mut t, &player, "!zone status", created + 1_000);
                let picked = call(&mut t, &player, "!zone status", created + 600_000);
                assert!(!at_fork(&picked), "{name}: the fork timeout took no option");
            } else {
                call(&mut t, &player, "!zone status", now);
            }
            let options = fork["options"].as_array().expect("options");
            player = call(&mut t, &player, &format!("!zone go {}", options.len()), now);
            if at_fork(&player) {
                let n = options
                    .iter()
                    .position(|o| o["open"] == true)
                    .map_or(1, |i| i + 1);
                player = call(&mut t, &player, &format!("!zone go {n}"), now);
                if at_fork(&player) {
                    break;
                }
            }
        }
        assert!(
            !player["run"]["outcome"].is_null(),
            "{name}: the scripted run did not end"
        );
        // A legacy linear zone (`room_kinds` only) has no fork.
        assert!(
            timed_out || zone["nodes"].is_null(),
            "{name}: no fork timed out"
        );
        call(&mut t, &player, "!zone status", now + 60_000);
        let after = call(&mut t, &player, "!zone advance", now + 60_000);
        assert_eq!(after, player, "{name}: advancing a finished run changed it");
    }

    // Refusals and command errors, each from the state it names: none of them changes the
    // player (a refused `!zone go` on a locked option does: it reveals the roll; see above).
    let all: &[&str] = &names;
    let mossback: &[&str] = &["zones/mossback_warren.json"];
    let long_key = format!(
        "!char key add {}",
        "k".repeat(zonegraph_core::rules::MAX_KEY_BYTES + 1)
    );
    // (zones offered, text, whether it is refused)
    let script: Vec<(&[&str], &str, bool)> = vec![
        (all, "!zone status", true),  // no run
        (all, "!zone advance", true), // no run
        (all, "!zone enter atlantis", true),
        (all, "!zone dance", true),    // no such command
        (all, "!char level 99", true), // out of range
        (all, "!zone enter crypt_valdris", false),
        (all, "!zone enter mossback_warren", true), // already in a run
        (all, "!zone go 1", true),                  // no fork pending
        (all, &long_key, true),
        (mossback, "!zone status", true), // the run's zone is not offered
        (all, "!zone advance", false),
        (all, "!zone advance", false), // to the fork
        (all, "!zone advance", true),  // a fork is pending
        (all, "!zone go 7", true),
        (all, "!zone go north", true),
        (all, "!zone go", true),
        (all, "!zone abandon", false),
        (all, "!zone advance", true), // the run is over
        (all, "!zone abandon", true),
        (all, "!zone map", false), // still shows the last run
    ];
    let state = |p: &Value| -> Option<zonegraph_core::bot::Player> {
        if p.is_null() {
            // No player yet: a new one, as the module starts it.
            Some(zonegraph_core::bot::Player {
                character: zonegraph_core::engine::Character::standard(1),
                run: None,
            })
        } else {
            serde_json::from_value(p.clone()).ok()
        }
    };
    let mut player = Value::Null;
    for (i, (offered, text, refused)) in script.into_iter().enumerate() {
        let now = t0 + 1_000 * i as i64;
        let after = t.call(offered, &player, text, now, "cmd-refusals", &Value::Null);
        if refused {
            assert_eq!(state(&after), state(&player), "{text} changed the player");
        }
        player = after;
    }
    assert_eq!(player["run"]["outcome"], "abandoned");

    // The Crypt, in a chat room that offers every zone.
    let short_fork = json!({"fork_timeout_ms": 60_000, "run_link": "https://x.invalid/run/t"});
    let mut player = Value::Null;
    for (i, text) in [
        "hello there",
        "!zone list",
        "!char wis 8",
        "!zone enter Crypt of Valdris",
        "!zone advance",
        "!zone advance",
        "!zone go 2",
        "!zone status",
        "!zone map",
        "!zone advance",
    ]
    .into_iter()
    .enumerate()
    {
        // The last command comes two minutes after the fork: past the one-minute timeout.
        let now = t0 + 1_000 * i as i64 + if i == 9 { 120_000 } else { 0 };
        player = t.call(&names, &player, text, now, "cmd-run", &short_fork);
    }
    // A zone played to its end in loose syntax, the first open option at every fork.
    let loose = json!({"syntax": "loose"});
    let zone = "zones/sunless_deep.json";
    let mut player = json!({"character": {"level": 20, "scores": {"wis": 20}}, "run": null});
    let mut text = "enter sunless_deep".to_string();
    for step in 0..60 {
        player = t.call(&[zone], &player, &text, t0 + step, "cmd-run", &loose);
        let run = &player["run"];
        if !run["outcome"].is_null() {
            break;
        }
        text = match run["pending_fork"]["options"].as_array() {
            Some(options) => options
                .iter()
                .position(|o| o["open"] == true)
                .map_or("status".to_string(), |i| (i + 1).to_string()),
            None => "advance".to_string(),
        };
    }
    assert_eq!(
        player["run"]["outcome"], "victory",
        "the loose transcript ends"
    );
    t.calls
}

fn s(v: &Value) -> &str {
    v.as_str().expect("a string")
}

/// `command`'s options from their JSON, as the wasm export reads the JS object.
fn options_of(v: &Value) -> api::CommandOptions {
    let mut o = api::CommandOptions::default();
    if v["syntax"] == "loose" {
        o.syntax = zonegraph_core::command::Syntax::Loose;
    }
    if let Some(ms) = v["fork_timeout_ms"].as_i64() {
        o.fork_timeout_ms = ms;
    }
    o.run_link = v["run_link"].as_str().map(str::to_string);
    o
}

// The test builds a deflate bomb and a raw stream for the fixture; the core keeps its helpers
// private, so do it here with the same crate the core uses.
fn deflate_zlib(data: &[u8]) -> Vec<u8> {
    miniz_oxide::deflate::compress_to_vec_zlib(data, 9)
}

fn deflate_raw(data: &[u8]) -> Vec<u8> {
    miniz_oxide::deflate::compress_to_vec(data, 9)
}

fn base64url(data: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::new();
    for c in data.chunks(3) {
        let n = c
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
        for i in 0..=c.len() {
            out.push(char::from(A[(n >> (18 - 6 * i) & 63) as usize]));
        }
    }
    out
}

#[test]
fn parity_fixture_is_current() {
    let path = root().join("crates/zonegraph-wasm/tests/parity.json");
    let mut generated = serde_json::to_string_pretty(&fixture()).expect("serialise fixture");
    generated.push('\n');
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    if committed != generated {
        if std::env::var_os("ZONEGRAPH_BLESS").is_some() {
            std::fs::write(&path, &generated).expect("write fixture");
        } else {
            panic!(
                "crates/zonegraph-wasm/tests/parity.json is out of date (zones/ or the core changed): \
                 run `ZONEGRAPH_BLESS=1 cargo test -p zonegraph-wasm --test native` and commit it"
            );
        }
    }
}

#[test]
fn every_zone_file_checks_and_round_trips_through_a_share_link() {
    let f = fixture();
    for z in f["zones"].as_array().expect("zones") {
        let name = z["name"].as_str().unwrap_or("?");
        if !name.starts_with("zones/") {
            continue;
        }
        assert!(z["check"].get("ok").is_some(), "{name}: {}", z["check"]);
        assert_eq!(z["check"]["ok"]["stats"], z["analyze"]["ok"], "{name}");
        let link = z["share"]["ok"].as_str().expect("link");
        let back = api::decode_share_link(link).expect("decodes");
        assert_eq!(back, z["input"].as_str().expect("input"), "{name}");
    }
}

#[test]
fn errors_carry_codes_and_locations() {
    let e = api::check_zone("{\"format\": 1,\n  \"zone_id\": }", "x.json").expect_err("malformed");
    assert_eq!(
        (e.code, e.line, e.column),
        ("parse_error", Some(2), Some(14)),
        "{e:?}"
    );
    assert!(
        e.message.starts_with("line 2, column 14: "),
        "{}",
        e.message
    );
    let e = api::decode_share_link(&format!("z1:{}", "A".repeat(64 * 1024 + 1))).expect_err("big");
    assert_eq!(e.code, "share_payload_too_large");
}
