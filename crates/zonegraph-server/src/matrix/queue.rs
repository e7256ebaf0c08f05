//! The hand-off from the sync loop to the work: one queue per player, worked by a task of its
//! own, so a player's commands run one at a time and in the order they were sent, while
//! different players run in parallel and a slow send in one room delays nobody else. A
//! player's queue holds at most [`MAX_WAITING`] commands; past that they are dropped (a
//! spammer's burst). A queue's task ends when its queue is empty.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use tokio::sync::mpsc;

/// The most commands waiting for one player.
pub const MAX_WAITING: usize = 8;

/// Why a job was not queued.
#[derive(Debug, PartialEq, Eq)]
pub enum Refused {
    /// [`MAX_WAITING`] commands of this player are already waiting.
    Full,
}

type Work<J> = Arc<dyn Fn(J) -> Pin<Box<dyn Future<Output = ()> + Send>> + Send + Sync>;

/// Queues keyed by player, each worked in order by one task running the work function.
pub struct Queues<J> {
    inner: Arc<Mutex<HashMap<String, mpsc::Sender<J>>>>,
    work: Work<J>,
}

impl<J> Clone for Queues<J> {
    fn clone(&self) -> Self {
        Queues {
            inner: self.inner.clone(),
            work: self.work.clone(),
        }
    }
}

impl<J> std::fmt::Debug for Queues<J> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let busy = self.inner.lock().map_or(0, |m| m.len());
        write!(f, "Queues({busy} busy)")
    }
}

impl<J: Send + 'static> Queues<J> {
    /// Queues whose jobs are done by `work`.
    pub fn new<W, F>(work: W) -> Queues<J>
    where
        W: Fn(J) -> F + Send + Sync + 'static,
        F: Future<Output = ()> + Send + 'static,
    {
        Queues {
            inner: Arc::default(),
            work: Arc::new(move |j| Box::pin(work(j))),
        }
    }

    /// Queues `job` for `key`, starting the key's task when it has none.
    pub fn push(&self, key: &str, job: J) -> Result<(), Refused> {
        let mut map = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(tx) = map.get(key) {
            // A task ends only with the map locked, after removing its sender: never Closed.
            return tx.try_send(job).map_err(|_| Refused::Full);
        }
        let (tx, mut rx) = mpsc::channel(MAX_WAITING);
        // A new channel has room for one.
        let _ = tx.try_send(job);
        map.insert(key.to_string(), tx);
        let (inner, key, work) = (self.inner.clone(), key.to_string(), self.work.clone());
        tokio::spawn(async move {
            loop {
                while let Ok(job) = rx.try_recv() {
                    work(job).await;
                }
                // Empty: end, unless a job came in meanwhile (pushes hold the lock too).
                let mut map = inner.lock().unwrap_or_else(|p| p.into_inner());
                if rx.is_empty() {
                    map.remove(&key);
                    return;
                }
            }
        });
        Ok(())
    }

    /// How many players have a task running (tests, logs).
    pub fn busy(&self) -> usize {
        self.inner.lock().map_or(0, |m| m.len())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]
    use std::time::Duration;

    use super::*;

    #[tokio::test]
    async fn one_at_a_time_per_key_in_order_and_keys_in_parallel() {
        let log = Arc::new(Mutex::new(Vec::new()));
        let (gate_tx, gate_rx) = tokio::sync::watch::channel(false);
        let work = {
            let log = log.clone();
            move |(key, n): (String, u32)| {
                let (log, mut gate) = (log.clone(), gate_rx.clone());
                async move {
                    // "slow" is stuck until the gate opens.
                    if key == "slow" {
                        let _ = gate.wait_for(|open| *open).await;
                    }
                    log.lock().unwrap().push(format!("{key}{n}"));
                }
            }
        };
        let q = Queues::new(work);
        for n in 0..3 {
            q.push("slow", ("slow".into(), n)).unwrap();
        }
        for n in 0..3 {
            q.push("fast", ("fast".into(), n)).unwrap();
        }
        // "fast" finishes while "slow" is stuck.
        tokio::time::timeout(Duration::from_secs(5), async {
            while log.lock().unwrap().len() < 3 {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        })
        .await
        .unwrap();
        assert_eq!(*log.lock().unwrap(), ["fast0", "fast1", "fast2"]);
        gate_tx.send(true).unwrap();
        tokio::time::timeout(Duration::from_secs(5), async {
            while q.busy() > 0 {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        })
        .await
        .unwrap();
        assert_eq!(
            log.lock().unwrap()[3..],
            ["slow0".to_string(), "slow1".into(), "slow2".into()]
        );
    }

    #[tokio::test]
    async fn a_full_queue_refuses() {
        let (_gate_tx, gate_rx) = tokio::sync::watch::channel(false);
        let work = move |_: u32| {
            let mut gate = gate_rx.clone();
            async move {
                let _ = gate.wait_for(|open| *open).await;
            }
        };
        let q = Queues::new(work);
        // The first is taken by the task (or waits); then MAX_WAITING fit; one more does not.
        let mut refused = 0;
        for n in 0..(MAX_WAITING as u32 + 5) {
            if q.push("spam", n) == Err(Refused::Full) {
                refused += 1;
            }
            tokio::task::yield_now().await;
        }
        assert!((4..=5).contains(&refused), "{refused} refused");
    }
}
