//! The workspace's one integration-test binary.
mod format;
mod validate;
