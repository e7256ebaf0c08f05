//! The bot's server through its HTTP API on 127.0.0.1:0 with a temporary database: the Crypt
//! end to end, persistence, the 50-way race, SIGKILL, redaction, legacy migration, the
//! sweeper and hostile input.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Barrier, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;
use zonegraph_core::roll;
use zonegraph_core::rules::{self, EncounterKind};
use zonegraph_server::client::Conn;
use zonegraph_server::db;
use zonegraph_server::migrate;
use zonegraph_server::serve::{self, Auth, Server, ServerConfig};
use zonegraph_server::store::{CharacterRules, CommandSettings, DbAt, RunIds, Store};

use crate::support::{self, ADMIN, Ctx, Process, TOKEN, connect, root, say, say1, take_notices};

const FORK: &str = "crypt_valdris.fork";
const CHAPEL: &str = "crypt_valdris.side_chapel";
const SECRET: &str = "crypt_valdris.secret_chamber";
const NO_CHOICE: &str = "There is no choice to make right now.";
/// `!zone go` refused while the room's encounter bars the way.
const ENCOUNTER_FIRST: &str = "bars the way on: face it with !zone fight";

/// A user whose first run's rolls satisfy `pred` (run ids are `"{user}/1"`).
fn user_where(prefix: &str, pred: impl Fn(&str) -> bool) -> String {
    (0..10_000)
        .map(|i| format!("@{prefix}{i}:test"))
        .find(|u| pred(&format!("{u}/1")))
        .expect("some user id rolls that way")
}

/// Whether a new player (the starting scores: STR 15, so +2 to an elite check and to a
/// level-1 boss check) wins the check of `room` (`kind`) of the tier-1 Crypt at the first try.
fn wins_first(run: &str, room: &str, kind: EncounterKind) -> bool {
    wins_at(run, room, kind, 1)
}

fn chapel_roll(run: &str) -> u32 {
    roll::d20(run, FORK, CHAPEL)
}

fn secret_roll(run: &str) -> u32 {
    roll::d20(run, CHAPEL, SECRET)
}

/// The visited rooms of a `GET /api/runs/{token}` answer, in visit order.
fn visited_ids(view: &Value) -> Vec<String> {
    let mut rooms: Vec<(u64, String)> = view["view"]["rooms"]
        .as_array()
        .expect("rooms")
        .iter()
        .filter_map(|r| Some((r["visit"].as_u64()?, r["id"].as_str()?.to_string())))
        .collect();
    rooms.sort();
    rooms.into_iter().map(|(_, id)| id).collect()
}

/// The run-map link token in a `!zone map` reply.
fn token_of(map_reply: &str) -> String {
    let at = map_reply.find("/run/").expect("a run-map link") + 5;
    map_reply[at..at + 32].to_string()
}

#[test]
fn crypt_end_to_end_with_a_perception_pass_and_a_fail() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (server, mut c) = Ctx::new(dir.path()).spawn();

    // WIS 10 (+0): DC 12 into the chapel, DC 15 into the reliquary.
    let finder = user_where("finder", |r| {
        chapel_roll(r) >= 12
            && secret_roll(r) >= 15
            && wins_first(r, "crypt_valdris.boss", EncounterKind::Boss)
    });
    let t = say1(&mut c, &finder, "!zone enter crypt_valdris");
    assert!(t.contains("You enter Crypt of Valdris."), "{t}");
    assert!(t.contains("Room 1 of 6: Crypt Threshold"), "{t}");
    assert!(say1(&mut c, &finder, "!zone advance").contains("Room 2 of 6: Bone Corridor"));
    let t = say1(&mut c, &finder, "!zone advance");
    assert!(t.contains("1. Main Hall (elite)"), "{t}");
    assert!(t.contains("2. Side Chapel (exploration)"), "{t}");
    let t = say1(&mut c, &finder, "!zone status");
    assert!(t.contains("A fork waits for your choice"), "{t}");
    assert!(say1(&mut c, &finder, "!zone go 2").contains("Side Chapel"));
    let t = say1(&mut c, &finder, "!zone advance");
    assert!(
        t.contains("Hidden Reliquary"),
        "the passed check names the secret: {t}"
    );
    assert!(say1(&mut c, &finder, "!zone choose 2").contains("Hidden Reliquary"));
    let t = say1(&mut c, &finder, "!zone advance");
    assert!(t.contains("Valdris's Sanctum"), "{t}");
    let map = say1(&mut c, &finder, "!zone map");
    assert!(map.contains("Hidden Reliquary"), "{map}");
    assert!(
        map.contains(&format!("Run map: {}/run/", server.url())),
        "{map}"
    );
    let t = say1(&mut c, &finder, "!zone advance");
    assert!(t.contains("Victory!"), "{t}");
    let t = say1(&mut c, &finder, "!zone status");
    assert!(t.contains("This run is over: victory."), "{t}");

    let blind = user_where("blind", |r| {
        chapel_roll(r) < 12
            && wins_first(r, "crypt_valdris.main_hall", EncounterKind::Elite)
            && wins_first(r, "crypt_valdris.boss", EncounterKind::Boss)
    });
    say(&mut c, &blind, "!zone enter Crypt of Valdris");
    say(&mut c, &blind, "!zone advance");
    let t = say1(&mut c, &blind, "!zone advance");
    assert!(t.contains("A faint draft from a crack in the wall."), "{t}");
    assert!(
        !t.contains("Side Chapel"),
        "an unnoticed passage is not named: {t}"
    );
    let t = say1(&mut c, &blind, "!zone go 2");
    assert!(
        t.contains(&format!(
            "Option 2 is locked: Perception {} vs DC 12.",
            chapel_roll(&format!("{blind}/1"))
        )),
        "{t}"
    );
    assert!(say1(&mut c, &blind, "!zone go 1").contains("Main Hall"));
    let t = say1(&mut c, &blind, "!zone fight");
    assert!(
        t.contains("Elite check: ") && t.contains("— you win."),
        "{t}"
    );
    assert!(t.contains("Valdris's Sanctum"), "{t}");
    let map = say1(&mut c, &blind, "!zone map");
    assert!(map.contains("◉♛ Valdris's Sanctum"), "{map}");
    assert!(say1(&mut c, &blind, "!zone advance").contains("Victory!"));

    // Refusals come back as replies too.
    let t = say1(&mut c, &blind, "!zone go 1");
    assert!(t.contains("over") || t.contains("no"), "{t}");
    let t = say1(&mut c, "@newbie:test", "!zone enter cinder_spire");
    assert!(t.contains("level 13"), "{t}");
    let t = say1(&mut c, "@newbie:test", "!zone enter atlantis");
    assert!(
        t.contains("crypt_valdris"),
        "unknown zones list the known ones: {t}"
    );
    let t = say1(&mut c, "@newbie:test", "!zone dance");
    assert!(t.contains("!zone help"), "{t}");
    // A player's sheet is the admins' to set.
    let t = say1(&mut c, "@newbie:test", "!char wis 18");
    assert!(t.contains("admins"), "{t}");
    let t = say1(&mut c, ADMIN, "!char set @newbie:test wis 18");
    assert!(t.contains("WIS 18"), "{t}");
    let t = say1(&mut c, "@newbie:test", "!zone list");
    assert!(t.contains("Crypt of Valdris"), "{t}");
}

#[test]
fn only_admins_set_character_sheets() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (_server, mut c) = Ctx::new(dir.path()).spawn();
    let p = "@p:test";
    for text in ["!char level 20", "!char wis 14", "!char key add skull_key"] {
        let t = say1(&mut c, p, text);
        assert!(
            t.contains("set by this server's admins") && t.contains("!char set <you> level <n>"),
            "{text}: {t}"
        );
    }
    assert!(say1(&mut c, p, "!char").starts_with("Level 1 "));
    let t = say1(&mut c, "@other:test", &format!("!char set {p} level 20"));
    assert!(t.contains("Only this server's admins"), "{t}");
    let t = say1(&mut c, ADMIN, &format!("!char set {p} level 20"));
    assert!(t.starts_with("@p:test's sheet: level 20."), "{t}");
    let t = say1(&mut c, ADMIN, &format!("!char set {p} wis 14"));
    assert!(t.contains("WIS 14 (+2)"), "{t}");
    say(&mut c, ADMIN, &format!("!char grant {p} Skull_Key"));
    let t = say1(&mut c, p, "!char");
    assert!(t.starts_with("Level 20 "), "{t}");
    assert!(
        t.contains("WIS 14") && t.contains("Keys: skull_key."),
        "{t}"
    );
    let t = say1(&mut c, ADMIN, &format!("!char revoke {p} skull_key"));
    assert!(
        t.contains("revoked skull_key") && t.contains("Keys: none."),
        "{t}"
    );
    // The key limits hold for admins too.
    let long = "k".repeat(65);
    let t = say1(&mut c, ADMIN, &format!("!char grant {p} {long}"));
    assert!(t.contains("too long"), "{t}");
    // An admin edits their own sheet as well.
    let t = say1(&mut c, ADMIN, "!char level 4");
    assert!(t.starts_with("Level 4 "), "{t}");
}

#[test]
fn a_sandbox_server_lets_players_edit_their_own_sheet() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (_server, mut c) = Ctx::new(dir.path())
        .with(|c| c.characters = CharacterRules::Sandbox)
        .spawn();
    let t = say1(&mut c, "@designer:test", "!char level 5");
    assert!(t.starts_with("Level 5 "), "{t}");
    say(&mut c, "@designer:test", "!char key add skull_key");
    let t = say1(&mut c, "@designer:test", "!char");
    assert!(t.contains("Keys: skull_key."), "{t}");
    // Setting someone else's sheet stays with the admins.
    let t = say1(&mut c, "@designer:test", "!char set @p:test level 5");
    assert!(t.contains("Only this server's admins"), "{t}");
}

#[test]
fn the_char_command_sets_and_shows_a_sheet_on_a_database() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("z.db");
    Ctx::sqlite(&db).start().stop().expect("stops");
    let char_cli = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_zonegraph-under-test"))
            .arg("char")
            .arg("--db")
            .arg(&db)
            .args(args)
            .output()
            .expect("runs");
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (ok, out, log) = char_cli(&["set", "@p:test", "level", "7"]);
    assert!(ok, "{out}{log}");
    assert!(out.contains("level 7"), "{out}");
    assert!(
        log.contains("character @p:test: level 7 (by zonegraph char"),
        "{log}"
    );
    let (ok, _, log) = char_cli(&["grant", "@p:test", "Skull_Key"]);
    assert!(ok, "{log}");
    let (ok, out, _) = char_cli(&["show", "@p:test"]);
    assert!(ok);
    assert!(
        out.starts_with("Level 7 ") && out.contains("Keys: skull_key."),
        "{out}"
    );
    let (ok, _, log) = char_cli(&["set", "@p:test", "level", "21"]);
    assert!(!ok && log.contains("level 21 is outside 1-20"), "{log}");
    // The server sees what the command set.
    let (_server, mut c) = Ctx::sqlite(&db).spawn();
    assert!(say1(&mut c, "@p:test", "!char").starts_with("Level 7 "));
}

#[test]
fn runs_and_characters_survive_a_restart() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("z.db");
    let user = "@restart:test";
    {
        let (server, mut c) = Ctx::sqlite(&db).spawn();
        say(&mut c, ADMIN, &format!("!char set {user} level 3"));
        say(&mut c, ADMIN, &format!("!char grant {user} Skull_Key"));
        say(&mut c, user, "!zone enter crypt_valdris");
        say(&mut c, user, "!zone advance");
        say(&mut c, user, "!zone advance");
        server.stop().expect("stops");
    }
    let (_server, mut c) = Ctx::sqlite(&db).spawn();
    let t = say1(&mut c, user, "!zone status");
    assert!(t.contains("You are in Branching Passage"), "{t}");
    assert!(t.contains("Keys: skull_key."), "{t}");
    let t = say1(&mut c, user, "!char");
    assert!(t.contains("3"), "{t}");
    assert!(say1(&mut c, user, "!zone go 1").contains("Main Hall"));
    let t = say1(&mut c, user, "!zone enter crypt_valdris");
    assert!(t.contains("already"), "one active run per player: {t}");
}

