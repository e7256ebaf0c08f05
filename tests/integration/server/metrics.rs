//! `GET /metrics` as a Prometheus server reads it, from a real `zonegraph serve`: a known
//! short run played over HTTP moves each counter by exactly what happened, the states (live
//! streams, zones served, the events outbox) read as they are, `promtool check metrics`
//! accepts the text, and only a token of the `metrics` scope (or the operator's) reads it.
//! And a host game that is down, call by call.

use std::collections::BTreeMap;
use std::io::{BufRead as _, BufReader, Write as _};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use zonegraph_tests::client::Conn;

use super::tokens::new_token;
use crate::support::{self, Process};

const API_TOKEN: &str = "metrics-test-api-token-7d41c9";

/// Every sample of a scrape by its series (the name and labels as written): a series not
/// there reads as 0, as a counter that never moved.
#[derive(Debug)]
struct Samples(BTreeMap<String, f64>);

impl Samples {
    fn of(text: &str) -> Samples {
        let samples = text
            .lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
            .map(|l| {
                // A label value may hold a space ("char level"); the value is after the last.
                let (series, value) = l.rsplit_once(' ').expect("a sample line");
                let value = value.parse().unwrap_or_else(|_| panic!("a number: {l}"));
                (series.to_string(), value)
            })
            .collect();
        Samples(samples)
    }

    fn get(&self, series: &str) -> f64 {
        self.0.get(series).copied().unwrap_or(0.0)
    }

    /// What each series of `name` moved by since `before`, the series that did not left out.
    fn moved(&self, before: &Samples, name: &str) -> BTreeMap<String, f64> {
        self.0
            .iter()
            .filter(|(series, _)| series.starts_with(&format!("{name}{{")) || *series == name)
            .map(|(series, v)| (series.clone(), v - before.get(series)))
            .filter(|(_, d)| *d != 0.0)
            .collect()
    }
}

/// `GET /metrics` with `token`: its status and body.
fn scrape(c: &mut Conn, token: Option<&str>) -> (u16, String, Option<String>) {
    let auth = token.map(|t| format!("Bearer {t}"));
    let headers: Vec<(&str, &str)> = auth.iter().map(|a| ("authorization", a.as_str())).collect();
    let r = c.request("GET", "/metrics", &headers, b"").expect("scrape");
    let media = r.header("content-type").map(str::to_string);
    (r.status, r.text(), media)
}

