//! The zones served, one world across instances: every zone file imported or published is a
//! version in the database (`db::VersionRow`), and what every instance serves is the newest
//! version of each zone. The one owner of which zone file becomes a version:
//!
//! - **A folder never silently undoes the database.** At start and on SIGHUP a file of
//!   `--zones` is imported when its zone is new, or when its text is one the database never
//!   held and the file was changed after the database's newest version was made. A file that
//!   is an older version, or older than the newest, is left alone and named ([`Behind`]). A
//!   zone missing from the folder stays served: withdrawing is an explicit act
//!   ([`Catalog::withdraw`]), refused while runs are in the zone unless forced.
//! - **A run keeps the version it started on**, across restarts and instances: its row
//!   names the version ([`db::StoredRun::zone_file_seq`]); [`Catalog::zones_for`] gives it
//!   that graph. Versions stay whole while a run or the zone needs them.
//! - **Every change is checked whole**: the zones that would be served, together, as
//!   `zonegraph check` does; any error refuses it and changes nothing.
//!
//! Another instance's change is found by [`Catalog::refresh`] (the server's watcher calls
//! it at each wake-up from the database and at least once a second).

mod folder;
mod publish;
mod runs;
#[cfg(test)]
mod tests;

pub use publish::{is_file_stem, write_atomically};

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};

use anyhow::{Context as _, Result, bail};
use serde::Serialize;
use sha2::{Digest as _, Sha256};
use zonegraph_core::validate::{self, CheckedZone};
use zonegraph_core::zone::{self, Zone};

use crate::db::{self, VersionRow};

use folder::read_folder;

/// The zones served now, at one point of the zone sequence.
pub struct Served {
    /// `zone_version.version` they were read at.
    pub sequence: i64,
    /// The graphs, in the order the zones first appeared.
    pub zones: Arc<Vec<Zone>>,
    /// Each served zone's version record, by zone id.
    pub versions: BTreeMap<String, VersionRow>,
    /// Each served zone's file, by zone id (what a change is checked with).
    files: BTreeMap<String, Arc<str>>,
}

impl std::fmt::Debug for Served {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Served")
            .field("sequence", &self.sequence)
            .field(
                "versions",
                &self
                    .versions
                    .values()
                    .map(|v| (&v.zone_id, v.seq))
                    .collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

impl Served {
    /// The version `zone_id` is served at.
    pub fn seq_of(&self, zone_id: &str) -> Option<i64> {
        self.versions.get(zone_id).map(|v| v.seq)
    }
}

/// The zones a run is played on, and the version of each.
#[derive(Debug, Clone)]
pub struct ForRun {
    pub zones: Arc<Vec<Zone>>,
    pub seqs: Arc<BTreeMap<String, i64>>,
}

/// A folder file the database is ahead of: not imported.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Behind {
    pub file: String,
    pub zone_id: String,
    /// The database's newest version of the zone.
    pub newest: VersionRow,
    /// The file is a version the database held before (not merely an older edit).
    pub known: bool,
}

impl Behind {
    /// The start-up's line about it.
    pub fn words(&self) -> String {
        let v = &self.newest;
        let what = if v.withdrawn {
            format!("zone {} was withdrawn", self.zone_id)
        } else {
            format!(
                "the database serves version {} of zone {}",
                v.seq, self.zone_id
            )
        };
        let file = if self.known {
            "the file is an older version"
        } else {
            "the file is older than that and was not changed since"
        };
        format!(
            "{}: {what} ({} by {} on {}, {}); {file}, so it was not imported. Publish it \
             (POST /api/zones) to serve it again, or update the file.",
            self.file,
            v.source,
            v.made_by,
            v.instance,
            crate::clock::utc(v.created_at_ms)
        )
    }
}

/// What a folder sync did.
#[derive(Debug, Default)]
pub struct Synced {
    /// The zones imported (new or newer files), as `(file, zone_id, seq)`.
    pub imported: Vec<(String, String, i64)>,
    /// The files the database is ahead of.
    pub behind: Vec<Behind>,
    /// The warnings of the zones checked.
    pub warnings: Vec<String>,
    /// The folder had no zone file (it may not exist): the database's zones are served.
    pub folder_empty: bool,
}

impl Synced {
    /// What a folder sync imported, a line each, to say at start or on SIGHUP.
    pub fn imported_words(&self) -> Vec<String> {
        self.imported
            .iter()
            .map(|(file, zone_id, seq)| {
                format!("imported {file} as version {seq} of zone {zone_id}")
            })
            .collect()
    }

