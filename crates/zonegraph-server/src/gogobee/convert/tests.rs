//! Unit tests of the importer's conversion: legacy room kinds and Go integer literals.

use zonegraph_core::format::NodeKind;

use super::consts::parse_int;
use super::legacy_kinds;

#[test]
fn legacy_zones_compile_as_gogobee_compiled_them() {
    use NodeKind::{Boss, Elite, Entry, Exploration as X, Trap};
    assert_eq!(legacy_kinds(0), vec![Entry, X, Trap, X, Elite, Boss]);
    assert_eq!(legacy_kinds(7), vec![Entry, X, Trap, X, X, Elite, Boss]);
    assert_eq!(legacy_kinds(8), vec![Entry, X, X, Trap, X, X, Elite, Boss]);
    assert_eq!(legacy_kinds(-3).len(), 6);
}

#[test]
fn go_integer_literals() {
    for (text, v) in [
        ("12", 12),
        ("0x1F", 31),
        ("0o17", 15),
        ("017", 15),
        ("0b101", 5),
        ("1_000", 1000),
        ("0", 0),
    ] {
        assert_eq!(parse_int(text), Some(v), "{text}");
    }
    assert_eq!(parse_int("08"), None);
}
