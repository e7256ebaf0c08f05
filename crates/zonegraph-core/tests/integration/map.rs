//! The grid layout and the chat `!zone map`.

use std::collections::BTreeSet;

use proptest::prelude::*;
use serde_json::{Value, json};
use zonegraph_core::layout::{Layout, LayoutMode, layout};
use zonegraph_core::map::{MAX_MAP_BYTES, MapOptions, MapView, NodeIndex, render_map};
use zonegraph_core::zone::{self, Zone};

use crate::support::zone_files;

const CRYPT: &str = include_str!("../../../../zones/crypt_valdris.json");

fn zone(text: &str) -> Zone {
    let (zone, diags) = zone::load(text).expect("fixture parses");
    assert!(diags.is_empty(), "fixture builds cleanly: {diags:?}");
    zone
}

fn zone_json(v: &Value) -> Zone {
    zone(&v.to_string())
}

fn ix(zone: &Zone, suffix: &str) -> NodeIndex {
    zone.node_index(&format!("{}.{suffix}", zone.id))
        .unwrap_or_else(|| panic!("no room {suffix}"))
}

/// A run view from room suffixes: the visited path (the last one is current), hidden rooms
/// and the pending fork's options.
fn run(zone: &Zone, path: &[&str], hidden: &[&str], options: &[&str]) -> MapView {
    let visited: Vec<NodeIndex> = path.iter().map(|s| ix(zone, s)).collect();
    MapView {
        current: visited.last().copied(),
        visited,
        hidden: hidden.iter().map(|s| ix(zone, s)).collect(),
        fork_options: options.iter().map(|s| ix(zone, s)).collect(),
        unknown: BTreeSet::new(),
    }
}

/// Renders and checks the invariants every map keeps.
fn map(zone: &Zone, view: &MapView) -> String {
    map_with(zone, view, &MapOptions::default())
}

fn map_with(zone: &Zone, view: &MapView, opts: &MapOptions) -> String {
    let text = render_map(zone, view, opts);
    check_text(&text);
    assert_eq!(text, render_map(zone, view, opts));
    text
}

fn check_text(text: &str) {
    assert!(text.len() < MAX_MAP_BYTES, "map is {} bytes", text.len());
    for line in text.lines() {
        assert_eq!(line, line.trim_end(), "trailing space in {line:?}");
    }
}

/// No two rooms share a cell; every room has one.
fn check_layout(zone: &Zone, l: &Layout) {
    assert_eq!(l.nodes.len(), zone.graph.node_count());
    let mut cells = BTreeSet::new();
    for n in &l.nodes {
        assert!(
            n.col < l.width && n.row < l.height,
            "{n:?} outside the grid"
        );
        assert!(cells.insert((n.col, n.row)), "two rooms in cell {n:?}");
    }
    assert_eq!(l.edges.len(), zone.graph.edge_count());
}

/// Every route starts and ends at its rooms' centres and crosses no other room's box (`±0.4`
/// columns, `±0.3` rows; each segment clipped against each box). Quadratic: for small zones.
fn check_routes(l: &Layout) {
    let cell = |id: &str| {
        l.nodes
            .iter()
            .find(|n| n.id == id)
            .map(|n| [f64::from(n.col), f64::from(n.row)])
            .expect("edge ends at a laid-out room")
    };
    for e in &l.edges {
        let (a, b) = (cell(&e.from), cell(&e.to));
        assert_eq!(e.points.first(), Some(&a), "{e:?}");
        assert_eq!(e.points.last(), Some(&b), "{e:?}");
        for seg in e.points.windows(2) {
            for n in &l.nodes {
                if n.id == e.from || n.id == e.to {
                    continue;
                }
                let c = [f64::from(n.col), f64::from(n.row)];
                assert!(!through_box(seg[0], seg[1], c), "{e:?} crosses room {n:?}");
            }
        }
    }
}

/// Whether segment `a`–`b` passes through the box 0.4 columns and 0.3 rows either side of
/// `c` (Liang–Barsky clipping).
fn through_box(a: [f64; 2], b: [f64; 2], c: [f64; 2]) -> bool {
    let (dx, dy) = (b[0] - a[0], b[1] - a[1]);
    let (mut t0, mut t1) = (0.0f64, 1.0f64);
    for (p, q) in [
        (-dx, a[0] - (c[0] - 0.4)),
        (dx, c[0] + 0.4 - a[0]),
        (-dy, a[1] - (c[1] - 0.3)),
        (dy, c[1] + 0.3 - a[1]),
    ] {
        if p.abs() < 1e-12 {
            if q <= 0.0 {
                return false;
            }
        } else if p < 0.0 {
            t0 = t0.max(q / p);
        } else {
            t1 = t1.min(q / p);
        }
    }
    t1 - t0 > 1e-9
}

