//! Check, analysis, difficulty, layout and map cost on generated layered zones of 1k, 10k and 100k rooms,
//! against serde_json merely parsing the same bytes.
//!
//! Run: `cargo bench -p zonegraph-core --bench check`. Figures go in BENCHMARKS.md.

use divan::{Bencher, black_box};
use zonegraph_core::validate::{CheckOptions, check_sources_with};
use zonegraph_core::{analysis, difficulty, format, layout, map, synth, validate, zone};

fn main() {
    divan::main();
}

const SIZES: [usize; 3] = [1_000, 10_000, 100_000];

/// The zone text of a generated layered zone: 8 rooms wide, forks and locks throughout.
fn zone_text(rooms: usize) -> String {
    format::to_pretty_json(&synth::layered("bench", rooms, 8, 42))
}

fn built(rooms: usize) -> zone::Zone {
    zone::load(&zone_text(rooms))
        .expect("generated zones parse")
        .0
}

/// Baseline: serde_json parsing the bytes into an untyped value.
#[divan::bench(args = SIZES)]
fn parse_json_value(b: Bencher, rooms: usize) {
    let text = zone_text(rooms);
    b.counter(divan::counter::ItemsCount::new(rooms))
        .bench(|| serde_json::from_str::<serde_json::Value>(black_box(&text)).map(drop));
}

/// Parse into the file format and build the graph with its structural findings.
#[divan::bench(args = SIZES)]
fn load(b: Bencher, rooms: usize) {
    let text = zone_text(rooms);
    b.counter(divan::counter::ItemsCount::new(rooms))
        .bench(|| zone::load(black_box(&text)).map(drop));
}

/// `zonegraph check`: load + validate + lint, from text (no analysis).
#[divan::bench(args = SIZES)]
fn check(b: Bencher, rooms: usize) {
    let sources = vec![("bench.json".to_string(), zone_text(rooms))];
    b.counter(divan::counter::ItemsCount::new(rooms))
        .bench(|| check_sources_with(black_box(&sources), CheckOptions { stats: false }));
}

/// `zonegraph check --stats`: load + validate + lint + analysis, from text.
#[divan::bench(args = SIZES)]
fn check_with_stats(b: Bencher, rooms: usize) {
    let sources = vec![("bench.json".to_string(), zone_text(rooms))];
    b.counter(divan::counter::ItemsCount::new(rooms))
        .bench(|| check_sources_with(black_box(&sources), CheckOptions { stats: true }));
}

/// Validation and lints of a built zone.
#[divan::bench(args = SIZES)]
fn validate_only(b: Bencher, rooms: usize) {
    let z = built(rooms);
    b.counter(divan::counter::ItemsCount::new(rooms))
        .bench(|| validate::validate(black_box(&z)));
}

/// Route analysis of a built zone.
#[divan::bench(args = SIZES)]
fn stats(b: Bencher, rooms: usize) {
    let z = built(rooms);
    b.counter(divan::counter::ItemsCount::new(rooms))
        .bench(|| analysis::stats(black_box(&z)));
}

/// Difficulty of a built zone ([`difficulty::difficulty`]: best and worst route at the
/// zone's `min_level` and `max_level`, four passes of the dynamic programme), part of `stats`.
#[divan::bench(args = SIZES)]
fn difficulty(b: Bencher, rooms: usize) {
    let z = built(rooms);
    b.counter(divan::counter::ItemsCount::new(rooms))
        .bench(|| difficulty::difficulty(black_box(&z)));
}

/// Grid layout of a built zone (what the viewer draws from).
#[divan::bench(args = SIZES)]
fn layout_zone(b: Bencher, rooms: usize) {
    let z = built(rooms);
    b.counter(divan::counter::ItemsCount::new(rooms))
        .bench(|| layout::layout(black_box(&z)));
}

/// The chat map (designer view), bounded to 60 kB whatever the zone's size.
#[divan::bench(args = SIZES)]
fn render_map(b: Bencher, rooms: usize) {
    let z = built(rooms);
    let view = map::MapView::designer();
    let opts = map::MapOptions::default();
    b.counter(divan::counter::ItemsCount::new(rooms))
        .bench(|| map::render_map(black_box(&z), &view, &opts));
}
