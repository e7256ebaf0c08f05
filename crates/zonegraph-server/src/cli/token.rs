//! `zonegraph token`: an operator makes scoped API tokens (see [`crate::tokens`]), lists them
//! and revokes one, on the database every instance shares.

use std::process::ExitCode;

use anyhow::Result;

use crate::db;
use crate::tokens::{self, Scope};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub db: super::args::DbArg,
    #[command(subcommand)]
    pub action: Action,
}

#[derive(Debug, clap::Subcommand)]
pub enum Action {
    /// Make a token and print it (once: only its hash is kept). Scopes: publish (publishes
    /// and lists zones: the studio's Publish), transport:PREFIX (acts as the users whose id
    /// starts with PREFIX, never an --admin one), metrics (reads /metrics only), admin
    /// (everything).
    New {
        #[arg(long)]
        scope: Scope,
        /// What it is for, shown by `token list`.
        #[arg(long, default_value = "")]
        label: String,
    },
    /// Every token made: id, scope, label, when made, whether revoked.
    List,
    /// Revoke a token by its id (the 8 characters after `zgt_`): every instance refuses it
    /// within seconds.
    Revoke { token_id: String },
}

pub fn run(args: &Args) -> Result<ExitCode> {
    let db = db::Database::open_existing(&args.db.at)?;
    match &args.action {
        Action::New { scope, label } => {
            let (token, row) = tokens::make(scope, label, crate::clock::now_ms())?;
            db.write(move |tx| tx.add_api_token(&row), |_| true)?;
            eprintln!(
                "made a {scope} token; it is shown this once (only its hash is kept), and \
                 running instances take it at its first use:"
            );
            println!("{token}");
            Ok(ExitCode::SUCCESS)
        }
        Action::List => {
            let rows = db.read(|tx| tx.api_tokens())?;
            for r in &rows {
                let state = match r.revoked_at_ms {
                    Some(at) => format!("revoked {}", crate::clock::utc(at)),
                    None => "active".into(),
                };
                println!(
                    "zgt_{:<9} {:<24} made {}  {state}  {}",
                    r.token_id,
                    r.scope,
                    crate::clock::utc(r.created_at_ms),
                    r.label
                );
            }
            println!(
                "{} token(s), {} active (the operator's own token is not listed)",
                rows.len(),
                rows.iter().filter(|r| r.revoked_at_ms.is_none()).count()
            );
            Ok(ExitCode::SUCCESS)
        }
        Action::Revoke { token_id } => {
            let id = token_id
                .trim()
                .trim_start_matches(tokens::TOKEN_PREFIX)
                .split('_')
                .next()
                .unwrap_or_default()
                .to_string();
            let now = crate::clock::now_ms();
            let shown = id.clone();
            if db.write(move |tx| tx.revoke_api_token(&id, now), |done| *done)? {
                println!(
                    "revoked token zgt_{shown}; every instance refuses it within {} s",
                    tokens::REFRESH_EVERY.as_secs()
                );
                Ok(ExitCode::SUCCESS)
            } else {
                eprintln!(
                    "no active token zgt_{shown} (see zonegraph token list); nothing was changed"
                );
                Ok(ExitCode::FAILURE)
            }
        }
    }
}
