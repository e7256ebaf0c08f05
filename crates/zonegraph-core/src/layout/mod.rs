//! Grid layout of a zone: integer cells for rooms and drawable routes for passages.
//!
//! One pipeline for every zone, one module per step:
//!
//! 1. `rank` — the row of each room. With a `pos_x`/`pos_y` hint on every room the hint's
//!    step is the least row (a room moves further down only when a passage into it would
//!    otherwise run sideways or up) and its lane the wanted column (hints that run left to right, `pos_x`
//!    the step and `pos_y` the lane, are turned a quarter, so every drawing runs top to
//!    bottom and the chat map draws their passages as it does any other zone's); otherwise
//!    rows are the longest-path depth from the entry. Only passages that close a loop are
//!    drawn upward.
//! 2. `order` — the order within each row, with a waypoint in every row a long passage
//!    passes: the hints' lanes kept when no passage crosses, else crossing minimisation
//!    (sweeps, then exact dynamic programming over narrow rows) that keeps the lanes as
//!    near as the fewest crossings allow.
//! 3. `place` — columns: rooms on whole columns, waypoints between them.
//! 4. `route` — in [`layout`] only, a tall narrow drawing folded into bands read down and up
//!    in turn (so a screen shows it at a readable size; the fold adds no crossing and no
//!    long upward passage), and the passages' polylines. The chat map, a scrolling text with a window
//!    around the current room, keeps one band (`grid`).
//!
//! [`Layout::stats`] counts what a reader sees: crossings, upward passages and the hints the
//! drawing could not keep (each with why). Everything is iterative and near-linear beyond
//! the exact step's budget, so zones of 100k rooms lay out in well under a second and cannot
//! overflow the stack. The output is deterministic: the same zone gives the same layout,
//! byte for byte.
//!
//! Serialised (the wasm `layoutZone` result), the Crypt of Valdris begins:
//!
//! ```json
//! { "mode": "hints", "width": 2, "height": 7,
//!   "nodes": [ { "id": "crypt_valdris.entry", "col": 0, "row": 0 }, … ],
//!   "edges": [ { "edge": 0, "from": "crypt_valdris.entry", "to": "crypt_valdris.corridor",
//!                "lock": "none", "route": "down", "points": [[0.0, 0.0], [0.0, 1.0]] }, … ],
//!   "notes": [],
//!   "stats": { "crossings": 0, "upward": 0, "overridden": [], "overridden_total": 0 } }
//! ```

mod order;
mod place;
mod rank;
mod route;

use std::collections::BTreeSet;

use petgraph::graph::NodeIndex;
use serde::{Deserialize, Serialize};

use crate::engine::PlayerView;
use crate::format::LockKind;
use crate::zone::Zone;

/// Where the cells came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LayoutMode {
    /// Every room had a `pos_x`/`pos_y` hint.
    Hints,
    /// Computed: layers by depth from the entry.
    Layered,
}

/// How a passage is routed between its rooms.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RouteKind {
    /// Into the next row down.
    Down,
    /// Down across more than one row, beside the rooms it passes.
    Long,
    /// Sideways within one row (no longer drawn; kept for readers of older layouts).
    SameRow,
    /// Up: a passage that closes a loop.
    Back,
    /// From a room to itself.
    SelfLoop,
}

/// A room's cell.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LayoutNode {
    pub id: String,
    pub col: u32,
    pub row: u32,
}

/// A passage's route.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LayoutEdge {
    /// Index of the passage in the file's `edges` array.
    pub edge: usize,
    pub from: String,
    pub to: String,
    pub lock: LockKind,
    pub route: RouteKind,
    /// Polyline in cell units: a room's centre is `[col, row]`. A segment leaves and enters
    /// a room vertically and crosses the channel between two rows as one straight line;
    /// segments never pass through another room's box (0.4 columns and 0.3 rows from its
    /// centre), so a renderer may round the corners for smooth paths.
    pub points: Vec<[f64; 2]>,
}

/// A zone's layout; the `layoutZone` result in JavaScript.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Layout {
    pub mode: LayoutMode,
    /// Columns of the grid (largest column + 1).
    pub width: u32,
    /// Rows of the grid (largest row + 1).
    pub height: u32,
    /// Every room, in file order.
    pub nodes: Vec<LayoutNode>,
    /// Every passage, in file order.
    pub edges: Vec<LayoutEdge>,
    /// What the layout changed or decided (moved rooms, ignored hints), for designers.
    pub notes: Vec<String>,
    /// What a reader of the drawing sees, counted on the polylines.
    pub stats: LayoutStats,
}

/// Counts of the drawing, for designers and benchmarks.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct LayoutStats {
    /// Points where two passages' polylines cross (passages that share a room meet there,
    /// which is not a crossing).
    pub crossings: u64,
    /// Passages drawn against the reading direction of their band: those that close a loop.
    pub upward: usize,
    /// Hinted rooms not drawn where their hint puts them, with why (the first
    /// [`OVERRIDE_LIMIT`]; `overridden_total` counts them all).
    pub overridden: Vec<Overridden>,
    pub overridden_total: usize,
}

