//! Run views: a run link shows no undiscovered secret, and a run page's event stream hears a
//! move made in chat within a second.

use std::time::{Duration, Instant};

use serde_json::Value;
use zonegraph_server::server::Server;

use super::{CHAPEL, chapel_roll, get_encoded, secret_roll, token_of, user_where};
use crate::support::{Ctx, say, say1};

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
    // The map comes laid out from the view alone (the page has no layout code): the same
    // drawing the core makes of the view the player got, so the secret leaves no gap.
    let player: zonegraph_core::engine::PlayerView =
        serde_json::from_value(v["view"].clone()).expect("a player view");
    let drawn =
        serde_json::to_value(zonegraph_core::layout::Drawing::of_view(&player)).expect("a drawing");
    assert_eq!(v["map"], drawn);
    assert_eq!(v["map"]["rooms"].as_array().expect("drawn rooms").len(), 7);
    assert_eq!(
        v["map"]["passages"]
            .as_array()
            .expect("drawn passages")
            .len(),
        7
    );
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

/// Reads server-sent events from `stream` until one whose data satisfies `pred`, or until
/// `within` has passed; the events' JSON data in order.
pub(crate) fn events_until(
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
    let (status, head, r) = try_events(server.addr, token);
    assert!(status.starts_with("HTTP/1.1 200"), "{head}");
    assert!(head.contains("content-type: text/event-stream"), "{head}");
    // Behind nginx the events must not wait in its buffer.
    assert!(head.contains("x-accel-buffering: no"), "{head}");
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

/// Opens `GET /api/runs/{token}/events`: its status line, its head (lower-cased) and the
/// reader after the head.
pub(crate) fn try_events(
    addr: std::net::SocketAddr,
    token: &str,
) -> (String, String, std::io::BufReader<std::net::TcpStream>) {
    use std::io::{BufRead as _, Write as _};
    let mut s = std::net::TcpStream::connect(addr).expect("connect");
    write!(
        s,
        "GET /api/runs/{token}/events HTTP/1.1\r\nhost: {addr}\r\naccept: text/event-stream\r\n\r\n"
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
    let status = head.lines().next().unwrap_or_default().to_string();
    (status, head.to_ascii_lowercase(), r)
}

/// Reads a stream until its end (the last chunk, or the connection closed) or `within`;
/// whether it ended.
fn ends_within(reader: &mut std::io::BufReader<std::net::TcpStream>, within: Duration) -> bool {
    use std::io::BufRead as _;
    let deadline = Instant::now() + within;
    let mut line = String::new();
    loop {
        let Some(left) = deadline.checked_duration_since(Instant::now()) else {
            return false;
        };
        reader
            .get_ref()
            .set_read_timeout(Some(left.max(Duration::from_millis(1))))
            .expect("timeout");
        line.clear();
        match reader.read_line(&mut line) {
            Ok(0) => return true,
            Ok(_) if line.trim_end() == "0" => return true,
            Ok(_) => {}
            Err(_) => return false,
        }
    }
}

/// A run link keeps a few live streams and the instance a bounded number; past either the
/// stream is refused at once (503, Retry-After) and others still play. However many streams
/// follow a run, its view is built once per change; a stream ends at its lifetime.
#[test]
fn live_streams_are_bounded_shared_and_end_at_their_lifetime() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (server, mut c) = Ctx::new(dir.path())
        .with(|c| {
            c.limits.streams.per_run = 3;
            c.limits.streams.total = 4;
            c.limits.streams.lifetime = Duration::from_secs(3);
        })
        .spawn();
    say(&mut c, "@many:test", "!zone enter crypt_valdris");
    let many = token_of(&say1(&mut c, "@many:test", "!zone map"));
    say(&mut c, "@few:test", "!zone enter crypt_valdris");
    let few = token_of(&say1(&mut c, "@few:test", "!zone map"));

    let mut open = Vec::new();
    for _ in 0..3 {
        let (status, _, mut r) = try_events(server.addr, &many);
        assert!(status.starts_with("HTTP/1.1 200"), "{status}");
        events_until(&mut r, Duration::from_secs(5), |_| true).expect("first view");
        open.push(r);
    }
    let (status, head, _) = try_events(server.addr, &many);
    assert!(
        status.starts_with("HTTP/1.1 503"),
        "a fourth on one link: {status}"
    );
    assert!(head.contains("retry-after:"), "{head}");
    let (status, _, mut fourth) = try_events(server.addr, &few);
    assert!(status.starts_with("HTTP/1.1 200"), "another link: {status}");
    events_until(&mut fourth, Duration::from_secs(5), |_| true).expect("first view");
    let (status, _, _) = try_events(server.addr, &few);
    assert!(
        status.starts_with("HTTP/1.1 503"),
        "past the instance's four: {status}"
    );
    // Commands go on meanwhile.
    say(&mut c, "@few:test", "!zone status");

    // One move: every stream of the run hears it, from one build of its view.
    let built = server.state.streams.views_built();
    say(&mut c, "@many:test", "!zone advance");
    for r in &mut open {
        let moved = events_until(r, Duration::from_secs(2), |v| {
            v["view"]["status"]["room_number"] == 2
        });
        assert!(moved.is_some(), "a stream missed the move");
    }
    assert_eq!(
        server.state.streams.views_built(),
        built + 1,
        "three streams, one view built"
    );

    // A closed stream frees its place.
    drop(open.pop());
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let (status, _, r) = try_events(server.addr, &many);
        if status.starts_with("HTTP/1.1 200") {
            open.push(r);
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the place was not freed: {status}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // Each stream ends at its lifetime (the page's browser opens it again).
    assert!(
        ends_within(&mut fourth, Duration::from_secs(6)),
        "the stream outlived its lifetime"
    );
}

/// A connection that sends part of a request head and waits, or nothing at all, is closed
/// after the header-read timeout: half-sent requests cannot hold the server's sockets.
#[test]
fn half_sent_and_silent_connections_are_closed() {
    use std::io::{Read as _, Write as _};
    let dir = tempfile::tempdir().expect("temp dir");
    let (server, _c) = Ctx::new(dir.path()).spawn();
    let mut idle = Vec::new();
    for i in 0..40 {
        let mut s = std::net::TcpStream::connect(server.addr).expect("connect");
        if i % 2 == 0 {
            write!(
                s,
                "GET /healthz HTTP/1.1\r\nhost: {}\r\nx-slow: ",
                server.addr
            )
            .expect("part");
        }
        idle.push(s);
    }
    let within = zonegraph_server::server::HEADER_READ_TIMEOUT + Duration::from_secs(4);
    let started = Instant::now();
    for mut s in idle {
        let left = within
            .saturating_sub(started.elapsed())
            .max(Duration::from_millis(1));
        s.set_read_timeout(Some(left)).expect("timeout");
        let mut buf = [0_u8; 512];
        // Closed: end of file (after a 408, if the server sends one), not a timeout.
        loop {
            match s.read(&mut buf) {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) => panic!(
                    "a connection was still open after {:?}: {e}",
                    started.elapsed()
                ),
            }
        }
    }
    // The server still answers.
    let mut c = crate::support::connect(&server);
    assert_eq!(c.get("/healthz").expect("health").status, 200);
}

/// One player opening 1,500 live streams on their own run link, the server started with a
/// soft open-file limit of 1,024 (as systemd gives services): the server raised its limit at
/// start, keeps a few of them, refuses the rest, and another player's command is answered.
#[cfg(unix)]
#[test]
fn one_player_with_1500_streams_does_not_shut_another_out() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut command = std::process::Command::new("sh");
    let inner = crate::support::serve_command(&crate::support::zones(), dir.path());
    command
        .arg("-c")
        .arg("ulimit -Sn 1024 && exec \"$0\" \"$@\"")
        .arg(inner.get_program())
        .args(inner.get_args())
        .arg("--db")
        .arg(dir.path().join("z.db"))
        .arg("--no-auth");
    let p = crate::support::Process::spawn(command);
    let limits =
        std::fs::read_to_string(format!("/proc/{}/limits", p.child.id())).unwrap_or_default();
    let soft: Option<u64> = limits
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .and_then(|l| l.split_whitespace().nth(3))
        .and_then(|v| v.parse().ok());
    if let Some(soft) = soft {
        assert!(soft > 1_024, "the soft limit was not raised: {limits}");
    }
    let mut c = zonegraph_tests::client::Conn::connect(p.addr).expect("connect");
    say(&mut c, "@hog:test", "!zone enter crypt_valdris");
    let token = token_of(&say1(&mut c, "@hog:test", "!zone map"));
    let (mut kept, mut refused) = (Vec::new(), 0);
    for _ in 0..1_500 {
        let (status, _, r) = try_events(p.addr, &token);
        if status.starts_with("HTTP/1.1 200") {
            kept.push(r);
        } else {
            assert!(status.starts_with("HTTP/1.1 503"), "{status}");
            refused += 1;
            // The hog holds every connection open.
            kept.push(r);
        }
    }
    assert_eq!(refused, 1_500 - 8, "eight live streams per run link");
    let started = Instant::now();
    let mut other = zonegraph_tests::client::Conn::connect(p.addr).expect("connect");
    let r = other
        .command("@other:test", "!zone enter crypt_valdris", None)
        .expect("answered");
    assert_eq!(r.status, 200, "{}", r.text());
    let took = started.elapsed();
    eprintln!("another player's command with 1,500 streams held on one link: {took:?}");
    assert!(took < Duration::from_secs(5), "shut out for {took:?}");
    drop(kept);
    let mut child = p.child;
    let _ = child.kill();
    let _ = child.wait();
}
