//! `zonegraph zones`: an operator lists the zones a database serves with their versions, a
//! zone's history, and withdraws a zone (on every instance of that database).

use std::process::ExitCode;

use anyhow::Result;

use crate::db;
use crate::store::catalog::{Author, Catalog, Refused};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub db: super::args::DbArg,
    #[command(subcommand)]
    pub action: Action,
}

#[derive(Debug, clap::Subcommand)]
pub enum Action {
    /// The zones served, each with its version.
    List,
    /// Every version of a zone, oldest first.
    History { zone: String },
    /// Withdraw a zone: no new run starts there, on any instance. Refused while players
    /// have runs there unless --force; then each is told, and their runs go on to their end.
    Withdraw {
        zone: String,
        #[arg(long)]
        force: bool,
    },
}

fn line(v: &db::VersionRow) -> String {
    let what = if v.withdrawn {
        "withdrawn".to_string()
    } else {
        format!("sha256 {}", &v.content_hash[..v.content_hash.len().min(12)])
    };
    format!(
        "version {:>4}  {}  {what}  {} by {} on {}",
        v.seq,
        crate::clock::utc(v.created_at_ms),
        v.source,
        v.made_by,
        v.instance
    )
}

pub fn run(args: &Args) -> Result<ExitCode> {
    let db = db::Database::open_existing(&args.db.at)?;
    match &args.action {
        Action::List => {
            let catalog = Catalog::of_database(&db)?;
            let served = catalog.served();
            for z in served.zones.iter() {
                let v = &served.versions[&z.id];
                println!("{:<24} {}", z.id, line(v));
            }
            println!(
                "{} zones served (sequence {})",
                served.zones.len(),
                served.sequence
            );
            Ok(ExitCode::SUCCESS)
        }
        Action::History { zone } => {
            let list = Catalog::history(&db, zone)?;
            if list.is_empty() {
                eprintln!("no zone {zone:?} in this database");
                return Ok(ExitCode::FAILURE);
            }
            for v in &list {
                let kept = if v.has_file || v.withdrawn {
                    ""
                } else {
                    "  (file pruned)"
                };
                println!("{}{kept}", line(v));
            }
            Ok(ExitCode::SUCCESS)
        }
        Action::Withdraw { zone, force } => {
            let catalog = Catalog::of_database(&db)?;
            let by = Author {
                source: "zonegraph zones withdraw".into(),
                made_by: crate::store::catalog::operator_name(),
            };
            match catalog.withdraw(&db, zone, *force, &by)? {
                Ok(w) => {
                    println!(
                        "withdrew zone {} (version {}); {} player(s) told; {} zones served; \
                         running instances follow within a second",
                        w.zone_id, w.seq, w.players_told, w.zones
                    );
                    Ok(ExitCode::SUCCESS)
                }
                Err(Refused::Unknown(id)) => {
                    eprintln!("no zone {id:?} is served; nothing was changed");
                    Ok(ExitCode::FAILURE)
                }
                Err(Refused::Active { zone_id, players }) => {
                    eprintln!(
                        "{players} player(s) have a run in zone {zone_id:?}: pass --force to \
                         withdraw it and tell them (their runs go on to their end); nothing \
                         was changed"
                    );
                    Ok(ExitCode::FAILURE)
                }
                Err(Refused::Findings(checked)) => {
                    let mut out = String::new();
                    for c in checked.iter().filter(|c| c.has_errors()) {
                        crate::zones::write_findings(&mut out, c);
                    }
                    eprintln!(
                        "the other zones have errors without {zone}; nothing was changed:\n{}",
                        out.trim_end()
                    );
                    Ok(ExitCode::FAILURE)
                }
                Err(other) => anyhow::bail!("refused: {other:?}"),
            }
        }
    }
}
