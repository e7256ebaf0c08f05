//! The bot's event handling: who may talk to it, which events it answers (each at most once,
//! none from before its own join), the hand-off of each command to the sender's queue, and
//! where each reply goes (the room, or the player's direct messages for what is theirs
//! alone).

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use anyhow::{Context as _, Result, bail};
use matrix_sdk::ruma::events::room::encrypted::{
    EncryptedEventScheme, OriginalSyncRoomEncryptedEvent,
};
use matrix_sdk::ruma::events::room::history_visibility::HistoryVisibility;
use matrix_sdk::ruma::events::room::join_rules::JoinRule;
use matrix_sdk::ruma::events::room::member::{
    MembershipState, OriginalSyncRoomMemberEvent, StrippedRoomMemberEvent,
};
use matrix_sdk::ruma::events::room::message::{MessageType, OriginalSyncRoomMessageEvent};
use matrix_sdk::ruma::serde::Raw;
use matrix_sdk::ruma::{
    MilliSecondsSinceUnixEpoch, OwnedEventId, OwnedServerName, OwnedUserId, RoomId, ServerName,
    UserId,
};
use matrix_sdk::{Client, Room, RoomState};

use zonegraph_core::chat::{self, Reply};

use super::queue::{Queues, Refused};
use super::send::{notice, send_notice};
use crate::db::Notice;
use crate::service::{CommandError, Platform, Service};
use crate::store::Answer;

/// Whose invites the bot accepts and whose commands it answers (`--matrix-allow`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Allow {
    servers: Vec<OwnedServerName>,
    users: Vec<OwnedUserId>,
}

impl Allow {
    /// From `--matrix-allow` values: user ids (`@name:server`) and server names
    /// (`example.org`). None given: the bot's own homeserver.
    pub fn parse(given: &[String], me: &UserId) -> Result<Allow> {
        let mut allow = Allow::default();
        for g in given.iter().flat_map(|g| g.split(',')).map(str::trim) {
            if g.is_empty() {
                continue;
            }
            if g.starts_with('@') {
                let user = UserId::parse(g).with_context(|| {
                    format!("--matrix-allow {g:?} is not a Matrix user id like @name:example.org")
                })?;
                allow.users.push(user);
            } else {
                let server = ServerName::parse(g).with_context(|| {
                    format!(
                        "--matrix-allow {g:?} is neither a user id (@name:example.org) nor a \
                         server name (example.org)"
                    )
                })?;
                allow.servers.push(server);
            }
        }
        if allow.servers.is_empty() && allow.users.is_empty() {
            allow.servers.push(me.server_name().to_owned());
        }
        Ok(allow)
    }

    /// Whether `user` may use the bot.
    pub fn allows(&self, user: &UserId) -> bool {
        self.users.iter().any(|u| u == user) || self.servers.iter().any(|s| s == user.server_name())
    }

    /// For the log: "example.org, @ann:other.org".
    pub fn describe(&self) -> String {
        let servers = self.servers.iter().map(|s| s.to_string());
        let users = self.users.iter().map(|u| u.to_string());
        servers.chain(users).collect::<Vec<_>>().join(", ")
    }
}

/// One piece of work in a player's queue.
#[derive(Debug)]
pub enum Job {
    /// A chat command to answer.
    Command {
        event_id: OwnedEventId,
        room: Room,
        body: String,
    },
    /// Deliver the player's queued notices to their direct-message room.
    Notices { client: Client },
}

/// The player a job is for, and the job.
type Queued = (OwnedUserId, Job);

/// What the handlers and the queues share.
#[derive(Debug)]
struct Shared {
    state: Service,
    allow: Allow,
    /// Things logged once (a refused sender, a refused invite, an unreadable room): the log
    /// says why once, not for every message.
    logged: Mutex<HashSet<String>>,
    /// Players already told to slow down, until a command of theirs is taken again.
    slowed: Mutex<HashSet<String>>,
}

impl Shared {
    /// Logs `line` (a warning) the first time `key` is seen.
    fn log_once(&self, key: String, line: impl FnOnce() -> String) {
        if self
            .logged
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(key)
        {
            tracing::warn!("{}", line());
        }
    }
}

