//! The map viewer's words: what a drawn room and passage are called for a screen reader, the
//! player's lock marks, the legend's captions, and what the run page says of its link and its
//! problems. The browser draws; it words nothing itself.

use crate::format::{LockKind, NodeKind};

use super::kind_name;

/// What a drawn room's accessible name says.
#[derive(Clone, Copy, Debug, Default)]
pub struct RoomFacts<'a> {
    /// The room's label; `None` for a room a player does not know ("Unknown room").
    pub label: Option<&'a str>,
    pub kind: Option<NodeKind>,
    pub is_entry: bool,
    pub is_boss: bool,
    /// Position in the visited path (1-based).
    pub visit: Option<usize>,
    pub current: bool,
    /// The pending fork's option number, and whether it is open.
    pub option: Option<(usize, bool)>,
}

/// A room's accessible name: "Main Hall, elite, visited as room 4, option 1 (open)"; a room
/// a player does not know starts "Unknown room" (capitalised: it starts the name, as a label
/// does).
pub fn room_accessible_name(f: &RoomFacts) -> String {
    let mut name = f.label.unwrap_or("Unknown room").to_string();
    if let Some(kind) = f.kind {
        name.push_str(", ");
        name.push_str(kind_name(kind));
    }
    if f.is_entry {
        name.push_str(", entry");
    }
    if f.is_boss {
        name.push_str(", boss");
    }
    if let Some(v) = f.visit {
        name.push_str(", visited as room ");
        name.push_str(&v.to_string());
    }
    if f.current {
        name.push_str(", you are here");
    }
    if let Some((number, open)) = f.option {
        name.push_str(", option ");
        name.push_str(&number.to_string());
        name.push_str(if open { " (open)" } else { " (locked)" });
    }
    name
}

/// A passage's accessible name: "Passage from A to B, choice 2 at the fork, locked: …";
/// `lock` is how the lock is described (`None`: the passage is open).
pub fn passage_accessible_name(
    from: &str,
    to: &str,
    menu: Option<usize>,
    lock: Option<&str>,
    walked: bool,
) -> String {
    let mut name = String::from("Passage from ");
    name.push_str(from);
    name.push_str(" to ");
    name.push_str(to);
    if let Some(n) = menu {
        name.push_str(", choice ");
        name.push_str(&n.to_string());
        name.push_str(" at the fork");
    }
    match lock {
        None => name.push_str(", open"),
        Some(how) => {
            name.push_str(", locked: ");
            name.push_str(how);
        }
    }
    if walked {
        name.push_str(", walked");
    }
    name
}

/// A lock mark on the player's map: the lock kind only, never a number.
pub fn player_lock_mark(kind: LockKind) -> &'static str {
    match kind {
        LockKind::None => "open",
        LockKind::PerceptionCheck => "hidden?",
        LockKind::StatCheck => "check",
        LockKind::KeyRequired => "⚷ key",
        LockKind::LevelMin => "level",
        LockKind::RegionClear => "region",
    }
}

/// The legend's captions for the run's marks on the map.
pub const LEGEND_VISITED: &str = "visited, in order";
pub const LEGEND_HERE: &str = "you are here";
pub const LEGEND_OPTION: &str = "fork option (go 1)";
pub const LEGEND_UNKNOWN: &str = "unknown room";

/// The run page's heading when it cannot show a map.
pub const RUN_PAGE_PROBLEM: &str = "This run map cannot be shown";
/// The run page opened with a link that names no run.
pub const RUN_LINK_NAMES_NO_RUN: &str =
    "This link names no run. Ask the bot for your map with !zone map.";
/// The server knows no run by the page's link.
pub const RUN_NOT_FOUND: &str = "No run with this link: it may have expired.";
/// The run page, before its first answer.
pub const RUN_LOADING: &str = "Loading the run map…";

/// The server answered the run page with an unexpected status.
pub fn run_server_answered(status: u16) -> String {
    format!("The server answered {status}.")
}

/// How the run page follows the run: opening its event stream.
pub const LINK_CONNECTING: &str = "connecting…";
/// The event stream is open.
pub const LINK_LIVE: &str = "live";
/// The run is over: nothing more to follow.
pub const LINK_OVER: &str = "the run has ended";

/// The event stream is down: the page asks every `every_s` seconds.
pub fn link_polling(every_s: u64) -> String {
    format!("reconnecting: checking every {every_s} s")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rooms_name_says_what_the_map_shows_in_order() {
        let hall = RoomFacts {
            label: Some("Main Hall"),
            kind: Some(NodeKind::Elite),
            visit: Some(4),
            option: Some((1, true)),
            ..RoomFacts::default()
        };
        assert_eq!(
            room_accessible_name(&hall),
            "Main Hall, elite, visited as room 4, option 1 (open)"
        );
        let unknown = RoomFacts {
            option: Some((2, false)),
            ..RoomFacts::default()
        };
        assert_eq!(
            room_accessible_name(&unknown),
            "Unknown room, option 2 (locked)"
        );
        assert_eq!(
            passage_accessible_name("A", "B", Some(2), Some("Perception check"), true),
            "Passage from A to B, choice 2 at the fork, locked: Perception check, walked"
        );
        assert_eq!(link_polling(2), "reconnecting: checking every 2 s");
    }
}
