//! The bot's state, on SQLite or PostgreSQL through `db::Tx`: players' commands through
//! `bot::handle`, each write a compare-and-set on the run and character rows (on SQLite
//! group-committed by one writer thread; on PostgreSQL one transaction each), and notices.
//! Beside it: the zones served (`catalog`), the sweep and what is kept how long (`sweep`),
//! what the store answers on the wire (`answer`) and what a run link shows (`views`), an
//! admin's sheet edit (`character`), the events outbox (`outbox`), the Matrix bot's rooms
//! and claims (`rooms`), the designers' reads (`insight`, `review`) and what the store's
//! owners reach through it (`shared`). Blocking: transports call it through
//! `crate::service`, one command per user at a time; never call it from inside an async
//! task (the PostgreSQL driver blocks on a runtime of its own).

mod answer;
pub mod catalog;
mod character;
pub mod insight;
mod outbox;
pub mod review;
mod rooms;
mod shared;
pub mod sweep;
mod views;

pub use character::{edit_character, log_edit};

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

use anyhow::{Context as _, Result, bail};
use zonegraph_core::bot::{self, AdminEdit, Authority, Context, Game, Player};
use zonegraph_core::chat::{self, Reply};
use zonegraph_core::command::Syntax;
use zonegraph_core::engine::{Character, EncounterRequest, Event, HostOutcome, Run};
use zonegraph_core::rules;

pub use answer::{Answer, Handled, PlayerRun, RunRef, RunView, is_token, run_link};
pub use catalog::{Author, Published, Refused, Withdrawn};
use catalog::{Catalog, ForRun};

use crate::clock::now_ms;
use crate::db::{self, Notice, StoredCharacter, StoredRun, WarmUp};
use crate::gogobee::carry::{FirstSheet, GOGOBEE_SHARED, write_back_gogobee};
use crate::host::HostHook;

/// How many times a command is recomputed when its compare-and-set loses a race.
const CAS_ATTEMPTS: usize = 16;

/// Makes the id of a run a user starts (it decides every roll of the run; ids must be
/// unique). Random in production; tests inject their own to get known rolls.
pub type RunIds = Arc<dyn Fn(&str) -> String + Send + Sync>;

/// Random 128-bit run ids.
pub fn random_run_ids() -> RunIds {
    Arc::new(|_| db::random_hex().unwrap_or_else(|_| format!("run-{}", now_ms())))
}

/// The right to run the Matrix sync for one bot account ([`Store::hold_sync_lock`]); given up
/// when dropped.
pub type SyncLock = db::HeldLock;

/// What opening the store found worth saying.
#[derive(Debug, Default)]
pub struct Opened {
    /// Warnings about the zones and the database (the start goes on).
    pub warnings: Vec<String>,
    /// The zone files imported, a line each.
    pub imported: Vec<String>,
    pub warm_up: WarmUp,
}

pub use crate::db::DbAt;

/// The database plus the zones served from it.
#[derive(Debug)]
pub struct Store {
    db: db::Database,
    /// The zones served, their versions, and the graphs runs still walk.
    catalog: Catalog,
    game: GameSettings,
    /// The user whose run or sheet a committed write changed (what the run pages follow).
    changes: tokio::sync::broadcast::Sender<Arc<str>>,
    /// The scoped API tokens, as last read from the database.
    tokens: crate::tokens::TokenBook,
    /// Whether each command's events are queued for a host game (`--events-url`), and how
    /// much that outbox keeps.
    events_out: Option<db::OutboxLimits>,
}

/// Who plays the game on this server: the built-in rules, or a host game (`--host-hook`).
#[derive(Clone, Debug)]
pub struct GameSettings {
    /// The scores of a player's first sheet (`--starting-scores`; built-in rules).
    pub starting_scores: [i32; 6],
    /// The host game that owns sheets and decides encounters, if any.
    pub host_hook: Option<HostHook>,
    /// Carried gogobee characters' level and XP written back to gogobee's `dnd_character`
    /// as they advance (`--gogobee-write-back`; built-in rules only; see `takeover`).
    pub gogobee_write_back: bool,
}

impl Default for GameSettings {
    fn default() -> Self {
        GameSettings {
            starting_scores: rules::STARTING_SCORES,
            host_hook: None,
            gogobee_write_back: false,
        }
    }
}

