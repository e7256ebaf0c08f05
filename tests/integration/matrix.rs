//! The Matrix transport against a real homeserver: Synapse from PyPI in a venv
//! (`tests/synapse/synapse.sh`), on loopback, rate limits raised, users registered with the
//! shared secret. A player DMs the bot, plays the Crypt of Valdris to the fork, chooses and
//! asks for the map; the bot's notices are checked (body and formatted_body). A second
//! player's fork times out and the "picked for you" notice reaches his DM; then the bot
//! restarts, resumes its saved session and answers only what is new.
//!
//! It takes Synapse's start-up (a few seconds warm; the venv's pip install once, minutes) so
//! it runs with `ZONEGRAPH_SLOW_TESTS=1`; crates/xtask/src/matrix.rs prepares the venv and
//! sets it for `cargo xtask test`.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use matrix_sdk::Client;
use matrix_sdk::config::SyncSettings;
use matrix_sdk::ruma::events::room::member::MembershipState;
use matrix_sdk::ruma::events::room::message::{
    OriginalSyncRoomMessageEvent, RoomMessageEventContent,
};
use matrix_sdk::ruma::{OwnedUserId, UserId};
use serde_json::Value;
use zonegraph_server::matrix;
use zonegraph_server::serve::{self, ServerConfig};

const PUBLIC: &str = "https://zones.example";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ sits in the workspace")
        .to_path_buf()
}

fn script() -> PathBuf {
    root().join("tests/synapse/synapse.sh")
}

/// Stops the Synapse it started, pass or fail.
struct Synapse {
    dir: PathBuf,
    url: String,
}

impl Synapse {
    fn start(dir: &Path) -> Synapse {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let status = Command::new(script())
            .arg("start")
            .arg(dir)
            .arg(port.to_string())
            .status()
            .expect("run tests/synapse/synapse.sh");
        let s = Synapse {
            dir: dir.to_path_buf(),
            url: format!("http://127.0.0.1:{port}"),
        };
        assert!(
            status.success(),
            "Synapse did not start: see {}",
            dir.display()
        );
        s
    }

    fn register(&self, user: &str, password: &str) {
        let port = self.url.rsplit(':').next().expect("port");
        let status = Command::new(script())
            .args(["register"])
            .arg(&self.dir)
            .args([port, user, password])
            .status()
            .expect("run synapse.sh register");
        assert!(status.success(), "cannot register {user}");
    }
}

impl Drop for Synapse {
    fn drop(&mut self) {
        let _ = Command::new(script()).arg("stop").arg(&self.dir).status();
    }
}

/// The bot's notices as JSON contents, in order.
type Seen = Arc<Mutex<Vec<Value>>>;

/// A test user in a DM with the bot, collecting the bot's notices.
struct Player {
    client: Client,
    room: matrix_sdk::Room,
    seen: Seen,
}

const BOT: &str = "@zonebot:localhost";

