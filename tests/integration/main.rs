//! The workspace's one integration-test binary.

mod engine;
mod format;
mod map;
mod validate;
