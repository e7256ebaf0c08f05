//! The workspace's one integration-test binary.

mod map;
