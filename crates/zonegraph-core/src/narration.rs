//! Flavour tables: one deterministic line per room kind, and the generic lock teasers.
//!
//! Lines are chosen with [`roll::pick`] from `"{run_id}|{len(visited) - 1}"` (the run and the
//! number of rooms entered before this one), so a replayed run reads the same.

use crate::format::{LockKind, NodeKind};
use crate::roll;
use crate::zone::Node;

/// The flavour lines of a room kind.
pub fn table(kind: NodeKind) -> &'static [&'static str] {
    match kind {
        NodeKind::Entry => &[
            "The way in yawns before you; the daylight does not follow.",
            "You step over the threshold. The air tastes of dust and old smoke.",
            "Behind you the world goes quiet. Ahead, something waits.",
        ],
        NodeKind::Exploration => &[
            "Dust lies thick here, broken only by old tracks.",
            "Your torchlight catches carvings worn almost smooth.",
            "Water drips somewhere out of sight, slow and patient.",
            "Bones crunch underfoot; whoever came before did not leave.",
        ],
        NodeKind::Trap => &[
            "A loose flagstone clicks under your boot. You freeze.",
            "Thin wires glint across the floor at ankle height.",
            "The walls here are pocked with small, dark holes.",
        ],
        NodeKind::Elite => &[
            "Something large shifts in the dark and turns toward you.",
            "A guardian stands its ground, blade already drawn.",
            "The stench hits first, then the roar.",
        ],
        NodeKind::Boss => &[
            "The air thickens. This is the heart of the place.",
            "A voice older than the stones greets you by name.",
            "Every path led here. The master of this place rises.",
        ],
        NodeKind::Harvest => &[
            "Pale growths cling to the walls, ripe for gathering.",
            "Glittering veins run through the rock here.",
            "Herbs push through the cracks, untouched for years.",
        ],
        NodeKind::RestCamp => &[
            "An old campfire ring, still warm. A safe corner to rest.",
            "A dry alcove, sheltered from whatever roams outside.",
            "Someone left bedrolls here. They did not come back for them.",
        ],
        NodeKind::Secret => &[
            "A hidden room, sealed for longer than anyone remembers.",
            "Few have stood here. Fewer left with what lies within.",
            "The air is still and untouched; you are the first in ages.",
        ],
        NodeKind::Fork => &[
            "The passage splits before you.",
            "Several ways lead on from here.",
            "You stop where the tunnels part.",
        ],
        NodeKind::Merge => &[
            "Paths from elsewhere join here.",
            "Footprints from other passages meet yours.",
            "Several ways converge in this chamber.",
        ],
    }
}

/// The flavour line for a room of `kind`, chosen by `seed` (`"{run_id}|{visited - 1}"`).
pub fn flavour(kind: NodeKind, seed: &str) -> &'static str {
    let t = table(kind);
    t[roll::pick(seed, t.len())]
}

/// What a locked passage with no authored hint shows. Never names a DC or a room.
pub fn generic_teaser(lock: LockKind) -> &'static str {
    match lock {
        LockKind::PerceptionCheck => "you sense something but can't place it",
        LockKind::StatCheck => "it would take some effort to get through",
        LockKind::KeyRequired => "a lock bars the way",
        LockKind::LevelMin => "it feels too dangerous for you yet",
        LockKind::RegionClear => "the way stays shut until more of the zone is cleared",
        LockKind::None => "the way is sealed",
    }
}

/// What the player calls a room: its label, or a name for its kind when the label is empty
/// (legacy linear zones have no labels, and a node id is no name).
pub fn room_label(node: &Node) -> &str {
    if !node.label.trim().is_empty() {
        return &node.label;
    }
    match node.kind {
        NodeKind::Entry => "Entrance",
        NodeKind::Exploration => "Passage",
        NodeKind::Trap => "Trapped Room",
        NodeKind::Elite => "Guarded Hall",
        NodeKind::Boss => "Lair",
        NodeKind::Harvest => "Overgrown Room",
        NodeKind::RestCamp => "Rest Camp",
        NodeKind::Secret => "Hidden Room",
        NodeKind::Fork => "Crossroads",
        NodeKind::Merge => "Junction",
    }
}
