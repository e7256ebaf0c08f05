//! Events out (`serve --events-url`): a host game's receiver on loopback gets every event of
//! every command, signed, in order per player, again after a failure; a receiver that
//! misbehaves (fails, redirects, answers garbage, hangs) delays only the events, never a
//! command; one that refuses an event forever or stays down for one player gets the rest,
//! while the outbox gives those up to its dead letters (`zonegraph events dead`).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, Request, ResponseTemplate};
use zonegraph_server::db::{DeadCause, OutboxLimits};
use zonegraph_server::events_out::{EventsOut, SEND_TIMEOUT, sign};

use crate::support::Ctx;

const SECRET: &str = "a-shared-secret-of-the-host-game";

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

/// The commands each player sends, and the events each answer carried, in order.
fn play(c: &mut zonegraph_tests::client::Conn, users: &[&str]) -> BTreeMap<String, Vec<Value>> {
    let script = [
        "!zone enter crypt_valdris",
        "!zone advance",
        "!zone advance",
        "!zone status",
        "!zone go 1",
        "!zone advance",
    ];
    let mut told: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for text in script {
        for user in users {
            let r = c.command(user, text, None).expect("request");
            assert_eq!(r.status, 200, "{text}: {}", r.text());
            let events = r.json()["events"].as_array().cloned().unwrap_or_default();
            told.entry(user.to_string()).or_default().extend(events);
        }
    }
    told
}

/// The events the answers to `user`'s `texts` carried, in order.
fn say(c: &mut zonegraph_tests::client::Conn, user: &str, texts: &[&str]) -> Vec<Value> {
    let mut events = Vec::new();
    for text in texts {
        let r = c.command(user, text, None).expect("request");
        assert_eq!(r.status, 200, "{text}: {}", r.text());
        events.extend(r.json()["events"].as_array().cloned().unwrap_or_default());
    }
    events
}