#[test]
fn fifty_concurrent_go_1_apply_exactly_once() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = Ctx::new(dir.path()).start();
    let user = "@racer:test";
    let mut c = connect(&server);
    say(&mut c, user, "!zone enter crypt_valdris");
    say(&mut c, user, "!zone advance");
    say(&mut c, user, "!zone advance");
    let token = token_of(&say1(&mut c, user, "!zone map"));

    let n = 50;
    let barrier = Arc::new(Barrier::new(n));
    let addr = server.addr;
    let handles: Vec<_> = (0..n)
        .map(|_| {
            let barrier = barrier.clone();
            std::thread::spawn(move || {
                let mut c = Conn::connect(addr)
                    .expect("connect")
                    .with_token(Some(TOKEN));
                barrier.wait();
                say1(&mut c, user, "!zone go 1")
            })
        })
        .collect();
    let replies: Vec<String> = handles
        .into_iter()
        .map(|h| h.join().expect("thread"))
        .collect();
    let moved = replies.iter().filter(|r| r.contains("Main Hall")).count();
    let refused = replies
        .iter()
        .filter(|r| r.contains(NO_CHOICE) || r.contains(ENCOUNTER_FIRST))
        .count();
    assert_eq!((moved, refused), (1, n - 1), "{replies:#?}");

    let view = c
        .get(&format!("/api/runs/{token}"))
        .expect("run view")
        .json();
    let visited = visited_ids(&view);
    assert_eq!(
        visited,
        [
            "crypt_valdris.entry",
            "crypt_valdris.corridor",
            "crypt_valdris.fork",
            "crypt_valdris.main_hall"
        ]
    );
}

#[test]
fn run_links_show_no_undiscovered_secret() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (_server, mut c) = Ctx::new(dir.path()).spawn();

    // Into the chapel, but the secret stays hidden.
    let user = user_where("seeker", |r| chapel_roll(r) >= 12 && secret_roll(r) < 15);
    let mut said = Vec::new();
    for cmd in [
        "!zone enter crypt_valdris",
        "!zone advance",
        "!zone advance",
        "!zone status",
        "!zone go 2",
        "!zone status",
        "!zone advance",
        "!zone status",
        "!zone map",
    ] {
        let r = c.command(&user, cmd, None).expect("request");
        said.push(r.text());
    }
    let token = token_of(&said.last().cloned().unwrap_or_default());
    let view = c.get(&format!("/api/runs/{token}")).expect("run view");
    assert_eq!(view.status, 200);
    said.push(view.text());
    for text in &said {
        // The secret's hint is the teaser the chat shows on purpose; its room is not.
        for secret in ["secret_chamber", "Hidden Reliquary", "\"dc\"", "run_id"] {
            assert!(!text.contains(secret), "{secret} leaked: {text}");
        }
    }
    let v = view.json();
    let rooms = v["view"]["rooms"].as_array().expect("rooms");
    assert_eq!(rooms.len(), 7, "every room but the secret");
    assert_eq!(v["view"]["passages"].as_array().expect("passages").len(), 7);
    assert_eq!(v["view"]["status"]["node"], CHAPEL);
    assert!(
        v["status"]["text"]
            .as_str()
            .is_some_and(|t| t.starts_with("Crypt of Valdris — room 4 of 6")),
        "{v}"
    );
    // The pending option into the secret has no destination in the player's view.
    let exits = v["view"]["status"]["exits"].as_array().expect("exits");
    assert_eq!(exits[1]["to_node"], Value::Null);
    assert_eq!(exits[1]["label"], Value::Null);

    // A player who found it sees it.
    let finder = user_where("found", |r| chapel_roll(r) >= 12 && secret_roll(r) >= 15);
    for cmd in [
        "!zone enter crypt_valdris",
        "!zone advance",
        "!zone advance",
        "!zone go 2",
    ] {
        say(&mut c, &finder, cmd);
    }
    say(&mut c, &finder, "!zone advance");
    let token = token_of(&say1(&mut c, &finder, "!zone map"));
    let v = c.get(&format!("/api/runs/{token}")).expect("view").json();
    assert_eq!(v["view"]["rooms"].as_array().expect("rooms").len(), 8);

    // Unknown and malformed tokens: the same plain 404.
    for bad in [
        "0123456789abcdef0123456789abcdef",
        "nope",
        "..%2f..%2fetc",
        &"a".repeat(5000),
    ] {
        let r = c.get(&format!("/api/runs/{bad}")).expect("request");
        assert_eq!(r.status, 404, "{bad}");
        assert_eq!(r.json()["error"], "no such run");
    }
}

#[test]
fn the_sweeper_picks_for_an_idle_player_and_queues_a_notice() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (_server, mut c) = Ctx::new(dir.path())
        .fork_timeout(Duration::from_millis(300))
        .spawn();
    let user = "@idle:test";
    say(&mut c, user, "!zone enter crypt_valdris");
    say(&mut c, user, "!zone advance");
    say(&mut c, user, "!zone advance");
    let deadline = Instant::now() + Duration::from_secs(10);
    let notices = loop {
        let list = take_notices(&mut c, user);
        if !list.is_empty() || Instant::now() > deadline {
            break list;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(notices.len(), 1, "{notices:?}");
    let text = notices[0]["text"].as_str().unwrap_or_default();
    assert!(
        text.contains("option 1 was picked for you: Main Hall"),
        "{text}"
    );
    // Not acknowledged yet: handed out again, and before the next command's replies.
    assert_eq!(take_notices(&mut c, user), notices);
    let r = c
        .command(user, "!zone status", None)
        .expect("status")
        .json();
    assert_eq!(
        r["notices"].as_array().cloned().unwrap_or_default(),
        notices
    );
    assert!(
        r["replies"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .contains("You are in Main Hall"),
        "{r}"
    );
    // Acknowledged: delivered once.
    let ack = c
        .post_json(
            "/api/notices/ack",
            &serde_json::json!({ "user": user, "ids": [notices[0]["id"]] }),
        )
        .expect("ack");
    assert_eq!(ack.status, 200, "{}", ack.text());
    assert_eq!(ack.json()["acknowledged"], 1);
    assert_eq!(take_notices(&mut c, user), Vec::<Value>::new());
    let r = c
        .command(user, "!zone status", None)
        .expect("status")
        .json();
    assert_eq!(r["notices"], serde_json::json!([]));
}

#[test]
fn queued_notices_come_before_the_next_reply() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (_server, mut c) = Ctx::new(dir.path())
        .fork_timeout(Duration::from_millis(200))
        .spawn();
    let user = "@later:test";
    say(&mut c, user, "!zone enter crypt_valdris");
    say(&mut c, user, "!zone advance");
    say(&mut c, user, "!zone advance");
    // Either the sweeper queued the notice or the command applies the timeout itself:
    // the player hears about it first, exactly once.
    std::thread::sleep(Duration::from_millis(1200));
    let answer = c
        .command(user, "!zone status", None)
        .expect("status")
        .json();
    let texts = |a: &Value, key: &str| -> Vec<String> {
        a[key]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .iter()
            .map(|r| r["text"].as_str().unwrap_or_default().to_string())
            .collect()
    };
    // Queued notices (with ids, to acknowledge) come before the replies.
    let shown: Vec<String> = [texts(&answer, "notices"), texts(&answer, "replies")].concat();
    assert_eq!(shown.len(), 2, "{answer}");
    assert!(shown[0].contains("picked for you"), "{answer}");
    assert!(shown[1].contains("You are in Main Hall"), "{answer}");
    let ids: Vec<Value> = answer["notices"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|n| n["id"].clone())
        .collect();
    c.post_json(
        "/api/notices/ack",
        &serde_json::json!({ "user": user, "ids": ids }),
    )
    .expect("ack");
    let again = c
        .command(user, "!zone status", None)
        .expect("status")
        .json();
    assert_eq!(
        texts(&again, "notices").len() + texts(&again, "replies").len(),
        1,
        "{again}"
    );
}

#[test]
fn zones_are_served_from_the_tables_as_the_files_say() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (_server, mut c) = Ctx::new(dir.path()).spawn();
    let list = c.get("/api/zones").expect("zones").json();
    let ids: Vec<&str> = list["zones"]
        .as_array()
        .expect("zones")
        .iter()
        .filter_map(|z| z["zone_id"].as_str())
        .collect();
    assert_eq!(ids.len(), 7, "{ids:?}");
    for id in ids {
        let text = support::zone_text(id);
        let (zone, _) = zonegraph_core::zone::load(&text).expect("zone parses");
        let served = c.get(&format!("/api/zones/{id}")).expect("zone").json();
        assert_eq!(
            served,
            serde_json::to_value(zone.to_file()).expect("json"),
            "{id}"
        );
    }
    let r = c.get("/api/zones/atlantis").expect("zone");
    assert_eq!(r.status, 404);
    let h = c.get("/healthz").expect("health");
    assert_eq!(h.json()["status"], "ok");
    // No viewer built: the app's routes explain how to build it.
    let page = c
        .get("/run/0123456789abcdef0123456789abcdef")
        .expect("page");
    assert_eq!(page.status, 200);
    assert!(page.text().contains("trunk build"), "{}", page.text());
}

/// A built viewer as `trunk build` lays it out: the designer's index.html and hashed assets
/// with their .br/.gz twins, and the run page's own build under run-page/.
fn fake_dist(dir: &Path) -> PathBuf {
    let web = dir.join("dist");
    std::fs::create_dir_all(web.join("run-page")).expect("dist");
    let write = |rel: &str, body: &[u8]| std::fs::write(web.join(rel), body).expect(rel);
    write("index.html", b"<!doctype html><title>viewer</title>");
    write("index.html.br", b"br index");
    write(
        "run-page/index.html",
        b"<!doctype html><title>run page</title>",
    );
    write("run-page/index.html.gz", b"gz run page");
    write("zonegraph-web-0123456789abcdef.js", b"console.log(1)");
    write("zonegraph-web-0123456789abcdef.js.br", b"br js");
    write("zonegraph-web-0123456789abcdef.js.gz", b"gz js");
    write("zonegraph-web-0123456789abcdef_bg.wasm", b"\0asm");
    write("zonegraph-web-0123456789abcdef_bg.wasm.gz", b"gz wasm");
    write("notes.txt", b"plain");
    web
}

/// GET `path` with `Accept-Encoding: accept` (none when empty).
fn get_encoded(c: &mut Conn, path: &str, accept: &str) -> zonegraph_server::client::Response {
    let headers: Vec<(&str, &str)> = if accept.is_empty() {
        vec![]
    } else {
        vec![("accept-encoding", accept)]
    };
    c.request("GET", path, &headers, b"").expect("request")
}

#[test]
fn the_viewer_is_served_with_run_links_falling_back_to_the_app() {
    let dir = tempfile::tempdir().expect("temp dir");
    let web = fake_dist(dir.path());
    std::fs::write(dir.path().join("secret.txt"), "do not serve").expect("secret");
    let (_server, mut c) = Ctx::new(dir.path()).with(|c| c.web = web).spawn();
    // A run link is the run page's own HTML; the designer's routes are its index.html.
    let r = c
        .get("/run/0123456789abcdef0123456789abcdef")
        .expect("run page");
    assert_eq!(r.status, 200);
    assert!(r.text().contains("<title>run page</title>"), "{}", r.text());
    assert_eq!(r.header("cache-control"), Some("no-cache"));
    for route in ["/", "/gallery", "/some/app/route"] {
        let r = c.get(route).expect("app route");
        assert!(
            r.text().contains("<title>viewer</title>"),
            "{route}: {}",
            r.text()
        );
        assert_eq!(r.header("cache-control"), Some("no-cache"), "{route}");
    }
    let r = c.get("/zonegraph-web-0123456789abcdef.js").expect("js");
    assert_eq!(r.header("content-type"), Some("text/javascript"));
    assert_eq!(r.text(), "console.log(1)");
    for bad in [
        "/../secret.txt",
        "/%2e%2e/secret.txt",
        "/.hidden",
        "/missing.js",
        "/run-page/../../secret.txt",
    ] {
        let r = c.get(bad).expect("request");
        assert_eq!(r.status, 404, "{bad}: {}", r.text());
        assert!(!r.text().contains("do not serve"));
    }
}

