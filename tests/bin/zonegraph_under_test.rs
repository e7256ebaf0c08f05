//! The `zonegraph` command line as a binary of the test package, so integration tests can
//! run it as a real process (and kill it).

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    zonegraph_server::run(zonegraph_server::Cli::parse())
}
