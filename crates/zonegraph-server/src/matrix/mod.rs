//! The Matrix transport (`zonegraph serve --matrix`): the bot logs in with matrix-sdk, joins
//! the rooms allowed users invite it to and answers `!zone …` / `!char …` through the same
//! pipeline as the HTTP API ([`Service::command`]); the Matrix user id is the player.
//!
//! - End-to-end encryption is the normal case: the SDK's SQLite state and crypto stores live
//!   in the state directory `<db>.matrix/` (see `session`), so the bot keeps its device, its
//!   keys and its sync position across restarts, reads encrypted DMs and rooms, and shares
//!   its room keys with the members' devices when it answers.
//! - The sync loop only hands events off (`bot`): each player's commands go to a queue of
//!   their own (`queue`), worked in order by one task, players in parallel.
//! - Each event is answered at most once: its id is claimed in the database before the
//!   command runs, and events from before the bot's own join in a room are not answered.
//! - Several instances on one PostgreSQL database ([`start_when_held`]): each logs in at start
//!   as a device of its own and uploads its keys; only the holder of the account's sync lock
//!   syncs and answers, and another takes over when it dies.
//! - `--matrix-allow` decides whose invites are accepted and whose commands are answered.
//! - Replies the core marks private (the run-map link, a sheet) and notices go to the
//!   player's direct messages when the room is shared.
//! - What is sent: `send` (an `m.notice`, cut under the event size limit).

mod bot;
pub mod identity;
mod queue;
mod send;
mod session;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::{Context as _, Result, bail};
use matrix_sdk::config::{SyncSettings, SyncToken};
use matrix_sdk::ruma::api::client::filter::{FilterDefinition, LazyLoadOptions};
use matrix_sdk::ruma::api::client::keys::get_keys;
use matrix_sdk::ruma::api::client::sync::sync_events::v3::Filter;
use matrix_sdk::ruma::events::room::encrypted::OriginalSyncRoomEncryptedEvent;
use matrix_sdk::ruma::events::room::member::{
    OriginalSyncRoomMemberEvent, StrippedRoomMemberEvent,
};
use matrix_sdk::ruma::events::room::message::OriginalSyncRoomMessageEvent;
use matrix_sdk::ruma::serde::Raw;
use matrix_sdk::store::StateStoreDataKey;
use matrix_sdk::{Client, Room};
use serde::Deserialize;

use crate::secret::Secret;
use crate::service::{Failing, Service};

pub use bot::{Allow, Bot, is_private_with};
pub use queue::MAX_WAITING;
pub use send::{MAX_CONTENT_BYTES, SendError, notice, notice_within, send_notice};
pub use session::{build_client, login};

/// How often queued fork-timeout notices are looked for.
pub const NOTICE_EVERY: Duration = Duration::from_secs(5);
/// How often handled event ids older than their memory are forgotten.
const PRUNE_EVERY: Duration = Duration::from_secs(3_600);
/// Long-poll timeout of one sync request.
const SYNC_TIMEOUT: Duration = Duration::from_secs(30);

/// The Matrix settings an operator gave (`zonegraph serve`'s `--matrix…` flags and their
/// environment variables; the command line is `crate::cli::serve`). Secrets belong in the
/// environment or the config file.
#[derive(Debug, Default, Clone)]
pub struct MatrixArgs {
    /// Also run the Matrix bot.
    pub matrix: bool,
    /// JSON file with any of {"homeserver","user","password","token"}.
    pub matrix_config: Option<PathBuf>,
    pub matrix_homeserver: Option<String>,
    pub matrix_user: Option<String>,
    pub matrix_password: Option<Secret>,
    pub matrix_token: Option<Secret>,
    /// Who may invite the bot and talk to it (empty: the bot's own homeserver).
    pub matrix_allow: Vec<String>,
}

