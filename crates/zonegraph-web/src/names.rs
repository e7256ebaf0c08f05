//! What the viewer calls the core's room kinds and lock kinds, and a details panel's line:
//! shared by the designer's map ([`crate::model`]), the player's ([`crate::player`]), the
//! legend and the editor's forms, so each is worded in one place.

use zonegraph_core::format::{LockKind, NodeKind};

/// One line of a details panel: a caption and its text.
pub type Row = (&'static str, String);

/// The display name of a room kind ("rest camp").
pub fn kind_name(kind: NodeKind) -> &'static str {
    match kind {
        NodeKind::RestCamp => "rest camp",
        k => k.as_str(),
    }
}

/// Human words for a lock kind.
pub fn lock_name(kind: LockKind) -> &'static str {
    match kind {
        LockKind::None => "open",
        LockKind::PerceptionCheck => "Perception check",
        LockKind::StatCheck => "ability check",
        LockKind::KeyRequired => "key",
        LockKind::LevelMin => "minimum level",
        LockKind::RegionClear => "region clear",
    }
}