/// How many change notices a slow follower may fall behind before it is told it lagged
/// (it then reads the run again, so nothing is lost but the intermediate steps).
const CHANGE_BACKLOG: usize = 256;

/// Who edits character sheets on this server (`--sandbox`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CharacterRules {
    /// Only the admins (`--admin`) set sheets; players see theirs.
    #[default]
    AdminsOnly,
    /// Everyone edits their own sheet too (designers' playtests).
    Sandbox,
}

/// The settings a command needs from the server.
#[derive(Clone)]
pub struct CommandSettings {
    /// `{public_url}/run/{token}` is the run-map link.
    pub public_url: String,
    pub fork_timeout_ms: i64,
    pub run_ids: RunIds,
    /// The users who may set anyone's sheet (`--admin`).
    pub admins: Arc<BTreeSet<String>>,
    pub characters: CharacterRules,
}

impl CommandSettings {
    /// What `user` may do to character sheets: admins first, then the server's rules.
    pub fn authority(&self, user: &str) -> Authority {
        if self.admins.contains(user) {
            Authority::Admin
        } else if self.characters == CharacterRules::Sandbox {
            Authority::Sandbox
        } else {
            Authority::Player
        }
    }
}

impl std::fmt::Debug for CommandSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CommandSettings")
            .field("public_url", &self.public_url)
            .field("fork_timeout_ms", &self.fork_timeout_ms)
            .field("admins", &self.admins)
            .field("characters", &self.characters)
            .finish_non_exhaustive()
    }
}

/// A command's events as the outbox keeps them (`--events-url`): JSON, with the run they
/// belong to, and the most its player may have waiting.
struct Outbox {
    zone_id: String,
    run_token: String,
    events: Vec<String>,
    per_player: i64,
}

impl Outbox {
    fn of(events: &[Event], run: Option<&RunRef>, limits: &db::OutboxLimits) -> Result<Outbox> {
        Ok(Outbox {
            zone_id: run.map(|r| r.zone_id.clone()).unwrap_or_default(),
            run_token: run.map(|r| r.token.clone()).unwrap_or_default(),
            events: events
                .iter()
                .map(serde_json::to_string)
                .collect::<Result<_, _>>()
                .context("an event that cannot be written as JSON")?,
            per_player: limits.per_player,
        })
    }

    /// Queues these events of `user` in the command's transaction. A queue over its cap
    /// sheds its oldest (the command itself is kept whatever the outbox holds).
    fn push(&self, tx: &mut db::Tx<'_>, user: &str, now: i64) -> Result<()> {
        tx.push_events(
            user,
            &self.zone_id,
            &self.run_token,
            &self.events,
            self.per_player,
            now,
        )?;
        Ok(())
    }
}

/// What [`Store::command`] reads before computing: the player and the rows it came from.
/// Where one try of a command ended: answered (with the admin edit it asks for), or with an
/// encounter to put to the host game first.
enum Step {
    Done(Answer, Option<AdminEdit>),
    Ask {
        request: EncounterRequest,
        token: String,
        notices: Vec<Notice>,
    },
}

struct Loaded {
    player: Player,
    run: Option<StoredRun>,
    /// The character row's version (`None`: no row yet).
    character_version: Option<i64>,
    notices: Vec<Notice>,
}

impl Store {
    /// Opens the database, migrates it, syncs the zone files of `zones_dir` into its zone
    /// versions (`crate::catalog`: new and newer files only), serves the newest versions and
    /// warms legacy runs up.
    pub fn open(path: &Path, zones_dir: &Path) -> Result<(Store, Opened)> {
        Store::open_at(&DbAt::from(path.to_path_buf()), zones_dir)
    }

    /// [`Store::open`] on either database. On PostgreSQL the migrations run under a lock (so
    /// several instances starting together apply each once) and there is no legacy warm-up
    /// (a gogobee database is SQLite: migrate it there first, then copy it over).
    pub fn open_at(at: &DbAt, zones_dir: &Path) -> Result<(Store, Opened)> {
        Store::open_as(at, zones_dir, db::Upgrade::Migrate)
    }

