//! Route analysis: path lengths, route counts, choke points and lock pass chances.
//!
//! Everything here is linear in rooms + passages and iterative (no recursion over the graph),
//! so zones hundreds of thousands of rooms deep cannot overflow the stack. petgraph's
//! `kosaraju_scc` and `dominators::simple_fast` are iterative in 0.8.3 (explicit DFS stacks);
//! its `tarjan_scc` is recursive and is not used.

use std::ops::RangeInclusive;

use petgraph::Direction::{Incoming, Outgoing};
use petgraph::algo::dominators;
use petgraph::graph::NodeIndex;
use petgraph::visit::EdgeRef;
use serde::Serialize;

use crate::difficulty::{self, Difficulty};
use crate::format::LockKind;
use crate::layout::LayoutStats;
pub use crate::paths::{longest_path_len, longest_path_len_within, shortest_path_len};
use crate::paths::{out_degrees, reach};
use crate::roll;
use crate::zone::{Lock, Zone};

/// Ability modifiers the lock table lists: a weak −1 up to a strong +5.
pub const MODIFIER_RANGE: RangeInclusive<i32> = -1..=5;

/// Route counts saturate here: 2^53 − 1, the largest integer every JSON reader (JavaScript
/// included) holds exactly, so the CLI, the wasm module and the viewer show the same number.
pub const MAX_ROUTES: u64 = (1 << 53) - 1;

/// At most this many levels are listed per `level_min` lock, so a zone whose `max_level` is
/// absurdly large cannot blow up the table.
pub const MAX_LEVELS_LISTED: u32 = 100;

/// Route figures of one zone. Field names are stable: `--stats --json` and the viewer read them.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Stats {
    /// Rooms.
    pub nodes: usize,
    /// Passages.
    pub edges: usize,
    /// Rooms with two or more exits.
    pub forks: usize,
    /// Rooms on the longest entry→boss route, ignoring locks (an upper bound in looped zones);
    /// null when there is no route.
    pub longest_path: Option<usize>,
    /// Rooms on the shortest entry→boss route, ignoring locks; null when there is no route.
    pub shortest_path: Option<usize>,
    /// Distinct entry→boss routes (sequences of passages), ignoring locks, saturating at
    /// [`MAX_ROUTES`]; null when a loop lies on some route, so the count is unbounded. 0 when
    /// the zone has no single entry and boss or no route between them.
    pub routes: Option<u64>,
    /// Rooms every entry→boss route passes, in route order, entry and boss included.
    pub choke_points: Vec<String>,
    /// Every locked passage, in file order.
    pub locks: Vec<LockStats>,
    /// Win chance and expected wounds at `min_level` and `max_level` under the built-in
    /// rules ([`crate::difficulty`]); null when the zone is not modelled (no single entry and
    /// boss, a loop on the way, too many keys and regions named by locks).
    pub difficulty: Option<Difficulty>,
    /// The drawing's crossings, upward passages and overridden hints ([`crate::layout`]).
    pub drawing: LayoutStats,
}

