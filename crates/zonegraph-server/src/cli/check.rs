//! `zonegraph check`: findings printed like a compiler's, or as JSON.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use serde::Serialize;
use zonegraph_core::analysis::Stats;
use zonegraph_core::validate::{self, CheckedZone};

use crate::zones;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Fail on warnings too.
    #[arg(long)]
    strict: bool,
    /// Print `{"zones":[{"file","zone_id","diagnostics","stats"}]}`.
    #[arg(long)]
    json: bool,
    /// Add route analysis: lengths, routes, choke points, lock pass chances, difficulty.
    #[arg(long)]
    stats: bool,
    /// Zone files, or directories of them.
    #[arg(required = true)]
    paths: Vec<PathBuf>,
}

#[derive(Serialize)]
struct JsonReport<'a> {
    zones: &'a [CheckedZone],
}

/// Checks and prints; the exit code fails on errors (and warnings with `--strict`).
pub fn run(args: &Args) -> Result<ExitCode> {
    let (out, failed) = report(args)?;
    print!("{out}");
    Ok(if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// The report `run` prints, and whether the check failed.
pub fn report(args: &Args) -> Result<(String, bool)> {
    let files = zones::expand(&args.paths)?;
    let sources = zones::read_all(&files)?;
    let mut checked = validate::check_sources(&sources);
    if !args.stats {
        for c in &mut checked {
            c.stats = None;
        }
    }
    let failed = checked.iter().any(|c| zones::fails(c, args.strict));
    let mut out = String::new();
    if args.json {
        let report = JsonReport { zones: &checked };
        out = serde_json::to_string_pretty(&report)?;
        out.push('\n');
    } else {
        for c in &checked {
            zones::write_findings(&mut out, c);
            if let Some(stats) = &c.stats {
                write_stats(&mut out, c, stats);
            }
        }
        let errors: usize = checked
            .iter()
            .map(|c| {
                c.diagnostics.iter().filter(|d| d.is_error()).count()
                    + usize::from(c.parse_error.is_some())
            })
            .sum();
        let warnings: usize = checked
            .iter()
            .map(|c| c.diagnostics.iter().filter(|d| !d.is_error()).count())
            .sum();
        let _ = writeln!(
            out,
            "checked {} zone file{}: {errors} error{}, {warnings} warning{}{}",
            checked.len(),
            plural(checked.len()),
            plural(errors),
            plural(warnings),
            if args.strict {
                " (strict: warnings fail)"
            } else {
                ""
            }
        );
    }
    Ok((out, failed))
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

fn write_stats(out: &mut String, c: &CheckedZone, s: &Stats) {
    let zone = c.zone_id.as_deref().unwrap_or("?");
    let num = |n: Option<usize>| n.map_or_else(|| "none".to_string(), |n| n.to_string());
    let _ = writeln!(
        out,
        "{zone}: {} rooms, {} passages, {} forks; longest route {} rooms, shortest {}; routes {}",
        s.nodes,
        s.edges,
        s.forks,
        num(s.longest_path),
        num(s.shortest_path),
        s.routes.map_or_else(
            || "unbounded (a loop lies on a route)".to_string(),
            |r| r.to_string()
        )
    );
    if !s.choke_points.is_empty() {
        let _ = writeln!(out, "  choke points: {}", s.choke_points.join(" → "));
    }
    let d = &s.drawing;
    let _ = writeln!(out, "  drawing: {}", d.summary());
    for o in &d.overridden {
        let _ = writeln!(out, "  hint of {}: {}", o.id, o.why);
    }
    if let Some(d) = &s.difficulty {
        let level = |l: &zonegraph_core::difficulty::LevelDifficulty| {
            format!(
                "level {} wins {:.1}% ({:.2} wounds expected)",
                l.level,
                l.win_chance * 100.0,
                l.expected_wounds
            )
        };
        let _ = writeln!(
            out,
            "  difficulty on the best route: {}; {}",
            level(&d.min_level),
            level(&d.max_level)
        );
    }
    for l in &s.locks {
        let _ = write!(out, "  lock {} → {}: {}", l.from, l.to, l.requirement);
        if let Some(by) = &l.by_modifier {
            let chances: Vec<String> = by
                .iter()
                .map(|m| format!("{:+} {:.0}%", m.modifier, m.chance * 100.0))
                .collect();
            let _ = write!(out, "; pass chance by modifier: {}", chances.join(", "));
        }
        if let Some(by) = &l.by_level {
            let first_pass = by.iter().find(|p| p.passes).map(|p| p.level);
            match first_pass {
                Some(level) => {
                    let _ = write!(out, "; passes from level {level}");
                }
                None => {
                    let _ = write!(out, "; no level in the zone's range passes");
                }
            }
        }
        if let Some(note) = &l.note {
            let _ = write!(out, "; {note}");
        }
        out.push('\n');
    }
}