#[test]
fn trunk_content_hashes_are_told_from_plain_names() {
    use zonegraph_server::http::is_hashed;
    for hashed in [
        "zonegraph-web-0123456789abcdef.js",
        "run-page/zonegraph-run-a3e765422aa832f_bg.wasm",
        "style-5afae6860a0200a6.css",
    ] {
        assert!(is_hashed(hashed), "{hashed}");
    }
    for plain in [
        "index.html",
        "run-page/index.html",
        "notes.txt",
        "my-file.js",
        "a-beef.css",
    ] {
        assert!(!is_hashed(plain), "{plain}");
    }
}

#[test]
fn viewer_files_are_served_precompressed_and_cached_by_name() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (_server, mut c) = Ctx::new(dir.path())
        .with(|c| c.web = fake_dist(dir.path()))
        .spawn();
    let immutable = Some("public, max-age=31536000, immutable");
    let js = "/zonegraph-web-0123456789abcdef.js";
    // Brotli when the browser takes it, else gzip, else the file itself.
    for (accept, encoding, body) in [
        ("gzip, deflate, br", Some("br"), "br js"),
        ("gzip", Some("gzip"), "gz js"),
        ("", None, "console.log(1)"),
    ] {
        let r = get_encoded(&mut c, js, accept);
        assert_eq!(r.status, 200, "{accept}");
        assert_eq!(r.header("content-encoding"), encoding, "{accept}");
        assert_eq!(r.text(), body, "{accept}");
        assert_eq!(
            r.header("content-type"),
            Some("text/javascript"),
            "{accept}"
        );
        assert_eq!(r.header("cache-control"), immutable, "{accept}");
        assert_eq!(r.header("vary"), Some("accept-encoding"), "{accept}");
    }
    // A wasm with only a gzip twin: gzip for a browser that takes both.
    let r = get_encoded(
        &mut c,
        "/zonegraph-web-0123456789abcdef_bg.wasm",
        "br, gzip",
    );
    assert_eq!(r.header("content-encoding"), Some("gzip"));
    assert_eq!(r.header("content-type"), Some("application/wasm"));
    assert_eq!(r.header("cache-control"), immutable);
    // HTML is compressed too, and always revalidated.
    let r = get_encoded(&mut c, "/", "br");
    assert_eq!(r.header("content-encoding"), Some("br"));
    assert_eq!(r.text(), "br index");
    assert_eq!(r.header("cache-control"), Some("no-cache"));
    let r = get_encoded(&mut c, "/run/0123456789abcdef0123456789abcdef", "gzip, br");
    assert_eq!(r.header("content-encoding"), Some("gzip"));
    assert_eq!(r.text(), "gz run page");
    assert_eq!(r.header("cache-control"), Some("no-cache"));
    // A name without a content hash is revalidated.
    let r = get_encoded(&mut c, "/notes.txt", "br");
    assert_eq!(r.header("content-encoding"), None);
    assert_eq!(r.header("cache-control"), Some("no-cache"));
}

/// Reads server-sent events from `stream` until one whose data satisfies `pred`, or until
/// `within` has passed; the events' JSON data in order.
fn events_until(
    reader: &mut std::io::BufReader<std::net::TcpStream>,
    within: Duration,
    pred: impl Fn(&Value) -> bool,
) -> Option<Value> {
    use std::io::BufRead as _;
    let deadline = Instant::now() + within;
    let mut line = String::new();
    loop {
        let left = deadline.checked_duration_since(Instant::now())?;
        reader
            .get_ref()
            .set_read_timeout(Some(left.max(Duration::from_millis(1))))
            .expect("timeout");
        line.clear();
        match reader.read_line(&mut line) {
            Ok(0) => return None,
            Ok(_) => {}
            Err(_) => return None,
        }
        // Chunked framing: the size lines are hex, the event lines start with a field name.
        if let Some(data) = line.trim_end().strip_prefix("data: ") {
            let v: Value = serde_json::from_str(data).expect("each event is a run view");
            if pred(&v) {
                return Some(v);
            }
        }
    }
}

/// Opens `GET /api/runs/{token}/events`; the reader after the response head.
fn open_events(server: &Server, token: &str) -> std::io::BufReader<std::net::TcpStream> {
    use std::io::{BufRead as _, Write as _};
    let mut s = std::net::TcpStream::connect(server.addr).expect("connect");
    write!(
        s,
        "GET /api/runs/{token}/events HTTP/1.1\r\nhost: {}\r\naccept: text/event-stream\r\n\r\n",
        server.addr
    )
    .expect("request");
    let mut r = std::io::BufReader::new(s);
    let mut head = String::new();
    loop {
        let mut line = String::new();
        r.read_line(&mut line).expect("head");
        if line.trim_end().is_empty() {
            break;
        }
        head.push_str(&line);
    }
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert!(
        head.to_ascii_lowercase()
            .contains("content-type: text/event-stream"),
        "{head}"
    );
    // Behind nginx the events must not wait in its buffer.
    assert!(
        head.to_ascii_lowercase().contains("x-accel-buffering: no"),
        "{head}"
    );
    r
}

#[test]
fn a_run_page_hears_a_move_made_in_chat_within_a_second() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (server, mut c) = Ctx::new(dir.path()).spawn();
    let user = "@live:test";
    say(&mut c, user, "!zone enter crypt_valdris");
    let token = token_of(&say1(&mut c, user, "!zone map"));
    let mut events = open_events(&server, &token);
    // The first event is the view as it stands.
    let first = events_until(&mut events, Duration::from_secs(5), |_| true).expect("first view");
    assert_eq!(first["view"]["status"]["room_number"], 1, "{first}");
    let started = Instant::now();
    say(&mut c, user, "!zone advance");
    let moved = events_until(&mut events, Duration::from_secs(1), |v| {
        v["view"]["status"]["room_number"] == 2
    });
    assert!(
        moved.is_some(),
        "no event within a second of the move ({:?})",
        started.elapsed()
    );
    let moved = moved.expect("checked");
    // The event is what GET /api/runs/{token} answers now.
    let now = c.get(&format!("/api/runs/{token}")).expect("view").json();
    assert_eq!(moved, now);
    // That answer is gzipped for a browser that takes it.
    let r = get_encoded(&mut c, &format!("/api/runs/{token}"), "gzip, deflate, br");
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-encoding"), Some("gzip"));
    assert_eq!(r.body.get(..2), Some(&[0x1f, 0x8b][..]), "a gzip stream");
    // Another player's move is not this run's event; an unknown run is a 404.
    say(&mut c, "@other:test", "!zone enter crypt_valdris");
    assert!(events_until(&mut events, Duration::from_millis(300), |_| true).is_none());
    let r = c
        .get("/api/runs/0123456789abcdef0123456789abcdef/events")
        .expect("404");
    assert_eq!(r.status, 404, "{}", r.text());
    // An open stream does not keep the server from stopping.
    let stopping = Instant::now();
    server.stop().expect("stops");
    assert!(stopping.elapsed() < Duration::from_secs(5));
}

#[test]
fn hostile_input_gets_a_json_4xx_and_never_a_panic() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = Ctx::new(dir.path()).start();
    let addr = server.addr;
    let json = [("content-type", "application/json")];
    // (method, path, headers, body, expected status, the error says)
    type Case<'a> = (
        &'a str,
        &'a str,
        Vec<(&'a str, &'a str)>,
        Vec<u8>,
        u16,
        &'a str,
    );
    let cases: Vec<Case> = vec![
        (
            "POST",
            "/api/command",
            json.to_vec(),
            b"{not json".to_vec(),
            400,
            "parse",
        ),
        (
            "POST",
            "/api/command",
            json.to_vec(),
            br#"{"user":1,"text":"x"}"#.to_vec(),
            422,
            "user",
        ),
        (
            "POST",
            "/api/command",
            json.to_vec(),
            br#"{"user":"@a:b"}"#.to_vec(),
            422,
            "text",
        ),
        (
            "POST",
            "/api/command",
            json.to_vec(),
            br#"{"user":"@a:b","text":"!zone help","x":1}"#.to_vec(),
            422,
            "unknown field",
        ),
        (
            "POST",
            "/api/command",
            json.to_vec(),
            br#"[]"#.to_vec(),
            422,
            "expected",
        ),
        (
            "POST",
            "/api/command",
            json.to_vec(),
            br#"{"user":"","text":"!zone help"}"#.to_vec(),
            422,
            "empty",
        ),
        (
            "POST",
            "/api/command",
            json.to_vec(),
            b"{\"user\":\"a\\u0000b\",\"text\":\"x\"}".to_vec(),
            422,
            "control",
        ),
        (
            "POST",
            "/api/command",
            vec![],
            br#"{"user":"a","text":"b"}"#.to_vec(),
            415,
            "Content-Type",
        ),
        (
            "POST",
            "/api/command",
            json.to_vec(),
            vec![b' '; 20_000],
            413,
            "limit",
        ),
        ("GET", "/api/command", vec![], vec![], 405, "not allowed"),
        ("DELETE", "/api/zones", vec![], vec![], 405, "not allowed"),
        ("GET", "/api/nothing", vec![], vec![], 404, "no route"),
        ("POST", "/elsewhere", vec![], vec![], 404, "no route"),
        (
            "GET",
            "/api/notices",
            vec![],
            vec![],
            405,
            "use POST /api/notices",
        ),
        (
            "POST",
            "/api/notices",
            json.to_vec(),
            br#"{"user":""}"#.to_vec(),
            422,
            "empty",
        ),
        (
            "POST",
            "/api/notices",
            json.to_vec(),
            br#"{}"#.to_vec(),
            422,
            "expected {\"user\"",
        ),
        (
            "POST",
            "/api/notices/ack",
            json.to_vec(),
            br#"{"user":"@a:b","ids":"all"}"#.to_vec(),
            422,
            "ids",
        ),
        (
            "GET",
            "/api/notices/ack",
            vec![],
            vec![],
            405,
            "not allowed",
        ),
    ];
    let mut c = Conn::connect(addr)
        .expect("connect")
        .with_token(Some(TOKEN));
    for (method, path, headers, body, status, says) in cases {
        let r = match c.request(method, path, &headers, &body) {
            Ok(r) => r,
            Err(_) => {
                // The server may close the connection after refusing a body; reconnect.
                c = Conn::connect(addr)
                    .expect("reconnect")
                    .with_token(Some(TOKEN));
                c.request(method, path, &headers, &body).expect("request")
            }
        };
        assert_eq!(r.status, status, "{method} {path}: {}", r.text());
        let err = r.json()["error"].as_str().unwrap_or_default().to_string();
        assert!(
            err.contains(says),
            "{method} {path}: {err:?} should say {says:?}"
        );
        if status == 413 {
            c = Conn::connect(addr)
                .expect("reconnect")
                .with_token(Some(TOKEN));
        }
    }
    // Chat text that is odd but well-formed gets the bot's own answer.
    let long = format!("!zone go {}", "9".repeat(3000));
    for text in [
        "",
        "   ",
        "!zone go 99999999999999999999999",
        "!zone go -1",
        "!zone enter \u{202e}\u{0000}",
        "!char wis 999",
        "!char level 0",
        "<script>alert(1)</script>",
        long.as_str(),
    ] {
        let r = c.command("@hostile:test", text, None).expect("request");
        assert_eq!(r.status, 200, "{text:?}: {}", r.text());
        let html = r.json()["replies"][0]["html"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        assert!(!html.contains("<script>"), "{html}");
    }
    // Bytes that are not HTTP at all.
    for garbage in [
        &b"\x00\x01\x02\r\n\r\n"[..],
        b"GET / HTTP/9.9\r\n\r\n",
        b"POST /api/command HTTP/1.1\r\ncontent-length: -5\r\n\r\n",
    ] {
        if let Ok(mut g) = Conn::connect(addr) {
            let _ = g.raw(garbage);
        }
    }
    let h = Conn::connect(addr)
        .expect("connect")
        .get("/healthz")
        .expect("health");
    assert_eq!(h.status, 200, "the server still answers");
}

