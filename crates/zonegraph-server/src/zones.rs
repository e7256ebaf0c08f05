//! Finding, reading and checking zone files.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use zonegraph_core::Zone;
use zonegraph_core::validate::{self, CheckedZone};
use zonegraph_core::zone;

/// Expands files and directories into zone files, sorted for deterministic output. A directory
/// contributes its `*.json` files (not recursive), except JSON Schemas (`*.schema.json`).
pub fn expand(paths: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for p in paths {
        let meta = std::fs::metadata(p).with_context(|| format!("cannot read {}", p.display()))?;
        if meta.is_dir() {
            let mut found = Vec::new();
            for entry in
                std::fs::read_dir(p).with_context(|| format!("cannot list {}", p.display()))?
            {
                let path = entry?.path();
                if is_zone_file(&path) {
                    found.push(path);
                }
            }
            found.sort();
            out.extend(found);
        } else {
            out.push(p.clone());
        }
    }
    Ok(out)
}

fn is_zone_file(path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    path.is_file() && zonegraph_core::format::is_zone_file_name(name)
}

/// Reads every file as UTF-8 text: `(display name, text)`.
pub fn read_all(paths: &[PathBuf]) -> Result<Vec<(String, String)>> {
    paths
        .iter()
        .map(|p| {
            let text = std::fs::read_to_string(p)
                .with_context(|| format!("cannot read {}", p.display()))?;
            Ok((p.display().to_string(), text))
        })
        .collect()
}

/// The zones to play with, and the id of the one chosen.
#[derive(Debug)]
pub struct ForPlay {
    pub zones: Vec<Zone>,
    pub chosen: String,
}

/// Loads the zones for `play`: every zone of `dir` (when it exists) plus `zone` when it is a
/// file path; `zone` may also be an id or name found among them. Refuses a chosen zone with
/// errors, printing its findings.
pub fn load_for_play(zone_arg: &str, dir: &Path) -> Result<ForPlay> {
    let as_path = Path::new(zone_arg);
    let mut paths = Vec::new();
    if dir.is_dir() {
        paths.extend(expand(&[dir.to_path_buf()])?);
    }
    let given_file = as_path.is_file().then(|| as_path.to_path_buf());
    if let Some(f) = given_file
        .as_ref()
        .filter(|f| !paths.iter().any(|p| same_file(p, f)))
    {
        paths.push(f.clone());
    }
    if paths.is_empty() {
        bail!(
            "no zone {zone_arg:?}: it is not a file, and {} holds no zone files",
            dir.display()
        );
    }
    let sources = read_all(&paths)?;
    let checked = validate::check_sources(&sources);
    let chosen_ix = match &given_file {
        Some(f) => paths.iter().position(|p| same_file(p, f)),
        None => checked.iter().position(|c| {
            c.zone_id
                .as_deref()
                .is_some_and(|id| id.eq_ignore_ascii_case(zone_arg.trim()))
        }),
    };
    let Some(ix) = chosen_ix else {
        let known: Vec<&str> = checked
            .iter()
            .filter_map(|c| c.zone_id.as_deref())
            .collect();
        bail!(
            "no zone {zone_arg:?} in {}; known zones: {}",
            dir.display(),
            known.join(", ")
        );
    };
    if checked[ix].has_errors() {
        let mut report = String::new();
        write_findings(&mut report, &checked[ix]);
        bail!("{} cannot be played:\n{report}", checked[ix].file);
    }
    // Zones with errors elsewhere in the folder are left out; the chosen one is sound.
    let zones = sources
        .iter()
        .zip(&checked)
        .filter(|(_, c)| !c.has_errors())
        .filter_map(|((_, text), _)| zone::load(text).ok().map(|(z, _)| z))
        .collect::<Vec<_>>();
    let chosen = checked[ix].zone_id.clone().unwrap_or_default();
    Ok(ForPlay { zones, chosen })
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

/// Whether a checked zone fails the check: errors always, warnings with `strict`.
pub fn fails(c: &CheckedZone, strict: bool) -> bool {
    c.has_errors() || (strict && c.has_warnings())
}

/// Writes one zone's findings, compiler style:
/// `error[boss_unreachable]: message` / `  --> file (zone z), room z.boss`, then
/// `  = reachable from: z.a, z.b` when the finding lists related rooms.
pub fn write_findings(out: &mut String, c: &CheckedZone) {
    if let Some(e) = &c.parse_error {
        let _ = writeln!(out, "error[parse]: {}", e.message);
        let mut at = format!("  --> {}", c.file);
        if let (Some(l), Some(col)) = (e.line, e.column) {
            let _ = write!(at, ":{l}:{col}");
        }
        if let Some(p) = e
            .path
            .as_deref()
            .filter(|p| !p.is_empty() && *p != "." && *p != "?")
        {
            let _ = write!(at, " at {p}");
        }
        let _ = writeln!(out, "{at}");
        return;
    }
    let zone = c.zone_id.as_deref().unwrap_or("?");
    for d in &c.diagnostics {
        let sev = if d.is_error() { "error" } else { "warning" };
        let _ = writeln!(out, "{sev}[{}]: {}", d.code, d.message);
        let mut at = format!("  --> {} (zone {zone})", c.file);
        if let Some(n) = &d.node {
            let _ = write!(at, ", room {n}");
        }
        if let Some(e) = &d.edge {
            let _ = write!(at, ", passage {} -> {}", e.from, e.to);
        }
        let _ = writeln!(out, "{at}");
        if !d.related.is_empty() {
            let _ = writeln!(out, "  = reachable from: {}", d.related.join(", "));
        }
    }
}
