//! The zones a run is played on: the served ones, with the run's own zone at the version it
//! started on, its graph kept while runs need it.

use std::collections::BTreeMap;
use std::sync::Arc;

use anyhow::Result;
use zonegraph_core::zone::{self, Zone};

use crate::db::{self, StoredRun};

use super::{Catalog, ForRun};

impl Catalog {
    /// The zones `run` is played on, with the version of each: the zones served, with the
    /// run's own zone at the version it started on when that is not the one served (and the
    /// run is not over).
    pub fn zones_for(&self, tx: &mut db::Tx<'_>, run: Option<&StoredRun>) -> Result<ForRun> {
        let served = self.served();
        let seqs = || -> BTreeMap<String, i64> {
            served
                .versions
                .iter()
                .map(|(id, v)| (id.clone(), v.seq))
                .collect()
        };
        let Some((zone_id, seq)) = run
            .filter(|r| r.run.completed_at.is_none())
            .and_then(|r| Some((r.run.zone_id.clone(), r.zone_file_seq?)))
            .filter(|(id, seq)| served.seq_of(id) != Some(*seq))
        else {
            return Ok(ForRun {
                zones: served.zones.clone(),
                seqs: Arc::new(seqs()),
            });
        };
        let Some(graph) = self.kept_graph_with(seq, || tx.version_file(seq))? else {
            // Pruned (it cannot be while the run is active): the zone served, if any.
            return Ok(ForRun {
                zones: served.zones.clone(),
                seqs: Arc::new(seqs()),
            });
        };
        let mut zones: Vec<Zone> = served.zones.as_ref().clone();
        match zones.iter_mut().find(|z| z.id == zone_id) {
            Some(z) => *z = (*graph).clone(),
            None => zones.push((*graph).clone()),
        }
        let mut seqs = seqs();
        seqs.insert(zone_id, seq);
        Ok(ForRun {
            zones: Arc::new(zones),
            seqs: Arc::new(seqs),
        })
    }

    /// The graph a run is (or was) played on, for its view: its version while the database
    /// keeps that version's file, else the zone served (`None`: neither).
    pub fn graph_of(&self, db: &db::Database, run: &StoredRun) -> Result<Option<Arc<Zone>>> {
        let served = self.served();
        if let Some(seq) = run.zone_file_seq
            && served.seq_of(&run.run.zone_id) != Some(seq)
            && let Some(graph) = self.kept_graph(db, seq)?
        {
            return Ok(Some(graph));
        }
        Ok(served
            .zones
            .iter()
            .find(|z| z.id == run.run.zone_id)
            .map(|z| Arc::new(z.clone())))
    }

    /// The graph of version `seq` (kept in memory once read); `None` when its file is gone.
    pub(super) fn kept_graph(&self, db: &db::Database, seq: i64) -> Result<Option<Arc<Zone>>> {
        self.kept_graph_with(seq, || db.read(|tx| tx.version_file(seq)))
    }

    /// [`Catalog::kept_graph`], the version's file read by `file` when it is not in memory
    /// (in the caller's own transaction: a command must not wait for a second connection).
    pub(super) fn kept_graph_with(
        &self,
        seq: i64,
        file: impl FnOnce() -> Result<Option<String>>,
    ) -> Result<Option<Arc<Zone>>> {
        if let Some(z) = self
            .kept
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&seq)
        {
            return Ok(Some(z.clone()));
        }
        let Some(text) = file()? else {
            return Ok(None);
        };
        let (zone, _) =
            zone::load(&text).map_err(|e| anyhow::anyhow!("zone version {seq}: {e}"))?;
        let zone = Arc::new(zone);
        let mut kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
        // Runs end; a few old graphs at a time are enough to hold.
        if kept.len() >= 64 {
            kept.clear();
        }
        kept.insert(seq, zone.clone());
        Ok(Some(zone))
    }
}
