//! zonegraph-server: the shell around zonegraph-core that reads files, terminals, SQLite and
//! the network. It hosts the CLI (`check`, `diff`, `explain`, `insight`, `review`, `play`, `schema`, `serve`, `migrate`,
//! `char`, `import`, `zones`, `token`; `gogobee` reads gogobee's Go zone sources for `import`) and the bot's server (`db`, `store`, `http`, `serve`; `matrix`, the Matrix
//! transport); `main.rs` only parses the command line, so tests drive the same code in memory.

pub mod catalog;
pub mod character;
pub mod check;
pub mod client;
pub mod db;
pub mod diff;
pub mod events_out;
pub mod explain;
pub mod gogobee;
pub mod host;
pub mod http;
pub mod import;
pub mod insight;
#[cfg(feature = "matrix")]
pub mod matrix;
pub mod migrate;
pub mod openapi;
pub mod play;
pub mod review;
pub mod serve;
pub mod service;
pub mod store;
pub mod streams;
pub mod takeover;
pub mod token_admin;
pub mod tokens;
pub mod zone_admin;
pub mod zones;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "zonegraph",
    version,
    about = "Branching dungeon zones for chat games"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Cmd,
}

#[derive(Debug, Subcommand)]
pub enum Cmd {
    /// Validate and lint zone files (files or directories of *.json), like a compiler.
    Check(check::Args),
    /// What changing one version of a zone file into another does: rooms, passages and locks,
    /// routes, the longest route, choke points, win odds and findings, before and after.
    Diff(diff::Args),
    /// What players do in a zone version: reach and drop-off per room, the split at forks,
    /// each lock's pass rate against the rules' prediction, routes, the win rate.
    Insight(insight::Args),
    /// What publishing a new version would do, against a database: the change, the players
    /// in the zone now, and the stored runs replayed on it.
    Review(review::Args),
    /// Explain a finding's code (`soft_lock`): what it means, an example and the fix.
    Explain(explain::Args),
    /// Play a zone in the terminal with the bot's command words.
    Play(play::Args),
    /// Print the JSON Schema of the zone file format.
    Schema,
    /// Run the bot's server: SQLite, the HTTP API, the run-map viewer.
    Serve(Box<serve::Args>),
    /// Migrate a database to the current schema (and drop the legacy columns).
    Migrate(migrate::Args),
    /// Show or set a user's character sheet on a database (the admins' `!char set`).
    Char(character::Args),
    /// Import zones from another game's sources into checked zone files.
    Import(import::Args),
    /// The zones a database serves and their versions; withdraw a zone.
    Zones(zone_admin::Args),
    /// The API's scoped tokens: make one (publish, transport:PREFIX, admin), list, revoke.
    Token(token_admin::Args),
}

/// Runs a parsed command line; errors become exit code 2 with the message on stderr.
pub fn run(cli: Cli) -> ExitCode {
    let result = match cli.command {
        Cmd::Check(args) => check::run(&args),
        Cmd::Diff(args) => diff::run(&args),
        Cmd::Explain(args) => explain::run(&args),
        Cmd::Insight(args) => insight::run(&args),
        Cmd::Review(args) => review::run(&args),
        Cmd::Play(args) => play::run(&args),
        Cmd::Serve(args) => serve::run(&args),
        Cmd::Migrate(args) => migrate::run(&args),
        Cmd::Char(args) => character::run(&args),
        Cmd::Import(args) => import::run(&args),
        Cmd::Zones(args) => zone_admin::run(&args),
        Cmd::Token(args) => token_admin::run(&args),
        Cmd::Schema => {
            print!("{}", zonegraph_core::format::json_schema());
            Ok(ExitCode::SUCCESS)
        }
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}
