//! The run pages' live views (`GET /api/runs/{token}/events`), bounded and shared.
//!
//! - **Bounded.** At most [`StreamLimits::per_run`] streams per run link and
//!   [`StreamLimits::total`] per instance: past either, the request is refused (503, with
//!   `Retry-After`) before anything is read. A stream lives at most
//!   [`StreamLimits::lifetime`]; the page's browser then reconnects, and its first event is
//!   the whole view again.
//! - **Shared.** All streams of one run follow one [`Feed`]: one task that hears the store's
//!   changes and builds the run's view once per change of its player, whatever the number of
//!   streams; each stream sends what the feed holds when it changes. The feed ends when its
//!   last stream does.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{broadcast, watch};

use crate::store::Store;

/// How many event streams an instance keeps open.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StreamLimits {
    /// Per run link (a player's tabs and devices).
    pub per_run: usize,
    /// Per instance.
    pub total: usize,
    /// The longest a stream stays open.
    pub lifetime: Duration,
}

impl Default for StreamLimits {
    fn default() -> StreamLimits {
        StreamLimits {
            per_run: 8,
            total: 10_000,
            lifetime: Duration::from_secs(30 * 60),
        }
    }
}

impl StreamLimits {
    /// These limits, the total bounded by `open_files` (the process's open-file limit): a
    /// stream is a socket, and commands, the database and the viewer's files need some too.
    #[must_use]
    pub fn within(self, open_files: u64) -> StreamLimits {
        let room = usize::try_from(open_files.saturating_sub(256) / 2).unwrap_or(usize::MAX);
        StreamLimits {
            total: self.total.min(room.max(16)),
            ..self
        }
    }
}

/// Why a stream was not opened.
#[derive(Debug, PartialEq, Eq)]
pub enum Full {
    /// This run link has as many streams as it may.
    Run(usize),
    /// This instance has as many streams as it may.
    Instance(usize),
}

/// One run's shared view: the latest JSON (empty until the first is built).
struct Feed {
    view: watch::Receiver<Arc<str>>,
    streams: usize,
    task: tokio::task::AbortHandle,
    owner: String,
    /// The change stamp ([`crate::db::Tx::run_stamps`]) of the rows the view was last
    /// built from (`None` before the first build).
    built: BuiltStamp,
}

/// A run's change stamp: its row's version and its player's sheet's.
type Stamp = (i64, i64);

/// Where a feed keeps the stamp of its last build.
type BuiltStamp = Arc<Mutex<Option<Stamp>>>;

/// Every open stream of this instance, by run.
#[derive(Debug)]
pub struct Streams {
    limits: StreamLimits,
    open: AtomicUsize,
    feeds: Mutex<HashMap<String, Feed>>,
    store: Arc<Store>,
    built: Arc<AtomicUsize>,
}

impl std::fmt::Debug for Feed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Feed")
            .field("streams", &self.streams)
            .finish()
    }
}

/// A stream's place, released when dropped.
#[derive(Debug)]
pub struct Slot {
    streams: Arc<Streams>,
    token: String,
    /// The run's view, as its feed last built it.
    pub view: watch::Receiver<Arc<str>>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.streams.open.fetch_sub(1, Ordering::SeqCst);
        let mut feeds = self.streams.feeds.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(feed) = feeds.get_mut(&self.token) {
            feed.streams -= 1;
            if feed.streams == 0 {
                feed.task.abort();
                feeds.remove(&self.token);
            }
        }
    }
}

impl Streams {
    pub fn new(store: Arc<Store>, limits: StreamLimits) -> Arc<Streams> {
        Arc::new(Streams {
            limits,
            open: AtomicUsize::new(0),
            feeds: Mutex::default(),
            store,
            built: Arc::default(),
        })
    }

    pub fn limits(&self) -> StreamLimits {
        self.limits
    }

    /// Streams open now.
    pub fn open(&self) -> usize {
        self.open.load(Ordering::SeqCst)
    }

    /// Runs followed now: one feed each, however many streams.
    pub fn feeds(&self) -> usize {
        self.feeds.lock().unwrap_or_else(|p| p.into_inner()).len()
    }

    /// Views built since the start: one per change of a followed run's player, not one per
    /// stream.
    pub fn views_built(&self) -> usize {
        self.built.load(Ordering::SeqCst)
    }

