//! The `zonegraph` command line and the bot's command handler, driven in memory.

use std::path::PathBuf;

use clap::Parser;
use zonegraph_core::bot::{self, Context, Player};
use zonegraph_core::command;
use zonegraph_core::zone;
use zonegraph_server::cli::{Cli, Cmd, check, play};

use crate::support::root;

fn path(rel: &str) -> String {
    root().join(rel).to_string_lossy().into_owned()
}

/// Runs `zonegraph check ARGS…` and returns (report with paths made relative, failed).
fn check_cmd(args: &[&str]) -> (String, bool) {
    let argv = std::iter::once("zonegraph")
        .chain(std::iter::once("check"))
        .chain(args.iter().copied());
    let Cmd::Check(a) = Cli::try_parse_from(argv).expect("valid arguments").command else {
        unreachable!("parsed a check command")
    };
    let (out, failed) = check::report(&a).expect("check runs");
    (out.replace(&format!("{}/", root().display()), ""), failed)
}

/// Plays `input` through `zonegraph play ARGS…` and returns the transcript.
fn play_cmd(args: &[&str], input: &str) -> String {
    let zones = path("zones");
    let argv = ["zonegraph", "play", "--zones", zones.as_str()]
        .into_iter()
        .chain(args.iter().copied());
    let Cmd::Play(a) = Cli::try_parse_from(argv).expect("valid arguments").command else {
        unreachable!("parsed a play command")
    };
    let mut out = Vec::new();
    play::session(&a, input.as_bytes(), &mut out, false).expect("play runs");
    String::from_utf8(out).expect("utf-8 transcript")
}

#[test]
fn shipped_zones_pass_the_strict_check() {
    let (out, failed) = check_cmd(&["--strict", &path("zones")]);
    assert!(!failed, "{out}");
    assert_eq!(
        out,
        "checked 7 zone files: 0 errors, 0 warnings (strict: warnings fail)\n"
    );
}

/// The viewer's fixture zones pass `zonegraph check --strict`, as the shipped zones do.
#[test]
fn web_fixture_zones_pass_the_strict_check() {
    let (out, failed) = check_cmd(&["--strict", &path("web/fixtures/zones")]);
    assert!(!failed, "{out}");
    assert!(out.contains(" 0 errors, 0 warnings"), "{out}");
}

/// `zones/zone.schema.json` is what `zonegraph schema` prints.
#[test]
fn committed_json_schema_is_current() {
    let path = root().join("zones/zone.schema.json");
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    let generated = zonegraph_core::format::json_schema();
    if committed != generated {
        if std::env::var_os("ZONEGRAPH_BLESS").is_some() {
            std::fs::write(&path, &generated).expect("write schema");
        } else {
            panic!(
                "zones/zone.schema.json is out of date: run `cargo zonegraph schema > zones/zone.schema.json` \
                 (or ZONEGRAPH_BLESS=1 cargo xtask test)"
            );
        }
    }
}

/// A finding's related rooms are printed as context under it, as `zonegraph check` prints
/// them: a fork whose two exits are both Perception-locked strands a run that fails them.
#[test]
fn check_prints_related_rooms_as_context() {
    let node = |name: &str, kind: &str| {
        serde_json::json!({"node_id": format!("z.{name}"), "kind": kind, "label": "",
            "is_entry": kind == "entry", "is_boss": kind == "boss", "region_id": "", "content": {}})
    };
    let edge = |from: &str, to: &str, dc: Option<u32>| {
        let mut e = serde_json::json!({"from_node": format!("z.{from}"), "to_node": format!("z.{to}"),
            "lock_kind": "none", "lock_data": {}, "hint": "", "weight": 1});
        if let Some(dc) = dc {
            e["lock_kind"] = "perception_check".into();
            e["lock_data"] = serde_json::json!({ "dc": dc });
            e["hint"] = "A draft.".into();
        }
        e
    };
    let text = serde_json::json!({
        "format": 1, "zone_id": "z", "name": "Test", "tier": 1, "min_level": 1, "max_level": 4,
        "nodes": [node("entry", "entry"), node("x", "exploration"), node("fork", "fork"),
                  node("a", "exploration"), node("b", "exploration"), node("boss", "boss")],
        "edges": [edge("entry", "x", None), edge("x", "fork", None), edge("fork", "a", Some(12)),
                  edge("fork", "b", Some(14)), edge("a", "boss", None), edge("b", "boss", None)],
    })
    .to_string();
    let checked = zonegraph_core::check_sources(&[("test.json".to_string(), text)]);
    let mut out = String::new();
    zonegraph_server::zones::write_findings(&mut out, &checked[0]);
    insta::assert_snapshot!("check_prints_related_rooms", out);
}