#[test]
fn an_api_token_is_required_when_configured() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = Ctx::new(dir.path())
        .auth(Auth::Token("s3cret".into()))
        .start();
    let mut c = Conn::connect(server.addr).expect("connect");
    let r = c.command("@a:test", "!zone help", None).expect("request");
    assert_eq!(r.status, 401, "{}", r.text());
    assert!(
        r.json()["error"]
            .as_str()
            .unwrap_or_default()
            .contains("Bearer")
    );
    let r = c
        .command("@a:test", "!zone help", Some("wrong"))
        .expect("request");
    assert_eq!(r.status, 401);
    let r = c
        .command("@a:test", "!zone enter crypt_valdris", Some("s3cret"))
        .expect("request");
    assert_eq!(r.status, 200);
    for path in ["/api/zones", "/api/zones/crypt_valdris"] {
        assert_eq!(c.get(path).expect("zones").status, 401, "{path}");
    }
    for (path, body) in [
        ("/api/notices", serde_json::json!({ "user": "@a:test" })),
        (
            "/api/notices/ack",
            serde_json::json!({ "user": "@a:test", "ids": [1] }),
        ),
    ] {
        assert_eq!(
            c.post_json(path, &body).expect("post").status,
            401,
            "{path}"
        );
    }
    let map = c
        .command("@a:test", "!zone map", Some("s3cret"))
        .expect("map")
        .json();
    let token = token_of(map["replies"][0]["text"].as_str().unwrap_or_default());
    // The run link is its own capability; health and the viewer are public.
    assert_eq!(
        c.get(&format!("/api/runs/{token}")).expect("view").status,
        200
    );
    assert_eq!(c.get("/healthz").expect("health").status, 200);
    assert_eq!(c.get("/").expect("viewer").status, 200);
}

#[test]
fn without_a_token_the_server_makes_one_beside_the_database_and_keeps_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db_path = dir.path().join("z.db");
    let file = serve::token_file(&db_path);
    assert_eq!(file, dir.path().join("z.db.api-token"));
    let mut p = spawn_process(&db_path);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(&file)
            .expect("token file")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600, "{mode:o}");
    }
    assert_eq!(p.token.len(), 32, "128 random bits in hex");
    // The start-up message says where the token is and how to pass it.
    let deadline = Instant::now() + Duration::from_secs(30);
    let said = loop {
        let said = p.stdout.lock().expect("stdout").join("\n");
        if said.contains("authorization: Bearer") || Instant::now() > deadline {
            break said;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(said.contains(&file.display().to_string()), "{said}");
    assert!(
        said.contains(&format!("authorization: Bearer $(cat {})", file.display())),
        "{said}"
    );
    let mut c = Conn::connect(p.addr).expect("connect");
    let r = c.command("@a:test", "!zone help", None).expect("request");
    assert_eq!(r.status, 401, "closed by default: {}", r.text());
    let r = c
        .command("@a:test", "!zone help", Some(&p.token))
        .expect("request");
    assert_eq!(r.status, 200, "{}", r.text());
    let _ = p.child.kill();
    let _ = p.child.wait();

    // A restart reuses it.
    let first = p.token.clone();
    let mut p = spawn_process(&db_path);
    assert_eq!(p.token, first);
    let mut c = Conn::connect(p.addr).expect("connect");
    let r = c
        .command("@a:test", "!zone help", Some(&first))
        .expect("request");
    assert_eq!(r.status, 200, "{}", r.text());
    let _ = p.child.kill();
    let _ = p.child.wait();
}

/// `POST /api/command` with `Host: host` (and no token).
fn command_for_host(addr: SocketAddr, host: &str) -> zonegraph_server::client::Response {
    let body = r#"{"user":"@local:test","text":"!zone help"}"#;
    let req = format!(
        "POST /api/command HTTP/1.1\r\nhost: {host}\r\ncontent-type: application/json\r\n\
         content-length: {}\r\n\r\n{body}",
        body.len()
    );
    Conn::connect(addr)
        .expect("connect")
        .raw(req.as_bytes())
        .expect("request")
}

#[test]
fn no_auth_answers_only_requests_that_name_this_machine() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = Ctx::new(dir.path()).auth(Auth::Off).start();
    assert_eq!(server.api_token(), None);
    let listen = server.addr.to_string();
    for host in [
        "localhost",
        "localhost:8080",
        "LocalHost:1",
        "127.0.0.1",
        "127.0.0.1:9",
        "[::1]",
        "[::1]:8080",
        listen.as_str(),
    ] {
        let r = command_for_host(server.addr, host);
        assert_eq!(r.status, 200, "Host {host}: {}", r.text());
    }
    // A page on another name, its DNS rebound to 127.0.0.1, must not drive the bot.
    for host in [
        "evil.example",
        "evil.example:8080",
        "localhost.evil.example",
        "127.0.0.1.nip.io:80",
        "[::1].evil",
        "localhost:http",
        "",
    ] {
        let r = command_for_host(server.addr, host);
        assert_eq!(r.status, 403, "Host {host:?}: {}", r.text());
        let err = r.json()["error"].as_str().unwrap_or_default().to_string();
        assert!(err.contains("--no-auth"), "{err}");
        assert!(err.contains("DNS rebinding"), "{err}");
    }
}

#[test]
fn serve_flags_close_the_api_by_default() {
    use clap::Parser;
    let args = |args: &[&str]| {
        let argv = ["zonegraph", "serve"].iter().chain(args).copied();
        zonegraph_server::Cli::try_parse_from(argv).map(|cli| match cli.command {
            zonegraph_server::Cmd::Serve(a) => a,
            _ => unreachable!("a serve command"),
        })
    };
    let parse = |a: &[&str]| ServerConfig::from_args(&args(a).expect("arguments"));
    // No token given: one is made (on any address).
    for listen in ["127.0.0.1:8080", "0.0.0.0:8080"] {
        let c = parse(&["--listen", listen]).expect("ok");
        assert!(matches!(c.auth, Auth::TokenFile), "{listen}: {:?}", c.auth);
    }
    let c = parse(&["--api-token", "t"]).expect("ok");
    assert!(matches!(c.auth, Auth::Token(ref t) if t == "t"));
    let c = parse(&["--no-auth"]).expect("ok");
    assert!(matches!(c.auth, Auth::Off));
    let err = parse(&["--listen", "0.0.0.0:8080", "--no-auth"]).expect_err("refused");
    assert!(err.to_string().contains("refusing --no-auth"), "{err}");
    let err = args(&["--no-auth", "--api-token", "t"]).expect_err("conflict");
    assert!(err.to_string().contains("cannot be used with"), "{err}");
    // Who sets character sheets.
    let c = parse(&["--admin", "@a:test", "--admin", "@b:test", "--sandbox"]).expect("ok");
    assert_eq!(c.admins, ["@a:test", "@b:test"]);
    assert_eq!(c.characters, CharacterRules::Sandbox);
    let c = parse(&[]).expect("ok");
    assert!(c.admins.is_empty());
    assert_eq!(c.characters, CharacterRules::AdminsOnly);
    // Rate limits.
    use zonegraph_core::limits::Rate;
    assert_eq!(parse(&[]).expect("ok").limits.rate, Some(Rate::new(2, 10)));
    assert_eq!(
        parse(&["--rate-limit", "off"]).expect("ok").limits.rate,
        None
    );
    assert_eq!(
        parse(&["--rate-limit", "0.5/5"]).expect("ok").limits.rate,
        Some(Rate {
            per_second_milli: 500,
            burst: 5
        })
    );
    for bad in ["2", "fast", "2/x", "0/10", "2/0", "1.0001/2", "-1/2"] {
        let err = args(&[&format!("--rate-limit={bad}")]).expect_err(bad);
        assert!(err.to_string().contains("--rate-limit"), "{bad}: {err}");
    }
    let ok = parse(&["--listen", "127.0.0.1:9000", "--fork-timeout", "1h30m"]).expect("ok");
    assert_eq!(ok.fork_timeout, Duration::from_secs(5400));
    let bad = args(&["--fork-timeout", "soon"]).expect_err("not a duration");
    assert!(bad.to_string().contains("not a duration like 6h"), "{bad}");
}

/// gogobee's database at one stage of its schema: `tests/fixtures/gogobee_{stage}.sql`.
fn gogobee_db(dir: &Path, stage: &str) -> PathBuf {
    let path = dir.join(format!("{stage}.db"));
    let conn = rusqlite::Connection::open(&path).expect("db");
    let sql = std::fs::read_to_string(root().join(format!("tests/fixtures/gogobee_{stage}.sql")))
        .expect("fixture");
    conn.execute_batch(&sql).expect("fixture loads");
    path
}

/// Each run id with whether gogobee counts the run active.
fn gogobee_active(path: &Path) -> BTreeMap<String, bool> {
    let conn = rusqlite::Connection::open(path).expect("db");
    let mut st = conn
        .prepare(
            "SELECT run_id, completed_at IS NULL AND abandoned = 0 AND boss_defeated = 0
             FROM dnd_zone_run",
        )
        .expect("query");
    st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .expect("rows")
        .collect::<rusqlite::Result<_>>()
        .expect("rows")
}

/// Every row of `dnd_zone_run` and the old game's `dnd_character`, as text.
fn dump_runs(path: &Path) -> Vec<String> {
    let conn = rusqlite::Connection::open(path).expect("db");
    let mut out = Vec::new();
    for table in ["dnd_zone_run", "dnd_character"] {
        let mut st = conn
            .prepare(&format!("SELECT * FROM {table} ORDER BY rowid"))
            .expect("query");
        let n = st.column_count();
        let mut rows = st.query([]).expect("rows");
        while let Some(r) = rows.next().expect("row") {
            out.push(
                (0..n)
                    .map(|i| format!("{:?}", r.get_ref(i).expect("value")))
                    .collect::<Vec<_>>()
                    .join(" | "),
            );
        }
    }
    out
}

/// What opening one stage of gogobee's database must do.
struct Stage {
    name: &'static str,
    /// Rows that cannot be carried: run id and the reason given.
    stuck: &'static [(&'static str, &'static str)],
    /// An older active run of a player with two.
    superseded: &'static str,
    /// A player waiting at a fork gogobee offered.
    at_fork: Option<&'static str>,
    /// A player in a linear run, and what `!zone status` says.
    linear: Option<(&'static str, &'static str)>,
}

const STAGES: [Stage; 3] = [
    Stage {
        name: "before_graph",
        stuck: &[
            ("g1-dara-a", "zone hollow_barrow is not loaded"),
            (
                "g1-fen-0",
                "zone crypt_valdris is a graph, and current_room 2 names a room only in a zone \
                 given as room_kinds",
            ),
        ],
        superseded: "g1-cato-a",
        at_fork: None,
        linear: Some(("@ash:gogobee.test", "room 4 of 9")),
    },
    Stage {
        name: "dual_write",
        stuck: &[
            (
                "g2-ivy-a",
                "node crypt_valdris.ossuary is not in zone crypt_valdris",
            ),
            ("g2-jo-a", "zone hollow_barrow is not loaded"),
        ],
        superseded: "g2-gus-a",
        at_fork: Some("@fen:gogobee.test"),
        linear: Some(("@ash:gogobee.test", "room 4 of 9")),
    },
    Stage {
        name: "after_purge",
        stuck: &[
            (
                "g3-ivy-a",
                "node crypt_valdris.ossuary is not in zone crypt_valdris",
            ),
            ("g3-jo-a", "zone hollow_barrow is not loaded"),
        ],
        superseded: "g3-gus-a",
        at_fork: Some("@fen:gogobee.test"),
        linear: None,
    },
];

