//! Zone files: served from the tables as the files say, a start refused by a zone with errors
//! or by no zones at all, withdrawing a zone, publishing over HTTP (all or nothing; runs keep
//! the version they started on) and SIGHUP's reload.

use std::path::Path;
use std::time::{Duration, Instant};

use zonegraph_tests::client::Conn;

use super::{spawn_process_in, token_of};
use crate::support::{self, Ctx, say, say1};

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

/// A zone missing from the folder at a restart is still served (the database holds it);
/// withdrawing is an explicit act, refused while players are there unless forced; forced,
/// they are told, their runs go on to their end, and no new run starts there.
#[test]
fn a_zone_is_withdrawn_only_when_asked_and_its_runs_go_on() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db_path = dir.path().join("z.db");
    let both = support::copy_zones_of(dir.path(), "both", &["crypt_valdris", "mossback_warren"]);
    let later = support::copy_zones_of(dir.path(), "later", &["mossback_warren"]);
    let (stays, late) = ("@stays:test", "@late:test");
    let run_ids = support::per_user_run_ids();
    {
        let (_server, mut c) = Ctx::sqlite(&db_path)
            .zones(both)
            .with(|c| c.run_ids = run_ids.clone())
            .spawn();
        say(&mut c, stays, "!zone enter crypt_valdris");
        say(&mut c, stays, "!zone advance");
    }
    // The Crypt's file is gone from the folder: the Crypt is still served.
    let (server, mut c) = Ctx::sqlite(&db_path)
        .zones(later)
        .with(|c| c.run_ids = run_ids)
        .spawn();
    assert_eq!(zone_ids(&mut c), ["crypt_valdris", "mossback_warren"]);
    let t = say1(&mut c, stays, "!zone status");
    assert!(t.contains("Bone Corridor"), "{t}");

    // Withdrawn while a player is there: refused, nothing changes.
    let delete = |c: &mut Conn, path: &str, headers: &[(&str, &str)]| {
        c.request("DELETE", path, headers, b"").expect("request")
    };
    let r = delete(&mut c, "/api/zones/crypt_valdris", &[]);
    assert_eq!(r.status, 409, "{}", r.text());
    assert!(r.text().contains("force=true"), "{}", r.text());
    assert_eq!(zone_ids(&mut c).len(), 2);
    let r = delete(&mut c, "/api/zones/atlantis", &[]);
    assert_eq!(r.status, 404, "{}", r.text());
    let r = delete(&mut c, "/api/zones/crypt_valdris?force=maybe", &[]);
    assert_eq!(r.status, 400, "{}", r.text());

    // Forced: the player is told, and their run goes on.
    let r = delete(
        &mut c,
        "/api/zones/crypt_valdris?force=true",
        &[("x-zonegraph-by", "dora the designer")],
    );
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["players_told"], 1);
    assert_eq!(zone_ids(&mut c), ["mossback_warren"]);
    let told = c
        .command(stays, "!zone status", None)
        .expect("request")
        .json();
    let notices = told["notices"].to_string();
    assert!(
        notices.contains("has been withdrawn") && notices.contains("goes on"),
        "{told}"
    );
    let went = say1(&mut c, stays, "!zone advance");
    assert!(!went.contains("withdrawn"), "{went}");
    // No new run starts there.
    let t = say1(&mut c, late, "!zone enter crypt_valdris");
    assert!(!t.contains("You enter"), "{t}");
    let t = say1(&mut c, late, "!zone enter mossback_warren");
    assert!(t.contains("You enter"), "{t}");

    // The history says who did what.
    let h = c
        .get("/api/zones/crypt_valdris/versions")
        .expect("versions")
        .json();
    let versions = h["versions"].as_array().expect("versions");
    let last = versions.last().expect("a version");
    assert_eq!(last["withdrawn"], true, "{h}");
    assert_eq!(last["made_by"], "dora the designer", "{h}");
    assert_eq!(last["source"], "DELETE /api/zones", "{h}");
    assert!(
        versions[0]["source"]
            .as_str()
            .is_some_and(|s| s.starts_with("folder crypt_valdris")),
        "{h}"
    );
    drop(server);

    // A restart with the Crypt's old file back in the folder does not bring it back.
    let back = support::copy_zones_of(dir.path(), "back", &["crypt_valdris", "mossback_warren"]);
    let (server, mut c) = Ctx::sqlite(&db_path).zones(back).spawn();
    assert_eq!(zone_ids(&mut c), ["mossback_warren"]);
    assert!(
        server
            .opened
            .warnings
            .iter()
            .any(|w| w.contains("crypt_valdris.json") && w.contains("was withdrawn")),
        "{:?}",
        server.opened.warnings
    );
    let runs = server.store.all_runs().expect("runs");
    assert!(
        runs.iter()
            .all(|r| r.run.outcome.is_none() || r.run.zone_id == "mossback_warren"),
        "no run was ended by the withdrawal: {runs:#?}"
    );
}