    /// A place for one more stream of run `token` (owned by `owner`), its feed started when
    /// it is the run's first; or why not. Call on a runtime.
    pub fn open_stream(self: &Arc<Streams>, token: &str, owner: &str) -> Result<Slot, Full> {
        let mut feeds = self.feeds.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(feed) = feeds.get(token)
            && feed.streams >= self.limits.per_run
        {
            return Err(Full::Run(self.limits.per_run));
        }
        if self
            .open
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
                (n < self.limits.total).then_some(n + 1)
            })
            .is_err()
        {
            return Err(Full::Instance(self.limits.total));
        }
        let feed = feeds.entry(token.to_string()).or_insert_with(|| {
            // Subscribed before the first build: a change committed in between is heard.
            let changes = self.store.changes();
            let (tx, rx) = watch::channel(Arc::<str>::from(""));
            let built = Arc::new(Mutex::new(None));
            let task = tokio::spawn(follow(
                Follow {
                    store: self.store.clone(),
                    built_count: self.built.clone(),
                    built: built.clone(),
                    token: token.to_string(),
                    owner: owner.to_string(),
                },
                changes,
                tx,
            ));
            Feed {
                view: rx,
                streams: 0,
                task: task.abort_handle(),
                owner: owner.to_string(),
                built,
            }
        });
        feed.streams += 1;
        Ok(Slot {
            streams: self.clone(),
            token: token.to_string(),
            view: feed.view.clone(),
        })
    }
}

impl Streams {
    /// Finds the changes this instance did not make: reads the change stamps of every run
    /// followed here (one query) and wakes the feed of each whose rows moved since its view
    /// was built. A change made on this instance has woken its feed already, which built from
    /// the new rows: that one is not built again. Returns how many feeds it woke.
    pub fn catch_up(&self) -> anyhow::Result<usize> {
        let followed: Vec<(String, String, BuiltStamp)> = self
            .feeds
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .map(|(token, f)| (token.clone(), f.owner.clone(), f.built.clone()))
            .collect();
        if followed.is_empty() {
            return Ok(0);
        }
        let tokens: Vec<String> = followed.iter().map(|(t, ..)| t.clone()).collect();
        let stamps: HashMap<String, Stamp> = self
            .store
            .run_stamps(&tokens)?
            .into_iter()
            .map(|(t, run, sheet)| (t, (run, sheet)))
            .collect();
        let mut woken = std::collections::BTreeSet::new();
        for (token, owner, built) in followed {
            let now = stamps.get(&token).copied();
            let was = *built.lock().unwrap_or_else(|p| p.into_inner());
            // Built, and moved since (or gone: the feed ends at its next build).
            if was.is_some() && now != was && woken.insert(owner.clone()) {
                self.store.tell_changed(&owner);
            }
        }
        Ok(woken.len())
    }
}

/// What a feed follows.
struct Follow {
    store: Arc<Store>,
    built_count: Arc<AtomicUsize>,
    built: BuiltStamp,
    token: String,
    owner: String,
}

/// A run's feed: builds its view now, then again each time its player changes (or when
/// changes were missed), and publishes it when it differs. Ends when the run is gone or no
/// stream follows it.
async fn follow(
    f: Follow,
    mut changes: broadcast::Receiver<Arc<str>>,
    view: watch::Sender<Arc<str>>,
) {
    let Follow {
        store,
        built_count,
        built: built_stamp,
        token,
        owner,
    } = f;
    loop {
        let (s, t) = (store.clone(), token.clone());
        let built = tokio::task::spawn_blocking(move || s.run_view_stamped(&t)).await;
        built_count.fetch_add(1, Ordering::SeqCst);
        if let Ok(Ok(Some((_, stamp)))) = &built {
            *built_stamp.lock().unwrap_or_else(|p| p.into_inner()) = Some(*stamp);
        }
        match built {
            Ok(Ok(Some((v, _)))) => match serde_json::to_string(&v) {
                Ok(json) => {
                    view.send_if_modified(|last| {
                        if **last == *json {
                            return false;
                        }
                        *last = Arc::from(json);
                        true
                    });
                }
                Err(e) => tracing::error!(error = %e, "run events: cannot write the run view"),
            },
            // The run is gone: the streams end (the sender drops).
            Ok(Ok(None)) => return,
            Ok(Err(e)) => tracing::warn!(error = %format_args!("{e:#}"), "run events"),
            Err(e) => tracing::error!(error = %e, "run events"),
        }
        loop {
            tokio::select! {
                heard = changes.recv() => match heard {
                    Ok(user) if *user != *owner => continue,
                    // This player changed, or some changes were missed: build it again.
                    Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => break,
                    Err(broadcast::error::RecvError::Closed) => return,
                },
                () = view.closed() => return,
            }
        }
    }
}