    /// [`Store::open_at`], upgrading the schema or not (`serve --no-migrate`).
    pub fn open_as(at: &DbAt, zones_dir: &Path, upgrade: db::Upgrade) -> Result<(Store, Opened)> {
        let db = db::Database::open_as(at, upgrade)?;
        let (catalog, synced) = Catalog::open(&db, zones_dir)?;
        let mut warnings = synced.warning_words(zones_dir);
        let imported = synced.imported_words();
        let warm_up = db.warm_up_legacy(&catalog.served().zones, now_ms())?;
        if db.has_gogobee_run_columns() {
            warnings.push(GOGOBEE_SHARED.to_string());
        }
        let store = Store {
            db,
            catalog,
            game: GameSettings::default(),
            changes: tokio::sync::broadcast::channel(CHANGE_BACKLOG).0,
            tokens: crate::tokens::TokenBook::default(),
            events_out: None,
        };
        warnings.extend(store.refresh_tokens()?);
        Ok((
            store,
            Opened {
                warnings,
                imported,
                warm_up,
            },
        ))
    }

    /// Sets who plays the game (before the store is shared).
    pub fn set_game(&mut self, game: GameSettings) {
        self.game = game;
    }

    /// Queues every command's events for a host game from now on, within `limits`
    /// (`--events-url`; before the store is shared). `None`: no events are queued.
    pub fn set_events_out(&mut self, limits: Option<db::OutboxLimits>) {
        self.events_out = limits;
    }

    /// Who plays the game.
    pub fn game(&self) -> &GameSettings {
        &self.game
    }

    /// Every committed change to a player's run or sheet from now on, as the user's id:
    /// sent after the commit, so a reader that hears it reads the new rows.
    pub fn changes(&self) -> tokio::sync::broadcast::Receiver<Arc<str>> {
        self.changes.subscribe()
    }

    /// Tells the followers that `user`'s rows changed (no follower is not an error).
    fn changed(&self, user: &str) {
        let _ = self.changes.send(Arc::from(user));
    }

