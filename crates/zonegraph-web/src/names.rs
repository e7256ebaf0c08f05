//! What the viewer calls the core's room kinds and lock kinds, and a details panel's line,
//! as the core's `chat` words them: shared by the designer's map ([`crate::model`]), the
//! player's ([`crate::player`]), the legend and the editor's forms.

/// One line of a details panel: a caption and its text.
pub type Row = zonegraph_core::chat::DetailRow;

pub use zonegraph_core::chat::{kind_name, lock_name};
