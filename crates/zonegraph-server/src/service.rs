//! The one entry every transport calls (the HTTP API, Matrix, the tests): which chat lines
//! are for the bot, the length limit, each user's rate limit and lock, the claim of a chat
//! event, and the store's calls off the async threads. A transport decides only how it
//! receives a line and how it delivers the answer.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use zonegraph_core::limits::{Rate, TokenBucket};

use zonegraph_core::zone::Zone;

use crate::db::{self, Notice};
use crate::store::catalog::Served;
use crate::store::insight::VersionInsight;
use crate::store::review::{Unreviewable, VersionReview};
use crate::store::{
    Answer, Author, CommandSettings, PlayerRun, Published, Refused, RunView, Store, Withdrawn,
};
use crate::tokens::TokenBook;

/// Longest command text accepted.
pub const MAX_TEXT_LEN: usize = 4096;

/// The store with what every transport shares: the command settings, each user's lock and
/// rate limit.
#[derive(Clone, Debug)]
pub struct Service {
    /// Reached only through the methods below, which take its calls off the async threads.
    store: Arc<Store>,
    pub settings: CommandSettings,
    locks: UserLocks,
    limiter: Limiter,
    reviews: Reviews,
}

/// The reviews running, one per zone, and how many runs each replays.
#[derive(Clone, Debug)]
struct Reviews {
    running: Arc<Mutex<std::collections::BTreeSet<String>>>,
    most_recent: usize,
}

/// A zone's turn to be reviewed: the zone is free again when it is dropped.
struct ReviewTurn {
    running: Arc<Mutex<std::collections::BTreeSet<String>>>,
    zone_id: String,
    stop: Arc<AtomicBool>,
}

impl Reviews {
    fn begin(&self, zone_id: &str) -> Option<ReviewTurn> {
        let mut running = self.running.lock().unwrap_or_else(|p| p.into_inner());
        running.insert(zone_id.to_string()).then(|| ReviewTurn {
            running: self.running.clone(),
            zone_id: zone_id.to_string(),
            stop: Arc::new(AtomicBool::new(false)),
        })
    }
}

impl Drop for ReviewTurn {
    fn drop(&mut self) {
        let mut running = self.running.lock().unwrap_or_else(|p| p.into_inner());
        running.remove(&self.zone_id);
    }
}

/// Sets its flag when dropped.
struct StopOnDrop(Arc<AtomicBool>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// Why [`Service::command`] gave no answer.
#[derive(Debug)]
pub enum CommandError {
    /// The text is longer than [`MAX_TEXT_LEN`] bytes (nothing was run).
    TooLong { limit: usize },
    /// The user's rate limit: try again after this many milliseconds.
    SlowDown { retry_after_ms: u64 },
    /// The server failed (the details are for the log).
    Failed(anyhow::Error),
}

impl std::fmt::Display for CommandError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CommandError::SlowDown { retry_after_ms } => {
                write!(f, "rate-limited for {retry_after_ms} ms")
            }
            CommandError::TooLong { limit } => write!(f, "the text is longer than {limit} bytes"),
            CommandError::Failed(e) => write!(f, "{e:#}"),
        }
    }
}

impl Service {
    /// A service over `store`; `rate` limits each user's commands (`None`: no limit).
    pub fn new(store: Arc<Store>, settings: CommandSettings, rate: Option<Rate>) -> Service {
        Service {
            store,
            settings,
            locks: UserLocks::default(),
            limiter: Limiter::new(rate),
            reviews: Reviews {
                running: Arc::default(),
                most_recent: crate::store::review::REVIEW_RUNS,
            },
        }
    }

    /// Whether a chat line is for the bot (as the command parser reads it: `!zone` or
    /// `!char` as its first word, in any case). A transport that sees every message of a
    /// room asks this before [`Service::command`].
    pub fn is_for_bot(text: &str) -> bool {
        zonegraph_core::command::is_addressed(text)
    }

    /// Claims a chat event (`event_id` in `room`) before it is answered: `true` for the
    /// first claim, `false` when any instance claimed it already.
    pub async fn claim_event(&self, event_id: &str, room: &str) -> anyhow::Result<bool> {
        let (e, r) = (event_id.to_string(), room.to_string());
        self.blocking(move |st| st.claim_event(&e, &r)).await
    }

