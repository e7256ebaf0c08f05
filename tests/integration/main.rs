//! The workspace's one integration-test binary.

mod cli;
mod engine;
mod format;
mod map;
mod matrix;
mod server;
mod validate;
