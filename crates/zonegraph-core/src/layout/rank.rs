//! Rows: which layer each room is drawn on, and the hints' lanes.
//!
//! Without hints, rooms are layered by longest-path depth from the entry (back edges of a
//! depth-first search, from the entry first, are the passages drawn upward; a room the
//! entry cannot reach sits by depth from the rooms that lead to it). With a hint on every visible room, the hint's step is the least row a room takes
//! and its lane the column it prefers; a room is pushed further down only when a passage
//! that does not close a loop would otherwise run sideways or up, and that push is reported.

use petgraph::graph::NodeIndex;

use super::{LayoutMode, NOTE_LIMIT};
use crate::zone::Zone;

/// Empty rows or columns between hinted rooms are kept up to this many; wider gaps shrink.
const MAX_GAP: i64 = 2;

/// Rows of the visible rooms and what decided them.
pub(super) struct Ranked {
    pub mode: LayoutMode,
    /// Whether the room takes part (not hidden).
    pub visible: Vec<bool>,
    /// `(from, to)` per passage (graph edge index); `None` when either end is hidden.
    pub edges: Vec<Option<(usize, usize)>>,
    /// Whether the passage is drawn upward (it closes a loop).
    pub reversed: Vec<bool>,
    /// Row per room.
    pub layer: Vec<usize>,
    /// The hinted lane per room (hints mode), in compressed columns from 0.
    pub lane: Vec<Option<i64>>,
    pub notes: Vec<String>,
    /// `(room, why)` for hints the rows could not keep.
    pub overridden: Vec<(usize, String)>,
}

pub(super) fn rank(zone: &Zone, visible: Vec<bool>) -> Ranked {
    let n = zone.graph.node_count();
    let shown = visible.iter().filter(|&&v| v).count();
    let hinted = (0..n)
        .filter(|&i| visible[i] && zone.graph[NodeIndex::new(i)].pos.is_some())
        .count();
    let edges: Vec<Option<(usize, usize)>> = zone
        .graph
        .edge_indices()
        .map(|e| {
            let (s, t) = zone.graph.edge_endpoints(e)?;
            (visible[s.index()] && visible[t.index()]).then_some((s.index(), t.index()))
        })
        .collect();
    let mut notes = Vec::new();
    let hints = if shown > 0 && hinted == shown && !zone.legacy {
        Some(hinted_cells(zone, &visible, &mut notes))
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
        None
    };
    let mode = if hints.is_some() {
        LayoutMode::Hints
    } else {
        LayoutMode::Layered
    };
    let roots: Vec<usize> = zone
        .entries()
        .into_iter()
        .map(NodeIndex::index)
        .filter(|&i| visible[i])
        .collect();
    let row_hint: Option<Vec<i64>> = hints
        .as_ref()
        .map(|h| h.iter().map(|c| c.map_or(0, |c| c.1)).collect());
    let (layer, reversed, pushed) = layers(n, &visible, &edges, &roots, row_hint.as_deref());
    let mut overridden = Vec::new();
    for (v, by) in pushed.into_iter().enumerate() {
        let (Some(hint), Some(by)) = (row_hint.as_ref().map(|h| h[v]), by) else {
            continue;
        };
        let steps = layer[v] as i64 - hint;
        overridden.push((
            v,
            format!(
                "drawn {steps} step{} further along than its hint: the passage from {} leads \
                 into it",
                if steps == 1 { "" } else { "s" },
                zone.graph[NodeIndex::new(by)].id
            ),
        ));
    }
    let mut lane = match hints {
        Some(h) => h.iter().map(|c| c.map(|c| c.0)).collect(),
        None => vec![None; n],
    };
    spread_shared(zone, &layer, &mut lane, &mut notes);
    Ranked {
        mode,
        visible,
        edges,
        reversed,
        layer,
        lane,
        notes,
        overridden,
    }
}

