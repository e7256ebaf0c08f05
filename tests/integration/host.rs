//! The host-game hook (`serve --host-hook`) against a fake host game on loopback.

use std::time::Duration;

use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};
use zonegraph_server::host::{HOOK_TIMEOUT, HostHook};

use crate::support::Ctx;

/// A real `serve` against a fake host game: the host's sheet, a slow host (the player is
/// told to try again and nothing changes), then its decision in its own words.
#[test]
fn serve_hands_encounters_to_the_host_game() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let host = rt.block_on(MockServer::start());
    let sheet = serde_json::json!({
        "level": 3,
        "scores": {"str": 12, "dex": 16, "con": 10, "int": 10, "wis": 10, "cha": 10},
        "keys": ["Host Key"]
    });
    let decision = serde_json::json!({
        "outcome": "won",
        "message": "The hall's champion yields to you. (the host game's words)",
        "keys": ["hall_seal"]
    });
    rt.block_on(async {
        Mock::given(method("POST"))
            .and(path("/game/character"))
            .and(header("authorization", "Bearer hook-secret"))
            .respond_with(ResponseTemplate::new(200).set_body_json(&sheet))
            .mount(&host)
            .await;
        // The first decision comes too late; the next one in time.
        Mock::given(method("POST"))
            .and(path("/game/encounter"))
            .respond_with(
                ResponseTemplate::new(200)
                    .set_body_json(&decision)
                    .set_delay(HOOK_TIMEOUT + Duration::from_millis(500)),
            )
            .up_to_n_times(1)
            .with_priority(1)
            .mount(&host)
            .await;
        Mock::given(method("POST"))
            .and(path("/game/encounter"))
            .and(header("authorization", "Bearer hook-secret"))
            .respond_with(ResponseTemplate::new(200).set_body_json(&decision))
            .with_priority(2)
            .mount(&host)
            .await;
    });

    let dir = tempfile::tempdir().expect("temp dir");
    let hook = HostHook::new(&format!("{}/game/", host.uri()), Some("hook-secret".into()))
        .expect("hook url");
    let (server, mut c) = Ctx::new(dir.path())
        .with(|c| c.game.host_hook = Some(hook))
        .spawn();
    let mut say = |text: &str| -> String {
        let r = c.command("@hero:test", text, None).expect("request");
        assert_eq!(r.status, 200, "{text}: {}", r.text());
        r.json()["replies"]
            .as_array()
            .expect("replies")
            .iter()
            .filter_map(|r| r["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n")
    };

    let t = say("!char");
    assert!(t.starts_with("Level 3 · STR 12 (+1) · DEX 16 (+3)"), "{t}");
    assert!(t.contains("Keys: host key."), "{t}");
    for cmd in [
        "!zone enter crypt_valdris",
        "!zone advance",
        "!zone advance",
    ] {
        say(cmd);
    }
    let t = say("!zone go 1");
    assert!(t.contains("A fearsome foe guards Main Hall."), "{t}");

    let t = say("!zone fight");
    assert_eq!(
        t,
        "The game master is busy; nothing happened. Try again in a moment."
    );
    let t = say("!zone status");
    assert!(t.contains("An elite bars the way on"), "{t}");
    assert!(!t.contains("Wounds"), "the slow host changed nothing: {t}");

    let t = say("!zone advance");
    assert!(
        t.starts_with("The hall's champion yields to you. (the host game's words)\n"),
        "{t}"
    );
    assert!(t.contains("You find a key: Hall Seal."), "{t}");
    assert!(!t.contains("XP"), "the host keeps the sheet: {t}");
    assert!(t.contains("Valdris's Sanctum"), "moved on: {t}");

    let asked = rt.block_on(host.received_requests()).expect("recorded");
    let encounters: Vec<serde_json::Value> = asked
        .iter()
        .filter(|r| r.url.path() == "/game/encounter")
        .map(|r| serde_json::from_slice(&r.body).expect("json body"))
        .collect();
    assert_eq!(encounters.len(), 2, "asked again on the next command");
    let q = &encounters[1];
    assert_eq!(q["user"], "@hero:test");
    assert_eq!(q["zone_id"], "crypt_valdris");
    assert_eq!(q["tier"], 1);
    assert_eq!(q["room"]["node_id"], "crypt_valdris.main_hall");
    assert_eq!(q["room"]["kind"], "elite");
    // The designer's data for the host game, as the zone file has it.
    assert_eq!(
        q["room"]["extra"],
        serde_json::json!({"music": "champions_dirge", "bestiary_table": "crypt_elites"})
    );
    assert_eq!(q["character"]["level"], 3);
    assert_eq!(q["character"]["keys"], serde_json::json!(["host key"]));
    let token = q["run_token"].as_str().expect("run token");
    let view = c.get(&format!("/api/runs/{token}")).expect("run view");
    assert_eq!(view.status, 200, "the token names the run");
    assert!(
        asked
            .iter()
            .all(|r| r.url.path() != "/game/character" || r.headers.get("authorization").is_some()),
        "the token goes with every call"
    );
    server.stop().expect("stops");
}