#[test]
fn check_reports_like_a_compiler_and_fails() {
    let (out, failed) = check_cmd(&[
        &path("tests/fixtures/invalid/boss_unreachable.json"),
        &path("tests/fixtures/invalid/missing_hint.json"),
    ]);
    assert!(failed);
    insta::assert_snapshot!(out);
    // Warnings alone pass, unless --strict.
    let (_, failed) = check_cmd(&[&path("tests/fixtures/invalid/missing_hint.json")]);
    assert!(!failed);
    let (_, failed) = check_cmd(&[
        "--strict",
        &path("tests/fixtures/invalid/missing_hint.json"),
    ]);
    assert!(failed);
}

#[test]
fn check_json_and_stats() {
    let (out, failed) = check_cmd(&["--json", "--stats", &path("zones/crypt_valdris.json")]);
    assert!(!failed);
    let v: serde_json::Value = serde_json::from_str(&out).expect("valid JSON");
    assert_eq!(v["zones"][0]["zone_id"], "crypt_valdris");
    assert_eq!(v["zones"][0]["diagnostics"], serde_json::json!([]));
    assert_eq!(v["zones"][0]["stats"]["longest_path"], 7);
    assert_eq!(v["zones"][0]["stats"]["routes"], 3);
    // The difficulty at both ends of the level range (crate::difficulty's figures).
    let d = &v["zones"][0]["stats"]["difficulty"];
    assert_eq!(d["min_level"]["level"], 1);
    assert_eq!(d["max_level"]["level"], 4);
    for end in ["min_level", "max_level"] {
        let win = d[end]["win_chance"].as_f64().expect("a win chance");
        let wounds = d[end]["expected_wounds"].as_f64().expect("expected wounds");
        assert!(win > 0.0 && win < 1.0 && wounds > 0.0, "{d}");
    }
    assert!(d["max_level"]["win_chance"].as_f64() > d["min_level"]["win_chance"].as_f64());
    let (text, _) = check_cmd(&["--stats", &path("zones/crypt_valdris.json")]);
    insta::assert_snapshot!(text);
}

