//! A burst of commands through Matrix under Synapse's default message rate limit
//! (`rc_message`: 0.2 messages/s per sender after a burst of 10), as a homeserver an operator
//! installs has it, the bot's account not exempted. (Logins and joins are raised: by default
//! one address logs in 5 times and then once every 5 minutes, which the players' set-up
//! would wait on, not the bot.)
//!
//! N players (default 10, `ZONEGRAPH_BENCH_PLAYERS`) in one encrypted room with the bot each
//! send K commands (default 3, `ZONEGRAPH_BENCH_COMMANDS`) at once, without waiting: N×K
//! commands, one reply each. The bot's replies are its messages, so after its burst of 10 the
//! homeserver lets one through every 5 s: the floor for the last answer is
//! (N×K − 10) / 0.2 s. Printed: how many were answered, whether each player's answers came
//! in the order of their commands, when the last came, and that floor.
//!
//! `cargo bench -p zonegraph-tests --bench matrix_burst` (after `tests/synapse/synapse.sh
//! setup`). Takes about two minutes more than the floor (the players' logins are rate
//! limited too).

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "a benchmark")]
#![recursion_limit = "256"]

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
use matrix_sdk::ruma::{OwnedRoomId, UserId};
use matrix_sdk::{Client, Room};
use zonegraph_server::matrix;
use zonegraph_server::server::{self as serve, Auth, ServerConfig};
use zonegraph_tests::synapse::{Synapse, root};

const BOT: &str = "@zonebot:localhost";
/// Messages of the bot that players' clients could not decrypt.
static UNREADABLE: AtomicUsize = AtomicUsize::new(0);

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// When each answer token first arrived at a player's client, in arrival order.
type Arrivals = Arc<Mutex<Vec<(String, Instant)>>>;

/// The token in an answer: `nowhere-<player>-<n>`.
fn token_of(body: &str) -> Option<String> {
    let start = body.find("nowhere-")?;
    let rest = &body[start..];
    let end = rest.find(['"', ' ', '\n', '.', ',']).unwrap_or(rest.len());
    Some(rest[..end].to_string())
}

async fn login(homeserver: &str, name: &str, arrivals: &Arrivals) -> Client {
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
    let a = arrivals.clone();
    client.add_event_handler(move |ev: OriginalSyncRoomMessageEvent| {
        let a = a.clone();
        async move {
            if ev.sender.as_str() == BOT
                && let Some(t) = token_of(ev.content.body())
            {
                let mut a = a.lock().unwrap();
                if !a.iter().any(|(s, _)| *s == t) {
                    a.push((t, Instant::now()));
                }
            }
        }
    });
    // The bot's messages this client could not decrypt: there, but unread (a room key that
    // came late; matrix-sdk does not decrypt a timeline event again for a plain handler).
    client.add_event_handler(move |ev: OriginalSyncRoomEncryptedEvent| async move {
        if ev.sender.as_str() == BOT {
            UNREADABLE.fetch_add(1, Ordering::SeqCst);
        }
    });
    // Up to 200 events per room per sync: a burst of 30 commands and 10 answers comes in
    // one sync, and Synapse's default of 10 would leave the earlier ones out as a gap.
    let mut filter = FilterDefinition::default();
    filter.room.timeline.limit = Some(200_u32.into());
    let settings = SyncSettings::new().filter(Filter::FilterDefinition(filter));
    client.sync_once(settings.clone()).await.unwrap();
    let c = client.clone();
    tokio::spawn(async move {
        let _ = c.sync(settings.timeout(Duration::from_secs(10))).await;
    });
    client
}

