//! The player's map, from the core's [`PlayerView`] only: the view's rooms and passages as a
//! graph the core's layout can place, and the details panel's words about them.
//!
//! Nothing here decides what a player may see: the view has decided (`engine::player_view`,
//! the one owner), and this module only draws from it. It never sees the zone file, so it
//! cannot show a DC, a level, a key id or a room the view leaves out.

use zonegraph_core::chat;
use zonegraph_core::engine::view::RoomView;
use zonegraph_core::engine::{self, Character, ExitState, ExitView, PlayerView, Run};
use zonegraph_core::format::{EdgeFile, LockKind, NodeFile, NodeKind, ZoneFile};
use zonegraph_core::zone::{self, NodeId, Zone};

use crate::names::{Row, kind_name, lock_name};

/// What an unknown room is called wherever a name is needed.
pub const UNKNOWN_ROOM: &str = "unknown room";

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

/// A room's name as the player knows it: its label, or "unknown room".
pub fn room_name(room: &RoomView) -> &str {
    room.label.as_deref().unwrap_or(UNKNOWN_ROOM)
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
    };
    zone::build(&file).0
}

/// The pending fork's option `number`, as the chat listed it.
pub fn exit(view: &PlayerView, number: usize) -> Option<&ExitView> {
    view.status.exits.iter().find(|x| x.number == number)
}

/// Whether the pending fork's option `number` is open.
pub fn option_open(view: &PlayerView, number: usize) -> bool {
    exit(view, number).is_some_and(|x| x.state == ExitState::Open)
}

/// What the details panel says about room `key` ([`room_key`]).
pub fn room_details(view: &PlayerView, key: &str) -> Vec<Row> {
    let Some(i) = room_index(view, key) else {
        return Vec::new();
    };
    let r = &view.rooms[i];
    let mut rows: Vec<Row> = vec![("Room", room_name(r).to_string())];
    match r.kind {
        Some(kind) => rows.push(("Kind", kind_name(kind).to_string())),
        None => rows.push((
            "Kind",
            "unknown: you did not notice what is there".to_string(),
        )),
    }
    if r.is_entry {
        rows.push(("Role", "entry".into()));
    }
    if r.is_boss {
        rows.push(("Role", "boss".into()));
    }
    if let Some(region) = view.regions.iter().find(|g| g.region_id == r.region_id) {
        rows.push(("Region", region.name.clone()));
    }
    if let Some(v) = r.visit {
        rows.push(("Run", format!("visited as room {v}")));
    }
    if r.current {
        rows.push(("Run", "you are here".into()));
    }
    if let Some(n) = r.option {
        rows.push(("Option", option_words(view, n)));
    }
    for p in view.passages.iter().filter(|p| p.from == i) {
        let to = view.rooms.get(p.to).map_or(UNKNOWN_ROOM, room_name);
        let mut line = String::new();
        if let Some(n) = p.option {
            line.push_str(&format!("{n}. "));
        }
        line.push_str(to);
        line.push_str(" — ");
        line.push_str(lock_name(p.lock));
        rows.push(("Exit", line));
    }
    rows
}

/// What the details panel says about passage `j` of the view.
pub fn passage_details(view: &PlayerView, j: usize) -> Vec<Row> {
    let Some(p) = view.passages.get(j) else {
        return Vec::new();
    };
    let name = |i: usize| {
        view.rooms
            .get(i)
            .map_or(UNKNOWN_ROOM, room_name)
            .to_string()
    };
    let mut rows: Vec<Row> = vec![
        ("From", name(p.from)),
        ("To", name(p.to)),
        ("Lock", lock_name(p.lock).to_string()),
    ];
    if !p.hint.trim().is_empty() {
        rows.push(("Hint", p.hint.clone()));
    }
    if p.walked {
        rows.push(("Run", "you walked it".into()));
    }
    if let Some(n) = p.option {
        rows.push(("This run", option_words(view, n)));
    }
    rows
}

/// "go 2 — locked: Perception 11 vs DC 12": an option of the pending fork as the chat has
/// told it (a roll only once a refused `!zone go` revealed it).
fn option_words(view: &PlayerView, n: usize) -> String {
    let mut s = format!("go {n}");
    if let Some(x) = exit(view, n) {
        s.push_str(match x.state {
            ExitState::Open => " — open",
            ExitState::Locked => " — locked",
            ExitState::Unchecked => " — not tested yet",
        });
        if let Some(reason) = &x.revealed {
            s.push_str(": ");
            s.push_str(&chat::lock_reason(reason));
        }
    }
    s
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
