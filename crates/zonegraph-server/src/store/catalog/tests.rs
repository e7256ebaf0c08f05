//! The catalog's rules, tested without a database.

use std::collections::BTreeSet;

use super::folder::{Fate, fate};
use super::*;

fn version(seq: i64, hash: &str, at: i64, withdrawn: bool) -> VersionRow {
    VersionRow {
        seq,
        zone_id: "z".into(),
        content_hash: hash.into(),
        withdrawn,
        source: "POST /api/zones".into(),
        made_by: "api".into(),
        instance: "a (pid 1)".into(),
        file_mtime_ms: None,
        created_at_ms: at,
        has_file: !withdrawn,
    }
}

#[test]
fn a_folder_file_is_imported_only_when_new_or_newer() {
    let known: BTreeSet<(String, String)> =
        [("z".into(), "old".into()), ("z".into(), "cur".into())]
            .into_iter()
            .collect();
    let cur = version(5, "cur", 1_000, false);
    // A new zone.
    assert_eq!(fate("z", "x", Some(1), None, &known), Fate::Import);
    // The version served.
    assert_eq!(fate("z", "cur", Some(1), Some(&cur), &known), Fate::Same);
    // An older version, however new the file looks (a checkout touches it).
    assert_eq!(
        fate("z", "old", Some(9_999), Some(&cur), &known),
        Fate::Behind { known: true }
    );
    // An edit never seen: newer than the version served, or not.
    assert_eq!(
        fate("z", "edit", Some(1_001), Some(&cur), &known),
        Fate::Import
    );
    assert_eq!(
        fate("z", "edit", Some(999), Some(&cur), &known),
        Fate::Behind { known: false }
    );
    assert_eq!(
        fate("z", "edit", None, Some(&cur), &known),
        Fate::Behind { known: false }
    );
    // A withdrawn zone: its old file stays out; an edit after the withdrawal brings it
    // back.
    let gone = version(6, "", 2_000, true);
    assert_eq!(
        fate("z", "cur", Some(9_999), Some(&gone), &known),
        Fate::Behind { known: true }
    );
    assert_eq!(
        fate("z", "edit", Some(2_001), Some(&gone), &known),
        Fate::Import
    );
}

#[test]
fn content_hashes_are_sha256_hex() {
    assert_eq!(
        content_hash(""),
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    );
}