    /// Whether someone holds `user`'s lock now (tests).
    pub fn is_locked(&self, user: &str) -> bool {
        self.locks.is_held(user)
    }

    /// Runs `f` while holding `user`'s lock (the sweeper's fork timeout).
    pub async fn with_lock<T>(&self, user: &str, f: impl std::future::Future<Output = T>) -> T {
        self.locks.with(user, f).await
    }

    /// One chat command of `user`, answered in the core's words, committed before it returns:
    /// the entry point every transport calls. Rate-limited per user; serialised per user,
    /// and once started a command runs to its end holding the user's lock even if the caller
    /// goes away (a client that hangs up, a request that times out), so the next command of
    /// that user sees its result.
    ///
    /// Each command that ran, or was turned away here, is one event of the log
    /// ([`log_command`]), also when its caller went away.
    pub async fn command(
        &self,
        via: Platform,
        user: &str,
        text: &str,
    ) -> Result<Answer, CommandError> {
        let started = std::time::Instant::now();
        if text.len() > MAX_TEXT_LEN {
            log_command(via, user, None, Turned::TooLong, started);
            return Err(CommandError::TooLong {
                limit: MAX_TEXT_LEN,
            });
        }
        if let Err(retry_after_ms) = self.limiter.take(user, crate::clock::now_ms()) {
            log_command(via, user, verb_of(text), Turned::RateLimited, started);
            return Err(CommandError::SlowDown { retry_after_ms });
        }
        let guard = self.locks.lock(user).await;
        let service = self.clone();
        let (u, t) = (user.to_string(), text.to_string());
        let verb = verb_of(text);
        let task = tokio::spawn(async move {
            let settings = service.settings.clone();
            let user = u.clone();
            let answer = service
                .blocking(move |st| st.command(&u, &t, &settings))
                .await;
            drop(guard);
            match &answer {
                Ok(a) => log_command(via, &user, a.handled.verb, Turned::Answered(a), started),
                Err(e) => log_command(via, &user, verb, Turned::Failed(e), started),
            }
            answer
        });
        match task.await {
            Ok(answer) => answer.map_err(CommandError::Failed),
            Err(e) => {
                let e = anyhow::anyhow!("command task failed: {e}");
                log_command(via, user, verb, Turned::Failed(&e), started);
                Err(CommandError::Failed(e))
            }
        }
    }

    /// `user`'s queued notices ("picked for you"), oldest first. They stay queued until
    /// [`Service::ack_notices`]: a transport acknowledges each once it is delivered.
    pub async fn notices(&self, user: &str) -> anyhow::Result<Vec<Notice>> {
        let u = user.to_string();
        self.blocking(move |st| st.notices(&u)).await
    }

    /// Marks `user`'s notices `ids` delivered; returns how many were still queued.
    pub async fn ack_notices(&self, user: &str, ids: Vec<i64>) -> anyhow::Result<usize> {
        let u = user.to_string();
        self.blocking(move |st| st.ack_notices(&u, ids)).await
    }