#[test]
fn an_empty_folder_serves_the_database_and_nothing_at_all_refuses_the_start() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db_path = dir.path().join("z.db");
    let empty = dir.path().join("empty");
    std::fs::create_dir_all(&empty).expect("dir");
    std::fs::write(empty.join("notes.txt"), "not a zone").expect("write");
    // A new database and no zone anywhere: refused, naming the folder.
    let err = format!("{:#}", Ctx::sqlite(&db_path).zones(empty.clone()).refused());
    assert!(err.contains("holds no zone files"), "{err}");
    assert!(err.contains(&empty.display().to_string()), "{err}");
    {
        let (_server, mut c) = Ctx::sqlite(&db_path).spawn();
        say(&mut c, "@stays:test", "!zone enter crypt_valdris");
    }
    // An empty or missing folder then: the database's zones are served, and it is said.
    for folder in [empty.clone(), dir.path().join("missing")] {
        let (server, mut c) = Ctx::sqlite(&db_path).zones(folder.clone()).spawn();
        assert!(
            server
                .opened
                .warnings
                .iter()
                .any(|w| w.contains("holds no zone files")
                    && w.contains(&folder.display().to_string())),
            "{:?}",
            server.opened.warnings
        );
        assert_eq!(zone_ids(&mut c).len(), 7);
        let t = say1(&mut c, "@stays:test", "!zone status");
        assert!(t.contains("Crypt Threshold"), "{t}");
    }
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

fn publish(c: &mut Conn, text: &str) -> zonegraph_tests::client::Response {
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

/// A new zone's file must not be another zone's file, even in other case (a case-insensitive
/// file system would write over it), and an id ending in `.schema` (whose file would be the
/// folder's JSON Schema, never served) is refused; a publish leaves no temporary file.
#[test]
fn a_publish_never_writes_over_another_zones_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    let zones = support::copy_zones(dir.path());
    // The Belfry lives in a file whose name is crypt_copy's, in other case.
    std::fs::rename(
        zones.join("drowned_belfry.json"),
        zones.join("Crypt_Copy.json"),
    )
    .expect("rename");
    let (_server, mut c) = Ctx::new(dir.path()).zones(zones.clone()).spawn();
    let before = dir_state(&zones);
    let r = publish(&mut c, &crypt_copy("Main Hall"));
    assert_eq!(r.status, 409, "{}", r.text());
    let error = r.json()["error"].as_str().unwrap_or_default().to_string();
    assert!(
        error.contains("Crypt_Copy.json") && error.contains("another zone's file"),
        "{error}"
    );
    assert_eq!(dir_state(&zones), before, "nothing was written");
    let r = publish(
        &mut c,
        &crypt_copy("Main Hall").replace("\"crypt_copy\"", "\"zone.schema\""),
    );
    assert_eq!(r.status, 422, "{}", r.text());
    assert_eq!(dir_state(&zones), before);
    // Under another name it is published, and only its file is new.
    let r = publish(
        &mut c,
        &crypt_copy("Main Hall").replace("\"crypt_copy\"", "\"crypt_other\""),
    );
    assert_eq!(r.status, 200, "{}", r.text());
    let after: Vec<String> = dir_state(&zones).into_iter().map(|(n, _)| n).collect();
    let mut expected: Vec<String> = before.into_iter().map(|(n, _)| n).collect();
    expected.push("crypt_other.json".into());
    expected.sort();
    assert_eq!(after, expected, "no temporary file is left");
}

