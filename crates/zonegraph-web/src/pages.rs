//! The app's pages, one module each: the gallery, the designer's preview and the player's
//! run map.

pub mod designer;
pub mod gallery;
pub mod run;