/// Rooms that share a hinted cell and a row: the first in file order keeps its lane, the
/// next ones want the lanes to its right (the placement moves on whatever they meet there).
fn spread_shared(zone: &Zone, layer: &[usize], lane: &mut [Option<i64>], notes: &mut Vec<String>) {
    let mut at: Vec<(usize, i64, usize)> = (0..lane.len())
        .filter_map(|i| lane[i].map(|c| (layer[i], c, i)))
        .collect();
    crate::text::sort(&mut at);
    let mut moved = 0;
    let mut k = 0;
    for j in 1..at.len() {
        let (r, c, i) = at[j];
        k = if (r, c) == (at[j - 1].0, at[j - 1].1) {
            k + 1
        } else {
            0
        };
        if k == 0 {
            continue;
        }
        lane[i] = Some(c + k);
        moved += 1;
        if moved <= NOTE_LIMIT {
            let node = &zone.graph[NodeIndex::new(i)];
            let (hx, hy) = node.pos.unwrap_or_default();
            notes.push(format!(
                "room {} shares its hinted cell (pos_x {hx}, pos_y {hy}) with another room; \
                 moved right to column {}",
                node.id,
                c + k
            ));
        }
    }
    if moved > NOTE_LIMIT {
        notes.push(format!(
            "and {} more rooms moved right off a shared hinted cell",
            moved - NOTE_LIMIT
        ));
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

/// `(lane, step)` per visible room from its hint: turned a quarter when the hints run left
/// to right, gaps shrunk.
fn hinted_cells(zone: &Zone, visible: &[bool], notes: &mut Vec<String>) -> Vec<Option<(i64, i64)>> {
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

    want
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

/// Compressed adjacency (CSR) over items, in the order the pairs were given.
pub(super) struct Adjacency {
    start: Vec<usize>,
    /// `(neighbour, pair index)`.
    list: Vec<(usize, usize)>,
}

impl Adjacency {
    pub fn of(&self, v: usize) -> &[(usize, usize)] {
        &self.list[self.start[v]..self.start[v + 1]]
    }

    pub fn new(n: usize, pairs: &[(usize, usize)], outgoing: bool) -> Adjacency {
        let mut start = vec![0usize; n + 1];
        for &(s, t) in pairs {
            let key = if outgoing { s } else { t };
            start[key + 1] += 1;
        }
        for i in 0..n {
            start[i + 1] += start[i];
        }
        let mut fill = start.clone();
        let mut list = vec![(0, 0); pairs.len()];
        for (e, &(s, t)) in pairs.iter().enumerate() {
            let (key, other) = if outgoing { (s, t) } else { (t, s) };
            list[fill[key]] = (other, e);
            fill[key] += 1;
        }
        Adjacency { start, list }
    }
}

/// Rows per room, which passages run upward, and for each room pushed below its hinted row
/// (or its depth 0) the room whose passage pushed it.
type Layers = (Vec<usize>, Vec<bool>, Vec<Option<usize>>);

/// Computes the [`Layers`].
///
/// The depth-first search that picks the upward passages visits rooms in hinted-row order
/// (hints) or file order (no hints; authors list rooms roughly in walking order), so the
/// passages that point back to earlier rooms close the loops, not the main path.
fn layers(
    n: usize,
    visible: &[bool],
    edges: &[Option<(usize, usize)>],
    roots: &[usize],
    row_hint: Option<&[i64]>,
) -> Layers {
    let pairs: Vec<(usize, usize)> = edges.iter().map(|e| e.unwrap_or((0, 0))).collect();
    let live = |e: usize| edges[e].is_some();
    let out = Adjacency::new(n, &pairs, true);
    let key = |v: usize| row_hint.map_or(0, |h| h[v]);
    let mut dfs_out: Vec<(i64, usize, usize)> = Vec::with_capacity(pairs.len());
    let mut dfs_start = vec![0usize; n + 1];
    for v in 0..n {
        for &(w, e) in out.of(v) {
            if live(e) {
                dfs_out.push((key(w), w, e));
            }
        }
        dfs_start[v + 1] = dfs_out.len();
        crate::text::sort(&mut dfs_out[dfs_start[v]..]);
    }
    let dfs_of = |v: usize| &dfs_out[dfs_start[v]..dfs_start[v + 1]];
    let mut state = vec![0u8; n]; // 0 new, 1 on stack, 2 done
    let mut back = vec![false; pairs.len()];
    let mut stack: Vec<(usize, usize)> = Vec::new();
    let mut dfs = |root: usize, state: &mut [u8], back: &mut [bool]| {
        if state[root] != 0 {
            return;
        }
        state[root] = 1;
        stack.push((root, 0));
        while let Some(top) = stack.last_mut() {
            let (v, k) = *top;
            if let Some(&(_, w, e)) = dfs_of(v).get(k) {
                top.1 += 1;
                match state[w] {
                    0 => {
                        state[w] = 1;
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
    };
    for v in roots.iter().copied().chain((0..n).filter(|&v| visible[v])) {
        dfs(v, &mut state, &mut back);
    }

    // Longest path over the remaining acyclic passages (Kahn's order), from the hinted rows.
    let mut indeg = vec![0usize; n];
    for (e, &(_, t)) in pairs.iter().enumerate() {
        if live(e) && !back[e] {
            indeg[t] += 1;
        }
    }
    let mut order: Vec<usize> = (0..n).filter(|&v| visible[v] && indeg[v] == 0).collect();
    let mut head = 0;
    let mut depth: Vec<usize> = (0..n).map(|v| to_usize(key(v))).collect();
    let mut pushed_by: Vec<Option<usize>> = vec![None; n];
    while head < order.len() {
        let v = order[head];
        head += 1;
        for &(w, e) in out.of(v) {
            if !live(e) || back[e] {
                continue;
            }
            if depth[w] < depth[v] + 1 {
                depth[w] = depth[v] + 1;
                pushed_by[w] = Some(v);
            }
            indeg[w] -= 1;
            if indeg[w] == 0 {
                order.push(w);
            }
        }
    }
    // Drawn upward: the back edges (every other passage points down by construction).
    let reversed: Vec<bool> = (0..pairs.len())
        .map(|e| back[e] && edges[e].is_some_and(|(s, t)| s != t))
        .collect();
    (depth, reversed, pushed_by)
}

fn to_usize(v: i64) -> usize {
    usize::try_from(v.max(0)).unwrap_or(usize::MAX / 2)
}