    /// What a folder sync is worth a warning at start or on SIGHUP: the checks' warnings, each
    /// file the database is ahead of, and a folder with no zone file.
    pub fn warning_words(&self, dir: &Path) -> Vec<String> {
        let mut out = self.warnings.clone();
        for b in &self.behind {
            out.push(b.words());
        }
        if self.folder_empty {
            out.push(format!(
                "{} holds no zone files: serving the database's zones",
                dir.display()
            ));
        }
        out
    }
}

/// What publishing a zone file did.
#[derive(Debug, Serialize)]
pub struct Published {
    pub zone_id: String,
    /// The file written under `--zones` (empty when it could not be written; see `warning`).
    pub file: String,
    /// Whether it replaced a version served before (runs on the old one keep it).
    pub replaced: bool,
    /// The version it is now (the one served before, when the file is unchanged).
    pub seq: i64,
    /// Whether the file was already the version served (nothing new was made).
    pub unchanged: bool,
    /// Players in the zone whose room, or a way on from it, the new version removes (a
    /// forced publish); they play on, on the version they started on.
    pub players_affected: usize,
    /// How many zones are served now.
    pub zones: usize,
    /// Every zone's findings (warnings only), as `zonegraph check --json` reports them.
    pub findings: Vec<CheckedZone>,
    /// What went wrong after the version was made (the folder file not written).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
}

/// Why a zone file was not published (or a zone not withdrawn); nothing was changed.
#[derive(Debug)]
pub enum Refused {
    /// The zones that would be served have errors: every zone's findings, as `zonegraph check
    /// --json` reports them.
    Findings(Vec<CheckedZone>),
    /// The zone id cannot name a file.
    BadId(String),
    /// A new zone's file name (`<id>.json`, compared without case, as a case-insensitive file
    /// system would) is the file of another zone, or of a file that is not a zone.
    FileTaken { zone_id: String, file: String },
    /// No zone of that id is served.
    Unknown(String),
    /// Players have runs in the zone (and the withdrawal was not forced).
    Active { zone_id: String, players: usize },
    /// The new version removes the room, or a way on from it, of players in the zone (and the
    /// publish was not forced): for them it is a withdrawal in effect.
    Strands { zone_id: String, players: usize },
}

/// What withdrawing a zone did.
#[derive(Debug, Serialize)]
pub struct Withdrawn {
    pub zone_id: String,
    /// The withdrawal's version.
    pub seq: i64,
    /// The players with a run there, each told (their runs go on, on the version they
    /// started on).
    pub players_told: usize,
    pub zones: usize,
}

/// Who makes a change, for its version record.
#[derive(Clone, Debug)]
pub struct Author {
    /// `folder zones/x.json`, `POST /api/zones`, …
    pub source: String,
    /// A user's name, or the instance's.
    pub made_by: String,
}

/// The zones served by this instance and the graphs runs still walk.
pub struct Catalog {
    served: RwLock<Arc<Served>>,
    /// Graphs of versions no longer served that active runs walk, by version.
    kept: Mutex<HashMap<i64, Arc<Zone>>>,
    /// `--zones`: the folder synced at start and on SIGHUP, written by a publish.
    dir: PathBuf,
    /// One change at a time from this instance (the database serialises instances).
    changing: Mutex<()>,
    /// This instance, as version records name it.
    pub instance: String,
}

impl std::fmt::Debug for Catalog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Catalog")
            .field("served", &self.served())
            .field("dir", &self.dir)
            .field("instance", &self.instance)
            .finish_non_exhaustive()
    }
}