fn crypt_without_hints() -> Zone {
    let mut v: Value = serde_json::from_str(CRYPT).expect("crypt is json");
    for n in v["nodes"].as_array_mut().expect("nodes") {
        let n = n.as_object_mut().expect("node");
        n.remove("pos_x");
        n.remove("pos_y");
    }
    zone_json(&v)
}

fn node(id: &str, kind: &str, label: &str) -> Value {
    let mut n = json!({ "node_id": id, "kind": kind, "label": label });
    if kind == "entry" {
        n["is_entry"] = json!(true);
    }
    if kind == "boss" {
        n["is_boss"] = json!(true);
    }
    n
}

fn edge(from: &str, to: &str) -> Value {
    json!({ "from_node": from, "to_node": to })
}

fn locked(from: &str, to: &str, kind: &str, data: Value, hint: &str) -> Value {
    json!({ "from_node": from, "to_node": to, "lock_kind": kind, "lock_data": data, "hint": hint })
}

fn file(id: &str, nodes: Vec<Value>, edges: Vec<Value>) -> Value {
    json!({
        "format": 1, "zone_id": id, "name": id.replace('_', " "), "tier": 2,
        "min_level": 1, "max_level": 10, "nodes": nodes, "edges": edges
    })
}

/// A well that loops back to the atrium (allow_loops), no hints.
fn loop_zone() -> Zone {
    let mut v = file(
        "sunken_well",
        vec![
            node("sunken_well.gate", "entry", "Moss Gate"),
            node("sunken_well.atrium", "exploration", "Atrium"),
            node("sunken_well.well", "harvest", "Well"),
            node("sunken_well.camp", "rest_camp", "Dry Ledge"),
            node("sunken_well.boss", "boss", "Drowned King"),
        ],
        vec![
            edge("sunken_well.gate", "sunken_well.atrium"),
            edge("sunken_well.atrium", "sunken_well.well"),
            edge("sunken_well.well", "sunken_well.atrium"),
            edge("sunken_well.well", "sunken_well.camp"),
            edge("sunken_well.camp", "sunken_well.boss"),
        ],
    );
    v["allow_loops"] = json!(true);
    zone_json(&v)
}

/// Every room kind and every lock kind, laid out by hints.
fn every_kind_zone() -> Zone {
    let at = |mut n: Value, x: i32, y: i32| {
        n["pos_x"] = json!(x);
        n["pos_y"] = json!(y);
        n
    };
    let mut entry = node("gallery.entry", "entry", "Gate of Every Kind");
    entry["content"] = json!({ "grants_key": "brass_key" });
    let v = file(
        "gallery",
        vec![
            at(entry, 1, 0),
            at(node("gallery.fork", "fork", "Six Doors"), 1, 1),
            at(node("gallery.hall", "exploration", "Plain Hall"), 0, 2),
            at(node("gallery.trap", "trap", "Needle Floor"), 1, 2),
            at(node("gallery.elite", "elite", "Champion's Pit"), 2, 2),
            at(node("gallery.harvest", "harvest", "Mushroom Grotto"), 3, 2),
            at(node("gallery.camp", "rest_camp", "Quiet Alcove"), 4, 2),
            at(node("gallery.secret", "secret", "Whisper Vault"), 5, 2),
            at(node("gallery.merge", "merge", "Meeting Stair"), 1, 3),
            at(node("gallery.boss", "boss", "The Curator"), 1, 4),
        ],
        vec![
            edge("gallery.entry", "gallery.fork"),
            edge("gallery.fork", "gallery.hall"),
            locked(
                "gallery.fork",
                "gallery.trap",
                "key_required",
                json!({"key_id": "brass_key"}),
                "A brass keyhole.",
            ),
            locked(
                "gallery.fork",
                "gallery.elite",
                "level_min",
                json!({"min_level": 3}),
                "Only the seasoned may pass.",
            ),
            locked(
                "gallery.fork",
                "gallery.harvest",
                "stat_check",
                json!({"stat": "str", "dc": 12}),
                "A rusted portcullis.",
            ),
            locked(
                "gallery.fork",
                "gallery.camp",
                "region_clear",
                json!({"region_id": "gallery"}),
                "Sealed until the gallery is clear.",
            ),
            locked(
                "gallery.fork",
                "gallery.secret",
                "perception_check",
                json!({"dc": 14}),
                "A draft under the tapestry.",
            ),
            edge("gallery.hall", "gallery.merge"),
            edge("gallery.trap", "gallery.merge"),
            edge("gallery.elite", "gallery.merge"),
            edge("gallery.harvest", "gallery.merge"),
            edge("gallery.camp", "gallery.merge"),
            edge("gallery.secret", "gallery.merge"),
            edge("gallery.merge", "gallery.boss"),
        ],
    );
    zone_json(&v)
}