#[test]
fn check_reports_malformed_json_with_line_and_column() {
    let dir = std::env::temp_dir().join(format!("zonegraph-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let file = dir.join("broken.json");
    std::fs::write(&file, "{\n  \"format\": 1,\n  \"zone_id\": \"x\",,\n}").expect("write");
    let (out, failed) = check_cmd(&[&file.to_string_lossy()]);
    assert!(failed);
    let out = out.replace(&file.to_string_lossy().into_owned(), "broken.json");
    assert_eq!(
        out,
        "error[parse]: key must be a string\n  --> broken.json:3:18\nchecked 1 zone file: 1 error, 0 warnings\n"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// Runs the real `zonegraph explain ARGS…` process: (success, stdout, stderr).
fn explain_process(args: &[&str]) -> (bool, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_zonegraph-under-test"))
        .arg("explain")
        .args(args)
        .output()
        .expect("runs");
    (
        out.status.success(),
        String::from_utf8(out.stdout).expect("utf-8"),
        String::from_utf8(out.stderr).expect("utf-8"),
    )
}

#[test]
fn explain_prints_the_page_of_a_code() {
    let page = std::fs::read_to_string(root().join("docs/codes/soft_lock.md")).expect("page");
    for name in ["soft_lock", "soft-lock"] {
        let (ok, out, err) = explain_process(&[name]);
        assert!(ok, "{err}");
        assert_eq!(out, page, "zonegraph explain {name}");
    }
    let index = std::fs::read_to_string(root().join("docs/codes/README.md")).expect("index");
    assert_eq!(
        explain_process(&[]).1,
        index,
        "zonegraph explain without a code"
    );
}

#[test]
fn explain_refuses_an_unknown_code_and_lists_the_known_ones() {
    let (ok, out, err) = explain_process(&["soft_locks"]);
    assert!(!ok, "{out}");
    assert!(out.is_empty(), "{out}");
    let known: Vec<&str> = zonegraph_core::Code::ALL
        .iter()
        .map(|c| c.as_str())
        .collect();
    assert_eq!(
        err,
        format!(
            "error: unknown code \"soft_locks\"; known codes: {}\n",
            known.join(", ")
        )
    );
}

#[test]
fn play_the_crypt_by_the_secret_route() {
    // Run id crypt-7 with WIS 14 passes both Perception checks (DC 12 and DC 15).
    let transcript = play_cmd(
        &["crypt_valdris", "--run-id", "crypt-7", "--wis", "14"],
        "advance\nadvance\ngo 2\nadvance\n!zone go 2\nmap\nadvance\nadvance\nstatus\n",
    );
    insta::assert_snapshot!(transcript);
    assert!(transcript.contains("Hidden Reliquary"));
    assert!(transcript.contains("Victory!"));
}

#[test]
fn play_the_crypt_failing_the_perception_check() {
    let transcript = play_cmd(
        &["crypt_valdris", "--run-id", "crypt-6", "--wis", "14"],
        "advance\nadvance\ngo 2\ngo 7\ngo x\nmap\ngo 1\nadvance\nadvance\n",
    );
    insta::assert_snapshot!(transcript);
    assert!(transcript.contains("Perception 11 vs DC 12"));
    assert!(
        !transcript.contains("Hidden Reliquary"),
        "an undiscovered secret leaked"
    );
}

#[test]
fn play_refuses_an_unknown_zone_and_lists_the_known_ones() {
    let zones = path("zones");
    let argv = ["zonegraph", "play", "--zones", zones.as_str(), "atlantis"];
    let Cmd::Play(a) = Cli::try_parse_from(argv).expect("valid").command else {
        unreachable!()
    };
    let err = play::session(&a, "".as_bytes(), &mut Vec::new(), false).expect_err("unknown zone");
    let msg = format!("{err:#}").replace(zones.as_str(), "zones");
    assert_eq!(
        msg,
        "no zone \"atlantis\" in zones; known zones: cinder_spire, crypt_valdris, drowned_belfry, mossback_warren, orrery_vault, starfall_caldera, sunless_deep"
    );
}

/// Loads every shipped zone for the bot tests.
fn shipped_zones() -> Vec<zonegraph_core::Zone> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root().join("zones"))
        .expect("zones/")
        .map(|e| e.expect("entry").path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(zonegraph_core::format::is_zone_file_name)
        })
        .collect();
    files.sort();
    files
        .iter()
        .map(|p| {
            zone::load(&std::fs::read_to_string(p).expect("read"))
                .expect("parses")
                .0
        })
        .collect()
}

/// Sends chat lines for one player and returns every reply's text.
fn chat(
    zones: &[zonegraph_core::Zone],
    player: &mut Player,
    lines: &[&str],
    now: i64,
) -> Vec<String> {
    let cx = Context {
        now,
        new_run_id: "bot-1".into(),
        run_link: Some("https://zones.example/run/abc".into()),
        fork_timeout_ms: zonegraph_core::engine::DEFAULT_FORK_TIMEOUT_MS,
        syntax: command::Syntax::Chat,
        authority: zonegraph_core::bot::Authority::Sandbox,
    };
    let mut out = Vec::new();
    for line in lines {
        out.extend(
            bot::handle(zones, player, line, &cx)
                .replies
                .into_iter()
                .map(|r| r.text),
        );
    }
    out
}

#[test]
fn bot_enter_refusals() {
    let zones = shipped_zones();
    let mut p = Player::default();
    let replies = chat(
        &zones,
        &mut p,
        &[
            "!zone enter atlantis",
            "!zone enter sunless_deep",
            "!zone status",
        ],
        0,
    );
    insta::assert_snapshot!(replies.join("\n---\n"));
    let replies = chat(
        &zones,
        &mut p,
        &["!zone enter Crypt of Valdris", "!zone enter crypt_valdris"],
        0,
    );
    assert!(
        replies[0].starts_with("You enter Crypt of Valdris."),
        "{}",
        replies[0]
    );
    assert_eq!(
        replies[1],
        "You are already in Crypt of Valdris. Finish it, or leave with !zone abandon."
    );
}

#[test]
fn bot_map_reply_carries_the_run_link() {
    let zones = shipped_zones();
    let mut p = Player::default();
    let replies = chat(
        &zones,
        &mut p,
        &["!zone enter crypt_valdris", "!zone map"],
        0,
    );
    assert!(
        replies[1].ends_with("Run map: https://zones.example/run/abc"),
        "{}",
        replies[1]
    );
}

#[test]
fn bot_fork_timeout_picks_for_the_player_before_the_next_command() {
    let zones = shipped_zones();
    let mut p = Player::default();
    chat(
        &zones,
        &mut p,
        &[
            "!zone enter crypt_valdris",
            "!zone advance",
            "!zone advance",
        ],
        0,
    );
    assert!(
        p.run
            .as_ref()
            .and_then(|r| r.pending_fork.as_ref())
            .is_some()
    );
    let six_hours = zonegraph_core::engine::DEFAULT_FORK_TIMEOUT_MS;
    let early = chat(&zones, &mut p, &["!zone status"], six_hours - 1);
    assert_eq!(early.len(), 1, "no notice before the timeout: {early:?}");
    let late = chat(&zones, &mut p, &["!zone status"], six_hours);
    assert_eq!(late.len(), 2, "{late:?}");
    assert!(late[0].contains("picked"), "{}", late[0]);
    assert_eq!(
        p.run.as_ref().map(|r| r.current_node.as_str()),
        Some("crypt_valdris.main_hall")
    );
}

#[test]
fn bot_keys_granted_in_one_zone_open_locks_in_another() {
    let zones = shipped_zones();
    let mut p = Player::default();
    // Strong enough that the dice of run "bot-1" clear the elite (an elite check adds the
    // higher of the STR and DEX modifiers).
    chat(&zones, &mut p, &["!char level 9", "!char str 30"], 0);
    assert!(!p.character.has_key("tidewarden_sigil"));
    // The Drowned Belfry's elite grants the sigil; walk until the run ends.
    chat(&zones, &mut p, &["!zone enter drowned_belfry"], 0);
    for _ in 0..40 {
        if p.active_run().is_none() {
            break;
        }
        let cmd = if p.run.as_ref().is_some_and(|r| r.pending_fork.is_some()) {
            "!zone go 1"
        } else {
            "!zone advance"
        };
        chat(&zones, &mut p, &[cmd], 1);
    }
    let run = p.run.as_ref().expect("a run");
    if run
        .visited_nodes
        .iter()
        .any(|n| n.as_str() == "drowned_belfry.belfry")
    {
        assert!(
            p.character.has_key("tidewarden_sigil"),
            "the key was not kept"
        );
    } else {
        panic!(
            "the first-option route should pass the belfry: {:?}",
            run.visited_nodes
        );
    }
}

/// Secrets stay secret: a command line full of them prints none in its `Debug` form (what a
/// log or a panic would show), a PostgreSQL URL is shown without its password in either place
/// it may be given, and a libpq `key=value` string is refused instead of becoming a SQLite
/// file named after the password.
#[test]
fn secrets_on_the_command_line_are_never_printed() {
    let url = "postgres://zg:pw-in-userinfo@db.example/zg?sslmode=require&password=pw-in-query";
    let argv = [
        "zonegraph",
        "serve",
        "--db",
        url,
        "--api-token",
        "the-api-token",
        "--host-hook",
        "http://127.0.0.1:9/game",
        "--matrix-password",
        "the-matrix-password",
    ];
    let cli = Cli::try_parse_from(argv).expect("valid arguments");
    let shown = format!("{cli:?}");
    for secret in [
        "pw-in-userinfo",
        "pw-in-query",
        "the-api-token",
        "the-matrix-password",
    ] {
        assert!(!shown.contains(secret), "{secret} in {shown}");
    }
    assert!(
        shown.contains("postgres://zg@db.example:5432/zg"),
        "{shown}"
    );
    let Cmd::Serve(serve) = cli.command else {
        unreachable!("parsed a serve command")
    };
    assert_eq!(serve.db.at.to_string(), "postgres://zg@db.example:5432/zg");
    // Only where the URL points is shown, whatever the password holds (a `?` too).
    let Cmd::Serve(question) = Cli::try_parse_from([
        "zonegraph",
        "serve",
        "--db",
        "postgres://zg:pw?in-userinfo@db.example:5433/zg?sslmode=require",
    ])
    .expect("parses")
    .command
    else {
        unreachable!("parsed a serve command")
    };
    assert_eq!(
        question.db.at.to_string(),
        "postgres://zg@db.example:5433/zg"
    );
    let migrate =
        Cli::try_parse_from(["zonegraph", "migrate", "--from", "sqlite:z.db", "--to", url])
            .expect("valid arguments");
    let shown = format!("{migrate:?}");
    assert!(
        !shown.contains("pw-in-userinfo") && !shown.contains("pw-in-query"),
        "{shown}"
    );
    let Cmd::Serve(conninfo) = Cli::try_parse_from([
        "zonegraph",
        "serve",
        "--db",
        "host=db.example user=zg password=pw-in-conninfo",
    ])
    .expect("parses")
    .command
    else {
        unreachable!("parsed a serve command")
    };
    let err = format!(
        "{:#}",
        zonegraph_server::db::Database::open(&conninfo.db.at)
            .expect_err("a libpq string is refused")
    );
    assert!(err.contains("libpq connection string"), "{err}");
    assert!(!err.contains("pw-in-conninfo"), "{err}");
}

/// The one default character: `zonegraph play`, a new player on the server and the
/// difficulty model all start from the standard scores (at the zone's lowest level where a
/// zone is named), so a playtest's odds are the ones players get and `too_hard` speaks of.
#[test]
fn one_default_character_plays_the_cli_the_server_and_the_model() {
    let standard = zonegraph_core::rules::STARTING_SCORES;
    let sheet = "STR 15 (+2) · DEX 14 (+2) · CON 13 (+1) · INT 12 (+1) · WIS 10 (+0) · CHA 8 (-1)";
    // `zonegraph play` with no score flags: the standard scores, at the zone's min_level.
    let t = play_cmd(&["sunless_deep"], "!char\n");
    let min = shipped_zones()
        .into_iter()
        .find(|z| z.id == "sunless_deep")
        .map(|z| z.min_level)
        .expect("sunless_deep");
    assert!(
        min > 1,
        "a zone whose lowest level is not 1 shows the level rule"
    );
    assert!(t.contains(sheet), "{t}");
    assert!(t.contains(&format!("Level {min}")), "{t}");
    // A flag changes only its own score.
    let t = play_cmd(&["--wis", "16", "crypt_valdris"], "!char\n");
    assert!(
        t.contains("WIS 16 (+3)") && t.contains("STR 15 (+2)"),
        "{t}"
    );
    // A new player on the server.
    let dir = tempfile::tempdir().expect("temp dir");
    let (_server, mut c) = crate::support::Ctx::new(dir.path()).spawn();
    let t = crate::support::say1(&mut c, "@new:test", "!char");
    assert!(t.contains(sheet), "{t}");
    // The difficulty model's character.
    let z = &shipped_zones()[0];
    assert_eq!(
        zonegraph_core::engine::Character::standard_for(z).scores,
        standard
    );
    assert_eq!(
        zonegraph_core::engine::Character::standard_for(z).level,
        z.min_level
    );
}

/// The README's walk-through is a real run: replayed with the same run id, `zonegraph play`
/// says exactly what the README shows.
#[test]
fn the_readme_walk_through_is_what_the_bot_says() {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README");
    let marker = "<!-- transcript: zonegraph play crypt_valdris --run-id readme-1 -->\n```text\n";
    let start = readme.find(marker).expect("the README's transcript") + marker.len();
    let shown = &readme[start..start + readme[start..].find("\n```").expect("its end")];
    let commands: String = shown
        .lines()
        .filter_map(|l| l.strip_prefix("> "))
        .map(|c| format!("{c}\n"))
        .collect();
    assert!(
        commands.starts_with("!zone list\n!zone help\n"),
        "{commands}"
    );
    assert!(commands.contains("!zone fight"), "{commands}");
    let played = play_cmd(&["--run-id", "readme-1", "crypt_valdris"], &commands);
    let played = played
        .split_once('\n')
        .map_or("", |(_, rest)| rest)
        .trim_end();
    assert_eq!(
        shown, played,
        "README.md's walk-through differs from the bot's words"
    );
}

/// The front docs stay short and hold the present, not the history (git keeps that): the
/// README at most 250 lines, BENCHMARKS.md at most 400, and neither names an issue (`#12`,
/// "issue 12") or a commit (a hex word of 7 to 40 characters with a digit and a letter).
#[test]
fn the_front_docs_are_short_and_without_history() {
    for (file, most) in [("README.md", 250), ("BENCHMARKS.md", 400)] {
        let text = std::fs::read_to_string(root().join(file)).expect(file);
        let lines = text.lines().count();
        assert!(lines <= most, "{file} has {lines} lines, over {most}");
        assert_eq!(history_in(&text), Vec::<String>::new(), "{file}");
    }
    // The check itself finds what it looks for.
    assert_eq!(
        history_in("see #39, issue 12 and f22a454; not #the-anchor, 339,250 B or 0xff"),
        ["#39", "issue 12", "f22a454"]
    );
}

/// Issue numbers and commit hashes in `text`.
fn history_in(text: &str) -> Vec<String> {
    let words: Vec<&str> = text
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '#'))
        .filter(|w| !w.is_empty())
        .collect();
    let mut found = Vec::new();
    for (i, w) in words.iter().enumerate() {
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        if w.strip_prefix('#').is_some_and(digits) {
            found.push((*w).to_string());
        } else if w.eq_ignore_ascii_case("issue") && words.get(i + 1).is_some_and(|n| digits(n)) {
            found.push(format!("{w} {}", words[i + 1]));
        } else if (7..=40).contains(&w.len())
            && w.bytes()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
            && w.bytes().any(|b| b.is_ascii_digit())
            && w.bytes().any(|b| b.is_ascii_alphabetic())
        {
            found.push((*w).to_string());
        }
    }
    found
}

