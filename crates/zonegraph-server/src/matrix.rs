//! The Matrix transport (`zonegraph serve --matrix`): the bot logs in with matrix-sdk, joins
//! the rooms it is invited to and answers `!zone …` / `!char …` through the same command
//! engine as the HTTP API ([`AppState::command`]); the Matrix user id is the player.
//!
//! State kept next to the database, in `<db>.matrix/`: `session.json` (user, device, access
//! token; mode 0600, so a restart resumes without logging in again) and `rooms.json` (the DM
//! room each player talked in, where fork-timeout notices go). The SDK's own state store is in
//! memory: matrix-sdk-sqlite 0.18 links rusqlite 0.37 and the server links rusqlite 0.40, and
//! only one `sqlite3` may be linked into a binary. Each start therefore does one full sync and
//! ignores what it returns (old messages are not answered), then answers new ones.
//!
//! End-to-end encryption is not built in (it needs that persistent store): messages in
//! encrypted rooms are not readable; the bot logs it once per room and says so there.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context as _, Result, bail};
use matrix_sdk::authentication::matrix::MatrixSession;
use matrix_sdk::config::{RequestConfig, SyncSettings};
use matrix_sdk::ruma::events::room::encrypted::OriginalSyncRoomEncryptedEvent;
use matrix_sdk::ruma::events::room::member::StrippedRoomMemberEvent;
use matrix_sdk::ruma::events::room::message::{
    MessageType, OriginalSyncRoomMessageEvent, RoomMessageEventContent,
};
use matrix_sdk::ruma::{OwnedRoomId, RoomId};
use matrix_sdk::{Client, Room, RoomState, SessionMeta, SessionTokens};
use serde::{Deserialize, Serialize};

use zonegraph_core::chat::{self, Reply, escape};

use crate::db::Notice;
use crate::http::{AppState, CommandError};

/// Largest serialized event content we send; Matrix caps a whole event at 65,536 bytes and
/// the server adds its own fields, so stay far below.
pub const MAX_CONTENT_BYTES: usize = 32 * 1024;
/// How often queued fork-timeout notices are looked for.
pub const NOTICE_EVERY: Duration = Duration::from_secs(5);
/// Long-poll timeout of one sync request.
const SYNC_TIMEOUT: Duration = Duration::from_secs(30);

/// Matrix flags of `zonegraph serve`. Secrets belong in the environment or the config file.
#[derive(Debug, Default, Clone, clap::Args)]
#[command(next_help_heading = "Matrix (with --matrix)")]
pub struct MatrixArgs {
    /// Also run the Matrix bot (needs a homeserver, a user and a password or token).
    #[arg(long)]
    pub matrix: bool,
    /// JSON file with any of {"homeserver","user","password","token"}; flags and the
    /// environment take precedence.
    #[arg(long, value_name = "FILE")]
    pub matrix_config: Option<PathBuf>,
    /// Homeserver URL, e.g. https://matrix.example.org.
    #[arg(long, env = "ZONEGRAPH_MATRIX_HOMESERVER")]
    pub matrix_homeserver: Option<String>,
    /// The bot's user id, e.g. @zonebot:example.org.
    #[arg(long, env = "ZONEGRAPH_MATRIX_USER")]
    pub matrix_user: Option<String>,
    /// The bot's password (prefer ZONEGRAPH_MATRIX_PASSWORD).
    #[arg(long, env = "ZONEGRAPH_MATRIX_PASSWORD", hide_env_values = true)]
    pub matrix_password: Option<String>,
    /// An access token instead of a password (prefer ZONEGRAPH_MATRIX_TOKEN).
    #[arg(long, env = "ZONEGRAPH_MATRIX_TOKEN", hide_env_values = true)]
    pub matrix_token: Option<String>,
}

/// The config file's shape.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileConfig {
    homeserver: Option<String>,
    user: Option<String>,
    password: Option<String>,
    token: Option<String>,
}

