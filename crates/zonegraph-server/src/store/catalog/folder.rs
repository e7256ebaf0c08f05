//! The folder (`--zones`): which of its files become versions, read and synced into the
//! database (see the catalog's rules).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, bail};
use zonegraph_core::validate;
use zonegraph_core::zone;

use crate::db::{self, NewVersion, VersionRow};
use crate::zones;

use super::{
    Behind, Catalog, Outcome, Refused, Synced, after_change, check_whole, content_hash,
    operator_name, served_files, warning_lines,
};

/// A zone file of the folder.
#[derive(Clone, Debug)]
pub(super) struct FolderFile {
    /// The file's name in the folder.
    pub(super) name: String,
    pub(super) path: PathBuf,
    pub(super) text: String,
    pub(super) zone_id: String,
    pub(super) hash: String,
    pub(super) mtime_ms: Option<i64>,
}

/// What becomes of a folder file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Fate {
    /// Imported: its zone is new, or the file is a newer edit.
    Import,
    /// The version served already.
    Same,
    Behind {
        known: bool,
    },
}

/// The rule of the folder: see the module's documentation.
pub(super) fn fate(
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
pub(super) fn read_folder(dir: &Path) -> Result<Vec<FolderFile>> {
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

impl Catalog {
    /// A database whose zone tables hold zones but which has no version yet (made before
    /// versions): each zone of the tables becomes its first version, and the active runs in
    /// it are pinned to that version.
    pub(super) fn record_tables(&self, db: &db::Database, folder: &[FolderFile]) -> Result<()> {
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
}
