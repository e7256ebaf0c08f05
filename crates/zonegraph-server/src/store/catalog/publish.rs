//! Publishing a zone file and withdrawing a zone: each checked whole, made a version, and
//! written to the folder.

use std::path::Path;

use anyhow::Result;
use zonegraph_core::validate::{self, CheckedZone};

use crate::db::{self, NewVersion};

use super::folder::read_folder;
use super::{
    Author, Catalog, Outcome, Published, Refused, Withdrawn, after_change, check_whole,
    content_hash, served_files,
};

/// What a publish made: the version, whether it replaced one, every zone's findings, and
/// the players whose room or way on it removes.
type Made = (i64, bool, Vec<CheckedZone>, usize);

impl Catalog {
    /// Publishes a zone file: checks it together with the zones served; on success makes it
    /// the zone's newest version, serves it, and writes it into the folder (over the file of
    /// the zone with its id, else as `<zone_id>.json`). On any error it changes nothing.
    /// A version that removes the room, or a way on from it, of a player in the zone is
    /// refused unless `force` (as a withdrawal is); runs still going keep the version they
    /// play (runs from before versions are given the served one first).
    pub fn publish(
        &self,
        db: &db::Database,
        text: &str,
        author: &Author,
        force: bool,
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
            move |tx| -> Result<Outcome<Made>> {
                tx.lock_zone_sequence()?;
                let hash = content_hash(&t);
                let mut whole: Vec<(String, String, String)> = Vec::new();
                let mut replaced = None;
                let mut same = None;
                for (zid, label, text, v) in served_files(tx)? {
                    if zid == zone_id {
                        if v.content_hash == hash {
                            same = Some(v.seq);
                        }
                        replaced = Some((v.seq, text));
                        whole.push((zid, l.clone(), t.clone()));
                    } else {
                        whole.push((zid, label, text));
                    }
                }
                if replaced.is_none() {
                    whole.push((zone_id.clone(), l.clone(), t.clone()));
                }
                let sources: Vec<(String, String)> =
                    whole.into_iter().map(|(_, l, t)| (l, t)).collect();
                let checked = match check_whole(&sources) {
                    Ok(c) => c,
                    Err(findings) => return Ok(Outcome::Refused(Refused::Findings(findings))),
                };
                if let Some(seq) = same {
                    return Ok(Outcome::Unchanged((seq, true, checked, 0)));
                }
                let mut affected = 0;
                if let Some((old_seq, old_text)) = &replaced {
                    let rooms = tx.active_rooms(&zone_id)?;
                    if !rooms.is_empty() {
                        affected = stranded(old_text, &t, &rooms);
                        if affected > 0 && !force {
                            return Ok(Outcome::Refused(Refused::Strands {
                                zone_id,
                                players: affected,
                            }));
                        }
                    }
                    // Runs from before versions keep the graph they walk.
                    tx.pin_unversioned_runs(&zone_id, *old_seq)?;
                }
                let replaced = replaced.is_some();
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
                Ok(Outcome::Changed((seq, replaced, checked, affected)))
            },
            Outcome::keep,
        )?;
        let (seq, replaced, findings, unchanged, players_affected) = match outcome {
            Outcome::Changed((s, r, f, a)) => (s, r, f, false, a),
            Outcome::Unchanged((s, r, f, a)) => (s, r, f, true, a),
            Outcome::Refused(r) => return Ok(Err(r)),
        };
        self.load(db)?;
        // The folder follows the database (a failure here loses nothing: the version is in
        // the database).
        let warning = match write_atomically(&path, text) {
            Ok(()) => None,
            Err(e) => {
                tracing::warn!(
                    zone = id,
                    error = %format_args!("{e:#}"),
                    "published zone, but its file was not written"
                );
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
            players_affected,
            zones: self.served().zones.len(),
            findings,
            warning,
        }))
    }

    /// The names of every entry of the folder.
    pub(super) fn dir_names(&self) -> Vec<String> {
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
}

/// Whether a zone id can name its file (`<zone_id>.json` in `--zones`): the core's rule,
/// [`zonegraph_core::format::zone_id_problem`].
pub fn is_file_stem(id: &str) -> bool {
    zonegraph_core::format::zone_id_problem(id).is_none()
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

/// How many runs in the zone, standing in `rooms`, would lose their room or a way on from it
/// if `old`, the version served, became `new` ([`zonegraph_core::review::stranded_by`]).
fn stranded(old: &str, new: &str, rooms: &[String]) -> usize {
    match (
        zonegraph_core::format::parse(old),
        zonegraph_core::format::parse(new),
    ) {
        (Ok(old), Ok(new)) => {
            let impact = zonegraph_core::impact::impact(&old, &new);
            zonegraph_core::review::stranded_by(&impact, &new, rooms)
        }
        // Checked already; a file that no longer parses strands every one of them.
        _ => rooms.len(),
    }
}