/// How the bot logs in.
#[derive(Clone)]
pub enum Secret {
    Password(String),
    Token(String),
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Secret::Password(_) => "Password(<set>)",
            Secret::Token(_) => "Token(<set>)",
        })
    }
}

/// A resolved Matrix configuration.
#[derive(Clone, Debug)]
pub struct Config {
    pub homeserver: String,
    pub user: String,
    pub secret: Secret,
    /// `<db>.matrix/`: session and rooms.
    pub state_dir: PathBuf,
}

impl Config {
    /// Flags and environment first, then the config file.
    pub fn from_args(args: &MatrixArgs, db: &Path) -> Result<Config> {
        let file: FileConfig = match &args.matrix_config {
            Some(p) => {
                let text = std::fs::read_to_string(p)
                    .with_context(|| format!("cannot read {}", p.display()))?;
                serde_json::from_str(&text)
                    .with_context(|| format!("{} is not a Matrix config", p.display()))?
            }
            None => FileConfig::default(),
        };
        let pick = |a: &Option<String>, b: Option<String>| {
            a.clone().filter(|s| !s.trim().is_empty()).or(b)
        };
        let homeserver = pick(&args.matrix_homeserver, file.homeserver).context(
            "--matrix needs a homeserver: --matrix-homeserver or ZONEGRAPH_MATRIX_HOMESERVER",
        )?;
        let user = pick(&args.matrix_user, file.user)
            .context("--matrix needs the bot's user id: --matrix-user or ZONEGRAPH_MATRIX_USER")?;
        let secret = match (
            pick(&args.matrix_token, file.token),
            pick(&args.matrix_password, file.password),
        ) {
            (Some(t), _) => Secret::Token(t),
            (None, Some(p)) => Secret::Password(p),
            (None, None) => bail!(
                "--matrix needs ZONEGRAPH_MATRIX_PASSWORD or ZONEGRAPH_MATRIX_TOKEN (or the config file)"
            ),
        };
        Ok(Config {
            homeserver,
            user,
            secret,
            state_dir: state_dir(db),
        })
    }
}

/// `<db>.matrix`, next to the database.
pub fn state_dir(db: &Path) -> PathBuf {
    let mut s = db.as_os_str().to_owned();
    s.push(".matrix");
    PathBuf::from(s)
}

/// The persisted session.
#[derive(Debug, Serialize, Deserialize)]
struct SavedSession {
    homeserver: String,
    user_id: String,
    device_id: String,
    access_token: String,
}

fn write_private(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, bytes).with_context(|| format!("cannot write {}", tmp.display()))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o600))?;
    }
    std::fs::rename(&tmp, path).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

/// Builds a client with retries: the SDK retries rate limits (honouring `retry_after`) and
/// network errors with exponential backoff, up to the limit.
pub async fn build_client(homeserver: &str) -> Result<Client> {
    Client::builder()
        .homeserver_url(homeserver)
        .request_config(
            RequestConfig::new()
                .retry_limit(6)
                // A minute of backoff per request; a second in the mock-homeserver tests.
                .max_retry_time(Duration::from_secs(if cfg!(test) { 1 } else { 60 })),
        )
        .build()
        .await
        .with_context(|| format!("cannot set up a Matrix client for {homeserver}"))
}