impl LayoutStats {
    /// The drawing's counts in words, as `zonegraph check --stats` and the viewer's stats say
    /// them: "0 crossings, 1 upward passage, 2 hints overridden".
    pub fn summary(&self) -> String {
        let n = |count: usize, one: &str, many: &str| {
            format!("{count} {}", if count == 1 { one } else { many })
        };
        format!(
            "{}, {}, {} overridden",
            n(
                usize::try_from(self.crossings).unwrap_or(usize::MAX),
                "crossing",
                "crossings"
            ),
            n(self.upward, "upward passage", "upward passages"),
            n(self.overridden_total, "hint", "hints"),
        )
    }
}

/// A hinted room drawn elsewhere than its hint, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Overridden {
    pub id: String,
    pub why: String,
}

/// A layout as a page that does not lay out receives it: the run page reads it with the
/// player's view from `GET /api/runs/{token}` (the server lays the view out, so the page
/// carries no layout code). Integers only, cells and points in thousandths of a cell, so
/// reading it needs no float parsing. Rooms and passages go by their index in the graph laid
/// out (for a player view: `view.rooms` and `view.passages`).
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Drawing {
    /// Each drawn room: `[index, col, row]`.
    pub rooms: Vec<[u32; 3]>,
    /// Each drawn passage.
    pub passages: Vec<DrawnPassage>,
}

/// A passage of a [`Drawing`].
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DrawnPassage {
    /// Its index in the file's (the view's) passages.
    pub passage: usize,
    /// [`LayoutEdge::points`] in thousandths of a cell.
    pub points: Vec<[i32; 2]>,
}

/// Thousandths of a cell per cell in a [`Drawing`].
pub const DRAWING_SCALE: f64 = 1000.0;

impl Drawing {
    /// A player's map laid out ([`PlayerView::graph`]): what the server sends the run page.
    pub fn of_view(view: &PlayerView) -> Drawing {
        let graph = view.graph();
        Drawing::of(&graph, &layout(&graph))
    }

    /// `layout` of `zone` as a [`Drawing`] (rooms by node index).
    pub fn of(zone: &Zone, layout: &Layout) -> Drawing {
        let milli = |v: f64| (v * DRAWING_SCALE).round() as i32;
        Drawing {
            rooms: layout
                .nodes
                .iter()
                .filter_map(|n| {
                    let i = u32::try_from(zone.node_index(&n.id)?.index()).ok()?;
                    Some([i, n.col, n.row])
                })
                .collect(),
            passages: layout
                .edges
                .iter()
                .map(|e| DrawnPassage {
                    passage: e.edge,
                    points: e
                        .points
                        .iter()
                        .map(|p| [milli(p[0]), milli(p[1])])
                        .collect(),
                })
                .collect(),
        }
    }
}

/// Most overridden hints listed in [`LayoutStats::overridden`].
pub const OVERRIDE_LIMIT: usize = 64;

/// Lays a zone out on a grid. Never panics; rooms never share a cell.
pub fn layout(zone: &Zone) -> Layout {
    let mut p = placement(zone, &BTreeSet::new());
    let frame = route::Frame::fitted(&p.g, &p.x, p.cols);
    if frame.bands() > 1 {
        p.notes.push(format!(
            "{} rows folded into {} bands, read down and up in turn",
            p.g.rows.len(),
            frame.bands()
        ));
    }
    let depth = route::tracks(&p.g, &p.x, &frame);
    let stubs = route::gap_stubs(&p.g, &p.x, &frame);
    let nodes = zone
        .graph
        .node_indices()
        .filter(|ix| p.visible[ix.index()])
        .map(|ix| {
            let v = ix.index();
            let [c, r] = frame.at(p.g.layer[v], p.x[v]);
            LayoutNode {
                id: zone.graph[ix].id.0.clone(),
                col: to_u32(c),
                row: to_u32(r),
            }
        })
        .collect();
    let mut upward = 0;
    let edges = zone
        .graph
        .edge_indices()
        .filter_map(|e| {
            let (s, t) = zone.graph.edge_endpoints(e)?;
            let chain = &p.chains[e.index()];
            let first = *chain.first()?;
            let (route, points) = if s == t {
                let c = frame.at(p.g.layer[first], p.x[first]);
                (RouteKind::SelfLoop, route::self_loop(c))
            } else {
                let mut pts = route::polyline(&p.g, &p.x, &frame, &depth, &stubs, chain);
                let kind = if p.reversed[e.index()] {
                    pts.reverse();
                    upward += 1;
                    RouteKind::Back
                } else if chain.len() == 2 {
                    RouteKind::Down
                } else {
                    RouteKind::Long
                };
                (kind, pts)
            };
            let edge = &zone.graph[e];
            Some(LayoutEdge {
                edge: edge.file_index,
                from: zone.graph[s].id.0.clone(),
                to: zone.graph[t].id.0.clone(),
                lock: edge.lock.kind(),
                route,
                points,
            })
        })
        .collect();
    let total = p.overridden.len();
    let overridden = p
        .overridden
        .iter()
        .take(OVERRIDE_LIMIT)
        .map(|(v, why)| Overridden {
            id: zone.graph[NodeIndex::new(*v)].id.0.clone(),
            why: why.clone(),
        })
        .collect();
    Layout {
        mode: p.mode,
        width: u32::try_from(frame.width()).unwrap_or(u32::MAX),
        height: u32::try_from(frame.rows).unwrap_or(u32::MAX),
        nodes,
        edges,
        notes: p.notes,
        stats: LayoutStats {
            crossings: frame.crossings(&p.g, &p.x),
            upward,
            overridden,
            overridden_total: total,
        },
    }
}