/// Waits until the server has no event left to send.
fn drained(server: &zonegraph_server::server::Server, within: Duration) {
    let start = Instant::now();
    loop {
        let (waiting, _) = server.store.events_waiting().expect("outbox");
        if waiting == 0 {
            return;
        }
        assert!(
            start.elapsed() < within,
            "{waiting} events still waiting after {within:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Whether the request carries a valid signature of its body: `t=<ms>,v1=<hex>`.
fn signed(r: &Request) -> bool {
    let Some(sig) = r
        .headers
        .get("x-zonegraph-signature")
        .and_then(|v| v.to_str().ok())
    else {
        return false;
    };
    let Some((t, v1)) = sig
        .strip_prefix("t=")
        .and_then(|rest| rest.split_once(",v1="))
    else {
        return false;
    };
    let Ok(t) = t.parse::<i64>() else {
        return false;
    };
    sign(SECRET.as_bytes(), t, &r.body) == v1
}

#[test]
fn every_event_reaches_the_host_game_signed_in_order_per_player_and_again_after_failures() {
    let rt = runtime();
    let host = rt.block_on(MockServer::start());
    let answered = Arc::new(AtomicUsize::new(0));
    let n = answered.clone();
    rt.block_on(async {
        // The receiver fails, then redirects (not followed: a failure), then takes an event
        // with a large garbage answer (never read), then takes everything.
        Mock::given(method("POST"))
            .respond_with(move |_: &Request| match n.fetch_add(1, Ordering::SeqCst) {
                0 => ResponseTemplate::new(500).set_body_string("<html>oops"),
                1 => ResponseTemplate::new(302).insert_header("location", "http://127.0.0.1:9/"),
                2 => ResponseTemplate::new(200).set_body_bytes(vec![0xff; 8 << 20]),
                _ => ResponseTemplate::new(204),
            })
            .mount(&host)
            .await;
    });
    let dir = tempfile::tempdir().expect("temp dir");
    let out = EventsOut::new(&format!("{}/zonegraph/events", host.uri()), SECRET).expect("url");
    let (server, mut c) = Ctx::new(dir.path())
        .with(|c| c.events_out = Some(out))
        .spawn();
    let users = ["@ada:test", "@bo:test"];
    let told = play(&mut c, &users);
    assert!(
        told.values().all(|e| e.len() >= 6),
        "each player's commands had events: {told:?}"
    );
    drained(&server, Duration::from_secs(30));

    let requests = rt.block_on(host.received_requests()).expect("recorded");
    // Which requests the receiver took: all but the first two.
    let mut taken: BTreeMap<String, Vec<(i64, Value)>> = BTreeMap::new();
    let mut failed_ids = Vec::new();
    for (i, r) in requests.iter().enumerate() {
        assert_eq!(r.url.path(), "/zonegraph/events");
        assert!(signed(r), "request {i} is not signed with the secret");
        let body: Value = serde_json::from_slice(&r.body).expect("a JSON body");
        let id = body["id"].as_i64().expect("an id");
        assert_eq!(
            r.headers
                .get("x-zonegraph-event-id")
                .and_then(|v| v.to_str().ok()),
            Some(id.to_string().as_str())
        );
        assert_eq!(body["zone_id"], "crypt_valdris");
        assert_eq!(body["run_token"].as_str().map(str::len), Some(32));
        if i < 2 {
            failed_ids.push(id);
            continue;
        }
        let user = body["user"].as_str().expect("user").to_string();
        taken
            .entry(user)
            .or_default()
            .push((id, body["event"].clone()));
    }
    // A tampered body does not pass the check.
    let mut forged = requests[3].clone();
    forged.body = forged
        .body
        .replace_first(b"crypt_valdris", b"crypt_valdrix");
    assert!(!signed(&forged), "a changed body kept its signature");

    for user in users {
        let got = &taken[user];
        // In order, each once after the failures (a failed one was sent again).
        assert!(
            got.windows(2).all(|w| w[0].0 < w[1].0),
            "{user}'s events out of order: {:?}",
            got.iter().map(|(id, _)| id).collect::<Vec<_>>()
        );
        let events: Vec<&Value> = got.iter().map(|(_, e)| e).collect();
        let expected: Vec<&Value> = told[user].iter().collect();
        assert_eq!(
            events, expected,
            "{user}: the events sent are the answers' events"
        );
    }
    for id in failed_ids {
        assert!(
            taken.values().flatten().any(|(i, _)| *i == id),
            "event {id} was not sent again after its failure"
        );
    }
    let kinds: Vec<&str> = taken["@ada:test"]
        .iter()
        .filter_map(|(_, e)| e["event"].as_str())
        .collect();
    for kind in ["entered", "arrived", "moved", "fork_offered", "xp_gained"] {
        assert!(kinds.contains(&kind), "no {kind} event in {kinds:?}");
    }
}

#[test]
fn a_receiver_that_hangs_holds_no_command_and_gets_the_event_later() {
    let rt = runtime();
    let host = rt.block_on(MockServer::start());
    let answered = Arc::new(AtomicUsize::new(0));
    let n = answered.clone();
    rt.block_on(async {
        Mock::given(method("POST"))
            .respond_with(move |_: &Request| {
                if n.fetch_add(1, Ordering::SeqCst) == 0 {
                    ResponseTemplate::new(200).set_delay(SEND_TIMEOUT * 4)
                } else {
                    ResponseTemplate::new(200)
                }
            })
            .mount(&host)
            .await;
    });
    let dir = tempfile::tempdir().expect("temp dir");
    let out = EventsOut::new(&host.uri(), SECRET).expect("url");
    let (server, mut c) = Ctx::new(dir.path())
        .with(|c| c.events_out = Some(out))
        .spawn();
    let r = c
        .command("@cy:test", "!zone enter crypt_valdris", None)
        .expect("request");
    assert_eq!(r.status, 200);
    // The receiver now hangs on the first event; the player's next commands answer at once.
    std::thread::sleep(Duration::from_millis(300));
    for text in ["!zone advance", "!zone status"] {
        let start = Instant::now();
        let r = c.command("@cy:test", text, None).expect("request");
        assert_eq!(r.status, 200, "{}", r.text());
        assert!(
            start.elapsed() < SEND_TIMEOUT,
            "{text} waited {:?} for the receiver",
            start.elapsed()
        );
    }
    drained(&server, SEND_TIMEOUT * 4);
    let requests = rt.block_on(host.received_requests()).expect("recorded");
    let ids: Vec<i64> = requests
        .iter()
        .map(|r| {
            serde_json::from_slice::<Value>(&r.body).expect("JSON")["id"]
                .as_i64()
                .expect("id")
        })
        .collect();
    // The hung delivery timed out and went again, first: nothing overtook it.
    assert_eq!(ids[0], ids[1], "{ids:?}");
    assert!(ids[1..].windows(2).all(|w| w[0] < w[1]), "{ids:?}");
}

/// Waits until `done` holds, asking every 50 ms; what it says when it does not.
fn until(within: Duration, what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < within, "{what}: not after {within:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The requests the receiver got so far: each with its user, id and event.
fn received(rt: &tokio::runtime::Runtime, host: &MockServer) -> Vec<(String, i64, Value)> {
    rt.block_on(host.received_requests())
        .expect("recorded")
        .iter()
        .map(|r| {
            let body: Value = serde_json::from_slice(&r.body).expect("a JSON body");
            let user = body["user"].as_str().expect("user").to_string();
            (
                user,
                body["id"].as_i64().expect("id"),
                body["event"].clone(),
            )
        })
        .collect()
}

/// `zonegraph events dead ARGS… --db DB`: its stdout and stderr.
fn events_dead(db: &std::path::Path, args: &[&str]) -> (String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_zonegraph-under-test"))
        .args(["events", "--db"])
        .arg(db)
        .arg("dead")
        .args(args)
        .env_remove("ZONEGRAPH_DATABASE_URL")
        .output()
        .expect("zonegraph events runs");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert!(out.status.success(), "{stderr}");
    (stdout, stderr)
}

#[test]
fn a_refused_event_is_given_up_the_players_next_goes_on_and_a_full_queue_sheds() {
    const ADA: &str = "@ada:test";
    const BO: &str = "@bo:test";
    const CY: &str = "@cy:test";
    let rt = runtime();
    let host = rt.block_on(MockServer::start());
    rt.block_on(async {
        // Ada's `entered` is refused forever; Cy's receiver is down for good; Bo's is fine.
        Mock::given(method("POST"))
            .respond_with(|r: &Request| {
                let body: Value = serde_json::from_slice(&r.body).unwrap_or_default();
                match (body["user"].as_str(), body["event"]["event"].as_str()) {
                    (Some(ADA), Some("entered")) => ResponseTemplate::new(400),
                    (Some(CY), _) => ResponseTemplate::new(503),
                    _ => ResponseTemplate::new(204),
                }
            })
            .mount(&host)
            .await;
    });
    let dir = tempfile::tempdir().expect("temp dir");
    let limits = OutboxLimits {
        max_attempts: 3,
        per_player: 8,
        ..OutboxLimits::default()
    };
    let out = EventsOut::new(&host.uri(), SECRET)
        .expect("url")
        .with_limits(limits);
    let (server, mut c) = Ctx::new(dir.path())
        .with(|c| c.events_out = Some(out))
        .spawn();
    let mut ada = say(&mut c, ADA, &["!zone enter crypt_valdris"]);
    assert_eq!(ada[0]["event"], "entered", "{ada:?}");
    let bo = say(&mut c, BO, &["!zone enter crypt_valdris", "!zone advance"]);
    assert!(
        ada.len() <= 4 && bo.len() <= 8,
        "Ada's and Bo's events fit their queues: {ada:?} {bo:?}"
    );
    // Every command is kept, whatever the outbox holds: Cy's queue is over its cap by far.
    let cy = play(&mut c, &[CY]).remove(CY).unwrap_or_default();
    assert!(cy.len() > 8, "{cy:?}");

    // Ada's `entered` is given up at its third refusal, and her next events go on.
    until(
        Duration::from_secs(60),
        "Ada's refused event given up",
        || {
            let dead = server.store.dead_events(100).expect("dead letters");
            dead.iter().any(|d| d.event.user == ADA)
        },
    );
    ada.extend(say(&mut c, ADA, &["!zone advance"]));
    let taken = |user: &str, all: &[(String, i64, Value)]| -> Vec<Value> {
        let mut mine: Vec<&(String, i64, Value)> = all
            .iter()
            .filter(|(u, _, e)| u == user && !(u == ADA && e["event"] == "entered"))
            .collect();
        mine.dedup_by_key(|(_, id, _)| *id);
        mine.into_iter().map(|(_, _, e)| e.clone()).collect()
    };
    until(
        Duration::from_secs(60),
        "Ada's and Bo's events taken",
        || {
            let all = received(&rt, &host);
            taken(ADA, &all).len() == ada.len() - 1 && taken(BO, &all).len() == bo.len()
        },
    );
    let all = received(&rt, &host);
    assert_eq!(
        taken(ADA, &all),
        ada[1..],
        "Ada's events after the refused one"
    );
    assert_eq!(taken(BO, &all), bo, "Bo's events, untouched by the others'");
    let tries = all
        .iter()
        .filter(|(u, _, e)| u == ADA && e["event"] == "entered")
        .count();
    assert_eq!(tries, 3, "Ada's refused event was tried max_attempts times");

    // The dead letters: Ada's refused event with its last error, and Cy's oldest, shed.
    let dead = server.store.dead_events(100).expect("dead letters");
    let refused: Vec<_> = dead.iter().filter(|d| d.event.user == ADA).collect();
    assert_eq!(refused.len(), 1, "{dead:?}");
    assert_eq!(
        (
            refused[0].cause,
            refused[0].event.attempts,
            refused[0].last_error.as_str()
        ),
        (
            DeadCause::Refused,
            3,
            "the receiver answered 400 Bad Request"
        )
    );
    let shed = dead.iter().filter(|d| d.event.user == CY).count();
    assert_eq!(shed, cy.len() - 8, "{dead:?}");
    assert!(
        dead.iter()
            .filter(|d| d.event.user == CY)
            .all(|d| d.cause == DeadCause::PlayerCap),
        "{dead:?}"
    );
    assert!(dead.iter().all(|d| d.event.user != BO), "{dead:?}");
    // Cy's newest eight still wait for the receiver to come back.
    assert_eq!(server.store.events_waiting().expect("outbox").0, 8);

    // The operator's listing shows them, newest first, and each as JSON to send again.
    let db = dir.path().join("z.db");
    let (listed, summary) = events_dead(&db, &[]);
    let ada_line = listed
        .lines()
        .find(|l| l.contains(ADA))
        .unwrap_or_else(|| panic!("Ada's dead letter is listed: {listed}"));
    for part in [
        "crypt_valdris",
        "3 attempts",
        "refused",
        "the receiver answered 400",
    ] {
        assert!(ada_line.contains(part), "{part}: {ada_line}");
    }
    assert_eq!(
        listed
            .lines()
            .filter(|l| l.contains(CY) && l.contains("shed over the per-player cap"))
            .count(),
        shed,
        "{listed}"
    );
    assert!(
        summary.contains(&format!("{} event(s) given up", shed + 1))
            && summary.contains("8 event(s) waiting"),
        "{summary}"
    );
    let (json, _) = events_dead(&db, &["--json", "--limit", "100"]);
    let ada_json: Value = json
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).expect("a line of JSON"))
        .find(|v| v["user"] == ADA)
        .expect("Ada's dead letter as JSON");
    assert_eq!(ada_json["event"], ada[0]);
    assert_eq!(ada_json["cause"], "refused");
    assert_eq!(ada_json["attempts"], 3);
}

#[test]
fn without_events_url_nothing_is_queued() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (server, mut c) = Ctx::new(dir.path()).spawn();
    play(&mut c, &["@dee:test"]);
    assert_eq!(server.store.events_waiting().expect("outbox"), (0, 0));
}

/// Replaces the first occurrence of `from` in a body (the same length).
trait ReplaceFirst {
    fn replace_first(self, from: &[u8], to: &[u8]) -> Vec<u8>;
}

impl ReplaceFirst for Vec<u8> {
    fn replace_first(mut self, from: &[u8], to: &[u8]) -> Vec<u8> {
        if let Some(at) = self.windows(from.len()).position(|w| w == from) {
            self[at..at + to.len()].copy_from_slice(to);
        }
        self
    }
}