/// A host game that misbehaves on purpose, on loopback: each connection gets `answer`
/// (after reading the request's head); how many connections it took.
fn hostile(
    answer: impl Fn(&mut std::net::TcpStream) + Send + Sync + 'static,
) -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    use std::io::{BufRead, BufReader};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}/game", listener.local_addr().expect("addr"));
    let taken = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let count = taken.clone();
    let answer = std::sync::Arc::new(answer);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let answer = answer.clone();
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().expect("clone"));
                let mut line = String::new();
                while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                    line.clear();
                }
                answer(&mut stream);
            });
        }
    });
    (url, taken)
}

/// What a hostile host does with one connection.
type Answer = Box<dyn Fn(&mut std::net::TcpStream) + Send + Sync>;

fn hook(url: &str, timeout: Duration) -> HostHook {
    let mut h = HostHook::new(url, None).expect("hook url");
    h.timeout = timeout;
    h
}

/// Hostile host games: each call fails with what went wrong, within the call's one deadline,
/// and the server's process survives (a huge announced body is refused before it is read).
#[test]
fn a_hostile_host_game_fails_its_call_in_time_and_harms_nothing() {
    use std::io::Write as _;
    let timeout = Duration::from_millis(800);
    let cases: Vec<(&str, Answer, &str)> = vec![
        (
            "a trickle of one byte at a time",
            Box::new(|s| {
                let _ = s.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\n");
                for _ in 0..100 {
                    std::thread::sleep(Duration::from_millis(150));
                    if s.write_all(b" ").is_err() {
                        return;
                    }
                }
            }),
            "did not answer in time",
        ),
        (
            "headers one byte at a time",
            Box::new(|s| {
                for b in b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}" {
                    std::thread::sleep(Duration::from_millis(150));
                    if s.write_all(&[*b]).is_err() {
                        return;
                    }
                }
            }),
            "did not answer in time",
        ),
        (
            "a 60 GB body announced",
            Box::new(|s| {
                let _ = s.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 60000000000\r\n\r\n{");
                std::thread::sleep(Duration::from_millis(200));
            }),
            "over 65536 bytes",
        ),
        (
            "endless chunks",
            Box::new(|s| {
                let _ = s.write_all(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n");
                let chunk = format!("1000\r\n{}\r\n", " ".repeat(0x1000));
                while s.write_all(chunk.as_bytes()).is_ok() {}
            }),
            "over 65536 bytes",
        ),
        (
            "garbage",
            Box::new(|s| {
                let _ = s.write_all(b"\x00\x01 not http at all\r\n\r\n");
            }),
            "no answer from the host game",
        ),
        (
            "not JSON",
            Box::new(|s| {
                let _ = s.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nhello");
            }),
            "answer is not valid",
        ),
        (
            "a sheet out of range",
            Box::new(|s| {
                let body = r#"{"level": 0, "scores": {"str": 1000}}"#;
                let _ = write!(
                    s,
                    "HTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n{body}",
                    body.len()
                );
            }),
            "level 0 is not in 1-20",
        ),
    ];
    for (what, answer, says) in cases {
        let (url, _) = hostile(answer);
        let h = hook(&url, timeout);
        let started = std::time::Instant::now();
        let err = h.character("@p:test").expect_err(what);
        let took = started.elapsed();
        assert!(format!("{err:#}").contains(says), "{what}: {err:#}");
        assert!(
            took < timeout + Duration::from_millis(700),
            "{what}: the call took {took:?}, past its deadline of {timeout:?}"
        );
    }
}

/// After [`TRIP_AFTER`] failures in a row the host is left alone: the next calls fail at once
/// without reaching it, so a host that is down does not make every command wait.
#[test]
fn a_failing_host_game_is_left_alone_for_a_while() {
    let (url, taken) = hostile(|s| {
        use std::io::Write as _;
        let _ = s.write_all(b"HTTP/1.1 500 Internal Server Error\r\ncontent-length: 0\r\n\r\n");
    });
    let h = hook(&url, Duration::from_secs(2));
    for _ in 0..zonegraph_server::host::TRIP_AFTER {
        let err = h.character("@p:test").expect_err("a 500");
        assert!(format!("{err:#}").contains("answered 500"), "{err:#}");
    }
    let asked = taken.load(std::sync::atomic::Ordering::SeqCst);
    let err = h.character("@p:test").expect_err("left alone");
    assert!(format!("{err:#}").contains("left alone"), "{err:#}");
    assert_eq!(
        taken.load(std::sync::atomic::Ordering::SeqCst),
        asked,
        "not asked while left alone"
    );
}