/// This instance's name in version records: the host and the process.
pub fn instance_name() -> String {
    let host = std::env::var("HOSTNAME")
        .ok()
        .filter(|h| !h.trim().is_empty())
        .or_else(|| {
            std::fs::read_to_string("/etc/hostname")
                .ok()
                .map(|h| h.trim().to_string())
                .filter(|h| !h.is_empty())
        })
        .unwrap_or_else(|| "localhost".into());
    format!("{host} (pid {})", std::process::id())
}

/// The name of the operator who runs this process (`USER`), as zone versions and log lines
/// record what an operator did: at the server's start, `zonegraph zones` and `zonegraph char`.
pub fn operator_name() -> String {
    std::env::var("USER")
        .ok()
        .filter(|u| !u.trim().is_empty())
        .unwrap_or_else(|| "operator".into())
}

/// A zone file's content hash: the SHA-256, lowercase hex, of the zone as it builds (its
/// designer JSON, and whether it is a linear legacy zone), so that a file reformatted or
/// written back from the tables is the same version; of the text itself when it does not
/// parse.
pub fn content_hash(text: &str) -> String {
    let canonical = match zone::load(text) {
        Ok((z, _)) => {
            let mut c = serde_json::to_string(&z.to_file()).unwrap_or_else(|_| text.to_string());
            if z.legacy {
                c.push_str("\nlegacy");
            }
            c
        }
        Err(_) => text.to_string(),
    };
    let digest = Sha256::digest(canonical.as_bytes());
    let mut out = String::with_capacity(64);
    for b in digest {
        out.push_str(&format!("{b:02x}"));
    }
    out
}

/// The zones that would be served, checked together: `files` as `(label, text)` in order.
/// `Err` with every finding when any has an error; else the warnings.
fn check_whole(files: &[(String, String)]) -> Result<Vec<CheckedZone>, Vec<CheckedZone>> {
    let checked = validate::check_sources_with(files, validate::CheckOptions { stats: false });
    if checked.iter().any(CheckedZone::has_errors) {
        Err(checked)
    } else {
        Ok(checked)
    }
}

/// The check's label of a zone of the database (not a folder file).
fn label(zone_id: &str) -> String {
    format!("{zone_id}.json")
}

/// The zones served, as files: `(zone_id, label, text)` in order, read in `tx`.
fn served_files(tx: &mut db::Tx<'_>) -> Result<Vec<(String, String, String, VersionRow)>> {
    let mut out = Vec::new();
    for v in tx.newest_versions()? {
        if v.withdrawn {
            continue;
        }
        let text = tx
            .version_file(v.seq)?
            .with_context(|| format!("version {} of zone {} has no file", v.seq, v.zone_id))?;
        out.push((v.zone_id.clone(), label(&v.zone_id), text, v));
    }
    Ok(out)
}

/// Writes the zone tables from the files that are served now (in `tx`), and prunes.
fn after_change(tx: &mut db::Tx<'_>, now: i64) -> Result<()> {
    let mut zones = Vec::new();
    for (_, label, text, _) in served_files(tx)? {
        let (zone, _) = zone::load(&text).map_err(|e| anyhow::anyhow!("{label}: {e}"))?;
        zones.push((label, zone));
    }
    tx.write_zone_tables(&zones, now)?;
    tx.prune_versions(now - crate::store::sweep::KEEP_ENDED_RUNS_MS)?;
    Ok(())
}

/// What a change's transaction decided: kept only when `Changed`.
enum Outcome<T> {
    Changed(T),
    Unchanged(T),
    Refused(Refused),
}

impl<T> Outcome<T> {
    fn keep(&self) -> bool {
        matches!(self, Outcome::Changed(_))
    }
}

/// The word for a file the warnings and findings name.
fn warning_lines(checked: &[CheckedZone]) -> Vec<String> {
    let mut out = Vec::new();
    for c in checked {
        for d in &c.diagnostics {
            out.push(format!(
                "warning[{}]: {} ({}, zone {})",
                d.code,
                d.message,
                c.file,
                c.zone_id.as_deref().unwrap_or("?")
            ));
        }
    }
    out
}

