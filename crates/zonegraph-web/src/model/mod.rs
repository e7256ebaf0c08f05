//! The drawable map: rooms and passages in pixels, with their run state and accessible names
//! (worded by the core's `chat::viewer`).
//!
//! Pure (no browser), so it is tested natively. Two builders, one per audience:
//! [`build`] draws a zone for its designer (everything in the file, a playtest's real rolls),
//! and [`build_player`] draws a player's map from the core's [`PlayerView`] alone (what the
//! run page and "View as player" show; the view decides what a player may know). Both place
//! a [`Layout`] of the core's (cells, and routes in cell units; the run page's comes from the
//! server, see [`player::from_drawing`]); this module only scales them, trims the routes to
//! the room boxes and places the marks.
//!
//! Beside it: `numbers` (how the drawing prints numbers), `geometry` (a passage's line and
//! where its marks go), `legend` (what a drawing uses) and `details` (what the designer's
//! panel says).

mod details;
mod geometry;
mod legend;
mod numbers;
#[cfg(test)]
mod tests;

use zonegraph_core::analysis;
use zonegraph_core::chat::viewer::{self as words, RoomFacts};
use zonegraph_core::engine::{PlayerView, Run};
use zonegraph_core::format::{LockKind, NodeKind};
use zonegraph_core::layout::Layout;
use zonegraph_core::zone::Zone;

pub use details::{check_text, lock_badge, passage_details, room_details};
use geometry::{mark_spot, point_before_end, rounded_path, trim};
pub use legend::LegendItems;
pub use numbers::{num, percent, push_dec, push_num};

use crate::names::lock_name;
use crate::player;

/// Distance between room centres, horizontally and vertically, in pixels.
pub const CELL_W: f64 = 226.0;
pub const CELL_H: f64 = 110.0;
/// A room's box.
pub const BOX_W: f64 = 184.0;
pub const BOX_H: f64 = 56.0;
/// Where a room's round marks sit, from its centre, and their diameter: the visit number
/// (above right) and the fork option's number (right).
pub const VISIT_MARK: (f64, f64, f64) = (88.0, -24.0, 22.0);
pub const OPTION_MARK: (f64, f64, f64) = (108.0, 0.0, 26.0);
/// How far left of the current room's centre its "you are here" arrow reaches.
pub const HERE_MARK_LEFT: f64 = 110.0;
/// Space around the drawing.
const PAD: f64 = 24.0;

/// A room as drawn.
#[derive(Clone, Debug, PartialEq)]
pub struct RoomShape {
    /// Node index in the drawn graph: the zone's (file order), or the player view's `rooms`.
    pub ix: usize,
    /// The room's id; `?N` for a room a player does not know ([`PlayerView::room_key`]).
    pub id: String,
    /// `?` for a room a player does not know.
    pub label: String,
    /// `None` for a room a player does not know.
    pub kind: Option<NodeKind>,
    /// Centre, in pixels.
    pub x: f64,
    pub y: f64,
    /// Position in the visited path (1-based), when the run reached it.
    pub visit: Option<usize>,
    pub current: bool,
    /// Menu number when the room is an option of the pending fork.
    pub option: Option<usize>,
    /// Whether that option is open.
    pub option_open: bool,
    /// What a screen reader says.
    pub name: String,
}

/// A passage as drawn.
#[derive(Clone, Debug, PartialEq)]
pub struct PassageShape {
    /// Index in the file's `edges` array, or in the player view's `passages`.
    pub edge: usize,
    pub from: String,
    pub to: String,
    pub lock: LockKind,
    /// SVG path data, trimmed to the room boxes, corners rounded.
    pub d: String,
    /// Where the lock mark sits, and its short text ("DC 12" for a designer, "hidden?" for a
    /// player).
    pub mark: Option<(f64, f64, String)>,
    /// Menu number at a fork, placed near the arrow.
    pub menu: Option<(f64, f64, usize)>,
    /// The run walked this passage.
    pub walked: bool,
    /// The passage is an option of the pending fork: its number and whether it is open.
    pub option: Option<(usize, bool)>,
    pub name: String,
    /// Bounding box of the line: `(min x, min y, max x, max y)`.
    pub bbox: (f64, f64, f64, f64),
}

/// Everything the SVG draws.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MapModel {
    pub width: f64,
    pub height: f64,
    pub rooms: Vec<RoomShape>,
    pub passages: Vec<PassageShape>,
}

/// The glyph drawn on a room: the chat map's glyphs, except fork and merge, whose OCR
/// symbols few fonts carry, and `?` for a room a player does not know.
pub fn kind_glyph(kind: Option<NodeKind>) -> char {
    match kind {
        None => '?',
        Some(NodeKind::Fork) => '⋔',
        Some(NodeKind::Merge) => '⋎',
        Some(k) => zonegraph_core::map::kind_glyph(k),
    }
}