/// `zonegraph migrate` of the binary: its output, asserting exit 0.
fn migrate_cli(path: &Path) -> String {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_zonegraph-under-test"))
        .arg("migrate")
        .arg("--db")
        .arg(path)
        .arg("--zones")
        .arg(support::zones())
        .output()
        .expect("runs");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

/// No row lost, every run as active or over as gogobee had it (but the superseded one).
fn check_carried(stage: &Stage, path: &Path, before: &BTreeMap<String, bool>) {
    let mut expected = before.clone();
    expected.insert(stage.superseded.to_string(), false);
    assert_eq!(&gogobee_active(path), &expected, "{}", stage.name);
    assert!(before[stage.superseded], "{}: active before", stage.name);
}

/// The players of a stage play on, through the server.
fn check_play(stage: &Stage, server: &Server) {
    let mut c = connect(server);
    if let Some((user, status)) = stage.linear {
        let t = say1(&mut c, user, "!zone status");
        assert!(t.contains(status), "{}: {t}", stage.name);
    }
    if let Some(user) = stage.at_fork {
        let t = say1(&mut c, user, "!zone go 1");
        assert!(t.contains("Main Hall"), "{}: {t}", stage.name);
    }
}

#[test]
fn gogobee_databases_at_every_stage_migrate_without_losing_a_row() {
    for stage in &STAGES {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = gogobee_db(dir.path(), stage.name);
        let before = gogobee_active(&path);
        let report = migrate_cli(&path);
        let migrated = format!("schema 0 -> {}", zonegraph_server::db::SCHEMA_VERSION);
        assert!(report.contains(&migrated), "{}: {report}", stage.name);
        for (run_id, why) in stage.stuck {
            assert!(
                report.contains(&format!("kept run {run_id} ")) && report.contains(why),
                "{}: {run_id}: {report}",
                stage.name
            );
        }
        assert!(
            report.contains(&format!("abandoned run {} ", stage.superseded)),
            "{}: {report}",
            stage.name
        );
        check_carried(stage, &path, &before);
        if stage.at_fork.is_some() {
            assert!(
                report.contains("carried 1 pending fork"),
                "{}: {report}",
                stage.name
            );
        }

        // A second migrate changes nothing, and still lists what it cannot carry.
        let rows = dump_runs(&path);
        let again = migrate_cli(&path);
        assert_eq!(dump_runs(&path), rows, "{}: {again}", stage.name);
        assert!(again.contains("warmed up 0"), "{}: {again}", stage.name);
        for (run_id, _) in stage.stuck {
            assert!(again.contains(run_id), "{}: {again}", stage.name);
        }

        let server = Ctx::sqlite(&path).start();
        check_play(stage, &server);
        server.stop().expect("stops");
        assert_eq!(gogobee_active(&path).len(), before.len(), "{}", stage.name);
    }
}

#[test]
fn serve_opens_gogobee_databases_at_every_stage_directly() {
    for stage in &STAGES {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = gogobee_db(dir.path(), stage.name);
        let before = gogobee_active(&path);
        let server = Ctx::sqlite(&path).start();
        let warm = &server.opened.warm_up;
        let mut stuck: Vec<(&str, &str)> = warm
            .stuck
            .iter()
            .map(|s| (s.run_id.as_str(), s.why.as_str()))
            .collect();
        stuck.sort_unstable();
        assert_eq!(stuck, stage.stuck, "{}", stage.name);
        assert_eq!(
            warm.abandoned
                .iter()
                .map(|s| s.run_id.as_str())
                .collect::<Vec<_>>(),
            [stage.superseded],
            "{}",
            stage.name
        );
        check_carried(stage, &path, &before);
        check_play(stage, &server);
        server.stop().expect("stops");
        if stage.name == "after_purge" {
            // gogobee's count of rooms entered follows the move through the fork.
            let conn = rusqlite::Connection::open(&path).expect("db");
            let n: i64 = conn
                .query_row(
                    "SELECT rooms_traversed FROM dnd_zone_run WHERE run_id = 'g3-fen-a'",
                    [],
                    |r| r.get(0),
                )
                .expect("rooms_traversed");
            assert_eq!(n, 4);
        }
        // Opening it again changes nothing.
        let rows = dump_runs(&path);
        let server = Ctx::sqlite(&path).start();
        server.stop().expect("stops");
        assert_eq!(dump_runs(&path), rows, "{}", stage.name);
    }
}

#[test]
fn a_carried_fork_keeps_gogobees_outcome_and_gogobee_sees_our_writes() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = gogobee_db(dir.path(), "dual_write");
    let server = Ctx::sqlite(&path).start();
    let fen = server
        .store
        .all_runs()
        .expect("runs")
        .into_iter()
        .find(|r| r.run.run_id == "g2-fen-a")
        .expect("fen's run");
    let fork = fen.run.pending_fork.expect("the fork is pending");
    assert_eq!(fork.at.as_str(), "crypt_valdris.fork");
    let open: Vec<(&str, bool)> = fork
        .options
        .iter()
        .map(|o| (o.to_node.as_str(), o.open))
        .collect();
    assert_eq!(
        open,
        [("crypt_valdris.main_hall", true), (CHAPEL, false)],
        "gogobee's unlocked flags, in the zone's menu order"
    );
    assert!(
        fen.run
            .missed_passages
            .contains(&(fork.at.clone(), zonegraph_core::zone::NodeId(CHAPEL.into()))),
        "a failed perception check is a missed passage"
    );
    let mut c = connect(&server);
    // Gus keeps his newer run, past the fork: nothing pending.
    let t = say1(&mut c, "@gus:gogobee.test", "!zone go 1");
    assert!(t.contains(NO_CHOICE), "{t}");
    say1(&mut c, "@gus:gogobee.test", "!zone abandon");
    // Ash's warmed run stands in an elite room (room 4 of 9): it is fought before the run
    // goes on, as in any run (gogobee kept no fight in its rows).
    let t = say1(&mut c, "@ash:gogobee.test", "!zone status");
    assert!(
        t.contains("room 4 of 9") && t.contains("An elite bars the way on"),
        "{t}"
    );
    let t = say1(&mut c, "@ash:gogobee.test", "!zone advance");
    assert!(
        t.contains("Elite check: ") && t.contains(" vs DC 16 — you lose."),
        "{t}"
    );
    // With STR 30 (+10) the next round is won and the run walks on.
    say1(&mut c, ADMIN, "!char set @ash:gogobee.test str 30");
    let t = say1(&mut c, "@ash:gogobee.test", "!zone fight");
    assert!(t.contains(" + 10 vs DC 16 — you win."), "{t}");
    assert!(t.contains("Room 5 of 9"), "{t}");
    // Rows that could not be carried answer, and can be given up.
    for user in ["@ivy:gogobee.test", "@jo:gogobee.test"] {
        say1(&mut c, user, "!zone status");
        let t = say1(&mut c, user, "!zone abandon");
        assert!(t.to_lowercase().contains("abandon"), "{user}: {t}");
    }
    // A new run goes into gogobee's table, with gogobee's columns filled in.
    let t = say1(&mut c, "@jo:gogobee.test", "!zone enter crypt_valdris");
    assert!(t.contains("Crypt Threshold"), "{t}");
    server.stop().expect("stops");
    let active = gogobee_active(&path);
    assert!(
        active
            .iter()
            .any(|(id, &on)| id.starts_with("@jo:gogobee.test/") && on),
        "{active:?}"
    );
    assert!(!active["g2-jo-a"] && !active["g2-ivy-a"], "{active:?}");

    // gogobee's columns say what happened.
    let conn = rusqlite::Connection::open(&path).expect("db");
    let (room, completed, abandoned): (i64, Option<String>, i64) = conn
        .query_row(
            "SELECT current_room, completed_at, abandoned FROM dnd_zone_run
             WHERE run_id = 'g2-ash-a'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .expect("ash");
    assert_eq!((room, completed, abandoned), (4, None, 0));
    let (completed, abandoned): (String, i64) = conn
        .query_row(
            "SELECT completed_at, abandoned FROM dnd_zone_run WHERE run_id = 'g2-gus-b'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .expect("gus");
    assert_eq!(abandoned, 1);
    assert!(
        completed.starts_with("20") && completed.len() == 19,
        "{completed}"
    );
}

#[test]
fn purging_refuses_while_a_gogobee_row_cannot_be_warmed_up() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = gogobee_db(dir.path(), "before_graph");
    let args = migrate::Args {
        db: Some(path.clone()),
        from: None,
        to: None,
        zones: Some(support::zones()),
        purge_legacy: true,
    };
    let err = migrate::migrate(&args).expect_err("refuses");
    assert!(
        err.to_string().contains("runs g1-fen-0, g1-dara-a"),
        "{err}"
    );
    let conn = db::open(&path).expect("open");
    let n: i64 = conn
        .query_row("SELECT count(*) FROM dnd_zone_run", [], |r| r.get(0))
        .expect("count");
    assert_eq!(n, 8, "nothing dropped");
    assert!(db::has_legacy_columns(&conn).expect("columns"));
    drop(conn);

    // Once the rows are dealt with (here: removed by the operator), the purge goes through
    // and the server plays on without the old columns.
    let conn = rusqlite::Connection::open(&path).expect("db");
    conn.execute(
        "DELETE FROM dnd_zone_run WHERE run_id IN ('g1-dara-a', 'g1-fen-0')",
        [],
    )
    .expect("delete");
    drop(conn);
    let report = migrate::migrate(&args).expect("purges");
    assert!(report.contains("dropped the legacy columns"), "{report}");
    let report = migrate::migrate(&args).expect("purges again");
    assert!(report.contains("already gone"), "{report}");
    let (_server, mut c) = Ctx::sqlite(&path).spawn();
    assert!(say1(&mut c, "@ash:gogobee.test", "!zone advance").contains("Room 5 of 9"));
}

#[test]
fn a_gogobee_row_that_cannot_be_written_is_named_in_the_error() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = gogobee_db(dir.path(), "before_graph");
    {
        let mut conn = db::open(&path).expect("open");
        db::migrate(&mut conn).expect("migrate");
        conn.execute_batch(
            "CREATE TRIGGER refuse_bram BEFORE UPDATE OF current_node ON dnd_zone_run
             WHEN OLD.run_id = 'g1-bram-0' BEGIN SELECT RAISE(ABORT, 'bram is read-only'); END;",
        )
        .expect("trigger");
    }
    let err = format!("{:#}", Ctx::sqlite(&path).refused());
    assert!(err.contains("run g1-bram-0"), "{err}");
    assert!(err.contains("bram is read-only"), "{err}");
}

