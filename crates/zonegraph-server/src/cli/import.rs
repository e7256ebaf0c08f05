//! `zonegraph import gogobee DIR --out DIR`: gogobee's Go zone sources into one checked zone
//! file per zone. The reading is [`crate::gogobee`]'s; here the files are read, every zone is
//! checked as `zonegraph check` checks them together, and each zone without errors is
//! written. What could not be read is printed at its file and line.
//!
//! As strict as a publish: a zone id must name its file ([`format::zone_id_problem`]), a
//! file already in `--out` is replaced only with `--force`, and a zone whose id another file
//! there already holds is never written (the folder would serve it twice).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use zonegraph_core::format;
use zonegraph_core::validate;

use crate::{gogobee, zones};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub from: From,
}

#[derive(Debug, clap::Subcommand)]
pub enum From {
    /// gogobee's Go zone sources (its `internal/plugin`): zone definitions, regions and graphs.
    Gogobee(GogobeeArgs),
}

#[derive(Debug, clap::Args)]
pub struct GogobeeArgs {
    /// Directory of gogobee's Go sources (`*.go`, not recursive; `*_test.go` are left out).
    pub dir: PathBuf,
    /// Directory to write the zone files into, as `<zone_id>.json` (made when missing).
    #[arg(long)]
    pub out: PathBuf,
    /// Replace a zone file already in `--out` (`<zone_id>.json`, e.g. the shipped Crypt of
    /// Valdris by gogobee's own).
    #[arg(long)]
    pub force: bool,
}