/// The Matrix bot over the server's [`Service`].
#[derive(Clone, Debug)]
pub struct Bot {
    shared: Arc<Shared>,
    queues: Queues<Queued>,
}

impl Bot {
    /// A bot answering through `state`, for the users `allow` lets in.
    pub fn new(state: Service, allow: Allow) -> Bot {
        let shared = Arc::new(Shared {
            state,
            allow,
            logged: Mutex::default(),
            slowed: Mutex::default(),
        });
        let s = shared.clone();
        let queues = Queues::new(move |(user, job): Queued| {
            let s = s.clone();
            async move {
                match job {
                    Job::Command {
                        event_id,
                        room,
                        body,
                    } => {
                        answer(&s, &user, &event_id, &room, &body).await;
                        crate::metrics::matrix_queued(-1.0);
                    }
                    Job::Notices { client } => {
                        if let Err(e) = deliver(&s, &client, &user).await {
                            tracing::warn!(
                                %user,
                                error = %format_args!("{e:#}"),
                                "notices not delivered"
                            );
                        }
                    }
                }
            }
        });
        Bot { shared, queues }
    }

    /// The server state the bot answers through.
    pub fn state(&self) -> &Service {
        &self.shared.state
    }

    /// Who may use the bot.
    pub fn allow(&self) -> &Allow {
        &self.shared.allow
    }

    /// How many players have work running or waiting.
    pub fn busy(&self) -> usize {
        self.queues.busy()
    }

    /// A message event: when it is a command for the bot from an allowed user, sent after the
    /// bot joined the room, it goes to the sender's queue. Returns at once.
    pub async fn on_message(&self, ev: &OriginalSyncRoomMessageEvent, room: &Room) {
        let MessageType::Text(text) = &ev.content.msgtype else {
            return;
        };
        if !Service::is_for_bot(&text.body)
            || !self.takes(&ev.sender, ev.origin_server_ts, room).await
        {
            return;
        }
        let job = Job::Command {
            event_id: ev.event_id.clone(),
            room: room.clone(),
            body: text.body.trim().to_string(),
        };
        // Counted before it is queued: its work may end (and uncount it) before `push` returns.
        crate::metrics::matrix_queued(1.0);
        if self
            .queues
            .push(ev.sender.as_str(), (ev.sender.clone(), job))
            == Err(Refused::Full)
        {
            crate::metrics::matrix_queued(-1.0);
            crate::metrics::matrix_dropped();
            self.shared.log_once(format!("full {}", ev.sender), || {
                format!(
                    "{} has {} commands waiting; dropping more until they are answered",
                    ev.sender,
                    super::queue::MAX_WAITING
                )
            });
        }
    }

    /// Whether an event from `sender` at `ts` in `room` is one to answer: the bot is in the
    /// room, it is not the bot's own, the sender is allowed, and it was sent after the bot
    /// joined (a homeserver replays a room's recent history to a member that (re)joins it).
    async fn takes(&self, sender: &UserId, ts: MilliSecondsSinceUnixEpoch, room: &Room) -> bool {
        if room.state() != RoomState::Joined {
            return false;
        }
        let Some(me) = room.client().user_id().map(ToOwned::to_owned) else {
            return false;
        };
        if sender == me {
            return false;
        }
        if !self.shared.allow.allows(sender) {
            self.shared.log_once(format!("sender {sender}"), || {
                format!(
                    "ignoring {sender}: not allowed by --matrix-allow ({})",
                    self.shared.allow.describe()
                )
            });
            return false;
        }
        match joined_at(room, &me).await {
            Some(joined) => ts >= joined,
            // Unknown (should not happen once joined): the event ids still guard replays.
            None => true,
        }
    }

