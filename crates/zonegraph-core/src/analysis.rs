//! Route analysis: path lengths, route counts, choke points and lock pass chances.
//!
//! Everything here is linear in rooms + passages and iterative (no recursion over the graph),
//! so zones hundreds of thousands of rooms deep cannot overflow the stack.

use petgraph::algo::condensation;
use petgraph::graph::NodeIndex;
use petgraph::visit::EdgeRef;

use crate::zone::Zone;

/// Rooms on the longest entry→boss route, ignoring locks: the run's "Room X of Y" total.
///
/// In a zone with loops this is an upper bound: each strongly connected component counts all
/// of its rooms once. `None` when there is no single entry and boss, or no route between them.
pub fn longest_path_len(zone: &Zone) -> Option<usize> {
    let (entry, boss) = (zone.entry()?, zone.boss()?);
    // Condense cycles into single weighted nodes; the result is a DAG in topological order.
    let g = zone.graph.map(|ix, _| ix, |_, _| ());
    let dag = condensation(g, true);
    let mut comp_of = vec![NodeIndex::new(0); zone.graph.node_count()];
    for c in dag.node_indices() {
        for &n in &dag[c] {
            comp_of[n.index()] = c;
        }
    }
    let order = petgraph::algo::toposort(&dag, None).ok()?;
    // best[c] = most rooms on a path from the entry's component ending in c.
    let mut best: Vec<Option<usize>> = vec![None; dag.node_count()];
    let start = comp_of[entry.index()];
    best[start.index()] = Some(dag[start].len());
    for c in order {
        let Some(here) = best[c.index()] else {
            continue;
        };
        for e in dag.edges(c) {
            let t = e.target();
            let cand = here + dag[t].len();
            if best[t.index()].is_none_or(|b| b < cand) {
                best[t.index()] = Some(cand);
            }
        }
    }
    best[comp_of[boss.index()].index()]
}
