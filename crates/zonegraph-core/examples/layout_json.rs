//! Prints the layout of each zone file named on the command line as one JSON line, with the
//! time it took (the median of repeated runs, in milliseconds): the layout benchmark's
//! window into the core (`web/layout-bench`).
//!
//! `cargo run --release -p zonegraph-core --example layout_json -- zones/*.json`

use std::time::Instant;

fn main() {
    for path in std::env::args().skip(1) {
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("{path}: {e}");
                continue;
            }
        };
        let zone = match zonegraph_core::zone::load(&text) {
            Ok((z, _)) => z,
            Err(e) => {
                eprintln!("{path}: {e:?}");
                continue;
            }
        };
        let layout = zonegraph_core::layout::layout(&zone);
        // Repeat for at least 200 ms or 1000 runs and report the median.
        let mut times = Vec::new();
        let start = Instant::now();
        while times.len() < 1000 && (times.len() < 5 || start.elapsed().as_millis() < 200) {
            let t = Instant::now();
            std::hint::black_box(zonegraph_core::layout::layout(std::hint::black_box(&zone)));
            times.push(t.elapsed().as_secs_f64() * 1000.0);
        }
        zonegraph_core::text::sort_by(&mut times, |a, b| a.total_cmp(b));
        let ms = times[times.len() / 2];
        let errors = zonegraph_core::validate::check_zone(&zone)
            .iter()
            .filter(|d| d.severity == zonegraph_core::diagnostic::Severity::Error)
            .map(|d| d.message.clone())
            .collect::<Vec<_>>();
        let out = serde_json::json!({ "path": path, "ms": ms, "errors": errors, "layout": layout });
        println!("{out}");
    }
}