/// Logs in, or resumes the session saved in `state_dir`.
pub async fn login(config: &Config) -> Result<Client> {
    std::fs::create_dir_all(&config.state_dir)
        .with_context(|| format!("cannot create {}", config.state_dir.display()))?;
    let session_path = config.state_dir.join("session.json");
    let client = build_client(&config.homeserver).await?;
    if let Ok(text) = std::fs::read_to_string(&session_path)
        && let Ok(saved) = serde_json::from_str::<SavedSession>(&text)
        && saved.homeserver == config.homeserver
        && saved.user_id == config.user
    {
        let session = MatrixSession {
            meta: SessionMeta {
                user_id: saved.user_id.as_str().try_into()?,
                device_id: saved.device_id.as_str().into(),
            },
            tokens: SessionTokens {
                access_token: saved.access_token,
                refresh_token: None,
            },
        };
        client.restore_session(session).await?;
        match client.whoami().await {
            Ok(_) => {
                eprintln!("zonegraph: matrix: resumed the session of {}", config.user);
                return Ok(client);
            }
            Err(e) => eprintln!(
                "zonegraph: matrix: saved session no longer valid ({e}); logging in again"
            ),
        }
    }
    let client = build_client(&config.homeserver).await?;
    match &config.secret {
        Secret::Password(pw) => {
            client
                .matrix_auth()
                .login_username(&config.user, pw)
                .initial_device_display_name("zonegraph bot")
                .await
                .with_context(|| format!("cannot log in as {}", config.user))?;
        }
        Secret::Token(token) => {
            // Learn the device from the token's owner, then use it as the session.
            let probe = build_client(&config.homeserver).await?;
            probe
                .restore_session(MatrixSession {
                    meta: SessionMeta {
                        user_id: config.user.as_str().try_into()?,
                        device_id: "ZONEGRAPH".into(),
                    },
                    tokens: SessionTokens {
                        access_token: token.clone(),
                        refresh_token: None,
                    },
                })
                .await?;
            let who = probe
                .whoami()
                .await
                .context("the Matrix access token was refused")?;
            let device_id = who
                .device_id
                .context("the access token belongs to no device")?;
            client
                .restore_session(MatrixSession {
                    meta: SessionMeta {
                        user_id: who.user_id,
                        device_id,
                    },
                    tokens: SessionTokens {
                        access_token: token.clone(),
                        refresh_token: None,
                    },
                })
                .await?;
        }
    }
    let session = client
        .matrix_auth()
        .session()
        .context("logged in, but the SDK has no session")?;
    let saved = SavedSession {
        homeserver: config.homeserver.clone(),
        user_id: session.meta.user_id.to_string(),
        device_id: session.meta.device_id.to_string(),
        access_token: session.tokens.access_token,
    };
    write_private(&session_path, &serde_json::to_vec_pretty(&saved)?)?;
    eprintln!(
        "zonegraph: matrix: logged in as {} (device {})",
        saved.user_id, saved.device_id
    );
    Ok(client)
}

/// Whether a message is for the bot.
pub fn is_command(body: &str) -> bool {
    let b = body.trim_start();
    ["!zone", "!char"].iter().any(|p| {
        b.strip_prefix(p)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with(char::is_whitespace))
    })
}

/// The event content of one reply: an `m.notice` with a plain body and an HTML body (the map
/// in `<pre><code>`), cut to stay under [`MAX_CONTENT_BYTES`].
pub fn notice(reply: &Reply) -> RoomMessageEventContent {
    notice_within(reply, MAX_CONTENT_BYTES)
}

/// [`notice`] with an explicit size limit (tests).
pub fn notice_within(reply: &Reply, limit: usize) -> RoomMessageEventContent {
    let html = code_blocks(&reply.html);
    let content = RoomMessageEventContent::notice_html(reply.text.clone(), html);
    if content_len(&content) <= limit {
        return content;
    }
    let link = run_map_link(&reply.text);
    let pointer = match &link {
        Some(l) => format!("… too long for one message: the whole map is at {l}"),
        None => "… too long for one message: `!zone map` has the run-map link".to_string(),
    };
    let pointer_html = match &link {
        Some(l) => format!(
            "<p>… too long for one message: the whole map is at <a href=\"{0}\">{0}</a></p>",
            escape(l)
        ),
        None => "<p>… too long for one message: <code>!zone map</code> has the run-map link</p>"
            .to_string(),
    };
    // Cut the text at line ends, halving until the escaped, serialized event fits.
    let mut budget = reply.text.len().min(limit);
    loop {
        let cut = cut_lines(&reply.text, budget);
        let body = format!("{cut}\n{pointer}");
        let html = format!("<pre><code>{}</code></pre>{pointer_html}", escape(cut));
        let content = RoomMessageEventContent::notice_html(body, html);
        if content_len(&content) <= limit || budget == 0 {
            return content;
        }
        budget /= 2;
    }
}

