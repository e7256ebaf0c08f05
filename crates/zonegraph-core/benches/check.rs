//! Check and analysis cost on generated layered zones of 1k, 10k and 100k rooms, against
//! serde_json merely parsing the same bytes. Run: `cargo bench -p zonegraph-core --bench check`.

use divan::{Bencher, black_box};
use zonegraph_core::{analysis, format, synth, zone};

fn main() {
    divan::main();
}

const SIZES: [usize; 3] = [1_000, 10_000, 100_000];

/// The zone text of a generated layered zone: 8 rooms wide, forks and locks throughout.
fn zone_text(rooms: usize) -> String {
    format::to_pretty_json(&synth::layered("bench", rooms, 8, 42))
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

/// Analysis of a built zone: the longest route.
#[divan::bench(args = SIZES)]
fn longest_path(b: Bencher, rooms: usize) {
    let text = zone_text(rooms);
    let (z, _) = zone::load(&text).expect("generated zones parse");
    b.counter(divan::counter::ItemsCount::new(rooms))
        .bench(|| analysis::longest_path_len(black_box(&z)));
}
