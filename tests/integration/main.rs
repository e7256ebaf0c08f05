//! The workspace's one integration-test binary.

mod cli;
mod engine;
mod format;
mod map;
mod server;
mod validate;
