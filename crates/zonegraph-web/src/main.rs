//! The viewer's wasm entry point (Trunk builds this binary).

fn main() {
    zonegraph_web::mount();
}
