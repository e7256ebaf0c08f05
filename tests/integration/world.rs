//! One world across instances: `zonegraph serve` processes (no shared memory) on one
//! throwaway PostgreSQL, each with a zones folder of its own (skipped with a message where
//! PostgreSQL is not installed). A zone published on one is served by all; a restart with an
//! older folder undoes nothing; a run keeps the version it started on across restarts and
//! instances; a run page on one instance follows moves made on another, with LISTEN/NOTIFY
//! and without it (missed notifications are caught up by polling).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::Value;
use zonegraph_tests::client::Conn;
use zonegraph_tests::postgres;

use crate::server::runs::{events_until, try_events};
use crate::support::{self, Process, TOKEN, replies};

/// An instance: a process with its own folder, its stderr kept in `dir/stderr.log`.
struct Instance {
    p: Process,
    dir: PathBuf,
}

impl Instance {
    /// Starts `zonegraph serve` on `url` with the zones folder `dir/zones` (a copy of the
    /// shipped zones made on first use) and `extra` arguments.
    fn start(url: &str, dir: &Path, extra: &[&str]) -> Instance {
        if !dir.join("zones").is_dir() {
            support::copy_zones(dir);
        }
        let mut c = support::serve_command(&dir.join("zones"), dir);
        c.env("ZONEGRAPH_DATABASE_URL", url)
            .env("ZONEGRAPH_API_TOKEN", TOKEN)
            .args(extra);
        Instance {
            p: Process::spawn_logged(c, &dir.join("stderr.log")),
            dir: dir.to_path_buf(),
        }
    }

    fn conn(&self) -> Conn {
        Conn::connect(self.p.addr)
            .expect("connect")
            .with_token(Some(TOKEN))
    }

    fn stop(mut self) -> PathBuf {
        let _ = self.p.child.kill();
        let _ = self.p.child.wait();
        std::mem::take(&mut self.dir)
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("stderr.log")).unwrap_or_default()
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        let _ = self.p.child.kill();
        let _ = self.p.child.wait();
    }
}

fn say(c: &mut Conn, user: &str, text: &str) -> String {
    let r = c.command(user, text, None).expect("request");
    assert_eq!(r.status, 200, "{text}: {}", r.text());
    replies(&r.json())
}

/// `(zone_id, version)` of every zone served.
fn served(c: &mut Conn) -> Vec<(String, i64)> {
    let list = c.get("/api/zones").expect("zones").json();
    list["zones"]
        .as_array()
        .expect("zones")
        .iter()
        .map(|z| {
            (
                z["zone_id"].as_str().expect("id").to_string(),
                z["version"]["seq"].as_i64().expect("a version"),
            )
        })
        .collect()
}