impl Player {
    /// Logs in, opens a DM with the bot and waits until the bot has joined it.
    async fn join(homeserver: &str, name: &str, password: &str) -> Player {
        let client = Client::builder()
            .homeserver_url(homeserver)
            .build()
            .await
            .expect("client");
        client
            .matrix_auth()
            .login_username(name, password)
            .await
            .expect("the player logs in");
        client.sync_once(SyncSettings::new()).await.expect("sync");
        let bot_id: OwnedUserId = UserId::parse(BOT).expect("user id");
        let seen: Seen = Arc::default();
        let (s, b) = (seen.clone(), bot_id.clone());
        client.add_event_handler(move |ev: OriginalSyncRoomMessageEvent| {
            let (s, b) = (s.clone(), b.clone());
            async move {
                if ev.sender == b {
                    let v = serde_json::to_value(&ev.content).expect("content as JSON");
                    s.lock().expect("seen").push(v);
                }
            }
        });
        // A DM: the bot is invited and joins by itself.
        let room = client.create_dm(&bot_id).await.expect("create the DM");
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let bot = room.get_member_no_sync(&bot_id).await.expect("members");
            if bot.is_some_and(|m| *m.membership() == MembershipState::Join) {
                break;
            }
            assert!(Instant::now() < deadline, "the bot did not join the DM");
            client
                .sync_once(SyncSettings::new().timeout(Duration::from_millis(500)))
                .await
                .expect("sync");
        }
        Player { client, room, seen }
    }

    /// Sends `text` and waits for a notice containing `expect`; returns the new notices.
    async fn say(&self, text: &str, expect: &str) -> Vec<Value> {
        let before = self.seen.lock().expect("seen").len();
        self.room
            .send(RoomMessageEventContent::text_plain(text))
            .await
            .expect("send");
        self.wait_for(before, expect, Duration::from_secs(30), text)
            .await
    }

    /// Syncs until a notice after the first `before` contains `expect`.
    async fn wait_for(
        &self,
        before: usize,
        expect: &str,
        within: Duration,
        what: &str,
    ) -> Vec<Value> {
        let deadline = Instant::now() + within;
        loop {
            self.client
                .sync_once(SyncSettings::new().timeout(Duration::from_millis(500)))
                .await
                .expect("sync");
            let new: Vec<Value> = self.seen.lock().expect("seen")[before..].to_vec();
            if new
                .iter()
                .any(|v| v["body"].as_str().is_some_and(|b| b.contains(expect)))
            {
                return new;
            }
            assert!(
                Instant::now() < deadline,
                "{what}: no notice containing {expect:?} within {within:?}; got {new:#?}"
            );
        }
    }

    fn count(&self) -> usize {
        self.seen.lock().expect("seen").len()
    }
}

