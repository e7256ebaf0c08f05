//! Play insight from a server's database: `GET /api/zones/{zone_id}/insight` (publish scope)
//! and `zonegraph insight --db … ZONE`, over runs played through the HTTP API, runs moved to
//! the history included.

use std::time::{Duration, Instant};

use serde_json::Value;

use crate::server::tokens::new_token;
use crate::support::{Ctx, say1};

fn get(c: &mut zonegraph_tests::client::Conn, path: &str, token: &str) -> (u16, Value) {
    let auth = format!("Bearer {token}");
    let r = c
        .request("GET", path, &[("authorization", auth.as_str())], b"")
        .expect("request");
    let v = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
    (r.status, v)
}

#[test]
fn insight_reads_played_and_archived_runs_for_designers_only() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("z.db");
    let (server, mut c) = Ctx::new(dir.path()).spawn();
    // 24 runs of one player that each go one room and are abandoned, then 6 players who go
    // through the first fork's first way.
    let ada = "@ada:test";
    for _ in 0..24 {
        say1(&mut c, ada, "!zone enter crypt_valdris");
        say1(&mut c, ada, "!zone advance");
        say1(&mut c, ada, "!zone abandon");
    }
    for p in 0..6 {
        let user = format!("@p{p}:test");
        say1(&mut c, &user, "!zone enter crypt_valdris");
        say1(&mut c, &user, "!zone advance");
        say1(&mut c, &user, "!zone advance");
        say1(&mut c, &user, "!zone go 1");
    }
    // The oldest 4 of Ada's ended runs leave the run table for the history.
    assert_eq!(
        server
            .store
            .archive_runs(100, zonegraph_server::clock::now_ms())
            .expect("archive"),
        4
    );

    let db_arg = db.to_string_lossy().into_owned();
    let publish = new_token(&db_arg, "publish");
    let transport = new_token(&db_arg, "transport:@");
    let (status, v) = get(&mut c, "/api/zones/crypt_valdris/insight", &publish);
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["zone_id"], "crypt_valdris");
    assert_eq!(v["runs"], 30, "the archived runs count: {v}");
    assert_eq!(v["outcomes"]["abandoned"], 24);
    assert_eq!(v["outcomes"]["active"], 6);
    let corridor = v["rooms"]
        .as_array()
        .expect("rooms")
        .iter()
        .find(|r| r["id"] == "crypt_valdris.corridor")
        .expect("the corridor");
    assert_eq!(corridor["reached"], 30);
    assert_eq!(corridor["ended_here"]["abandoned"], 24);
    let fork = &v["forks"][0];
    assert_eq!(fork["at"], "crypt_valdris.fork");
    assert_eq!(fork["ways"][0]["taken"], 6);
    assert!(
        !v.to_string().contains("@ada"),
        "a player id in the insight"
    );

    // Designers' data: a transport token may not read it; a bad query is told.
    let (status, v) = get(&mut c, "/api/zones/crypt_valdris/insight", &transport);
    assert_eq!(status, 403, "{v}");
    let (status, v) = get(
        &mut c,
        "/api/zones/crypt_valdris/insight?since=last-week",
        &publish,
    );
    assert_eq!(status, 400);
    assert!(v.to_string().contains("YYYY-MM-DD"), "{v}");
    let (status, _) = get(&mut c, "/api/zones/nowhere/insight", &publish);
    assert_eq!(status, 404);
    // A day after every run: none.
    let (status, v) = get(
        &mut c,
        "/api/zones/crypt_valdris/insight?since=9999-12-31",
        &publish,
    );
    assert_eq!((status, &v["runs"]), (200, &Value::from(0)));
    server.stop().expect("stops");

    // The command line reads the same database, as text and as JSON.
    let cli = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_zonegraph-under-test"))
            .arg("insight")
            .args(["--db", db_arg.as_str()])
            .args(args)
            .env_remove("ZONEGRAPH_DATABASE_URL")
            .output()
            .expect("zonegraph insight runs")
    };
    let out = cli(&["crypt_valdris"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("30 runs: abandoned 24, active 6"), "{text}");
    insta::assert_snapshot!("insight_text", text);
    let out = cli(&["crypt_valdris", "--json"]);
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(v["runs"], 30);
    let out = cli(&["crypt_valdris", "--version", "999"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no version 999"));
}

fn review(
    c: &mut zonegraph_tests::client::Conn,
    zone: &str,
    token: &str,
    body: &str,
) -> (u16, Value) {
    let auth = format!("Bearer {token}");
    let r = c
        .request(
            "POST",
            &format!("/api/zones/{zone}/review"),
            &[
                ("authorization", auth.as_str()),
                ("content-type", "application/json"),
            ],
            body.as_bytes(),
        )
        .expect("request");
    let v = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
    (r.status, v)
}

/// The crypt file with `edit` applied to its JSON.
fn crypt_with(edit: impl FnOnce(&mut Value)) -> String {
    let mut file: Value =
        serde_json::from_str(&crate::support::zone_text("crypt_valdris")).expect("JSON");
    edit(&mut file);
    file.to_string()
}

#[test]
fn review_tells_the_players_now_and_replays_the_stored_runs_before_publishing() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("z.db");
    let (server, mut c) = Ctx::new(dir.path()).spawn();
    // 6 players wait at the fork; 7 went its first way and stand in the main hall; 5 runs
    // ended (abandoned in the corridor).
    for p in 0..13 {
        let user = format!("@p{p}:test");
        say1(&mut c, &user, "!zone enter crypt_valdris");
        say1(&mut c, &user, "!zone advance");
        say1(&mut c, &user, "!zone advance");
        if p >= 6 {
            say1(&mut c, &user, "!zone go 1");
        }
    }
    for _ in 0..5 {
        say1(&mut c, "@ada:test", "!zone enter crypt_valdris");
        say1(&mut c, "@ada:test", "!zone advance");
        say1(&mut c, "@ada:test", "!zone abandon");
    }
    let db_arg = db.to_string_lossy().into_owned();
    let publish = new_token(&db_arg, "publish");
    let transport = new_token(&db_arg, "transport:@");

    // The main hall removed: 7 stand in it, 6 wait at a fork with a way into it.
    let no_hall = crypt_with(|f| {
        let hall = "crypt_valdris.main_hall";
        f["nodes"]
            .as_array_mut()
            .expect("nodes")
            .retain(|n| n["node_id"] != hall);
        f["edges"]
            .as_array_mut()
            .expect("edges")
            .retain(|e| e["from_node"] != hall && e["to_node"] != hall);
    });
    let (_, versions) = get(&mut c, "/api/zones/crypt_valdris/versions", &publish);
    let seq = versions["versions"][0]["seq"]
        .as_i64()
        .expect("the served version");
    let (status, v) = review(&mut c, "crypt_valdris", &publish, &no_hall);
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["version"], seq);
    assert_eq!(
        v["impact"]["changes"]["rooms_removed"][0],
        "crypt_valdris.main_hall"
    );
    let p = &v["players"];
    assert_eq!(p["active"], 13, "{p}");
    assert_eq!(p["touched"], 13);
    assert_eq!(p["stands_in_removed"], 7);
    assert_eq!(p["fork_into_removed"], 6);
    assert_eq!(p["rooms"][0]["room"], "crypt_valdris.main_hall");
    assert_eq!(p["rooms"][0]["why"], "stands_in_removed");
    // The replay: the 5 ended runs, each reproduced on its own version and unchanged (they
    // never reached the hall); the 13 still going are the players above, not replayed.
    let r = &v["replay"];
    assert_eq!(r["runs"], 5, "{r}");
    assert_eq!(r["still_going"], 13, "{r}");
    assert_eq!(r["not_reproduced"], 0, "{r}");
    assert_eq!(r["unchanged"], 5, "{r}");
    let words = v["words"].as_array().expect("words");
    assert!(
        words[0]
            .as_str()
            .expect("text")
            .starts_with(&format!("13 runs in version {seq} now; 13 touched by this change: 7 stand in a room this change removes, 6 wait at a fork with a way it removes")),
        "{words:?}"
    );
    assert!(
        words[0]
            .as_str()
            .expect("text")
            .contains(&format!("keep playing version {seq}"))
    );
    assert!(
        !v.to_string().contains("@"),
        "a player id in the review: {v}"
    );

    // A lock on the fork's first way: the 6 at the fork are touched, not the 7 past it.
    let locked = crypt_with(|f| {
        for e in f["edges"].as_array_mut().expect("edges") {
            if e["to_node"] == "crypt_valdris.main_hall" {
                e["lock_kind"] = "level_min".into();
                e["lock_data"] = serde_json::json!({"min_level": 9});
            }
        }
    });
    let (status, v) = review(&mut c, "crypt_valdris", &publish, &locked);
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["players"]["fork_into_locked"], 6, "{v}");
    assert_eq!(v["players"]["touched"], 6);
    assert_eq!(
        v["impact"]["changes"]["locks_added"][0]["after"],
        "level_min"
    );

    // Refused: no zone, no zone file, not JSON, not a designer's token. Nothing is written.
    let (status, _) = review(&mut c, "nowhere", &publish, &locked);
    assert_eq!(status, 404);
    let (status, v) = review(&mut c, "crypt_valdris", &publish, "{\"zone_id\": 7");
    assert_eq!(status, 422, "{v}");
    assert!(
        v["error"].as_str().expect("error").contains("line 1"),
        "{v}"
    );
    let (status, _) = review(&mut c, "crypt_valdris", &transport, &locked);
    assert_eq!(status, 403);
    let auth = format!("Bearer {publish}");
    let r = c
        .request(
            "POST",
            "/api/zones/crypt_valdris/review",
            &[
                ("authorization", auth.as_str()),
                ("content-type", "text/plain"),
            ],
            locked.as_bytes(),
        )
        .expect("request");
    assert_eq!(r.status, 415);
    let (status, v) = get(&mut c, "/api/zones/crypt_valdris/versions", &publish);
    assert_eq!(status, 200);
    assert_eq!(v["versions"].as_array().expect("versions").len(), 1, "{v}");
    server.stop().expect("stops");

    // The command line: the diff's words, then the review's; exit 1 (something changes).
    let new = dir.path().join("no_hall.json");
    std::fs::write(&new, &no_hall).expect("write");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_zonegraph-under-test"))
        .args(["review", "--db", db_arg.as_str(), "crypt_valdris"])
        .arg(&new)
        .env_remove("ZONEGRAPH_DATABASE_URL")
        .output()
        .expect("zonegraph review runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains("room removed: crypt_valdris.main_hall"),
        "{text}"
    );
    assert!(
        text.contains("7 stand in a room this change removes"),
        "{text}"
    );
    assert!(text.contains("Replayed on the new version"), "{text}");
    insta::assert_snapshot!(
        "review_text",
        text.replace(&new.display().to_string(), "NEW")
            .replace(&db_arg, "DB")
    );
}