/// Two regions; the second is opened by clearing the first.
fn two_region_zone() -> Zone {
    let in_region = |mut n: Value, r: &str| {
        n["region_id"] = json!(r);
        n
    };
    let mut v = file(
        "underdark",
        vec![
            in_region(node("underdark.entry", "entry", "Rope Descent"), "upper"),
            in_region(node("underdark.fork", "fork", "Fungal Crossroads"), "upper"),
            in_region(
                node("underdark.caves", "exploration", "Echo Caves"),
                "upper",
            ),
            in_region(node("underdark.pool", "harvest", "Glowing Pool"), "upper"),
            in_region(node("underdark.gate", "merge", "Drow Gate"), "lower"),
            in_region(
                node("underdark.market", "exploration", "Shadow Market"),
                "lower",
            ),
            in_region(
                node("underdark.shortcut", "trap", "Collapsed Shaft"),
                "lower",
            ),
            in_region(node("underdark.boss", "boss", "Spider Matron"), "lower"),
        ],
        vec![
            edge("underdark.entry", "underdark.fork"),
            edge("underdark.fork", "underdark.caves"),
            edge("underdark.fork", "underdark.pool"),
            edge("underdark.caves", "underdark.gate"),
            edge("underdark.pool", "underdark.gate"),
            edge("underdark.gate", "underdark.market"),
            locked(
                "underdark.gate",
                "underdark.shortcut",
                "region_clear",
                json!({"region_id": "upper"}),
                "The shaft is blocked from above.",
            ),
            edge("underdark.market", "underdark.boss"),
            edge("underdark.shortcut", "underdark.boss"),
            // A long passage from the top straight to the matron: skips rows.
            locked(
                "underdark.fork",
                "underdark.boss",
                "stat_check",
                json!({"stat": "dex", "dc": 16}),
                "A narrow chimney.",
            ),
        ],
    );
    v["regions"] = json!([
        { "region_id": "upper", "name": "Upper Warrens", "order": 1 },
        { "region_id": "lower", "name": "Drowned Deep", "order": 2 }
    ]);
    zone_json(&v)
}

#[test]
fn crypt_designer_view() {
    let z = zone(CRYPT);
    insta::assert_snapshot!(map(&z, &MapView::designer()));
}

#[test]
fn crypt_at_the_fork_with_the_secret_hidden() {
    let z = zone(CRYPT);
    let view = run(
        &z,
        &["entry", "corridor", "fork"],
        &["secret_chamber"],
        &["main_hall", "side_chapel"],
    );
    insta::assert_snapshot!(map(&z, &view));
}

#[test]
fn crypt_in_the_main_hall() {
    let z = zone(CRYPT);
    let view = run(
        &z,
        &["entry", "corridor", "fork", "main_hall"],
        &["secret_chamber"],
        &[],
    );
    insta::assert_snapshot!(map(&z, &view));
}

#[test]
fn crypt_in_the_side_chapel_with_the_secret_found() {
    let z = zone(CRYPT);
    let view = run(
        &z,
        &["entry", "corridor", "fork", "side_chapel"],
        &[],
        &["antechamber", "secret_chamber"],
    );
    insta::assert_snapshot!(map(&z, &view));
}

#[test]
fn crypt_in_the_secret_chamber() {
    let z = zone(CRYPT);
    let view = run(
        &z,
        &["entry", "corridor", "fork", "side_chapel", "secret_chamber"],
        &[],
        &[],
    );
    insta::assert_snapshot!(map(&z, &view));
}

