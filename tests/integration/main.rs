//! The workspace's one integration-test binary.

mod cli;
mod engine;
mod format;
mod map;
mod matrix;
mod player_view;
mod server;
mod storage;
mod validate;
