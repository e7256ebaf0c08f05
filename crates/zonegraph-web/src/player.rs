//! The player's map, from the core's [`PlayerView`] only: the view's rooms and passages as a
//! graph the core's layout can place, and the details panel's words about them.
//!
//! Nothing here decides what a player may see: the view has decided (`engine::player_view`,
//! the one owner), and this module only draws from it. It never sees the zone file, so it
//! cannot show a DC, a level, a key id or a room the view leaves out.

use zonegraph_core::chat;
use zonegraph_core::engine::{self, Character, ExitState, ExitView, PlayerView, Run};
use zonegraph_core::format::{EdgeFile, LockKind, NodeFile, NodeKind, ZoneFile};
use zonegraph_core::zone::{self, NodeId, Zone};

use crate::names::Row;

pub use chat::{UNKNOWN_ROOM, room_name};

/// The key a room goes by on the map (selection, `data-node`): its id, or `?N` (its index in
/// the view) for an unknown room, which has no id.
pub fn room_key(view: &PlayerView, i: usize) -> String {
    match view.rooms.get(i).and_then(|r| r.id.as_ref()) {
        Some(id) => id.to_string(),
        None => format!("?{i}"),
    }
}

/// The index of the room that [`room_key`] called `key`.
pub fn room_index(view: &PlayerView, key: &str) -> Option<usize> {
    view.rooms
        .iter()
        .position(|r| r.id.as_ref().is_some_and(|id| id.as_str() == key))
        .or_else(|| {
            let i: usize = key.strip_prefix('?')?.parse().ok()?;
            view.rooms.get(i).filter(|r| r.id.is_none()).map(|_| i)
        })
}

/// The view's rooms and passages as a zone, for [`zonegraph_core::layout::layout`]: node `i`
/// is `view.rooms[i]` (id from [`room_key`], the view's layout hint, placeholder kind
/// `exploration` for an unknown room) and passage `j` is `view.passages[j]` (`file_index`
/// `j`), with no locks and no content. Only its shape is used: every word and mark on the
/// player's map comes from the view itself.
pub fn graph(view: &PlayerView) -> Zone {
    let nodes = view
        .rooms
        .iter()
        .enumerate()
        .map(|(i, r)| NodeFile {
            node_id: room_key(view, i),
            kind: r.kind.unwrap_or(NodeKind::Exploration),
            label: String::new(),
            is_entry: r.is_entry,
            is_boss: r.is_boss,
            region_id: String::new(),
            pos_x: r.pos.map(|p| p.0),
            pos_y: r.pos.map(|p| p.1),
            content: Default::default(),
        })
        .collect();
    let edges = view
        .passages
        .iter()
        .map(|p| EdgeFile {
            from_node: room_key(view, p.from),
            to_node: room_key(view, p.to),
            lock_kind: LockKind::None,
            lock_data: Default::default(),
            hint: String::new(),
            weight: 1,
        })
        .collect();
    let file = ZoneFile {
        schema: None,
        format: 1,
        zone_id: view.zone_id.clone(),
        name: view.zone_name.clone(),
        tier: view.tier,
        min_level: 1,
        max_level: 1,
        regions: Vec::new(),
        // A zone with loops lays out the same; the flag only matters to validation.
        allow_loops: true,
        nodes: Some(nodes),
        edges: Some(edges),
        room_kinds: None,
        keys: Default::default(),
        harvests: Default::default(),
    };
    zone::build_shape(&file).0
}

/// The pending fork's option `number`, as the chat listed it.
pub fn exit(view: &PlayerView, number: usize) -> Option<&ExitView> {
    view.status.exits.iter().find(|x| x.number == number)
}

/// Whether the pending fork's option `number` is open.
pub fn option_open(view: &PlayerView, number: usize) -> bool {
    exit(view, number).is_some_and(|x| x.state == ExitState::Open)
}

/// What the details panel says about room `key` ([`room_key`]): the chat's words
/// (`chat::room_details`).
pub fn room_details(view: &PlayerView, key: &str) -> Vec<Row> {
    room_index(view, key).map_or_else(Vec::new, |i| chat::room_details(view, i))
}

/// What the details panel says about passage `j` of the view (`chat::passage_details`).
pub fn passage_details(view: &PlayerView, j: usize) -> Vec<Row> {
    chat::passage_details(view, j)
}

/// What the designer's "View as player" shows: the player view of the playtest's run, or,
/// before one has started, of a run that has not begun (no room reached, nothing
/// discovered, nothing missed), so the map is what a player knows on arriving.
pub fn preview(zone: &Zone, run: Option<&Run>, character: &Character) -> PlayerView {
    match run {
        Some(run) => engine::player_view(zone, run, character),
        None => engine::player_view(zone, &not_begun(zone), character),
    }
}

fn not_begun(zone: &Zone) -> Run {
    Run {
        run_id: String::new(),
        zone_id: zone.id.clone(),
        current_node: NodeId(String::new()),
        visited_nodes: Vec::new(),
        pending_fork: None,
        forks_met: Vec::new(),
        level: 0,
        cleared_regions: Default::default(),
        harvested: Default::default(),
        keys_granted: Default::default(),
        revealed_secrets: Default::default(),
        missed_passages: Default::default(),
        encounter: None,
        wounds: 0,
        xp_earned: 0,
        loot: Default::default(),
        last_check: None,
        started_at: 0,
        last_action_at: 0,
        completed_at: None,
        boss_defeated: false,
        abandoned: false,
        outcome: None,
    }
}