#[test]
fn crypt_played_by_the_engine() {
    use zonegraph_core::engine::{self, Character};
    let z = zone(CRYPT);
    // Wisdom 20 notices the draft; the run id is arbitrary but fixed.
    let mut sharp = Character::default();
    sharp.scores[4] = 20;
    let (mut run, _) = engine::start(&z, "map-test", &sharp, 0).expect("starts");
    while run.pending_fork.is_none() && !run.is_over() {
        engine::advance(&z, &mut run, &sharp, 1).expect("advances");
    }
    let at_fork = MapView::of_run(&z, &run);
    assert_eq!(at_fork.fork_options.len(), 2);
    insta::assert_snapshot!("engine_at_the_fork", map(&z, &at_fork));
    engine::choose(&z, &mut run, &sharp, "2", 2).expect("the chapel is open to a sharp eye");
    while run.pending_fork.is_none() && !run.is_over() {
        engine::advance(&z, &mut run, &sharp, 3).expect("advances");
    }
    insta::assert_snapshot!("engine_in_the_chapel", map(&z, &MapView::of_run(&z, &run)));
}

/// The player's map (the run page's, laid out by the server from the view) leaves no empty
/// row where an undiscovered room stands: the Crypt's secret chamber sits alone on its
/// hinted row, between the chapel's row and the antechamber's.
#[test]
fn hidden_secret_leaves_no_gap_on_the_players_drawing() {
    use zonegraph_core::engine::{self, Character};
    use zonegraph_core::layout::Drawing;
    let z = zone(CRYPT);
    let ch = Character::default();
    let (mut run, _) = engine::start(&z, "map-gap", &ch, 0).expect("starts");
    while run.pending_fork.is_none() && !run.is_over() {
        engine::advance(&z, &mut run, &ch, 1).expect("advances");
    }
    engine::choose(&z, &mut run, &ch, "1", 2).expect("the main hall is open");
    let view = engine::player_view(&z, &run, &ch);
    assert!(
        view.rooms.iter().all(|r| r
            .id
            .as_ref()
            .is_none_or(|id| !id.as_str().ends_with("secret_chamber"))),
        "the secret is not on the player's map"
    );
    let drawing = Drawing::of_view(&view);
    assert_eq!(drawing.rooms.len(), view.rooms.len());
    let rows: BTreeSet<u32> = drawing.rooms.iter().map(|r| r[2]).collect();
    let last = rows.iter().max().copied().unwrap_or(0);
    assert_eq!(
        rows,
        (0..=last).collect(),
        "an empty row on the player's map"
    );
    // The designer's map of the same zone keeps the secret's row.
    let full = layout(&z);
    let designer_rows: BTreeSet<u32> = full.nodes.iter().map(|n| n.row).collect();
    assert!(
        designer_rows.len() > rows.len(),
        "{designer_rows:?} against {rows:?}"
    );
}

#[test]
fn hidden_secret_leaves_no_trace() {
    let z = zone(CRYPT);
    let view = run(&z, &["entry"], &["secret_chamber"], &[]);
    let text = map(&z, &view);
    assert!(!text.contains("Reliquary"), "{text}");
    assert!(!text.contains('✧'), "{text}");
}

#[test]
fn crypt_without_hints_uses_layers() {
    let z = crypt_without_hints();
    let l = layout(&z);
    check_layout(&z, &l);
    assert_eq!(l.mode, LayoutMode::Layered);
    insta::assert_snapshot!(map(&z, &MapView::designer()));
}

#[test]
fn crypt_layout_json() {
    let z = zone(CRYPT);
    let l = layout(&z);
    check_layout(&z, &l);
    check_routes(&l);
    assert_eq!(l.mode, LayoutMode::Hints);
    insta::assert_json_snapshot!(l);
}

#[test]
fn loop_zone_lists_the_way_back() {
    let z = loop_zone();
    check_layout(&z, &layout(&z));
    let designer = map(&z, &MapView::designer());
    assert!(designer.contains("↺ Well → Atrium"), "{designer}");
    insta::assert_snapshot!("loop_designer", designer);
    let view = run(&z, &["gate", "atrium", "well"], &[], &["atrium", "camp"]);
    insta::assert_snapshot!("loop_at_the_well", map(&z, &view));
}

