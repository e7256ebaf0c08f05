//! Walks over a zone's graph: reach, strongly connected components, a topological order,
//! and the longest and shortest entry→boss routes. Shared by validation, analysis and the
//! player view (so none of them reaches into another for a graph walk).
//!
//! Everything here is linear in rooms + passages and iterative (no recursion over the graph),
//! so zones hundreds of thousands of rooms deep cannot overflow the stack. petgraph's
//! `kosaraju_scc` is iterative in 0.8.3 (an explicit DFS stack); its `tarjan_scc` is recursive
//! and is not used.

use petgraph::Direction::{self, Outgoing};
use petgraph::graph::NodeIndex;
use petgraph::visit::EdgeRef;

use crate::format::NodeKind;
use crate::zone::{Edge, Zone};

/// How many players' maps [`crate::zone::Figures`] keeps the "of Y" total of (a map differs by the secret
/// rooms on it; few zones have more than a handful of secrets).
const TOTALS_KEPT: usize = 64;

/// [`topo_order`], once per zone.
fn topo_kept(zone: &Zone) -> Option<&[NodeIndex]> {
    zone.figures
        .topo
        .get_or_init(|| topo_order(zone))
        .as_deref()
}

/// The zone's secret rooms, in index order, once per zone.
pub fn secret_rooms(zone: &Zone) -> &[NodeIndex] {
    zone.figures.secrets.get_or_init(|| {
        zone.graph
            .node_indices()
            .filter(|&ix| zone.node(ix).kind == NodeKind::Secret)
            .collect()
    })
}

/// Rooms on the longest entry→boss route through the rooms on a player's map: every room but
/// the secret ones not in `shown` (the secrets on the map, in index order), as
/// [`longest_path_len_within`]. Kept per `shown`, so a run's steps pay a look-up, not the
/// zone's size.
pub fn longest_on_map(zone: &Zone, shown: &[NodeIndex]) -> Option<usize> {
    let kept = |totals: &Vec<(Vec<NodeIndex>, Option<usize>)>| {
        totals.iter().find(|(k, _)| k == shown).map(|(_, t)| *t)
    };
    if let Some(t) = kept(
        &zone
            .figures
            .totals
            .lock()
            .unwrap_or_else(|p| p.into_inner()),
    ) {
        return t;
    }
    let keep = |ix: NodeIndex| zone.node(ix).kind != NodeKind::Secret || shown.contains(&ix);
    let total = longest_path_len_within(zone, &keep);
    let mut totals = zone
        .figures
        .totals
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    if totals.len() >= TOTALS_KEPT {
        totals.remove(0);
    }
    totals.push((shown.to_vec(), total));
    total
}

/// Exits per room (self-loops included), indexed by node index.
pub(crate) fn out_degrees(zone: &Zone) -> Vec<usize> {
    let mut out = vec![0; zone.graph.node_count()];
    for e in zone.graph.edge_references() {
        out[e.source().index()] += 1;
    }
    out
}

/// Rooms reachable from `start` following passages in `dir` for which `pass(room the search
/// is in, passage)` holds.
pub(crate) fn reach(
    zone: &Zone,
    start: NodeIndex,
    dir: Direction,
    pass: impl Fn(NodeIndex, &Edge) -> bool,
) -> Vec<bool> {
    let g = &zone.graph;
    let mut seen = vec![false; g.node_count()];
    seen[start.index()] = true;
    let mut stack = vec![start];
    while let Some(n) = stack.pop() {
        for e in g.edges_directed(n, dir) {
            let next = if dir == Outgoing {
                e.target()
            } else {
                e.source()
            };
            if !seen[next.index()] && pass(n, e.weight()) {
                seen[next.index()] = true;
                stack.push(next);
            }
        }
    }
    seen
}

/// Strongly connected components in topological order (every passage between two components
/// goes from an earlier to a later one), with each room's component index.
pub(crate) fn components(zone: &Zone) -> (Vec<Vec<NodeIndex>>, Vec<usize>) {
    let mut comps = components_through(zone, &|_| true);
    comps.reverse();
    let mut comp_of = vec![0; zone.graph.node_count()];
    for (c, comp) in comps.iter().enumerate() {
        for &n in comp {
            comp_of[n.index()] = c;
        }
    }
    (comps, comp_of)
}

