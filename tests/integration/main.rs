//! The workspace's integration tests of the server, its command line and its transports (the
//! core's own are in `crates/zonegraph-core/tests/`, and build without the server).

mod cli;
mod element;
mod explain;
mod host;
mod import;
// The player-view checks the core's own tests use, so both check the same thing.
#[path = "../../crates/zonegraph-core/tests/integration/leaks.rs"]
mod leaks;
mod matrix;
mod matrix_takeover;
mod modules;
mod postgres;
mod private_files;
mod server;
mod storage;
mod support;
mod world;
