//! `zonegraph insight --db … ZONE`: a zone version's play insight
//! ([`crate::store::insight`]) in words or as JSON.

use std::fmt::Write as _;
use std::process::ExitCode;

use anyhow::Result;
use zonegraph_core::insight::sections;

use crate::clock::parse_day;
use crate::db;
use crate::store::insight::{VersionInsight, of_database};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub db: super::args::DbArg,
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

/// Runs `zonegraph insight`: the words, or the JSON with `--json`.
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

/// The insight as a designer reads it: the zone, then the core's sections
/// ([`zonegraph_core::insight::sections`], the editor's panel says the same), rooms by id.
pub fn words(v: &VersionInsight) -> String {
    let mut out = format!("{}\n", v.insight.zone_id);
    for (head, lines) in sections(v.version, &v.insight, &|id: &str| id.to_string()) {
        let _ = writeln!(out, "\n{head}");
        for line in lines {
            let _ = writeln!(out, "  {line}");
        }
    }
    out
}