#[test]
fn a_run_round_trips_through_its_row_exactly() {
    use zonegraph_core::engine::{
        Check, EncounterCheck, ForkOption, PendingEncounter, PendingFork, Run,
    };
    use zonegraph_core::zone::NodeId;
    let dir = tempfile::tempdir().expect("temp dir");
    let mut conn = db::open(&dir.path().join("z.db")).expect("db");
    db::migrate(&mut conn).expect("migrate");
    let run = Run {
        run_id: "r\"1'".into(),
        zone_id: "sunless_deep".into(),
        current_node: NodeId("sunless_deep.gate".into()),
        visited_nodes: vec![NodeId("a".into()), NodeId("b".into())],
        pending_fork: Some(PendingFork {
            at: NodeId("b".into()),
            created_at: 42,
            options: vec![ForkOption {
                to_node: NodeId("c".into()),
                open: false,
                check: Check::PerceptionCheck {
                    d20: 3,
                    modifier: -1,
                    dc: 12,
                },
                revealed: true,
            }],
        }),
        cleared_regions: ["upper".to_string()].into(),
        harvested: [(NodeId("a".into()), "moss".to_string())].into(),
        keys_granted: ["skull_key".to_string()].into(),
        revealed_secrets: [NodeId("s".into())].into(),
        missed_passages: [(NodeId("b".into()), NodeId("c".into()))].into(),
        encounter: Some(PendingEncounter {
            at: NodeId("b".into()),
            kind: EncounterKind::Elite,
            attempts: 2,
        }),
        wounds: 2,
        xp_earned: 70,
        loot: [NodeId("a".into())].into(),
        last_check: Some(EncounterCheck {
            node: NodeId("b".into()),
            kind: EncounterKind::Elite,
            attempt: 2,
            d20: 4,
            modifier: 2,
            dc: 12,
            won: false,
        }),
        started_at: 1,
        last_action_at: 2,
        completed_at: Some(3),
        boss_defeated: true,
        abandoned: false,
        outcome: Some(zonegraph_core::Outcome::Victory),
    };
    // The encounter state rides in `node_choices`, with or without a fork beside it.
    for r in [
        Run {
            pending_fork: None,
            run_id: "no-fork".into(),
            ..run.clone()
        },
        Run {
            pending_fork: None,
            encounter: None,
            wounds: 0,
            xp_earned: 0,
            loot: Default::default(),
            last_check: None,
            run_id: "plain".into(),
            ..run.clone()
        },
    ] {
        let tx = conn.transaction().expect("tx");
        let stored =
            db::insert_run(&tx, "@v:test", &r, db::LegacyColumns::default()).expect("insert");
        tx.commit().expect("commit");
        let back = db::run_by_token(&conn, &stored.link_token)
            .expect("read")
            .expect("found");
        assert_eq!(back.run, r);
        let choices: String = conn
            .query_row(
                "SELECT node_choices FROM dnd_zone_run WHERE run_id = ?1",
                [&r.run_id],
                |row| row.get(0),
            )
            .expect("row");
        if r.run_id == "plain" {
            assert_eq!(
                choices, "{}",
                "a run without encounter state reads as before"
            );
        }
    }
    let tx = conn.transaction().expect("tx");
    let stored =
        db::insert_run(&tx, "@u:test", &run, db::LegacyColumns::default()).expect("insert");
    tx.commit().expect("commit");
    let back = db::run_by_token(&conn, &stored.link_token)
        .expect("read")
        .expect("found");
    assert_eq!(back.run, run);
    let tx = conn.transaction().expect("tx");
    assert!(
        db::update_run_cas(
            &tx,
            back.id,
            back.version,
            &run,
            db::LegacyColumns::default()
        )
        .expect("cas")
    );
    assert!(
        !db::update_run_cas(
            &tx,
            back.id,
            back.version,
            &run,
            db::LegacyColumns::default()
        )
        .expect("cas"),
        "a stale version loses"
    );
}

/// `zonegraph serve --db db` as a process of its own, with the shipped zones.
fn spawn_process(db: &Path) -> Served {
    spawn_process_in(db, &support::zones())
}

fn spawn_process_in(db: &Path, zones: &Path) -> Served {
    let dir = db.parent().expect("the database is in a directory");
    let mut command = support::serve_command(zones, dir);
    command
        .arg("--db")
        .arg(db)
        .env_remove("ZONEGRAPH_API_TOKEN");
    let process = Process::spawn(command);
    let token = std::fs::read_to_string(serve::token_file(db))
        .expect("the token file is made before the server answers")
        .trim()
        .to_string();
    Served { process, token }
}

/// The Crypt played by `go 1`: the opening moves, then `!zone advance` (which fights the
/// elite and the boss, as often as the dice need) until the run ends, at most
/// [`MAX_ADVANCES`] times; a run still going then is abandoned.
const OPENING: &[&str] = &[
    "!zone enter crypt_valdris",
    "!zone advance",
    "!zone advance",
    "!zone go 1",
];
const MAX_ADVANCES: usize = 12;

#[test]
fn sigkill_mid_load_loses_no_acknowledged_move() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db_path = dir.path().join("z.db");
    let mut p = spawn_process(&db_path);
    let addr = p.addr;
    let token = p.token.clone();
    let players = 12;
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let acked = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    // Per player: (link token of each run, acknowledged visited count of that run).
    type Acks = Vec<(String, usize, bool)>;
    let handles: Vec<std::thread::JoinHandle<Acks>> = (0..players)
        .map(|i| {
            let stop = stop.clone();
            let acked = acked.clone();
            let token = token.clone();
            std::thread::spawn(move || {
                let user = format!("@load{i}:test");
                let mut acks: Acks = Vec::new();
                let Ok(c) = Conn::connect(addr) else {
                    return acks;
                };
                let mut c = c.with_token(Some(&token));
                'outer: while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let script = OPENING
                        .iter()
                        .copied()
                        .chain(std::iter::repeat_n("!zone advance", MAX_ADVANCES))
                        .chain(["!zone abandon"]);
                    for (step, cmd) in script.enumerate() {
                        let Ok(r) = c.command(&user, cmd, None) else {
                            break 'outer;
                        };
                        if r.status != 200 {
                            break 'outer;
                        }
                        acked.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let text = r.json()["replies"][0]["text"]
                            .as_str()
                            .unwrap_or_default()
                            .to_string();
                        if step == 0 {
                            let Ok(m) = c.command(&user, "!zone map", None) else {
                                break 'outer;
                            };
                            let map = m.json()["replies"][0]["text"]
                                .as_str()
                                .unwrap_or_default()
                                .to_string();
                            acks.push((token_of(&map), 1, false));
                        } else if let Some(last) = acks.last_mut() {
                            if let Some(n) = zonegraph_tests::room_told(&text) {
                                last.1 = last.1.max(n);
                            }
                            last.2 = text.contains("Victory!");
                        }
                        if text.contains("Victory!")
                            || text.contains("defeat")
                            || text.contains("You abandon")
                        {
                            break;
                        }
                    }
                }
                acks
            })
        })
        .collect();
    // Kill in the middle of the load: once 300 commands were acknowledged (or after 30 s on
    // a very slow machine), while every player keeps sending.
    let until = Instant::now() + Duration::from_secs(30);
    while acked.load(std::sync::atomic::Ordering::Relaxed) < 300 && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(10));
    }
    p.child.kill().expect("SIGKILL"); // std's kill is SIGKILL on Unix
    let _ = p.child.wait();
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let acks: Vec<Acks> = handles
        .into_iter()
        .map(|h| h.join().expect("player thread"))
        .collect();
    let total: usize = acks.iter().map(Vec::len).sum();
    eprintln!("sigkill: {total} runs acknowledged before the kill");
    assert!(
        total >= players,
        "the load ran before the kill: {total} runs"
    );

    let mut p = spawn_process(&db_path);
    let mut c = Conn::connect(p.addr)
        .expect("connect")
        .with_token(Some(&p.token));
    for (i, runs) in acks.iter().enumerate() {
        for (token, visited, won) in runs {
            let v = c.get(&format!("/api/runs/{token}")).expect("view");
            assert_eq!(v.status, 200, "run {token} of player {i} loads");
            let v = v.json();
            let have = visited_ids(&v).len();
            assert!(
                have >= *visited,
                "player {i}: acknowledged {visited} rooms, stored {have}"
            );
            if *won {
                assert_eq!(
                    v["view"]["status"]["phase"]["outcome"], "victory",
                    "player {i}"
                );
            }
        }
        if !runs.is_empty() {
            let t = say1(&mut c, &format!("@load{i}:test"), "!zone status");
            assert!(t.contains("Crypt of Valdris"), "{t}");
        }
    }
    let _ = p.child.kill();
    let _ = p.child.wait();
    // Every row still reads as a run.
    let conn = db::open(&db_path).expect("open");
    let runs = db::all_runs(&conn).expect("every row parses");
    assert!(
        runs.len() >= total,
        "{} rows for {total} acknowledged runs",
        runs.len()
    );
}

#[test]
fn the_compare_and_set_holds_between_two_servers_on_one_database() {
    // Two stores on one file are two writers with no lock in common (two processes, or the
    // sweeper of one and the commands of another): only the row's version keeps them honest.
    let dir = tempfile::tempdir().expect("temp dir");
    let (stores, settings) = two_stores(dir.path());
    let user = "@twice:test";
    for cmd in [
        "!zone enter crypt_valdris",
        "!zone advance",
        "!zone advance",
    ] {
        stores[0].command(user, cmd, &settings).expect("command");
    }
    let n = 50;
    let barrier = Arc::new(Barrier::new(n));
    let handles: Vec<_> = (0..n)
        .map(|i| {
            let store = stores[i % 2].clone();
            let settings = settings.clone();
            let barrier = barrier.clone();
            std::thread::spawn(move || {
                barrier.wait();
                let answer = store
                    .command(user, "!zone go 1", &settings)
                    .expect("command");
                answer
                    .replies
                    .iter()
                    .map(|r| r.text.clone())
                    .collect::<Vec<_>>()
                    .join("\n")
            })
        })
        .collect();
    let replies: Vec<String> = handles
        .into_iter()
        .map(|h| h.join().expect("thread"))
        .collect();
    let moved = replies.iter().filter(|r| r.contains("Main Hall")).count();
    let refused = replies
        .iter()
        .filter(|r| r.contains(NO_CHOICE) || r.contains(ENCOUNTER_FIRST))
        .count();
    assert_eq!((moved, refused), (1, n - 1), "{replies:#?}");
    let runs = stores[1].all_runs().expect("runs");
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].run.visited_nodes.len(), 4);
    assert_eq!(
        runs[0].version, 3,
        "enter, advance, advance, go: three updates"
    );
}

#[test]
fn a_zone_with_errors_refuses_the_start_with_its_findings() {
    let dir = tempfile::tempdir().expect("temp dir");
    let zones = support::copy_zones_of(dir.path(), "zones", &["crypt_valdris"]);
    std::fs::write(
        zones.join("broken.json"),
        r#"{"format":1,"zone_id":"broken","name":"Broken","tier":1,"min_level":1,"max_level":2,
            "nodes":[{"node_id":"broken.a","kind":"entry","is_entry":true}],
            "edges":[{"from_node":"broken.a","to_node":"broken.nowhere"}]}"#,
    )
    .expect("write");
    let err = Ctx::new(dir.path()).zones(zones).refused().to_string();
    assert!(err.contains("have errors"), "{err}");
    assert!(err.contains("error[unknown_node]"), "{err}");
    assert!(err.contains("broken.json"), "{err}");
}

#[test]
fn commands_over_the_rate_limit_get_429_with_retry_after() {
    use zonegraph_core::limits::Rate;
    let dir = tempfile::tempdir().expect("temp dir");
    // A burst of three, then one every thousand seconds.
    let (_server, mut c) = Ctx::new(dir.path())
        .with(|c| {
            c.limits.rate = Some(Rate {
                per_second_milli: 1,
                burst: 3,
            })
        })
        .spawn();
    for _ in 0..3 {
        say(&mut c, "@fast:test", "!zone help");
    }
    let r = c
        .command("@fast:test", "!zone help", None)
        .expect("request");
    assert_eq!(r.status, 429, "{}", r.text());
    let v = r.json();
    let err = v["error"].as_str().unwrap_or_default();
    assert!(err.starts_with("Slow down"), "{err}");
    assert!(err.contains("Try again in"), "{err}");
    let wait = v["retry_after_ms"].as_u64().unwrap_or_default();
    assert!(wait > 0, "{v}");
    let retry: u64 = r
        .header("retry-after")
        .and_then(|h| h.parse().ok())
        .expect("a Retry-After header in seconds");
    assert_eq!(retry, wait.div_ceil(1000), "{v}");
    // Per user: another player is not held up.
    say(&mut c, "@patient:test", "!zone help");
}

