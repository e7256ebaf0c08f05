//! `zonegraph events`: the outbox of `serve --events-url` on the database every instance
//! shares: the events given up (the dead letters), and how many still wait.

use std::process::ExitCode;

use anyhow::Result;

use crate::db;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub db: super::args::DbArg,
    #[command(subcommand)]
    pub action: Action,
}

#[derive(Debug, clap::Subcommand)]
pub enum Action {
    /// The events given up, newest first: id, user, zone, attempts, why, when, last error.
    Dead {
        /// How many to list.
        #[arg(long, default_value_t = 100)]
        limit: i64,
        /// One JSON object a line, each with its event, as it would have been sent.
        #[arg(long)]
        json: bool,
    },
}

pub fn run(args: &Args) -> Result<ExitCode> {
    let db = db::Database::open_existing(&args.db.at)?;
    match &args.action {
        Action::Dead { limit, json } => {
            let limit = (*limit).max(0);
            let (dead, count, (waiting, _)) = db.read(|tx| {
                Ok((
                    tx.dead_events(limit)?,
                    tx.dead_event_count()?,
                    tx.events_waiting()?,
                ))
            })?;
            for d in &dead {
                if *json {
                    println!("{}", dead_json(d));
                } else {
                    let e = &d.event;
                    println!(
                        "event {:<8} {:<24} {:<20} {:>3} attempts  {:<28} {}  {}",
                        e.id,
                        e.user,
                        e.zone_id,
                        e.attempts,
                        d.cause,
                        crate::clock::utc(d.dead_at_ms),
                        if d.last_error.is_empty() {
                            "(never tried)"
                        } else {
                            &d.last_error
                        }
                    );
                }
            }
            eprintln!(
                "{count} event(s) given up, the newest {} listed; {waiting} event(s) waiting to \
                 be sent",
                dead.len()
            );
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// A dead letter as a line of JSON: the body it would have been sent with, and why it was not.
fn dead_json(d: &db::DeadEvent) -> serde_json::Value {
    let e = &d.event;
    let event = serde_json::from_str::<serde_json::Value>(&e.event_json)
        .unwrap_or_else(|_| serde_json::Value::String(e.event_json.clone()));
    serde_json::json!({
        "id": e.id,
        "user": e.user,
        "zone_id": e.zone_id,
        "run_token": e.run_token,
        "at_ms": e.created_at_ms,
        "event": event,
        "attempts": e.attempts,
        "cause": d.cause.code(),
        "last_error": d.last_error,
        "dead_at_ms": d.dead_at_ms,
    })
}
