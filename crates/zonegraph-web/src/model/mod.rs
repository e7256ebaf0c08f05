//! The drawable map: rooms and passages in pixels, with their run state and accessible names.
//!
//! Pure (no browser), so it is tested natively. Two builders, one per audience:
//! [`build`] draws a zone for its designer (everything in the file, a playtest's real rolls),
//! and [`build_player`] draws a player's map from the core's [`PlayerView`] alone (what the
//! run page and "View as player" show; the view decides what a player may know). Both place
//! a [`Layout`] of the core's (cells, and routes in cell units; the run page's comes from the
//! server, see [`player::from_drawing`]); this module only scales them, trims the routes to
//! the room boxes and places the marks.

use zonegraph_core::analysis;
use zonegraph_core::engine::{Check, PlayerView, Run};
use zonegraph_core::format::{LockKind, NodeKind};
use zonegraph_core::layout::Layout;
use zonegraph_core::zone::{Lock, Zone};

use crate::names::{Row, kind_name, lock_name};
use crate::player;

/// Distance between room centres, horizontally and vertically, in pixels.
pub const CELL_W: f64 = 226.0;
pub const CELL_H: f64 = 110.0;
/// A room's box.
pub const BOX_W: f64 = 184.0;
pub const BOX_H: f64 = 56.0;
/// Space around the drawing.
const PAD: f64 = 24.0;
/// Corner radius of routed passages.
const CORNER: f64 = 10.0;

/// Appends `x` rounded to `places` decimals (at most 6), trailing zeros dropped ("12",
/// "12.5", "-0.025"): SVG numbers and CSS transforms. Written out by hand because `f64`'s
/// `Display` brings ~10 KB of float printing into the WebAssembly.
pub fn push_dec(s: &mut String, x: f64, places: u32) {
    let scale = 10u64.pow(places.min(6));
    let v = (x * scale as f64).round() as i64;
    if v < 0 {
        s.push('-');
    }
    let a = v.unsigned_abs();
    s.push_str(&(a / scale).to_string());
    let (mut frac, mut digits) = (a % scale, scale / 10);
    if frac != 0 {
        s.push('.');
        while frac != 0 {
            s.push(char::from(b'0' + (frac / digits) as u8));
            frac %= digits;
            digits /= 10;
        }
    }
}

/// [`push_dec`] with one decimal.
pub fn push_num(s: &mut String, x: f64) {
    push_dec(s, x, 1);
}

/// [`push_num`] into a new string.
pub fn num(x: f64) -> String {
    let mut s = String::new();
    push_num(&mut s, x);
    s
}

/// A probability as a whole percentage: "45%".
pub fn percent(p: f64) -> String {
    let mut s = ((p * 100.0).round() as i64).to_string();
    s.push('%');
    s
}

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

/// Short text for a lock mark on the designer's map.
pub fn lock_badge(lock: &Lock) -> Option<String> {
    Some(match lock {
        Lock::None => return None,
        Lock::PerceptionCheck { dc } => format!("DC {dc}"),
        Lock::StatCheck { ability, dc } => {
            format!("{} {dc}", ability.as_str().to_ascii_uppercase())
        }
        Lock::KeyRequired { .. } => "⚷ key".into(),
        Lock::LevelMin { min_level } => format!("Lv {min_level}"),
        Lock::RegionClear { .. } => "region".into(),
        Lock::Invalid { .. } => "sealed".into(),
    })
}