#[test]
fn a_command_given_up_by_its_request_finishes_before_the_next_one_starts() {
    let dir = tempfile::tempdir().expect("temp dir");
    // The slow player's first command (`!zone enter`) waits inside the store (where it asks
    // for a run id) until the test lets it go, so its request surely times out first.
    let (entered, entered_rx) = std::sync::mpsc::channel::<()>();
    let (release, release_rx) = std::sync::mpsc::channel::<()>();
    let release_rx = Mutex::new(release_rx);
    let first = std::sync::atomic::AtomicBool::new(true);
    let run_ids: RunIds = Arc::new(move |user: &str| {
        if user == "@slow:test" && first.swap(false, std::sync::atomic::Ordering::SeqCst) {
            let _ = entered.send(());
            let _ = release_rx.lock().expect("release").recv();
        }
        format!("{user}/1")
    });
    let (server, mut c) = Ctx::new(dir.path())
        .with(|c| {
            c.run_ids = run_ids;
            c.limits.request_timeout = Duration::from_secs(2);
        })
        .spawn();
    // Declared after the server, so a failing assertion lets the command go before the
    // server is dropped (which waits for it).
    let release = release;
    let r = c
        .command("@slow:test", "!zone enter crypt_valdris", None)
        .expect("request");
    assert_eq!(r.status, 503, "{}", r.text());
    let err = r.json()["error"].as_str().unwrap_or_default().to_string();
    assert!(err.contains("took too long"), "{err}");
    entered_rx.recv().expect("the command started");
    // The request is gone, but the command still holds its player's lock...
    assert!(
        server.state.service.is_locked("@slow:test"),
        "the lock went with the request while its command runs on"
    );
    // ...so the next command runs after it and sees what it did.
    release.send(()).expect("release");
    let t = say1(&mut c, "@slow:test", "!zone status");
    assert!(t.contains("Crypt of Valdris"), "{t}");
    assert!(t.contains("Crypt Threshold"), "{t}");
    assert_eq!(server.store.all_runs().expect("runs").len(), 1);
}

#[test]
fn character_writes_are_compare_and_set_between_two_servers() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (stores, settings) = two_stores(dir.path());
    let user = "@keys:test";
    // At most as many writers as a command's compare-and-set attempts: each loses only to
    // another's win.
    let n = 16;
    let barrier = Arc::new(Barrier::new(n));
    let handles: Vec<_> = (0..n)
        .map(|i| {
            let store = stores[i % 2].clone();
            let settings = settings.clone();
            let barrier = barrier.clone();
            std::thread::spawn(move || {
                barrier.wait();
                store
                    .command(user, &format!("!char key add key{i}"), &settings)
                    .expect("command");
            })
        })
        .collect();
    for h in handles {
        h.join().expect("thread");
    }
    let sheet = stores[0]
        .command(user, "!char", &settings)
        .expect("sheet")
        .replies[0]
        .text
        .clone();
    for i in 0..n {
        assert!(sheet.contains(&format!("key{i}")), "key{i} lost: {sheet}");
    }
}

#[test]
fn healthz_is_503_with_the_reason_when_the_database_cannot_be_written() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db_path = dir.path().join("z.db");
    let (_server, mut c) = Ctx::sqlite(&db_path).spawn();
    assert_eq!(c.get("/healthz").expect("health").status, 200);
    // Another process holds the write lock (a stuck `sqlite3` shell, say): reads still
    // work, writes cannot be made.
    let other = rusqlite::Connection::open(&db_path).expect("open");
    other.execute_batch("BEGIN IMMEDIATE").expect("lock");
    let h = c.get("/healthz").expect("health");
    assert_eq!(h.status, 503, "{}", h.text());
    let err = h.json()["error"].as_str().unwrap_or_default().to_string();
    assert!(err.contains("cannot be written"), "{err}");
    assert!(err.contains("locked"), "{err}");
    other.execute_batch("ROLLBACK").expect("unlock");
    assert_eq!(c.get("/healthz").expect("health").status, 200);
}

#[test]
fn a_run_in_a_withdrawn_zone_can_be_abandoned_and_blocks_no_other_zone() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db_path = dir.path().join("z.db");
    let both = support::copy_zones_of(dir.path(), "both", &["crypt_valdris", "mossback_warren"]);
    let later = support::copy_zones_of(dir.path(), "later", &["mossback_warren"]);
    let (quits, moves) = ("@quits:test", "@moves:test");
    // Run ids stay unique across the restart.
    let run_ids = support::per_user_run_ids();
    {
        let (_server, mut c) = Ctx::sqlite(&db_path)
            .zones(both)
            .with(|c| c.run_ids = run_ids.clone())
            .spawn();
        for user in [quits, moves] {
            say(&mut c, user, "!zone enter crypt_valdris");
            say(&mut c, user, "!zone advance");
        }
    }
    // The Crypt is withdrawn between starts.
    let (server, mut c) = Ctx::sqlite(&db_path)
        .zones(later)
        .with(|c| c.run_ids = run_ids)
        .spawn();

    let t = say1(&mut c, quits, "!zone status");
    assert!(
        t.contains("crypt_valdris, a zone that has been withdrawn"),
        "{t}"
    );
    assert!(t.contains("!zone abandon"), "{t}");
    let t = say1(&mut c, quits, "!zone abandon");
    assert!(
        t.contains("You abandon your run in crypt_valdris: that zone has been withdrawn"),
        "{t}"
    );
    let t = say1(&mut c, quits, "!zone enter mossback_warren");
    assert!(t.contains("You enter"), "{t}");

    // Entering another zone does not need the abandon first.
    let replies = say(&mut c, moves, "!zone enter mossback_warren");
    assert_eq!(replies.len(), 2, "{replies:?}");
    assert!(replies[0].contains("withdrawn"), "{replies:?}");
    assert!(replies[1].contains("You enter"), "{replies:?}");

    let runs = server.store.all_runs().expect("runs");
    assert_eq!(runs.len(), 4, "no run history is lost: {runs:#?}");
    for r in &runs {
        let abandoned = r.run.outcome == Some(zonegraph_core::Outcome::Abandoned);
        assert_eq!(abandoned, r.run.zone_id == "crypt_valdris", "{r:?}");
    }
}

#[test]
fn an_empty_or_missing_zones_directory_refuses_the_start() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db_path = dir.path().join("z.db");
    {
        let (_server, mut c) = Ctx::sqlite(&db_path).spawn();
        say(&mut c, "@stays:test", "!zone enter crypt_valdris");
    }
    let empty = dir.path().join("empty");
    std::fs::create_dir_all(&empty).expect("dir");
    std::fs::write(empty.join("notes.txt"), "not a zone").expect("write");
    let err = format!("{:#}", Ctx::sqlite(&db_path).zones(empty.clone()).refused());
    assert!(err.contains("holds no zone files"), "{err}");
    assert!(err.contains(&empty.display().to_string()), "{err}");
    let err = format!(
        "{:#}",
        Ctx::sqlite(&db_path)
            .zones(dir.path().join("missing"))
            .refused()
    );
    assert!(err.contains("missing"), "{err}");
    // The zone tables were left alone.
    let (_server, mut c) = Ctx::sqlite(&db_path).spawn();
    let t = say1(&mut c, "@stays:test", "!zone status");
    assert!(t.contains("Crypt Threshold"), "{t}");
}

#[test]
fn requests_past_the_concurrency_limit_are_refused_at_once() {
    let dir = tempfile::tempdir().expect("temp dir");
    // No slot is ever free.
    let (_server, mut c) = Ctx::new(dir.path())
        .with(|c| c.limits.max_in_flight = 0)
        .spawn();
    for path in ["/api/zones", "/healthz", "/"] {
        let r = c.get(path).expect("request");
        assert_eq!(r.status, 503, "{path}: {}", r.text());
        assert_eq!(r.header("retry-after"), Some("1"), "{path}");
        let err = r.json()["error"].as_str().unwrap_or_default().to_string();
        assert!(
            err.contains("as many requests as it takes"),
            "{path}: {err}"
        );
    }
}

/// Whether a new player's `attempt`-th check of `room` in the tier-1 Crypt wins.
fn wins_at(run: &str, room: &str, kind: EncounterKind, attempt: u32) -> bool {
    let modifier = rules::encounter_modifier(kind, 1, &rules::STARTING_SCORES);
    let d20 = rules::encounter_d20(run, room, attempt);
    d20 as i32 + modifier >= rules::encounter_dc(1, kind) as i32
}

#[test]
fn over_http_a_boss_must_be_fought_and_three_wounds_end_a_run() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (server, mut c) = Ctx::new(dir.path()).spawn();
    const HALL: &str = "crypt_valdris.main_hall";
    const BOSS: &str = "crypt_valdris.boss";

    // The boss wins the first round and loses the second.
    let hero = user_where("hero", |r| {
        wins_at(r, HALL, EncounterKind::Elite, 1)
            && !wins_at(r, BOSS, EncounterKind::Boss, 1)
            && wins_at(r, BOSS, EncounterKind::Boss, 2)
    });
    for cmd in [
        "!zone enter crypt_valdris",
        "!zone advance",
        "!zone advance",
    ] {
        say(&mut c, &hero, cmd);
    }
    say(&mut c, &hero, "!zone go 1");
    let t = say1(&mut c, &hero, "!zone fight");
    assert!(t.contains("You gain 40 XP."), "{t}");
    assert!(
        t.contains("The master of this zone awaits in Valdris's Sanctum."),
        "{t}"
    );
    let t = say1(&mut c, &hero, "!zone advance");
    assert!(t.starts_with("Boss check: "), "{t}");
    assert!(t.contains(" vs DC 13 — you lose."), "{t}");
    assert!(t.contains("You are wounded (1 of 3)."), "{t}");
    let t = say1(&mut c, &hero, "!zone status");
    assert!(t.contains("A boss bars the way on"), "{t}");
    assert!(t.contains("Wounds: 1 of 3."), "{t}");
    let t = say1(&mut c, &hero, "!zone fight");
    assert!(t.contains(" vs DC 13 — you win."), "{t}");
    assert!(t.contains("You gain 100 XP."), "{t}");
    assert!(t.contains("Victory!"), "{t}");
    assert!(t.contains("You reach level 2!"), "{t}");
    // Corridor 10 + elite 40 + boss 100, kept on the sheet.
    let t = say1(&mut c, &hero, "!char");
    assert!(
        t.starts_with("Level 2 (150 XP) · STR 15 (+2) · DEX 14 (+2)"),
        "{t}"
    );

    // Three lost rounds at the Main Hall.
    let loser = user_where("loser", |r| {
        (1..=3).all(|a| !wins_at(r, HALL, EncounterKind::Elite, a))
    });
    for cmd in [
        "!zone enter crypt_valdris",
        "!zone advance",
        "!zone advance",
        "!zone go 1",
    ] {
        say(&mut c, &loser, cmd);
    }
    let t = say1(&mut c, &loser, "!zone go 2");
    assert!(t.contains(ENCOUNTER_FIRST), "no way around the fight: {t}");
    say(&mut c, &loser, "!zone fight");
    let t = say1(&mut c, &loser, "!zone advance");
    assert!(t.contains("One more wound ends the run."), "{t}");
    let t = say1(&mut c, &loser, "!zone fight");
    assert!(t.contains("You are wounded (3 of 3)."), "{t}");
    assert!(
        t.contains("You fall in Main Hall. Your run ends in defeat."),
        "{t}"
    );
    let token = token_of(&say1(&mut c, &loser, "!zone map"));
    let v = c.get(&format!("/api/runs/{token}")).expect("view").json();
    assert_eq!(v["view"]["status"]["phase"]["outcome"], "defeat", "{v}");
    // The defeat is stored: another server on the database says the same.
    drop(c);
    server.stop().expect("stops");
    let (_server, mut c) = Ctx::new(dir.path()).spawn();
    let t = say1(&mut c, &loser, "!zone status");
    assert!(t.contains("This run is over: defeat."), "{t}");
    let t = say1(&mut c, &hero, "!char");
    assert!(t.starts_with("Level 2 (150 XP)"), "{t}");
}

