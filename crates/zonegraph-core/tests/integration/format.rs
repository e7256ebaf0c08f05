//! The zone file format: parsing errors and round-trips (the committed JSON Schema is the
//! command line's, checked in the workspace's `tests/`).

use proptest::prelude::*;
use zonegraph_core::format::{self, ZoneFile};
use zonegraph_core::{synth, zone};

use crate::support::zone_files;

/// Parses `text` and returns the located error message, or "ok".
fn parse_result(text: &str) -> String {
    match format::parse(text) {
        Ok(_) => "ok".into(),
        Err(e) => e.located(),
    }
}

fn check_parse(text: &str, expect: &str) {
    assert_eq!(parse_result(text), expect, "input: {text}");
}

const MINIMAL: &str = r#"{"format":1,"zone_id":"z","name":"Z","tier":1,"min_level":1,"max_level":3,
"nodes":[{"node_id":"z.a","kind":"entry","is_entry":true},{"node_id":"z.b","kind":"boss","is_boss":true}],
"edges":[{"from_node":"z.a","to_node":"z.b"}]}"#;

#[test]
fn parse_errors_say_where() {
    check_parse(MINIMAL, "ok");
    check_parse(
        &MINIMAL.replace(r#""kind":"entry""#, r#""kind":"entry","lable":"x""#),
        "line 2, column 48: at nodes[0].lable: unknown field `lable`, expected one of `node_id`, `kind`, `label`, `is_entry`, `is_boss`, `region_id`, `pos_x`, `pos_y`, `content`",
    );
    check_parse(
        &MINIMAL.replace(r#""kind":"boss""#, r#""kind":"dragon""#),
        "line 2, column 90: at nodes[1].kind: unknown variant `dragon`, expected one of `entry`, `exploration`, `trap`, `elite`, `boss`, `harvest`, `rest_camp`, `secret`, `fork`, `merge`",
    );
    check_parse(
        &MINIMAL.replace(r#""tier":1"#, r#""tier":"one""#),
        "line 1, column 49: at tier: invalid type: string \"one\", expected u8",
    );
    check_parse(
        &MINIMAL.replace("]}", "]"),
        "line 3, column 45: EOF while parsing an object",
    );
    check_parse(
        &MINIMAL.replace(r#""format":1"#, r#""format":2"#),
        "at format: unsupported format 2 (this zonegraph reads format 1)",
    );
    check_parse(
        &MINIMAL.replace(r#""edges""#, r#""room_kinds":["entry","boss"],"edges""#),
        "give either nodes and edges, or room_kinds, not both",
    );
    check_parse(
        r#"{"format":1,"zone_id":"z","name":"Z","tier":1,"min_level":1,"max_level":3,"nodes":[]}"#,
        "a zone needs both nodes and edges (or room_kinds for a linear zone)",
    );
    check_parse("", "line 1, column 0: EOF while parsing a value");
}

#[test]
fn schema_reference_is_allowed() {
    let text = MINIMAL.replacen('{', r#"{"$schema":"zone.schema.json","#, 1);
    check_parse(&text, "ok");
}

#[test]
fn legacy_room_kinds_compile_to_a_chain() {
    let text = r#"{"format":1,"zone_id":"old","name":"Old","tier":1,"min_level":1,"max_level":2,
        "room_kinds":["exploration","trap","elite","exploration"]}"#;
    let file = format::parse(text).expect("parses");
    let (z, diags) = zone::build(&file);
    assert!(diags.is_empty(), "{diags:?}");
    let ids: Vec<_> = z.node_indices().map(|i| z.node(i).id.to_string()).collect();
    assert_eq!(ids, ["old.r1", "old.r2", "old.r3", "old.r4"]);
    let first = z.node(z.entry().expect("entry"));
    assert_eq!((first.kind.as_str(), first.pos), ("entry", Some((0, 0))));
    let last = z.node(z.boss().expect("boss"));
    assert_eq!(
        (last.id.as_str(), last.kind.as_str(), last.pos),
        ("old.r4", "boss", Some((3, 0)))
    );
    assert_eq!(z.graph.edge_count(), 3);
}

#[test]
fn every_zone_file_round_trips() {
    let mut seen = 0;
    for path in zone_files("zones") {
        let name = path.to_string_lossy().to_string();
        let text = std::fs::read_to_string(&path).expect("read zone");
        let file = format::parse(&text).unwrap_or_else(|e| panic!("{name}: {}", e.located()));
        let again = format::parse(&format::to_pretty_json(&file)).expect("reparse");
        assert_eq!(file, again, "{name}");
        // The built graph converts back to an equivalent file (legacy zones become explicit).
        let (z, _) = zone::build(&file);
        let (z2, _) = zone::build(&z.to_file());
        assert_eq!(z.to_file(), z2.to_file(), "{name}");
        seen += 1;
    }
    assert!(seen >= 6, "expected the shipped zones, found {seen}");
}

proptest! {
    #[test]
    fn synthetic_zones_round_trip(rooms in 2usize..300, width in 1usize..9, seed in any::<u64>()) {
        let file = synth::layered("p", rooms, width, seed);
        let text = format::to_pretty_json(&file);
        let parsed: ZoneFile = format::parse(&text).expect("parses");
        prop_assert_eq!(&parsed, &file);
        let (z, diags) = zone::build(&parsed);
        prop_assert!(diags.is_empty(), "{:?}", diags);
        prop_assert_eq!(z.to_file(), file);
    }

    #[test]
    fn arbitrary_text_never_panics(text in ".{0,200}") {
        let _ = format::parse(&text);
    }

    #[test]
    fn mangled_zone_files_never_panic(cut in 0usize..400, insert in "[\\[\\]{}\",:0-9a-z ]{0,8}") {
        let mut text = MINIMAL.to_string();
        let at = cut.min(text.len());
        if text.is_char_boundary(at) {
            text.insert_str(at, &insert);
        }
        if let Ok(file) = format::parse(&text) {
            let _ = zone::build(&file);
        }
    }
}
