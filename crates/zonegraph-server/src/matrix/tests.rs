//! Mock-homeserver tests (wiremock): formatting, size cutting, retries and errors, the
//! hand-off to per-player queues, at-most-once answers, and where private replies go. They
//! mock the client-server endpoints directly (matrix-sdk's MatrixMockServer is a wrapper
//! over wiremock too).

#![allow(clippy::unwrap_used, reason = "tests")]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use matrix_sdk::authentication::matrix::MatrixSession;
use matrix_sdk::ruma::events::room::encrypted::OriginalSyncRoomEncryptedEvent;
use matrix_sdk::ruma::events::room::member::OriginalSyncRoomMemberEvent;
use matrix_sdk::ruma::events::room::message::{
    OriginalSyncRoomMessageEvent, RoomMessageEventContent,
};
use matrix_sdk::ruma::{RoomId, UserId};
use matrix_sdk::{SessionMeta, SessionTokens};
use zonegraph_core::chat::{Reply, escape};

use serde_json::{Value, json};
use wiremock::matchers::{method, path, path_regex};
use wiremock::{Mock, MockServer, ResponseTemplate};

use super::*;
use crate::store::{CommandSettings, Store};
use zonegraph_core::limits::Rate;

const ROOM: &str = "!dm:localhost";
/// Alice's DM in the two-room syncs, and a room she shares with Carol.
const DM: &str = "!dm:localhost";
const SHARED: &str = "!shared:localhost";
/// Bob's DM.
const BOB_DM: &str = "!bobdm:localhost";
const BOT: &str = "@bot:localhost";
const PLAYER: &str = "@alice:localhost";
const BOB: &str = "@bob:localhost";
const CAROL: &str = "@carol:localhost";
/// When the bot joined each room (homeserver time).
const JOINED_AT: i64 = 1_000;

fn reply(text: &str, html: &str) -> Reply {
    Reply {
        text: text.into(),
        html: html.into(),
        private: false,
        link: None,
        choices: Vec::new(),
    }
}

fn content_json(c: &RoomMessageEventContent) -> Value {
    serde_json::to_value(c).unwrap()
}

#[test]
fn commands_are_recognised() {
    for (body, want) in [
        ("!zone help", true),
        ("  !zone", true),
        ("!char", true),
        ("!char sheet", true),
        ("!Zone status", true),
        ("!CHAR", true),
        ("\t!zone\tmap", true),
        ("!zonex", false),
        ("hello !zone", false),
        ("!charm", false),
        ("", false),
    ] {
        assert_eq!(Service::is_for_bot(body), want, "{body:?}");
    }
}

#[test]
fn a_reply_is_a_notice_with_html_and_code_blocks() {
    let r = reply(
        "##\nRun map: http://h/run/abc",
        "<pre>##</pre>\nRun map: <a href=\"http://h/run/abc\">http://h/run/abc</a>",
    );
    let v = content_json(&notice(&r));
    assert_eq!(v["msgtype"], "m.notice");
    assert_eq!(v["body"], "##\nRun map: http://h/run/abc");
    assert_eq!(v["format"], "org.matrix.custom.html");
    assert_eq!(
        v["formatted_body"],
        "<pre><code>##</code></pre>\nRun map: <a href=\"http://h/run/abc\">http://h/run/abc</a>"
    );
}

#[test]
fn long_maps_are_cut_with_the_link() {
    let line = "#".repeat(79);
    let map: Vec<&str> = std::iter::repeat_n(line.as_str(), 2_000).collect();
    let map = map.join("\n");
    // The link is the reply's data (`Reply::link`), not words found in its text.
    let c = notice(&zonegraph_core::chat::map(
        &map,
        Some("https://zones.example/run/0123"),
    ));
    let bytes = serde_json::to_vec(&c).unwrap().len();
    assert!(bytes <= MAX_CONTENT_BYTES, "{bytes} bytes");
    let v = content_json(&c);
    let body = v["body"].as_str().unwrap();
    assert!(body.starts_with(&line), "{body:.100}");
    assert!(body.ends_with("the whole map is at https://zones.example/run/0123"));
    // Cut at a line end: every map line is whole.
    assert!(
        body.lines()
            .filter(|l| l.starts_with('#'))
            .all(|l| l == line)
    );
    let html = v["formatted_body"].as_str().unwrap();
    assert!(html.starts_with("<pre><code>#"));
    assert!(html.contains("</code></pre><p>"));
    assert!(html.contains("<a href=\"https://zones.example/run/0123\">"));
}

#[test]
fn cutting_escapes_and_handles_long_lines_and_no_link() {
    // One huge line of markup-looking text, no link: cut at a char boundary, escaped.
    let text = "<b>é</b>".repeat(10_000);
    let c = notice_within(&reply(&text, &escape(&text)), 4_000);
    assert!(serde_json::to_vec(&c).unwrap().len() <= 4_000);
    let v = content_json(&c);
    let html = v["formatted_body"].as_str().unwrap();
    assert!(!html.contains("<b>"), "user text must stay escaped");
    assert!(
        v["body"]
            .as_str()
            .unwrap()
            .ends_with("`!zone map` has the run-map link")
    );
}