    /// Runs `f` on the store off the async threads (the store's calls block on the
    /// database): the one way async code reaches the store.
    pub async fn blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Store) -> anyhow::Result<T> + Send + 'static,
    ) -> anyhow::Result<T> {
        let store = self.store.clone();
        tokio::task::spawn_blocking(move || f(&store))
            .await
            .map_err(|e| anyhow::anyhow!("store task failed: {e}"))?
    }

    /// Users with notices waiting (for a transport that pushes rather than polls per user).
    pub async fn users_with_notices(&self) -> anyhow::Result<Vec<String>> {
        self.blocking(|st| st.users_with_notices()).await
    }

    /// The zones served now (held in memory: no database call).
    pub fn zones(&self) -> Arc<Vec<Zone>> {
        self.store.zones()
    }

    /// The zones served now, with their versions (held in memory).
    pub fn served(&self) -> Arc<Served> {
        self.store.served()
    }

    /// The scoped API tokens this instance knows (held in memory; see [`crate::tokens`]).
    pub fn tokens(&self) -> &TokenBook {
        self.store.tokens()
    }

    /// The one token `token`, read from the database by its hash and added to what is known
    /// (see [`Store::look_up_token`]).
    pub async fn look_up_token(
        &self,
        token: String,
    ) -> anyhow::Result<Option<crate::tokens::Grant>> {
        self.blocking(move |st| st.look_up_token(&token)).await
    }

    /// Reads the scoped API tokens from the database again; returns what is worth logging.
    pub async fn refresh_tokens(&self) -> anyhow::Result<Vec<String>> {
        self.blocking(|st| st.refresh_tokens()).await
    }

    /// With an events outbox: the events waiting and the oldest one's age in ms (see
    /// [`Store::events_outbox`]).
    pub async fn events_outbox(&self) -> anyhow::Result<Option<(i64, i64)>> {
        self.blocking(|st| st.events_outbox()).await
    }

    /// With a host game: whether it is being left alone now (held in memory).
    pub fn host_paused(&self) -> Option<bool> {
        self.store
            .game()
            .host_hook
            .as_ref()
            .map(crate::host::HostHook::is_paused)
    }

    /// Whether a write can be made (`/healthz`; see [`Store::healthy`]).
    pub async fn healthy(&self) -> anyhow::Result<()> {
        self.blocking(|st| st.healthy()).await
    }

    /// The user whose run a link token names; `None` for an unknown token.
    pub async fn run_owner(&self, token: &str) -> anyhow::Result<Option<String>> {
        let t = token.to_string();
        self.blocking(move |st| st.run_owner(&t)).await
    }

    /// The player's view of the run a link token names; `None` for an unknown token.
    pub async fn run_view(&self, token: &str) -> anyhow::Result<Option<RunView>> {
        let t = token.to_string();
        self.blocking(move |st| st.run_view(&t)).await
    }

    /// `user`'s run (active, else the latest) with its link on this server's public URL;
    /// `None` when the player has none.
    pub async fn player_run(&self, user: &str) -> anyhow::Result<Option<PlayerRun>> {
        let (u, public_url) = (user.to_string(), self.settings.public_url.clone());
        self.blocking(move |st| st.player_run(&u, &public_url))
            .await
    }

    /// Every version of `zone_id`, oldest first.
    pub async fn zone_history(&self, zone_id: &str) -> anyhow::Result<Vec<db::VersionRow>> {
        let id = zone_id.to_string();
        self.blocking(move |st| st.zone_history(&id)).await
    }

    /// What players do in `zone_id`'s version `version` (the newest by default), from the
    /// runs started at or after `since` (see [`crate::store::insight`]).
    pub async fn insight(
        &self,
        zone_id: &str,
        version: Option<i64>,
        since: i64,
    ) -> anyhow::Result<Option<VersionInsight>> {
        let id = zone_id.to_string();
        self.blocking(move |st| st.insight(&id, version, since))
            .await
    }

    /// What publishing `text` over `zone_id`'s served version would do (see
    /// [`crate::store::review`]); nothing is written. One review of a zone at a time on this
    /// instance ([`Unreviewable::Busy`] for a second); a review whose caller goes away (the
    /// request ends or times out: this future is dropped) stops soon after
    /// ([`Unreviewable::Stopped`]).
    pub async fn review(
        &self,
        zone_id: &str,
        text: String,
    ) -> anyhow::Result<Result<VersionReview, Unreviewable>> {
        let Some(turn) = self.reviews.begin(zone_id) else {
            return Ok(Err(Unreviewable::Busy));
        };
        let stop = turn.stop.clone();
        // Dropped with this future: a caller that went away stops the review.
        let _stop_on_drop = StopOnDrop(stop.clone());
        let id = zone_id.to_string();
        let most_recent = self.reviews.most_recent;
        self.blocking(move |st| {
            // The zone is free again only when the replay has stopped.
            let _turn = turn;
            let stopped = || stop.load(Ordering::Relaxed);
            st.review(&id, &text, most_recent, &stopped)
        })
        .await
    }

    /// Whether a review of `zone_id` runs on this instance now.
    pub fn is_reviewing(&self, zone_id: &str) -> bool {
        let running = self
            .reviews
            .running
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        running.contains(zone_id)
    }

    /// How many ended runs a review replays (`--review-runs`): the most recent.
    #[must_use]
    pub fn with_review_runs(mut self, most_recent: usize) -> Service {
        self.reviews.most_recent = most_recent;
        self
    }

    /// Publishes a zone file (see [`Store::publish`]).
    pub async fn publish(
        &self,
        text: String,
        author: Author,
        force: bool,
    ) -> anyhow::Result<Result<Published, Refused>> {
        self.blocking(move |st| st.publish(&text, &author, force))
            .await
    }

    /// Withdraws a zone (see [`Store::withdraw`]).
    pub async fn withdraw(
        &self,
        zone_id: &str,
        force: bool,
        author: Author,
    ) -> anyhow::Result<Result<Withdrawn, Refused>> {
        let id = zone_id.to_string();
        self.blocking(move |st| st.withdraw(&id, force, &author))
            .await
    }
}