#[test]
fn every_kind_and_lock() {
    let z = every_kind_zone();
    check_layout(&z, &layout(&z));
    let six = MapOptions {
        max_columns: 6,
        ..MapOptions::default()
    };
    insta::assert_snapshot!(
        "every_kind_designer",
        map_with(&z, &MapView::designer(), &six)
    );
    // The default five columns cut the sixth, and say so.
    insta::assert_snapshot!(
        "every_kind_designer_five_columns",
        map(&z, &MapView::designer())
    );
    let view = run(
        &z,
        &["entry", "fork"],
        &["secret"],
        &["hall", "trap", "elite", "harvest", "camp"],
    );
    insta::assert_snapshot!("every_kind_at_the_fork", map(&z, &view));
}

#[test]
fn two_regions() {
    let z = two_region_zone();
    check_layout(&z, &layout(&z));
    insta::assert_snapshot!("two_regions_designer", map(&z, &MapView::designer()));
    let view = run(&z, &["entry", "fork", "pool", "gate"], &[], &[]);
    insta::assert_snapshot!("two_regions_at_the_gate", map(&z, &view));
}

#[test]
fn small_window_around_the_current_room() {
    let z = zone(CRYPT);
    let view = run(&z, &["entry", "corridor", "fork", "side_chapel"], &[], &[]);
    let opts = MapOptions {
        max_rows: 3,
        max_columns: 1,
        run_link: Some("https://example.invalid/run/abc".into()),
        ..MapOptions::default()
    };
    insta::assert_snapshot!(map_with(&z, &view, &opts));
}

#[test]
fn legacy_zone_is_laid_out_top_down() {
    let z = zone(
        &json!({
            "format": 1, "zone_id": "old_mine", "name": "Old Mine", "tier": 1,
            "min_level": 1, "max_level": 3,
            "room_kinds": ["entry", "exploration", "trap", "rest_camp", "boss"]
        })
        .to_string(),
    );
    let l = layout(&z);
    check_layout(&z, &l);
    assert_eq!(l.mode, LayoutMode::Layered);
    assert!(l.nodes.iter().all(|n| n.col == 0));
    let view = run(&z, &["r1", "r2"], &[], &[]);
    insta::assert_snapshot!(map(&z, &view));
}

#[test]
fn shared_hinted_cells_are_spread_and_noted() {
    let mut v: Value = serde_json::from_str(CRYPT).expect("crypt is json");
    // Put the side chapel on the main hall's cell.
    v["nodes"][4]["pos_x"] = json!(0);
    let z = zone_json(&v);
    let l = layout(&z);
    check_layout(&z, &l);
    assert_eq!(l.mode, LayoutMode::Hints);
    assert!(
        l.notes
            .iter()
            .any(|n| n.contains("crypt_valdris.side_chapel") && n.contains("column 1")),
        "{:?}",
        l.notes
    );
}

#[test]
fn hostile_labels_stay_on_one_line() {
    let mut v: Value = serde_json::from_str(CRYPT).expect("crypt is json");
    v["nodes"][1]["label"] = json!("```\nrm -rf / 🦀 骨の回廊 a very very long label indeed");
    v["name"] = json!("x".repeat(500));
    let z = zone_json(&v);
    let text = map(&z, &run(&z, &["entry", "corridor"], &[], &[]));
    assert!(!text.contains('`') && !text.contains('🦀'), "{text}");
    assert!(text.lines().next().is_some_and(|l| l.chars().count() < 80));
}

#[test]
fn extreme_hints_are_shortened_not_overflowed() {
    let mut v: Value = serde_json::from_str(CRYPT).expect("crypt is json");
    v["nodes"][0]["pos_x"] = json!(i32::MIN);
    v["nodes"][0]["pos_y"] = json!(i32::MIN);
    v["nodes"][7]["pos_x"] = json!(i32::MAX);
    v["nodes"][7]["pos_y"] = json!(i32::MAX);
    let z = zone_json(&v);
    let l = layout(&z);
    check_layout(&z, &l);
    check_routes(&l);
    assert!(l.width <= 7 && l.height <= 11, "{} x {}", l.width, l.height);
    assert!(
        l.notes.iter().any(|n| n.contains("shortened")),
        "{:?}",
        l.notes
    );
    map(&z, &MapView::designer());
}