    /// Runs `work` in the writer's next transaction and waits until that transaction is
    /// committed (or failed). See `spawn_writer`.
    fn write(
        &self,
        work: impl FnOnce(&mut db::Tx<'_>) -> Result<Wrote> + Send + 'static,
    ) -> Result<Wrote> {
        self.db.write(work, |w: &Wrote| w.applied)
    }

    /// Runs `f` in a read.
    fn read<T>(&self, f: impl FnOnce(&mut db::Tx<'_>) -> Result<T>) -> Result<T> {
        self.db.read(f)
    }

    /// How a player's first sheet is made on the zones served now.
    fn first_sheet(&self) -> FirstSheet {
        FirstSheet::new(self.game.starting_scores, &self.zones())
    }

    /// What a command reads of `user`, in `tx` (one batch: see [`db::Tx::player_rows`]);
    /// a player with no sheet yet gets their first one of `first`.
    fn load_player(tx: &mut db::Tx<'_>, user: &str, first: &FirstSheet) -> Result<Loaded> {
        let db::PlayerRows {
            character: stored,
            run,
            notices,
        } = tx.player_rows(user)?;
        let character = match &stored {
            Some(s) => s.character.clone(),
            None => first.of(tx, user)?,
        };
        Ok(Loaded {
            player: Player {
                character,
                run: run.as_ref().map(|s| s.run.clone()),
            },
            character_version: stored.map(|StoredCharacter { version, .. }| version),
            run,
            notices: word_notices(notices),
        })
    }

    /// One chat command of `user`: parsed and answered by the core, every change committed
    /// before the answer is returned, with the notices queued for the user. An admin's edit
    /// of a sheet is applied to that user's character after the sender's own changes.
    pub fn command(&self, user: &str, text: &str, s: &CommandSettings) -> Result<Answer> {
        let (mut answer, admin_edit) = self.command_own(user, text, s)?;
        if let Some(AdminEdit { user: whom, edit }) = admin_edit {
            let reply = match self.edit_character(user, &whom, &edit)? {
                Ok(character) => chat::admin_edited(&whom, &edit, &character),
                Err(refusal) => {
                    answer.handled = Handled::refused(answer.handled.verb, &refusal);
                    chat::refusal(&refusal)
                }
            };
            answer.replies.push(reply);
        }
        Ok(answer)
    }

    /// What the player reads when the host game failed them: busy when the host is unwell,
    /// refused when it refused this player's call (`encounter`: the encounter's).
    fn host_failed(e: &crate::host::HostError, encounter: bool) -> chat::Reply {
        match e {
            crate::host::HostError::Unwell(_) => chat::host_busy(),
            crate::host::HostError::Refused(_) => chat::host_refused(encounter),
        }
    }

    /// [`Store::host_failed`] for the log: `host_unwell` or `host_refused`.
    fn host_failed_kind(e: &crate::host::HostError) -> &'static str {
        match e {
            crate::host::HostError::Unwell(_) => "host_unwell",
            crate::host::HostError::Refused(_) => "host_refused",
        }
    }

    /// [`Store::command`] on the sender's own player; the admin edit it asks for, if any.
    ///
    /// With a host game, its sheet of the player is asked for first, and an encounter the
    /// command meets is put to it: the core answers [`Game::Host`]`(None)` with the question,
    /// and the command is computed again, from the same stored state, with the decision. A
    /// host that fails or is too slow changes nothing: the player is told to try again.
    fn command_own(
        &self,
        user: &str,
        text: &str,
        s: &CommandSettings,
    ) -> Result<(Answer, Option<AdminEdit>)> {
        let hook = self.game.host_hook.as_ref();
        let hosted = match hook.map(|h| h.character(user)) {
            None => None,
            Some(Ok(c)) => Some(c),
            Some(Err(e)) => {
                let error = format!("{e:#}");
                tracing::warn!(%user, error, "host hook: character");
                let notices = self.read(|c| Ok(word_notices(c.queued_notices(user)?)))?;
                return Ok((
                    Answer {
                        notices,
                        replies: vec![Self::host_failed(&e, false)],
                        handled: Handled::host_failed(text, Self::host_failed_kind(&e)),
                        ..Answer::default()
                    },
                    None,
                ));
            }
        };
        let mut decision: Option<HostOutcome> = None;
        let mut attempts = 0;
        while attempts < CAS_ATTEMPTS {
            let now = now_ms();
            let first = self.first_sheet();
            let decided = decision.as_ref();
            // Read, computed and written in one go (on PostgreSQL one transaction of three
            // round trips); the host is asked outside it, and the command computed again.
            let (step, held) = self.db.read_then_write(|tx| {
                let Loaded {
                    mut player,
                    run: stored,
                    character_version,
                    notices,
                } = Self::load_player(tx, user, &first)?;
                if let Some(c) = &hosted {
                    // The host's sheet, with the XP the built-in rules kept (unused under a
                    // host).
                    player.character = Character {
                        xp: player.character.xp,
                        ..c.clone()
                    };
                }
                let before = player.clone();
                let cx = Context {
                    now,
                    new_run_id: (s.run_ids)(user),
                    run_link: stored
                        .as_ref()
                        .map(|r| run_link(&s.public_url, &r.link_token)),
                    fork_timeout_ms: s.fork_timeout_ms,
                    syntax: Syntax::Chat,
                    authority: s.authority(user),
                };
                let ForRun { zones, seqs } = self.catalog.zones_for(tx, stored.as_ref())?;
                let game = match hook {
                    None => Game::BuiltIn,
                    Some(_) => Game::Host(decided),
                };
                let response = bot::handle_as(&zones, &mut player, text, &cx, game);
                if let (Some(request), Some(_)) = (response.encounter_request, hook) {
                    let token = stored.map(|r| r.link_token).unwrap_or_default();
                    return Ok((
                        Step::Ask {
                            request,
                            token,
                            notices,
                        },
                        None,
                    ));
                }
                // The run after the command: the stored one, or a new one with a new token.
                let new_run = match (&player.run, &stored) {
                    (Some(run), Some(row)) if row.run.run_id == run.run_id => None,
                    (Some(_), _) => Some(db::random_hex()?),
                    (None, _) => None,
                };
                let run_ref = player.run.as_ref().and_then(|run| {
                    let token = new_run
                        .as_deref()
                        .or(stored.as_ref().map(|r| r.link_token.as_str()))?;
                    Some(RunRef::of(run, token, &s.public_url))
                });
                let outbox = self
                    .events_out
                    .map(|limits| Outbox::of(&response.events, run_ref.as_ref(), &limits))
                    .transpose()?;
                let answer = Answer {
                    notices,
                    replies: response.replies,
                    events: response.events,
                    run: run_ref,
                    handled: Handled::of(response.verb, &response.handled),
                };
                let done = Step::Done(answer, response.admin_edit);
                if player == before {
                    return Ok((done, None));
                }
                // A run this command replaced is stored as it ended, before the new one.
                let replaced = response.replaced_run;
                let after = player;
                // A new run's length, for a table that keeps it (gogobee's `total_rooms`).
                let rooms = after
                    .run
                    .as_ref()
                    .and_then(|r| zones.iter().find(|z| z.id == r.zone_id))
                    .and_then(zonegraph_core::paths::longest_path_len)
                    .unwrap_or(0);
                // The version a new run starts on: the one of the graph it was computed on.
                let seq = after
                    .run
                    .as_ref()
                    .and_then(|r| seqs.get(&r.zone_id).copied());
                let u = user.to_string();
                let write_back = self.game.gogobee_write_back && hook.is_none();
                let write: db::Write = Box::new(move |tx| {
                    let rows = Rows {
                        run: stored.as_ref(),
                        character_version,
                    };
                    let new_run = (rooms, seq, new_run.as_deref());
                    let held =
                        write_player(tx, &u, rows, &before, &replaced, &after, new_run, now)?;
                    if held && write_back {
                        write_back_gogobee(tx, &u, &before.character, &after.character)?;
                    }
                    if let (true, Some(o)) = (held, &outbox) {
                        o.push(tx, &u, now)?;
                    }
                    Ok(held)
                });
                Ok((done, Some(write)))
            })?;
            match (step, held) {
                (
                    Step::Ask {
                        request,
                        token,
                        notices,
                    },
                    _,
                ) => {
                    let hook = hook.context("an encounter was put to no host")?;
                    match hook.encounter(user, &token, &request) {
                        // Computed again with the decision; not a lost race.
                        Ok(d) => decision = Some(d),
                        Err(e) => {
                            let error = format!("{e:#}");
                            tracing::warn!(%user, error, "host hook: encounter");
                            let replies = vec![Self::host_failed(&e, true)];
                            let answer = Answer {
                                notices,
                                replies,
                                handled: Handled::host_failed(text, Self::host_failed_kind(&e)),
                                ..Answer::default()
                            };
                            return Ok((answer, None));
                        }
                    }
                }
                (Step::Done(answer, admin_edit), None) => return Ok((answer, admin_edit)),
                (Step::Done(answer, admin_edit), Some(true)) => {
                    self.changed(user);
                    return Ok((answer, admin_edit));
                }
                // Lost a compare-and-set: recompute from the new state.
                (Step::Done(..), Some(false)) => attempts += 1,
            }
        }
        bail!("the run of {user} kept changing under the command; try again")
    }

    /// Users with undelivered notices.
    pub fn users_with_notices(&self) -> Result<Vec<String>> {
        self.read(|c| c.users_with_notices())
    }

    /// `user`'s queued notices, oldest first, in the core's words. They stay queued (and are
    /// handed out again) until acknowledged with [`Store::ack_notices`].
    pub fn notices(&self, user: &str) -> Result<Vec<Notice>> {
        self.read(|c| Ok(word_notices(c.queued_notices(user)?)))
    }

    /// Marks `user`'s notices `ids` delivered (the transport confirmed them); returns how
    /// many were still queued.
    pub fn ack_notices(&self, user: &str, ids: Vec<i64>) -> Result<usize> {
        if ids.is_empty() {
            return Ok(0);
        }
        let u = user.to_string();
        let wrote = self.write(move |tx| {
            Ok(Wrote {
                applied: true,
                count: tx.ack_notices(&u, &ids, now_ms())?,
            })
        })?;
        Ok(wrote.count)
    }

    /// Every stored run (tests and checks).
    pub fn all_runs(&self) -> Result<Vec<StoredRun>> {
        self.read(|c| c.all_runs())
    }

    /// Whether a write can be made (for `/healthz`): a one-row write committed through the
    /// writer, like every command's.
    pub fn healthy(&self) -> Result<()> {
        self.write(|tx| {
            tx.health_write(now_ms())?;
            Ok(Wrote {
                applied: true,
                count: 0,
            })
        })
        .map(|_| ())
    }
}

/// The rows a player's state was read from: what the compare-and-sets expect.
struct Rows<'a> {
    run: Option<&'a StoredRun>,
    character_version: Option<i64>,
}