impl Catalog {
    /// Syncs the folder `dir` into the database (see [`Catalog::sync_folder`]) and loads the
    /// zones served. A database from before zone versions has its zone tables recorded as the
    /// first versions first (and its active runs pinned to them). Refused when nothing would
    /// be served: no zone in the database and none in the folder.
    pub fn open(db: &db::Database, dir: &Path) -> Result<(Catalog, Synced)> {
        let catalog = Catalog::empty(dir);
        catalog.record_tables(db, &read_folder(dir)?)?;
        let synced = catalog.sync_folder(db)?;
        if catalog.served().zones.is_empty() {
            bail!(
                "{} holds no zone files (*.json) and the database serves no zone; pass --zones \
                 with the directory of your zones",
                dir.display()
            );
        }
        Ok((catalog, synced))
    }

    /// The zones the database serves, with no folder (the command line's `zonegraph zones`).
    pub fn of_database(db: &db::Database) -> Result<Catalog> {
        let catalog = Catalog::empty(Path::new(""));
        catalog.load(db)?;
        Ok(catalog)
    }

    fn empty(dir: &Path) -> Catalog {
        Catalog {
            served: RwLock::new(Arc::new(Served {
                sequence: -1,
                zones: Arc::default(),
                versions: BTreeMap::new(),
                files: BTreeMap::new(),
            })),
            kept: Mutex::default(),
            dir: dir.to_path_buf(),
            changing: Mutex::default(),
            instance: instance_name(),
        }
    }

    /// The folder (`--zones`).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The zones served now.
    pub fn served(&self) -> Arc<Served> {
        self.served
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Loads the zones served again when the zone sequence moved (another instance, or the
    /// command line, made a version); `true` when it did.
    pub fn refresh(&self, db: &db::Database) -> Result<bool> {
        let sequence = db.read(|tx| tx.zone_sequence())?;
        if sequence == self.served().sequence {
            return Ok(false);
        }
        self.load(db)?;
        Ok(true)
    }

    /// Reads the newest versions and serves them (a graph already built for the same version
    /// is kept).
    fn load(&self, db: &db::Database) -> Result<()> {
        let before = self.served();
        let (sequence, rows, texts) = db.read(|tx| {
            let sequence = tx.zone_sequence()?;
            let rows: Vec<VersionRow> = tx
                .newest_versions()?
                .into_iter()
                .filter(|v| !v.withdrawn)
                .collect();
            let mut texts = BTreeMap::new();
            for v in &rows {
                let same = before
                    .versions
                    .get(&v.zone_id)
                    .is_some_and(|b| b.seq == v.seq);
                if !same {
                    let text = tx.version_file(v.seq)?.with_context(|| {
                        format!("version {} of zone {} has no file", v.seq, v.zone_id)
                    })?;
                    texts.insert(v.seq, text);
                }
            }
            Ok((sequence, rows, texts))
        })?;
        let mut zones = Vec::with_capacity(rows.len());
        let mut versions = BTreeMap::new();
        let mut files = BTreeMap::new();
        for v in rows {
            let (zone, text) = match texts.get(&v.seq) {
                Some(text) => {
                    let (zone, _) = zone::load(text).map_err(|e| {
                        anyhow::anyhow!("version {} of zone {}: {e}", v.seq, v.zone_id)
                    })?;
                    (zone, Arc::<str>::from(text.as_str()))
                }
                None => {
                    let zone = before
                        .zones
                        .iter()
                        .find(|z| z.id == v.zone_id)
                        .cloned()
                        .context("a served zone went missing")?;
                    let text = before
                        .files
                        .get(&v.zone_id)
                        .cloned()
                        .context("a served zone's file went missing")?;
                    (zone, text)
                }
            };
            files.insert(v.zone_id.clone(), text);
            zones.push(zone);
            versions.insert(v.zone_id.clone(), v);
        }
        let served = Arc::new(Served {
            sequence,
            zones: Arc::new(zones),
            versions,
            files,
        });
        *self.served.write().unwrap_or_else(|p| p.into_inner()) = served;
        Ok(())
    }

    /// Every version of every zone, newest last (`GET /api/zones/{id}/versions`, `zonegraph
    /// zones list`).
    pub fn history(db: &db::Database, zone_id: &str) -> Result<Vec<VersionRow>> {
        db.read(|tx| tx.versions_of(zone_id))
    }
}