#[test]
fn a_zone_without_rooms_says_so() {
    let text = json!({
        "format": 1, "zone_id": "void", "name": "Void", "tier": 1,
        "min_level": 1, "max_level": 2, "nodes": [], "edges": []
    })
    .to_string();
    let (z, _) = zone::load(&text).expect("parses");
    let l = layout(&z);
    assert_eq!((l.width, l.height, l.nodes.len()), (0, 0, 0));
    assert_eq!(
        map(&z, &MapView::designer()),
        "Map of Void (designer view: every room and passage)\nThis zone has no rooms to show.\n"
    );
}

/// Every shipped zone lays out without overlaps and maps within bounds, for a designer and
/// for a player who has just entered.
#[test]
fn every_shipped_zone_maps() {
    let mut seen = 0;
    let paths = zone_files("zones");
    for path in paths {
        let text = std::fs::read_to_string(&path).expect("readable zone");
        let (z, _) = zone::load(&text).expect("shipped zone parses");
        let l = layout(&z);
        check_layout(&z, &l);
        check_routes(&l);
        map(&z, &MapView::designer());
        if let Some(entry) = z.entry() {
            let secrets = z
                .node_indices()
                .filter(|&ix| z.node(ix).kind == zonegraph_core::NodeKind::Secret)
                .collect();
            let view = MapView {
                visited: vec![entry],
                current: Some(entry),
                hidden: secrets,
                fork_options: Vec::new(),
                unknown: BTreeSet::new(),
            };
            let text = map(&z, &view);
            if std::env::var_os("ZONEGRAPH_PRINT_MAPS").is_some() {
                println!("{}\n{text}", path.display());
            }
        }
        seen += 1;
    }
    assert!(seen > 0, "no zones in zones/");
}

#[test]
fn out_of_range_indices_are_ignored() {
    let z = zone(CRYPT);
    let bad = NodeIndex::new(999);
    let view = MapView {
        visited: vec![bad],
        current: Some(bad),
        hidden: [bad].into(),
        fork_options: vec![bad],
        unknown: BTreeSet::new(),
    };
    map(&z, &view);
}

/// A zone of `n` rooms: a spine with side rooms and occasional long and loop passages.
fn big_zone(n: usize) -> Zone {
    let id = |i: usize| format!("big.n{i}");
    let mut nodes = Vec::with_capacity(n);
    let mut edges = Vec::with_capacity(2 * n);
    for i in 0..n {
        let kind = match i {
            0 => "entry",
            _ if i == n - 1 => "boss",
            _ if i % 7 == 3 => "trap",
            _ if i % 11 == 5 => "fork",
            _ => "exploration",
        };
        nodes.push(node(&id(i), kind, &format!("Room {i}")));
        if i > 0 {
            edges.push(edge(&id(i - 1), &id(i)));
        }
        if i + 3 < n && i % 5 == 0 {
            edges.push(edge(&id(i), &id(i + 3)));
        }
        if i > 10 && i % 13 == 0 {
            edges.push(edge(&id(i), &id(i - 9)));
        }
    }
    let mut v = file("big", nodes, edges);
    v["allow_loops"] = json!(true);
    let (zone, diags) = zone::load(&v.to_string()).expect("big zone parses");
    assert!(diags.is_empty());
    zone
}

#[test]
fn hundred_thousand_rooms_stay_bounded() {
    let z = big_zone(100_000);
    let l = layout(&z);
    check_layout(&z, &l);
    check_text(&render_map(
        &z,
        &MapView::designer(),
        &MapOptions::default(),
    ));
    let deep = run(
        &z,
        &["n0", "n1", "n2", "n3", "n4", "n5", "n50000"],
        &[],
        &[],
    );
    let text = render_map(&z, &deep, &MapOptions::default());
    check_text(&text);
    assert!(text.contains("Room 50000"), "{text}");
    assert!(text.contains("the whole zone"), "{text}");
}