/// The core puts maps in `<pre>`; Matrix clients expect `<pre><code>`. Labels are escaped,
/// so a literal `<pre>` is always a tag.
fn code_blocks(html: &str) -> String {
    html.replace("<pre>", "<pre><code>")
        .replace("</pre>", "</code></pre>")
        .replace("<pre><code><code>", "<pre><code>")
        .replace("</code></code></pre>", "</code></pre>")
}

/// The longest prefix of `text` of at most `max` bytes ending at a line end (or a char
/// boundary when the first line alone is longer).
fn cut_lines(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    match text[..end].rfind('\n') {
        Some(nl) if nl > 0 => &text[..nl],
        _ => &text[..end],
    }
}

/// The run-map link in a reply ("Run map: URL"), if any.
fn run_map_link(text: &str) -> Option<String> {
    text.lines()
        .rev()
        .find_map(|l| l.trim().strip_prefix("Run map: "))
        .map(|l| l.trim().to_string())
        .filter(|l| l.starts_with("http://") || l.starts_with("https://"))
}

fn content_len(content: &RoomMessageEventContent) -> usize {
    serde_json::to_vec(content).map_or(usize::MAX, |v| v.len())
}

/// Why a notice was not sent, and whether trying again later could help.
#[derive(Debug)]
pub struct SendError {
    /// Forbidden, unknown room, bad request: a retry cannot fix it.
    pub permanent: bool,
    pub error: anyhow::Error,
}

impl std::fmt::Display for SendError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:#}", self.error)
    }
}

/// Sends one notice; the SDK retries rate limits and network errors with backoff, this adds a
/// few slower attempts on top for a homeserver that is down for a while.
pub async fn send_notice(
    room: &Room,
    content: RoomMessageEventContent,
) -> std::result::Result<(), SendError> {
    // Short in tests, which exercise the retries against a mock homeserver.
    let mut delay = Duration::from_millis(if cfg!(test) { 10 } else { 500 });
    let mut attempt = 1;
    loop {
        match room.send(content.clone()).await {
            Ok(_) => return Ok(()),
            Err(e) if attempt < 4 && !is_permanent(&e) => {
                eprintln!(
                    "zonegraph: matrix: sending to {} failed (attempt {attempt}): {e}; retrying in {delay:?}",
                    room.room_id()
                );
                tokio::time::sleep(delay).await;
                delay *= 4;
                attempt += 1;
            }
            Err(e) => {
                return Err(SendError {
                    permanent: is_permanent(&e),
                    error: anyhow::Error::new(e)
                        .context(format!("cannot send to {}", room.room_id())),
                });
            }
        }
    }
}

/// Errors that a retry cannot fix (forbidden, unknown room, bad request).
fn is_permanent(e: &matrix_sdk::Error) -> bool {
    e.as_client_api_error()
        .is_some_and(|api| api.status_code.is_client_error() && api.status_code.as_u16() != 429)
}

/// What the event handlers share.
#[derive(Clone, Debug)]
pub struct Bot {
    pub state: AppState,
    /// Player → the DM room they last talked in (persisted in `rooms.json`).
    dms: Arc<Mutex<BTreeMap<String, OwnedRoomId>>>,
    rooms_path: Option<PathBuf>,
    /// Encrypted rooms already told that the bot cannot read them.
    warned: Arc<Mutex<HashSet<OwnedRoomId>>>,
    /// Players already told to slow down, until a command of theirs is taken again.
    slowed: Arc<Mutex<HashSet<String>>>,
    /// Unix ms when this bot started: older messages are never answered, even when the
    /// homeserver sends them again (Synapse replays a room's recent timeline to a member
    /// that (re)joins it).
    started_ms: i64,
}

