//! Players on Element's own crypto stack against the bot on Synapse: matrix-js-sdk with its
//! Rust crypto, from npm, driven in Node (`tests/element/player.mjs`), in Element's default
//! trust mode since 2026 ("exclude insecure devices": room keys go only to devices their owner
//! cross-signed, and messages from any other device are not decrypted), with cross-signing
//! bootstrapped for the player as Element does at first login. Runs with
//! `ZONEGRAPH_SLOW_TESTS=1` (`cargo xtask test` sets up Synapse and `npm ci`s the player).
//!
//! - The strict player plays the Crypt to the boss in an encrypted DM; every reply decrypts;
//!   the bot's device is signed by its owner.
//! - A restart with a lost store (a new device) is signed again from the recovery key file,
//!   answers what the player said while it was down (its room key from the key backup), and
//!   the strict player goes on.
//! - A second bot with no recovery key for the same account refuses to start.
//! - A public room of two gets no run link.
//!
//! Synapse runs with its own default rate limits here, as an operator installs it.

use std::io::{BufRead as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use zonegraph_server::matrix;
use zonegraph_tests::synapse::{Synapse, root};

use crate::matrix::BOT;

/// A player process on Element's stack; requests on its stdin, answers in a file.
pub(crate) struct ElementPlayer {
    child: Child,
    stdin: ChildStdin,
    results: PathBuf,
    /// Answers read so far.
    read: usize,
    pub(crate) device: String,
    /// The homeserver's `/keys/query` answer for the bot at the last [`Self::bot_devices`].
    last_keys: Value,
}

impl ElementPlayer {
    /// Logs `user` in on a new device (strict trust mode), bootstraps their cross-signing and
    /// syncs.
    pub(crate) fn start(homeserver: &str, user: &str, password: &str, dir: &Path) -> Self {
        let script = root().join("tests/element/player.mjs");
        assert!(
            root()
                .join("tests/element/node_modules/matrix-js-sdk")
                .exists(),
            "tests/element/node_modules is missing: `cargo xtask setup` runs npm ci there"
        );
        let results = dir.join(format!("{user}-answers.jsonl"));
        let log = std::fs::File::create(dir.join(format!("{user}-node.log"))).expect("log");
        let mut child = Command::new("node")
            .arg(&script)
            .args([homeserver, user, password])
            .arg(&results)
            .stdin(Stdio::piped())
            .stdout(log.try_clone().expect("log"))
            .stderr(log)
            .spawn()
            .expect("node runs tests/element/player.mjs");
        let stdin = child.stdin.take().expect("stdin");
        let mut p = ElementPlayer {
            child,
            stdin,
            results,
            read: 0,
            device: String::new(),
            last_keys: Value::Null,
        };
        let ready = p.next_answer(Duration::from_secs(120), "the player's login");
        p.device = ready["device"].as_str().expect("device").to_string();
        p
    }

    /// The next answer in the results file.
    fn next_answer(&mut self, within: Duration, what: &str) -> Value {
        let deadline = Instant::now() + within;
        loop {
            if let Ok(f) = std::fs::File::open(&self.results) {
                let lines: Vec<String> = std::io::BufReader::new(f)
                    .lines()
                    .map_while(Result::ok)
                    .collect();
                if let Some(line) = lines.get(self.read) {
                    self.read += 1;
                    let v: Value = serde_json::from_str(line).expect("an answer is JSON");
                    assert!(v["ok"] == true, "{what}: {v:#}");
                    return v;
                }
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("{what}: the player process ended ({status}); see its -node.log");
            }
            assert!(
                Instant::now() < deadline,
                "{what}: no answer within {within:?}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Sends a request and waits for its answer (which must be ok).
    pub(crate) fn ask(&mut self, req: Value, within: Duration) -> Value {
        let what = req.to_string();
        self.request(&req);
        self.next_answer(within, &what)
    }

    /// Sends a request without waiting for its answer (see [`Self::said`]).
    fn request(&mut self, req: &Value) {
        writeln!(self.stdin, "{req}").expect("write to the player");
        self.stdin.flush().expect("flush");
    }

    /// Says `text` in `room` now; [`Self::said`] waits for the bot's answer later.
    pub(crate) fn say_later(&mut self, room: &str, text: &str, expect: &str) {
        self.request(
            &json!({"op": "say", "room": room, "text": text, "expect": expect, "timeout_ms": 120_000}),
        );
    }

    /// The answer to [`Self::say_later`], every reply decrypted.
    pub(crate) fn said(&mut self) -> String {
        let v = self.next_answer(
            Duration::from_secs(130),
            "the answer to a message said earlier",
        );
        assert_eq!(v["failures"], json!([]), "replies did not decrypt: {v:#}");
        bodies(&v)
    }

    /// An encrypted DM with the bot, made as Element makes one; returns once the bot joined.
    pub(crate) fn dm(&mut self) -> String {
        let v = self.ask(json!({"op": "dm", "bot": BOT}), Duration::from_secs(60));
        v["room"].as_str().expect("room").to_string()
    }

    /// Says `text` in `room` and returns the bot's replies once one contains `expect`,
    /// asserting that every one of them decrypted.
    pub(crate) fn say(&mut self, room: &str, text: &str, expect: &str) -> String {
        let v = self.ask(
            json!({"op": "say", "room": room, "text": text, "expect": expect, "timeout_ms": 60_000}),
            Duration::from_secs(70),
        );
        assert_eq!(
            v["failures"],
            json!([]),
            "replies to {text:?} did not decrypt: {v:#}"
        );
        bodies(&v)
    }

    /// The bot's devices as this player's client judges them: (device id, signed by owner).
    /// Her client tracks them (and so judges them) once she shares an encrypted room with it.
    pub(crate) fn bot_devices(&mut self) -> Vec<(String, bool)> {
        let v = self.ask(
            json!({"op": "devices", "user": BOT}),
            Duration::from_secs(30),
        );
        self.last_keys = v["homeserver_keys"].clone();
        v["devices"]
            .as_array()
            .expect("devices")
            .iter()
            .map(|d| {
                (
                    d["id"].as_str().expect("id").to_string(),
                    d["signedByOwner"] == true,
                )
            })
            .collect()
    }

    /// Waits until this player's client sees `device` of the bot, signed by its owner.
    pub(crate) fn wait_for_signed(&mut self, device: &str) {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let devices = self.bot_devices();
            if devices.iter().any(|(d, signed)| d == device && *signed) {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "the player's client does not see the bot's device {device} as signed by its \
                 owner: {devices:?}; the homeserver holds {:#}",
                self.last_keys
            );
            std::thread::sleep(Duration::from_millis(500));
        }
    }

    /// Every message of the bot in `room` so far: (bodies, decryption failures).
    pub(crate) fn messages(&mut self, room: &str) -> (String, Vec<Value>) {
        let v = self.ask(
            json!({"op": "messages", "room": room}),
            Duration::from_secs(30),
        );
        let failures = v["failures"].as_array().cloned().unwrap_or_default();
        (bodies(&v), failures)
    }
}

impl Drop for ElementPlayer {
    fn drop(&mut self) {
        let _ = writeln!(self.stdin, "{}", json!({"op": "quit"}));
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An answer's bodies, one text.
fn bodies(v: &Value) -> String {
    v["bodies"]
        .as_array()
        .map(|b| {
            b.iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

/// The device id the bot saved in its state directory.
fn bot_device(db: &Path) -> String {
    let text = std::fs::read_to_string(matrix::state_dir(db).join("session.json"))
        .expect("the bot's session");
    let v: Value = serde_json::from_str(&text).expect("session JSON");
    v["device_id"].as_str().expect("device id").to_string()
}

#[test]
fn an_element_player_in_its_default_trust_mode_plays_the_crypt_with_the_bot() {
    if !zonegraph_tests::slow_tests("matrix: the Element (matrix-js-sdk) test") {
        return;
    }
    let started = Instant::now();
    let dir = tempfile::tempdir().expect("temp dir");
    // Synapse as installed: its own rate limits (0.2 messages/s after a burst of 10).
    let synapse = Synapse::start_with_default_limits(&dir.path().join("synapse"));
    synapse.register("zonebot", "bot-password");
    synapse.register("edda", "edda-password");
    let (server, db) = crate::matrix::start_bot(dir.path(), &synapse);
    let first_device = bot_device(&db);

    // The first start made the identity and wrote its recovery key beside the database.
    let key_file = matrix::identity::recovery_key_file(&matrix::state_dir(&db));
    let key = std::fs::read_to_string(&key_file).expect("the recovery key file");
    assert!(key.trim().len() > 40, "a recovery key: {key:?}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(&key_file)
            .expect("key file")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600, "the recovery key file is private");
    }

    // (Her name fixes her run's rolls, `@edda:localhost/1`: she wins Main Hall's fight.)
    let mut edda = ElementPlayer::start(&synapse.url, "edda", "edda-password", dir.path());
    let dm = edda.dm();
    // (Her client tracks the bot's devices once they share an encrypted room.)
    edda.wait_for_signed(&first_device);
    let t = edda.say(&dm, "!zone enter crypt_valdris", "You enter");
    assert!(t.contains("You enter Crypt of Valdris."), "{t}");
    assert!(t.contains("Room 1 of 6: Crypt Threshold"), "{t}");
    let t = edda.say(&dm, "!zone advance", "Bone Corridor");
    assert!(t.contains("Room 2 of 6"), "{t}");
    let t = edda.say(&dm, "!zone advance", "Main Hall");
    assert!(t.contains("1. Main Hall (elite)"), "the fork: {t}");
    edda.say(&dm, "!zone go 1", "Main Hall");

    // The bot goes down and Edda speaks meanwhile: her client shares the room key with the
    // devices it knows, the dead one alone.
    drop(server);
    edda.say_later(&dm, "!zone status", "Main Hall");
    std::thread::sleep(Duration::from_secs(2));
    // It comes back with a lost store: a new device, signed again from the key file, which
    // reads her message with its room key from the key backup and answers it.
    std::fs::remove_dir_all(matrix::state_dir(&db)).expect("lose the store");
    let (server, _) = crate::matrix::start_bot(dir.path(), &synapse);
    let second_device = bot_device(&db);
    assert_ne!(first_device, second_device, "a lost store is a new device");
    let t = edda.said();
    assert!(t.contains("You are in Main Hall"), "{t}");
    edda.wait_for_signed(&second_device);
    // On to the boss: Main Hall's elite, the Antechamber, then Valdris's Sanctum (the rolls
    // are fixed by the run id, so this is the same walk every time).
    let mut t = edda.say(&dm, "!zone status", "Main Hall");
    for _ in 0..8 {
        if t.contains("Valdris's Sanctum") || t.contains("Your run ends") {
            break;
        }
        let next = if t.contains("!zone fight") {
            "!zone fight"
        } else {
            "!zone advance"
        };
        t = edda.say(&dm, next, "");
    }
    assert!(t.contains("Valdris's Sanctum"), "the boss's room: {t}");
    let t = edda.say(&dm, "!zone fight", "");
    assert!(!t.is_empty(), "the boss fight was answered");
    let (all, failures) = edda.messages(&dm);
    assert!(
        failures.is_empty(),
        "messages of the bot that did not decrypt: {failures:?}\n{all}"
    );

    // A public room of the player and the bot is not private: no run link there.
    let public = edda.ask(
        json!({"op": "public_room", "bot": BOT}),
        Duration::from_secs(60),
    )["room"]
        .as_str()
        .expect("room")
        .to_string();
    let t = edda.say(&public, "!zone map", "direct message");
    assert!(!t.contains("/run/"), "a run link in a public room: {t}");

    // A second bot for the account, with a store of its own and no recovery key: refused.
    let other = dir.path().join("other");
    std::fs::create_dir_all(&other).expect("dir");
    let refused = crate::matrix::try_start_bot(&other, &synapse).expect_err("refused");
    assert!(matrix::identity::is_refusal(&refused), "{refused:#}");
    assert!(
        format!("{refused:#}").contains(matrix::identity::RECOVERY_ENV),
        "{refused:#}"
    );
    // It left no device behind: every device of the bot Edda's client lists is signed.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let devices = edda.bot_devices();
        if devices.iter().all(|(_, signed)| *signed) {
            assert!(
                devices.iter().any(|(d, _)| *d == second_device),
                "{devices:?}"
            );
            break;
        }
        assert!(
            Instant::now() < deadline,
            "a device of the bot nobody signed is left: {devices:?}"
        );
        std::thread::sleep(Duration::from_millis(500));
    }
    drop(server);
    eprintln!(
        "matrix: the Element test took {:.1} s",
        started.elapsed().as_secs_f64()
    );
}