/// A locked passage and the chance that a character gets through it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LockStats {
    pub from: String,
    pub to: String,
    pub lock_kind: LockKind,
    /// What opens it, for people: "Perception DC 12", "key skull_key", "level 5".
    pub requirement: String,
    /// Perception and stat checks: the pass chance for each modifier in [`MODIFIER_RANGE`].
    pub by_modifier: Option<Vec<ModifierChance>>,
    /// Level locks: whether each level from the zone's `min_level` to `max_level` passes.
    pub by_level: Option<Vec<LevelPass>>,
    /// Why there is no chance table (keys and regions depend on the run, not the character).
    pub note: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct ModifierChance {
    pub modifier: i32,
    /// In `0.0..=1.0`.
    pub chance: f64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct LevelPass {
    pub level: u32,
    pub passes: bool,
}

/// The whole analysis of a zone. Never panics, also on invalid zones.
pub fn stats(zone: &Zone) -> Stats {
    let g = &zone.graph;
    let out_deg = out_degrees(zone);
    let forks = out_deg.iter().filter(|&&d| d >= 2).count();
    let (entry, boss) = (zone.entry(), zone.boss());
    let (shortest_path, routes, choke_points) = match (entry, boss) {
        (Some(entry), Some(boss)) => {
            let shortest = shortest_path_len(zone, entry, boss);
            let (routes, chokes) = routes_and_choke_points(zone, entry, boss);
            (shortest, routes, chokes)
        }
        _ => (None, Some(0), Vec::new()),
    };
    let locks = g
        .edge_references()
        .filter(|e| e.weight().lock.is_locked())
        .map(|e| {
            lock_stats(
                zone,
                &g[e.source()].id.0,
                &g[e.target()].id.0,
                &e.weight().lock,
            )
        })
        .collect();
    Stats {
        nodes: g.node_count(),
        edges: g.edge_count(),
        forks,
        longest_path: longest_path_len(zone),
        shortest_path,
        routes,
        choke_points,
        locks,
        difficulty: difficulty::difficulty(zone),
        drawing: crate::layout::layout(zone).stats,
    }
}

/// Chance in `0.0..=1.0` that a character of `level` whose relevant ability modifier is
/// `modifier` opens `lock`: 1 for no lock, d20 + modifier ≥ DC for checks
/// ([`roll::pass_chance`]), 0 or 1 for level locks, 0 for invalid locks. `None` for key and
/// region locks, which depend on the run (inventory, progress), not on the character.
pub fn lock_pass_chance(lock: &Lock, level: u32, modifier: i32) -> Option<f64> {
    match lock {
        Lock::None => Some(1.0),
        Lock::PerceptionCheck { dc } | Lock::StatCheck { dc, .. } => {
            Some(roll::pass_chance(modifier, *dc))
        }
        Lock::LevelMin { min_level } => Some(if level >= *min_level { 1.0 } else { 0.0 }),
        Lock::KeyRequired { .. } | Lock::RegionClear { .. } => None,
        Lock::Invalid { .. } => Some(0.0),
    }
}

/// What opens a lock, for people.
pub fn requirement(zone: &Zone, lock: &Lock) -> String {
    match lock {
        Lock::None => "nothing".into(),
        Lock::PerceptionCheck { dc } => format!("Perception DC {dc}"),
        Lock::StatCheck { ability, dc } => format!("{} DC {dc}", ability.name()),
        Lock::KeyRequired { key_id } => format!("key {key_id}"),
        Lock::LevelMin { min_level } => format!("level {min_level}"),
        Lock::RegionClear { region_id } => {
            format!("region {} cleared", zone.region_name(region_id))
        }
        Lock::Invalid { lock_kind } => format!("invalid {} lock", lock_kind.as_str()),
    }
}

fn lock_stats(zone: &Zone, from: &str, to: &str, lock: &Lock) -> LockStats {
    let mut s = LockStats {
        from: from.to_string(),
        to: to.to_string(),
        lock_kind: lock.kind(),
        requirement: requirement(zone, lock),
        by_modifier: None,
        by_level: None,
        note: None,
    };
    match lock {
        Lock::PerceptionCheck { .. } | Lock::StatCheck { .. } => {
            s.by_modifier = Some(
                MODIFIER_RANGE
                    .map(|modifier| ModifierChance {
                        modifier,
                        chance: lock_pass_chance(lock, zone.min_level, modifier).unwrap_or(0.0),
                    })
                    .collect(),
            );
        }
        Lock::LevelMin { min_level } => {
            let last = zone
                .max_level
                .min(zone.min_level.saturating_add(MAX_LEVELS_LISTED - 1));
            s.by_level = Some(
                (zone.min_level..=last)
                    .map(|level| LevelPass {
                        level,
                        passes: level >= *min_level,
                    })
                    .collect(),
            );
        }
        Lock::KeyRequired { .. } => {
            s.note = Some("opens when the character carries the key".into());
        }
        Lock::RegionClear { .. } => {
            s.note = Some("opens when the region has been cleared in this run".into());
        }
        Lock::Invalid { .. } => {
            s.note = Some("the lock data is invalid (see bad_lock_data); it never opens".into());
        }
        Lock::None => {}
    }
    s
}

/// Route count and choke points.
///
/// Only rooms on some entry→boss route matter. When they form a DAG, a topological order
/// (Kahn) gives the route count by dynamic programming, and a room is a choke point exactly
/// when no passage jumps over its position in that order; both are linear. When a loop lies
/// on a route, the count is unbounded and choke points fall back to dominators.
fn routes_and_choke_points(
    zone: &Zone,
    entry: NodeIndex,
    boss: NodeIndex,
) -> (Option<u64>, Vec<String>) {
    let g = &zone.graph;
    let fwd = reach(zone, entry, Outgoing, |_, _| true);
    if !fwd[boss.index()] {
        return (Some(0), Vec::new());
    }
    let bwd = reach(zone, boss, Incoming, |_, _| true);
    let on_route: Vec<bool> = fwd.iter().zip(&bwd).map(|(a, b)| *a && *b).collect();
    let route_edges = || {
        g.edge_references()
            .filter(|e| on_route[e.source().index()] && on_route[e.target().index()])
    };

    let mut indeg = vec![0usize; g.node_count()];
    for e in route_edges() {
        indeg[e.target().index()] += 1;
    }
    let mut order = Vec::new();
    if indeg[entry.index()] == 0 {
        order.push(entry);
    }
    let mut head = 0;
    while let Some(&n) = order.get(head) {
        head += 1;
        for t in g.neighbors_directed(n, Outgoing) {
            if on_route[t.index()] {
                indeg[t.index()] -= 1;
                if indeg[t.index()] == 0 {
                    order.push(t);
                }
            }
        }
    }
    let on_route_count = on_route.iter().filter(|&&b| b).count();
    if order.len() < on_route_count {
        // A loop (or self-loop) lies on a route.
        return (None, dominator_choke_points(zone, entry, boss));
    }

    let mut pos = vec![usize::MAX; g.node_count()];
    for (i, n) in order.iter().enumerate() {
        pos[n.index()] = i;
    }
    let mut ways = vec![0u64; g.node_count()];
    ways[entry.index()] = 1;
    // cover[i] counts passages that jump over position i.
    let mut cover_delta = vec![0i64; order.len() + 1];
    for &n in &order {
        let here = ways[n.index()];
        for e in g.edges_directed(n, Outgoing) {
            let t = e.target();
            if !on_route[t.index()] {
                continue;
            }
            ways[t.index()] = ways[t.index()].saturating_add(here).min(MAX_ROUTES);
            let (a, b) = (pos[n.index()], pos[t.index()]);
            if b > a + 1 {
                cover_delta[a + 1] += 1;
                cover_delta[b] -= 1;
            }
        }
    }
    let mut chokes = Vec::new();
    let mut cover = 0i64;
    for (i, n) in order.iter().enumerate() {
        cover += cover_delta[i];
        if cover == 0 {
            chokes.push(g[*n].id.0.clone());
        }
    }
    (Some(ways[boss.index()]), chokes)
}

/// The boss's dominators from the entry, in route order (looped zones only).
fn dominator_choke_points(zone: &Zone, entry: NodeIndex, boss: NodeIndex) -> Vec<String> {
    let doms = dominators::simple_fast(&zone.graph, entry);
    let mut chain: Vec<String> = match doms.dominators(boss) {
        Some(it) => it.map(|n| zone.graph[n].id.0.clone()).collect(),
        None => Vec::new(),
    };
    chain.reverse();
    chain
}