/// The Crypt as another zone, `crypt_copy`, with its Main Hall called `hall`.
fn crypt_copy(hall: &str) -> String {
    support::zone_text("crypt_valdris")
        .replace("crypt_valdris", "crypt_copy")
        .replace("\"Main Hall\"", &format!("{hall:?}"))
}

/// Every file of `dir` with its text, sorted.
fn dir_state(dir: &Path) -> Vec<(String, String)> {
    let mut files: Vec<(String, String)> = std::fs::read_dir(dir)
        .expect("dir")
        .map(|e| {
            let p = e.expect("entry").path();
            let text = std::fs::read_to_string(&p).expect("text");
            (
                p.file_name().expect("name").to_string_lossy().into_owned(),
                text,
            )
        })
        .collect();
    files.sort();
    files
}

fn publish(c: &mut Conn, text: &str) -> zonegraph_server::client::Response {
    c.request(
        "POST",
        "/api/zones",
        &[("content-type", "application/json")],
        text.as_bytes(),
    )
    .expect("request")
}

fn zone_ids(c: &mut Conn) -> Vec<String> {
    c.get("/api/zones").expect("zones").json()["zones"]
        .as_array()
        .expect("zones")
        .iter()
        .map(|z| z["zone_id"].as_str().expect("id").to_string())
        .collect()
}

/// The labels of the rooms a run's view shows.
fn labels(c: &mut Conn, token: &str) -> Vec<String> {
    c.get(&format!("/api/runs/{token}")).expect("view").json()["view"]["rooms"]
        .as_array()
        .expect("rooms")
        .iter()
        .filter_map(|r| r["label"].as_str().map(str::to_string))
        .collect()
}

#[test]
fn a_published_zone_is_served_at_once_and_runs_keep_the_graph_they_started_with() {
    let dir = tempfile::tempdir().expect("temp dir");
    let zones = support::copy_zones(dir.path());
    let (_server, mut c) = Ctx::new(dir.path()).zones(zones.clone()).spawn();
    let before = zone_ids(&mut c);

    // A new zone: written as <zone_id>.json, served without a restart.
    let r = publish(&mut c, &crypt_copy("Main Hall"));
    assert_eq!(r.status, 200, "{}", r.text());
    let body = r.json();
    assert_eq!(body["published"], "crypt_copy");
    assert_eq!(body["file"], "crypt_copy.json");
    assert_eq!(body["replaced"], false);
    assert!(body["findings"]["zones"].is_array(), "{body}");
    assert_eq!(zone_ids(&mut c).len(), before.len() + 1);
    assert_eq!(
        std::fs::read_to_string(zones.join("crypt_copy.json")).expect("written"),
        crypt_copy("Main Hall")
    );
    let early = "@early:test";
    say(&mut c, early, "!zone enter crypt_copy");
    let early_token = token_of(&say1(&mut c, early, "!zone map"));
    say(&mut c, early, "!zone advance");
    say(&mut c, early, "!zone advance");
    assert!(labels(&mut c, &early_token).contains(&"Main Hall".to_string()));

    // Published again, changed: runs already on it keep the old graph; new runs get the new.
    let r = publish(&mut c, &crypt_copy("Great Hall"));
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["replaced"], true);
    assert_eq!(r.json()["file"], "crypt_copy.json");
    let old = labels(&mut c, &early_token);
    assert!(
        old.contains(&"Main Hall".to_string()) && !old.contains(&"Great Hall".to_string()),
        "{old:?}"
    );
    let status = say1(&mut c, early, "!zone status");
    assert!(status.contains("Main Hall"), "{status}");
    let late = "@late:test";
    say(&mut c, late, "!zone enter crypt_copy");
    let late_token = token_of(&say1(&mut c, late, "!zone map"));
    say(&mut c, late, "!zone advance");
    say(&mut c, late, "!zone advance");
    assert!(labels(&mut c, &late_token).contains(&"Great Hall".to_string()));
    let file = c.get("/api/zones/crypt_copy").expect("zone").json();
    assert!(file.to_string().contains("Great Hall"));
    // The early run plays on to its end on the graph it started with.
    let went = say1(&mut c, early, "!zone go 1");
    assert!(went.contains("Main Hall"), "{went}");
}

#[test]
fn a_zone_with_errors_is_not_published_and_nothing_changes() {
    let dir = tempfile::tempdir().expect("temp dir");
    let zones = support::copy_zones(dir.path());
    let (_server, mut c) = Ctx::new(dir.path()).zones(zones.clone()).spawn();
    let files_before = dir_state(&zones);
    let served_before = c.get("/api/zones").expect("zones").json();
    let crypt = support::zone_text("crypt_valdris");
    let broken_crypt = crypt.replacen("\"is_boss\": true", "\"is_boss\": false", 1);
    assert_ne!(broken_crypt, crypt, "the fixture has a boss to remove");
    for (what, text) in [
        ("not JSON", "{ not json".to_string()),
        ("a served zone made unwinnable", broken_crypt),
        // Its rooms' ids are the Crypt's: the zones served together refuse it.
        (
            "a new zone clashing with a served one",
            crypt.replacen(
                "\"zone_id\": \"crypt_valdris\"",
                "\"zone_id\": \"crypt_clash\"",
                1,
            ),
        ),
    ] {
        let r = publish(&mut c, &text);
        assert_eq!(r.status, 422, "{what}: {}", r.text());
        let body = r.json();
        let zones_json = body["zones"].as_array().expect("check --json's zones");
        let has_error = zones_json.iter().any(|z| {
            z["parse_error"].is_object()
                || z["diagnostics"]
                    .as_array()
                    .is_some_and(|d| d.iter().any(|d| d["severity"] == "error"))
        });
        assert!(has_error, "{what}: {body}");
        // Files are named as in the directory, not by where the server keeps them.
        assert!(
            !body.to_string().contains(&*dir.path().to_string_lossy()),
            "{what}: {body}"
        );
        assert_eq!(dir_state(&zones), files_before, "{what}: the files changed");
        assert_eq!(
            c.get("/api/zones").expect("zones").json(),
            served_before,
            "{what}: the zones served changed"
        );
    }
    let r = publish(
        &mut c,
        &crypt_copy("Main Hall").replace("\"crypt_copy\"", "\"../evil\""),
    );
    assert_eq!(r.status, 422, "{}", r.text());
    assert_eq!(dir_state(&zones), files_before);
    // Publishing needs the token.
    let r = c
        .request(
            "POST",
            "/api/zones",
            &[("authorization", "Bearer wrong")],
            b"{}",
        )
        .expect("request");
    assert_eq!(r.status, 401);
}

#[test]
fn sighup_reloads_the_zone_files_all_or_nothing() {
    let dir = tempfile::tempdir().expect("temp dir");
    let zones = support::copy_zones(dir.path());
    let mut p = spawn_process_in(&dir.path().join("z.db"), &zones);
    let mut c = Conn::connect(p.addr)
        .expect("connect")
        .with_token(Some(&p.token));
    let before = zone_ids(&mut c);
    let hup = |pid: u32| {
        let ok = std::process::Command::new("kill")
            .args(["-HUP", &pid.to_string()])
            .status()
            .expect("kill");
        assert!(ok.success());
    };
    // A new file is served after SIGHUP.
    std::fs::write(zones.join("crypt_copy.json"), crypt_copy("Main Hall")).expect("write");
    hup(p.child.id());
    let deadline = Instant::now() + Duration::from_secs(10);
    while !zone_ids(&mut c).contains(&"crypt_copy".to_string()) {
        assert!(Instant::now() < deadline, "SIGHUP did not reload");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(zone_ids(&mut c).len(), before.len() + 1);
    // A broken file refuses the whole reload: the good new file is not served either.
    std::fs::write(zones.join("zz_broken.json"), "{ not json").expect("write");
    std::fs::remove_file(zones.join("crypt_copy.json")).expect("remove");
    hup(p.child.id());
    std::thread::sleep(Duration::from_millis(500));
    assert!(zone_ids(&mut c).contains(&"crypt_copy".to_string()));
    assert_eq!(zone_ids(&mut c).len(), before.len() + 1);
    let r = c
        .command("@after-hup:test", "!zone enter crypt_copy", None)
        .expect("command");
    assert_eq!(r.status, 200);
    let _ = p.child.kill();
    let _ = p.child.wait();
}

/// The README's example host game (`examples/host.py`, Python's standard library only) run
/// for real: it keeps the sheet (level 3, STR 14) and decides the elite and the boss, its
/// words shown as it sends them. Skipped, saying so, where no `python3` is installed.
#[test]
fn the_example_host_game_decides_encounters() {
    let python = std::process::Command::new("python3")
        .arg("--version")
        .output();
    if !python.is_ok_and(|o| o.status.success()) {
        eprintln!("server: python3 not found; examples/host.py was not run");
        return;
    }
    let port = zonegraph_tests::free_port();
    struct Kill(std::process::Child);
    impl Drop for Kill {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let _host = Kill(
        std::process::Command::new("python3")
            .arg(root().join("examples/host.py"))
            .env("PORT", port.to_string())
            .env("ZONEGRAPH_HOST_HOOK_TOKEN", "let-me-in")
            .stdout(std::process::Stdio::null())
            .spawn()
            .expect("start examples/host.py"),
    );
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            std::time::Instant::now() < deadline,
            "examples/host.py did not listen"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let hook = zonegraph_server::host::HostHook::new(
        &format!("http://127.0.0.1:{port}"),
        Some("let-me-in".into()),
    )
    .expect("hook");
    let (server, mut conn) = Ctx::new(dir.path())
        .with(|c| c.game.host_hook = Some(hook))
        .spawn();
    let user = "@hosted:test";
    // The sheet is the host's.
    let t = say1(&mut conn, user, "!char");
    assert!(t.starts_with("Level 3"), "{t}");
    assert!(t.contains("STR 14"), "{t}");
    say1(&mut conn, user, "!zone enter crypt_valdris");
    let mut seen = String::new();
    for _ in 0..40 {
        let t = say1(&mut conn, user, "!zone advance");
        seen.push_str(&t);
        seen.push('\n');
        if t.contains("This run is over") || t.contains("victory") || t.contains("defeat") {
            break;
        }
        if t.contains("fork") || t.contains("Choose") {
            seen.push_str(&say1(&mut conn, user, "!zone go 1"));
        }
    }
    // The host's own words, as it sent them: a win ("You best the …") or a loss ("… is too
    // much for you this time."), decided by the host, not by zonegraph's dice.
    assert!(
        seen.contains("You best the") || seen.contains("is too much for you this time"),
        "{seen}"
    );
    server.stop().expect("stops");
}

/// The server as a real process with the API token it made beside its database at the first
/// start.
struct Served {
    process: Process,
    token: String,
}

impl std::ops::Deref for Served {
    type Target = Process;
    fn deref(&self) -> &Process {
        &self.process
    }
}

impl std::ops::DerefMut for Served {
    fn deref_mut(&mut self) -> &mut Process {
        &mut self.process
    }
}

/// Two stores on the SQLite file `dir/z.db`, and the settings of a sandbox server (players
/// edit their own sheets) with run ids `"{user}/{n}"`.
fn two_stores(dir: &Path) -> ([Arc<Store>; 2], CommandSettings) {
    let db = DbAt::Sqlite(dir.join("z.db"));
    let stores = [Arc::new(support::store(&db)), Arc::new(support::store(&db))];
    let settings = CommandSettings {
        public_url: "http://test".into(),
        fork_timeout_ms: 3_600_000,
        admins: Arc::default(),
        characters: CharacterRules::Sandbox,
        ..support::settings()
    };
    (stores, settings)
}