/// Writes what changed between `before` and `after` in `tx`; false when a
/// compare-and-set failed (the caller drops the transaction and retries).
#[allow(clippy::too_many_arguments)] // one player's before/after snapshot
fn write_player(
    tx: &mut db::Tx<'_>,
    user: &str,
    rows: Rows<'_>,
    before: &Player,
    replaced: &Option<Run>,
    after: &Player,
    (rooms, zone_file_seq, token): (usize, Option<i64>, Option<&str>),
    now: i64,
) -> Result<bool> {
    let stored = rows.run;
    // Every write is a compare-and-set, and all of them go together (one round trip on
    // PostgreSQL): when one fails the caller keeps none.
    let mut writes = Vec::new();
    // A player's first sheet is stored at their first command, as the rules started it.
    if after.character != before.character || rows.character_version.is_none() {
        writes.push(tx.character_cas(user, &after.character, rows.character_version, now)?);
    }
    let same_run = |a: &Option<Run>, b: &Option<Run>| match (a, b) {
        (Some(a), Some(b)) => a.run_id == b.run_id,
        (None, None) => true,
        _ => false,
    };
    if same_run(&before.run, &after.run) {
        if after.run != before.run
            && let (Some(row), Some(run)) = (stored, &after.run)
        {
            writes.push(tx.run_cas(row.id, row.version, run)?);
        }
    } else {
        // A new run: the one it replaced (perhaps ended by the fork timeout this command
        // applied) first, then the new row.
        if replaced != &before.run
            && let (Some(row), Some(run)) = (stored, replaced)
        {
            writes.push(tx.run_cas(row.id, row.version, run)?);
        }
        // Another writer started a run for this player meanwhile (the unique index on
        // active runs refuses the row): recompute.
        if let Some(run) = &after.run {
            let token = token.context("a new run without its link token")?;
            writes.push(tx.run_insert(user, run, rooms, zone_file_seq, token)?);
        }
    }
    tx.all_hold(&writes)
}

