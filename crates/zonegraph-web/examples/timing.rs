//! Times the pure steps behind a map's first frame (native; the browser's wasm is slower).
use std::time::Instant;

fn main() {
    for n in [1000usize, 5000] {
        let t = Instant::now();
        let file = zonegraph_core::synth::layered("bench", n, 8, 7);
        let text = zonegraph_core::format::to_pretty_json(&file);
        let t1 = t.elapsed();
        let l = zonegraph_web::doc::load("b", &text).expect("loads");
        let t2 = t.elapsed();
        let m = zonegraph_web::model::build(
            &l.zone,
            &l.layout,
            None,
            zonegraph_web::model::Audience::Designer,
        );
        let t3 = t.elapsed();
        let _ = zonegraph_core::analysis::stats(&l.zone);
        let t4 = t.elapsed();
        println!(
            "{n}: synth+json {t1:?}, load {:?}, model {:?} ({} rooms), stats {:?}",
            t2 - t1,
            t3 - t2,
            m.rooms.len(),
            t4 - t3
        );
    }
}
