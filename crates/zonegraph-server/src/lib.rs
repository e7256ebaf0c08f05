//! zonegraph-server: the shell around zonegraph-core that reads files, terminals, a database
//! and the network. Its layers, from the edge inwards:
//!
//! - `cli`: the command line (the only module that knows the argument parser), one thin file
//!   per subcommand; `main.rs` only calls [`cli::main`], so tests drive the same code in
//!   memory.
//! - `server`: a running `zonegraph serve` (configuration, spawning, the zone watcher, the
//!   accept loop); the transports `http` and `matrix` reach the game only through
//!   `service`.
//! - `store`: commands, compare-and-set and the sweep over `db` (SQLite or PostgreSQL), with
//!   the zones served by `catalog`, the live feeds of `streams`, the API's `tokens`, a host
//!   game's hook (`host`) and outbox (`events_out`).
//! - `gogobee`: reading gogobee's Go zone sources for `import`, and taking over its database.
//! - Shared small owners: `logging` (the process's log: `tracing` events, text or JSON
//!   lines), `clock` (the time), `secret` (a value kept out of logs), `zones` (zone files on
//!   disk), `openapi`, `metrics` (the Prometheus metrics `/metrics` serves).

pub mod cli;
pub mod clock;
pub mod db;
pub mod events_out;
pub mod gogobee;
pub mod host;
pub mod http;
pub mod logging;
#[cfg(feature = "matrix")]
pub mod matrix;
pub mod metrics;
pub mod openapi;
pub mod private;
pub mod secret;
pub mod server;
pub mod service;
pub mod store;
pub mod streams;
pub mod tokens;
pub mod zones;
