//! `zonegraph migrate`: brings a database (new, or gogobee's at any stage of its schema) to the
//! current schema, carries gogobee's runs over (`crate::db::warm_up_legacy`), lists the rows it
//! cannot carry and still succeeds, and with `--purge-legacy` drops the old `current_room` and
//! `room_seq_json` columns once no reader needs them. With `--from sqlite:PATH --to
//! postgres://…` it does the same to the SQLite file, then copies all of it into an empty
//! PostgreSQL database and checks the row counts (`crate::db::copy`).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Result, bail};

use crate::db;

/// `Debug` shows a PostgreSQL URL without its password ([`db::DbAt`]'s own `Debug`).
#[derive(Debug, clap::Args)]
pub struct Args {
    // Not `DbArg`: this one is SQLite only, has no default (or --from stands in) and leaves
    // ZONEGRAPH_DATABASE_URL to --to.
    /// The SQLite database.
    #[arg(long, required_unless_present = "from", conflicts_with_all = ["from", "to"])]
    pub db: Option<PathBuf>,
    /// Copy this SQLite database (`sqlite:PATH`; migrated first) …
    #[arg(long, value_name = "sqlite:PATH", requires = "to")]
    pub from: Option<String>,
    /// … into this empty PostgreSQL database (a postgres:// URL; prefer
    /// ZONEGRAPH_DATABASE_URL for one with a password).
    #[arg(
        long,
        value_name = "postgres://…",
        env = "ZONEGRAPH_DATABASE_URL",
        hide_env_values = true,
        value_parser = |s: &str| Ok::<_, std::convert::Infallible>(db::DbAt::parse(s))
    )]
    pub to: Option<db::DbAt>,
    /// Import the zones of this directory first (validated; errors refuse), so legacy runs
    /// of zones not yet in the database can be warmed up.
    #[arg(long)]
    pub zones: Option<PathBuf>,
    /// Drop dnd_zone_run.current_room and room_seq_json once every run is warmed up.
    #[arg(long)]
    pub purge_legacy: bool,
    /// Rehearse: do every step on a copy of the database and report what it would change;
    /// the database itself is only read.
    #[arg(long, conflicts_with_all = ["from", "to"])]
    pub dry_run: bool,
}

/// Runs the migration and prints what it did.
pub fn run(args: &Args) -> Result<ExitCode> {
    print!("{}", migrate(args)?);
    Ok(ExitCode::SUCCESS)
}