#[test]
fn state_dir_is_next_to_the_database() {
    assert_eq!(
        state_dir(Path::new("/var/lib/zg/zonegraph.db")),
        PathBuf::from("/var/lib/zg/zonegraph.db.matrix")
    );
}

#[test]
fn config_needs_a_secret_and_prefers_the_token() {
    let mut args = MatrixArgs {
        matrix: true,
        matrix_homeserver: Some("http://127.0.0.1:8008".into()),
        matrix_user: Some(BOT.into()),
        ..MatrixArgs::default()
    };
    let err = Config::from_args(&args, Path::new("z.db")).unwrap_err();
    assert!(
        err.to_string().contains("ZONEGRAPH_MATRIX_PASSWORD"),
        "{err}"
    );
    args.matrix_password = Some("pw".into());
    args.matrix_token = Some("tok".into());
    let c = Config::from_args(&args, Path::new("z.db")).unwrap();
    assert!(matches!(c.secret, Login::Token(_)));
    let debug = format!("{c:?} {args:?}");
    assert!(
        !debug.contains("\"tok\"") && !debug.contains("\"pw\""),
        "secrets stay out of Debug: {debug}"
    );
}

/// A client logged in (restored session) against `server`, synced once into one joined DM.
async fn synced_client(server: &MockServer) -> Client {
    synced_into(server, sync_with(vec![])).await
}

/// A client logged in against `server`, synced once with `sync`.
async fn synced_into(server: &MockServer, sync: Value) -> Client {
    // No room here is encrypted (the SDK asks before its first send to a room).
    Mock::given(method("GET"))
        .and(path_regex(
            r"^/_matrix/client/v3/rooms/.*/state/m\.room\.encryption/?$",
        ))
        .respond_with(ResponseTemplate::new(404).set_body_json(json!({
            "errcode": "M_NOT_FOUND", "error": "Event not found."
        })))
        .mount(server)
        .await;
    Mock::given(method("GET"))
        .and(path("/_matrix/client/v3/sync"))
        .respond_with(ResponseTemplate::new(200).set_body_json(sync))
        .up_to_n_times(1)
        .mount(server)
        .await;
    let client = new_device(server).await;
    client.sync_once(SyncSettings::new()).await.unwrap();
    client
}

fn member(user: &str, room: &str) -> Value {
    json!({
        "type": "m.room.member", "state_key": user, "sender": user,
        "content": {"membership": "join"}, "event_id": format!("$m{}{}", &user[1..3], &room[1..3]),
        "origin_server_ts": if user == BOT { JOINED_AT } else { 1 }
    })
}

/// A room's join rule (`invite`: a DM as clients make one; `public`: anyone may join).
fn join_rule(rule: &str, room: &str) -> Value {
    json!({
        "type": "m.room.join_rules", "state_key": "", "sender": BOT,
        "content": {"join_rule": rule}, "event_id": format!("$j{}", &room[1..3]),
        "origin_server_ts": 1
    })
}

fn sync_with(timeline: Vec<Value>) -> Value {
    json!({
        "next_batch": "s1",
        "rooms": {"join": {ROOM: {
            "state": {"events": [member(BOT, ROOM), member(PLAYER, ROOM), join_rule("invite", ROOM)]},
            "timeline": {"events": timeline, "limited": false},
            "summary": {"m.joined_member_count": 2}
        }}}
    })
}

/// A sync into invite-only rooms given as (room id, members besides the bot).
fn sync_rooms(rooms: &[(&str, &[&str])]) -> Value {
    let rooms: Vec<(&str, &[&str], &str)> = rooms.iter().map(|&(r, m)| (r, m, "invite")).collect();
    sync_rooms_ruled(&rooms)
}

/// A sync into rooms given as (room id, members besides the bot, join rule).
fn sync_rooms_ruled(rooms: &[(&str, &[&str], &str)]) -> Value {
    let mut join = serde_json::Map::new();
    for (room, members, rule) in rooms {
        let mut state = vec![member(BOT, room), join_rule(rule, room)];
        state.extend(members.iter().map(|m| member(m, room)));
        join.insert(
            (*room).to_string(),
            json!({
                "state": {"events": state},
                "timeline": {"events": [], "limited": false},
                "summary": {"m.joined_member_count": members.len() + 1}
            }),
        );
    }
    json!({"next_batch": "s1", "rooms": {"join": join}})
}

fn room(client: &Client, id: &str) -> matrix_sdk::Room {
    client.get_room(<&RoomId>::try_from(id).unwrap()).unwrap()
}

