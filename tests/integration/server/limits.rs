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

/// The server's resident memory, from `/proc`.
#[cfg(target_os = "linux")]
fn resident_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .expect("the server's status")
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS")
}

/// 512 connections (the server's whole request allowance) send a request's headers and one
/// byte of a body announced as 4 MB, without a token, and hold it; 64 more send a made-up
/// token of the `zgt_` shape. The sender is checked before a byte of the body is read, so
/// each is refused at once: another player's command is answered within a second, and the
/// server's memory grows by less than 64 MiB. (Before: each held a request slot for the
/// 30 s request limit, and the command got a 503.)
#[cfg(target_os = "linux")]
#[test]
fn half_sent_bodies_without_a_token_hold_no_request_slot() {
    use std::io::{BufRead, BufReader, Write};
    use std::time::Instant;
    let dir = tempfile::tempdir().expect("temp dir");
    let server = super::spawn_process(&dir.path().join("z.db"));
    let pid = server.child.id();
    let mut c = Conn::connect(server.addr)
        .expect("connect")
        .with_token(Some(&server.token));
    say(&mut c, "@other:test", "!zone enter crypt_valdris");
    let before = resident_kib(pid);
    let paths = [
        "/api/zones",
        "/api/zones/crypt_valdris/review",
        "/api/command",
        "/api/notices",
        "/api/notices/ack",
    ];
    let mut held = Vec::new();
    for i in 0..576 {
        let mut s = std::net::TcpStream::connect(server.addr).expect("connect");
        let token = if i < 512 {
            String::new()
        } else {
            format!("authorization: Bearer zgt_{i:08x}_{:032x}\r\n", i * 7)
        };
        write!(
            s,
            "POST {} HTTP/1.1\r\nhost: {}\r\ncontent-type: application/json\r\n\
             content-length: 4000000\r\n{token}\r\n{{",
            paths[i % paths.len()],
            server.addr
        )
        .expect("send half a request");
        held.push(s);
    }
    let started = Instant::now();
    let r = c
        .command("@other:test", "!zone status", None)
        .expect("answered");
    let took = started.elapsed();
    assert_eq!(r.status, 200, "{}", r.text());
    eprintln!("a command with 576 half-sent anonymous bodies held open: {took:?}");
    assert!(took < Duration::from_secs(1), "answered after {took:?}");
    // Each half-sent request was answered, without its body, as not allowed.
    for (i, s) in held.iter().enumerate() {
        s.set_read_timeout(Some(Duration::from_secs(5)))
            .expect("timeout");
        let mut status = String::new();
        BufReader::new(s)
            .read_line(&mut status)
            .expect("an answer before the body was sent");
        assert!(status.starts_with("HTTP/1.1 401"), "request {i}: {status}");
    }
    let grew = resident_kib(pid).saturating_sub(before);
    eprintln!("the server grew by {grew} KiB");
    assert!(grew < 64 * 1024, "the server grew by {grew} KiB");
    drop(held);
    let mut child = server.process.child;
    let _ = child.kill();
    let _ = child.wait();
}

/// A caller with the token who sends half a body and waits is answered 408 at the body's
/// deadline, and nothing is changed; a body over a route's limit is refused by its
/// `Content-Length` before a byte of it is read.
#[test]
fn a_body_that_does_not_arrive_in_time_is_refused() {
    use std::io::{Read, Write};
    let dir = tempfile::tempdir().expect("temp dir");
    let (server, mut c) = Ctx::new(dir.path())
        .with(|c| c.limits.body_deadline = Duration::from_millis(300))
        .spawn();
    for (path, len) in [("/api/command", 40), ("/api/zones", 2_000)] {
        let mut s = std::net::TcpStream::connect(server.addr).expect("connect");
        write!(
            s,
            "POST {path} HTTP/1.1\r\nhost: {}\r\ncontent-type: application/json\r\n\
             authorization: Bearer {TOKEN}\r\ncontent-length: {len}\r\n\r\n{{\"user\"",
            server.addr
        )
        .expect("send half a request");
        s.set_read_timeout(Some(Duration::from_secs(5)))
            .expect("timeout");
        let mut answer = vec![0; 4096];
        let n = s.read(&mut answer).expect("an answer at the deadline");
        let answer = String::from_utf8_lossy(&answer[..n]).to_string();
        assert!(answer.starts_with("HTTP/1.1 408"), "{path}: {answer}");
        assert!(answer.contains("did not arrive within 300 ms"), "{answer}");
    }
    let r = c
        .raw(
            format!(
                "POST /api/zones HTTP/1.1\r\nhost: {}\r\ncontent-type: application/json\r\n\
                 authorization: Bearer {TOKEN}\r\ncontent-length: 5000000\r\n\r\n",
                server.addr
            )
            .as_bytes(),
        )
        .expect("answered before the body is sent");
    assert_eq!(r.status, 413, "{}", r.text());
    assert!(r.text().contains("limit of 4194304 bytes"), "{}", r.text());
    assert!(server.store.all_runs().expect("runs").is_empty());
}