/// Cells of the rooms that are not hidden; shared by [`layout`] (before its fold) and the
/// chat map, which lays out only what a player may see so that hidden rooms leave no
/// tell-tale gaps.
#[derive(Clone, Debug)]
pub(crate) struct Grid {
    /// `(col, row)` per node index; `None` for hidden rooms.
    pub cell: Vec<Option<(u32, u32)>>,
}

pub(crate) fn grid(zone: &Zone, hidden: &BTreeSet<NodeIndex>) -> Grid {
    let p = placement(zone, hidden);
    let cell: Vec<Option<(u32, u32)>> = (0..zone.graph.node_count())
        .map(|v| p.visible[v].then(|| (to_u32(p.x[v]), to_u32(p.g.layer[v] as f64))))
        .collect();
    Grid { cell }
}

/// Most notes of one kind listed before "and N more".
const NOTE_LIMIT: usize = 5;

/// Rows, orders and columns of the visible rooms and the passages' waypoints.
struct Placement {
    mode: LayoutMode,
    visible: Vec<bool>,
    g: order::Proper,
    /// Items of each passage, top to bottom (empty when an end is hidden).
    chains: Vec<Vec<usize>>,
    reversed: Vec<bool>,
    x: Vec<f64>,
    /// Columns of the unfolded drawing.
    cols: usize,
    notes: Vec<String>,
    overridden: Vec<(usize, String)>,
}

fn placement(zone: &Zone, hidden: &BTreeSet<NodeIndex>) -> Placement {
    let n = zone.graph.node_count();
    let visible: Vec<bool> = (0..n)
        .map(|i| !hidden.contains(&NodeIndex::new(i)))
        .collect();
    let ranked = rank::rank(zone, visible);
    let hinted = ranked.mode == LayoutMode::Hints;
    // Upward passages are laid out turned over, from their upper room down.
    let pairs: Vec<Option<(usize, usize)>> = ranked
        .edges
        .iter()
        .zip(&ranked.reversed)
        .map(|(e, &rev)| e.map(|(s, t)| if rev { (t, s) } else { (s, t) }))
        .collect();
    // The designer's lanes closed up: their order and alignment kept, the spacing not.
    let lane = if hinted {
        place::close_up_lanes(&ranked.layer, &ranked.lane, &pairs)
    } else {
        ranked.lane.clone()
    };
    let (mut g, chains) = order::proper(n, &ranked.visible, &ranked.layer, &pairs, &lane);
    order::minimise(&mut g, hinted);
    let (x, shift) = place::columns(&g, hinted);
    let cols = g
        .rows
        .iter()
        .flatten()
        .map(|&v| x[v])
        .fold(-1.0f64, f64::max)
        .ceil() as i64
        + 1;
    let mut overridden = ranked.overridden;
    if hinted {
        lanes_kept(&g, &x, shift, &lane, &mut overridden);
    }
    Placement {
        mode: ranked.mode,
        visible: ranked.visible,
        g,
        chains,
        reversed: ranked.reversed,
        x,
        cols: usize::try_from(cols).unwrap_or(0),
        notes: ranked.notes,
        overridden,
    }
}

/// Reports the hinted rooms drawn off their lane (a shift of the whole drawing aside): their
/// row was reordered to spare a crossing, or they stepped aside for a passage running past.
fn lanes_kept(
    g: &order::Proper,
    x: &[f64],
    shift: f64,
    lane: &[Option<i64>],
    out: &mut Vec<(usize, String)>,
) {
    for row in &g.rows {
        for (i, &v) in row.iter().enumerate() {
            let Some(l) = lane.get(v).copied().flatten() else {
                continue;
            };
            let at = (x[v] - shift).round() as i64;
            if at == l {
                continue;
            }
            let reordered = row.iter().enumerate().any(|(j, &w)| {
                lane.get(w)
                    .copied()
                    .flatten()
                    .is_some_and(|lw| (j < i && lw > l) || (j > i && lw < l))
            });
            let why = if reordered {
                format!(
                    "drawn in column {at}, not its hinted lane's column {l}: its row was \
                     reordered so that passages do not cross"
                )
            } else {
                format!(
                    "drawn in column {at}, not its hinted lane's column {l}: moved aside for \
                     a passage running past"
                )
            };
            out.push((v, why));
        }
    }
}

fn to_u32(v: f64) -> u32 {
    if v.is_nan() || v <= 0.0 {
        0
    } else if v >= f64::from(u32::MAX) {
        u32::MAX
    } else {
        v.round() as u32
    }
}

#[cfg(test)]
mod tests;
