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
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            name.ends_with(".json") && !name.ends_with(".schema.json")
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

    let runs = scripted_runs(&all_zone_texts);
    let commands = scripted_commands(&all_zone_texts);

    json!({
        "comment": "written by crates/zonegraph-wasm/tests/native.rs; ZONEGRAPH_BLESS=1 cargo test -p zonegraph-wasm --test native",
        "version": api::version_info(),
        "zones": zones,
        "check_all_zones": check_all,
        "check_mixed": check_mixed,
        "rolls": rolls,
        "runs": runs,
        "commands": commands,
        "links": bad_links,
        "max_payload": zonegraph_core::share::MAX_PAYLOAD,
    })
}

/// Plays every shipped zone to its end through the façade, recording each call with its
/// inputs and output, so the browser test can replay the calls one by one and compare.
/// At a fork it first tries option 1 (a locked option gives a refusal), waits once without
/// and once past the timeout on the first fork, and otherwise takes the first open option.
fn scripted_runs(zones: &[(String, String)]) -> Vec<Value> {
    let character = json!({"level": 3, "scores": {"wis": 14, "str": 12}, "keys": ["Skull_Key"]});
    let ch = character.to_string();
    let mut calls = Vec::new();
    for (name, text) in zones {
        let mut now: i64 = 1_700_000_000_000;
        let start = api::start_run(text, &format!("parity:{name}"), Some(&ch), now);
        calls.push(
            json!({"call": "startRun", "zone": name, "character": character,
            "run_id": format!("parity:{name}"), "now": now, "output": outcome(start.clone())}),
        );
        let Some(mut run) = start.ok().and_then(|s| s.run) else {
            continue;
        };
        let mut waited = false;
        for _ in 0..80 {
            if run.is_over() {
                break;
            }
            now += 60_000;
            let run_json = serde_json::to_value(&run).expect("run serialises");
            let rj = run_json.to_string();
            // The read-only calls on this state, in one record (one copy of the run).
            calls.push(json!({"call": "views", "zone": name, "run": run_json,
            "character": character, "output": {
                "status": outcome(api::status(text, &rj, Some(&ch))),
                "forkPrompt": outcome(api::fork_prompt(text, &rj)),
                "renderMap": outcome(api::render_map(text, Some(&rj), None)),
                "playerView": outcome(api::player_view(text, &rj, Some(&ch))),
            }}));
            let step = if let Some(fork) = run.pending_fork.clone() {
                if !waited {
                    waited = true;
                    for later in [1_000, 600_000] {
                        let out =
                            api::expire(text, &rj, Some(&ch), fork.created_at + later, 300_000);
                        calls.push(json!({"call": "expire", "zone": name, "run": run_json,
                            "character": character, "now": fork.created_at + later,
                            "timeout_ms": 300_000, "output": outcome(out)}));
                    }
                }
                let first = api::choose(text, &rj, Some(&ch), "1", now);
                calls.push(json!({"call": "choose", "zone": name, "run": run_json,
                    "character": character, "choice": "1", "now": now,
                    "output": outcome(first.clone())}));
                match first {
                    Ok(s) if s.refusal.is_none() => s,
                    _ => {
                        let n = fork
                            .options
                            .iter()
                            .position(|o| o.open)
                            .map_or(1, |i| i + 1);
                        let choice = n.to_string();
                        let s = api::choose(text, &rj, Some(&ch), &choice, now);
                        calls.push(json!({"call": "choose", "zone": name, "run": run_json,
                            "character": character, "choice": choice, "now": now,
                            "output": outcome(s.clone())}));
                        match s {
                            Ok(s) if s.refusal.is_none() => s,
                            _ => break,
                        }
                    }
                }
            } else {
                let s = api::advance(text, &rj, Some(&ch), now);
                calls.push(json!({"call": "advance", "zone": name, "run": run_json,
                    "character": character, "now": now, "output": outcome(s.clone())}));
                match s {
                    Ok(s) if s.refusal.is_none() => s,
                    _ => break,
                }
            };
            match step.run {
                Some(r) => run = r,
                None => break,
            }
        }
        assert!(run.is_over(), "{name}: the scripted run did not end");
    }
    calls
}

/// Chat transcripts through `command` (the bot's one pipeline), each call with its inputs and
/// output, so the browser test can replay them: the Crypt in chat syntax with every zone
/// offered (chatter that is no command, `!char`, a locked option, `!zone map` with a link, a
/// fork left past the timeout), and a zone played to its end in loose syntax.
fn scripted_commands(zones: &[(String, String)]) -> Vec<Value> {
    let names: Vec<&str> = zones.iter().map(|(n, _)| n.as_str()).collect();
    let texts: Vec<String> = zones.iter().map(|(_, t)| t.clone()).collect();
    let mut calls = Vec::new();
    let mut record =
        |zone_names: Vec<&str>, player: &Value, text: &str, now: i64, options: &Value| -> Value {
            let zone_texts: Vec<String> = zone_names
                .iter()
                .filter_map(|n| names.iter().position(|m| m == n).map(|i| texts[i].clone()))
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
                "cmd-run",
                &options_of(options),
            );
            let next = out
                .as_ref()
                .ok()
                .map(|o| serde_json::to_value(&o.player).expect("player serialises"))
                .unwrap_or_else(|| player.clone());
            calls.push(
                json!({"zones": zone_names, "player": player, "text": text, "now": now,
            "run_id": "cmd-run", "options": options, "output": outcome(out)}),
            );
            next
        };
    let t0: i64 = 1_700_000_000_000;
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
        player = record(names.clone(), &player, text, now, &short_fork);
    }
    // A zone played to its end in loose syntax, the first open option at every fork.
    let loose = json!({"syntax": "loose"});
    let zone = "zones/sunless_deep.json";
    let mut player = json!({"character": {"level": 20, "scores": {"wis": 20}}, "run": null});
    let mut text = "enter sunless_deep".to_string();
    for step in 0..60 {
        player = record(vec![zone], &player, &text, t0 + step, &loose);
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
    calls
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