impl Bot {
    /// A bot over `state`; `state_dir` keeps `rooms.json` (None: in memory only).
    pub fn new(state: AppState, state_dir: Option<&Path>) -> Bot {
        let rooms_path = state_dir.map(|d| d.join("rooms.json"));
        let dms = rooms_path
            .as_ref()
            .and_then(|p| std::fs::read_to_string(p).ok())
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_default();
        Bot {
            state,
            dms: Arc::new(Mutex::new(dms)),
            rooms_path,
            warned: Arc::default(),
            slowed: Arc::default(),
            started_ms: crate::store::now_ms(),
        }
    }

    /// The DM room known for `user`.
    pub fn dm_room(&self, user: &str) -> Option<OwnedRoomId> {
        let map = self.dms.lock().unwrap_or_else(|p| p.into_inner());
        map.get(user).cloned()
    }

    fn remember_dm(&self, user: &str, room: &RoomId) {
        let snapshot = {
            let mut map = self.dms.lock().unwrap_or_else(|p| p.into_inner());
            if map.get(user).is_some_and(|r| r == room) {
                return;
            }
            map.insert(user.to_string(), room.to_owned());
            serde_json::to_vec_pretty(&*map)
        };
        if let (Some(path), Ok(bytes)) = (&self.rooms_path, snapshot)
            && let Err(e) = write_private(path, &bytes)
        {
            eprintln!("zonegraph: matrix: {e:#}");
        }
    }

    /// One message event: runs the command and sends the replies to the room.
    pub async fn on_message(&self, ev: &OriginalSyncRoomMessageEvent, room: &Room) {
        if room.state() != RoomState::Joined {
            return;
        }
        if room.client().user_id().is_some_and(|me| me == ev.sender) {
            return;
        }
        let MessageType::Text(text) = &ev.content.msgtype else {
            return;
        };
        if i64::from(ev.origin_server_ts.0) < self.started_ms {
            return;
        }
        if !is_command(&text.body) {
            return;
        }
        let user = ev.sender.as_str();
        // Two members (the player and the bot): a DM, where notices can go later. Counted
        // from the member list: Synapse sends no room summary without lazy-loading.
        let joined = room
            .members_no_sync(matrix_sdk::RoomMemberships::JOIN)
            .await
            .map_or(usize::MAX, |m| m.len());
        if joined <= 2 {
            self.remember_dm(user, room.room_id());
        }
        let command = text.body.trim();
        if command.len() > crate::http::MAX_TEXT_LEN {
            // The same limit as the HTTP API.
            let reply = chat::too_long(crate::http::MAX_TEXT_LEN);
            if let Err(e) = send_notice(room, notice(&reply)).await {
                eprintln!("zonegraph: matrix: {e:#}");
            }
            return;
        }
        let answer = match self.state.command(user, command).await {
            Ok(answer) => {
                self.slowed
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .remove(user);
                answer
            }
            Err(CommandError::SlowDown { retry_after_ms }) => {
                // Said once; the rest of a burst is ignored until a command is taken again.
                let first = self
                    .slowed
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .insert(user.to_string());
                if first
                    && let Err(e) =
                        send_notice(room, notice(&chat::slow_down(retry_after_ms))).await
                {
                    eprintln!("zonegraph: matrix: {e:#}");
                }
                return;
            }
            Err(CommandError::Failed(e)) => {
                eprintln!("zonegraph: matrix: {user}: {e:#}");
                crate::store::Answer {
                    notices: Vec::new(),
                    replies: vec![chat::server_error()],
                }
            }
        };
        // Queued notices first, each acknowledged once the homeserver took it; a notice whose
        // send failed stays queued for the notice loop or the next command.
        let sent = self.send_notices(room, user, &answer.notices).await;
        if let Err(e) = self.state.ack_notices(user, sent.done).await {
            eprintln!("zonegraph: matrix: {user}: cannot acknowledge notices: {e:#}");
        }
        if !sent.all {
            return;
        }
        for reply in &answer.replies {
            if let Err(e) = send_notice(room, notice(reply)).await {
                eprintln!("zonegraph: matrix: {e:#}");
                break;
            }
        }
    }