/// What is drawn on a room, before it is placed.
struct RoomMarks {
    label: String,
    kind: Option<NodeKind>,
    visit: Option<usize>,
    current: bool,
    option: Option<(usize, bool)>,
    name: String,
}

/// What is drawn on a passage, before it is routed.
struct PassageMarks {
    lock: LockKind,
    badge: Option<String>,
    menu: Option<usize>,
    walked: bool,
    option: Option<(usize, bool)>,
    name: String,
}

/// The designer's drawing of `zone` laid out as `layout`: every room and passage of the file,
/// lock data on the marks, and `run` (a playtest) with its real rolls.
pub fn build(zone: &Zone, layout: &Layout, run: Option<&Run>) -> MapModel {
    let n_nodes = zone.graph.node_count();
    let ix_of = |id: &str| zone.node_index(id).map(|ix| ix.index());
    let mut visits: Vec<Option<usize>> = vec![None; n_nodes];
    // Walked passages as (from, to) node indices.
    let mut walked: Vec<(usize, usize)> = Vec::new();
    let mut current = None;
    let mut options: Vec<Option<(usize, bool)>> = vec![None; n_nodes];
    let mut fork_at = None;
    if let Some(r) = run {
        let path: Vec<Option<usize>> = r
            .visited_nodes
            .iter()
            .map(|id| ix_of(id.as_str()))
            .collect();
        // A room visited twice shows its last visit.
        for (i, ix) in path.iter().enumerate() {
            if let Some(ix) = *ix {
                visits[ix] = Some(i + 1);
            }
        }
        walked = path
            .windows(2)
            .filter_map(|w| Some((w[0]?, w[1]?)))
            .collect();
        current = ix_of(r.current_node.as_str());
        if let Some(f) = &r.pending_fork {
            fork_at = ix_of(f.at.as_str());
            if f.at == r.current_node && !r.is_over() {
                for (i, o) in f.options.iter().enumerate() {
                    if let Some(ix) = ix_of(o.to_node.as_str()) {
                        options[ix] = Some((i + 1, o.open));
                    }
                }
            }
        }
    }
    let rooms = zone
        .graph
        .node_indices()
        .map(|ix| {
            let node = &zone.graph[ix];
            let i = ix.index();
            let (visit, is_current, option) = (visits[i], current == Some(i), options[i]);
            let label = node.display_label().to_string();
            RoomMarks {
                name: words::room_accessible_name(&RoomFacts {
                    label: Some(&label),
                    kind: Some(node.kind),
                    is_entry: node.is_entry,
                    is_boss: node.is_boss,
                    visit,
                    current: is_current,
                    option,
                }),
                label,
                kind: Some(node.kind),
                visit,
                current: is_current,
                option,
            }
        })
        .collect();
    let mut passages: Vec<Option<PassageMarks>> =
        (0..zone.graph.edge_count()).map(|_| None).collect();
    for eix in zone.graph.edge_indices() {
        let edge = &zone.graph[eix];
        let src = zone.source(eix);
        let (from, to) = (src.index(), zone.target(eix).index());
        let exits = zone.exits(src);
        let menu = (exits.len() >= 2)
            .then(|| exits.iter().position(|&x| x == eix).map(|i| i + 1))
            .flatten();
        let is_walked = walked.contains(&(from, to));
        let requirement = edge
            .lock
            .is_locked()
            .then(|| analysis::requirement(zone, &edge.lock));
        let marks = PassageMarks {
            lock: edge.lock.kind(),
            badge: lock_badge(&edge.lock),
            menu,
            walked: is_walked,
            option: (fork_at == Some(from)).then(|| options[to]).flatten(),
            name: words::passage_accessible_name(
                zone.node(src).display_label(),
                zone.node(zone.target(eix)).display_label(),
                menu,
                requirement.as_deref(),
                is_walked,
            ),
        };
        if let Some(slot) = passages.get_mut(edge.file_index) {
            *slot = Some(marks);
        }
    }
    place(
        |id| zone.node_index(id).map(|ix| ix.index()),
        layout,
        rooms,
        passages,
    )
}

