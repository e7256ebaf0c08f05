//! The Matrix takeover across two `zonegraph serve` processes on one PostgreSQL database, with
//! Synapse (`tests/synapse/synapse.sh`; runs with `ZONEGRAPH_SLOW_TESTS=1`, and where
//! PostgreSQL is installed, as `postgres.rs` does). Both log in as the same bot account, each
//! a device of its own in its own working directory (`zonegraph.matrix/`); one syncs, the
//! other stands by. A player (an encrypting matrix-sdk client) DMs the bot and plays: one
//! command before the second instance exists (its device can never read it), one after. The
//! syncing process is SIGKILLed; the player goes on during the gap; the other process takes
//! over and answers what was sent in the gap (it can read it: it uploaded its keys at start,
//! so the player's client shared its room keys with it too), and answers nothing twice nor
//! complains about the message it cannot read (the other instance answered it). How long the
//! takeover took is printed, not asserted (BENCHMARKS.md).

use std::io::BufRead as _;
use std::path::Path;
use std::process::{Child, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use matrix_sdk::ruma::events::room::message::RoomMessageEventContent;
use matrix_sdk::ruma::{OwnedUserId, UserId};
use serde_json::Value;
use zonegraph_tests::postgres;
use zonegraph_tests::room_told;
use zonegraph_tests::synapse::Synapse;

use zonegraph_server::matrix;

use crate::element::ElementPlayer;
use crate::matrix::{BOT, Player, bodies};

/// A `zonegraph serve --matrix` process on the shared database, its log collected.
struct Instance {
    name: &'static str,
    child: Child,
    /// Each line of its stderr, with when it came.
    log: Arc<Mutex<Vec<(Instant, String)>>>,
}

impl Instance {
    /// Starts `zonegraph serve --db <url> --matrix` in `dir` (its working directory, where
    /// its `zonegraph.matrix/` state goes).
    fn start(name: &'static str, dir: &Path, url: &str, synapse: &Synapse) -> Instance {
        Instance::start_with_key(name, dir, url, synapse, None)
    }

    /// [`Instance::start`] with the recovery key in the environment.
    fn start_with_key(
        name: &'static str,
        dir: &Path,
        url: &str,
        synapse: &Synapse,
        key: Option<&str>,
    ) -> Instance {
        std::fs::create_dir_all(dir).expect("instance dir");
        let mut command = crate::postgres::serve_process(url, dir, "takeover-token");
        match key {
            Some(k) => command.env(matrix::identity::RECOVERY_ENV, k),
            None => command.env_remove(matrix::identity::RECOVERY_ENV),
        };
        let mut child = command
            .current_dir(dir)
            .arg("--matrix")
            .env("ZONEGRAPH_MATRIX_HOMESERVER", &synapse.url)
            .env("ZONEGRAPH_MATRIX_USER", BOT)
            .env("ZONEGRAPH_MATRIX_PASSWORD", "bot-password")
            .env("ZONEGRAPH_MATRIX_ALLOW", "@alice:localhost,@erin:localhost")
            .env_remove("ZONEGRAPH_MATRIX_TOKEN")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the server process starts");
        let log: Arc<Mutex<Vec<(Instant, String)>>> = Arc::default();
        let (lines, l) = (
            std::io::BufReader::new(child.stderr.take().expect("stderr")).lines(),
            log.clone(),
        );
        std::thread::spawn(move || {
            for line in lines.map_while(Result::ok) {
                eprintln!("[{name}] {line}");
                l.lock().expect("log").push((Instant::now(), line));
            }
        });
        Instance { name, child, log }
    }

    /// Whether a line of its log so far contains `text`.
    fn said(&self, text: &str) -> bool {
        self.said_at(text).is_some()
    }

    /// When it first said `text`.
    fn said_at(&self, text: &str) -> Option<Instant> {
        self.log
            .lock()
            .expect("log")
            .iter()
            .find(|(_, l)| l.contains(text))
            .map(|(at, _)| *at)
    }

    /// Waits until it says `text`.
    fn wait_to_say(&self, text: &str, within: Duration) {
        let deadline = Instant::now() + within;
        while !self.said(text) {
            assert!(
                Instant::now() < deadline,
                "instance {} did not say {text:?} within {within:?}",
                self.name
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

const LISTENING: &str = "listening for !zone";
const STANDING_BY: &str = "standing by";

#[test]
fn a_standby_instance_takes_the_matrix_sync_over_and_answers_the_gap_once() {
    if !zonegraph_tests::slow_tests("matrix takeover") {
        return;
    }
    let Some(cluster) = postgres::shared() else {
        return;
    };
    let started = Instant::now();
    let dir = tempfile::tempdir().expect("temp dir");
    let synapse = Synapse::start(&dir.path().join("synapse"));
    synapse.register("zonebot", "bot-password");
    synapse.register("alice", "alice-password");
    synapse.register("erin", "erin-password");
    let url = cluster.fresh_db();

    // The first instance runs alone and takes the sync lock.
    let mut holder = Instance::start("one", &dir.path().join("one"), &url, &synapse);
    holder.wait_to_say(LISTENING, Duration::from_secs(120));
    let device = |i: &Instance| {
        let text = std::fs::read_to_string(
            dir.path()
                .join(i.name)
                .join("zonegraph.matrix/session.json"),
        )
        .expect("each instance keeps its session in its working directory");
        let v: Value = serde_json::from_str(&text).expect("session JSON");
        v["device_id"].as_str().expect("device id").to_string()
    };
    let holder_device = device(&holder);

    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let alice = rt.block_on(Player::join(&synapse.url, "alice", "alice-password"));
    let say = async |text: &str, expect: &str| {
        let before = alice.count();
        alice
            .room
            .send(RoomMessageEventContent::text_plain(text))
            .await
            .expect("send");
        alice
            .wait_for(before, expect, Duration::from_secs(60), text)
            .await
    };
    // Sent while the first instance's device is the bot's only one: the second will never
    // read it.
    let t = bodies(&rt.block_on(say("!zone enter crypt_valdris", "You enter")));
    assert!(t.contains("Room 1 of 6"), "{t}");

    // Erin plays on Element's crypto stack in its default mode (only cross-signed devices).
    let mut erin = ElementPlayer::start(&synapse.url, "erin", "erin-password", dir.path());
    let erin_dm = erin.dm();
    erin.wait_for_signed(&holder_device);
    let t = erin.say(&erin_dm, "!zone enter crypt_valdris", "You enter");
    assert!(t.contains("Room 1 of 6"), "{t}");

    // Without the recovery key, another instance of the account refuses to start: it would
    // be a device nobody signed.
    let keyless = Instance::start("keyless", &dir.path().join("keyless"), &url, &synapse);
    keyless.wait_to_say(matrix::identity::RECOVERY_ENV, Duration::from_secs(120));
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut keyless = keyless;
    while keyless.child.try_wait().expect("wait").is_none() {
        assert!(
            Instant::now() < deadline,
            "the keyless instance did not stop"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    drop(keyless);

    // The second logs in as a device of its own with the recovery key the first start wrote,
    // joins the identity, uploads its keys and stands by.
    let key = std::fs::read_to_string(dir.path().join("one/zonegraph.matrix-recovery-key"))
        .expect("the first start wrote the recovery key beside its state");
    let standby = Instance::start_with_key(
        "two",
        &dir.path().join("two"),
        &url,
        &synapse,
        Some(key.trim()),
    );
    standby.wait_to_say(STANDING_BY, Duration::from_secs(120));
    assert!(
        standby.said("joined @zonebot:localhost's cross-signing identity"),
        "the standby did not join the identity"
    );
    assert!(
        standby.said("uploaded the keys of device"),
        "the standby did not upload its keys"
    );
    // Which one syncs, from their logs.
    assert!(holder.said(LISTENING) && !standby.said(LISTENING));
    let standby_device = device(&standby);
    assert_ne!(holder_device, standby_device, "one device each");
    // Erin's client trusts the standby's device too: it will get her room keys.
    erin.wait_for_signed(&standby_device);

    rt.block_on(async {
        // Alice's client learns the new device (it shares its room keys with both now).
        let bot: OwnedUserId = UserId::parse(BOT).expect("bot id");
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let devices = alice
                .client
                .encryption()
                .get_user_devices(&bot)
                .await
                .expect("devices");
            let known: Vec<String> = devices
                .devices()
                .map(|d| d.device_id().to_string())
                .collect();
            if known.contains(&holder_device) && known.contains(&standby_device) {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "Alice's client does not know the standby's device {standby_device}: {known:?}"
            );
            alice.sync().await;
        }

        let t = bodies(&say("!zone advance", "Bone Corridor").await);
        assert!(t.contains("Room 2 of 6"), "{t}");
        assert!(
            !standby.said(LISTENING),
            "the standby started answering while the holder lived"
        );

        // The holder dies; Alice goes on at once, in the gap.
        let before = alice.count();
        holder.child.kill().expect("SIGKILL");
        let killed = Instant::now();
        let _ = holder.child.wait();
        // (The elite fight in Main Hall is left alone: its roll differs from run to run.)
        let gap = ["!zone advance", "!zone go 1", "!zone status"];
        for text in gap {
            alice
                .room
                .send(RoomMessageEventContent::text_plain(text))
                .await
                .expect("send in the gap");
        }
        // The first answer after the kill, then the last command's.
        // Erin too: answered once the standby took over, and it decrypts.
        let erin_gap = erin.say(&erin_dm, "!zone advance", "Bone Corridor");
        assert!(erin_gap.contains("Room 2 of 6"), "{erin_gap}");
        let first = alice
            .wait_for(before, "", Duration::from_secs(120), "the takeover")
            .await;
        let took = killed.elapsed();
        assert!(!first.is_empty());
        alice
            .wait_for(
                before,
                "You are in",
                Duration::from_secs(60),
                "the gap's last command",
            )
            .await;
        let after = |text: &str| {
            standby
                .said_at(text)
                .expect("the standby did not take over")
                .duration_since(killed)
                .as_secs_f64()
        };
        eprintln!(
            "matrix takeover: after the SIGKILL the standby took the lock after {:.1} s and \
             listened (first sync done) after {:.1} s; the first answer reached the player \
             after {:.1} s",
            after("took the sync lock"),
            after(LISTENING),
            took.as_secs_f64()
        );

        // Nothing more comes: each gap command was answered once, none from before again.
        for _ in 0..10 {
            alice.sync().await;
        }
        let after: Vec<Value> = alice.seen.lock().expect("seen")[before..].to_vec();
        // The rooms the answers told, in order: the fork (3), Main Hall (4), the status (4),
        // each once; nothing from before the kill (1, 2).
        let rooms: Vec<usize> = after
            .iter()
            .filter_map(|v| room_told(v["body"].as_str().unwrap_or_default()))
            .collect();
        assert_eq!(rooms, [3, 4, 4], "answers after the kill: {after:#?}");
        // The first command, which the new device cannot read, was answered: no word on it.
        assert!(
            !bodies(&after).contains("decrypt"),
            "answers after the kill: {after:#?}"
        );
        // The run moved once per command.
        let t = bodies(&say("!zone status", "You are in").await);
        assert!(t.contains("Main Hall"), "{t}");
        assert_eq!(room_told(&t), Some(4), "{t}");
    });
    eprintln!(
        "matrix takeover: the test took {:.1} s",
        started.elapsed().as_secs_f64()
    );
    drop(standby);
}