/// Imports and prints the report; the exit code fails on any error.
pub fn run(args: &Args) -> Result<ExitCode> {
    let (report, failed) = execute(args)?;
    print!("{report}");
    Ok(if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// Does the import, writes the zone files, and returns the report and whether it failed.
pub fn execute(args: &Args) -> Result<(String, bool)> {
    match &args.from {
        From::Gogobee(a) => {
            let sources = read_go(&a.dir)?;
            let present = present(&a.out)?;
            let plan = plan(&a.out, &sources, &present, a.force);
            if !plan.files.is_empty() {
                std::fs::create_dir_all(&a.out)
                    .with_context(|| format!("cannot make {}", a.out.display()))?;
            }
            for (path, text) in &plan.files {
                std::fs::write(path, text)
                    .with_context(|| format!("cannot write {}", path.display()))?;
            }
            Ok((plan.report, plan.failed))
        }
    }
}

/// The `*.go` files of `dir` but its tests, sorted, as `(path, text)`.
fn read_go(dir: &Path) -> Result<Vec<(String, String)>> {
    let mut paths = Vec::new();
    for entry in std::fs::read_dir(dir).with_context(|| format!("cannot list {}", dir.display()))? {
        let path = entry?.path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if path.is_file() && name.ends_with(".go") && !name.ends_with("_test.go") {
            paths.push(path);
        }
    }
    if paths.is_empty() {
        bail!("{} holds no Go files (*.go)", dir.display());
    }
    paths.sort();
    zones::read_all(&paths)
}

/// The zone files already in `out` (none when it does not exist yet): each path with the
/// zone id it holds, when it can be read.
fn present(out: &Path) -> Result<Vec<(PathBuf, Option<String>)>> {
    if !out.is_dir() {
        return Ok(Vec::new());
    }
    Ok(zones::expand(&[out.to_path_buf()])?
        .into_iter()
        .map(|path| {
            let id = std::fs::read_to_string(&path)
                .ok()
                .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
                .and_then(|v| v.get("zone_id")?.as_str().map(String::from));
            (path, id)
        })
        .collect())
}

/// What an import writes and says.
#[derive(Debug)]
pub struct Plan {
    /// `(path, text)` of every zone file to write: the zones without errors.
    pub files: Vec<(PathBuf, String)>,
    pub report: String,
    /// Any error: one that kept a zone from being read, or a checker's error.
    pub failed: bool,
}

/// Reads the zones of `sources`, checks them together and decides what to write into `out`,
/// which already holds the zone files `present` (path, zone id); `force` replaces them.
pub fn plan(
    out: &Path,
    sources: &[(String, String)],
    present: &[(PathBuf, Option<String>)],
    force: bool,
) -> Plan {
    let mut imported = gogobee::import(sources);
    // An id that cannot name its file is never joined to `out` (`../x` would write outside).
    let mut refused = Vec::new();
    imported
        .zones
        .retain(|z| match format::zone_id_problem(&z.zone_id) {
            None => true,
            Some(problem) => {
                refused.push(format!(
                    "error[import]: zone id {:?} cannot name a zone file: {problem}; not written",
                    z.zone_id
                ));
                false
            }
        });
    let texts: Vec<(String, String)> = imported
        .zones
        .iter()
        .map(|z| {
            let path = out.join(format!("{}.json", z.zone_id));
            (path.display().to_string(), format::to_pretty_json(z))
        })
        .collect();
    let checked = validate::check_sources(&texts);
    let mut report = String::new();
    for r in &refused {
        let _ = writeln!(report, "{r}");
    }
    let mut kept_out = 0;
    for e in &imported.errors {
        let _ = writeln!(report, "error[import]: {}", e.message);
        let _ = write!(report, "  --> {}:{}:{}", e.file, e.line, e.column);
        if let Some(z) = &e.zone {
            let _ = write!(report, " (zone {z})");
        }
        report.push('\n');
    }
    let mut files = Vec::new();
    for ((path, text), c) in texts.iter().zip(&checked) {
        zones::write_findings(&mut report, c);
        if c.has_errors() {
            let _ = writeln!(report, "not written: {path} has errors");
            continue;
        }
        let target = PathBuf::from(path);
        let id = target.file_stem().and_then(|s| s.to_str()).unwrap_or("");
        if let Some((other, _)) = present
            .iter()
            .find(|(p, held)| *p != target && held.as_deref() == Some(id))
        {
            let _ = writeln!(
                report,
                "error[import]: zone {id} is already in {}; not written (the folder would \
                 serve it twice: remove or rename that file first)",
                other.display()
            );
            kept_out += 1;
            continue;
        }
        if !force && present.iter().any(|(p, _)| *p == target) {
            let _ = writeln!(
                report,
                "error[import]: {path} already exists; not replaced (--force replaces it)"
            );
            kept_out += 1;
            continue;
        }
        if let Some(s) = &c.stats {
            let longest = s.longest_path.map_or_else(
                || "no route to the boss".into(),
                |n| format!("longest route {n} rooms"),
            );
            let _ = writeln!(
                report,
                "wrote {path}: {} rooms, {} passages, {} locked, {longest}",
                s.nodes,
                s.edges,
                s.locks.len()
            );
        }
        files.push((PathBuf::from(path), text.clone()));
    }
    let mut seen: Vec<&str> = imported
        .zones
        .iter()
        .map(|z| z.zone_id.as_str())
        .chain(imported.errors.iter().filter_map(|e| e.zone.as_deref()))
        .collect();
    let seen_refused = refused.len();
    seen.sort_unstable();
    seen.dedup();
    let errors = refused.len()
        + kept_out
        + imported.errors.len()
        + checked
            .iter()
            .map(|c| c.diagnostics.iter().filter(|d| d.is_error()).count())
            .sum::<usize>();
    let warnings: usize = checked
        .iter()
        .map(|c| c.diagnostics.iter().filter(|d| !d.is_error()).count())
        .sum();
    let plural = |n: usize| if n == 1 { "" } else { "s" };
    let _ = writeln!(
        report,
        "imported {} of {} zone{} into {}: {errors} error{}, {warnings} warning{}",
        files.len(),
        seen.len() + seen_refused,
        plural(seen.len() + seen_refused),
        out.display(),
        plural(errors),
        plural(warnings)
    );
    Plan {
        files,
        report,
        failed: errors > 0,
    }
}