/// A player's map, drawn from the core's player view alone: rooms as the view names them (a
/// room the player does not know is a `?` called "unknown room"), the lock kind on each
/// locked passage (never a DC, a level or a key), the visited path, the current room and
/// the pending fork's option numbers as the view gives them, placed as `layout` (of the
/// view's own graph: [`player::lay_out`] or the server's [`player::from_drawing`]) says, so rooms left out leave no trace.
pub fn build_player(view: &PlayerView, layout: &Layout) -> MapModel {
    let option_of = |n: usize| (n, player::option_open(view, n));
    let rooms = view
        .rooms
        .iter()
        .map(|r| {
            let option = r.option.map(option_of);
            // A room the player does not know: no label, kind or role in its name.
            let known = r.kind.is_some();
            let name = words::room_accessible_name(&RoomFacts {
                label: known.then(|| player::room_name(r)),
                kind: r.kind,
                is_entry: known && r.is_entry,
                is_boss: known && r.is_boss,
                visit: r.visit,
                current: r.current,
                option,
            });
            RoomMarks {
                label: r.label.clone().unwrap_or_else(|| "?".to_string()),
                kind: r.kind,
                visit: r.visit,
                current: r.current,
                option,
                name,
            }
        })
        .collect();
    let room = |i: usize| {
        view.rooms
            .get(i)
            .map_or(player::UNKNOWN_ROOM, player::room_name)
    };
    let passages = view
        .passages
        .iter()
        .map(|p| {
            let locked = p.lock != LockKind::None;
            Some(PassageMarks {
                lock: p.lock,
                badge: locked.then(|| words::player_lock_mark(p.lock).to_string()),
                menu: p.option,
                walked: p.walked,
                option: p.option.map(option_of),
                name: words::passage_accessible_name(
                    room(p.from),
                    room(p.to),
                    p.option,
                    locked.then(|| lock_name(p.lock)),
                    p.walked,
                ),
            })
        })
        .collect();
    place(|key| view.room_index(key), layout, rooms, passages)
}

/// Places `rooms` (by the index `index_of` gives a layout node's id) and routes `passages`
/// (by file index) as `layout` says, in pixels.
///
/// Lookups are dense vectors by node index (rooms) or file index (passages), not maps: the
/// same speed for a map, and far less WebAssembly than a `BTreeMap` per key type.
fn place(
    index_of: impl Fn(&str) -> Option<usize>,
    layout: &Layout,
    rooms_in: Vec<RoomMarks>,
    mut passages_in: Vec<Option<PassageMarks>>,
) -> MapModel {
    // Bounds over rooms and route points, so back routes in the outer gutters fit.
    let (mut min_x, mut min_y, mut max_x, mut max_y) = (0.0f64, 0.0f64, 0.0f64, 0.0f64);
    for n in &layout.nodes {
        max_x = max_x.max(f64::from(n.col));
        max_y = max_y.max(f64::from(n.row));
    }
    for e in &layout.edges {
        for p in &e.points {
            min_x = min_x.min(p[0]);
            min_y = min_y.min(p[1]);
            max_x = max_x.max(p[0]);
            max_y = max_y.max(p[1]);
        }
    }
    let ox = PAD + BOX_W / 2.0 - min_x * CELL_W;
    let oy = PAD + BOX_H / 2.0 - min_y * CELL_H;
    let px = |c: f64, r: f64| (ox + c * CELL_W, oy + r * CELL_H);
    let width = 2.0 * PAD + BOX_W + (max_x - min_x) * CELL_W;
    let height = 2.0 * PAD + BOX_H + (max_y - min_y) * CELL_H;

    let mut marks: Vec<Option<RoomMarks>> = rooms_in.into_iter().map(Some).collect();
    let mut rooms = Vec::with_capacity(layout.nodes.len());
    for n in &layout.nodes {
        let Some(i) = index_of(&n.id) else {
            continue;
        };
        let Some(m) = marks.get_mut(i).and_then(Option::take) else {
            continue;
        };
        let (x, y) = px(f64::from(n.col), f64::from(n.row));
        rooms.push(RoomShape {
            ix: i,
            id: n.id.clone(),
            label: m.label,
            kind: m.kind,
            x,
            y,
            visit: m.visit,
            current: m.current,
            option: m.option.map(|o| o.0),
            option_open: m.option.is_some_and(|o| o.1),
            name: m.name,
        });
    }

    // Grid cells holding a drawn room, so lock marks can keep off room boxes.
    let grid_w = layout
        .nodes
        .iter()
        .map(|n| n.col as usize + 1)
        .max()
        .unwrap_or(0);
    let grid_h = layout
        .nodes
        .iter()
        .map(|n| n.row as usize + 1)
        .max()
        .unwrap_or(0);
    let mut occupied = vec![false; grid_w * grid_h];
    for r in &rooms {
        let (c, row) = (((r.x - ox) / CELL_W).round(), ((r.y - oy) / CELL_H).round());
        if c >= 0.0 && row >= 0.0 && (c as usize) < grid_w && (row as usize) < grid_h {
            occupied[row as usize * grid_w + c as usize] = true;
        }
    }
    // Whether a mark of half-size (hw, hh) centred at (x, y) would cover part of a room box.
    let on_a_room = |x: f64, y: f64, hw: f64, hh: f64| {
        let (c, r) = ((x - ox) / CELL_W, (y - oy) / CELL_H);
        let near = |v: f64, len: usize| {
            let lo = (v.floor() - 1.0).max(0.0) as usize;
            let hi = ((v.ceil() + 1.0).max(0.0) as usize).min(len.saturating_sub(1));
            lo..=hi
        };
        near(r, grid_h).any(|row| {
            near(c, grid_w).any(|col| {
                let (bx, by) = px(col as f64, row as f64);
                occupied.get(row * grid_w + col).copied().unwrap_or(false)
                    && (x - bx).abs() < hw + BOX_W / 2.0
                    && (y - by).abs() < hh + BOX_H / 2.0
            })
        })
    };

    let mut passages = Vec::with_capacity(layout.edges.len());
    for e in &layout.edges {
        let Some(m) = passages_in.get_mut(e.edge).and_then(Option::take) else {
            continue;
        };
        let pts: Vec<(f64, f64)> = e.points.iter().map(|p| px(p[0], p[1])).collect();
        let pts = trim(&pts);
        let d = rounded_path(&pts);
        let bbox = pts.iter().fold(
            (f64::MAX, f64::MAX, f64::MIN, f64::MIN),
            |(a, b, c, d), &(x, y)| (a.min(x), b.min(y), c.max(x), d.max(y)),
        );
        let mark = m.badge.and_then(|text| {
            // The badge as map.rs draws it: 14 + 7 per character wide, 20 high.
            let hw = (14.0 + 7.0 * text.chars().count() as f64) / 2.0;
            mark_spot(&pts, |x, y| on_a_room(x, y, hw, 10.0)).map(|(x, y)| (x, y, text))
        });
        let menu = m
            .menu
            .and_then(|n| point_before_end(&pts).map(|(x, y)| (x, y, n)));
        passages.push(PassageShape {
            edge: e.edge,
            from: e.from.clone(),
            to: e.to.clone(),
            lock: m.lock,
            d,
            mark,
            menu,
            walked: m.walked,
            option: m.option,
            name: m.name,
            bbox,
        });
    }

    MapModel {
        width,
        height,
        rooms,
        passages,
    }
}