/// Polls `f` until it holds or `within` has passed; whether it held.
fn eventually(within: Duration, mut f: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + within;
    loop {
        if f() {
            return true;
        }
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn publish(c: &mut Conn, text: &str) -> Value {
    publish_at(c, "/api/zones", text)
}

/// [`publish`] at `path` (`/api/zones?force=true` over players it strands).
fn publish_at(c: &mut Conn, path: &str, text: &str) -> Value {
    let r = c
        .request(
            "POST",
            path,
            &[("content-type", "application/json")],
            text.as_bytes(),
        )
        .expect("publish");
    assert_eq!(r.status, 200, "{}", r.text());
    r.json()
}

/// The Crypt with its Main Hall renamed.
fn crypt_with_hall(hall: &str) -> String {
    support::zone_text("crypt_valdris").replace("\"Main Hall\"", &format!("{hall:?}"))
}

/// The Crypt without its Bone Corridor: the entry leads straight to the fork.
fn crypt_without_corridor() -> String {
    let mut v: Value = serde_json::from_str(&support::zone_text("crypt_valdris")).expect("json");
    let corridor = "crypt_valdris.corridor";
    v["nodes"]
        .as_array_mut()
        .expect("nodes")
        .retain(|n| n["node_id"] != corridor);
    let edges = v["edges"].as_array_mut().expect("edges");
    edges.retain(|e| e["from_node"] != corridor && e["to_node"] != corridor);
    edges.insert(
        0,
        serde_json::json!({"from_node": "crypt_valdris.entry", "to_node": "crypt_valdris.fork"}),
    );
    serde_json::to_string_pretty(&v).expect("json")
}

fn token_of(map_reply: &str) -> String {
    let at = map_reply.find("/run/").expect("a run-map link") + 5;
    map_reply[at..at + 32].to_string()
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
fn a_zone_published_on_one_instance_is_served_by_all_and_no_folder_undoes_it() {
    let Some(cluster) = postgres::shared() else {
        return;
    };
    let url = cluster.fresh_db();
    let dir = tempfile::tempdir().expect("temp dir");
    let a = Instance::start(&url, &dir.path().join("a"), &[]);
    let b = Instance::start(&url, &dir.path().join("b"), &[]);
    let (mut ca, mut cb) = (a.conn(), b.conn());
    assert_eq!(served(&mut ca), served(&mut cb), "both start on one set");

    // A new zone published through A: B serves it, within 2 s, and plays it.
    let copy = support::zone_text("crypt_valdris")
        .replace("\"crypt_valdris", "\"crypt_copy")
        .replace("Crypt of Valdris", "Copied Crypt");
    let p = publish(&mut ca, &copy);
    let seq = p["seq"].as_i64().expect("seq");
    assert!(
        eventually(Duration::from_secs(2), || served(&mut cb)
            .contains(&("crypt_copy".into(), seq))),
        "B does not serve the zone A published: {:?}",
        served(&mut cb)
    );
    let t = say(&mut cb, "@visitor:test", "!zone enter crypt_copy");
    assert!(t.contains("Copied Crypt"), "{t}");
    assert!(
        a.dir.join("zones/crypt_copy.json").is_file(),
        "A's folder has it"
    );
    assert!(
        !b.dir.join("zones/crypt_copy.json").exists(),
        "B's folder is B's"
    );

    // A served zone changed through A.
    let p = publish(&mut ca, &crypt_with_hall("Great Hall"));
    let great = p["seq"].as_i64().expect("seq");
    assert!(eventually(Duration::from_secs(2), || served(&mut cb)
        .contains(&("crypt_valdris".into(), great))));

    // B restarts with its older folder: nothing is undone, and the start names the file.
    let b_dir = b.stop();
    let b = Instance::start(&url, &b_dir, &[]);
    let mut cb = b.conn();
    let after = served(&mut cb);
    assert!(
        after.contains(&("crypt_valdris".into(), great)),
        "{after:?}"
    );
    assert!(after.iter().any(|(id, _)| id == "crypt_copy"), "{after:?}");
    assert_eq!(served(&mut ca), after, "the two agree");
    let log = b.log();
    assert!(
        log.contains("crypt_valdris.json") && log.contains("older version"),
        "{log}"
    );
    // The file A's folder has is the version served: A's restart imports nothing either.
    let logged = a.log().len();
    let a_dir = a.stop();
    let a = Instance::start(&url, &a_dir, &[]);
    let mut ca = a.conn();
    assert_eq!(served(&mut ca), after);
    let restart = a.log()[logged..].to_string();
    assert!(!restart.contains("imported"), "{restart}");
    assert!(!restart.contains("older"), "{restart}");

    // An edit made in B's folder after the version served is imported, and A serves it.
    std::fs::write(
        b.dir.join("zones/crypt_valdris.json"),
        crypt_with_hall("Grand Hall"),
    )
    .expect("edit");
    let hup = std::process::Command::new("kill")
        .args(["-HUP", &b.p.child.id().to_string()])
        .status()
        .expect("kill");
    assert!(hup.success());
    assert!(eventually(Duration::from_secs(5), || {
        let file = ca.get("/api/zones/crypt_valdris").expect("zone").text();
        file.contains("Grand Hall")
    }));
    let history = ca
        .get("/api/zones/crypt_valdris/versions")
        .expect("history")
        .json();
    let sources: Vec<&str> = history["versions"]
        .as_array()
        .expect("versions")
        .iter()
        .filter_map(|v| v["source"].as_str())
        .collect();
    assert_eq!(
        sources,
        [
            "folder crypt_valdris.json",
            "POST /api/zones",
            "folder crypt_valdris.json"
        ],
        "{history}"
    );
}

/// The command that moves a run on from what its view says.
fn next_move(view: &Value) -> Option<&'static str> {
    let status = &view["view"]["status"];
    let phase = status["phase"].to_string();
    if phase.contains("over") {
        None
    } else if phase.contains("fork") {
        Some("!zone go 1")
    } else if phase.contains("waiting") {
        Some("!zone abandon")
    } else if status.get("encounter").is_some_and(|e| !e.is_null()) {
        Some("!zone fight")
    } else {
        Some("!zone advance")
    }
}

#[test]
fn a_run_keeps_the_version_it_started_on_across_restarts_and_instances() {
    let Some(cluster) = postgres::shared() else {
        return;
    };
    let url = cluster.fresh_db();
    let dir = tempfile::tempdir().expect("temp dir");
    let a = Instance::start(&url, &dir.path().join("a"), &[]);
    let b = Instance::start(&url, &dir.path().join("b"), &[]);
    let (mut ca, mut cb) = (a.conn(), b.conn());
    let early = "@early:test";
    say(&mut cb, early, "!zone enter crypt_valdris");
    let t = say(&mut cb, early, "!zone advance");
    assert!(t.contains("Bone Corridor"), "{t}");
    let token = token_of(&say(&mut cb, early, "!zone map"));

    // A version without the room the player stands in, published through A.
    // Forced: the corridor is the player's room (the operator's token may).
    publish_at(&mut ca, "/api/zones?force=true", &crypt_without_corridor());
    // Every instance restarts.
    let (a_dir, b_dir) = (a.stop(), b.stop());
    let a = Instance::start(&url, &a_dir, &[]);
    let b = Instance::start(&url, &b_dir, &[]);
    let (mut ca, mut cb) = (a.conn(), b.conn());

    // The early player is still in the Bone Corridor, and plays to the end there, through
    // either instance.
    let t = say(&mut ca, early, "!zone status");
    assert!(t.contains("Bone Corridor"), "{t}");
    let mut said = Vec::new();
    let mut over = false;
    for i in 0..60 {
        let c = if i % 2 == 0 { &mut ca } else { &mut cb };
        let view = c.get(&format!("/api/runs/{token}")).expect("view").json();
        let Some(m) = next_move(&view) else {
            over = true;
            break;
        };
        let t = say(c, early, m);
        assert!(!t.contains("went wrong"), "{m}: {t}");
        said.push(format!("{m}: {t}"));
    }
    assert!(over, "the run did not end: {said:#?}");
    assert!(
        labels(&mut cb, &token).contains(&"Bone Corridor".to_string()),
        "{said:#?}"
    );

    // A new run is on the new version: the entry leads straight to the fork.
    let late = "@late:test";
    say(&mut cb, late, "!zone enter crypt_valdris");
    let t = say(&mut ca, late, "!zone advance");
    assert!(t.contains("Branching Passage"), "{t}");
    let late_token = token_of(&say(&mut cb, late, "!zone map"));
    assert!(!labels(&mut ca, &late_token).contains(&"Bone Corridor".to_string()));
}

/// The run page's stream on `page` hears a move made on `mover` (every move of five in a
/// row: the last view always arrives).
fn page_follows_moves_made_elsewhere(page_args: &[&str]) {
    let Some(cluster) = postgres::shared() else {
        return;
    };
    let url = cluster.fresh_db();
    let dir = tempfile::tempdir().expect("temp dir");
    let page = Instance::start(&url, &dir.path().join("page"), page_args);
    let mover = Instance::start(&url, &dir.path().join("mover"), &[]);
    let mut cm = mover.conn();
    let user = "@walker:test";
    say(&mut cm, user, "!zone enter crypt_valdris");
    let token = token_of(&say(&mut cm, user, "!zone map"));
    let (status, head, mut events) = try_events(page.p.addr, &token);
    assert!(status.starts_with("HTTP/1.1 200"), "{head}");
    let first = events_until(&mut events, Duration::from_secs(5), |_| true).expect("first view");
    assert_eq!(first["view"]["status"]["room_number"], 1, "{first}");
    // One move: heard.
    say(&mut cm, user, "!zone advance");
    let moved = events_until(&mut events, Duration::from_secs(5), |v| {
        v["view"]["status"]["room_number"] == 2
    });
    assert!(moved.is_some(), "the page did not hear the move");
    // Moves in a row: the page ends on the last.
    say(&mut cm, user, "!zone advance");
    let t = say(&mut cm, user, "!zone go 1");
    assert!(t.contains("Main Hall"), "{t}");
    let last = events_until(&mut events, Duration::from_secs(5), |v| {
        v["view"]["status"]["label"] == "Main Hall"
    });
    assert!(
        last.is_some(),
        "the page did not catch up with the last move"
    );
}

#[test]
fn a_run_page_follows_moves_made_on_another_instance() {
    page_follows_moves_made_elsewhere(&[]);
}

/// Behind a pooler no notification reaches the page's instance: polling alone catches up.
#[test]
fn a_run_page_without_notifications_still_loses_no_update() {
    page_follows_moves_made_elsewhere(&["--no-listen"]);
}

/// A scoped token made with `zonegraph token new` on the shared database works on every
/// instance at its first use, and once revoked is refused by every instance within 3 s.
#[test]
fn a_scoped_token_is_known_and_revoked_on_every_instance() {
    use crate::server::tokens::{new_token, token_cmd};
    let Some(cluster) = postgres::shared() else {
        return;
    };
    let url = cluster.fresh_db();
    let dir = tempfile::tempdir().expect("temp dir");
    let a = Instance::start(&url, &dir.path().join("a"), &[]);
    let b = Instance::start(&url, &dir.path().join("b"), &[]);
    let token = new_token(&url, "transport:discord:");
    let conn = |i: &Instance| Conn::connect(i.p.addr).expect("connect");
    for i in [&b, &a] {
        let r = conn(i)
            .command("discord:7", "!zone status", Some(&token))
            .expect("request");
        assert_eq!(r.status, 200, "{}", r.text());
        let r = conn(i)
            .command("@a:test", "!zone status", Some(&token))
            .expect("request");
        assert_eq!(r.status, 403, "{}", r.text());
    }
    let out = token_cmd(&url, &["revoke", &token[4..12]]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for i in [&a, &b] {
        assert!(
            eventually(Duration::from_secs(3), || conn(i)
                .command("discord:7", "!zone status", Some(&token))
                .expect("request")
                .status
                == 401),
            "an instance still takes the revoked token"
        );
    }
}

/// `--events-url` on two instances of one database: each event is sent once, by one of them
/// (an instance claims an event before sending it), and each player's events arrive in the
/// order they happened, whichever instance served the command.
#[test]
fn two_instances_send_each_event_once_in_order_per_player() {
    use wiremock::matchers::method;
    use wiremock::{Mock, MockServer, ResponseTemplate};
    let Some(cluster) = postgres::shared() else {
        return;
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let host = rt.block_on(MockServer::start());
    rt.block_on(
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(200))
            .mount(&host),
    );
    let url = cluster.fresh_db();
    let dir = tempfile::tempdir().expect("temp dir");
    let events_url = format!("{}/events", host.uri());
    let args = ["--events-url", events_url.as_str()];
    // The secret reaches each process through its environment, as an operator sets it.
    let start = |name: &str| {
        let home = dir.path().join(name);
        support::copy_zones(&home);
        let mut c = support::serve_command(&home.join("zones"), &home);
        c.env("ZONEGRAPH_DATABASE_URL", &url)
            .env("ZONEGRAPH_API_TOKEN", TOKEN)
            .env("ZONEGRAPH_EVENTS_SECRET", "two-instances-share-this-secret")
            .args(args);
        Instance {
            p: Process::spawn_logged(c, &home.join("stderr.log")),
            dir: home,
        }
    };
    let a = start("a");
    let b = start("b");
    let (mut ca, mut cb) = (a.conn(), b.conn());
    let users = ["@ann:test", "@ben:test", "@cat:test"];
    let mut told: std::collections::BTreeMap<&str, Vec<Value>> = Default::default();
    let script = [
        "!zone enter crypt_valdris",
        "!zone advance",
        "!zone advance",
        "!zone go 1",
        "!zone advance",
    ];
    for (i, text) in script.iter().enumerate() {
        for (j, user) in users.iter().enumerate() {
            // Players' commands alternate between the instances.
            let c = if (i + j) % 2 == 0 { &mut ca } else { &mut cb };
            let r = c.command(user, text, None).expect("request");
            assert_eq!(r.status, 200, "{text}: {}", r.text());
            told.entry(user)
                .or_default()
                .extend(r.json()["events"].as_array().cloned().unwrap_or_default());
        }
    }
    let total: usize = told.values().map(Vec::len).sum();
    let arrived = eventually(Duration::from_secs(20), || {
        rt.block_on(host.received_requests())
            .is_some_and(|r| r.len() >= total)
    });
    assert!(
        arrived,
        "not every event arrived; a: {}\nb: {}",
        a.log(),
        b.log()
    );
    // A moment more: a second copy of an event would arrive now.
    std::thread::sleep(Duration::from_millis(1500));
    let requests = rt.block_on(host.received_requests()).expect("recorded");
    assert_eq!(requests.len(), total, "an event was sent twice or more");
    let mut got: std::collections::BTreeMap<String, Vec<(i64, Value)>> = Default::default();
    for r in &requests {
        let body: Value = serde_json::from_slice(&r.body).expect("JSON");
        got.entry(body["user"].as_str().expect("user").to_string())
            .or_default()
            .push((body["id"].as_i64().expect("id"), body["event"].clone()));
    }
    for user in users {
        let mine = &got[user];
        assert!(
            mine.windows(2).all(|w| w[0].0 < w[1].0),
            "{user}: out of order"
        );
        let events: Vec<&Value> = mine.iter().map(|(_, e)| e).collect();
        assert_eq!(events, told[user].iter().collect::<Vec<_>>(), "{user}");
    }
}