/// Does the work of [`run`] and returns its report.
pub fn migrate(args: &Args) -> Result<String> {
    if args.dry_run {
        return rehearse(args);
    }
    let path = match (&args.db, &args.from) {
        (Some(db), _) => db.clone(),
        (None, Some(from)) => match from.strip_prefix("sqlite:") {
            Some(p) if !p.is_empty() => PathBuf::from(p),
            _ => bail!("--from {from:?}: give the SQLite database as sqlite:PATH"),
        },
        (None, None) => bail!("give --db PATH, or --from sqlite:PATH --to postgres://…"),
    };
    let to = match (&args.from, &args.to) {
        (Some(_), Some(to)) => {
            let db::DbAt::Postgres(url) = to else {
                bail!("--to must be a PostgreSQL URL (postgres://user@host/dbname)")
            };
            Some(url.clone())
        }
        (Some(_), None) => bail!("--from needs --to postgres://… (or ZONEGRAPH_DATABASE_URL)"),
        _ => None,
    };
    if args.from.is_some() && !path.is_file() {
        bail!("no SQLite database at {}", path.display());
    }
    let mut out = String::new();
    let mut conn = db::open(&path)?;
    let before = db::user_version(&conn)?;
    db::migrate(&mut conn)?;
    let after = db::user_version(&conn)?;
    out.push_str(&format!("{}: schema {before} -> {after}\n", path.display()));
    let zones = match &args.zones {
        Some(dir) => {
            // The folder synced into the zone versions, as `serve` does at its start.
            let database = db::Database::open(&db::DbAt::Sqlite(path.clone()))?;
            let (catalog, synced) = crate::store::catalog::Catalog::open(&database, dir)?;
            for w in &synced.warnings {
                eprintln!("zonegraph: {w}");
            }
            for b in &synced.behind {
                eprintln!("zonegraph: {}", b.words());
            }
            out.push_str(&format!(
                "imported {} zone file{} from {} ({} zones served)\n",
                synced.imported.len(),
                if synced.imported.len() == 1 { "" } else { "s" },
                dir.display(),
                catalog.served().zones.len()
            ));
            catalog.served().zones.as_ref().clone()
        }
        None => db::Database::open(&db::DbAt::Sqlite(path.clone()))?
            .read(|tx| Ok(tx.table_zones()?.into_iter().map(|(_, z)| z).collect()))?,
    };
    let (rows, cold) = db::run_rows(&conn)?;
    out.push_str(&format!(
        "dnd_zone_run: {rows} row{}, {cold} without a graph position\n",
        if rows == 1 { "" } else { "s" }
    ));
    let warm = db::warm_up_legacy(&mut conn, &zones, crate::clock::now_ms())?;
    for line in warm.report() {
        out.push_str(&line);
        out.push('\n');
    }
    let carried = db::gogobee_characters_to_carry(&conn)?;
    if carried > 0 {
        out.push_str(&format!(
            "{carried} gogobee character{} will be carried over at their player's first command\n",
            if carried == 1 { "" } else { "s" }
        ));
    }
    if args.purge_legacy {
        if db::purge_legacy(&mut conn)? {
            out.push_str("dropped the legacy columns current_room and room_seq_json\n");
        } else {
            out.push_str("the legacy columns are already gone\n");
        }
    }
    if let Some(url) = to {
        let copied = db::copy::sqlite_to_postgres_at(&conn, &url)?;
        out.push_str(&format!(
            "copied into {} (row counts checked):\n",
            db::DbAt::parse(&url)
        ));
        for (table, n) in copied {
            out.push_str(&format!("  {table}: {n}\n"));
        }
    }
    Ok(out)
}

/// `--dry-run`: the same steps on a copy of the database (in the temporary directory, removed
/// after), reported as what they would do. The database is opened read-only.
fn rehearse(args: &Args) -> Result<String> {
    let Some(path) = &args.db else {
        bail!("--dry-run needs --db PATH");
    };
    if !path.is_file() {
        bail!("no SQLite database at {}", path.display());
    }
    let copy = std::env::temp_dir().join(format!("zonegraph-rehearsal-{}.db", db::random_hex()?));
    let report = db::copy_database(path, &copy).and_then(|()| {
        migrate(&Args {
            db: Some(copy.clone()),
            dry_run: false,
            from: None,
            to: None,
            zones: args.zones.clone(),
            purge_legacy: args.purge_legacy,
        })
    });
    // The copy's own copies (its first migration, its purge) go with it.
    for suffix in ["", "-wal", "-shm", ".pre-zonegraph.bak", ".pre-purge.bak"] {
        let mut name = copy.clone().into_os_string();
        name.push(suffix);
        let _ = std::fs::remove_file(name);
    }
    let report = report?;
    let shown = copy.display().to_string();
    let mut out = format!(
        "dry run: {} was only read; on a copy of it, the migration would do this:\n",
        path.display()
    );
    for line in report.lines() {
        out.push_str("  ");
        out.push_str(&line.replace(&shown, &path.display().to_string()));
        out.push('\n');
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use clap::Parser as _;

    /// The PostgreSQL URL's password stays out of `Debug`.
    #[test]
    fn debug_hides_the_password() {
        let argv = [
            "zonegraph",
            "migrate",
            "--from",
            "sqlite:z.db",
            "--to",
            "postgres://zg:db-s3cret@127.0.0.1/zg",
        ];
        let cli = crate::cli::Cli::try_parse_from(argv).expect("arguments");
        let crate::cli::Cmd::Migrate(args) = cli.command else {
            unreachable!("a migrate command")
        };
        let debug = format!("{args:?}");
        assert!(debug.contains("postgres://zg@127.0.0.1:5432/zg"), "{debug}");
        assert!(!debug.contains("s3cret"), "{debug}");
    }
}
