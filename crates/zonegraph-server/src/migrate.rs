//! `zonegraph migrate`: brings a database (new, or gogobee's at any stage of its schema) to the
//! current schema, carries gogobee's runs over (`crate::db::warm_up_legacy`), lists the rows it
//! cannot carry and still succeeds, and with `--purge-legacy` drops the old `current_room` and
//! `room_seq_json` columns once no reader needs them.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;

use crate::db;
use crate::store;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The SQLite database.
    #[arg(long)]
    pub db: PathBuf,
    /// Import the zones of this directory first (validated; errors refuse), so legacy runs
    /// of zones not yet in the database can be warmed up.
    #[arg(long)]
    pub zones: Option<PathBuf>,
    /// Drop dnd_zone_run.current_room and room_seq_json once every run is warmed up.
    #[arg(long)]
    pub purge_legacy: bool,
}

/// Runs the migration and prints what it did.
pub fn run(args: &Args) -> Result<ExitCode> {
    print!("{}", migrate(args)?);
    Ok(ExitCode::SUCCESS)
}

/// Does the work of [`run`] and returns its report.
pub fn migrate(args: &Args) -> Result<String> {
    let mut out = String::new();
    let mut conn = db::open(&args.db)?;
    let before = db::user_version(&conn)?;
    db::migrate(&mut conn)?;
    let after = db::user_version(&conn)?;
    out.push_str(&format!(
        "{}: schema {before} -> {after}\n",
        args.db.display()
    ));
    if let Some(dir) = &args.zones {
        let (files, warnings) = store::read_zone_dir(dir)?;
        for w in warnings {
            eprintln!("zonegraph: {w}");
        }
        db::import_zones(&mut conn, &files, store::now_ms())?;
        out.push_str(&format!(
            "imported {} zones from {}\n",
            files.len(),
            dir.display()
        ));
    }
    let zones = db::load_zones(&conn)?;
    let warm = db::warm_up_legacy(&mut conn, &zones, store::now_ms())?;
    for line in warm.report() {
        out.push_str(&line);
        out.push('\n');
    }
    if args.purge_legacy {
        if db::purge_legacy(&mut conn)? {
            out.push_str("dropped the legacy columns current_room and room_seq_json\n");
        } else {
            out.push_str("the legacy columns are already gone\n");
        }
    }
    Ok(out)
}