async fn wait_member(room: &Room, user: &UserId) {
    let deadline = Instant::now() + Duration::from_secs(300);
    loop {
        if let Ok(Some(m)) = room.get_member_no_sync(user).await
            && *m.membership() == MembershipState::Join
        {
            return;
        }
        assert!(Instant::now() < deadline, "{user} never joined");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

fn main() {
    let n = env_usize("ZONEGRAPH_BENCH_PLAYERS", 10);
    let k = env_usize("ZONEGRAPH_BENCH_COMMANDS", 3);
    let dir = tempfile::tempdir().unwrap();
    let synapse = Synapse::start_with_default_message_limit(&dir.path().join("synapse"));
    synapse.register("zonebot", "bot-password");
    let names: Vec<String> = (0..n).map(|i| format!("b{i:02}")).collect();
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
    config.auth = Auth::Token("burst-token".into());
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
    rt.block_on(async {
        let arrivals: Vec<Arrivals> = (0..n).map(|_| Arrivals::default()).collect();
        let mut clients = Vec::new();
        for (name, a) in names.iter().zip(&arrivals) {
            clients.push(login(&synapse.url, name, a).await);
        }
        // One encrypted room: the first player invites the bot and the others.
        let mut request = create_room::v3::Request::new();
        request.invite = clients
            .iter()
            .skip(1)
            .map(|c| c.user_id().unwrap().to_owned())
            .chain([UserId::parse(BOT).unwrap()])
            .collect();
        request.preset = Some(create_room::v3::RoomPreset::PrivateChat);
        request.initial_state = vec![
            InitialStateEvent::with_empty_state_key(
                RoomEncryptionEventContent::with_recommended_defaults(),
            )
            .to_raw_any(),
        ];
        let room = clients[0].create_room(request).await.unwrap();
        let id: OwnedRoomId = room.room_id().to_owned();
        for c in clients.iter().skip(1) {
            let deadline = Instant::now() + Duration::from_secs(300);
            while c.join_room_by_id(&id).await.is_err() {
                assert!(Instant::now() < deadline, "cannot join");
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
        }
        wait_member(&room, <&UserId>::try_from(BOT).unwrap()).await;
        // Let the homeserver's message bucket for the bot refill (it said nothing yet, but
        // the players' joins and the room's keys went by).
        tokio::time::sleep(Duration::from_secs(5)).await;

        // The burst: every player sends all their commands at once.
        let start = Instant::now();
        let mut sends = Vec::new();
        for (i, c) in clients.iter().enumerate() {
            let r = c.get_room(&id).expect("joined");
            sends.push(tokio::spawn(async move {
                for m in 0..k {
                    r.send(RoomMessageEventContent::text_plain(format!(
                        "!zone enter nowhere-{i}-{m}"
                    )))
                    .await
                    .unwrap();
                }
            }));
        }
        for s in sends {
            s.await.unwrap();
        }
        let sent = start.elapsed();
        let total = n * k;
        let deadline = start + Duration::from_secs(600);
        let answered = |arr: &[Arrivals]| -> usize {
            arr.iter()
                .enumerate()
                .map(|(i, a)| {
                    a.lock()
                        .unwrap()
                        .iter()
                        .filter(|(t, _)| t.starts_with(&format!("nowhere-{i}-")))
                        .count()
                })
                .sum()
        };
        while answered(&arrivals) < total && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        let mut last = Duration::ZERO;
        let mut in_order = 0;
        for (i, a) in arrivals.iter().enumerate() {
            let a = a.lock().unwrap();
            let mine: Vec<&(String, Instant)> = a
                .iter()
                .filter(|(t, _)| t.starts_with(&format!("nowhere-{i}-")))
                .collect();
            let order: Vec<String> = mine.iter().map(|(t, _)| t.clone()).collect();
            let want: Vec<String> = (0..mine.len())
                .map(|m| format!("nowhere-{i}-{m}"))
                .collect();
            if order == want {
                in_order += 1;
            } else {
                println!("player {i}: answers came as {order:?}");
            }
            for (_, at) in mine {
                last = last.max(at.duration_since(start));
            }
        }
        let floor = total.saturating_sub(10) as f64 / 0.2;
        println!(
            "{n} players × {k} commands at once ({total}; all sent within {:.1} s), Synapse's \
             default rc_message (0.2/s, burst 10):",
            sent.as_secs_f64()
        );
        println!(
            "| answered (read by the players) | not decrypted by the players' clients | players \
             answered in order | last answer after | floor |"
        );
        println!("|---:|---:|---:|---:|---:|");
        println!(
            "| {} of {total} | {} | {in_order} of {n} | {:.1} s | {floor:.0} s |",
            answered(&arrivals),
            UNREADABLE.load(Ordering::SeqCst),
            last.as_secs_f64()
        );
    });
    drop(server);
}
