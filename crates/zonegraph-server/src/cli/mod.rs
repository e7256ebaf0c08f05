//! The command line: the only module that knows the argument parser (clap). [`Cli`] and
//! [`Cmd`] name the subcommands, [`run`] dispatches them and turns errors into
//! [`EXIT_ERROR`]; the arguments several commands share (the database, durations, scores,
//! rates, the log's `--log` and `--log-format`) live in `args`, each with its default
//! written once. Each subcommand is a file of its own that turns its arguments into calls of
//! the library.

pub mod args;
pub mod character;
pub mod check;
pub mod diff;
pub mod events;
pub mod explain;
pub mod import;
pub mod insight;
pub mod migrate;
pub mod play;
pub mod review;
pub mod serve;
pub mod token;
pub mod zones;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// The exit code of a command that could not run (bad arguments, an unreadable file, a
/// database that cannot be opened): the message goes to stderr.
pub const EXIT_ERROR: u8 = 2;

#[derive(Debug, Parser)]
#[command(
    name = "zonegraph",
    version,
    about = "Branching dungeon zones for chat games"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Cmd,
    #[command(flatten)]
    pub log: args::LogArgs,
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
    Zones(zones::Args),
    /// The API's scoped tokens: make one (publish, transport:PREFIX, admin), list, revoke.
    Token(token::Args),
    /// The events outbox (`serve --events-url`): list the events given up.
    Events(events::Args),
}

/// The `zonegraph` binary: parses the process's command line and runs it.
pub fn main() -> ExitCode {
    run(Cli::parse())
}

/// Runs a parsed command line, its log set up first (see [`crate::logging`]); errors become
/// [`EXIT_ERROR`] with the message on stderr.
pub fn run(cli: Cli) -> ExitCode {
    if let Err(e) = crate::logging::init(&cli.log.settings()) {
        eprintln!("error: {e}");
        return ExitCode::from(EXIT_ERROR);
    }
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
        Cmd::Zones(args) => zones::run(&args),
        Cmd::Token(args) => token::run(&args),
        Cmd::Events(args) => events::run(&args),
        Cmd::Schema => {
            print!("{}", zonegraph_core::format::json_schema());
            Ok(ExitCode::SUCCESS)
        }
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(EXIT_ERROR)
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_command_line_is_valid() {
        use clap::CommandFactory as _;
        super::Cli::command().debug_assert();
    }

    /// `--log` and `--log-format` are taken by every subcommand, before or after its name;
    /// a filter that is none is refused before anything runs.
    #[test]
    fn the_log_flags_go_with_every_subcommand() {
        use clap::Parser as _;

        use crate::logging::LogFormat;
        let parse = |argv: &[&str]| super::Cli::try_parse_from(argv).map(|c| c.log.settings());
        let s = parse(&[
            "zonegraph",
            "serve",
            "--log-format",
            "json",
            "--log",
            "debug",
        ])
        .expect("serve's log flags");
        assert_eq!((s.filter.as_str(), s.format), ("debug", LogFormat::Json));
        let s = parse(&[
            "zonegraph",
            "--log",
            "zonegraph_server=debug",
            "check",
            "zones",
        ])
        .expect("the log flags before the subcommand");
        assert_eq!(s.filter, "zonegraph_server=debug");
        assert!(parse(&["zonegraph", "serve", "--log", "zonegraph_server=loud"]).is_err());
        assert!(parse(&["zonegraph", "serve", "--log-format", "xml"]).is_err());
    }
}
