//! The `zonegraph` binary: a thin shell over zonegraph-core.
fn main() {}
