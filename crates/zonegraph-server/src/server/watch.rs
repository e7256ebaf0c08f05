//! The thread that brings this instance up to date with the others.

use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context as _, Result};

use crate::store::Store;
use crate::streams::Streams;

/// without a wake-up: a missed notification, a pooler that passes none, SQLite.
pub const POLL_EVERY: Duration = Duration::from_millis(500);

/// The thread that brings this instance up to date with the others: at each wake-up from
/// the database (a notification at another instance's commit) and every [`POLL_EVERY`], it
/// serves the zones as the database has them and tells the run pages' feeds whose run or
/// sheet changed. Stopped when dropped.
#[derive(Debug)]
pub(super) struct Watcher {
    stop: Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Watcher {
    pub(super) fn start(store: Arc<Store>, streams: Arc<Streams>, listen: bool) -> Result<Watcher> {
        use std::sync::atomic::{AtomicBool, Ordering};
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        let thread = std::thread::Builder::new()
            .name("zonegraph-watch".into())
            .spawn(move || {
                let wakeups = store.wakeups(listen);
                // Said once per failing streak, not every half second.
                let mut failing = false;
                while !stopped.load(Ordering::SeqCst) {
                    let caught = store
                        .refresh_zones()
                        .and_then(|_| streams.catch_up().map(|_| ()))
                        .and_then(|()| {
                            // A revoked token is refused within REFRESH_EVERY everywhere.
                            if store.tokens().due(crate::tokens::REFRESH_EVERY) {
                                for w in store.refresh_tokens()? {
                                    tracing::warn!("{w}");
                                }
                            }
                            Ok(())
                        });
                    match caught {
                        Ok(()) if failing => {
                            tracing::info!("following other instances again");
                            failing = false;
                        }
                        Ok(()) => {}
                        Err(e) if !failing => {
                            tracing::warn!(
                                error = %format_args!("{e:#}"),
                                "cannot follow other instances' changes"
                            );
                            failing = true;
                        }
                        Err(_) => {}
                    }
                    wakeups.wait(POLL_EVERY);
                }
            })
            .context("cannot start the watcher")?;
        Ok(Watcher {
            stop,
            thread: Some(thread),
        })
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