/// A publish token can no longer empty a zone players are in (a withdrawal in effect): a
/// version that removes a player's room, or a way on from it, is refused with how many
/// players it strands; `?force=true` needs the scope a withdrawal needs; forced, the runs
/// play on where they were, a run from before zone versions included. A version that
/// leaves every player's room and ways on is published as before. (Before: the stub was
/// published with a 200, and the run from before versions was moved onto it.)
#[test]
fn a_publish_that_strands_players_needs_force_and_the_withdraw_scope() {
    let dir = tempfile::tempdir().expect("temp dir");
    let zones = support::copy_zones(dir.path());
    let db = dir.path().join("z.db");
    let (_server, mut c) = Ctx::new(dir.path()).zones(zones.clone()).spawn();
    let publish_token = super::tokens::new_token(&db.to_string_lossy(), "publish");
    let as_publisher = |c: &mut Conn, text: &str, query: &str| {
        c.request(
            "POST",
            &format!("/api/zones{query}"),
            &[
                ("content-type", "application/json"),
                ("authorization", &format!("Bearer {publish_token}")),
            ],
            text.as_bytes(),
        )
        .expect("request")
    };
    let (stay, old) = ("@stay:test", "@old:test");
    for p in [stay, old] {
        say(&mut c, p, "!zone enter crypt_valdris");
        say(&mut c, p, "!zone advance");
    }
    let room = |c: &mut Conn, p: &str| say1(c, p, "!zone status");
    let (stay_was, old_was) = (room(&mut c, stay), room(&mut c, old));
    // @old's run is from before zone versions: it has none.
    rusqlite::Connection::open(&db)
        .expect("db")
        .execute(
            "UPDATE dnd_zone_run SET zone_file_seq = NULL WHERE user_id = ?1",
            [old],
        )
        .expect("unversioned");

    // A change that keeps every player's room and ways on: published as before.
    let renamed = support::zone_text("crypt_valdris").replace("Crypt of Valdris", "Valdris Crypt");
    let r = as_publisher(&mut c, &renamed, "");
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["players_affected"], 0, "{}", r.text());

    // A stub of another zone's rooms under the crypt's id.
    let stub = support::zone_text("cinder_spire").replace("\"cinder_spire\"", "\"crypt_valdris\"");
    let r = as_publisher(&mut c, &stub, "");
    assert_eq!(r.status, 409, "{}", r.text());
    let err = r.json()["error"].as_str().unwrap_or_default().to_string();
    assert!(
        err.contains("2 player(s)") && err.contains("force=true"),
        "{err}"
    );
    let served = c.get("/api/zones/crypt_valdris").expect("zone").text();
    assert!(served.contains("Valdris Crypt"), "nothing was changed");
    let r = as_publisher(&mut c, &stub, "?force=true");
    assert_eq!(r.status, 403, "a publish token cannot force: {}", r.text());

    // The operator may: the players play on where they were.
    let r = c
        .request(
            "POST",
            "/api/zones?force=true",
            &[("content-type", "application/json")],
            stub.as_bytes(),
        )
        .expect("request");
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["players_affected"], 2, "{}", r.text());
    assert_eq!(room(&mut c, stay), stay_was);
    assert_eq!(
        room(&mut c, old),
        old_was,
        "the unversioned run kept its graph"
    );
    for p in [stay, old] {
        let t = say1(&mut c, p, "!zone advance");
        assert!(!t.to_lowercase().contains("error"), "{p}: {t}");
    }
}