/// The config file's shape.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileConfig {
    homeserver: Option<String>,
    user: Option<String>,
    password: Option<Secret>,
    token: Option<Secret>,
    #[serde(default)]
    allow: Vec<String>,
}

/// How the bot logs in.
#[derive(Clone, Debug)]
pub enum Login {
    Password(Secret),
    Token(Secret),
}

/// The environment variable with the passphrase of the SDK's stores (else a passphrase made
/// at the first login is kept in `session.json`).
pub const STORE_PASSPHRASE_ENV: &str = "ZONEGRAPH_MATRIX_STORE_PASSPHRASE";

/// A resolved Matrix configuration.
#[derive(Clone, Debug)]
pub struct Config {
    pub homeserver: String,
    pub user: String,
    pub secret: Login,
    /// `<db>.matrix/`: the session and the SDK's stores.
    pub state_dir: PathBuf,
    /// `--matrix-allow` (empty: the bot's own homeserver).
    pub allow: Vec<String>,
    /// The recovery key (`ZONEGRAPH_MATRIX_RECOVERY_KEY`); none: the file the first start
    /// wrote beside the database ([`identity::recovery_key_file`]).
    pub recovery_key: Option<Secret>,
    /// The stores' passphrase (`ZONEGRAPH_MATRIX_STORE_PASSPHRASE`).
    pub store_passphrase: Option<Secret>,
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
        let pick_secret = |a: &Option<Secret>, b: Option<Secret>| {
            a.clone().filter(|s| !s.expose().trim().is_empty()).or(b)
        };
        let secret = match (
            pick_secret(&args.matrix_token, file.token),
            pick_secret(&args.matrix_password, file.password),
        ) {
            (Some(t), _) => Login::Token(t),
            (None, Some(p)) => Login::Password(p),
            (None, None) => bail!(
                "--matrix needs ZONEGRAPH_MATRIX_PASSWORD or ZONEGRAPH_MATRIX_TOKEN (or the config file)"
            ),
        };
        let allow = if args.matrix_allow.is_empty() {
            file.allow
        } else {
            args.matrix_allow.clone()
        };
        Ok(Config {
            homeserver,
            user,
            secret,
            state_dir: state_dir(db),
            allow,
            recovery_key: Secret::from_env(identity::RECOVERY_ENV),
            store_passphrase: Secret::from_env(STORE_PASSPHRASE_ENV),
        })
    }
}

/// `<db>.matrix`, next to the database.
pub fn state_dir(db: &Path) -> PathBuf {
    let mut s = db.as_os_str().to_owned();
    s.push(".matrix");
    PathBuf::from(s)
}

/// Registers the handlers: invites, memberships, messages, undecryptable messages.
pub fn add_handlers(client: &Client, bot: &Bot) {
    let b = bot.clone();
    client.add_event_handler(move |ev: StrippedRoomMemberEvent, room: Room| {
        let b = b.clone();
        async move { b.on_invite(&ev, room).await }
    });
    let b = bot.clone();
    client.add_event_handler(move |ev: OriginalSyncRoomMemberEvent, room: Room| {
        let b = b.clone();
        async move { b.on_member(&ev, &room).await }
    });
    let b = bot.clone();
    client.add_event_handler(move |ev: OriginalSyncRoomMessageEvent, room: Room| {
        let b = b.clone();
        async move { b.on_message(&ev, &room).await }
    });
    let b = bot.clone();
    client.add_event_handler(
        move |raw: Raw<OriginalSyncRoomEncryptedEvent>, room: Room| {
            let b = b.clone();
            async move {
                if let Ok(ev) = raw.deserialize() {
                    b.on_undecryptable(&ev, Some(&raw), &room).await;
                }
            }
        },
    );
}

/// Events per room in one sync response. A sync that resumes after a gap (a restart, a
/// takeover) gets a room's latest events up to this many: more would be left out unanswered.
const TIMELINE_LIMIT: u32 = 50;

