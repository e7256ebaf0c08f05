//! The player's map, from the core's [`PlayerView`] only: its layout (the server's drawing, or
//! the view's graph laid out here), and the details panel's words about it.
//!
//! Nothing here decides what a player may see: the view has decided (`engine::player_view`,
//! the one owner), and this module only draws from it. It never sees the zone file, so it
//! cannot show a DC, a level, a key id or a room the view leaves out.

use zonegraph_core::chat;
use zonegraph_core::engine::{self, Character, ExitState, ExitView, PlayerView, Run};
use zonegraph_core::layout::{
    DRAWING_SCALE, Drawing, Layout, LayoutEdge, LayoutMode, LayoutNode, RouteKind,
};
use zonegraph_core::zone::{NodeId, Zone};

use crate::names::Row;

pub use chat::{UNKNOWN_ROOM, room_name};

/// The view's map laid out here: "View as player" in the designer. The run page never calls
/// it (that would bring the layout's code into its bundle): it draws the server's
/// [`Drawing`] with [`from_drawing`].
pub fn lay_out(view: &PlayerView) -> Layout {
    zonegraph_core::layout::layout(&view.graph())
}

/// A [`Drawing`] of `view` (the server's, from `GET /api/runs/{token}`) as the [`Layout`]
/// the map model places; rooms and passages the view does not have are left out. A drawing
/// carries only cells and points, all the map model reads: the `Layout`'s mode, route kinds,
/// notes and stats here are placeholders, not the server's.
pub fn from_drawing(view: &PlayerView, d: &Drawing) -> Layout {
    let at = |v: i32| f64::from(v) / DRAWING_SCALE;
    let nodes: Vec<LayoutNode> = d
        .rooms
        .iter()
        .filter(|[i, ..]| (*i as usize) < view.rooms.len())
        .map(|&[i, col, row]| LayoutNode {
            id: view.room_key(i as usize),
            col,
            row,
        })
        .collect();
    let edges = d
        .passages
        .iter()
        .filter_map(|p| {
            let pv = view.passages.get(p.passage)?;
            Some(LayoutEdge {
                edge: p.passage,
                from: view.room_key(pv.from),
                to: view.room_key(pv.to),
                lock: pv.lock,
                route: RouteKind::Down,
                points: p.points.iter().map(|q| [at(q[0]), at(q[1])]).collect(),
            })
        })
        .collect();
    Layout {
        mode: LayoutMode::Layered,
        width: nodes.iter().map(|n| n.col + 1).max().unwrap_or(0),
        height: nodes.iter().map(|n| n.row + 1).max().unwrap_or(0),
        nodes,
        edges,
        notes: Vec::new(),
        stats: Default::default(),
    }
}

/// The pending fork's option `number`, as the chat listed it.
pub fn exit(view: &PlayerView, number: usize) -> Option<&ExitView> {
    view.status.exits.iter().find(|x| x.number == number)
}

/// Whether the pending fork's option `number` is open.
pub fn option_open(view: &PlayerView, number: usize) -> bool {
    exit(view, number).is_some_and(|x| x.state == ExitState::Open)
}

/// What the details panel says about room `key` ([`PlayerView::room_key`]): the chat's words
/// (`chat::room_details`).
pub fn room_details(view: &PlayerView, key: &str) -> Vec<Row> {
    view.room_index(key)
        .map_or_else(Vec::new, |i| chat::room_details(view, i))
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
        visited_index: Default::default(),
    }
}