    /// Sends `notices` in order. Stops at the first send that may succeed later, so the
    /// rest stay queued in order.
    async fn send_notices(&self, room: &Room, user: &str, notices: &[Notice]) -> SentNotices {
        let mut out = SentNotices {
            done: Vec::new(),
            sent: 0,
            all: false,
        };
        for (i, n) in notices.iter().enumerate() {
            let reply = Reply {
                text: n.text.clone(),
                html: n.html.clone(),
            };
            match send_notice(room, notice(&reply)).await {
                Ok(()) => {
                    out.done.push(n.id);
                    out.sent += 1;
                }
                Err(e) if e.permanent => {
                    eprintln!(
                        "zonegraph: matrix: notice for {user} refused, dropped ({e}): {}",
                        n.text
                    );
                    out.done.push(n.id);
                }
                Err(e) => {
                    eprintln!(
                        "zonegraph: matrix: notice for {user} not delivered ({e}); {} \
                         notice(s) stay queued",
                        notices.len() - i
                    );
                    return out;
                }
            }
        }
        out.all = true;
        out
    }

    /// An encrypted event: this build cannot read it. Say so once per room, in the log and
    /// (unencrypted) in the room.
    pub async fn on_encrypted(&self, ev: &OriginalSyncRoomEncryptedEvent, room: &Room) {
        if room.client().user_id().is_some_and(|me| me == ev.sender) {
            return;
        }
        let first = {
            let mut w = self.warned.lock().unwrap_or_else(|p| p.into_inner());
            w.insert(room.room_id().to_owned())
        };
        if !first {
            return;
        }
        eprintln!(
            "zonegraph: matrix: room {} is end-to-end encrypted; this bot does not support \
             encryption and ignores messages there (message from {})",
            room.room_id(),
            ev.sender
        );
        if let Err(e) = send_notice(room, notice(&chat::encrypted_room())).await {
            eprintln!("zonegraph: matrix: {e:#}");
        }
    }

    /// Sends each player's queued notices to their DM room, acknowledging each once the
    /// homeserver took it. Notices are sent only for players with a known room. When a send
    /// fails for a reason that may pass (the homeserver is down), that notice and the rest of
    /// the player's queue stay queued, in order, for the next round; one the homeserver
    /// refuses outright (the room is gone, the bot was kicked) is logged in full and dropped.
    pub async fn deliver_notices(&self, client: &Client) -> Result<usize> {
        let mut sent = 0;
        for user in self.state.users_with_notices().await? {
            let Some(room_id) = self.dm_room(&user) else {
                continue;
            };
            let Some(room) = client.get_room(&room_id) else {
                continue;
            };
            let queued = self.state.notices(&user).await?;
            let out = self.send_notices(&room, &user, &queued).await;
            self.state.ack_notices(&user, out.done).await?;
            sent += out.sent;
        }
        Ok(sent)
    }
}

/// What [`Bot::send_notices`] did.
struct SentNotices {
    /// To acknowledge: sent, or refused outright (and so dropped).
    done: Vec<i64>,
    /// How many the homeserver took.
    sent: usize,
    /// Whether none is left to try again.
    all: bool,
}

/// Joins a room the bot is invited to, retrying with backoff (Synapse may not be ready to
/// accept the join right after the invite).
async fn join_with_retry(room: Room) {
    let mut delay = Duration::from_secs(1);
    for _ in 0..8 {
        match room.join().await {
            Ok(()) => {
                eprintln!("zonegraph: matrix: joined {}", room.room_id());
                return;
            }
            Err(e) => {
                eprintln!(
                    "zonegraph: matrix: joining {} failed ({e}); retrying in {delay:?}",
                    room.room_id()
                );
                tokio::time::sleep(delay).await;
                delay = (delay * 2).min(Duration::from_secs(60));
            }
        }
    }
    eprintln!("zonegraph: matrix: gave up joining {}", room.room_id());
}

