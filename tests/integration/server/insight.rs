//! Play insight from a server's database: `GET /api/zones/{zone_id}/insight` (publish scope)
//! and `zonegraph insight --db … ZONE`, over runs played through the HTTP API, runs moved to
//! the history included.

use serde_json::Value;

use crate::server::tokens::new_token;
use crate::support::{Ctx, say1};

fn get(c: &mut zonegraph_server::client::Conn, path: &str, token: &str) -> (u16, Value) {
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
            .archive_runs(100, zonegraph_server::store::now_ms())
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
    assert!(text.contains("30 runs (abandoned 24, active 6)"), "{text}");
    let out = cli(&["crypt_valdris", "--json"]);
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(v["runs"], 30);
    let out = cli(&["crypt_valdris", "--version", "999"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no version 999"));
}
