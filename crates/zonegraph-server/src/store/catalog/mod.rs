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

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};

use anyhow::{Context as _, Result, bail};
use serde::Serialize;
use sha2::{Digest as _, Sha256};
use zonegraph_core::validate::{self, CheckedZone};
use zonegraph_core::zone::{self, Zone};

use crate::db::{self, NewVersion, StoredRun, VersionRow};
use crate::zones;

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
    /// What a folder sync is worth saying at start or on SIGHUP: the checks' warnings, each file
    /// the database is ahead of, what was imported, and a folder with no zone file.
    pub fn words(&self, dir: &Path) -> Vec<String> {
        let mut out = self.warnings.clone();
        for (file, zone_id, seq) in &self.imported {
            out.push(format!(
                "imported {file} as version {seq} of zone {zone_id}"
            ));
        }
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

/// A zone file of the folder.
#[derive(Clone, Debug)]
struct FolderFile {
    /// The file's name in the folder.
    name: String,
    path: PathBuf,
    text: String,
    zone_id: String,
    hash: String,
    mtime_ms: Option<i64>,
}

/// What becomes of a folder file.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Fate {
    /// Imported: its zone is new, or the file is a newer edit.
    Import,
    /// The version served already.
    Same,
    Behind {
        known: bool,
    },
}

/// The rule of the folder: see the module's documentation.
fn fate(
    zone_id: &str,
    hash: &str,
    mtime_ms: Option<i64>,
    newest: Option<&VersionRow>,
    known: &BTreeSet<(String, String)>,
) -> Fate {
    let Some(v) = newest else {
        return Fate::Import;
    };
    if !v.withdrawn && v.content_hash == hash {
        return Fate::Same;
    }
    if known.contains(&(zone_id.to_string(), hash.to_string())) {
        return Fate::Behind { known: true };
    }
    if mtime_ms.is_some_and(|m| m > v.created_at_ms) {
        Fate::Import
    } else {
        Fate::Behind { known: false }
    }
}

