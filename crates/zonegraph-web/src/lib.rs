//! zonegraph-web: the map viewer, a Leptos single-page app built by Trunk (`web/index.html`).
//!
//! It uses zonegraph-core directly — layout, validation, analysis, the engine and the bot's
//! words — so a playtest here says exactly what the chat bot says. Pure parts (`model`,
//! `doc`, `share`) are tested natively; the components in headless Chromium.

pub mod app;
pub mod browser;
pub mod doc;
pub mod map;
pub mod model;
pub mod share;
pub mod zones;

/// Mounts the app on `<body>`.
pub fn mount() {
    leptos::mount::mount_to_body(app::App);
}
