//! The app's pages, one module each: the gallery, the designer's preview, the zone editor
//! and the player's run map.

pub mod designer;
pub mod editor;
pub mod gallery;
pub mod run;