/// Sync settings: the long-poll timeout, up to `TIMELINE_LIMIT` (50) events per room, and
/// lazy-loading of members (a big room's member list is not sent with every sync; the room
/// summary counts them).
pub async fn sync_settings(client: &Client) -> SyncSettings {
    let mut filter = FilterDefinition::default();
    let lazy = LazyLoadOptions::Enabled {
        include_redundant_members: false,
    };
    filter.room.state.lazy_load_options = lazy;
    filter.room.timeline.lazy_load_options = lazy;
    filter.room.timeline.limit = Some(TIMELINE_LIMIT.into());
    let settings = SyncSettings::new().timeout(SYNC_TIMEOUT);
    // The SDK keeps one filter id per name: the name changes with the definition.
    match client.get_or_upload_filter("zonegraph-2", filter).await {
        Ok(id) => settings.filter(Filter::FilterId(id)),
        Err(e) => {
            tracing::warn!(error = %e, "cannot upload the sync filter; syncing without");
            settings
        }
    }
}

/// One sync, retried with backoff until the homeserver answers. A stored sync token makes
/// it a resumption, not an initial full sync.
async fn sync_once_retrying(client: &Client, settings: &SyncSettings) {
    let mut delay = Duration::from_secs(1);
    loop {
        match client.sync_once(settings.clone()).await {
            Ok(_) => return,
            Err(e) => {
                tracing::warn!(error = %e, "sync failed; retrying in {delay:?}");
                tokio::time::sleep(delay).await;
                delay = (delay * 2).min(Duration::from_secs(60));
            }
        }
    }
}

