//! zonegraph-web: the map viewer, a Leptos single-page app built by Trunk (`web/index.html`).
//!
//! It uses zonegraph-core directly — layout, validation, analysis, the bot's command
//! pipeline and its words, the player view — so a playtest here says exactly what the chat
//! bot says, and a player's map shows exactly what the core lets a player know. Pure parts
//! (`model`, `player`, `camera`, `gesture`, `playtest`, `doc`, `share`, `editor`) are tested
//! natively; the components in headless Chromium. `app` is the router and the shell; `pages` holds one
//! module per page (the run page is a bundle of its own), `views` the small views they share.

pub mod app;
pub mod browser;
pub mod camera;
pub mod doc;
pub mod editor;
pub mod gesture;
pub mod insight;
pub mod map;
pub mod model;
pub mod names;
pub mod pages;
pub mod player;
pub mod playtest;
pub mod scenarios;
pub mod share;
mod views;
pub mod zones;

/// Mounts the designer's app on `<body>` (the `zonegraph-web` bundle, `web/index.html`).
pub fn mount() {
    leptos::mount::mount_to_body(app::App);
}

/// Mounts the player's run page on `<body>` (the `zonegraph-run` bundle, `web/run.html`):
/// nothing else of the app is reachable from it, so the linker leaves the rest out.
pub fn mount_run() {
    leptos::mount::mount_to_body(pages::run::RunApp);
}