    /// An event the SDK could not decrypt (the sender's device did not share its room key
    /// with the bot's device). Logged once per room; in a direct-message room the player is
    /// told once, so they are not left waiting. It is claimed like a command: one another
    /// instance already answered (read with its own device's keys, before this device was
    /// known to the sender) is passed over in silence.
    ///
    /// First, the room key may be in the key backup (another device of the bot received it
    /// while this one was away, or before it existed): then the message is fetched from
    /// there, decrypted and handled as any other (`raw`: the event as it came).
    pub async fn on_undecryptable(
        &self,
        ev: &OriginalSyncRoomEncryptedEvent,
        raw: Option<&Raw<OriginalSyncRoomEncryptedEvent>>,
        room: &Room,
    ) {
        if !self.takes(&ev.sender, ev.origin_server_ts, room).await {
            return;
        }
        if let Some(raw) = raw
            && let Some(message) = from_backup(room, ev, raw).await
        {
            self.on_message(&message, room).await;
            return;
        }
        let (e, r) = (ev.event_id.to_string(), room.room_id().to_string());
        match self
            .shared
            .state
            .blocking(move |st| st.claim_event(&e, &r))
            .await
        {
            Ok(true) => crate::metrics::matrix_undecryptable(),
            Ok(false) => return,
            Err(e) => {
                tracing::warn!(
                    event = %ev.event_id,
                    error = %format_args!("{e:#}"),
                    "cannot record event"
                );
                return;
            }
        }
        let first = self
            .shared
            .logged
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(format!("utd {}", room.room_id()));
        if !first {
            return;
        }
        tracing::warn!(
            sender = %ev.sender,
            room = %room.room_id(),
            "cannot decrypt a message (no room key for this device)"
        );
        if is_private_with(room, &ev.sender).await {
            let room = room.clone();
            tokio::spawn(async move {
                if let Err(e) = send_notice(&room, notice(&chat::undecryptable())).await {
                    tracing::warn!(error = %format_args!("{e:#}"), "not sent");
                }
            });
        }
    }

    /// An invite of the bot: joined when the inviter is allowed, declined otherwise.
    pub async fn on_invite(&self, ev: &StrippedRoomMemberEvent, room: Room) {
        let me = room.client().user_id().map(ToOwned::to_owned);
        if me.as_deref() != Some(ev.state_key.as_ref()) || room.state() != RoomState::Invited {
            return;
        }
        if !self.shared.allow.allows(&ev.sender) {
            self.shared
                .log_once(format!("invite {}", room.room_id()), || {
                    format!(
                        "declined the invite to {} from {}: not allowed by --matrix-allow ({})",
                        room.room_id(),
                        ev.sender,
                        self.shared.allow.describe()
                    )
                });
            tokio::spawn(async move {
                if let Err(e) = room.leave().await {
                    tracing::warn!(room = %room.room_id(), error = %e, "cannot decline the invite");
                }
            });
            return;
        }
        tracing::info!(room = %room.room_id(), by = %ev.sender, "invited");
        tokio::spawn(join_with_retry(room));
    }

    /// A membership change: the bot leaves a room where it is the last member (and forgets
    /// it as the direct-message room of the player who left).
    pub async fn on_member(&self, ev: &OriginalSyncRoomMemberEvent, room: &Room) {
        if !matches!(
            ev.content.membership,
            MembershipState::Leave | MembershipState::Ban
        ) || room.state() != RoomState::Joined
            || room.active_members_count() != 1
        {
            return;
        }
        let (state, room) = (self.shared.state.clone(), room.clone());
        let (user, room_id) = (ev.state_key.to_string(), room.room_id().to_string());
        tokio::spawn(async move {
            if let Err(e) = state
                .blocking(move |s| s.set_dm_room(&user, &room_id, false))
                .await
            {
                tracing::warn!(error = %format_args!("{e:#}"), "cannot forget the DM room");
            }
            leave_if_alone(&room).await;
        });
    }

    /// Queues the delivery of every player's queued notices to their direct-message room
    /// (each in that player's queue, after their commands). Notices wait for players with
    /// no known direct-message room.
    pub async fn deliver_notices(&self, client: &Client) -> Result<()> {
        for user in self.shared.state.users_with_notices().await? {
            let Ok(user) = UserId::parse(&user) else {
                continue;
            };
            let job = Job::Notices {
                client: client.clone(),
            };
            // A full queue already has work that will look at the notices again.
            let _ = self.queues.push(user.as_str(), (user.clone(), job));
        }
        Ok(())
    }
}