/// A direction for keyboard navigation between rooms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    Up,
    Down,
    Left,
    Right,
}

impl RoomShape {
    /// The room's box and the marks drawn beside it: `(left, top, right, bottom)`, in pixels.
    pub fn extent(&self) -> (f64, f64, f64, f64) {
        let (mut l, mut t) = (self.x - BOX_W / 2.0, self.y - BOX_H / 2.0);
        let (mut r, b) = (self.x + BOX_W / 2.0, self.y + BOX_H / 2.0);
        if self.current {
            l = self.x - HERE_MARK_LEFT;
        }
        if self.visit.is_some() {
            let (dx, dy, d) = VISIT_MARK;
            t = t.min(self.y + dy - d / 2.0);
            r = r.max(self.x + dx + d / 2.0);
        }
        if self.option.is_some() {
            let (dx, _, d) = OPTION_MARK;
            r = r.max(self.x + dx + d / 2.0);
        }
        (l, t, r, b)
    }
}

impl MapModel {
    /// What a player's map keeps on screen: the current room, the pending fork's options and
    /// the unknown rooms a passage leads to from the current room (an option only sensed,
    /// which the view ties to no room), each with its marks ([`RoomShape::extent`]).
    pub fn focus(&self) -> Vec<(f64, f64, f64, f64)> {
        let here = self.rooms.iter().find(|r| r.current).map(|r| r.id.as_str());
        let sensed = |r: &RoomShape| {
            r.kind.is_none()
                && self
                    .passages
                    .iter()
                    .any(|p| Some(p.from.as_str()) == here && p.to == r.id)
        };
        self.rooms
            .iter()
            .filter(|r| r.current || r.option.is_some() || sensed(r))
            .map(RoomShape::extent)
            .collect()
    }

    /// The room nearest to room `from` (a position in `rooms`) in direction `dir`.
    pub fn neighbour(&self, from: usize, dir: Direction) -> Option<usize> {
        let here = self.rooms.get(from)?;
        self.rooms
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != from)
            .filter_map(|(i, r)| {
                let (dx, dy) = (r.x - here.x, r.y - here.y);
                let (along, across) = match dir {
                    Direction::Right => (dx, dy),
                    Direction::Left => (-dx, dy),
                    Direction::Down => (dy, dx),
                    Direction::Up => (-dy, dx),
                };
                (along > 1.0).then_some((i, along + 2.0 * across.abs()))
            })
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(i, _)| i)
    }

    /// The room at node index `ix`, as a position in `rooms`.
    pub fn room_pos(&self, ix: usize) -> Option<usize> {
        self.rooms.iter().position(|r| r.ix == ix)
    }
}