/// Waits until the bot's queues are empty.
async fn settle(bot: &Bot) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while bot.busy() > 0 {
        assert!(Instant::now() < deadline, "the bot's queues did not drain");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

fn bot_over_store(dir: &Path) -> Bot {
    bot_with_rate(dir, None)
}

fn bot_with_rate(dir: &Path, rate: Option<Rate>) -> Bot {
    let zones = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../zones");
    let (store, _) = Store::open(&dir.join("z.db"), &zones).unwrap();
    let settings = CommandSettings {
        public_url: "https://zones.example".into(),
        fork_timeout_ms: 6 * 3_600_000,
        run_ids: Arc::new(|u| format!("run-{u}")),
        admins: Arc::default(),
        characters: crate::store::CharacterRules::AdminsOnly,
    };
    let state = Service::new(Arc::new(store), settings, rate);
    Bot::new(
        state,
        Allow::parse(&[], <&UserId>::try_from(BOT).unwrap()).unwrap(),
    )
}

/// A mock of the homeserver's send-message endpoint, to give a response.
fn sends() -> wiremock::MockBuilder {
    Mock::given(method("PUT")).and(path_regex(
        r"^/_matrix/client/v3/rooms/.*/send/m\.room\.message/.*",
    ))
}

/// The homeserver took the event.
fn sent_ok() -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({"event_id": "$r"}))
}

/// The homeserver refuses the bot: it is not in the room (a permanent error).
fn not_in_room() -> ResponseTemplate {
    ResponseTemplate::new(403).set_body_json(json!({
        "errcode": "M_FORBIDDEN", "error": "not in room"
    }))
}

fn sent_bodies(requests: &[wiremock::Request]) -> Vec<Value> {
    requests
        .iter()
        .filter(|r| r.method.as_str() == "PUT" && r.url.path().contains("/send/m.room.message/"))
        .map(|r| serde_json::from_slice(&r.body).unwrap())
        .collect()
}

fn message(body: &str) -> OriginalSyncRoomMessageEvent {
    message_at(body, crate::clock::now_ms())
}

fn message_at(body: &str, ts: i64) -> OriginalSyncRoomMessageEvent {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let id = format!("$e{}", NEXT.fetch_add(1, Ordering::Relaxed));
    event(PLAYER, &id, body, ts)
}

fn event(sender: &str, id: &str, body: &str, ts: i64) -> OriginalSyncRoomMessageEvent {
    serde_json::from_value(json!({
        "type": "m.room.message", "sender": sender, "event_id": id, "origin_server_ts": ts,
        "content": {"msgtype": "m.text", "body": body}
    }))
    .unwrap()
}