/// An encrypted message decrypted with its room key from the key backup, when the backup is
/// on and holds the key.
async fn from_backup(
    room: &Room,
    ev: &OriginalSyncRoomEncryptedEvent,
    raw: &Raw<OriginalSyncRoomEncryptedEvent>,
) -> Option<OriginalSyncRoomMessageEvent> {
    let EncryptedEventScheme::MegolmV1AesSha2(content) = &ev.content.scheme else {
        return None;
    };
    let backups = room.client().encryption().backups();
    if !backups.are_enabled().await {
        return None;
    }
    match backups
        .download_room_key(room.room_id(), &content.session_id)
        .await
    {
        Ok(true) => {}
        Ok(false) => return None,
        Err(e) => {
            tracing::warn!(
                room = %room.room_id(),
                error = %e,
                "cannot fetch a room key from the key backup"
            );
            return None;
        }
    }
    // Still undecryptable, the event reads as `m.room.encrypted`, not as a message.
    let message = room
        .decrypt_event(raw, None)
        .await
        .ok()?
        .raw()
        .deserialize_as_unchecked::<OriginalSyncRoomMessageEvent>()
        .ok()?;
    tracing::info!(
        sender = %ev.sender,
        room = %room.room_id(),
        "read a message with its room key from the key backup"
    );
    Some(message)
}

/// When the bot's own membership in `room` was last set (its join), from the room's state.
async fn joined_at(room: &Room, me: &UserId) -> Option<MilliSecondsSinceUnixEpoch> {
    let member = room.get_member_no_sync(me).await.ok().flatten()?;
    member.event().origin_server_ts()
}

/// Whether `room` is `player`'s private room with the bot, where what is theirs alone (a
/// run link, a sheet, a notice) may be said: invite-only (join rule `invite`), its history
/// not world-readable, its members (joined or invited) exactly the player and the bot, and,
/// where the bot's `m.direct` marks the room as direct, marked for the player. Anything not
/// known yet (state or counts not synced) counts as not private: private things never go
/// where the bot is unsure.
pub async fn is_private_with(room: &Room, player: &UserId) -> bool {
    if room.join_rule() != Some(JoinRule::Invite)
        || room.history_visibility_or_default() == HistoryVisibility::WorldReadable
        || room.active_members_count() != 2
    {
        return false;
    }
    let player_in = room
        .get_member_no_sync(player)
        .await
        .ok()
        .flatten()
        .is_some_and(|m| {
            matches!(
                m.membership(),
                MembershipState::Join | MembershipState::Invite
            )
        });
    let targets = room.direct_targets();
    player_in && (targets.is_empty() || targets.iter().any(|t| t.as_user_id() == Some(player)))
}

/// Leaves `room` when no one but the bot is left in it (a count of exactly one: the bot; a
/// room whose counts are not known yet reads 0 and is left alone).
pub async fn leave_if_alone(room: &Room) {
    if room.state() == RoomState::Joined && room.active_members_count() == 1 {
        tracing::info!(room = %room.room_id(), "leaving: no one else is in it");
        if let Err(e) = room.leave().await {
            tracing::warn!(room = %room.room_id(), error = %e, "cannot leave");
        }
    }
}

/// Joins a room the bot is invited to, retrying with backoff (Synapse may not be ready to
/// accept the join right after the invite).
pub async fn join_with_retry(room: Room) {
    let mut delay = std::time::Duration::from_secs(1);
    for _ in 0..8 {
        match room.join().await {
            Ok(()) => {
                tracing::info!(room = %room.room_id(), "joined");
                return;
            }
            Err(e) => {
                tracing::warn!(
                    room = %room.room_id(),
                    error = %e,
                    "joining failed; retrying in {delay:?}"
                );
                tokio::time::sleep(delay).await;
                delay = (delay * 2).min(std::time::Duration::from_secs(60));
            }
        }
    }
    tracing::warn!(room = %room.room_id(), "gave up joining");
}