/// A lock mark without numbers, for the player's map: the lock kind only.
pub fn player_badge(kind: LockKind) -> String {
    match kind {
        LockKind::None => "open",
        LockKind::PerceptionCheck => "hidden?",
        LockKind::StatCheck => "check",
        LockKind::KeyRequired => "⚷ key",
        LockKind::LevelMin => "level",
        LockKind::RegionClear => "region",
    }
    .to_string()
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

/// A room's accessible name: "Main Hall, elite, visited as room 4, option 1 (open)".
fn room_words(
    label: &str,
    kind: Option<NodeKind>,
    roles: (bool, bool),
    visit: Option<usize>,
    current: bool,
    option: Option<(usize, bool)>,
) -> String {
    let mut name = label.to_string();
    if let Some(kind) = kind {
        name.push_str(", ");
        name.push_str(kind_name(kind));
    }
    if roles.0 {
        name.push_str(", entry");
    }
    if roles.1 {
        name.push_str(", boss");
    }
    if let Some(v) = visit {
        name.push_str(", visited as room ");
        name.push_str(&v.to_string());
    }
    if current {
        name.push_str(", you are here");
    }
    if let Some((number, open)) = option {
        name.push_str(", option ");
        name.push_str(&number.to_string());
        name.push_str(if open { " (open)" } else { " (locked)" });
    }
    name
}

/// A passage's accessible name: "Passage from A to B, choice 2 at the fork, locked: …".
fn passage_words(
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
            let roles = (node.is_entry, node.is_boss);
            RoomMarks {
                name: room_words(&label, Some(node.kind), roles, visit, is_current, option),
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
            name: passage_words(
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
            let name = match r.kind {
                Some(_) => room_words(
                    player::room_name(r),
                    r.kind,
                    (r.is_entry, r.is_boss),
                    r.visit,
                    r.current,
                    option,
                ),
                // Capitalised: it starts the name, as a label does.
                None => room_words(
                    "Unknown room",
                    None,
                    (false, false),
                    r.visit,
                    r.current,
                    option,
                ),
            };
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
                badge: locked.then(|| player_badge(p.lock)),
                menu: p.option,
                walked: p.walked,
                option: p.option.map(option_of),
                name: passage_words(
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

/// Shortens the first and last segments so the line starts and ends at the room boxes.
fn trim(pts: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let mut out = pts.to_vec();
    if out.len() < 2 {
        return out;
    }
    let cut = |from: (f64, f64), towards: (f64, f64)| {
        let (dx, dy) = (towards.0 - from.0, towards.1 - from.1);
        if dx.abs() > dy.abs() {
            (from.0 + dx.signum() * BOX_W / 2.0, from.1)
        } else {
            (from.0, from.1 + dy.signum() * BOX_H / 2.0)
        }
    };
    let n = out.len();
    out[0] = cut(pts[0], pts[1]);
    out[n - 1] = cut(pts[n - 1], pts[n - 2]);
    out
}

/// Polyline with rounded corners (quadratic curves), as SVG path data.
fn rounded_path(pts: &[(f64, f64)]) -> String {
    let mut d = String::new();
    let Some(&(x0, y0)) = pts.first() else {
        return d;
    };
    let point = |d: &mut String, cmd: char, (x, y): (f64, f64)| {
        d.push(cmd);
        push_num(d, x);
        d.push(',');
        push_num(d, y);
    };
    point(&mut d, 'M', (x0, y0));
    for i in 1..pts.len() {
        let p = pts[i];
        if i + 1 < pts.len() {
            let (a, b) = (pts[i - 1], pts[i + 1]);
            let len_in = dist(a, p);
            let len_out = dist(p, b);
            let r = CORNER.min(len_in / 2.0).min(len_out / 2.0);
            if r > 0.5 {
                point(&mut d, 'L', towards(p, a, r));
                point(&mut d, 'Q', p);
                point(&mut d, ' ', towards(p, b, r));
                continue;
            }
        }
        point(&mut d, 'L', p);
    }
    d
}

fn dist(a: (f64, f64), b: (f64, f64)) -> f64 {
    ((b.0 - a.0).powi(2) + (b.1 - a.1).powi(2)).sqrt()
}

/// The point `r` from `p` towards `q`.
fn towards(p: (f64, f64), q: (f64, f64), r: f64) -> (f64, f64) {
    let l = dist(p, q);
    if l == 0.0 {
        return p;
    }
    (p.0 + (q.0 - p.0) * r / l, p.1 + (q.1 - p.1) * r / l)
}

fn longest_segment_mid(pts: &[(f64, f64)]) -> Option<(f64, f64)> {
    pts.windows(2)
        .max_by(|a, b| dist(a[0], a[1]).total_cmp(&dist(b[0], b[1])))
        .map(|w| ((w[0].0 + w[1].0) / 2.0, (w[0].1 + w[1].1) / 2.0))
}

/// Where a passage's lock mark goes: the middle of its longest segment, unless `covers` says
/// a mark there would sit on a room; then the first clear spot among the middle and quarter
/// points of its segments, longest first (short stubs near a room are often shared with
/// other passages); the middle of the longest when nothing is clear.
fn mark_spot(pts: &[(f64, f64)], covers: impl Fn(f64, f64) -> bool) -> Option<(f64, f64)> {
    let first = longest_segment_mid(pts)?;
    if !covers(first.0, first.1) {
        return Some(first);
    }
    let mut segments: Vec<((f64, f64), (f64, f64))> =
        pts.windows(2).map(|w| (w[0], w[1])).collect();
    zonegraph_core::text::sort_by(&mut segments, |a, b| {
        dist(b.0, b.1).total_cmp(&dist(a.0, a.1))
    });
    segments
        .iter()
        .flat_map(|&(a, b)| {
            [0.5, 0.25, 0.75].map(|t| (a.0 + (b.0 - a.0) * t, a.1 + (b.1 - a.1) * t))
        })
        .find(|&(x, y)| !covers(x, y))
        .or(Some(first))
}

/// A point `back` pixels before the end of the line (on its last segment).
fn point_before_end(pts: &[(f64, f64)]) -> Option<(f64, f64)> {
    let n = pts.len();
    (n >= 2).then(|| {
        let (a, b) = (pts[n - 2], pts[n - 1]);
        let back = (dist(a, b) / 2.0).min(18.0);
        towards(b, a, back)
    })
}

/// A direction for keyboard navigation between rooms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    Up,
    Down,
    Left,
    Right,
}

impl MapModel {
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

/// What the designer's details panel says about a room: everything in the file, and the
/// playtest's run. (A player's panel is [`player::room_details`], from the player view.)
pub fn room_details(zone: &Zone, run: Option<&Run>, id: &str) -> Vec<Row> {
    let Some(node) = zone.node_by_id(id) else {
        return Vec::new();
    };
    let mut rows: Vec<Row> = vec![
        ("Room", node.display_label().to_string()),
        ("Kind", kind_name(node.kind).to_string()),
        ("Id", node.id.to_string()),
    ];
    if node.is_entry {
        rows.push(("Role", "entry".into()));
    }
    if node.is_boss {
        rows.push(("Role", "boss".into()));
    }
    if !node.region_id.is_empty() {
        rows.push((
            "Region",
            format!("{} ({})", zone.region_name(&node.region_id), node.region_id),
        ));
    }
    let c = &node.content;
    rows.push((
        "Loot bias",
        format!("×{}", zonegraph_core::text::decimal(c.loot_bias)),
    ));
    if !c.encounter_override.is_empty() {
        rows.push(("Encounter", c.encounter_override.clone()));
    }
    if !c.narration.is_empty() {
        rows.push(("Narration", c.narration.clone()));
    }
    if !c.harvest_ref.is_empty() {
        rows.push(("Harvest", c.harvest_ref.clone()));
    }
    if let Some(key) = &c.grants_key {
        rows.push(("Grants key", key.clone()));
    }
    if let Some((x, y)) = node.pos {
        rows.push(("Position", format!("column {x}, row {y}")));
    }
    if let Some(run) = run {
        if let Some(i) = run.visited_nodes.iter().position(|v| v.as_str() == id) {
            rows.push(("Run", format!("visited as room {}", i + 1)));
        }
        if run.current_node.as_str() == id {
            rows.push(("Run", "the player is here".into()));
        }
    }
    if let Some(ix) = zone.node_index(id) {
        for (i, e) in zone.exits(ix).into_iter().enumerate() {
            let to = zone.node(zone.target(e));
            let lock = &zone.graph[e].lock;
            let how = if lock.is_locked() {
                analysis::requirement(zone, lock)
            } else {
                "open".into()
            };
            rows.push(("Exit", format!("{}. {} — {how}", i + 1, to.display_label())));
        }
    }
    rows
}

/// What the designer's details panel says about a passage (by file index): the lock, its
/// requirement and hint, and in a playtest the frozen roll of the pending fork.
pub fn passage_details(zone: &Zone, run: Option<&Run>, edge: usize) -> Vec<Row> {
    let Some(eix) = zone
        .graph
        .edge_indices()
        .find(|&e| zone.graph[e].file_index == edge)
    else {
        return Vec::new();
    };
    let e = &zone.graph[eix];
    let (s, t) = (zone.source(eix), zone.target(eix));
    let mut rows: Vec<Row> = vec![
        ("From", zone.node(s).display_label().to_string()),
        ("To", zone.node(t).display_label().to_string()),
        ("Lock", lock_name(e.lock.kind()).to_string()),
    ];
    if e.lock.is_locked() {
        rows.push(("Requires", analysis::requirement(zone, &e.lock)));
    }
    if !e.hint.is_empty() {
        rows.push(("Hint", e.hint.clone()));
    }
    let exits = zone.exits(s);
    if exits.len() >= 2
        && let Some(i) = exits.iter().position(|&x| x == eix)
    {
        rows.push((
            "Menu",
            format!("option {} of {} (weight {})", i + 1, exits.len(), e.weight),
        ));
    }
    if let Some(chance) = match &e.lock {
        Lock::PerceptionCheck { .. } | Lock::StatCheck { .. } => {
            let by: Vec<String> = [0, 2, 4]
                .iter()
                .filter_map(|&m| {
                    analysis::lock_pass_chance(&e.lock, 1, m)
                        .map(|c| format!("{m:+}: {}", percent(c)))
                })
                .collect();
            Some(by.join(" · "))
        }
        _ => None,
    } {
        rows.push(("Pass chance", chance));
    }
    if let Some(run) = run
        && let Some(fork) = run
            .pending_fork
            .as_ref()
            .filter(|f| f.at == zone.node(s).id)
        && let Some((i, o)) = fork
            .options
            .iter()
            .enumerate()
            .find(|(_, o)| o.to_node == zone.node(t).id)
    {
        rows.push((
            "This run",
            format!("option {}: {}", i + 1, check_text(zone, &o.check)),
        ));
    }
    rows
}

/// A frozen check in words: "Perception 11 vs DC 12 — failed".
pub fn check_text(zone: &Zone, check: &Check) -> String {
    let verdict = |ok: bool| if ok { "passed" } else { "failed" };
    match check {
        Check::None => "open".into(),
        Check::PerceptionCheck { d20, modifier, dc } => format!(
            "Perception {} vs DC {dc} — {} (d20 {d20}, {modifier:+})",
            i64::from(*d20) + i64::from(*modifier),
            verdict(check.passes())
        ),
        Check::StatCheck {
            ability,
            d20,
            modifier,
            dc,
        } => format!(
            "{} {} vs DC {dc} — {} (d20 {d20}, {modifier:+})",
            ability.name(),
            i64::from(*d20) + i64::from(*modifier),
            verdict(check.passes())
        ),
        Check::KeyRequired { key_id, held } => {
            format!("key {key_id} — {}", if *held { "held" } else { "not held" })
        }
        Check::LevelMin { min_level, level } => {
            format!("level {level} vs {min_level} — {}", verdict(check.passes()))
        }
        Check::RegionClear { region_id, cleared } => format!(
            "{} — {}",
            zone.region_name(region_id),
            if *cleared { "cleared" } else { "not cleared" }
        ),
        Check::Invalid { .. } => "sealed: the lock data is unusable".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenarios;
    use zonegraph_core::engine::{self, Character};
    use zonegraph_core::{layout, zone};

    /// A player's map laid out here, as "View as player" draws it.
    fn player_map(view: &PlayerView) -> MapModel {
        build_player(view, &player::lay_out(view))
    }

    #[test]
    fn the_servers_drawing_places_the_map_as_laying_it_out_here_does() {
        for s in scenarios::fixed()
            .into_iter()
            .chain(scenarios::random(7, 40))
        {
            let view = s.view();
            let here = player_map(&view);
            let sent = layout::Drawing::of_view(&view);
            // Through JSON, as the run page reads it.
            let text = serde_json::to_string(&sent).expect("a drawing serialises");
            let read: layout::Drawing = serde_json::from_str(&text).expect("and reads back");
            let there = build_player(&view, &player::from_drawing(&view, &read));
            assert_eq!(
                (here.width, here.height),
                (there.width, there.height),
                "{}",
                s.name
            );
            let at = |m: &MapModel| -> Vec<_> {
                m.rooms.iter().map(|r| (r.id.clone(), r.x, r.y)).collect()
            };
            assert_eq!(at(&here), at(&there), "{}", s.name);
            assert_eq!(here.passages.len(), there.passages.len(), "{}", s.name);
            for (a, b) in here.passages.iter().zip(&there.passages) {
                assert_eq!(
                    (a.edge, &a.from, &a.to),
                    (b.edge, &b.from, &b.to),
                    "{}",
                    s.name
                );
                // Thousandths of a cell: well under a pixel.
                let off = [
                    a.bbox.0 - b.bbox.0,
                    a.bbox.1 - b.bbox.1,
                    a.bbox.2 - b.bbox.2,
                ]
                .iter()
                .fold(0.0f64, |m, d| m.max(d.abs()));
                assert!(off < 0.5, "{}: passage {} moved {off} px", s.name, a.edge);
            }
        }
    }

    #[test]
    fn a_drawing_naming_rooms_and_passages_the_view_lacks_draws_what_it_has() {
        let view = scenarios::fixed()[0].view();
        let mut d = layout::Drawing::of_view(&view);
        d.rooms.push([9_999, 0, 40]);
        d.passages.push(layout::DrawnPassage {
            passage: 9_999,
            points: vec![[0, 0], [0, 40_000]],
        });
        let m = build_player(&view, &player::from_drawing(&view, &d));
        assert_eq!(m.rooms.len(), view.rooms.len());
        assert_eq!(m.passages.len(), view.passages.len());
    }

    fn crypt() -> Zone {
        let text = include_str!("../../../zones/crypt_valdris.json");
        zone::load(text).expect("the crypt parses").0
    }

    #[test]
    fn numbers_print_without_float_formatting() {
        let dec = |x: f64, p: u32| {
            let mut s = String::new();
            push_dec(&mut s, x, p);
            s
        };
        assert_eq!(num(12.0), "12");
        assert_eq!(num(12.46), "12.5");
        assert_eq!(num(-3.21), "-3.2");
        assert_eq!(num(-0.01), "0");
        assert_eq!(dec(0.025, 4), "0.025");
        assert_eq!(dec(1.0, 4), "1");
        assert_eq!(dec(0.0305, 3), "0.031");
        assert_eq!(percent(0.449), "45%");
    }

    /// What `format!` prints for `x` with `places` decimals (at most 6), trimmed to
    /// [`push_dec`]'s form: no trailing zeros, no lone point, no sign on zero.
    #[cfg(not(target_arch = "wasm32"))]
    fn std_dec(x: f64, places: u32) -> String {
        let places = places.min(6) as usize;
        let mut s = format!("{x:.places$}");
        if s.contains('.') {
            let end = s.trim_end_matches('0').trim_end_matches('.').len();
            s.truncate(end);
        }
        if s == "-0" { "0".into() } else { s }
    }

    // Differential tests of the hand-written formatter against `format!`, which it replaces
    // to keep float printing out of the WebAssembly. Native only: proptest is not built for
    // the browser tests.
    #[cfg(not(target_arch = "wasm32"))]
    use proptest::prelude::*;

    #[cfg(not(target_arch = "wasm32"))]
    proptest! {
        // The contract: `x · 10^places` rounded half away from zero (`f64::round`). `format!`
        // rounds ties to even on the exact value instead, so the reference is given the number
        // already rounded the same way.
        #[test]
        fn push_dec_is_format_of_the_same_rounding(
            x in prop_oneof![
                -1e9f64..1e9,
                -1e-5f64..1e-5,
                (-2_000_000i64..2_000_000).prop_map(|n| n as f64 / 2e6),
            ],
            places in 0u32..9,
        ) {
            let scale = 10f64.powi(places.min(6) as i32);
            let mut s = String::from("x=");
            push_dec(&mut s, x, places);
            prop_assert_eq!(s, format!("x={}", std_dec((x * scale).round() / scale, places)));
        }

        // Away from a tie the two roundings agree, so `format!` of `x` itself is the reference.
        #[test]
        fn push_dec_is_format_away_from_ties(x in -1e6f64..1e6, places in 0u32..9) {
            let frac = (x * 10f64.powi(places.min(6) as i32)).abs().fract();
            prop_assume!((frac - 0.5).abs() > 0.01);
            let mut s = String::new();
            push_dec(&mut s, x, places);
            prop_assert_eq!(s, std_dec(x, places));
        }
    }

    /// Every lock mark of `m` keeps off every room box.
    fn check_marks(what: &str, m: &MapModel) {
        for p in &m.passages {
            let Some((x, y, text)) = &p.mark else {
                continue;
            };
            let hw = (14.0 + 7.0 * text.chars().count() as f64) / 2.0;
            for r in &m.rooms {
                assert!(
                    (x - r.x).abs() >= hw + BOX_W / 2.0 || (y - r.y).abs() >= 10.0 + BOX_H / 2.0,
                    "{what}: the {text} mark of {} sits on {}",
                    p.name,
                    r.id
                );
            }
        }
    }

    #[test]
    fn lock_marks_keep_off_room_boxes_in_every_shipped_zone() {
        for (file, text) in crate::zones::SHIPPED {
            let z = zone::load(text).expect("shipped zones parse").0;
            check_marks(file, &build(&z, &layout::layout(&z), None));
        }
        for s in scenarios::fixed() {
            check_marks(&s.name, &player_map(&s.view()));
        }
    }

    #[test]
    fn a_mark_moves_along_its_passage_off_a_room() {
        // A long vertical run whose middle is covered, beside a short clear one.
        let pts = [(0.0, 0.0), (0.0, 400.0), (30.0, 400.0)];
        let covered = |_x: f64, y: f64| (150.0..250.0).contains(&y);
        assert_eq!(mark_spot(&pts, covered), Some((0.0, 100.0)));
        assert_eq!(mark_spot(&pts, |_, _| false), Some((0.0, 200.0)));
        assert_eq!(mark_spot(&pts, |_, _| true), Some((0.0, 200.0)));
        assert_eq!(mark_spot(&[(1.0, 1.0)], |_, _| false), None);
    }

    #[test]
    fn designer_map_has_every_room_and_passage_without_overlap() {
        let z = crypt();
        let m = build(&z, &layout::layout(&z), None);
        assert_eq!(m.rooms.len(), 8);
        assert_eq!(m.passages.len(), 9);
        for (i, a) in m.rooms.iter().enumerate() {
            for b in &m.rooms[i + 1..] {
                assert!(
                    (a.x - b.x).abs() >= BOX_W || (a.y - b.y).abs() >= BOX_H,
                    "{} overlaps {}",
                    a.id,
                    b.id
                );
            }
        }
        let side = m
            .passages
            .iter()
            .find(|p| p.to == "crypt_valdris.side_chapel")
            .expect("the side chapel passage");
        assert_eq!(side.lock, LockKind::PerceptionCheck);
        assert_eq!(side.menu.map(|m| m.2), Some(2));
        assert!(side.name.contains("Perception DC 12"), "{}", side.name);
    }

    #[test]
    fn a_players_map_draws_the_view_and_nothing_else() {
        // The Crypt at its fork after a failed Perception check.
        let s = &scenarios::fixed()[0];
        let view = s.view();
        let m = player_map(&view);
        assert_eq!(m.rooms.len(), view.rooms.len());
        assert_eq!(m.passages.len(), view.passages.len());
        assert!(m.rooms.iter().all(|r| r.kind != Some(NodeKind::Secret)));
        let unknown: Vec<_> = m.rooms.iter().filter(|r| r.kind.is_none()).collect();
        assert_eq!(unknown.len(), 1);
        assert_eq!(
            (unknown[0].label.as_str(), unknown[0].name.as_str()),
            ("?", "Unknown room")
        );
        assert!(unknown[0].id.starts_with('?'), "{}", unknown[0].id);
        let current = m.rooms.iter().find(|r| r.current).expect("a current room");
        assert_eq!(current.id, "crypt_valdris.fork");
        assert_eq!(m.rooms.iter().filter(|r| r.visit.is_some()).count(), 3);
        let hall = m
            .rooms
            .iter()
            .find(|r| r.id == "crypt_valdris.main_hall")
            .expect("the main hall");
        assert_eq!((hall.option, hall.option_open), (Some(1), true));
        assert_eq!(m.passages.iter().filter(|p| p.walked).count(), 2);
        let into_unknown = m
            .passages
            .iter()
            .find(|p| p.to == unknown[0].id)
            .expect("the passage into the unknown room");
        assert_eq!(
            into_unknown.mark.as_ref().map(|m| m.2.as_str()),
            Some("hidden?")
        );
        assert!(
            into_unknown.name.contains("to unknown room")
                && into_unknown.name.ends_with("locked: Perception check"),
            "{}",
            into_unknown.name
        );
        // The unknown room laid out where the designer put it: beside the main hall.
        assert_eq!(unknown[0].y, hall.y);
        assert!(unknown[0].x > hall.x);
    }

    #[test]
    fn a_players_map_and_panel_leak_nothing_over_many_plays() {
        let all = scenarios::fixed()
            .into_iter()
            .chain(scenarios::random(1, 300));
        let mut unknown_rooms = 0;
        for s in all {
            let view = s.view();
            let m = player_map(&view);
            let mut text = chat_and_panel(&view);
            for r in &m.rooms {
                text.extend([r.id.clone(), r.label.clone(), r.name.clone()]);
                unknown_rooms += usize::from(r.kind.is_none());
            }
            for p in &m.passages {
                text.extend([p.name.clone(), p.from.clone(), p.to.clone()]);
                text.extend(p.mark.as_ref().map(|m| m.2.clone()));
            }
            let text = text.join("\n");
            for bad in scenarios::forbidden(&s.zone, &view) {
                assert!(!text.contains(&bad), "{}: shows {bad:?}", s.name);
            }
        }
        assert!(
            unknown_rooms > 0,
            "the plays include a failed Perception check"
        );
    }

    /// The status words and every details panel of a view.
    fn chat_and_panel(view: &PlayerView) -> Vec<String> {
        let mut text = vec![zonegraph_core::chat::status(&view.status).text];
        let rows = (0..view.rooms.len())
            .flat_map(|i| player::room_details(view, &view.room_key(i)))
            .chain((0..view.passages.len()).flat_map(|j| player::passage_details(view, j)));
        text.extend(rows.map(|(k, v)| format!("{k}: {v}")));
        text
    }

    #[test]
    fn a_run_draws_its_path_and_fork_options() {
        let z = crypt();
        let c = Character::default();
        let (mut run, _) = engine::start(&z, "viewer-test", &c, 0).expect("starts");
        engine::advance(&z, &mut run, &c, 1).expect("entry");
        engine::advance(&z, &mut run, &c, 2).expect("corridor");
        let m = build(&z, &layout::layout(&z), Some(&run));
        let visited: Vec<_> = m.rooms.iter().filter_map(|r| r.visit).collect();
        assert_eq!(visited.len(), run.visited_nodes.len());
        assert!(
            m.rooms
                .iter()
                .any(|r| r.current && r.id == "crypt_valdris.fork")
        );
        assert_eq!(m.rooms.iter().filter(|r| r.option.is_some()).count(), 2);
        assert!(m.passages.iter().filter(|p| p.walked).count() >= 2);
        let details = passage_details(&z, Some(&run), 3);
        assert!(
            details
                .iter()
                .any(|(k, v)| *k == "This run" && v.contains("vs DC 12")),
            "{details:?}"
        );
    }

    #[test]
    fn arrow_keys_find_a_neighbour() {
        let z = crypt();
        let m = build(&z, &layout::layout(&z), None);
        let entry = m.room_pos(0).expect("entry drawn");
        let below = m.neighbour(entry, Direction::Down).expect("a room below");
        assert_eq!(m.rooms[below].id, "crypt_valdris.corridor");
        assert_eq!(m.neighbour(entry, Direction::Up), None);
    }
}
