//! The server's limits: hostile input gets a JSON 4xx and never a panic, the rate limit, the
//! request time limit, the concurrency limit, and health when the database cannot be written.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use zonegraph_server::store::RunIds;
use zonegraph_tests::client::Conn;

use crate::support::{Ctx, TOKEN, say, say1};

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
    // The probe runs at most once a second: the next one sees the lock.
    let h = health_until(&mut c, 503);
    let err = h.json()["error"].as_str().unwrap_or_default().to_string();
    assert!(err.contains("cannot be written"), "{err}");
    assert!(
        err.contains("locked"),
        "the reason, to a request with the token: {err}"
    );
    // Without the token: that it cannot, not why (nor where the database is).
    let mut anonymous = zonegraph_tests::client::Conn::connect(_server.addr).expect("connect");
    let h = anonymous.get("/healthz").expect("health");
    assert_eq!(h.status, 503, "{}", h.text());
    let err = h.json()["error"].as_str().unwrap_or_default().to_string();
    assert!(err.contains("cannot be written"), "{err}");
    assert!(
        !err.contains("locked") && !err.contains(&*db_path.to_string_lossy()),
        "{err}"
    );
    other.execute_batch("ROLLBACK").expect("unlock");
    health_until(&mut c, 200);
}

/// `/healthz` asked until it answers `status` (its probe runs at most once a second).
fn health_until(
    c: &mut zonegraph_tests::client::Conn,
    status: u16,
) -> zonegraph_tests::client::Response {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        let h = c.get("/healthz").expect("health");
        if h.status == status {
            return h;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "/healthz never {status}: {}",
            h.text()
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}
