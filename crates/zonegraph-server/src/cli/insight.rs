//! Play insight from a database (`zonegraph insight --db … ZONE`, `GET
//! /api/zones/{zone_id}/insight`): one zone version's stored runs read by
//! [`zonegraph_core::insight`], the version's own file as the model. No player id is read
//! out of the runs, and none is written.

use std::fmt::Write as _;
use std::process::ExitCode;

use anyhow::{Result, bail};
use serde::Serialize;
use zonegraph_core::insight::{Insight, Outcomes, insight};

use crate::db;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub db: db::DbArg,
    /// The zone.
    pub zone: String,
    /// The zone version (its sequence number, `zonegraph zones history ZONE`); the newest
    /// by default.
    #[arg(long)]
    pub version: Option<i64>,
    /// Only runs started on or after this day (YYYY-MM-DD, UTC).
    #[arg(long, value_parser = parse_day)]
    pub since: Option<i64>,
    /// The whole result as JSON.
    #[arg(long)]
    pub json: bool,
}

/// A version's insight, with which version it is.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct VersionInsight {
    pub version: i64,
    #[serde(flatten)]
    pub insight: Insight,
}

/// The insight of `zone_id`'s version `version` (the newest not withdrawn when `None`) from
/// runs started at or after `since`; `None` when the database has no such zone or version.
pub fn of_database(
    db: &db::Database,
    zone_id: &str,
    version: Option<i64>,
    since: i64,
) -> Result<Option<VersionInsight>> {
    let versions = db.read(|tx| tx.versions_of(zone_id))?;
    let row = match version {
        Some(v) => versions.iter().find(|r| r.seq == v && !r.withdrawn),
        None => versions.iter().rev().find(|r| !r.withdrawn),
    };
    let Some(row) = row else {
        return Ok(None);
    };
    let seq = row.seq;
    let Some(text) = db.read(|tx| tx.version_file(seq))? else {
        bail!("version {seq} of {zone_id} has no file in the database");
    };
    let (zone, _) = zonegraph_core::zone::load(&text)
        .map_err(|e| anyhow::anyhow!("version {seq} of {zone_id}: {}", e.located()))?;
    let runs = db.read(|tx| tx.version_runs(zone_id, seq, since))?;
    Ok(Some(VersionInsight {
        version: seq,
        insight: insight(&zone, &runs),
    }))
}

pub fn run(args: &Args) -> Result<ExitCode> {
    let db = db::Database::open_existing(&args.db.at)?;
    let Some(found) = of_database(&db, &args.zone, args.version, args.since.unwrap_or(0))? else {
        match args.version {
            Some(v) => eprintln!("zonegraph: no version {v} of zone {:?}", args.zone),
            None => eprintln!("zonegraph: no zone {:?} in this database", args.zone),
        }
        return Ok(ExitCode::from(2));
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&found)?);
    } else {
        print!("{}", words(&found));
    }
    Ok(ExitCode::SUCCESS)
}

/// `YYYY-MM-DD` as Unix milliseconds at 00:00 UTC.
pub fn parse_day(s: &str) -> Result<i64, String> {
    let bad = || format!("{s:?} is not a day: write YYYY-MM-DD (UTC), as 2026-12-01");
    let parts: Vec<&str> = s.trim().split('-').collect();
    let [y, m, d] = parts.as_slice() else {
        return Err(bad());
    };
    let (y, m, d): (i64, i64, i64) = (
        y.parse().map_err(|_| bad())?,
        m.parse().map_err(|_| bad())?,
        d.parse().map_err(|_| bad())?,
    );
    if !(1970..=9999).contains(&y) || !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        return Err(bad());
    }
    // Days from the civil date (Howard Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    Ok((era * 146_097 + doe - 719_468) * 86_400_000)
}

fn pct(x: Option<f64>) -> String {
    x.map_or_else(|| "-".to_string(), |x| format!("{:.1} %", x * 100.0))
}

fn outcomes(o: &Outcomes) -> String {
    let said: Vec<String> = o
        .each()
        .iter()
        .filter(|(_, c)| c.0 > 0)
        .map(|(s, c)| format!("{} {c}", s.name()))
        .collect();
    if said.is_empty() {
        "-".into()
    } else {
        said.join(", ")
    }
}

/// The insight as a designer reads it.
pub fn words(v: &VersionInsight) -> String {
    let i = &v.insight;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} version {}: {} runs ({})",
        i.zone_id,
        v.version,
        i.runs,
        outcomes(&i.outcomes)
    );
    let _ = writeln!(
        out,
        "win rate: observed {} of {} ended runs; the model says {} for levels {:?}",
        pct(i.win.observed),
        i.win.ended,
        pct(i.win.predicted),
        i.win.levels
    );
    out.push_str("\nrooms (reached; ended or standing there; timed out):\n");
    for r in &i.rooms {
        let _ = writeln!(
            out,
            "  {:<36} {:>7}   {}{}",
            r.id,
            r.reached.to_string(),
            outcomes(&r.ended_here),
            if r.timed_out.0 > 0 {
                format!("; way out taken by the fork timeout {}", r.timed_out)
            } else {
                String::new()
            }
        );
    }
    if !i.forks.is_empty() {
        out.push_str("\nforks (ways taken):\n");
    }
    for f in &i.forks {
        let _ = writeln!(out, "  {} (met {}):", f.at, f.met);
        for w in &f.ways {
            let _ = writeln!(
                out,
                "    -> {:<32} {:>7}  {:>8}{}",
                w.to,
                w.taken.to_string(),
                pct(w.share),
                if w.picked.0 > 0 {
                    format!("  (picked by the timeout: {})", w.picked)
                } else {
                    String::new()
                }
            );
        }
    }
    if !i.locks.is_empty() {
        out.push_str("\nlocks (passed of met; observed against the rules' prediction):\n");
    }
    for l in &i.locks {
        let interval = l.interval.map_or_else(
            || "-".to_string(),
            |[lo, hi]| format!("{:.1}–{:.1} %", lo * 100.0, hi * 100.0),
        );
        let _ = writeln!(
            out,
            "  {} -> {} ({}): {} of {}, observed {}, predicted {} (95 %: {}){}",
            l.from,
            l.to,
            l.kind.as_str(),
            l.passed,
            l.met,
            pct(l.observed),
            pct(l.predicted),
            interval,
            if l.flagged {
                "  FLAGGED: play and the rules disagree"
            } else {
                ""
            }
        );
    }
    if !i.routes.is_empty() {
        out.push_str("\nroutes of the ended runs:\n");
    }
    for r in &i.routes {
        let _ = writeln!(
            out,
            "  {:>7}  {:>8}  won {}: {}",
            r.runs.to_string(),
            pct(r.share),
            r.won,
            r.rooms.join(" → ")
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_are_utc_midnights_and_anything_else_is_refused() {
        assert_eq!(parse_day("1970-01-01"), Ok(0));
        assert_eq!(parse_day("2026-12-03"), Ok(1_796_256_000_000));
        assert_eq!(parse_day("2000-03-01"), Ok(951_868_800_000));
        for bad in ["", "2026-13-01", "2026-1", "yesterday", "2026-12-03T00:00"] {
            assert!(parse_day(bad).is_err(), "{bad}");
        }
    }
}
