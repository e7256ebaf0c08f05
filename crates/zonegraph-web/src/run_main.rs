//! The run page's wasm entry point: a bundle of its own (Trunk builds it from `web/run.html`)
//! that draws only the player's run map.

fn main() {
    zonegraph_web::mount_run();
}
