//! Grid layout of a zone: integer cells for rooms and drawable routes for passages.
//!
//! When every room has a `pos_x`/`pos_y` hint the hints are the layout (column, row). Hints
//! that run left to right (more passages step right than down: `pos_x` is the step along the
//! path, `pos_y` the lane) are turned a quarter, so every drawing runs
//! top to bottom and the chat map draws their passages as it does any other zone's. A long
//! narrow hinted drawing is then folded, in [`layout`] only, into side-by-side bands of rows
//! (read left to right, like newspaper columns), keeping the hints' order and lanes, so a
//! screen shows it at a readable size; the chat map, a scrolling text with a window around the
//! current room, keeps one band. Otherwise rooms are layered top-down by longest-path depth from the entry (back edges of
//! a depth-first search are ignored, rooms the entry cannot reach come after), and ordered
//! within a layer by the barycenter of their neighbours. Everything is iterative and
//! `O((rooms + passages) log rooms)`, so zones of 100k rooms lay out in milliseconds and
//! cannot overflow the stack. The output is deterministic: the same zone gives the same
//! layout, byte for byte.
//!
//! Serialised (the wasm `layoutZone` result), the Crypt of Valdris begins:
//!
//! ```json
//! { "mode": "hints", "width": 3, "height": 7,
//!   "nodes": [ { "id": "crypt_valdris.entry", "col": 0, "row": 0 }, … ],
//!   "edges": [ { "edge": 0, "from": "crypt_valdris.entry", "to": "crypt_valdris.corridor",
//!                "lock": "none", "route": "down", "points": [[0.0, 0.0], [0.0, 1.0]] }, … ],
//!   "notes": [] }
//! ```

use std::collections::{BTreeSet, HashMap};

use petgraph::graph::NodeIndex;
use serde::Serialize;

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
    /// Down across one or more rows, through the gutters between columns.
    Long,
    /// Sideways within one row.
    SameRow,
    /// Up (a loop or a passage back toward the entry), around the side in the gutters.
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
    /// Polyline in cell units: a room's centre is `[col, row]`; gutters between columns and
    /// rows are at `.5`. Segments never pass through another room's cell (a cell's box is
    /// narrower than one unit), so a renderer may round the corners for smooth paths.
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
}