/// One command, in the sender's queue: claimed (at most once per event id), run through the
/// server's pipeline, answered.
async fn answer(s: &Shared, user: &UserId, event_id: &OwnedEventId, room: &Room, body: &str) {
    match s
        .state
        .claim_event(event_id.as_str(), room.room_id().as_str())
        .await
    {
        Ok(true) => {}
        Ok(false) => return,
        Err(e) => {
            tracing::warn!(
                event = %event_id,
                error = %format_args!("{e:#}"),
                "cannot record event, not answered"
            );
            return;
        }
    }
    if is_private_with(room, user).await {
        remember_dm(s, user, room.room_id()).await;
    }
    let answer = match s.state.command(Platform::Matrix, user.as_str(), body).await {
        Ok(answer) => {
            s.slowed
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .remove(user.as_str());
            answer
        }
        Err(CommandError::SlowDown { retry_after_ms }) => {
            // Said once; the rest of a burst is ignored until a command is taken again.
            let first = s
                .slowed
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(user.to_string());
            if first
                && let Err(e) = send_notice(room, notice(&chat::slow_down(retry_after_ms))).await
            {
                tracing::warn!(error = %format_args!("{e:#}"), "not sent");
            }
            return;
        }
        Err(CommandError::TooLong { limit }) => {
            if let Err(e) = send_notice(room, notice(&chat::too_long(limit))).await {
                tracing::warn!(error = %format_args!("{e:#}"), "not sent");
            }
            return;
        }
        Err(CommandError::Failed(e)) => {
            tracing::error!(%user, error = %format_args!("{e:#}"), "the command failed");
            Answer {
                replies: vec![chat::server_error()],
                ..Answer::default()
            }
        }
    };
    send_answer(s, user, room, &answer).await;
}

/// Sends an answer: the queued notices first (to the player privately), each acknowledged
/// once the homeserver took it, then the replies; private replies go to the player's direct
/// messages when the room is shared, with a word in the room.
async fn send_answer(s: &Shared, user: &UserId, room: &Room, answer: &Answer) {
    let shared = !is_private_with(room, user).await;
    let private =
        if shared && (!answer.notices.is_empty() || answer.replies.iter().any(|r| r.private)) {
            match private_room(s, user, room).await {
                Ok(dm) => Some(dm),
                Err(e) => {
                    tracing::warn!(
                        %user,
                        error = %format_args!("{e:#}"),
                        "no direct messages"
                    );
                    None
                }
            }
        } else {
            None
        };
    if !answer.notices.is_empty() {
        // Notices are the player's alone: in a shared room they wait for a direct-message room.
        let to = if shared { private.as_ref() } else { Some(room) };
        if let Some(to) = to {
            let sent = send_notices(to, user, &answer.notices).await;
            if let Err(e) = s.state.ack_notices(user.as_str(), sent.done).await {
                tracing::warn!(
                    %user,
                    error = %format_args!("{e:#}"),
                    "cannot acknowledge notices"
                );
            }
            // A reply must not overtake a notice in the same room.
            if !sent.all && !shared {
                return;
            }
        }
    }
    // One message per place (homeservers limit messages per second): the replies for the
    // room joined into one, and in a shared room the player's own joined into one for their
    // direct messages, the room told where it went.
    let (mut here, mine): (Vec<Reply>, Vec<Reply>) = if shared {
        answer.replies.iter().cloned().partition(|r| !r.private)
    } else {
        (answer.replies.clone(), Vec::new())
    };
    if !mine.is_empty() {
        here.push(match &private {
            Some(_) => chat::sent_privately(user.as_str()),
            None => chat::private_failed(user.as_str()),
        });
    }
    if let Some(reply) = chat::one_message(&here)
        && let Err(e) = send_notice(room, notice(&reply)).await
    {
        tracing::warn!(error = %format_args!("{e:#}"), "not sent");
        return;
    }
    if let (Some(dm), Some(reply)) = (&private, chat::one_message(&mine))
        && let Err(e) = send_notice(dm, notice(&reply)).await
    {
        tracing::warn!(error = %format_args!("{e:#}"), "not sent");
    }
}

