//! The `zonegraph` binary: parses the command line and hands it to the library.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    zonegraph_server::run(zonegraph_server::Cli::parse())
}
