//! The core's integration tests: the zone format, validation, the engine and its chat
//! words, maps, difficulty, insight and the player view, each driven through the public API
//! on the shipped zones and on generated ones. They build the core alone; what needs the
//! server (its command line, its HTTP API) is in the workspace's `tests/` binary.

// The core's clippy.toml keeps its code on one shared sort to keep the wasm small; these
// tests are never built for wasm.
#![allow(clippy::disallowed_methods)]

mod difficulty;
mod engine;
mod format;
mod insight;
mod leaks;
mod map;
mod player_view;
mod support;
mod validate;