fn bodies(notices: &[Value]) -> String {
    notices
        .iter()
        .map(|v| v["body"].as_str().unwrap_or_default())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The server with the bot, as `zonegraph serve --matrix` starts it.
fn start_bot(dir: &Path, synapse: &Synapse) -> (serve::Server, PathBuf) {
    let db = dir.join("z.db");
    let mut config = ServerConfig::new(
        db.clone(),
        root().join("zones"),
        "127.0.0.1:0".parse().expect("address"),
    );
    config.web = dir.join("no-viewer");
    config.public_url = Some(PUBLIC.into());
    config.run_ids = Arc::new(|u| format!("{u}/1"));
    // Long enough for a player who answers at once, short enough to watch a pick happen.
    config.fork_timeout = Duration::from_secs(8);
    config.sweep_every = Duration::from_millis(200);
    let server = serve::spawn(config).expect("server starts");
    let bot_config = matrix::Config {
        homeserver: synapse.url.clone(),
        user: BOT.into(),
        secret: matrix::Secret::Password("bot-password".into()),
        state_dir: matrix::state_dir(&db),
    };
    matrix::start(server.runtime(), &server.state, &bot_config).expect("the bot logs in");
    (server, db)
}

fn saved_device(db: &Path) -> String {
    let text = std::fs::read_to_string(matrix::state_dir(db).join("session.json"))
        .expect("the session is saved next to the database");
    let v: Value = serde_json::from_str(&text).expect("session JSON");
    v["device_id"].as_str().expect("device id").to_string()
}

#[test]
fn a_player_dms_the_bot_and_plays_the_crypt_on_synapse() {
    if std::env::var("ZONEGRAPH_SLOW_TESTS").as_deref() != Ok("1") {
        eprintln!(
            "matrix: the Synapse test was not run: it runs with ZONEGRAPH_SLOW_TESTS=1 \
             (after `tests/synapse/synapse.sh setup`; see crates/xtask/src/matrix.rs)"
        );
        return;
    }
    let started = Instant::now();
    let dir = tempfile::tempdir().expect("temp dir");
    let synapse = Synapse::start(&dir.path().join("synapse"));
    synapse.register("zonebot", "bot-password");
    synapse.register("alice", "alice-password");
    synapse.register("bob", "bob-password");
    let (server, db) = start_bot(dir.path(), &synapse);
    let device = saved_device(&db);

    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let alice = rt.block_on(async {
        let alice = Player::join(&synapse.url, "alice", "alice-password").await;
        let n = alice.say("!zone enter crypt_valdris", "You enter").await;
        let t = bodies(&n);
        assert!(t.contains("You enter Crypt of Valdris."), "{t}");
        assert!(t.contains("Room 1 of 6: Crypt Threshold"), "{t}");
        for v in &n {
            assert_eq!(v["msgtype"], "m.notice", "{v}");
            assert_eq!(v["format"], "org.matrix.custom.html", "{v}");
        }
        assert!(
            n.iter().any(|v| v["formatted_body"]
                .as_str()
                .is_some_and(|h| h.contains("<b>Crypt of Valdris</b>"))),
            "{n:#?}"
        );
        let t = bodies(&alice.say("!zone advance", "Bone Corridor").await);
        assert!(t.contains("Room 2 of 6: Bone Corridor"), "{t}");
        let t = bodies(&alice.say("!zone advance", "Main Hall").await);
        assert!(t.contains("1. Main Hall (elite)"), "the fork: {t}");
        let t = bodies(&alice.say("!zone go 1", "Main Hall").await);
        assert!(t.contains("Main Hall"), "{t}");
        let t = bodies(&alice.say("!zone advance", "Sanctum").await);
        assert!(t.contains("Valdris's Sanctum"), "{t}");

        let n = alice.say("!zone map", "Run map:").await;
        let map = n
            .iter()
            .find(|v| v["body"].as_str().is_some_and(|b| b.contains("Run map:")))
            .expect("the map notice");
        let body = map["body"].as_str().expect("body");
        let html = map["formatted_body"].as_str().expect("formatted_body");
        assert_eq!(map["msgtype"], "m.notice");
        assert_eq!(map["format"], "org.matrix.custom.html");
        assert!(body.contains("Main Hall"), "{body}");
        assert!(body.contains(&format!("Run map: {PUBLIC}/run/")), "{body}");
        assert!(html.starts_with("<pre><code>"), "{html}");
        assert!(html.contains("</code></pre>"), "{html}");
        assert!(
            html.contains("Valdris&#39;s Sanctum"),
            "labels escaped: {html}"
        );
        assert!(html.contains(&format!("<a href=\"{PUBLIC}/run/")), "{html}");
        assert!(serde_json::to_vec(map).expect("json").len() < 65_536);

        // Bob reaches the fork and says nothing: the sweeper picks, and the notice comes
        // to his DM by itself.
        let bob = Player::join(&synapse.url, "bob", "bob-password").await;
        bob.say("!zone enter crypt_valdris", "You enter").await;
        bob.say("!zone advance", "Bone Corridor").await;
        bob.say("!zone advance", "Main Hall").await;
        let before = bob.count();
        let t = bodies(
            &bob.wait_for(
                before,
                "picked for you",
                Duration::from_secs(40),
                "fork timeout",
            )
            .await,
        );
        assert!(t.contains("You lingered too long at the fork"), "{t}");
        alice
    });

    // A restart resumes the saved session (same device, no new login) and does not answer
    // the messages it already saw.
    drop(server);
    let (server, _) = start_bot(dir.path(), &synapse);
    assert_eq!(saved_device(&db), device, "the restart logged in again");
    rt.block_on(async {
        let before = alice.count();
        alice.say("!zone status", "Sanctum").await;
        // Give replays of old messages, if any, time to show up.
        for _ in 0..4 {
            alice
                .client
                .sync_once(SyncSettings::new().timeout(Duration::from_millis(500)))
                .await
                .expect("sync");
        }
        let new: Vec<Value> = alice.seen.lock().expect("seen")[before..].to_vec();
        assert_eq!(new.len(), 1, "old messages answered again: {new:#?}");
    });
    eprintln!(
        "matrix: Synapse test took {:.1} s",
        started.elapsed().as_secs_f64()
    );
    drop(server);
}