/// Registers the handlers: invites, messages, encrypted messages.
pub fn add_handlers(client: &Client, bot: &Bot) {
    client.add_event_handler(
        |ev: StrippedRoomMemberEvent, room: Room, c: Client| async move {
            if c.user_id()
                .is_some_and(|me| me.as_str() == ev.state_key.as_str())
            {
                // After a restart (in-memory SDK store) the SDK reports the rooms it had
                // joined as invites again; joining them again is a no-op on the homeserver
                // that restores the SDK's state, and the replayed history is older than
                // `started_ms`, so it is not answered.
                eprintln!(
                    "zonegraph: matrix: invited to {} by {}",
                    room.room_id(),
                    ev.sender
                );
                tokio::spawn(join_with_retry(room));
            }
        },
    );
    let b = bot.clone();
    client.add_event_handler(move |ev: OriginalSyncRoomMessageEvent, room: Room| {
        let b = b.clone();
        async move { b.on_message(&ev, &room).await }
    });
    let b = bot.clone();
    client.add_event_handler(move |ev: OriginalSyncRoomEncryptedEvent, room: Room| {
        let b = b.clone();
        async move { b.on_encrypted(&ev, &room).await }
    });
}

/// The first sync, whose messages are ignored (old messages are not answered); retried
/// with backoff until the homeserver answers. Returns the rooms the bot is invited to.
pub async fn first_sync(client: &Client) -> Vec<OwnedRoomId> {
    let mut delay = Duration::from_secs(1);
    loop {
        match client.sync_once(SyncSettings::new()).await {
            // From the response, not `Client::invited_rooms`: after a full sync the SDK can
            // report a room whose timeline holds the bot's invite and then its join as
            // invited, and joining it again makes Synapse replay the room's history.
            Ok(r) => return r.rooms.invited.into_keys().collect(),
            Err(e) => {
                eprintln!("zonegraph: matrix: first sync failed ({e}); retrying in {delay:?}");
                tokio::time::sleep(delay).await;
                delay = (delay * 2).min(Duration::from_secs(60));
            }
        }
    }
}

/// After [`first_sync`]: joins pending invites, registers the handlers and syncs forever; a
/// failed sync (dropped connection, homeserver down) is retried with backoff from the last
/// token.
pub async fn run(client: Client, bot: Bot, invited: Vec<OwnedRoomId>) {
    // Invites that arrived while the bot was away.
    for room in invited.iter().filter_map(|id| client.get_room(id)) {
        eprintln!(
            "zonegraph: matrix: invited to {} while away",
            room.room_id()
        );
        tokio::spawn(join_with_retry(room));
    }
    add_handlers(&client, &bot);
    let notices = {
        let (client, bot) = (client.clone(), bot.clone());
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(NOTICE_EVERY).await;
                if let Err(e) = bot.deliver_notices(&client).await {
                    eprintln!("zonegraph: matrix: notices: {e:#}");
                }
            }
        })
    };
    eprintln!("zonegraph: matrix: listening for !zone and !char");
    let mut delay = Duration::from_secs(1);
    loop {
        match client
            .sync_once(SyncSettings::new().timeout(SYNC_TIMEOUT))
            .await
        {
            Ok(_) => delay = Duration::from_secs(1),
            Err(e) => {
                eprintln!("zonegraph: matrix: sync failed ({e}); retrying in {delay:?}");
                tokio::time::sleep(delay).await;
                delay = (delay * 2).min(Duration::from_secs(60));
            }
        }
        if notices.is_finished() {
            eprintln!("zonegraph: matrix: the notice task stopped");
        }
    }
}

/// Logs in, syncs once and starts the bot on `runtime` (the server's), answering through
/// `state`; returns once it listens.
pub fn start(
    runtime: &tokio::runtime::Handle,
    state: &AppState,
    config: &Config,
) -> Result<tokio::task::JoinHandle<()>> {
    let bot = Bot::new(state.clone(), Some(&config.state_dir));
    let (client, invited) = runtime.block_on(async {
        let client = login(config).await?;
        let invited = first_sync(&client).await;
        anyhow::Ok((client, invited))
    })?;
    Ok(runtime.spawn(run(client, bot, invited)))
}

#[cfg(test)]
mod tests;