/// A new database at `db` with the shipped zones and `n` runs of the crypt's served version
/// stored (played in memory, [`zonegraph_tests::seed`]); the runs, and how long playing them
/// took.
fn seeded(db: &std::path::Path, n: usize) -> (Vec<zonegraph_core::engine::Run>, Duration) {
    use zonegraph_server::db::{Database, DbAt, Upgrade};
    let database = Database::open_as(&DbAt::Sqlite(db.to_path_buf()), Upgrade::Migrate)
        .expect("a new database");
    zonegraph_server::store::catalog::Catalog::open(&database, &crate::support::zones())
        .expect("the zones are imported");
    let seq = database
        .read(|tx| tx.versions_of("crypt_valdris"))
        .expect("versions")
        .last()
        .expect("the crypt was imported")
        .seq;
    let (zone, _) = zonegraph_core::zone::load(&crate::support::zone_text("crypt_valdris"))
        .expect("the crypt loads");
    let started = Instant::now();
    let runs = zonegraph_tests::seed::played_runs(&zone, n);
    let played = started.elapsed();
    zonegraph_tests::seed::store_runs(&database, seq, &runs).expect("stored");
    (runs, played)
}

/// Issue 41, finding 1: a review read and replayed every stored run of the version, however
/// many. Now it replays the most recent `--review-runs` ended runs and says how many older
/// ones it left out. (Before: `replay.runs` was all 60, and no `left_out`.)
#[test]
fn a_review_replays_the_most_recent_runs_and_says_how_many_it_left_out() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("z.db");
    let (runs, _) = seeded(&db, 60);
    let ended = runs.iter().filter(|r| r.is_over()).count();
    assert!(ended > 45, "most seeded runs end: {ended}");
    let (server, mut c) = Ctx::new(dir.path())
        .with(|c| c.limits.review_runs = 40)
        .spawn();
    let publish = new_token(&db.to_string_lossy(), "publish");
    let (status, v) = review(&mut c, "crypt_valdris", &publish, &crypt_with(|_| {}));
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["replay"]["runs"], 40, "{v}");
    assert_eq!(v["left_out"], ended - 40, "{v}");
    let words = v["words"].to_string();
    assert!(
        words.contains(&format!(
            "(the most recent; {} older are not replayed)",
            ended - 40
        )),
        "{words}"
    );
    // Every run still going is among the players now, whatever the cap.
    assert_eq!(v["players"]["active"], runs.len() - ended, "{v}");
    server.stop().expect("stops");
}