/// The bodies sent to `room`, in order.
async fn sent_to(server: &MockServer, room: &str) -> Vec<String> {
    let enc = room.replace('!', "%21").replace(':', "%3A");
    let requests: Vec<wiremock::Request> = server
        .received_requests()
        .await
        .unwrap()
        .into_iter()
        .filter(|r| r.url.path().contains(&enc) || r.url.path().contains(room))
        .collect();
    sent_bodies(&requests)
        .iter()
        .map(|v| v["body"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn a_command_is_answered_with_notices_and_the_dm_is_remembered() {
    let server = MockServer::start().await;
    let client = synced_client(&server).await;
    sends().respond_with(sent_ok()).mount(&server).await;
    let dir = tempfile::tempdir().unwrap();
    let bot = bot_over_store(dir.path());
    let room = client.get_room(<&RoomId>::try_from(ROOM).unwrap()).unwrap();

    // Sent before the bot joined (a homeserver replaying history): not answered.
    bot.on_message(&message_at("!zone enter crypt_valdris", 2), &room)
        .await;
    assert!(sent_bodies(&server.received_requests().await.unwrap()).is_empty());

    bot.on_message(&message("!zone enter crypt_valdris"), &room)
        .await;
    bot.on_message(&message("just chatting"), &room).await;
    let long = format!("!zone go {}", "9".repeat(5_000));
    bot.on_message(&message(&long), &room).await;
    settle(&bot).await;

    let sent = sent_bodies(&server.received_requests().await.unwrap());
    assert!(!sent.is_empty());
    for v in &sent {
        assert_eq!(v["msgtype"], "m.notice");
        assert_eq!(v["format"], "org.matrix.custom.html");
        assert!(v["body"].is_string() && v["formatted_body"].is_string());
    }
    assert!(
        sent[0]["body"]
            .as_str()
            .unwrap()
            .contains("Crypt of Valdris"),
        "{sent:?}"
    );
    let last = sent.last().unwrap()["body"].as_str().unwrap();
    assert!(last.contains("too long"), "{last}");
    // Remembered in the database for private replies and notices.
    assert_eq!(
        bot.state()
            .blocking(|s| s.dm_room(PLAYER))
            .await
            .unwrap()
            .as_deref(),
        Some(ROOM)
    );
}

#[tokio::test]
async fn rate_limits_are_retried_then_sent() {
    let server = MockServer::start().await;
    let client = synced_client(&server).await;
    sends()
        .respond_with(ResponseTemplate::new(429).set_body_json(json!({
            "errcode": "M_LIMIT_EXCEEDED", "error": "slow down", "retry_after_ms": 20
        })))
        .up_to_n_times(2)
        .mount(&server)
        .await;
    sends().respond_with(sent_ok()).mount(&server).await;
    let room = client.get_room(<&RoomId>::try_from(ROOM).unwrap()).unwrap();
    send_notice(&room, notice(&reply("hi", "hi")))
        .await
        .unwrap();
    assert_eq!(
        sent_bodies(&server.received_requests().await.unwrap()).len(),
        3
    );
}

/// A homeserver that stays over its rate limit for a while (a burst of many players) delays
/// a reply; it does not lose it: 429s are waited out, not counted as failed attempts.
#[tokio::test]
async fn a_long_rate_limit_is_waited_out_not_given_up() {
    let server = MockServer::start().await;
    let client = synced_client(&server).await;
    sends()
        .respond_with(ResponseTemplate::new(429).set_body_json(json!({
            "errcode": "M_LIMIT_EXCEEDED", "error": "slow down", "retry_after_ms": 5
        })))
        .up_to_n_times(40)
        .mount(&server)
        .await;
    sends().respond_with(sent_ok()).mount(&server).await;
    let room = client.get_room(<&RoomId>::try_from(ROOM).unwrap()).unwrap();
    let waits = || crate::metrics::counted(crate::metrics::MATRIX_RATE_LIMITED);
    let sent = || crate::metrics::counted(crate::metrics::MATRIX_SENT);
    let (waits_before, sent_before) = (waits(), sent());
    send_notice(&room, notice(&reply("hi", "hi")))
        .await
        .unwrap();
    assert_eq!(
        sent_bodies(&server.received_requests().await.unwrap()).len(),
        41
    );
    // The waits past the SDK's own retries are counted, and the message sent (other tests
    // of this process may count too: at least).
    assert!(waits() - waits_before >= 1.0, "{}", waits() - waits_before);
    assert!(sent() - sent_before >= 1.0, "{}", sent() - sent_before);
}

/// Two processes on one state directory would share one device's olm state: the second is
/// refused, and may start once the first let go.
#[test]
fn a_second_process_on_one_state_directory_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let state = state_dir(&dir.path().join("z.db"));
    let held = session::lock_state_dir(&state).unwrap();
    let e = session::lock_state_dir(&state).unwrap_err();
    assert!(identity::is_refusal(&e), "{e:#}");
    assert!(format!("{e:#}").contains("another process"), "{e:#}");
    drop(held);
    session::lock_state_dir(&state).unwrap();
}

/// The recovery key sits beside the database, outside the state directory (a lost store
/// keeps it), and secrets from the environment stay out of Debug.
#[test]
fn the_recovery_key_file_is_beside_the_state_and_secrets_stay_hidden() {
    let state = state_dir(Path::new("/srv/z.db"));
    assert_eq!(
        identity::recovery_key_file(&state),
        Path::new("/srv/z.db.matrix-recovery-key")
    );
    let args = MatrixArgs {
        matrix_homeserver: Some("https://hs".into()),
        matrix_user: Some("@bot:hs".into()),
        matrix_password: Some("pw".into()),
        ..MatrixArgs::default()
    };
    let mut c = Config::from_args(&args, Path::new("z.db")).unwrap();
    c.recovery_key = Some(Secret::new("EsTj 3yST y93F"));
    c.store_passphrase = Some(Secret::new("hunter2"));
    let debug = format!("{c:?}");
    assert!(
        !debug.contains("EsTj") && !debug.contains("hunter2"),
        "{debug}"
    );
}

#[tokio::test]
async fn a_forbidden_room_is_an_error_not_a_panic_nor_a_retry_loop() {
    let server = MockServer::start().await;
    let client = synced_client(&server).await;
    sends().respond_with(not_in_room()).mount(&server).await;
    let room = client.get_room(<&RoomId>::try_from(ROOM).unwrap()).unwrap();
    let err = send_notice(&room, notice(&reply("hi", "hi")))
        .await
        .unwrap_err();
    assert!(format!("{err:#}").contains("cannot send to"), "{err:#}");
    assert_eq!(
        sent_bodies(&server.received_requests().await.unwrap()).len(),
        1
    );
}

#[tokio::test]
async fn an_undecryptable_message_is_told_once_in_a_dm_and_nothing_crashes() {
    let server = MockServer::start().await;
    let client = synced_client(&server).await;
    sends().respond_with(sent_ok()).mount(&server).await;
    let dir = tempfile::tempdir().unwrap();
    let bot = bot_over_store(dir.path());
    let room = client.get_room(<&RoomId>::try_from(ROOM).unwrap()).unwrap();
    let ev: OriginalSyncRoomEncryptedEvent = serde_json::from_value(json!({
        "type": "m.room.encrypted", "sender": PLAYER, "event_id": "$e", "origin_server_ts": JOINED_AT + 1,
        "content": {"algorithm": "m.megolm.v1.aes-sha2", "ciphertext": "AAAA",
                    "sender_key": "k", "device_id": "D", "session_id": "s"}
    }))
    .unwrap();
    bot.on_undecryptable(&ev, None, &room).await;
    bot.on_undecryptable(&ev, None, &room).await;
    // Sent off the sync loop.
    let deadline = Instant::now() + Duration::from_secs(5);
    while sent_bodies(&server.received_requests().await.unwrap()).is_empty() {
        assert!(Instant::now() < deadline, "nothing was said");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    tokio::time::sleep(Duration::from_millis(50)).await;
    let sent = sent_bodies(&server.received_requests().await.unwrap());
    assert_eq!(sent.len(), 1);
    assert!(
        sent[0]["body"]
            .as_str()
            .unwrap()
            .contains("could not decrypt")
    );
}

#[tokio::test]
async fn undelivered_notices_stay_queued_in_order_and_refused_ones_are_dropped() {
    let server = MockServer::start().await;
    let client = synced_client(&server).await;
    let dir = tempfile::tempdir().unwrap();
    let bot = bot_over_store(dir.path());
    bot.state()
        .blocking(|s| s.set_dm_room(PLAYER, ROOM, true))
        .await
        .unwrap();
    let conn = crate::db::open(&dir.path().join("z.db")).unwrap();
    for text in ["picked for you: first", "picked for you: second"] {
        tx(&conn)
            .push_notice(PLAYER, "run-1", text, text, 1)
            .unwrap();
    }

    // The homeserver is down: nothing is sent, both notices stay queued, in order.
    let down = sends()
        .respond_with(ResponseTemplate::new(503).set_body_json(json!({
            "errcode": "M_UNKNOWN", "error": "down for maintenance"
        })))
        .mount_as_scoped(&server)
        .await;
    bot.deliver_notices(&client).await.unwrap();
    settle(&bot).await;
    drop(down);
    assert!(has_pending(&conn));

    // Back up: both are sent, oldest first, and the queue is empty.
    let up = sends()
        .respond_with(sent_ok())
        .mount_as_scoped(&server)
        .await;
    bot.deliver_notices(&client).await.unwrap();
    settle(&bot).await;
    drop(up);
    let sent = sent_bodies(&server.received_requests().await.unwrap());
    let ok: Vec<&str> = sent[sent.len() - 2..]
        .iter()
        .map(|v| v["body"].as_str().unwrap())
        .collect();
    assert_eq!(ok, ["picked for you: first", "picked for you: second"]);
    assert!(!has_pending(&conn));

    // A room that refuses the bot: the notice is dropped (logged), not retried forever.
    tx(&conn)
        .push_notice(PLAYER, "run-1", "third", "third", 2)
        .unwrap();
    let _forbidden = sends()
        .respond_with(not_in_room())
        .mount_as_scoped(&server)
        .await;
    bot.deliver_notices(&client).await.unwrap();
    settle(&bot).await;
    assert!(!has_pending(&conn));
}

#[tokio::test]
async fn a_player_over_the_rate_limit_is_told_once() {
    let server = MockServer::start().await;
    let client = synced_client(&server).await;
    sends().respond_with(sent_ok()).mount(&server).await;
    let dir = tempfile::tempdir().unwrap();
    // One command, then one every thousand seconds: the rest of the burst is refused.
    let rate = Rate {
        per_second_milli: 1,
        burst: 1,
    };
    let bot = bot_with_rate(dir.path(), Some(rate));
    let room = client.get_room(<&RoomId>::try_from(ROOM).unwrap()).unwrap();
    for _ in 0..4 {
        bot.on_message(&message("!zone help"), &room).await;
    }
    settle(&bot).await;
    let bodies: Vec<String> = sent_bodies(&server.received_requests().await.unwrap())
        .iter()
        .map(|v| v["body"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(bodies.len(), 2, "{bodies:?}");
    assert!(bodies[0].contains("Zone commands"), "{bodies:?}");
    assert!(bodies[1].starts_with("Slow down"), "{bodies:?}");
}

#[tokio::test]
async fn notices_before_a_reply_stay_queued_until_the_homeserver_took_them() {
    let server = MockServer::start().await;
    let client = synced_client(&server).await;
    let dir = tempfile::tempdir().unwrap();
    let bot = bot_over_store(dir.path());
    let room = client.get_room(<&RoomId>::try_from(ROOM).unwrap()).unwrap();
    let conn = crate::db::open(&dir.path().join("z.db")).unwrap();
    tx(&conn)
        .push_notice(PLAYER, "run-1", "picked for you", "picked for you", 1)
        .unwrap();

    // The homeserver is down: the notice is not sent, so it stays queued (and the reply,
    // which must not overtake it, is not sent either).
    let down = sends()
        .respond_with(ResponseTemplate::new(503).set_body_json(json!({
            "errcode": "M_UNKNOWN", "error": "down for maintenance"
        })))
        .mount_as_scoped(&server)
        .await;
    bot.on_message(&message("!zone help"), &room).await;
    settle(&bot).await;
    drop(down);
    assert!(has_pending(&conn));

    // Back up: the notice, then the reply; now it is delivered.
    let _up = sends()
        .respond_with(sent_ok())
        .mount_as_scoped(&server)
        .await;
    bot.on_message(&message("!zone help"), &room).await;
    settle(&bot).await;
    let sent = sent_bodies(&server.received_requests().await.unwrap());
    let last: Vec<&str> = sent[sent.len() - 2..]
        .iter()
        .map(|v| v["body"].as_str().unwrap())
        .collect();
    assert_eq!(last[0], "picked for you");
    assert!(last[1].contains("Zone commands"), "{last:?}");
    assert!(!has_pending(&conn));
}

#[tokio::test]
async fn a_send_stuck_in_one_room_does_not_delay_another_player() {
    let server = MockServer::start().await;
    let client = synced_into(&server, sync_rooms(&[(DM, &[PLAYER]), (BOB_DM, &[BOB])])).await;
    // Alice's room answers 429 for a while; Bob's at once.
    Mock::given(method("PUT"))
        .and(path_regex(
            r"^/_matrix/client/v3/rooms/(%21|!)dm.*/send/m\.room\.message/.*",
        ))
        .respond_with(
            ResponseTemplate::new(429)
                .set_body_json(json!({"errcode": "M_LIMIT_EXCEEDED", "error": "slow down",
                                      "retry_after_ms": 300}))
                .set_delay(Duration::from_millis(300)),
        )
        .mount(&server)
        .await;
    sends().respond_with(sent_ok()).mount(&server).await;
    let dir = tempfile::tempdir().unwrap();
    let bot = bot_over_store(dir.path());
    let now = crate::clock::now_ms();
    bot.on_message(&event(PLAYER, "$a1", "!zone help", now), &room(&client, DM))
        .await;
    // The sync loop's handler returned while Alice's answer is still being sent: the work is
    // queued, not done inside the handler.
    assert!(
        bot.busy() >= 1,
        "Alice's command was handled inside the sync loop"
    );
    bot.on_message(
        &event(BOB, "$b1", "!zone help", now),
        &room(&client, BOB_DM),
    )
    .await;
    let deadline = Instant::now() + Duration::from_secs(30);
    while sent_to(&server, BOB_DM).await.is_empty() {
        assert!(Instant::now() < deadline, "Bob was never answered");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    // Bob has his answer while Alice's send is still being retried: he did not wait for her
    // room (no clock needed to say so).
    assert!(bot.busy() >= 1, "Alice's send should still be stuck");
    settle(&bot).await;
}

#[tokio::test]
async fn each_event_is_answered_at_most_once_across_restarts() {
    let server = MockServer::start().await;
    let client = synced_client(&server).await;
    sends().respond_with(sent_ok()).mount(&server).await;
    let dir = tempfile::tempdir().unwrap();
    let bot = bot_over_store(dir.path());
    let dm = room(&client, ROOM);
    let now = crate::clock::now_ms();
    let ev = event(PLAYER, "$once", "!zone help", now);
    bot.on_message(&ev, &dm).await;
    bot.on_message(&ev, &dm).await;
    settle(&bot).await;
    assert_eq!(sent_to(&server, ROOM).await.len(), 1);
    // The same database after a restart (a re-join replays the room's history): still once.
    let again = Bot::new(bot.state().clone(), bot.allow().clone());
    again.on_message(&ev, &dm).await;
    settle(&again).await;
    assert_eq!(sent_to(&server, ROOM).await.len(), 1);
    // A new event is answered.
    again
        .on_message(&event(PLAYER, "$twice", "!zone help", now), &dm)
        .await;
    settle(&again).await;
    assert_eq!(sent_to(&server, ROOM).await.len(), 2);
}

#[tokio::test]
async fn senders_not_allowed_get_nothing() {
    let server = MockServer::start().await;
    let client = synced_into(
        &server,
        sync_rooms(&[(SHARED, &[PLAYER, "@eve:elsewhere.org"])]),
    )
    .await;
    sends().respond_with(sent_ok()).mount(&server).await;
    let dir = tempfile::tempdir().unwrap();
    let bot = bot_over_store(dir.path());
    let now = crate::clock::now_ms();
    bot.on_message(
        &event("@eve:elsewhere.org", "$eve", "!zone help", now),
        &room(&client, SHARED),
    )
    .await;
    settle(&bot).await;
    assert!(sent_to(&server, SHARED).await.is_empty());
    let allow = Allow::parse(
        &["elsewhere.org,@ann:third.net".into()],
        <&UserId>::try_from(BOT).unwrap(),
    )
    .unwrap();
    assert!(allow.allows(<&UserId>::try_from("@eve:elsewhere.org").unwrap()));
    assert!(allow.allows(<&UserId>::try_from("@ann:third.net").unwrap()));
    assert!(!allow.allows(<&UserId>::try_from("@bob:third.net").unwrap()));
    assert!(!allow.allows(<&UserId>::try_from(PLAYER).unwrap()));
    let err =
        Allow::parse(&["not a server".into()], <&UserId>::try_from(BOT).unwrap()).unwrap_err();
    assert!(format!("{err:#}").contains("--matrix-allow"), "{err:#}");
}

#[tokio::test]
async fn private_replies_in_a_shared_room_go_to_the_players_dm() {
    let server = MockServer::start().await;
    let client = synced_into(
        &server,
        sync_rooms(&[(SHARED, &[PLAYER, CAROL]), (DM, &[PLAYER])]),
    )
    .await;
    sends().respond_with(sent_ok()).mount(&server).await;
    let dir = tempfile::tempdir().unwrap();
    let bot = bot_over_store(dir.path());
    bot.state()
        .blocking(|s| s.set_dm_room(PLAYER, DM, true))
        .await
        .unwrap();
    let shared = room(&client, SHARED);
    for body in ["!zone enter crypt_valdris", "!zone map", "!char"] {
        bot.on_message(&message(body), &shared).await;
    }
    settle(&bot).await;
    let in_room = sent_to(&server, SHARED).await;
    let in_dm = sent_to(&server, DM).await;
    // The run's progress stays in the room; the link and the sheet do not.
    assert!(
        in_room[0].contains("You enter Crypt of Valdris"),
        "{in_room:?}"
    );
    assert!(
        in_room
            .iter()
            .all(|b| !b.contains("/run/") && !b.contains("Keys:")),
        "{in_room:?}"
    );
    assert_eq!(
        in_room
            .iter()
            .filter(|b| b.contains("sent you a direct message"))
            .count(),
        2,
        "{in_room:?}"
    );
    assert!(
        in_dm
            .iter()
            .any(|b| b.contains("Run map: https://zones.example/run/")),
        "{in_dm:?}"
    );
    assert!(in_dm.iter().any(|b| b.contains("Keys:")), "{in_dm:?}");
    // In the DM itself, everything is answered there.
    bot.on_message(&message("!char"), &room(&client, DM)).await;
    settle(&bot).await;
    assert_eq!(sent_to(&server, DM).await.len(), in_dm.len() + 1);
    assert_eq!(sent_to(&server, SHARED).await.len(), in_room.len());
}

/// A room of two is not a DM unless it is invite-only: a public room the player made (or
/// another user made and left) gets the run's progress but not the link nor the sheet.
#[tokio::test]
async fn a_public_room_of_two_gets_no_private_reply() {
    let server = MockServer::start().await;
    let client = synced_into(
        &server,
        sync_rooms_ruled(&[(SHARED, &[PLAYER], "public"), (DM, &[PLAYER], "invite")]),
    )
    .await;
    sends().respond_with(sent_ok()).mount(&server).await;
    let dir = tempfile::tempdir().unwrap();
    let bot = bot_over_store(dir.path());
    bot.state()
        .blocking(|s| s.set_dm_room(PLAYER, DM, true))
        .await
        .unwrap();
    let public = room(&client, SHARED);
    assert!(!is_private_with(&public, <&UserId>::try_from(PLAYER).unwrap()).await);
    assert!(is_private_with(&room(&client, DM), <&UserId>::try_from(PLAYER).unwrap()).await);
    for body in ["!zone enter crypt_valdris", "!zone map", "!char"] {
        bot.on_message(&message(body), &public).await;
    }
    settle(&bot).await;
    let in_room = sent_to(&server, SHARED).await;
    assert!(
        in_room[0].contains("You enter Crypt of Valdris"),
        "{in_room:?}"
    );
    assert!(
        in_room
            .iter()
            .all(|b| !b.contains("/run/") && !b.contains("Keys:")),
        "{in_room:?}"
    );
    let in_dm = sent_to(&server, DM).await;
    assert!(in_dm.iter().any(|b| b.contains("/run/")), "{in_dm:?}");
    // The public room was not taken for the player's DM.
    assert_eq!(
        bot.state()
            .blocking(|s| s.dm_room(PLAYER))
            .await
            .unwrap()
            .as_deref(),
        Some(DM)
    );
}

#[tokio::test]
async fn the_bot_leaves_a_room_where_it_is_the_last_member() {
    let server = MockServer::start().await;
    // The player has left their DM: the bot is alone in it.
    let client = synced_into(&server, sync_rooms(&[(DM, &[])])).await;
    Mock::given(method("POST"))
        .and(path_regex(r"^/_matrix/client/v3/rooms/.*/leave$"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({})))
        .mount(&server)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let bot = bot_over_store(dir.path());
    bot.state()
        .blocking(|s| s.set_dm_room(PLAYER, DM, true))
        .await
        .unwrap();
    let left: OriginalSyncRoomMemberEvent = serde_json::from_value(json!({
        "type": "m.room.member", "state_key": PLAYER, "sender": PLAYER, "event_id": "$left",
        "origin_server_ts": JOINED_AT + 5, "content": {"membership": "leave"}
    }))
    .unwrap();
    bot.on_member(&left, &room(&client, DM)).await;
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let requests = server.received_requests().await.unwrap();
        if requests
            .iter()
            .any(|r| r.method.as_str() == "POST" && r.url.path().ends_with("/leave"))
        {
            break;
        }
        assert!(Instant::now() < deadline, "the bot did not leave");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert_eq!(
        bot.state().blocking(|s| s.dm_room(PLAYER)).await.unwrap(),
        None
    );
}

#[tokio::test]
async fn an_undecryptable_message_another_instance_answered_is_not_told() {
    let server = MockServer::start().await;
    let client = synced_client(&server).await;
    sends().respond_with(sent_ok()).mount(&server).await;
    let dir = tempfile::tempdir().unwrap();
    let bot = bot_over_store(dir.path());
    let room = room(&client, ROOM);
    let utd = |id: &str| -> OriginalSyncRoomEncryptedEvent {
        serde_json::from_value(json!({
            "type": "m.room.encrypted", "sender": PLAYER, "event_id": id,
            "origin_server_ts": JOINED_AT + 1,
            "content": {"algorithm": "m.megolm.v1.aes-sha2", "ciphertext": "AAAA",
                        "sender_key": "k", "device_id": "D", "session_id": "s"}
        }))
        .unwrap()
    };
    // Answered by the instance that could read it (its device had the room key).
    assert!(
        bot.state()
            .blocking(|s| s.claim_event("$answered", ROOM))
            .await
            .unwrap()
    );
    bot.on_undecryptable(&utd("$answered"), None, &room).await;
    // One no instance answered is told (the room's one word was not used up above).
    bot.on_undecryptable(&utd("$lost"), None, &room).await;
    let deadline = Instant::now() + Duration::from_secs(5);
    while sent_bodies(&server.received_requests().await.unwrap()).is_empty() {
        assert!(Instant::now() < deadline, "nothing was said");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(
        sent_bodies(&server.received_requests().await.unwrap()).len(),
        1
    );
    // And it is claimed: told once across instances.
    assert!(
        !bot.state()
            .blocking(|s| s.claim_event("$lost", ROOM))
            .await
            .unwrap()
    );
}

/// A client logged in (restored session, an in-memory store) that never synced.
async fn new_device(server: &MockServer) -> Client {
    Mock::given(method("GET"))
        .and(path("/_matrix/client/versions"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "versions": ["v1.1", "v1.2", "v1.3", "v1.4", "v1.5", "v1.6", "v1.7", "v1.8", "v1.9",
                         "v1.10", "v1.11"]
        })))
        .mount(server)
        .await;
    let client = build_client(&server.uri(), None).await.unwrap();
    client
        .restore_session(MatrixSession {
            meta: SessionMeta {
                user_id: BOT.try_into().unwrap(),
                device_id: "DEV".into(),
            },
            tokens: SessionTokens {
                access_token: "secret".into(),
                refresh_token: None,
            },
        })
        .await
        .unwrap();
    client
}

#[tokio::test]
async fn a_new_device_uploads_its_keys_in_a_sync_of_no_room_and_keeps_no_token() {
    let server = MockServer::start().await;
    let client = new_device(&server).await;
    Mock::given(method("POST"))
        .and(path("/_matrix/client/v3/keys/upload"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(json!({"one_time_key_counts": {"signed_curve25519": 50}})),
        )
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/_matrix/client/v3/keys/query"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "device_keys": {BOT: {"DEV": {"user_id": BOT, "device_id": "DEV"}}}
        })))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/_matrix/client/v3/sync"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"next_batch": "k1"})))
        .mount(&server)
        .await;

    let from = upload_keys(&client).await;
    assert!(matches!(from, SyncToken::NoToken), "{from:?}");
    let requests = server.received_requests().await.unwrap();
    let at = |p: &str| requests.iter().position(|r| r.url.path() == p);
    let upload = at("/_matrix/client/v3/keys/upload").expect("the keys were uploaded");
    let sync = at("/_matrix/client/v3/sync").expect("one sync");
    assert!(upload < sync, "the keys go up before the sync");
    let syncs: Vec<_> = requests
        .iter()
        .filter(|r| r.url.path() == "/_matrix/client/v3/sync")
        .collect();
    assert_eq!(syncs.len(), 1);
    let query: std::collections::HashMap<_, _> = syncs[0].url.query_pairs().collect();
    assert!(!query.contains_key("since"), "{query:?}");
    let filter: Value = serde_json::from_str(&query["filter"]).unwrap();
    assert_eq!(filter["room"]["rooms"], json!([]), "no room: {filter}");
    // The sync's token is not kept: the first real sync is a full one.
    let kept = client
        .state_store()
        .get_kv_data(StateStoreDataKey::SyncToken)
        .await
        .unwrap();
    assert!(kept.is_none(), "{kept:?}");
}

#[tokio::test]
async fn a_device_that_synced_before_goes_on_from_its_token_without_a_sync() {
    let server = MockServer::start().await;
    let client = synced_client(&server).await;
    let before = server.received_requests().await.unwrap().len();
    let from = upload_keys(&client).await;
    assert!(matches!(from, SyncToken::ReusePrevious), "{from:?}");
    assert_eq!(server.received_requests().await.unwrap().len(), before);
}

#[test]
fn a_failure_that_lasts_is_told_once_and_its_end_once() {
    let mut f = Failing::default();
    assert_eq!(f.ok("database back"), None);
    let first = f.failed("database unreachable").unwrap();
    assert!(first.starts_with("database unreachable"), "{first}");
    assert_eq!(f.failed("database unreachable"), None);
    assert_eq!(f.failed("database unreachable"), None);
    assert!(
        f.ok("database back")
            .unwrap()
            .starts_with("database back after")
    );
    assert_eq!(f.ok("database back"), None);
    assert!(f.failed("again").is_some());
}

fn tx(conn: &rusqlite::Connection) -> crate::db::Tx<'_> {
    crate::db::Tx::new(conn, crate::db::LegacyColumns::default())
}

/// Whether the player has notices not delivered yet.
fn has_pending(conn: &rusqlite::Connection) -> bool {
    !tx(conn).queued_notices(PLAYER).unwrap().is_empty()
}