/// Strongly connected components of the rooms joined by the passages `keep` accepts, in
/// reverse topological order (kosaraju_scc's, iterative). One instantiation of the algorithm
/// for every caller: each is a few KB of WebAssembly.
pub(crate) fn components_through(
    zone: &Zone,
    keep: &dyn Fn(petgraph::graph::EdgeReference<'_, Edge>) -> bool,
) -> Vec<Vec<NodeIndex>> {
    let g = petgraph::visit::EdgeFiltered::from_fn(&zone.graph, keep);
    petgraph::algo::kosaraju_scc(&g)
}

/// A topological order of all rooms (Kahn's algorithm), or `None` when the zone has a loop or
/// self-loop. Cheaper than strongly connected components, so acyclic zones (the usual case)
/// skip those.
pub(crate) fn topo_order(zone: &Zone) -> Option<Vec<NodeIndex>> {
    let g = &zone.graph;
    let mut indeg = vec![0usize; g.node_count()];
    for e in g.edge_references() {
        indeg[e.target().index()] += 1;
    }
    let mut order: Vec<NodeIndex> = g.node_indices().filter(|n| indeg[n.index()] == 0).collect();
    let mut head = 0;
    while let Some(&n) = order.get(head) {
        head += 1;
        for t in g.neighbors_directed(n, Outgoing) {
            indeg[t.index()] -= 1;
            if indeg[t.index()] == 0 {
                order.push(t);
            }
        }
    }
    (order.len() == g.node_count()).then_some(order)
}

/// Rooms on the longest entry→boss route, ignoring locks: the designer's "Room X of Y" total.
///
/// In a zone with loops this is an upper bound: each strongly connected component counts all
/// of its rooms once. `None` when there is no single entry and boss, or no route between them.
pub fn longest_path_len(zone: &Zone) -> Option<usize> {
    longest_path_len_within(zone, &|_| true)
}

/// [`longest_path_len`] through the rooms `keep` accepts only (a player's map).
pub fn longest_path_len_within(zone: &Zone, keep: &dyn Fn(NodeIndex) -> bool) -> Option<usize> {
    let (entry, boss) = (zone.entry()?, zone.boss()?);
    if !keep(entry) || !keep(boss) {
        return None;
    }
    if let Some(order) = topo_kept(zone) {
        let mut best: Vec<Option<usize>> = vec![None; zone.graph.node_count()];
        best[entry.index()] = Some(1);
        for &n in order {
            let Some(here) = best[n.index()] else {
                continue;
            };
            for t in zone.graph.neighbors_directed(n, Outgoing) {
                if keep(t) && best[t.index()].is_none_or(|b| b <= here) {
                    best[t.index()] = Some(here + 1);
                }
            }
        }
        return best[boss.index()];
    }
    let (comps, comp_of) = components(zone);
    let kept: Vec<usize> = comps
        .iter()
        .map(|c| c.iter().filter(|&&n| keep(n)).count())
        .collect();
    // best[c] = most rooms on a path from the entry's component ending in component c.
    let mut best: Vec<Option<usize>> = vec![None; comps.len()];
    let start = comp_of[entry.index()];
    best[start] = Some(kept[start]);
    for (c, comp) in comps.iter().enumerate().skip(start) {
        let Some(here) = best[c] else { continue };
        for &n in comp.iter().filter(|&&n| keep(n)) {
            for t in zone.graph.neighbors_directed(n, Outgoing) {
                let tc = comp_of[t.index()];
                if tc == c || !keep(t) {
                    continue;
                }
                let cand = here + kept[tc];
                if best[tc].is_none_or(|b| b < cand) {
                    best[tc] = Some(cand);
                }
            }
        }
    }
    best[comp_of[boss.index()]]
}

/// Rooms on the shortest entry→boss route (breadth-first), ignoring locks.
pub fn shortest_path_len(zone: &Zone, entry: NodeIndex, boss: NodeIndex) -> Option<usize> {
    let g = &zone.graph;
    let mut dist: Vec<Option<usize>> = vec![None; g.node_count()];
    dist[entry.index()] = Some(1);
    let mut queue = std::collections::VecDeque::from([entry]);
    while let Some(n) = queue.pop_front() {
        if n == boss {
            break;
        }
        let d = dist[n.index()].unwrap_or(0);
        for t in g.neighbors_directed(n, Outgoing) {
            if dist[t.index()].is_none() {
                dist[t.index()] = Some(d + 1);
                queue.push_back(t);
            }
        }
    }
    dist[boss.index()]
}
