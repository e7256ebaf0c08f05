//! The server's log as a log shipper reads it: `zonegraph serve --log-format json` played over
//! HTTP, then stopped; every line of its stderr is a JSON object, each command is one event
//! with its fields, and no secret is anywhere in it. And a dependency's `log` records reach
//! the text log at their level, as `--log` says.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::Value;
use zonegraph_tests::client::Conn;

use crate::support::{self, Process};

const API_TOKEN: &str = "log-test-api-token-5f0c1a";
const EVENTS_SECRET: &str = "log-test-events-secret-9b2e77";

/// The JSON objects of the log at `path`, asserting every line is one.
fn json_lines(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).expect("the log");
    text.lines()
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

/// A command sent, its HTTP status and what its log event must say.
struct Step<'a> {
    text: &'a str,
    status: u16,
    verb: Option<&'a str>,
    outcome: &'a str,
    reason: Option<&'a str>,
    zone: Option<&'a str>,
}

/// SIGTERM, and the process's end (within 10 s).
fn stop(p: &mut Process) {
    let ok = std::process::Command::new("kill")
        .args(["-TERM", &p.child.id().to_string()])
        .status()
        .expect("kill");
    assert!(ok.success());
    let deadline = Instant::now() + Duration::from_secs(10);
    while p.child.try_wait().expect("wait").is_none() {
        assert!(
            Instant::now() < deadline,
            "the server did not stop on SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_played_runs_json_log_has_each_commands_fields_and_no_secret() {
    let dir = tempfile::tempdir().expect("temp dir");
    let log = dir.path().join("stderr.log");
    // An events receiver nobody listens at: the sender fails, and says so, with its secret
    // at hand.
    let closed = zonegraph_tests::free_port();
    let events_url = format!("http://127.0.0.1:{closed}/events");
    let mut command = support::serve_command(&support::zones(), dir.path());
    command
        .arg("--db")
        .arg(dir.path().join("z.db"))
        .args(["--log-format", "json", "--events-url", &events_url])
        .env("ZONEGRAPH_API_TOKEN", API_TOKEN)
        .env("ZONEGRAPH_EVENTS_SECRET", EVENTS_SECRET)
        .env_remove("RUST_LOG");
    let mut p = Process::spawn_logged(command, &log);
    let mut c = Conn::connect(p.addr)
        .expect("connect")
        .with_token(Some(API_TOKEN));
    let user = "@logged:test";
    let too_long = format!("!zone {}", "x".repeat(5000));
    let crypt = Some("crypt_valdris");
    let step = |text, status, verb, outcome, reason, zone| Step {
        text,
        status,
        verb,
        outcome,
        reason,
        zone,
    };
    let script = [
        step(
            "!zone enter crypt_valdris",
            200,
            Some("enter"),
            "ok",
            None,
            crypt,
        ),
        step("!zone advance", 200, Some("advance"), "ok", None, crypt),
        step("!zone map", 200, Some("map"), "ok", None, crypt),
        step(
            "!char level 5",
            200,
            Some("char level"),
            "refused",
            Some("sheet_locked"),
            crypt,
        ),
        step(
            "!zone xyzzy-plugh",
            200,
            None,
            "not_understood",
            Some("unknown"),
            crypt,
        ),
        step(too_long.as_str(), 422, None, "too_long", None, None),
    ];
    // Every run token and link the answers told: none may reach the log.
    let mut told: Vec<String> = Vec::new();
    for Step { text, status, .. } in &script {
        let r = c.command(user, text, None).expect("request");
        assert_eq!(r.status, *status, "{text}: {}", r.text());
        let a = r.json();
        for key in ["token", "link"] {
            if let Some(s) = a["run"][key].as_str() {
                told.push(s.to_string());
            }
        }
        for reply in a["replies"].as_array().into_iter().flatten() {
            if let Some(link) = reply["link"].as_str() {
                told.push(link.to_string());
            }
        }
    }
    let token = told.first().cloned().expect("the run's token was told");
    assert!(
        told.iter().any(|t| t.contains("/run/")),
        "the map told its link: {told:?}"
    );
    // The events sender's failure is in the log before the server stops.
    let deadline = Instant::now() + Duration::from_secs(20);
    while !std::fs::read_to_string(&log)
        .unwrap_or_default()
        .contains("sending events to")
    {
        assert!(
            Instant::now() < deadline,
            "the events sender said nothing: {}",
            std::fs::read_to_string(&log).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    stop(&mut p);

    let lines = json_lines(&log);
    let commands: Vec<&Value> = lines.iter().filter(|v| v["message"] == "command").collect();
    assert_eq!(commands.len(), script.len(), "{commands:#?}");
    for (event, step) in commands.iter().zip(&script) {
        let Step {
            text,
            verb,
            outcome,
            reason,
            zone,
            ..
        } = step;
        let text = &text[..text.len().min(40)];
        assert_eq!(
            event["target"], "zonegraph_server::service",
            "{text}: {event}"
        );
        assert_eq!(event["level"], "INFO", "{text}: {event}");
        assert_eq!(event["platform"], "http", "{text}: {event}");
        assert_eq!(event["user"], user, "{text}: {event}");
        assert_eq!(event["verb"].as_str(), *verb, "{text}: {event}");
        assert_eq!(event["outcome"], *outcome, "{text}: {event}");
        assert_eq!(event["reason"].as_str(), *reason, "{text}: {event}");
        assert_eq!(event["zone"].as_str(), *zone, "{text}: {event}");
        assert!(event["latency_us"].is_u64(), "{text}: {event}");
        assert!(event["timestamp"].is_string(), "{text}: {event}");
    }
    for said in ["open-file limit", "sending events to", "stopping"] {
        assert!(
            lines
                .iter()
                .any(|v| v["message"].as_str().is_some_and(|m| m.contains(said))),
            "nothing says {said:?}: {lines:#?}"
        );
    }
    let text = std::fs::read_to_string(&log).expect("the log");
    let secrets = [
        API_TOKEN,
        EVENTS_SECRET,
        token.as_str(),
        "xyzzy",
        "xxxxxxxxxx",
    ];
    for secret in secrets
        .iter()
        .copied()
        .chain(told.iter().map(String::as_str))
    {
        assert!(!text.contains(secret), "{secret:?} is in the log:\n{text}");
    }
}

/// What a dependency says through the `log` crate (reqwest, as tokio-postgres does) reaches
/// the log at its level and under its target, as `--log` lets it; the text format is one line
/// per event.
#[test]
fn a_dependencys_log_records_reach_the_text_log_as_log_says() {
    let dir = tempfile::tempdir().expect("temp dir");
    let log = dir.path().join("stderr.log");
    let closed = zonegraph_tests::free_port();
    let mut command = support::serve_command(&support::zones(), dir.path());
    command
        .arg("--db")
        .arg(dir.path().join("z.db"))
        .args(["--log", "warn,zonegraph_server=info,reqwest=debug"])
        .args(["--host-hook", &format!("http://127.0.0.1:{closed}/game")])
        .env("ZONEGRAPH_API_TOKEN", API_TOKEN);
    let mut p = Process::spawn_logged(command, &log);
    let mut c = Conn::connect(p.addr)
        .expect("connect")
        .with_token(Some(API_TOKEN));
    let r = c
        .command("@hooked:test", "!zone status", None)
        .expect("request");
    assert_eq!(r.status, 200, "{}", r.text());
    stop(&mut p);
    let text = std::fs::read_to_string(&log).expect("the log");
    let has = |level: &str, target: &str, words: &str| {
        text.lines().any(|l| {
            l.contains(&format!("{level} {target}")) && l.contains(words) && !l.starts_with('{')
        })
    };
    assert!(
        has("DEBUG", "reqwest::connect", "starting new connection"),
        "{text}"
    );
    assert!(
        has(" WARN", "zonegraph_server::store", "host hook: character"),
        "{text}"
    );
    assert!(
        has(
            " INFO",
            "zonegraph_server::service",
            "outcome=\"host_failed\""
        ),
        "{text}"
    );
    assert!(!text.contains("TRACE"), "{text}");
}
