//! Commands through Matrix against commands through the HTTP API, on one machine.
//!
//! A Synapse on loopback (`tests/synapse/synapse.sh`), the bot (`zonegraph serve --matrix`,
//! in process, rate limit off) and N players, matrix-sdk clients with end-to-end encryption
//! (default 20, `ZONEGRAPH_BENCH_PLAYERS`). Each player sends K commands (default 10,
//! `ZONEGRAPH_BENCH_COMMANDS`), one after another, waiting for each answer; all players at
//! once. Three paths, the same command (`!zone enter nowhere-<player>-<k>`, answered with a
//! refusal that names it, so each answer is known for its sender's, and a database write per
//! command to record the event):
//! 1. each player in an encrypted DM with the bot;
//! 2. all players in one shared encrypted room;
//! 3. the HTTP API (`POST /api/command`), the same players and commands.
//!
//! A reply's latency is from the player's send to the answer's arrival at the player's
//! client (through the player's own sync). The homeserver's own latency is measured alike: a
//! player's message to another room of theirs, from send to its arrival back through sync.
//!
//! `cargo bench -p zonegraph-tests --bench matrix` (after `tests/synapse/synapse.sh setup`).

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "a benchmark")]
// matrix-sdk's sync future is deep.
#![recursion_limit = "256"]

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use matrix_sdk::config::SyncSettings;
use matrix_sdk::ruma::api::client::filter::FilterDefinition;
use matrix_sdk::ruma::api::client::room::create_room;
use matrix_sdk::ruma::api::client::sync::sync_events::v3::Filter;
use matrix_sdk::ruma::events::InitialStateEvent;
use matrix_sdk::ruma::events::room::encrypted::OriginalSyncRoomEncryptedEvent;
use matrix_sdk::ruma::events::room::encryption::RoomEncryptionEventContent;
use matrix_sdk::ruma::events::room::member::MembershipState;
use matrix_sdk::ruma::events::room::message::{
    OriginalSyncRoomMessageEvent, RoomMessageEventContent,
};
use matrix_sdk::ruma::{OwnedRoomId, OwnedUserId, UserId};
use matrix_sdk::{Client, Room};
use zonegraph_server::matrix;
use zonegraph_server::server::{self as serve, Auth, ServerConfig};
use zonegraph_tests::client::Conn;
use zonegraph_tests::synapse::{Synapse, root};

const BOT: &str = "@zonebot:localhost";
/// Messages of the bot that a player's client could not decrypt, over the whole run.
static UNREADABLE: AtomicUsize = AtomicUsize::new(0);
const TOKEN: &str = "bench-token";
/// The room every player shares with the bot.
static SHARED: std::sync::OnceLock<OwnedRoomId> = std::sync::OnceLock::new();

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Arrival times of messages at a player's client, by a token their body contains.
type Arrivals = Arc<Mutex<HashMap<String, Instant>>>;

struct Player {
    name: String,
    client: Client,
    dm: Room,
    /// A room with only the player in it: the homeserver's own round trip.
    echo: Room,
    arrivals: Arrivals,
}

/// The token in a body: the word after "nowhere-" up to the quote, or an echo token.
fn token_of(body: &str) -> Option<String> {
    let start = body.find("nowhere-")?;
    let rest = &body[start..];
    let end = rest.find(['"', ' ', '\n']).unwrap_or(rest.len());
    Some(rest[..end].to_string())
}