/// Aborts a task when dropped (with the task that owns it).
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Syncs forever (each response's events handed off by the handlers), delivers queued
/// notices every [`NOTICE_EVERY`] and forgets old event ids every [`PRUNE_EVERY`]. Aborting
/// it stops both.
pub async fn run(client: Client, bot: Bot, settings: SyncSettings) {
    let notices = {
        let (client, bot) = (client.clone(), bot.clone());
        AbortOnDrop(tokio::spawn(async move {
            let mut pruned = tokio::time::Instant::now();
            let mut failing = Failing::default();
            loop {
                tokio::time::sleep(NOTICE_EVERY).await;
                match bot.deliver_notices(&client).await {
                    Ok(()) => back(failing.ok("notices are looked for again")),
                    Err(e) => warn(failing.failed(&format!("cannot look for notices ({e:#})"))),
                }
                if pruned.elapsed() >= PRUNE_EVERY {
                    pruned = tokio::time::Instant::now();
                    if let Err(e) = bot.state().blocking(|s| s.prune_events()).await {
                        tracing::warn!(
                            error = %format_args!("{e:#}"),
                            "cannot forget old events"
                        );
                    }
                }
            }
        }))
    };
    loop {
        sync_once_retrying(&client, &settings).await;
        if notices.0.is_finished() {
            tracing::error!("the notice task stopped");
        }
    }
}

/// Logs what ends a run of failures ([`Failing::ok`]), if it does.
fn back(line: Option<String>) {
    if let Some(line) = line {
        tracing::info!("{line}");
    }
}

/// Logs what starts a run of failures ([`Failing::failed`]), if it does.
fn warn(line: Option<String>) {
    if let Some(line) = line {
        tracing::warn!("{line}");
    }
}

/// How often an instance that waits for the sync lock asks again, and how often the one
/// that holds it checks that it still does: a dead instance is replaced within about
/// `LOCK_EVERY` plus one sync.
const LOCK_EVERY: Duration = Duration::from_secs(5);

/// Starts the bot on `runtime` (the server's) as [`start`] does, for several instances on
/// one PostgreSQL database: every instance logs in at once as a device of its own and
/// uploads its keys (`upload_keys`), so players' clients share their room keys with it
/// too; then only the one that holds the sync lock for the bot account
/// ([`crate::store::Store::hold_sync_lock`]) syncs and answers. The others stand by with no
/// handler and no sync. When the holder dies or loses the database another takes over,
/// syncs on from where it stood (the events of the gap are in that sync) and the
/// handled-event claims they share keep any event from being answered twice. Returns at
/// once; the task runs until the server stops.
pub fn start_when_held(
    runtime: &tokio::runtime::Handle,
    state: &Service,
    config: &Config,
) -> Result<tokio::task::JoinHandle<()>> {
    // The first attempt at once, so a refusal stops the start; a homeserver that is away is
    // tried again in the background.
    let first = match runtime.block_on(connect(config)) {
        Ok(connected) => Some(connected),
        Err(e) if identity::is_refusal(&e) => return Err(e),
        Err(e) => {
            tracing::warn!(error = %format_args!("{e:#}"), "cannot log in; trying again in 30 s");
            None
        }
    };
    let (state, config) = (state.clone(), config.clone());
    Ok(runtime.spawn(async move {
        let connected = match first {
            Some(connected) => connected,
            None => loop {
                tokio::time::sleep(LOCK_EVERY * 6).await;
                match connect(&config).await {
                    Ok(connected) => break connected,
                    Err(e) if identity::is_refusal(&e) => {
                        tracing::error!("{e:#}; the bot stays off");
                        return;
                    }
                    Err(e) => tracing::warn!(
                        error = %format_args!("{e:#}"),
                        "cannot log in; trying again in 30 s"
                    ),
                }
            },
        };
        // Held while the task runs.
        let Connected {
            client,
            lock: _lock,
            from,
        } = connected;
        // Whether a sync since the lock was taken went through (then the client's stored
        // token is where to go on from).
        let caught_up = Arc::new(AtomicBool::new(false));
        let user = config.user.clone();
        let mut bot: Option<(Bot, SyncSettings)> = None;
        let mut waiting_said = false;
        let mut db = Failing::default();
        loop {
            let u = user.clone();
            let lock = match state.blocking(move |s| s.hold_sync_lock(&u)).await {
                Ok(Some(lock)) => {
                    back(db.ok("database back"));
                    lock
                }
                Ok(None) => {
                    back(db.ok("database back"));
                    if !waiting_said {
                        tracing::info!("another instance runs {user}; standing by");
                        waiting_said = true;
                    }
                    tokio::time::sleep(LOCK_EVERY).await;
                    continue;
                }
                Err(e) => {
                    warn(db.failed(&format!(
                        "database unreachable, cannot take the sync lock ({e:#})"
                    )));
                    tokio::time::sleep(LOCK_EVERY).await;
                    continue;
                }
            };
            waiting_said = false;
            tracing::info!("took the sync lock for {user}");
            let (b, settings) = match &bot {
                Some(running) => running.clone(),
                None => match prepare(&client, &state, &config).await {
                    Ok(running) => bot.insert(running).clone(),
                    Err(e) => {
                        tracing::error!(error = %format_args!("{e:#}"), "cannot start");
                        drop(lock);
                        tokio::time::sleep(LOCK_EVERY * 6).await;
                        continue;
                    }
                },
            };
            let first = if caught_up.load(Ordering::SeqCst) {
                SyncToken::ReusePrevious
            } else {
                from.clone()
            };
            let task = {
                let (client, caught_up) = (client.clone(), caught_up.clone());
                tokio::spawn(async move {
                    catch_up(&client, &b, &settings, first).await;
                    caught_up.store(true, Ordering::SeqCst);
                    run(client, b, settings).await;
                })
            };
            let lock = Arc::new(lock);
            loop {
                tokio::time::sleep(LOCK_EVERY).await;
                let l = lock.clone();
                let holds = state
                    .blocking(move |s| Ok(s.still_holds(&l)))
                    .await
                    .unwrap_or(false);
                if !holds {
                    // Another instance may take over now: stop answering at once.
                    task.abort();
                    tracing::warn!("lost the sync lock (the database?); standing by");
                    break;
                }
            }
        }
    }))
}

/// A logged-in device ready to answer: its state directory locked, its keys on the
/// homeserver, cross-signed by the account's identity.
struct Connected {
    client: Client,
    lock: session::StateLock,
    /// Where its first sync starts (see [`upload_keys`]).
    from: SyncToken,
}

/// Locks the state directory, logs in (or resumes), uploads the device's keys and makes the
/// device cross-signed ([`identity::ensure`]), saying what it did.
async fn connect(config: &Config) -> Result<Connected> {
    let lock = session::lock_state_dir(&config.state_dir)?;
    let client = login(config).await?;
    let from = upload_keys(&client).await;
    let device = client
        .device_id()
        .map(|d| d.to_string())
        .unwrap_or_default();
    let outcome = match identity::ensure(&client, config).await {
        Ok(outcome) => outcome,
        Err(e) => {
            if identity::is_refusal(&e) {
                // Leave no device behind that nobody signed (players' clients would list it).
                if let Err(out) = client.logout().await {
                    tracing::warn!(error = %out, "cannot log the refused device out");
                }
                let _ = std::fs::remove_file(config.state_dir.join("session.json"));
            }
            return Err(e);
        }
    };
    match outcome {
        identity::Outcome::Created(Some(file)) => tracing::warn!(
            "set up cross-signing for {}: its recovery key is in {} (mode 0600). Back it up: \
             every new device of the bot (another instance, a lost store) needs it, from that \
             file or from {}",
            config.user,
            file.display(),
            identity::RECOVERY_ENV
        ),
        identity::Outcome::Created(None) => tracing::info!(
            "set up cross-signing for {} under the recovery key in {}",
            config.user,
            identity::RECOVERY_ENV
        ),
        identity::Outcome::Recovered => tracing::info!(
            "device {device} joined {}'s cross-signing identity with the recovery key",
            config.user
        ),
        identity::Outcome::Kept => {
            tracing::info!("device {device} is cross-signed by {}", config.user)
        }
    }
    Ok(Connected { client, lock, from })
}

/// Makes sure this device's keys are on the homeserver before the instance may answer, so
/// the players' clients that send after this share their room keys with it (a device that
/// logged in only when it took over could read none of what was sent while it was away).
/// The SDK uploads a new device's keys when it syncs; this sync leaves out every room and
/// handler ([`FilterDefinition::ignore_all`]) and its token is not kept (a resumption from it
/// would know no room). Returns where the instance's first real sync must start so that
/// nothing this one stepped over is missed: a device that had synced before goes on from its
/// stored token (no upload needed: it did it then), a new one syncs from the start (a full
/// sync, as any new device's first).
async fn upload_keys(client: &Client) -> SyncToken {
    let synced_before = client
        .state_store()
        .get_kv_data(StateStoreDataKey::SyncToken)
        .await
        .ok()
        .flatten()
        .and_then(|v| v.into_sync_token())
        .is_some();
    if synced_before {
        return SyncToken::ReusePrevious;
    }
    let settings = SyncSettings::new()
        .filter(Filter::FilterDefinition(FilterDefinition::ignore_all()))
        .timeout(Duration::ZERO);
    let mut delay = Duration::from_secs(1);
    loop {
        sync_once_retrying(client, &settings).await;
        match keys_uploaded(client).await {
            Ok(true) => break,
            Ok(false) => tracing::warn!(
                "the device's keys are not on the homeserver yet; trying again in {delay:?}"
            ),
            Err(e) => tracing::warn!(
                error = %e,
                "cannot check the device's keys; trying again in {delay:?}"
            ),
        }
        tokio::time::sleep(delay).await;
        delay = (delay * 2).min(Duration::from_secs(60));
    }
    if let Err(e) = client
        .state_store()
        .remove_kv_data(StateStoreDataKey::SyncToken)
        .await
    {
        tracing::warn!(error = %e, "cannot forget the key upload's sync token");
    }
    tracing::info!(
        "uploaded the keys of device {}",
        client.device_id().map(|d| d.as_str()).unwrap_or("?")
    );
    SyncToken::NoToken
}

/// Whether the homeserver has this device's identity keys.
async fn keys_uploaded(client: &Client) -> Result<bool> {
    let (Some(me), Some(device)) = (client.user_id(), client.device_id()) else {
        bail!("not logged in");
    };
    let mut request = get_keys::v3::Request::new();
    request
        .device_keys
        .insert(me.to_owned(), vec![device.to_owned()]);
    let response = client.send(request).await?;
    Ok(response
        .device_keys
        .get(me)
        .is_some_and(|devices| devices.contains_key(device)))
}

/// Logs in (or resumes), syncs once and starts the bot on `runtime` (the server's),
/// answering through `state`; returns once it listens.
pub fn start(
    runtime: &tokio::runtime::Handle,
    state: &Service,
    config: &Config,
) -> Result<tokio::task::JoinHandle<()>> {
    let (connected, bot, settings) = runtime.block_on(async {
        let connected = connect(config).await?;
        let (bot, settings) = prepare(&connected.client, state, config).await?;
        catch_up(&connected.client, &bot, &settings, connected.from.clone()).await;
        anyhow::Ok((connected, bot, settings))
    })?;
    Ok(runtime.spawn(async move {
        let _lock = connected.lock;
        run(connected.client, bot, settings).await
    }))
}

/// The bot of a logged-in client, its handlers registered, and the sync settings.
async fn prepare(client: &Client, state: &Service, config: &Config) -> Result<(Bot, SyncSettings)> {
    let me = client
        .user_id()
        .context("logged in, but the SDK has no user id")?
        .to_owned();
    let bot = Bot::new(state.clone(), Allow::parse(&config.allow, &me)?);
    import_rooms_json(&config.state_dir, state).await;
    add_handlers(client, &bot);
    let settings = sync_settings(client).await;
    Ok((bot, settings))
}

/// The first sync of a bot that starts answering (from `from`: see [`upload_keys`]; its
/// events are answered unless claimed or older than the bot's join; it does not wait for
/// new ones), then rooms where the bot is alone are left.
async fn catch_up(client: &Client, bot: &Bot, settings: &SyncSettings, from: SyncToken) {
    let first = settings.clone().token(from).timeout(Duration::ZERO);
    sync_once_retrying(client, &first).await;
    for room in client.joined_rooms() {
        bot::leave_if_alone(&room).await;
    }
    tracing::info!(
        "listening for !zone and !char (allowed: {})",
        bot.allow().describe()
    );
}

/// Earlier versions kept each player's DM room in `<state>/rooms.json`; they move into the
/// database once.
async fn import_rooms_json(state_dir: &Path, state: &Service) {
    let path = state_dir.join("rooms.json");
    let Ok(text) = std::fs::read_to_string(&path) else {
        return;
    };
    let Ok(rooms) = serde_json::from_str::<std::collections::BTreeMap<String, String>>(&text)
    else {
        tracing::warn!("{} is not a room list; left as it is", path.display());
        return;
    };
    let result = state
        .blocking(move |s| {
            for (user, room) in &rooms {
                if s.dm_room(user)?.is_none() {
                    s.set_dm_room(user, room, true)?;
                }
            }
            Ok(())
        })
        .await;
    match result.and_then(|()| Ok(std::fs::remove_file(&path)?)) {
        Ok(()) => tracing::info!("moved the DM rooms of {} into the database", path.display()),
        Err(e) => tracing::warn!(
            error = %format_args!("{e:#}"),
            "cannot move {} into the database",
            path.display()
        ),
    }
}

#[cfg(test)]
mod tests;