/// Runs the real `zonegraph diff OLD NEW [ARGS…]` process: (exit code, stdout, stderr).
fn diff_process(old: &str, new: &str, args: &[&str]) -> (i32, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_zonegraph-under-test"))
        .arg("diff")
        .args([old, new])
        .args(args)
        .output()
        .expect("runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).expect("utf-8"),
        String::from_utf8(out.stderr).expect("utf-8"),
    )
}

/// `zonegraph diff`: a room renamed (matched by position and label, its passages following),
/// a passage locked, a passage removed at the fork: each told, the figures before and after
/// (one route fewer), the new finding; exit code 1 for a change, 0 for none, 2 for a broken file.
#[test]
fn diff_tells_the_changes_and_what_they_do_to_the_figures() {
    let dir = tempfile::tempdir().expect("temp dir");
    let old = path("zones/crypt_valdris.json");
    let mut z: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&old).expect("read")).expect("json");
    let (from, to) = ("crypt_valdris.side_chapel", "crypt_valdris.chapel_of_bones");
    for n in z["nodes"].as_array_mut().expect("nodes") {
        if n["node_id"] == from {
            n["node_id"] = to.into();
        }
    }
    let edges = z["edges"].as_array_mut().expect("edges");
    for e in edges.iter_mut() {
        for end in ["from_node", "to_node"] {
            if e[end] == from {
                e[end] = to.into();
            }
        }
    }
    // The fork's passage to the main hall goes: one route fewer.
    let before = edges.len();
    edges.retain(|e| {
        !(e["from_node"] == "crypt_valdris.fork" && e["to_node"] == "crypt_valdris.main_hall")
    });
    assert_eq!(edges.len(), before - 1, "the crypt has that passage");
    let new = dir.path().join("crypt_v2.json");
    std::fs::write(&new, serde_json::to_string_pretty(&z).expect("json")).expect("write");
    let new = new.to_string_lossy().into_owned();

    let (code, out, err) = diff_process(&old, &new, &[]);
    assert_eq!(code, 1, "{err}");
    insta::assert_snapshot!(
        "diff_crypt_room_renamed_and_passage_removed",
        out.replace(&new, "NEW").replace(&old, "OLD")
    );
    assert!(
        out.contains(&format!("room renamed: {from} -> {to}")),
        "{out}"
    );
    assert!(
        out.contains("passage removed: crypt_valdris.fork -> crypt_valdris.main_hall"),
        "{out}"
    );
    assert!(
        !out.contains("room added"),
        "a rename is no room added: {out}"
    );
    assert!(out.contains("  routes                 3 -> 2  *"), "{out}");

    let (code, json, _) = diff_process(&old, &new, &["--json"]);
    assert_eq!(code, 1);
    let v: serde_json::Value = serde_json::from_str(&json).expect("JSON");
    assert_eq!(v["renamed"][0]["to"], to);
    assert_eq!(v["before"]["routes"], 3);
    assert_eq!(v["after"]["routes"], 2);
    assert_eq!(
        v["changes"]["passages_removed"].as_array().map(Vec::len),
        Some(1)
    );

    let (code, out, _) = diff_process(&old, &old, &[]);
    assert_eq!((code, out.lines().next()), (0, Some("no change")));

    let broken = dir.path().join("broken.json");
    std::fs::write(&broken, "{\n  \"zone_id\": \"x\",\n  oops\n}").expect("write");
    let (code, _, err) = diff_process(&old, &broken.to_string_lossy(), &[]);
    assert_eq!(code, 2);
    assert!(err.contains("broken.json: line 3, column 3"), "{err}");
}