/// Lays a zone out on a grid. Never panics; rooms never share a cell.
pub fn layout(zone: &Zone) -> Layout {
    let mut grid = grid(zone, &BTreeSet::new());
    fold(&mut grid);
    let nodes = zone
        .graph
        .node_indices()
        .filter_map(|ix| {
            grid.cell[ix.index()].map(|(col, row)| LayoutNode {
                id: zone.graph[ix].id.0.clone(),
                col,
                row,
            })
        })
        .collect();
    let column_rows = grid.column_rows();
    let edges = zone
        .graph
        .edge_indices()
        .filter_map(|e| {
            let (s, t) = zone.graph.edge_endpoints(e)?;
            let (a, b) = (grid.cell[s.index()]?, grid.cell[t.index()]?);
            let (route, points) = route(a, b, s == t, &column_rows);
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
    Layout {
        mode: grid.mode,
        width: grid.width,
        height: grid.height,
        nodes,
        edges,
        notes: grid.notes,
    }
}

/// Cells of the rooms that are not hidden; shared by [`layout`] and the chat map, which lays
/// out only what a player may see so that hidden rooms leave no tell-tale gaps.
#[derive(Clone, Debug)]
pub(crate) struct Grid {
    pub mode: LayoutMode,
    /// `(col, row)` per node index; `None` for hidden rooms.
    pub cell: Vec<Option<(u32, u32)>>,
    pub width: u32,
    pub height: u32,
    pub notes: Vec<String>,
}

impl Grid {
    /// Rows occupied in each column, sorted.
    fn column_rows(&self) -> Vec<Vec<u32>> {
        let mut cols = vec![Vec::new(); self.width as usize];
        for &(c, r) in self.cell.iter().flatten() {
            cols[c as usize].push(r);
        }
        for rows in &mut cols {
            crate::text::sort(rows);
        }
        cols
    }
}

/// A hinted drawing at most this many columns wide is a chain that may be folded…
const FOLD_MAX_COLUMNS: u32 = 3;
/// …when it is taller than this many rows.
const FOLD_ROWS: u32 = 12;
/// A cell's width over its height as drawn (about 2: the viewer's 226 × 110 px, the chat
/// map's 24 characters × 3 lines), and the drawing's shape a fold aims for (a wide screen).
const CELL_ASPECT: f64 = 2.0;
const FOLD_ASPECT: f64 = 1.6;

/// Folds a tall narrow hinted grid into side-by-side bands of rows: row `r` goes to band
/// `r / rows`, shifted right by the bands before it. Bands sit one column gutter apart, no
/// empty column between them: side lanes are sparse, and every cell a fold spends on a gap
/// is a cell fewer on screen at a readable size. The passage from a band's foot to the next
/// band's head runs up that gutter. The number of bands brings the drawing
/// closest to [`FOLD_ASPECT`].
fn fold(grid: &mut Grid) {
    let (w, h) = (grid.width, grid.height);
    if grid.mode != LayoutMode::Hints || w > FOLD_MAX_COLUMNS || h <= FOLD_ROWS {
        return;
    }
    let shape = |bands: u32| {
        let rows = h.div_ceil(bands);
        let cols = bands * w;
        // How many times too wide or too tall (no `ln`: it would bring libm's into wasm).
        let r = f64::from(cols) * CELL_ASPECT / f64::from(rows) / FOLD_ASPECT;
        r.max(1.0 / r)
    };
    let bands = (1..=h.div_ceil(FOLD_ROWS / 2))
        .min_by(|&a, &b| shape(a).total_cmp(&shape(b)))
        .unwrap_or(1);
    if bands < 2 {
        return;
    }
    let rows = h.div_ceil(bands);
    let bands = h.div_ceil(rows);
    for (c, r) in grid.cell.iter_mut().flatten() {
        *c += (*r / rows) * w;
        *r %= rows;
    }
    grid.height = rows;
    grid.width = bands * w;
    grid.notes
        .push(format!("{h} rows folded into {bands} bands"));
}

/// Most notes of one kind listed before "and N more".
const NOTE_LIMIT: usize = 5;
/// Empty rows or columns between hinted rooms are kept up to this many; wider gaps shrink.
const MAX_GAP: i64 = 2;

pub(crate) fn grid(zone: &Zone, hidden: &BTreeSet<NodeIndex>) -> Grid {
    let n = zone.graph.node_count();
    let visible: Vec<bool> = zone
        .graph
        .node_indices()
        .map(|ix| !hidden.contains(&ix))
        .collect();
    let shown = visible.iter().filter(|&&v| v).count();
    let hinted = zone
        .graph
        .node_indices()
        .filter(|&ix| visible[ix.index()] && zone.graph[ix].pos.is_some())
        .count();
    let mut notes = Vec::new();
    let (mode, cell) = if shown > 0 && hinted == shown && !zone.legacy {
        (LayoutMode::Hints, hinted_cells(zone, &visible, &mut notes))
    } else {
        if zone.legacy {
            notes.push("legacy linear zone: its rooms are laid out top-down".to_string());
        } else if hinted > 0 {
            notes.push(format!(
                "{} of {shown} rooms have no pos_x/pos_y hint, so every room is placed by the \
                 layered layout",
                shown - hinted
            ));
        }
        (LayoutMode::Layered, layered_cells(zone, &visible))
    };
    debug_assert_eq!(cell.len(), n);
    let width = cell
        .iter()
        .flatten()
        .map(|&(c, _)| c + 1)
        .max()
        .unwrap_or(0);
    let height = cell
        .iter()
        .flatten()
        .map(|&(_, r)| r + 1)
        .max()
        .unwrap_or(0);
    Grid {
        mode,
        cell,
        width,
        height,
        notes,
    }
}

/// Sorted distinct values → coordinates from 0, with gaps wider than [`MAX_GAP`] shrunk.
fn compress_axis(values: &mut Vec<i64>) -> (Vec<i64>, bool) {
    crate::text::sort_dedup(values);
    let mut coords = Vec::with_capacity(values.len());
    let mut shrunk = false;
    let mut at = 0i64;
    for (i, &v) in values.iter().enumerate() {
        if i > 0 {
            let gap = v - values[i - 1];
            if gap > MAX_GAP {
                shrunk = true;
            }
            at += gap.min(MAX_GAP);
        }
        coords.push(at);
    }
    (coords, shrunk)
}

fn lookup(values: &[i64], coords: &[i64], v: i64) -> i64 {
    values
        .binary_search(&v)
        .map(|i| coords[i])
        .unwrap_or_default()
}

fn hinted_cells(zone: &Zone, visible: &[bool], notes: &mut Vec<String>) -> Vec<Option<(u32, u32)>> {
    let n = zone.graph.node_count();
    let across = runs_across(zone, visible);
    if across {
        notes.push("the hints run left to right: drawn top to bottom".to_string());
    }
    let hint = |ix: usize| -> Option<(i64, i64)> {
        if !visible[ix] {
            return None;
        }
        zone.graph[NodeIndex::new(ix)].pos.map(|(x, y)| {
            let (x, y) = (i64::from(x), i64::from(y));
            if across { (y, x) } else { (x, y) }
        })
    };
    let mut xs: Vec<i64> = (0..n).filter_map(|i| hint(i).map(|p| p.0)).collect();
    let mut ys: Vec<i64> = (0..n).filter_map(|i| hint(i).map(|p| p.1)).collect();
    let (cx, shrunk_x) = compress_axis(&mut xs);
    let (cy, shrunk_y) = compress_axis(&mut ys);
    if shrunk_x || shrunk_y {
        notes.push(format!(
            "empty stretches of more than {} rows or columns between hinted rooms were shortened",
            MAX_GAP - 1
        ));
    }
    let want: Vec<Option<(i64, i64)>> = (0..n)
        .map(|i| hint(i).map(|(x, y)| (lookup(&xs, &cx, x), lookup(&ys, &cy, y))))
        .collect();

    // Occupied cell → a column to try next (path-compressed), so a pile of rooms on one
    // hinted cell spreads right in near-linear time.
    let mut taken: HashMap<(i64, i64), i64> = HashMap::new();
    let mut cell: Vec<Option<(i64, i64)>> = vec![None; n];
    let mut moved = Vec::new();
    for i in 0..n {
        if let Some((c, r)) = want[i] {
            if let std::collections::hash_map::Entry::Vacant(v) = taken.entry((r, c)) {
                v.insert(c + 1);
                cell[i] = Some((c, r));
            } else {
                moved.push(i);
            }
        }
    }
    let moved_count = moved.len();
    for (k, &i) in moved.iter().enumerate() {
        let Some((c, r)) = want[i] else { continue };
        let mut path = Vec::new();
        let mut col = c;
        while let Some(&next) = taken.get(&(r, col)) {
            path.push(col);
            col = next;
        }
        for p in path {
            taken.insert((r, p), col + 1);
        }
        taken.insert((r, col), col + 1);
        cell[i] = Some((col, r));
        if k < NOTE_LIMIT {
            let node = &zone.graph[NodeIndex::new(i)];
            let (hx, hy) = node.pos.unwrap_or_default();
            notes.push(format!(
                "room {} shares its hinted cell (pos_x {hx}, pos_y {hy}) with another room; \
                 moved right to column {col}",
                node.id
            ));
        }
    }
    if moved_count > NOTE_LIMIT {
        notes.push(format!(
            "and {} more rooms moved right off a shared hinted cell",
            moved_count - NOTE_LIMIT
        ));
    }
    cell.into_iter()
        .map(|c| c.map(|(c, r)| (to_u32(c), to_u32(r))))
        .collect()
}

/// Whether visible hinted rooms run left to right: more of their passages step right (to a
/// larger `pos_x`) than down (to a larger `pos_y`). A fan of side rooms spreads sideways, but
/// its passages still step down.
fn runs_across(zone: &Zone, visible: &[bool]) -> bool {
    let pos = |ix: NodeIndex| visible[ix.index()].then_some(zone.graph[ix].pos).flatten();
    let mut lean = 0i64;
    for e in zone.graph.raw_edges() {
        if let (Some(a), Some(b)) = (pos(e.source()), pos(e.target())) {
            lean += i64::from(b.0 > a.0) - i64::from(b.1 > a.1);
        }
    }
    lean > 0
}

fn to_u32(v: i64) -> u32 {
    u32::try_from(v.max(0)).unwrap_or(u32::MAX)
}

/// Compressed adjacency (CSR) over visible rooms, in edge (file) order.
struct Adjacency {
    start: Vec<usize>,
    /// `(neighbour, edge index)`.
    list: Vec<(usize, usize)>,
}

impl Adjacency {
    fn of(&self, v: usize) -> &[(usize, usize)] {
        &self.list[self.start[v]..self.start[v + 1]]
    }
}

fn adjacency(n: usize, edges: &[(usize, usize)], outgoing: bool) -> Adjacency {
    let mut start = vec![0usize; n + 1];
    for &(s, t) in edges {
        let key = if outgoing { s } else { t };
        start[key + 1] += 1;
    }
    for i in 0..n {
        start[i + 1] += start[i];
    }
    let mut fill = start.clone();
    let mut list = vec![(0, 0); edges.len()];
    for (e, &(s, t)) in edges.iter().enumerate() {
        let (key, other) = if outgoing { (s, t) } else { (t, s) };
        list[fill[key]] = (other, e);
        fill[key] += 1;
    }
    Adjacency { start, list }
}

fn layered_cells(zone: &Zone, visible: &[bool]) -> Vec<Option<(u32, u32)>> {
    let n = zone.graph.node_count();
    let edges: Vec<(usize, usize)> = zone
        .graph
        .edge_indices()
        .filter_map(|e| zone.graph.edge_endpoints(e))
        .map(|(s, t)| (s.index(), t.index()))
        .filter(|&(s, t)| visible[s] && visible[t])
        .collect();
    let out = adjacency(n, &edges, true);
    let inc = adjacency(n, &edges, false);

    // Iterative depth-first search from the entries, then from every other room in file
    // order; an edge into a room still on the stack is a back edge.
    let roots: Vec<usize> = zone
        .entries()
        .into_iter()
        .map(NodeIndex::index)
        .filter(|&i| visible[i])
        .collect();
    // Deepest-first along the earliest room in file order: authors list rooms roughly in
    // walking order, so the passages that point back to earlier rooms become the back
    // edges, not the main path.
    let mut dfs_out = out.list.clone();
    for v in 0..n {
        crate::text::sort(&mut dfs_out[out.start[v]..out.start[v + 1]]);
    }
    let dfs_of = |v: usize| &dfs_out[out.start[v]..out.start[v + 1]];
    let mut state = vec![0u8; n]; // 0 new, 1 on stack, 2 done
    let mut back = vec![false; edges.len()];
    let mut reach = vec![false; n];
    let mut stack: Vec<(usize, usize)> = Vec::new();
    let mut dfs = |root: usize, state: &mut [u8], back: &mut [bool]| -> Vec<usize> {
        let mut seen = Vec::new();
        if state[root] != 0 {
            return seen;
        }
        state[root] = 1;
        seen.push(root);
        stack.push((root, 0));
        while let Some(top) = stack.last_mut() {
            let (v, k) = *top;
            if let Some(&(w, e)) = dfs_of(v).get(k) {
                top.1 += 1;
                match state[w] {
                    0 => {
                        state[w] = 1;
                        seen.push(w);
                        stack.push((w, 0));
                    }
                    1 => back[e] = true,
                    _ => {}
                }
            } else {
                state[v] = 2;
                stack.pop();
            }
        }
        seen
    };
    for &r in &roots {
        for v in dfs(r, &mut state, &mut back) {
            reach[v] = true;
        }
    }
    for (v, _) in visible.iter().enumerate().filter(|(_, vis)| **vis) {
        dfs(v, &mut state, &mut back);
    }

    // Longest path over the remaining acyclic edges (Kahn's order).
    let mut indeg = vec![0usize; n];
    for (e, &(_, t)) in edges.iter().enumerate() {
        if !back[e] {
            indeg[t] += 1;
        }
    }
    let mut order: Vec<usize> = (0..n).filter(|&v| visible[v] && indeg[v] == 0).collect();
    let mut head = 0;
    let mut depth = vec![0usize; n];
    while head < order.len() {
        let v = order[head];
        head += 1;
        for &(w, e) in out.of(v) {
            if back[e] {
                continue;
            }
            if reach[v] == reach[w] {
                depth[w] = depth[w].max(depth[v] + 1);
            }
            indeg[w] -= 1;
            if indeg[w] == 0 {
                order.push(w);
            }
        }
    }
    let base = (0..n)
        .filter(|&v| visible[v] && reach[v])
        .map(|v| depth[v] + 1)
        .max()
        .unwrap_or(0);
    let layer: Vec<usize> = (0..n)
        .map(|v| if reach[v] { depth[v] } else { base + depth[v] })
        .collect();
    let height = (0..n)
        .filter(|&v| visible[v])
        .map(|v| layer[v] + 1)
        .max()
        .unwrap_or(0);
    let mut layers: Vec<Vec<usize>> = vec![Vec::new(); height];
    for v in 0..n {
        if visible[v] {
            layers[layer[v]].push(v);
        }
    }

    // Columns: start in file order, then barycenter sweeps down, up and down again.
    let mut col = vec![0i64; n];
    for l in &layers {
        for (i, &v) in l.iter().enumerate() {
            col[v] = i as i64;
        }
    }
    let id = |v: usize| zone.graph[NodeIndex::new(v)].id.as_str();
    let mut keyed: Vec<(f64, usize)> = Vec::new();
    let mut sweep = |layers: &mut [Vec<usize>], col: &mut [i64], down: bool| {
        let count = layers.len();
        for step in 0..count {
            let li = if down { step } else { count - 1 - step };
            keyed.clear();
            keyed.extend(layers[li].iter().map(|&v| {
                let adj = if down { inc.of(v) } else { out.of(v) };
                let (mut sum, mut k) = (0i64, 0i64);
                for &(w, _) in adj {
                    let other = layer[w];
                    if (down && other < li) || (!down && other > li) {
                        sum += col[w];
                        k += 1;
                    }
                }
                let key = if k > 0 {
                    sum as f64 / k as f64
                } else {
                    col[v] as f64
                };
                (key, v)
            }));
            crate::text::sort_by(&mut keyed, |a, b| {
                a.0.total_cmp(&b.0).then_with(|| id(a.1).cmp(id(b.1)))
            });
            assign_columns(&keyed, col);
            layers[li].clear();
            layers[li].extend(keyed.iter().map(|&(_, v)| v));
        }
    };
    sweep(&mut layers, &mut col, true);
    sweep(&mut layers, &mut col, false);
    sweep(&mut layers, &mut col, true);

    (0..n)
        .map(|v| visible[v].then(|| (to_u32(col[v]), to_u32(layer[v] as i64))))
        .collect()
}

/// Gives sorted `(wanted column, room)` pairs distinct increasing columns, centring each run
/// of rooms that want the same column on it.
fn assign_columns(keyed: &[(f64, usize)], col: &mut [i64]) {
    let round = |k: f64| (k - 0.5).ceil() as i64;
    let mut prev = -1i64;
    let mut i = 0;
    while i < keyed.len() {
        let want = round(keyed[i].0);
        let mut j = i + 1;
        while j < keyed.len() && round(keyed[j].0) == want {
            j += 1;
        }
        let start = want - ((j - i) / 2) as i64;
        for (k, &(_, v)) in keyed[i..j].iter().enumerate() {
            let c = (prev + 1).max(start + k as i64).max(0);
            col[v] = c;
            prev = c;
        }
        i = j;
    }
}

/// The route of a passage from cell `a` to cell `b`.
fn route(
    a: (u32, u32),
    b: (u32, u32),
    self_loop: bool,
    column_rows: &[Vec<u32>],
) -> (RouteKind, Vec<[f64; 2]>) {
    let (c1, r1) = (f64::from(a.0), f64::from(a.1));
    let (c2, r2) = (f64::from(b.0), f64::from(b.1));
    let p = |x: f64, y: f64| [x, y];
    if self_loop {
        let pts = vec![
            p(c1, r1),
            p(c1, r1 + 0.5),
            p(c1 + 0.5, r1 + 0.5),
            p(c1 + 0.5, r1 - 0.5),
            p(c1, r1 - 0.5),
            p(c1, r1),
        ];
        return (RouteKind::SelfLoop, pts);
    }
    if a.1 == b.1 {
        let pts = if a.0.abs_diff(b.0) == 1 {
            vec![p(c1, r1), p(c2, r2)]
        } else {
            vec![p(c1, r1), p(c1, r1 + 0.5), p(c2, r1 + 0.5), p(c2, r2)]
        };
        return (RouteKind::SameRow, pts);
    }
    if b.1 == a.1 + 1 {
        let pts = if a.0 == b.0 {
            vec![p(c1, r1), p(c2, r2)]
        } else {
            vec![p(c1, r1), p(c1, r1 + 0.5), p(c2, r1 + 0.5), p(c2, r2)]
        };
        return (RouteKind::Down, pts);
    }
    if b.1 > a.1 {
        // Straight down when nothing stands in the column between the two rooms.
        let clear = a.0 == b.0
            && column_rows.get(a.0 as usize).is_none_or(|rows| {
                let i = rows.partition_point(|&r| r <= a.1);
                rows.get(i).is_none_or(|&r| r >= b.1)
            });
        if clear {
            return (RouteKind::Long, vec![p(c1, r1), p(c2, r2)]);
        }
        let g = if b.0 < a.0 { c1 - 0.5 } else { c1 + 0.5 };
        let pts = vec![
            p(c1, r1),
            p(c1, r1 + 0.5),
            p(g, r1 + 0.5),
            p(g, r2 - 0.5),
            p(c2, r2 - 0.5),
            p(c2, r2),
        ];
        return (RouteKind::Long, pts);
    }
    let g = c1.max(c2) + 0.5;
    let pts = vec![
        p(c1, r1),
        p(c1, r1 + 0.5),
        p(g, r1 + 0.5),
        p(g, r2 - 0.5),
        p(c2, r2 - 0.5),
        p(c2, r2),
    ];
    (RouteKind::Back, pts)
}