/// Notices as the player sees them: one that follows dropped ones says how many.
fn word_notices(list: Vec<Notice>) -> Vec<Notice> {
    list.into_iter()
        .map(|n| {
            if n.dropped_before <= 0 {
                return n;
            }
            let dropped = u64::try_from(n.dropped_before).unwrap_or(0);
            let worded = chat::after_dropped_notices(
                &Reply {
                    text: n.text,
                    html: n.html,
                    private: true,
                    link: None,
                    choices: Vec::new(),
                },
                dropped,
            );
            Notice {
                text: worded.text,
                html: worded.html,
                dropped_before: 0,
                ..n
            }
        })
        .collect()
}

/// What a write job did: whether its compare-and-sets held, and how many rows it touched
/// where that is the answer.
#[derive(Debug, Default)]
struct Wrote {
    applied: bool,
    count: usize,
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use super::*;
    use std::path::PathBuf;

    fn zones_dir() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../zones")
    }

    #[test]
    fn the_notice_after_a_full_queue_says_how_many_were_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("z.db");
        let (store, _) = Store::open(&path, &zones_dir()).unwrap();
        let conn = db::open(&path).unwrap();
        for i in 0..db::MAX_QUEUED_NOTICES + 2 {
            let t = format!("picked {i}");
            db::Tx::new(&conn, db::LegacyColumns::default())
                .push_notice("@p:test", "r", &t, &t, i)
                .unwrap();
        }
        let list = store.notices("@p:test").unwrap();
        assert_eq!(list.len() as i64, db::MAX_QUEUED_NOTICES);
        let first = &list[0];
        assert_eq!(
            first.text,
            "(2 older notices were dropped: too many were waiting.)\npicked 2"
        );
        assert!(
            first.html.starts_with("<i>(2 older notices"),
            "{}",
            first.html
        );
        assert_eq!(list[1].text, "picked 3");
        // The count is told until the notice carrying it is acknowledged.
        assert_eq!(store.notices("@p:test").unwrap()[0], *first);
        assert_eq!(store.ack_notices("@p:test", vec![first.id]).unwrap(), 1);
        assert_eq!(store.notices("@p:test").unwrap()[0].text, "picked 3");
    }
}