#[test]
fn hundred_thousand_room_fan_stays_bounded() {
    // One fork into 100k rooms in one row, each to the boss: the widest possible zone.
    let n = 100_000;
    let mut nodes = vec![
        node("fan.entry", "entry", "Entry"),
        node("fan.boss", "boss", "Boss"),
    ];
    let mut edges = Vec::new();
    for i in 0..n {
        nodes.push(node(
            &format!("fan.r{i}"),
            "exploration",
            &format!("Room {i}"),
        ));
        edges.push(edge("fan.entry", &format!("fan.r{i}")));
        edges.push(edge(&format!("fan.r{i}"), "fan.boss"));
    }
    let z = zone_json(&file("fan", nodes, edges));
    let l = layout(&z);
    check_layout(&z, &l);
    let options: Vec<NodeIndex> = (2..n + 2).map(NodeIndex::new).collect();
    let view = MapView {
        visited: vec![NodeIndex::new(0)],
        current: Some(NodeIndex::new(0)),
        hidden: BTreeSet::new(),
        fork_options: options,
        unknown: BTreeSet::new(),
    };
    let text = render_map(&z, &view, &MapOptions::default());
    check_text(&text);
    assert!(text.contains("more to the right"), "{text}");
}

#[test]
fn hundred_thousand_rooms_on_one_hinted_cell_stay_bounded() {
    let n = 100_000;
    let id = |i: usize| format!("pile.n{i}");
    let nodes: Vec<Value> = (0..n)
        .map(|i| {
            let kind = match i {
                0 => "entry",
                _ if i == n - 1 => "boss",
                _ => "exploration",
            };
            let mut v = node(&id(i), kind, &format!("Room {i}"));
            v["pos_x"] = json!(0);
            v["pos_y"] = json!(0);
            v
        })
        .collect();
    let edges: Vec<Value> = (1..n).map(|i| edge(&id(i - 1), &id(i))).collect();
    let z = zone_json(&file("pile", nodes, edges));
    let l = layout(&z);
    check_layout(&z, &l);
    // The chain's passages push each room a row below the one before (no room is left
    // sharing a cell), and the tall column folds into bands.
    assert!(
        l.notes.iter().any(|n| n.contains("folded")),
        "{:?}",
        l.notes
    );
    assert!(l.notes.len() <= 6, "{:?}", l.notes);
    assert_eq!(l.stats.crossings, 0);
    assert_eq!(l.stats.overridden_total, n - 1);
    assert!(l.stats.overridden.len() < 100);
    let text = map(&z, &run(&z, &["n0", "n1"], &[], &[]));
    assert!(text.contains("Room 1"), "{text}");
}

/// A random zone: `n` rooms, edges as `(from, to, locked)` pairs, optional hints.
fn random_zone(n: usize, edges: &[(usize, usize, bool)], hints: Option<&[(i32, i32)]>) -> Zone {
    let nodes: Vec<Value> = (0..n)
        .map(|i| {
            let kind = if i == 0 {
                "entry"
            } else if i == n - 1 {
                "boss"
            } else {
                ["exploration", "trap", "fork", "merge", "secret"][i % 5]
            };
            let mut v = node(&format!("r.n{i}"), kind, &format!("Room {i}"));
            if let Some(h) = hints {
                let (x, y) = h[i % h.len()];
                v["pos_x"] = json!(x);
                v["pos_y"] = json!(y);
            }
            v
        })
        .collect();
    let edges: Vec<Value> = edges
        .iter()
        .map(|&(a, b, l)| {
            let (a, b) = (format!("r.n{}", a % n), format!("r.n{}", b % n));
            if l {
                locked(&a, &b, "perception_check", json!({"dc": 12}), "A hint.")
            } else {
                edge(&a, &b)
            }
        })
        .collect();
    let mut v = file("r", nodes, edges);
    v["allow_loops"] = json!(true);
    zone::load(&v.to_string()).expect("random zone parses").0
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn layout_and_map_hold_for_random_zones(
        n in 1usize..40,
        edges in prop::collection::vec((0usize..40, 0usize..40, any::<bool>()), 0..80),
        hints in prop::option::of(prop::collection::vec((-3i32..6, -3i32..6), 1..12)),
        hide in prop::collection::vec(0usize..40, 0..4),
        walk in prop::collection::vec(0usize..40, 0..6),
    ) {
        let z = random_zone(n, &edges, hints.as_deref());
        let l = layout(&z);
        check_layout(&z, &l);
        check_routes(&l);
        prop_assert_eq!(&l, &layout(&z));
        let visited: Vec<NodeIndex> = walk.iter().map(|&i| NodeIndex::new(i % n)).collect();
        let view = MapView {
            current: visited.last().copied(),
            visited,
            hidden: hide.iter().map(|&i| NodeIndex::new(i % n)).collect(),
            fork_options: vec![NodeIndex::new(0), NodeIndex::new(n - 1)],
            unknown: BTreeSet::new(),
        };
        let small = MapOptions { max_rows: 4, max_columns: 2, ..MapOptions::default() };
        let seen: BTreeSet<NodeIndex> = view.visited.iter().copied().collect();
        for opts in [MapOptions::default(), small] {
            let a = render_map(&z, &view, &opts);
            check_text(&a);
            // Undiscovered rooms leave no trace, not even in the footer.
            for h in view.hidden.iter().filter(|h| !seen.contains(h)) {
                let name = format!("Room {}", h.index());
                let leaked = a.match_indices(&name).any(|(i, _)| {
                    !a[i + name.len()..].starts_with(|c: char| c.is_ascii_digit())
                });
                prop_assert!(!leaked, "{} leaked:\n{}", name, a);
            }
            prop_assert_eq!(a, render_map(&z, &view, &opts));
        }
    }
}