/// Issue 41, finding 1: nothing capped concurrent reviews, and a review kept replaying after
/// its request had timed out. Now a second review of a zone while one runs is told 429 with
/// `Retry-After`, and a review whose request ended (here: the request limit, 250 ms) stops
/// before its next run: the zone is free again long before the replay would have ended
/// (within a quarter of the time playing the runs took; replaying them takes at least that).
#[test]
fn one_review_of_a_zone_at_a_time_and_a_review_nobody_waits_for_stops() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("z.db");
    let (_, played) = seeded(&db, 4_000);
    let (server, mut c) = Ctx::new(dir.path())
        .with(|c| {
            c.limits.review_runs = 4_000;
            c.limits.request_timeout = Duration::from_millis(250);
        })
        .spawn();
    let publish = new_token(&db.to_string_lossy(), "publish");
    let service = server.state.service.clone();
    let first = {
        let (addr, publish) = (server.addr, publish.clone());
        std::thread::spawn(move || {
            let mut c = zonegraph_tests::client::Conn::connect(addr).expect("connect");
            let (status, _) = review(&mut c, "crypt_valdris", &publish, &crypt_with(|_| {}));
            (status, Instant::now())
        })
    };
    while !service.is_reviewing("crypt_valdris") {
        assert!(
            !first.is_finished(),
            "the first review ended before it was seen"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    let auth = format!("Bearer {publish}");
    let second = c
        .request(
            "POST",
            "/api/zones/crypt_valdris/review",
            &[
                ("authorization", auth.as_str()),
                ("content-type", "application/json"),
            ],
            crypt_with(|_| {}).as_bytes(),
        )
        .expect("request");
    assert_eq!(second.status, 429, "{}", second.text());
    assert_eq!(second.header("retry-after"), Some("2"));
    assert!(second.text().contains("a review of"), "{}", second.text());

    let (status, timed_out_at) = first.join().expect("the first review");
    assert_eq!(
        status, 503,
        "the request limit ended the first review's request"
    );
    while service.is_reviewing("crypt_valdris") {
        assert!(
            timed_out_at.elapsed() < played / 4,
            "the review went on after its request ended ({:?}; playing the runs took {played:?})",
            timed_out_at.elapsed()
        );
        std::thread::sleep(Duration::from_millis(2));
    }
    server.stop().expect("stops");
}