/// The transport a command came by, as the log names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Platform {
    /// `POST /api/command`.
    Http,
    /// A message in a Matrix room.
    Matrix,
}

impl Platform {
    /// As the log writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Platform::Http => "http",
            Platform::Matrix => "matrix",
        }
    }
}

/// What became of a command, as [`log_command`] tells it.
enum Turned<'a> {
    /// Answered by the store: carried out, refused or not understood ([`Answer::handled`]).
    Answered(&'a Answer),
    /// Longer than [`MAX_TEXT_LEN`]: not read.
    TooLong,
    /// Over the user's rate limit: not run.
    RateLimited,
    /// The server failed (the transport logs why).
    Failed(&'a anyhow::Error),
}

/// The verb of chat `text` (see [`zonegraph_core::command::Command::verb`]), for a command
/// the store did not answer; the text itself is never logged.
fn verb_of(text: &str) -> Option<&'static str> {
    zonegraph_core::command::parse(text).ok().map(|c| c.verb())
}

/// The one log event of a command: `platform`, `user`, `verb` (never the text typed), `zone`
/// (of the player's run after it), `outcome` (`ok`, `refused`, `not_understood`,
/// `host_failed`, `too_long`, `rate_limited`, `error`), `reason` (the kind of refusal or
/// failure) and `latency_us` (from its arrival at the service to its answer, the user's lock
/// and the commit included). A warning when the server failed, else info. The same verb and
/// outcome count the command in the metrics ([`crate::metrics::command`]).
fn log_command(
    via: Platform,
    user: &str,
    verb: Option<&'static str>,
    turned: Turned<'_>,
    started: std::time::Instant,
) {
    let latency_us = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
    let platform = via.as_str();
    let (zone, outcome, reason) = match &turned {
        Turned::Answered(a) => (
            a.run.as_ref().map(|r| r.zone_id.as_str()),
            a.handled.outcome.as_str(),
            a.handled.reason.as_deref(),
        ),
        Turned::TooLong => (None, "too_long", None),
        Turned::RateLimited => (None, "rate_limited", None),
        Turned::Failed(e) => {
            let why = if db::is_unavailable(e) {
                "database_unavailable"
            } else {
                "internal"
            };
            (None, "error", Some(why))
        }
    };
    crate::metrics::command(verb, outcome, started.elapsed());
    if let Turned::Failed(_) = turned {
        tracing::warn!(
            platform, user, verb, zone, outcome, reason, latency_us, "command"
        );
    } else {
        tracing::info!(
            platform, user, verb, zone, outcome, reason, latency_us, "command"
        );
    }
}

/// Each user's token bucket (the core's), for every transport alike.
#[derive(Clone, Debug, Default)]
pub struct Limiter {
    rate: Option<Rate>,
    buckets: Arc<Mutex<HashMap<String, TokenBucket>>>,
}

impl Limiter {
    /// `None`: no limit.
    pub fn new(rate: Option<Rate>) -> Limiter {
        Limiter {
            rate,
            buckets: Arc::default(),
        }
    }