async fn wait_member(room: &Room, user: &UserId, want: MembershipState) {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        if let Ok(Some(m)) = room.get_member_no_sync(user).await
            && *m.membership() == want
        {
            return;
        }
        assert!(Instant::now() < deadline, "{user} never became {want:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn encrypted(mut request: create_room::v3::Request) -> create_room::v3::Request {
    request.initial_state = vec![
        InitialStateEvent::with_empty_state_key(
            RoomEncryptionEventContent::with_recommended_defaults(),
        )
        .to_raw_any(),
    ];
    request
}

impl Player {
    async fn join(homeserver: &str, name: &str) -> Player {
        let client = Client::builder()
            .homeserver_url(homeserver)
            .build()
            .await
            .unwrap();
        client
            .matrix_auth()
            .login_username(name, &format!("{name}-password"))
            .await
            .unwrap();
        let arrivals: Arrivals = Arc::default();
        let a = arrivals.clone();
        client.add_event_handler(move |ev: OriginalSyncRoomMessageEvent| {
            let a = a.clone();
            async move {
                if let Some(t) = token_of(ev.content.body()) {
                    a.lock().unwrap().entry(t).or_insert_with(Instant::now);
                }
            }
        });
        // The bot's messages this player's client could not decrypt (then its answer is
        // there but unread: not lost by the bot).
        client.add_event_handler(move |ev: OriginalSyncRoomEncryptedEvent| async move {
            if ev.sender.as_str() == BOT {
                UNREADABLE.fetch_add(1, Ordering::SeqCst);
            }
        });
        // Up to 200 events per room per sync: with Synapse's default of 10, a busy shared
        // room's sync is "limited" and the events before its last 10 never reach a handler
        // (they are on the server, but this client never reads them).
        let mut filter = FilterDefinition::default();
        filter.room.timeline.limit = Some(200_u32.into());
        let settings = SyncSettings::new().filter(Filter::FilterDefinition(filter));
        client.sync_once(settings.clone()).await.unwrap();
        let c = client.clone();
        tokio::spawn(async move {
            let _ = c.sync(settings.timeout(Duration::from_secs(10))).await;
        });
        let bot: OwnedUserId = UserId::parse(BOT).unwrap();
        let dm = client.create_dm(&bot).await.unwrap();
        let echo = client
            .create_room(encrypted(create_room::v3::Request::new()))
            .await
            .unwrap();
        wait_member(&dm, &bot, MembershipState::Join).await;
        Player {
            name: name.to_string(),
            client,
            dm,
            echo,
            arrivals,
        }
    }

    /// Sends `body` (containing `token`) to `room` and waits for a message with `token`.
    /// `None`: no answer within a minute.
    async fn round_trip(&self, room: &Room, body: &str, token: &str) -> Option<Duration> {
        let start = Instant::now();
        room.send(RoomMessageEventContent::text_plain(body))
            .await
            .unwrap();
        let deadline = start + Duration::from_secs(60);
        loop {
            if let Some(at) = self.arrivals.lock().unwrap().get(token) {
                return Some(at.duration_since(start));
            }
            if Instant::now() > deadline {
                eprintln!("bench: {}: no answer to {body} within 60 s", self.name);
                return None;
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    }
}

struct Figures {
    what: &'static str,
    commands: usize,
    /// Commands not answered within a minute (not in the latencies).
    unanswered: usize,
    seconds: f64,
    latencies: Vec<Duration>,
}

impl Figures {
    fn print(&mut self) {
        self.latencies.sort();
        let p = |q: f64| {
            let i = ((self.latencies.len() as f64 - 1.0) * q).round() as usize;
            self.latencies
                .get(i)
                .map_or(f64::NAN, |d| d.as_secs_f64() * 1000.0)
        };
        println!(
            "| {} | {} | {} | {:.1} | {:.0} | {:.0} |",
            self.what,
            self.commands,
            self.unanswered,
            self.latencies.len() as f64 / self.seconds,
            p(0.5),
            p(0.99)
        );
    }
}

/// Every player sends `k` commands in `room_of(player)`, one after another, all players at
/// once; `body(i, n)` is the n-th command of player i and must contain its token.
async fn matrix_phase(
    what: &'static str,
    players: &Arc<Vec<Player>>,
    k: usize,
    room_of: fn(&Player, &Option<Room>) -> Room,
    shared: &Option<Room>,
    prefix: &'static str,
) -> Figures {
    let start = Instant::now();
    let mut tasks = Vec::new();
    for i in 0..players.len() {
        let (players, shared) = (players.clone(), shared.clone());
        tasks.push(tokio::spawn(async move {
            let p = &players[i];
            let room = room_of(p, &shared);
            let mut out = Vec::new();
            for n in 0..k {
                let token = format!("nowhere-{prefix}{i}-{n}");
                out.push(
                    p.round_trip(&room, &format!("!zone enter {token}"), &token)
                        .await,
                );
            }
            out
        }));
    }
    let mut latencies = Vec::new();
    for t in tasks {
        latencies.extend(t.await.unwrap());
    }
    let answered: Vec<Duration> = latencies.iter().flatten().copied().collect();
    // Late or lost: the answers not there within 60 s get another 60 s.
    let missing: Vec<(usize, String)> = (0..players.len())
        .flat_map(|i| (0..k).map(move |n| (i, format!("nowhere-{prefix}{i}-{n}"))))
        .filter(|(i, t)| !players[*i].arrivals.lock().unwrap().contains_key(t))
        .collect();
    if !missing.is_empty() {
        tokio::time::sleep(Duration::from_secs(60)).await;
        let late = missing
            .iter()
            .filter(|(i, t)| players[*i].arrivals.lock().unwrap().contains_key(t))
            .count();
        println!(
            "{what}: {} answers not there within 60 s: {late} came within 60 s more, {} never \
             (messages of the bot that players' clients could not decrypt, so far: {})",
            missing.len(),
            missing.len() - late,
            UNREADABLE.load(Ordering::SeqCst)
        );
    }
    Figures {
        what,
        commands: players.len() * k,
        unanswered: latencies.len() - answered.len(),
        latencies: answered,
        seconds: start.elapsed().as_secs_f64(),
    }
}

fn main() {
    let n = env_usize("ZONEGRAPH_BENCH_PLAYERS", 20);
    let k = env_usize("ZONEGRAPH_BENCH_COMMANDS", 10);
    let dir = tempfile::tempdir().unwrap();
    let synapse = Synapse::start(&dir.path().join("synapse"));
    synapse.register("zonebot", "bot-password");
    let names: Vec<String> = (0..n).map(|i| format!("p{i:02}")).collect();
    for name in &names {
        synapse.register(name, &format!("{name}-password"));
    }
    let db = dir.path().join("z.db");
    let mut config = ServerConfig::new(
        db.clone(),
        root().join("zones"),
        "127.0.0.1:0".parse().unwrap(),
    );
    config.web = dir.path().join("no-viewer");
    config.auth = Auth::Token(TOKEN.into());
    config.limits.rate = None;
    let server = serve::spawn(config).unwrap();
    let bot = matrix::Config {
        homeserver: synapse.url.clone(),
        user: BOT.into(),
        secret: matrix::Login::Password("bot-password".into()),
        recovery_key: None,
        store_passphrase: None,
        state_dir: matrix::state_dir(&db),
        allow: Vec::new(),
    };
    matrix::start(server.runtime(), &server.state.service, &bot).unwrap();

    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut figures: Vec<Figures> = rt.block_on(async {
        let mut joining = Vec::new();
        for name in names.clone() {
            let url = synapse.url.clone();
            joining.push(tokio::spawn(async move { Player::join(&url, &name).await }));
        }
        let mut players = Vec::new();
        for j in joining {
            players.push(j.await.unwrap());
        }
        // The shared room: the first player invites the bot and everyone.
        let mut request = create_room::v3::Request::new();
        request.invite = players
            .iter()
            .skip(1)
            .map(|p| p.client.user_id().unwrap().to_owned())
            .chain([UserId::parse(BOT).unwrap()])
            .collect();
        request.preset = Some(create_room::v3::RoomPreset::PrivateChat);
        let shared = players[0]
            .client
            .create_room(encrypted(request))
            .await
            .unwrap();
        let shared_id: OwnedRoomId = shared.room_id().to_owned();
        drop(shared);
        for p in players.iter().skip(1) {
            let deadline = Instant::now() + Duration::from_secs(60);
            while p.client.join_room_by_id(&shared_id).await.is_err() {
                assert!(Instant::now() < deadline, "{} cannot join", p.name);
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }
        let room = players[0].client.get_room(&shared_id).expect("joined");
        wait_member(
            &room,
            <&UserId>::try_from(BOT).unwrap(),
            MembershipState::Join,
        )
        .await;
        let players = Arc::new(players);
        // Warm-up: one command each in the DM (the key exchange), one in the shared room.
        matrix_phase("warm-up", &players, 1, |p, _| p.dm.clone(), &None, "w").await;
        println!("{n} players, {k} commands each, one at a time per player, all players at once");
        println!("| path | commands | unanswered | answers/s | p50 ms | p99 ms |");
        println!("|---|---:|---:|---:|---:|---:|");
        let mut out = Vec::new();
        out.push(
            matrix_phase(
                "Matrix, encrypted DMs",
                &players,
                k,
                |p, _| p.dm.clone(),
                &None,
                "d",
            )
            .await,
        );
        out.last_mut().unwrap().print();
        SHARED.set(shared_id.clone()).unwrap();
        let shared_of = |p: &Player, _: &Option<Room>| {
            p.client
                .get_room(SHARED.get().unwrap())
                .expect("the shared room")
        };
        matrix_phase("warm-up", &players, 1, shared_of, &None, "x").await;
        out.push(
            matrix_phase(
                "Matrix, one shared encrypted room",
                &players,
                k,
                shared_of,
                &None,
                "s",
            )
            .await,
        );
        out.last_mut().unwrap().print();
        out.push(
            matrix_phase(
                "Synapse alone (a player's own message back)",
                &players,
                k,
                |p, _| p.echo.clone(),
                &None,
                "e",
            )
            .await,
        );
        out.last_mut().unwrap().print();
        out
    });

    // The HTTP API: the same players and commands, one connection each.
    let addr = server.addr;
    let start = Instant::now();
    let handles: Vec<_> = (0..n)
        .map(|i| {
            std::thread::spawn(move || {
                let mut conn = Conn::connect(addr).unwrap().with_token(Some(TOKEN));
                let user = format!("@p{i:02}:localhost");
                (0..k)
                    .map(|c| {
                        let t = Instant::now();
                        let r = conn
                            .command(&user, &format!("!zone enter nowhere-h{i}-{c}"), None)
                            .unwrap();
                        assert!(r.text().contains("nowhere-"), "{}", r.text());
                        t.elapsed()
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let latencies: Vec<Duration> = handles
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    figures.push(Figures {
        what: "HTTP API",
        commands: n * k,
        unanswered: 0,
        seconds: start.elapsed().as_secs_f64(),
        latencies,
    });
    figures.last_mut().unwrap().print();
    drop(server);
}