/// The gallery's test fixtures (`web/fixtures/zones/*.json`), sorted: `(file stem, text)`.
fn web_fixture_zones() -> Vec<(String, String)> {
    let paths = zone_files("web/fixtures/zones");
    paths
        .into_iter()
        .map(|p| {
            let stem = p
                .file_stem()
                .expect("a name")
                .to_string_lossy()
                .into_owned();
            (stem, std::fs::read_to_string(&p).expect("readable zone"))
        })
        .collect()
}

/// Zones whose hints run left to right (`pos_x` the step, `pos_y` the lane) are drawn top to
/// bottom: the path goes down the rows in the hints' order, each lane keeps its column, and the
/// chat map draws the passages instead of listing rooms side by side. The viewer's layout
/// folds the long one into bands, keeping that order.
#[test]
fn left_to_right_fixtures_are_drawn_top_to_bottom() {
    let mut across = 0;
    for (stem, text) in web_fixture_zones() {
        let z = zone(&text);
        let l = layout(&z);
        check_layout(&z, &l);
        check_routes(&l);
        let designer = map(&z, &MapView::designer());
        insta::assert_snapshot!(format!("fixture_{stem}_designer"), designer);
        let turned = l.notes.iter().any(|n| n.contains("left to right"));
        if !turned {
            continue;
        }
        across += 1;
        assert!(
            !designer.contains("(same row)"),
            "{stem}: passages listed, not drawn:\n{designer}"
        );
        // Lane 0 (the main path), in pos_x order, reads along each band (down, then up the
        // next, boustrophedon) and the bands left to right; every room of one lane sits in
        // one column of its band.
        let cell = |id: &str| l.nodes.iter().find(|n| n.id == id).expect("laid out");
        let mut lane0: Vec<_> = z
            .node_indices()
            .filter(|&ix| z.node(ix).pos.is_some_and(|p| p.1 == 0))
            .collect();
        lane0.sort_by_key(|&ix| z.node(ix).pos.map(|p| p.0));
        let order: Vec<(u32, u32)> = lane0
            .iter()
            .map(|&ix| {
                let n = cell(z.node(ix).id.as_str());
                (n.col, n.row)
            })
            .collect();
        let mut down = true;
        for w in order.windows(2) {
            let along = w[0].0 == w[1].0 && (w[0].1 < w[1].1) == down && w[0].1 != w[1].1;
            let next_band = w[0].0 < w[1].0;
            if next_band {
                down = !down;
            }
            assert!(
                along || next_band,
                "{stem}: the path goes {:?} → {:?}",
                w[0],
                w[1]
            );
        }
        assert!(l.width < l.height * 4, "{stem}: {} × {}", l.width, l.height);
        // The chat map (one band, all of it) reads the path straight down, one row per step.
        let tall = MapOptions {
            max_rows: 100,
            ..MapOptions::default()
        };
        let whole = map_with(&z, &MapView::designer(), &tall);
        assert!(!whole.contains("Passages not drawn"), "{stem}:\n{whole}");
        let grid_rows: BTreeSet<usize> = lane0
            .iter()
            .map(|&ix| {
                let label = &z.node(ix).label;
                let short: String = label.chars().take(12).collect();
                whole
                    .lines()
                    .position(|line| line.contains(&short))
                    .unwrap_or_else(|| panic!("{stem}: {label} is on the chat map"))
            })
            .collect();
        assert_eq!(grid_rows.len(), lane0.len(), "{stem}: one row per step");
    }
    assert!(across >= 2, "the left-to-right fixtures are found");
}