    /// Takes one of `user`'s tokens at `now_ms`, or says how long until there is one.
    pub fn take(&self, user: &str, now_ms: i64) -> Result<(), u64> {
        let Some(rate) = self.rate else {
            return Ok(());
        };
        let mut buckets = self.buckets.lock().unwrap_or_else(|p| p.into_inner());
        buckets
            .entry(user.to_string())
            .or_insert_with(|| TokenBucket::new(rate, now_ms))
            .take(now_ms)
    }
}

impl Limiter {
    /// Forgets the full buckets (no different from new ones): what [`housekeep_forever`]
    /// does every [`HOUSEKEEPING_EVERY`], so that no command pays for it. How many are left.
    pub fn prune(&self, now_ms: i64) -> usize {
        let mut buckets = self.buckets.lock().unwrap_or_else(|p| p.into_inner());
        buckets.retain(|_, b| !b.is_full(now_ms));
        buckets.len()
    }
}

/// How often [`housekeep_forever`] runs.
pub const HOUSEKEEPING_EVERY: std::time::Duration = std::time::Duration::from_secs(60);

/// How many ended runs [`housekeep_forever`] moves to the history in one round.
pub const ARCHIVE_EACH_ROUND: i64 = 1000;

/// Keeps what grows bounded, off the commands' path: every [`HOUSEKEEPING_EVERY`] the rate
/// limiter forgets its full buckets and the metrics fold in the latencies recorded since
/// ([`crate::metrics::upkeep`]), and every hour (and at start) each player's ended runs
/// past their newest 20 move to the history (`Store::archive_runs`, a thousand at a time) and
/// the notices delivered more than 30 days ago are deleted (`Store::prune_notices`). On
/// PostgreSQL every instance does it, harmlessly: what one moved or deleted the others find
/// gone.
pub async fn housekeep_forever(state: Service) {
    let mut tick = tokio::time::interval(HOUSEKEEPING_EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut ticks: u64 = 0;
    loop {
        tick.tick().await;
        state.limiter.prune(crate::clock::now_ms());
        crate::metrics::upkeep();
        if ticks.is_multiple_of(60) {
            match state
                .blocking(|st| st.archive_runs(ARCHIVE_EACH_ROUND, crate::clock::now_ms()))
                .await
            {
                Ok(0) => {}
                Ok(n) => tracing::info!(runs = n, "moved old ended runs to the history"),
                Err(e) => tracing::warn!(
                    error = %format_args!("{e:#}"),
                    "cannot move old ended runs"
                ),
            }
            match state
                .blocking(|st| st.prune_notices(crate::clock::now_ms()))
                .await
            {
                Ok(0) => {}
                Ok(n) => tracing::info!(notices = n, "deleted notices delivered over 30 days ago"),
                Err(e) => tracing::warn!(
                    error = %format_args!("{e:#}"),
                    "cannot delete old notices"
                ),
            }
        }
        ticks += 1;
    }
}

/// How often the events sender sheds the outbox past its total cap and says how many events
/// were given up.
pub const EVENTS_TRIM_EVERY: std::time::Duration = std::time::Duration::from_secs(10);

/// Sends the events outbox to the host game (`--events-url`) for as long as the server runs:
/// a round at once after a round that delivered, else after
/// [`crate::events_out::round_wait`] (every 200 ms, slowing down to every 30 s while the
/// receiver fails). What it cannot reach it says once, and once more when it reaches it
/// again. Every [`EVENTS_TRIM_EVERY`] it sheds the oldest events past the outbox's total cap
/// and says how many events were given up since, by cause (`zonegraph events dead` lists
/// them); every hour it deletes the delivered events and the dead letters kept long enough.
/// On PostgreSQL every instance sends, each event claimed by one of them.
pub async fn send_events_forever(state: Service, out: crate::events_out::EventsOut) {
    use crate::events_out::{Went, round_wait};
    let mut failing = Failing::default();
    // The outbox itself (the database), apart from the receiver: each logged once per outage.
    let mut outbox = Failing::default();
    let mut wait = std::time::Duration::ZERO;
    let mut pruned_at = 0;
    // The end of the span whose given-up events were last counted.
    let mut counted_to = crate::clock::now_ms();
    let trim_every = i64::try_from(EVENTS_TRIM_EVERY.as_millis()).unwrap_or(i64::MAX);
    loop {
        let o = out.clone();
        let round = state.blocking(move |st| o.deliver_due(st)).await;
        let sending = format!("sending events to {}", out.url());
        let (went, said): (Went, [Option<String>; 2]) = match round {
            Ok(r) => {
                let back = outbox.ok("reading the events outbox");
                let receiver = if r.failed() > 0 && r.delivered == 0 {
                    let why = r.why.as_deref().unwrap_or("failed");
                    failing.failed(&format!("{sending}: {why}"))
                } else if r.delivered > 0 {
                    failing.ok(&sending)
                } else {
                    None
                };
                (r.went(), [back, receiver])
            }
            Err(e) => (
                Went::Failing,
                [
                    outbox.failed(&format!("cannot read the events outbox: {e:#}")),
                    None,
                ],
            ),
        };
        for said in said.into_iter().flatten() {
            tracing::warn!("{said}");
        }
        let now = crate::clock::now_ms();
        if now - counted_to >= trim_every {
            if let Err(e) = state.blocking(move |st| st.shed_events_out(now)).await {
                tracing::warn!(error = %format_args!("{e:#}"), "cannot shed the events outbox");
            }
            // Counted up to a second ago: a give-up still committing is counted next time.
            let (after, until) = (counted_to, now - 1000);
            match state
                .blocking(move |st| st.events_given_up(after, until))
                .await
            {
                Ok(given_up) => {
                    counted_to = until;
                    if let Some(line) = given_up_line(&given_up) {
                        tracing::warn!("{line}");
                    }
                }
                Err(e) => tracing::warn!(
                    error = %format_args!("{e:#}"),
                    "cannot count the events given up"
                ),
            }
        }
        if now - pruned_at > 3_600_000 {
            pruned_at = now;
            if let Err(e) = state.blocking(move |st| st.prune_events_out(now)).await {
                tracing::warn!(
                    error = %format_args!("{e:#}"),
                    "cannot delete old delivered events and dead letters"
                );
            }
        }
        wait = round_wait(wait, went);
        if !wait.is_zero() {
            tokio::time::sleep(wait).await;
        }
    }
}

/// What the events sender says of the events given up since it last counted: how many, by
/// cause; `None` for none.
fn given_up_line(given_up: &[(crate::db::DeadCause, i64)]) -> Option<String> {
    let n: i64 = given_up.iter().map(|(_, n)| n).sum();
    if n == 0 {
        return None;
    }
    let causes: Vec<String> = given_up
        .iter()
        .map(|(cause, n)| format!("{n} {cause}"))
        .collect();
    Some(format!(
        "gave up {n} event{} for the host game ({}); `zonegraph events dead` lists them",
        if n == 1 { "" } else { "s" },
        causes.join(", ")
    ))
}

/// One async mutex per user with a command in flight; entries go away when unused.
#[derive(Clone, Debug, Default)]
pub struct UserLocks {
    map: Arc<Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>>,
}

/// A user's lock, held until dropped; it can move into the task that does the work.
#[derive(Debug)]
pub struct UserGuard {
    // Dropped first: releases the lock, then `_entry` may remove the map's entry.
    _held: tokio::sync::OwnedMutexGuard<()>,
    _entry: Entry,
}

/// Removes the user's map entry when nobody else holds or waits for it, also when a wait
/// is abandoned.
#[derive(Debug)]
struct Entry {
    locks: UserLocks,
    user: String,
}

impl Drop for Entry {
    fn drop(&mut self) {
        let mut map = self.locks.map.lock().unwrap_or_else(|p| p.into_inner());
        // Only the map's own reference left: nobody holds it or waits for it.
        if map
            .get(&self.user)
            .is_some_and(|l| Arc::strong_count(l) == 1)
        {
            map.remove(&self.user);
        }
    }
}

impl UserLocks {
    /// Waits for `user`'s lock.
    pub async fn lock(&self, user: &str) -> UserGuard {
        let lock = {
            let mut map = self.map.lock().unwrap_or_else(|p| p.into_inner());
            map.entry(user.to_string()).or_default().clone()
        };
        let entry = Entry {
            locks: self.clone(),
            user: user.to_string(),
        };
        UserGuard {
            _held: lock.lock_owned().await,
            _entry: entry,
        }
    }

    /// Runs `f` while holding `user`'s lock.
    pub async fn with<T>(&self, user: &str, f: impl std::future::Future<Output = T>) -> T {
        let _guard = self.lock(user).await;
        f.await
    }

    /// Whether someone holds `user`'s lock now.
    pub fn is_held(&self, user: &str) -> bool {
        let map = self.map.lock().unwrap_or_else(|p| p.into_inner());
        map.get(user).is_some_and(|l| l.try_lock().is_err())
    }
}

/// Something that is tried again and again (the database during an outage): its failure is
/// told once, and once that it works again, not at every attempt.
#[derive(Debug, Default)]
pub struct Failing {
    since: Option<tokio::time::Instant>,
}

impl Failing {
    /// An attempt failed (`what` says how): the line to log when it is the first of a run of
    /// failures.
    pub fn failed(&mut self, what: &str) -> Option<String> {
        if self.since.is_some() {
            return None;
        }
        self.since = Some(tokio::time::Instant::now());
        Some(format!("{what}; trying again quietly"))
    }

    /// An attempt worked: the line to log (`what`, and after how long) when it ends a run of
    /// failures.
    pub fn ok(&mut self, what: &str) -> Option<String> {
        let since = self.since.take()?;
        Some(format!(
            "{what} after {:.0} s",
            since.elapsed().as_secs_f64()
        ))
    }
}

/// The sweeper: applies the fork timeout every `every`, one user at a time under their
/// lock, queueing the "picked for you" notices.
pub async fn sweep_forever(state: Service, every: std::time::Duration) {
    let mut tick = tokio::time::interval(every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    // A database out of reach is told once, and once when it is back, not at every tick.
    let mut db = Failing::default();
    let mut stuck: HashMap<String, i64> = HashMap::new();
    loop {
        tick.tick().await;
        let timeout = state.settings.fork_timeout_ms;
        let due = state
            .blocking(move |st| st.due_users(crate::clock::now_ms(), timeout))
            .await;
        let users = match due {
            Ok(users) => {
                if let Some(line) = db.ok("the database is back") {
                    tracing::info!("sweeper: {line}");
                }
                users
            }
            Err(e) => {
                if let Some(line) = db.failed(&format!("{e:#}")) {
                    tracing::warn!("sweeper: {line}");
                }
                continue;
            }
        };
        // A run due but not moved (no way open: the timeout picks nothing) is not read again
        // until its row changes.
        stuck.retain(|user, version| users.contains(&(user.clone(), *version)));
        for (user, version) in users {
            if stuck.get(&user) == Some(&version) {
                continue;
            }
            let settings = state.settings.clone();
            let u = user.clone();
            let res = state
                .with_lock(
                    &user,
                    state.blocking(move |st| st.sweep_user(&u, &settings)),
                )
                .await;
            match res {
                Ok(true) => crate::metrics::fork_timeout(),
                Ok(false) => {
                    stuck.insert(user, version);
                }
                Err(e) => tracing::warn!(
                    %user,
                    error = %format_args!("{e:#}"),
                    "sweeper: the fork timeout was not applied"
                ),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limiter_forgets_full_buckets_only_when_pruned() {
        let limiter = Limiter::new(Some(Rate::new(1, 2)));
        for i in 0..5000 {
            assert!(limiter.take(&format!("@u{i}:test"), 0).is_ok());
        }
        // Taking never scans: every bucket stays until the housekeeper prunes.
        assert!(limiter.take("@u0:test", 0).is_ok());
        assert_eq!(limiter.take("@u0:test", 0), Err(1000));
        // A second on, the others' buckets are full again and go; the one spent twice is
        // not full yet and stays. Another second on, it goes too.
        assert_eq!(limiter.prune(1000), 1);
        assert_eq!(limiter.prune(2000), 0);
    }
}
