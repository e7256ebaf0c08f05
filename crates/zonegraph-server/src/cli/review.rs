//! `zonegraph review --db … ZONE NEW [--json]`: what publishing `NEW` over the zone's served
//! version would do ([`crate::store::review`]), the change worded as `zonegraph diff` words
//! it. Nothing is written.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context as _, Result};

use crate::db;
use crate::store::review::{Unreviewable, of_database};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub db: super::args::DbArg,
    /// The zone as served now.
    pub zone: String,
    /// The version to publish (a zone file).
    pub new: PathBuf,
    /// The whole result as JSON (`version`, `impact`, `players`, `replay`, `left_out`,
    /// `words`).
    #[arg(long)]
    pub json: bool,
    /// How many ended runs to replay: the most recent.
    #[arg(long, default_value_t = crate::store::review::REVIEW_RUNS)]
    pub runs: usize,
}

/// Exit code 0 when nothing changes, 1 when something does (as `diff`), 2 on an error.
pub fn run(args: &Args) -> Result<ExitCode> {
    let db = db::Database::open_existing(&args.db.at)?;
    let text = std::fs::read_to_string(&args.new)
        .with_context(|| format!("cannot read {}", args.new.display()))?;
    let found = match of_database(&db, &args.zone, &text, args.runs, &|| false)? {
        Ok(found) => found,
        Err(Unreviewable::NoZone) => {
            eprintln!("zonegraph: no zone {:?} in this database", args.zone);
            return Ok(ExitCode::from(2));
        }
        Err(Unreviewable::BadFile(why)) => {
            eprintln!("zonegraph: {}: {why}", args.new.display());
            return Ok(ExitCode::from(2));
        }
        Err(Unreviewable::Stopped | Unreviewable::Busy) => {
            unreachable!("nothing stops or holds a review on the command line")
        }
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&found)?);
    } else {
        print!("{}", super::diff::words(&found.impact));
        println!();
        for line in &found.words {
            println!("{line}");
        }
    }
    let same = found.impact.renamed.is_empty() && found.impact.changes.is_empty();
    Ok(if same {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