/// Remembers `room` as `user`'s direct-message room.
async fn remember_dm(s: &Shared, user: &UserId, room: &RoomId) {
    let (u, r) = (user.to_string(), room.to_string());
    if let Err(e) = s
        .state
        .blocking(move |st| {
            if st.dm_room(&u)?.as_deref() != Some(r.as_str()) {
                st.set_dm_room(&u, &r, true)?;
            }
            Ok(())
        })
        .await
    {
        tracing::warn!(
            %user,
            error = %format_args!("{e:#}"),
            "cannot remember the DM room"
        );
    }
}

/// `user`'s direct-message room with the bot when it is known and the bot is still in it.
async fn known_dm(s: &Shared, client: &Client, user: &UserId) -> Result<Option<Room>> {
    let u = user.to_string();
    let Some(id) = s.state.blocking(move |st| st.dm_room(&u)).await? else {
        return Ok(None);
    };
    let room = RoomId::parse(&id)
        .ok()
        .and_then(|id| client.get_room(&id))
        .filter(|r| r.state() == RoomState::Joined);
    // Still private: not grown into a group, nor made public.
    let room = match room {
        Some(r) if is_private_with(&r, user).await => Some(r),
        _ => None,
    };
    if room.is_none() {
        let u = user.to_string();
        s.state
            .blocking(move |st| st.set_dm_room(&u, &id, false))
            .await?;
    }
    Ok(room)
}

/// `user`'s direct-message room, opened (encrypted, as Element opens one) when there is none.
async fn private_room(s: &Shared, user: &UserId, here: &Room) -> Result<Room> {
    let client = here.client();
    if let Some(room) = known_dm(s, &client, user).await? {
        return Ok(room);
    }
    if !s.allow.allows(user) {
        bail!("{user} is not allowed by --matrix-allow");
    }
    let room = client
        .create_dm(user)
        .await
        .with_context(|| format!("cannot open a direct-message room with {user}"))?;
    tracing::info!(%user, room = %room.room_id(), "opened the direct-message room");
    remember_dm(s, user, room.room_id()).await;
    Ok(room)
}

/// The player's queued notices, sent to their direct-message room when there is one.
async fn deliver(s: &Shared, client: &Client, user: &UserId) -> Result<()> {
    let Some(room) = known_dm(s, client, user).await? else {
        return Ok(());
    };
    let queued = s.state.notices(user.as_str()).await?;
    if queued.is_empty() {
        return Ok(());
    }
    let out = send_notices(&room, user, &queued).await;
    s.state.ack_notices(user.as_str(), out.done).await?;
    Ok(())
}

/// What [`send_notices`] did.
pub(super) struct SentNotices {
    /// To acknowledge: sent, or refused outright (and so dropped).
    pub done: Vec<i64>,
    /// Whether none is left to try again.
    pub all: bool,
}

/// Sends `notices` in order. Stops at the first send that may succeed later, so the rest
/// stay queued in order.
pub(super) async fn send_notices(room: &Room, user: &UserId, notices: &[Notice]) -> SentNotices {
    let mut out = SentNotices {
        done: Vec::new(),
        all: false,
    };
    for (i, n) in notices.iter().enumerate() {
        let reply = Reply {
            text: n.text.clone(),
            html: n.html.clone(),
            private: true,
            link: None,
            choices: Vec::new(),
        };
        match send_notice(room, notice(&reply)).await {
            Ok(()) => out.done.push(n.id),
            Err(e) if e.permanent => {
                tracing::warn!(
                    %user,
                    notice = n.id,
                    error = %e,
                    "notice refused, dropped"
                );
                out.done.push(n.id);
            }
            Err(e) => {
                tracing::warn!(
                    %user,
                    error = %e,
                    queued = notices.len() - i,
                    "notice not delivered; the rest stay queued"
                );
                return out;
            }
        }
    }
    out.all = true;
    out
}
