//! The workspace's one integration-test binary.

mod cli;
mod difficulty;
mod element;
mod engine;
mod explain;
mod format;
mod host;
mod import;
mod insight;
mod map;
mod matrix;
mod matrix_takeover;
mod modules;
mod player_view;
mod postgres;
mod server;
mod storage;
mod support;
mod validate;
mod world;
