//! Times the pure steps behind a map's first frame (native; the browser's wasm is slower).
use std::time::Instant;

fn main() {
    for n in [1000usize, 5000] {
        let t = Instant::now();
        let file = zonegraph_core::synth::layered("bench", n, 8, 7);
        let text = zonegraph_core::format::to_pretty_json(&file);
        let synth = t.elapsed();
        let t = Instant::now();
        let l = zonegraph_web::doc::load("b", &text).expect("loads");
        let load = t.elapsed();
        // What `#bench/<N>` does: the generated zone without a JSON round trip.
        let t = Instant::now();
        let g = zonegraph_web::doc::generated("bench", &file);
        let generated = t.elapsed();
        assert_eq!(g.zone.graph.node_count(), l.zone.graph.node_count());
        let t = Instant::now();
        let m = zonegraph_web::model::build(&l.zone, &l.layout, None);
        let model = t.elapsed();
        let t = Instant::now();
        let _ = zonegraph_core::analysis::stats(&l.zone);
        let stats = t.elapsed();
        println!(
            "{n}: synth+json {synth:?}, load (parse, build, check, layout) {load:?}, \
             generated (build, check, layout) {generated:?}, model {model:?} ({} rooms), \
             stats {stats:?}",
            m.rooms.len()
        );
    }
}