/// `promtool check metrics` on `text`, when promtool is installed; without it the check is
/// skipped, but fails when `ZONEGRAPH_REQUIRE_PROMTOOL=1` (CI installs it).
fn promtool_accepts(text: &str) {
    let child = std::process::Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(child) => child,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            assert!(
                std::env::var("ZONEGRAPH_REQUIRE_PROMTOOL").as_deref() != Ok("1"),
                "ZONEGRAPH_REQUIRE_PROMTOOL=1 but promtool is not installed (Debian's \
                 `prometheus` package has it)"
            );
            eprintln!("promtool is not installed: `promtool check metrics` skipped");
            return;
        }
        Err(e) => panic!("promtool: {e}"),
    };
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(text.as_bytes())
        .expect("to promtool");
    let out = child.wait_with_output().expect("promtool ends");
    assert!(
        out.status.success(),
        "promtool check metrics refused the text:\n{}{}\n{text}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A run page's live stream, held open: the request sent and the first view read.
fn open_stream(addr: std::net::SocketAddr, token: &str) -> BufReader<TcpStream> {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    write!(
        s,
        "GET /api/runs/{token}/events HTTP/1.1\r\nhost: {addr}\r\naccept: text/event-stream\r\n\r\n"
    )
    .expect("request");
    let mut r = BufReader::new(s);
    let mut line = String::new();
    loop {
        line.clear();
        assert!(
            r.read_line(&mut line).expect("read") > 0,
            "the stream ended"
        );
        if line.starts_with("data:") {
            return r;
        }
    }
}

/// A server process killed when the test ends, passed or not.
struct Stopped(Process);

impl Drop for Stopped {
    fn drop(&mut self) {
        let _ = self.0.child.kill();
        let _ = self.0.child.wait();
    }
}

#[test]
fn a_played_run_moves_each_counter_by_exactly_what_happened() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("z.db");
    // An events receiver nobody listens at: every event stays in the outbox.
    let closed = zonegraph_tests::free_port();
    let mut command = support::serve_command(&support::zones(), dir.path());
    command
        .arg("--db")
        .arg(&db)
        .args(["--fork-timeout", "500ms"])
        .args(["--events-url", &format!("http://127.0.0.1:{closed}/events")])
        .env("ZONEGRAPH_API_TOKEN", API_TOKEN)
        .env("ZONEGRAPH_EVENTS_SECRET", "metrics-test-events-secret")
        .env_remove("RUST_LOG");
    let p = Stopped(Process::spawn_logged(
        command,
        &dir.path().join("stderr.log"),
    ));
    let p = &p.0;
    let db = db.to_string_lossy().into_owned();
    let metrics_token = new_token(&db, "metrics");
    let publish_token = new_token(&db, "publish");
    let mut c = Conn::connect(p.addr)
        .expect("connect")
        .with_token(Some(API_TOKEN));

    // Who may read it: no token 401, a token of another scope 403; the metrics token reads
    // nothing else.
    let mut anonymous = Conn::connect(p.addr).expect("connect");
    let (status, text, _) = scrape(&mut anonymous, None);
    assert_eq!(status, 401, "{text}");
    let (status, text, _) = scrape(&mut anonymous, Some(&publish_token));
    assert_eq!(status, 403, "{text}");
    assert!(text.contains("metrics token"), "{text}");
    let r = anonymous
        .request(
            "GET",
            "/api/zones",
            &[("authorization", &format!("Bearer {metrics_token}"))],
            b"",
        )
        .expect("zones");
    assert_eq!(r.status, 403, "{}", r.text());
    let (status, text, _) = scrape(&mut c, None);
    assert_eq!(status, 200, "the operator's token reads it too: {text}");

    let (status, text, media) = scrape(&mut anonymous, Some(&metrics_token));
    assert_eq!(status, 200, "{text}");
    assert_eq!(
        media.as_deref(),
        Some("text/plain; version=0.0.4; charset=utf-8")
    );
    let before = Samples::of(&text);

    // The run: a player enters and looks around, is refused once, types a word that is no
    // command and a line that is too long, and steps onto the fork, where the sweeper's
    // timeout picks for them.
    let user = "@measured:test";
    let too_long = format!("!zone {}", "x".repeat(5000));
    let script = [
        ("!zone enter crypt_valdris", 200),
        ("!zone advance", 200),
        ("!zone map", 200),
        ("!zone map", 200),
        ("!char level 5", 200),
        ("!zone xyzzy-plugh", 200),
        (too_long.as_str(), 422),
        ("!zone advance", 200),
    ];
    let mut events = 0;
    let mut run_token = None;
    for (text, status) in script {
        let r = c.command(user, text, None).expect("command");
        assert_eq!(
            r.status,
            status,
            "{}: {}",
            &text[..text.len().min(30)],
            r.text()
        );
        let a = r.json();
        events += a["events"].as_array().map_or(0, Vec::len);
        if let Some(t) = a["run"]["token"].as_str() {
            run_token = Some(t.to_string());
        }
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    while support::take_notices(&mut c, user).is_empty() {
        assert!(
            Instant::now() < deadline,
            "the sweeper did not pick at the fork"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let stream = open_stream(p.addr, run_token.as_deref().expect("the run's token"));

    let (status, text, _) = scrape(&mut anonymous, Some(&metrics_token));
    assert_eq!(status, 200, "{text}");
    promtool_accepts(&text);
    let after = Samples::of(&text);

    let commands = |pairs: &[(&str, &str, f64)]| -> BTreeMap<String, f64> {
        pairs
            .iter()
            .map(|(verb, outcome, n)| {
                (
                    format!("zonegraph_commands_total{{verb=\"{verb}\",outcome=\"{outcome}\"}}"),
                    *n,
                )
            })
            .collect()
    };
    assert_eq!(
        after.moved(&before, "zonegraph_commands_total"),
        commands(&[
            ("enter", "ok", 1.0),
            ("advance", "ok", 2.0),
            ("map", "ok", 2.0),
            ("char level", "refused", 1.0),
            ("none", "not_understood", 1.0),
            ("none", "too_long", 1.0),
        ]),
        "{text}"
    );
    let count = "zonegraph_command_duration_seconds_count";
    assert_eq!(after.get(count) - before.get(count), 8.0, "{text}");
    let sum = "zonegraph_command_duration_seconds_sum";
    assert!(after.get(sum) > before.get(sum), "{text}");
    // Every command took under 10 s: all 8 are in the last finite bucket.
    let under_10 = "zonegraph_command_duration_seconds_bucket{le=\"10\"}";
    assert_eq!(after.get(under_10) - before.get(under_10), 8.0, "{text}");
    assert_eq!(
        after.moved(&before, "zonegraph_fork_timeouts_total"),
        BTreeMap::from([("zonegraph_fork_timeouts_total".to_string(), 1.0)]),
        "{text}"
    );
    // No host hook, no Matrix here: nothing of theirs moved.
    assert!(
        after
            .moved(&before, "zonegraph_host_hook_calls_total")
            .is_empty(),
        "{text}"
    );

    // The states, as they are now.
    assert_eq!(after.get("zonegraph_run_streams"), 1.0, "{text}");
    assert_eq!(before.get("zonegraph_run_streams"), 0.0, "{text}");
    let zones = c.get("/healthz").expect("healthz").json()["zones"]
        .as_f64()
        .expect("zones");
    assert_eq!(after.get("zonegraph_zones_served"), zones, "{text}");
    // Every event of the commands (and of the fork's timeout) waits: nobody receives them.
    let waiting = after.get("zonegraph_events_outbox_waiting");
    assert!(
        events > 0 && waiting > events as f64,
        "{waiting} of {events}: {text}"
    );
    let age = after.get("zonegraph_events_outbox_oldest_age_seconds");
    assert!(age > 0.0 && age < 60.0, "{age}: {text}");
    drop(stream);
}

/// A host game that is down: each command's call to it fails until the breaker leaves it
/// alone, and the metrics say so call by call.
#[test]
fn a_host_game_that_is_down_shows_in_its_calls_and_its_pause() {
    let dir = tempfile::tempdir().expect("temp dir");
    let closed = zonegraph_tests::free_port();
    let mut command = support::serve_command(&support::zones(), dir.path());
    command
        .arg("--db")
        .arg(dir.path().join("z.db"))
        .args(["--host-hook", &format!("http://127.0.0.1:{closed}/game")])
        .env("ZONEGRAPH_API_TOKEN", API_TOKEN)
        .env_remove("RUST_LOG");
    let p = Stopped(Process::spawn_logged(
        command,
        &dir.path().join("stderr.log"),
    ));
    let mut c = Conn::connect(p.0.addr)
        .expect("connect")
        .with_token(Some(API_TOKEN));
    let (status, text, _) = scrape(&mut c, None);
    assert_eq!(status, 200, "{text}");
    let before = Samples::of(&text);
    assert_eq!(before.get("zonegraph_host_hook_paused"), 0.0, "{text}");
    // Each status asks the host for the sheet once: three failures, then it is left alone.
    for _ in 0..4 {
        let r = c
            .command("@hosted:test", "!zone status", None)
            .expect("command");
        assert_eq!(r.status, 200, "{}", r.text());
    }
    let (status, text, _) = scrape(&mut c, None);
    assert_eq!(status, 200, "{text}");
    promtool_accepts(&text);
    let after = Samples::of(&text);
    let calls = |outcome: &str, n: f64| {
        (
            format!("zonegraph_host_hook_calls_total{{kind=\"character\",outcome=\"{outcome}\"}}"),
            n,
        )
    };
    assert_eq!(
        after.moved(&before, "zonegraph_host_hook_calls_total"),
        BTreeMap::from([calls("unwell", 3.0), calls("paused", 1.0)]),
        "{text}"
    );
    assert_eq!(
        after.moved(&before, "zonegraph_host_hook_pauses_total"),
        BTreeMap::from([("zonegraph_host_hook_pauses_total".to_string(), 1.0)]),
        "{text}"
    );
    assert_eq!(after.get("zonegraph_host_hook_paused"), 1.0, "{text}");
    assert_eq!(
        after.moved(&before, "zonegraph_commands_total"),
        BTreeMap::from([(
            "zonegraph_commands_total{verb=\"status\",outcome=\"host_failed\"}".to_string(),
            4.0
        )]),
        "{text}"
    );
}
