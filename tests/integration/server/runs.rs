//! Run views: a run link shows no undiscovered secret, and a run page's event stream hears a
//! move made in chat within a second.

use std::time::{Duration, Instant};

use serde_json::Value;
use zonegraph_server::serve::Server;

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