/// A host's sheet with more keys than the rules keep (64 of at most 64 bytes) is refused
/// with the reason, not cut short: the store logs the refusal ("host hook: character", with
/// the user and why) and tells the player the host refused their character; 64 keys, the
/// most there may be, pass.
#[test]
fn a_host_sheet_the_rules_would_cut_is_refused_not_cut() {
    let answering = |keys: Vec<String>| {
        let body = serde_json::json!({ "level": 3, "keys": keys }).to_string();
        let (url, _) = hostile(move |s| {
            use std::io::Write as _;
            let _ = write!(
                s,
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
                body.len()
            );
        });
        hook(&url, Duration::from_secs(5))
    };
    let keys = |n: usize| (0..n).map(|i| format!("key_{i}")).collect::<Vec<_>>();
    let max = zonegraph_core::rules::MAX_KEYS;
    let kept = answering(keys(max))
        .character("@p:test")
        .expect("64 keys pass");
    assert_eq!(kept.keys.len(), max);
    let err = answering(keys(max + 1))
        .character("@p:test")
        .expect_err("a 65th key is refused");
    let said = format!("{err:#}");
    assert!(
        said.contains("sheet of @p:test is refused") && said.contains(&format!("key_{max}")),
        "{said}"
    );
    let long = "k".repeat(zonegraph_core::rules::MAX_KEY_BYTES + 1);
    let err = answering(vec![long])
        .character("@p:test")
        .expect_err("a key longer than the rules keep is refused");
    assert!(format!("{err:#}").contains("at most 64 keys"), "{err:#}");
}

/// One player cannot pause the host for everyone. Before, every failure counted toward the
/// one breaker: [`TRIP_AFTER`] calls for a player the host does not know (404), or for one
/// whose sheet is out of range, and every player read "the game master is busy" for 30 s.
/// Now a refused call fails that player's command alone, with its own line (and the log),
/// and the others play on; a host that is down (5xx) still pauses
/// (`a_failing_host_game_is_left_alone_for_a_while`).
#[test]
fn one_players_refused_calls_never_pause_the_host_for_the_others() {
    use wiremock::matchers::body_partial_json;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let host = rt.block_on(MockServer::start());
    rt.block_on(async {
        Mock::given(method("POST"))
            .and(path("/game/character"))
            .and(body_partial_json(
                serde_json::json!({ "user": "@stranger:test" }),
            ))
            .respond_with(ResponseTemplate::new(404))
            .with_priority(1)
            .mount(&host)
            .await;
        Mock::given(method("POST"))
            .and(path("/game/character"))
            .and(body_partial_json(
                serde_json::json!({ "user": "@cheat:test" }),
            ))
            .respond_with(
                ResponseTemplate::new(200).set_body_json(serde_json::json!({ "level": 99 })),
            )
            .with_priority(1)
            .mount(&host)
            .await;
        Mock::given(method("POST"))
            .and(path("/game/character"))
            .respond_with(
                ResponseTemplate::new(200).set_body_json(serde_json::json!({ "level": 3 })),
            )
            .with_priority(2)
            .mount(&host)
            .await;
    });
    let url = format!("{}/game", host.uri());
    let h = hook(&url, Duration::from_secs(5));
    for _ in 0..zonegraph_server::host::TRIP_AFTER + 2 {
        match h.character("@stranger:test") {
            Err(zonegraph_server::host::HostError::Refused(e)) => {
                assert!(format!("{e:#}").contains("answered 404"), "{e:#}");
            }
            other => panic!("a 404 is this player's refusal: {other:?}"),
        }
        match h.character("@cheat:test") {
            Err(zonegraph_server::host::HostError::Refused(e)) => {
                assert!(
                    format!("{e:#}").contains("sheet of @cheat:test is refused"),
                    "{e:#}"
                );
            }
            other => panic!("an out-of-range sheet is this player's refusal: {other:?}"),
        }
    }
    assert_eq!(
        h.character("@hero:test")
            .expect("the host is not paused")
            .level,
        3
    );

    // Through a real `serve`: the refused player reads why, the next player plays.
    let dir = tempfile::tempdir().expect("temp dir");
    let hook = HostHook::new(&url, None).expect("hook url");
    let (server, mut c) = Ctx::new(dir.path())
        .with(|c| c.game.host_hook = Some(hook))
        .spawn();
    let mut say = |user: &str, text: &str| crate::support::say1(&mut c, user, text);
    for _ in 0..zonegraph_server::host::TRIP_AFTER + 1 {
        assert_eq!(
            say("@stranger:test", "!char"),
            "The game master refused your character sheet; nothing happened. If this goes on, \
             tell this server's operator."
        );
    }
    let t = say("@hero:test", "!char");
    assert!(t.starts_with("Level 3 "), "{t}");
    server.stop().expect("stops");
}