/// The zone files of `dir` (none when it does not exist); a file that is not a zone file
/// (does not parse) is an error naming it, all of them at once.
fn read_folder(dir: &Path) -> Result<Vec<FolderFile>> {
    if !dir.is_dir() {
        return Ok(Vec::new());
    }
    let paths = zones::expand(&[dir.to_path_buf()])
        .with_context(|| format!("cannot read the zones in {}", dir.display()))?;
    let mut out = Vec::with_capacity(paths.len());
    let mut errors = String::new();
    for path in paths {
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mtime_ms = std::fs::metadata(&path)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .and_then(|d| i64::try_from(d.as_millis()).ok());
        match zonegraph_core::format::parse(&text) {
            Ok(file) => out.push(FolderFile {
                name,
                zone_id: file.zone_id,
                hash: content_hash(&text),
                text,
                path,
                mtime_ms,
            }),
            Err(_) => {
                let checked = validate::check_sources(&[(path.display().to_string(), text)]);
                for c in &checked {
                    zones::write_findings(&mut errors, c);
                }
            }
        }
    }
    let mut seen: BTreeMap<&str, &str> = BTreeMap::new();
    for f in &out {
        if let Some(first) = seen.insert(&f.zone_id, &f.name) {
            errors.push_str(&format!(
                "error: {first} and {} both hold zone {}: keep one file per zone\n",
                f.name, f.zone_id
            ));
        }
    }
    if !errors.is_empty() {
        bail!(
            "zones in {} have errors:\n{}",
            dir.display(),
            errors.trim_end()
        );
    }
    Ok(out)
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

    /// A database whose zone tables hold zones but which has no version yet (made before
    /// versions): each zone of the tables becomes its first version, and the active runs in
    /// it are pinned to that version.
    fn record_tables(&self, db: &db::Database, folder: &[FolderFile]) -> Result<()> {
        let instance = self.instance.clone();
        let folder = folder.to_vec();
        db.write(
            move |tx| {
                tx.lock_zone_sequence()?;
                if !tx.newest_versions()?.is_empty() {
                    return Ok(false);
                }
                let zones = tx.table_zones()?;
                if zones.is_empty() {
                    return Ok(false);
                }
                let now = crate::clock::now_ms();
                for (file, zone) in &zones {
                    // The folder's file of this zone when it builds to the same zone (a
                    // legacy zone keeps its own form), else the zone written back.
                    let same = folder.iter().find(|f| {
                        f.zone_id == zone.id
                            && zone::load(&f.text).is_ok_and(|(z, _)| {
                                z.legacy == zone.legacy && z.to_file() == zone.to_file()
                            })
                    });
                    let text = match same {
                        Some(f) => f.text.clone(),
                        None => serde_json::to_string_pretty(&zone.to_file())?,
                    };
                    let seq = tx.add_version(&NewVersion {
                        zone_id: &zone.id,
                        content_hash: &content_hash(&text),
                        file_json: Some(&text),
                        source: &format!("tables ({file})"),
                        made_by: "zonegraph migration",
                        instance: &instance,
                        file_mtime_ms: None,
                        now,
                    })?;
                    tx.pin_unversioned_runs(&zone.id, seq)?;
                }
                Ok(true)
            },
            |changed| *changed,
        )
        .context("cannot record the zone tables as versions")?;
        Ok(())
    }

    /// Imports the folder's new and newer zone files (see the module's documentation), all
    /// or nothing: the zones that would be served are checked together first, and any error
    /// refuses it (the message lists every finding) and changes nothing. Then serves the
    /// newest versions.
    pub fn sync_folder(&self, db: &db::Database) -> Result<Synced> {
        let _one = self.changing.lock().unwrap_or_else(|p| p.into_inner());
        let files = read_folder(&self.dir)?;
        let folder_empty = files.is_empty();
        let instance = self.instance.clone();
        let made_by = operator_name();
        let outcome = db.write(
            move |tx| -> Result<Outcome<Synced>> {
                tx.lock_zone_sequence()?;
                let newest: BTreeMap<String, VersionRow> = tx
                    .newest_versions()?
                    .into_iter()
                    .map(|v| (v.zone_id.clone(), v))
                    .collect();
                let known: BTreeSet<(String, String)> = tx.known_hashes()?.into_iter().collect();
                let mut synced = Synced {
                    folder_empty,
                    ..Synced::default()
                };
                let mut import = Vec::new();
                for f in files {
                    match fate(
                        &f.zone_id,
                        &f.hash,
                        f.mtime_ms,
                        newest.get(&f.zone_id),
                        &known,
                    ) {
                        Fate::Import => import.push(f),
                        Fate::Same => {}
                        Fate::Behind { known } => synced.behind.push(Behind {
                            file: f.name.clone(),
                            zone_id: f.zone_id.clone(),
                            newest: newest[&f.zone_id].clone(),
                            known,
                        }),
                    }
                }
                // The zones that would be served: the database's, the imported files in
                // their place or after them.
                let mut whole: Vec<(String, String, String)> = served_files(tx)?
                    .into_iter()
                    .map(|(id, label, text, _)| (id, label, text))
                    .collect();
                for f in &import {
                    match whole.iter_mut().find(|(id, _, _)| *id == f.zone_id) {
                        Some(slot) => *slot = (f.zone_id.clone(), f.name.clone(), f.text.clone()),
                        None => whole.push((f.zone_id.clone(), f.name.clone(), f.text.clone())),
                    }
                }
                let sources: Vec<(String, String)> =
                    whole.into_iter().map(|(_, l, t)| (l, t)).collect();
                let checked = match check_whole(&sources) {
                    Ok(c) => c,
                    Err(findings) => return Ok(Outcome::Refused(Refused::Findings(findings))),
                };
                synced.warnings = warning_lines(&checked);
                if import.is_empty() {
                    return Ok(Outcome::Unchanged(synced));
                }
                let now = crate::clock::now_ms();
                for f in &import {
                    let seq = tx.add_version(&NewVersion {
                        zone_id: &f.zone_id,
                        content_hash: &f.hash,
                        file_json: Some(&f.text),
                        source: &format!("folder {}", f.name),
                        made_by: &made_by,
                        instance: &instance,
                        file_mtime_ms: f.mtime_ms,
                        now,
                    })?;
                    synced
                        .imported
                        .push((f.name.clone(), f.zone_id.clone(), seq));
                }
                after_change(tx, now)?;
                Ok(Outcome::Changed(synced))
            },
            Outcome::keep,
        )?;
        let synced = match outcome {
            Outcome::Changed(s) | Outcome::Unchanged(s) => s,
            Outcome::Refused(Refused::Findings(findings)) => {
                let mut errors = String::new();
                for c in findings.iter().filter(|c| c.has_errors()) {
                    zones::write_findings(&mut errors, c);
                }
                bail!(
                    "zones in {} have errors:\n{}",
                    self.dir.display(),
                    errors.trim_end()
                );
            }
            Outcome::Refused(other) => bail!("the folder sync was refused: {other:?}"),
        };
        self.load(db)?;
        Ok(synced)
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
    fn kept_graph(&self, db: &db::Database, seq: i64) -> Result<Option<Arc<Zone>>> {
        self.kept_graph_with(seq, || db.read(|tx| tx.version_file(seq)))
    }

    /// [`Catalog::kept_graph`], the version's file read by `file` when it is not in memory
    /// (in the caller's own transaction: a command must not wait for a second connection).
    fn kept_graph_with(
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

    /// Publishes a zone file: checks it together with the zones served; on success makes it
    /// the zone's newest version, serves it, and writes it into the folder (over the file of
    /// the zone with its id, else as `<zone_id>.json`). On any error it changes nothing.
    pub fn publish(
        &self,
        db: &db::Database,
        text: &str,
        author: &Author,
    ) -> Result<Result<Published, Refused>> {
        let _one = self.changing.lock().unwrap_or_else(|p| p.into_inner());
        let id = match zonegraph_core::format::parse(text) {
            Ok(file) => file.zone_id,
            Err(_) => {
                // Its parse error, as the check words it.
                let checked = validate::check_sources(&[("upload.json".into(), text.into())]);
                return Ok(Err(Refused::Findings(checked)));
            }
        };
        if !is_file_stem(&id) {
            return Ok(Err(Refused::BadId(id)));
        }
        // The folder file it goes to: the zone's own, else `<id>.json` if no other file
        // (in any case) has that name.
        let folder = read_folder(&self.dir).unwrap_or_default();
        let path = match folder.iter().find(|f| f.zone_id == id) {
            Some(f) => f.path.clone(),
            None => {
                let name = format!("{id}.json");
                if let Some(taken) = self
                    .dir_names()
                    .into_iter()
                    .find(|f| f.eq_ignore_ascii_case(&name))
                {
                    return Ok(Err(Refused::FileTaken {
                        zone_id: id,
                        file: taken,
                    }));
                }
                self.dir.join(name)
            }
        };
        let file_label = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let (t, i, a, l) = (
            text.to_string(),
            self.instance.clone(),
            author.clone(),
            file_label.clone(),
        );
        let zone_id = id.clone();
        let outcome = db.write(
            move |tx| -> Result<Outcome<(i64, bool, Vec<CheckedZone>)>> {
                tx.lock_zone_sequence()?;
                let hash = content_hash(&t);
                let mut whole: Vec<(String, String, String)> = Vec::new();
                let mut replaced = false;
                let mut same = None;
                for (zid, label, text, v) in served_files(tx)? {
                    if zid == zone_id {
                        replaced = true;
                        if v.content_hash == hash {
                            same = Some(v.seq);
                        }
                        whole.push((zid, l.clone(), t.clone()));
                    } else {
                        whole.push((zid, label, text));
                    }
                }
                if !replaced {
                    whole.push((zone_id.clone(), l.clone(), t.clone()));
                }
                let sources: Vec<(String, String)> =
                    whole.into_iter().map(|(_, l, t)| (l, t)).collect();
                let checked = match check_whole(&sources) {
                    Ok(c) => c,
                    Err(findings) => return Ok(Outcome::Refused(Refused::Findings(findings))),
                };
                if let Some(seq) = same {
                    return Ok(Outcome::Unchanged((seq, replaced, checked)));
                }
                let now = crate::clock::now_ms();
                let seq = tx.add_version(&NewVersion {
                    zone_id: &zone_id,
                    content_hash: &hash,
                    file_json: Some(&t),
                    source: &a.source,
                    made_by: &a.made_by,
                    instance: &i,
                    file_mtime_ms: None,
                    now,
                })?;
                after_change(tx, now)?;
                Ok(Outcome::Changed((seq, replaced, checked)))
            },
            Outcome::keep,
        )?;
        let (seq, replaced, findings, unchanged) = match outcome {
            Outcome::Changed((s, r, f)) => (s, r, f, false),
            Outcome::Unchanged((s, r, f)) => (s, r, f, true),
            Outcome::Refused(r) => return Ok(Err(r)),
        };
        self.load(db)?;
        // The folder follows the database (a failure here loses nothing: the version is in
        // the database).
        let warning = match write_atomically(&path, text) {
            Ok(()) => None,
            Err(e) => {
                eprintln!("zonegraph: published zone {id}, but {e:#}");
                Some(format!("{e:#}"))
            }
        };
        Ok(Ok(Published {
            zone_id: id,
            file: if warning.is_none() {
                file_label
            } else {
                String::new()
            },
            replaced,
            seq,
            unchanged,
            zones: self.served().zones.len(),
            findings,
            warning,
        }))
    }

    /// The names of every entry of the folder.
    fn dir_names(&self) -> Vec<String> {
        std::fs::read_dir(&self.dir)
            .map(|entries| {
                entries
                    .filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Withdraws `zone_id`: no new run starts there, on any instance. Refused while players
    /// have runs there unless `force`; forced, each of them is told (a queued notice) and
    /// their runs go on, on the version they started on. Refused too when the other zones do
    /// not stand without it (the check, as for a publish). The folder's file is left alone;
    /// it is not imported again while it is that version.
    pub fn withdraw(
        &self,
        db: &db::Database,
        zone_id: &str,
        force: bool,
        author: &Author,
    ) -> Result<Result<Withdrawn, Refused>> {
        let _one = self.changing.lock().unwrap_or_else(|p| p.into_inner());
        let (z, i, a) = (zone_id.to_string(), self.instance.clone(), author.clone());
        let outcome = db.write(
            move |tx| -> Result<Outcome<Withdrawn>> {
                tx.lock_zone_sequence()?;
                let files = served_files(tx)?;
                let Some((_, _, text, last)) = files.iter().find(|(id, ..)| *id == z) else {
                    return Ok(Outcome::Refused(Refused::Unknown(z)));
                };
                let players = tx.players_in(&z)?;
                if !players.is_empty() && !force {
                    return Ok(Outcome::Refused(Refused::Active {
                        zone_id: z,
                        players: players.len(),
                    }));
                }
                let rest: Vec<(String, String)> = files
                    .iter()
                    .filter(|(id, ..)| *id != z)
                    .map(|(_, l, t, _)| (l.clone(), t.clone()))
                    .collect();
                if let Err(findings) = check_whole(&rest) {
                    return Ok(Outcome::Refused(Refused::Findings(findings)));
                }
                let name = zonegraph_core::format::parse(text)
                    .map(|f| f.name)
                    .unwrap_or_else(|_| z.clone());
                let now = crate::clock::now_ms();
                // Runs from before versions keep the graph they walk.
                tx.pin_unversioned_runs(&z, last.seq)?;
                let seq = tx.add_version(&NewVersion {
                    zone_id: &z,
                    content_hash: "",
                    file_json: None,
                    source: &a.source,
                    made_by: &a.made_by,
                    instance: &i,
                    file_mtime_ms: None,
                    now,
                })?;
                let notice = zonegraph_core::chat::zone_withdrawn(&name, &z);
                for user in &players {
                    tx.push_notice(user, "", &notice.text, &notice.html, now)?;
                }
                after_change(tx, now)?;
                Ok(Outcome::Changed(Withdrawn {
                    zone_id: z,
                    seq,
                    players_told: players.len(),
                    zones: rest.len(),
                }))
            },
            Outcome::keep,
        )?;
        match outcome {
            Outcome::Changed(w) => {
                self.load(db)?;
                Ok(Ok(w))
            }
            Outcome::Unchanged(w) => Ok(Ok(w)),
            Outcome::Refused(r) => Ok(Err(r)),
        }
    }

    /// Every version of every zone, newest last (`GET /api/zones/{id}/versions`, `zonegraph
    /// zones list`).
    pub fn history(db: &db::Database, zone_id: &str) -> Result<Vec<VersionRow>> {
        db.read(|tx| tx.versions_of(zone_id))
    }
}

/// Whether a zone id can name its file (`<zone_id>.json` in `--zones`).
pub fn is_file_stem(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 128
        && !id.starts_with('.')
        // `<id>.schema.json` is the folder's JSON Schema, never read as a zone.
        && !id.to_ascii_lowercase().ends_with(".schema")
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
}

/// Writes `text` to `path` so that a reader, or a power cut, finds the old file or the new
/// one: a temporary file beside it of a name no other writer uses (not a `*.json`, so no
/// reader takes it for a zone), synced, renamed over `path`, and the directory synced.
pub fn write_atomically(path: &Path, text: &str) -> Result<()> {
    use std::io::Write as _;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.{}.tmp", crate::db::random_hex()?));
    let written = (|| -> std::io::Result<()> {
        let mut f = std::fs::File::create_new(&tmp)?;
        f.write_all(text.as_bytes())?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)?;
        if let Some(dir) = path.parent() {
            std::fs::File::open(if dir.as_os_str().is_empty() {
                Path::new(".")
            } else {
                dir
            })?
            .sync_all()?;
        }
        Ok(())
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(anyhow::Error::new(e).context(format!("cannot write {}", path.display())));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn version(seq: i64, hash: &str, at: i64, withdrawn: bool) -> VersionRow {
        VersionRow {
            seq,
            zone_id: "z".into(),
            content_hash: hash.into(),
            withdrawn,
            source: "POST /api/zones".into(),
            made_by: "api".into(),
            instance: "a (pid 1)".into(),
            file_mtime_ms: None,
            created_at_ms: at,
            has_file: !withdrawn,
        }
    }

    #[test]
    fn a_folder_file_is_imported_only_when_new_or_newer() {
        let known: BTreeSet<(String, String)> =
            [("z".into(), "old".into()), ("z".into(), "cur".into())]
                .into_iter()
                .collect();
        let cur = version(5, "cur", 1_000, false);
        // A new zone.
        assert_eq!(fate("z", "x", Some(1), None, &known), Fate::Import);
        // The version served.
        assert_eq!(fate("z", "cur", Some(1), Some(&cur), &known), Fate::Same);
        // An older version, however new the file looks (a checkout touches it).
        assert_eq!(
            fate("z", "old", Some(9_999), Some(&cur), &known),
            Fate::Behind { known: true }
        );
        // An edit never seen: newer than the version served, or not.
        assert_eq!(
            fate("z", "edit", Some(1_001), Some(&cur), &known),
            Fate::Import
        );
        assert_eq!(
            fate("z", "edit", Some(999), Some(&cur), &known),
            Fate::Behind { known: false }
        );
        assert_eq!(
            fate("z", "edit", None, Some(&cur), &known),
            Fate::Behind { known: false }
        );
        // A withdrawn zone: its old file stays out; an edit after the withdrawal brings it
        // back.
        let gone = version(6, "", 2_000, true);
        assert_eq!(
            fate("z", "cur", Some(9_999), Some(&gone), &known),
            Fate::Behind { known: true }
        );
        assert_eq!(
            fate("z", "edit", Some(2_001), Some(&gone), &known),
            Fate::Import
        );
    }

    #[test]
    fn content_hashes_are_sha256_hex() {
        assert_eq!(
            content_hash(""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }
}
