//! How hard a zone is under the built-in rules ([`crate::rules`]), computed exactly.
//!
//! For a character of a given level with [`rules::STARTING_SCORES`] and no keys, the chance of
//! a victory (the boss beaten without a defeat) and the expected number of wounds, for a player
//! who takes, at each fork, the open option with the best odds ([`Policy::Best`]); and the
//! same for one who always takes the worst ([`Policy::Worst`]), which is what "every route"
//! means for `too_easy`.
//!
//! The model is what the engine does ([`crate::engine`]):
//! - arriving in a rest camp heals every wound;
//! - a room with an encounter is fought until it is won or the [`rules::MAX_WOUNDS`]th lost
//!   check ends the run; each check is d20 + [`rules::encounter_modifier`] against
//!   [`rules::encounter_dc`], a fresh d20 per attempt; the player never flees (fleeing never
//!   wins);
//! - leaving a room evaluates each exit's lock once: Perception and stat checks pass with
//!   [`roll::pass_chance`] (their d20 is frozen per run and passage, so passages between the
//!   same two rooms share it: together they are open with the best of their chances), level
//!   locks by the level, key locks by the keys granted by rooms cleared so far, region locks
//!   by the regions left so far; no open exit (or none at all) ends the run without a win;
//! - the boss room ends the run in victory once its encounter is won.
//!
//! Assumptions, where the engine leaves a choice to its caller:
//! - the level stays fixed for the run. The bot raises a character's level from the XP its
//!   rooms earn, mid-run; that only opens more level locks and strengthens the boss check,
//!   so the figures are a lower bound on the win chance of a player who levels up on the way
//!   (and exact for one who does not, which is what the tests compare);
//! - every d20 is uniform and independent of the others (SHA-1 of distinct texts);
//! - zones whose rooms reachable from the entry hold a loop are not modelled (a loop's
//!   revisited rooms and re-rolled rest camps make the state unbounded): `None`.
//!
//! The computation is dynamic programming over rooms in topological order, on states
//! (room, wounds, keys and regions held that some lock names): linear in rooms + passages for
//! a fixed number of such keys and regions (at most [`MAX_TOKENS`], else `None`).

use petgraph::Direction::Outgoing;
use petgraph::graph::NodeIndex;
use petgraph::visit::EdgeRef;
use serde::Serialize;

use crate::engine::Run;
use crate::format::NodeKind;
use crate::roll;
use crate::rules;
use crate::zone::{Ability, Lock, Zone, normalize_key};

/// `too_hard`: a `min_level` character beats the boss less often than this on the best route.
pub const TOO_HARD_BELOW: f64 = 0.25;
/// `too_easy`: a `max_level` character loses less often than this on every route.
pub const TOO_EASY_LOSS_BELOW: f64 = 0.01;
/// Most distinct keys and regions named by locks that the model tracks: each doubles the
/// states a room can be reached in.
pub const MAX_TOKENS: usize = 8;

const W: usize = rules::MAX_WOUNDS as usize;

/// The zone's difficulty at both ends of its level range. Field names are stable:
/// `--stats --json` (`stats.difficulty`), the wasm `analyzeZone` and the viewer read them.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Difficulty {
    pub min_level: LevelDifficulty,
    pub max_level: LevelDifficulty,
}

/// Figures for one level, rounded to four decimals.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LevelDifficulty {
    pub level: u32,
    /// Chance of beating the boss on the best route, in `0.0..=1.0`.
    pub win_chance: f64,
    /// Wounds taken over the whole run on the best route (every lost encounter check, healed
    /// or not, the last one of a defeat included).
    pub expected_wounds: f64,
}

/// Which open option a player takes at a fork.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    /// The best win chance (then the fewest expected wounds, then the first in the menu).
    Best,
    /// The worst win chance (then the most expected wounds, then the first in the menu).
    Worst,
}

/// What a run is worth from some point on: its chance of victory and the wounds still to come.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Value {
    pub win: f64,
    pub wounds: f64,
}

/// The zone's difficulty for `min_level` and `max_level`; `None` when it is not modelled
/// (no single entry and boss, a loop on the way, too many keys and regions named by locks).
pub fn difficulty(zone: &Zone) -> Option<Difficulty> {
    Some(Difficulty {
        min_level: at_level(zone, zone.min_level)?,
        max_level: at_level(zone, zone.max_level)?,
    })
}

/// The figures for a character of `level`.
pub fn at_level(zone: &Zone, level: u32) -> Option<LevelDifficulty> {
    let best = Model::new(zone, level, Policy::Best)?.start();
    Some(LevelDifficulty {
        level,
        win_chance: round4(best.win),
        expected_wounds: round4(best.wounds),
    })
}

/// `x` rounded to four decimals, as the figures are shown.
pub fn round4(x: f64) -> f64 {
    (x * 10_000.0).round() / 10_000.0
}

/// The solved model of one zone for one level and policy: every state's [`Value`], and the
/// policy's choice at a fork of a run ([`Model::pick`]).
#[derive(Clone, Debug)]
pub struct Model {
    level: u32,
    policy: Policy,
    entry: NodeIndex,
    /// Keys (`false`) and regions (`true`) named by locks, sorted: bit `i` is `tokens[i]`.
    tokens: Vec<(bool, String)>,
    /// Per room: the token sets it can be entered with, sorted, each with its value by the
    /// wounds on arrival.
    values: Vec<Vec<(u32, [Value; W])>>,
}

impl Model {
    /// Solves `zone` for a character of `level` playing `policy`.
    pub fn new(zone: &Zone, level: u32, policy: Policy) -> Option<Model> {
        let (entry, boss) = (zone.entry()?, zone.boss()?);
        let order = order_from(zone, entry, boss)?;
        let mut tokens: Vec<(bool, String)> = zone
            .graph
            .edge_references()
            .filter_map(|e| match &e.weight().lock {
                Lock::KeyRequired { key_id } => Some((false, normalize_key(key_id))),
                Lock::RegionClear { region_id } => Some((true, region_id.clone())),
                _ => None,
            })
            .collect();
        crate::text::sort_dedup(&mut tokens);
        if tokens.len() > MAX_TOKENS {
            return None;
        }
        let mut model = Model {
            level,
            policy,
            entry,
            tokens,
            values: vec![Vec::new(); zone.graph.node_count()],
        };
        // Forward: the token sets each room can be entered with.
        let mut sets: Vec<Vec<u32>> = vec![Vec::new(); zone.graph.node_count()];
        sets[entry.index()].push(0);
        for &n in &order {
            crate::text::sort_dedup(&mut sets[n.index()]);
            if n == boss {
                continue;
            }
            let here = std::mem::take(&mut sets[n.index()]);
            for e in zone.graph.edges_directed(n, Outgoing) {
                let moved = model.moved(zone, n, e.target());
                for &k in &here {
                    sets[e.target().index()].push(k | moved);
                }
            }
            sets[n.index()] = here;
        }
        // Backward: each state's value from the values of the rooms after it.
        for &n in order.iter().rev() {
            let vals = sets[n.index()]
                .iter()
                .map(|&k| (k, model.arrive(zone, n, boss, k)))
                .collect();
            model.values[n.index()] = vals;
        }
        Some(model)
    }

    /// The value of a new run.
    pub fn start(&self) -> Value {
        self.value(self.entry, 0, 0)
    }

    /// The option (1-based) the policy takes at the pending fork of `run`, among its open
    /// options; `None` when there is no pending fork or no open option.
    pub fn pick(&self, zone: &Zone, run: &Run) -> Option<usize> {
        let fork = run.pending_fork.as_ref()?;
        let at = zone.node_index(fork.at.as_str())?;
        let mut held = 0;
        for (i, (region, name)) in self.tokens.iter().enumerate() {
            let has = if *region {
                run.cleared_regions.contains(name)
            } else {
                run.keys_granted.contains(name)
            };
            if has {
                held |= 1 << i;
            }
        }
        let wounds = usize::try_from(run.wounds).unwrap_or(W);
        let mut best: Option<(usize, Value)> = None;
        for (i, o) in fork.options.iter().enumerate().filter(|(_, o)| o.open) {
            let Some(to) = zone.node_index(o.to_node.as_str()) else {
                continue;
            };
            let v = self.value(to, wounds, held | self.moved(zone, at, to));
            if best.is_none_or(|(_, b)| self.prefers(v, b)) {
                best = Some((i + 1, v));
            }
        }
        best.map(|(i, _)| i)
    }

    /// The value of entering `n` with `wounds` and the token set `held`.
    fn value(&self, n: NodeIndex, wounds: usize, held: u32) -> Value {
        self.values_at(n, held)
            .get(wounds)
            .copied()
            .unwrap_or_default()
    }

    /// The values of entering `n` with the token set `held`, by wounds on arrival.
    fn values_at(&self, n: NodeIndex, held: u32) -> [Value; W] {
        let Some(vals) = self.values.get(n.index()) else {
            return [Value::default(); W];
        };
        match vals.binary_search_by_key(&held, |(k, _)| *k) {
            Ok(i) => vals[i].1,
            Err(_) => [Value::default(); W],
        }
    }

    /// Whether `a` is strictly preferred to `b` by the policy (equal values keep the first).
    fn prefers(&self, a: Value, b: Value) -> bool {
        match self.policy {
            Policy::Best => a.win > b.win || (a.win == b.win && a.wounds < b.wounds),
            Policy::Worst => a.win < b.win || (a.win == b.win && a.wounds > b.wounds),
        }
    }

    fn bit(&self, region: bool, name: &str) -> u32 {
        self.tokens
            .iter()
            .position(|(r, t)| *r == region && t == name)
            .map_or(0, |i| 1 << i)
    }

    /// Tokens gained between clearing `n` and entering `t`: the key `n` grants, and `n`'s
    /// region when `t` lies in another.
    fn moved(&self, zone: &Zone, n: NodeIndex, t: NodeIndex) -> u32 {
        let (a, b) = (zone.node(n), zone.node(t));
        let key = a
            .content
            .grants_key
            .as_deref()
            .map_or(0, |k| self.bit(false, k));
        let region = if !a.region_id.is_empty() && a.region_id != b.region_id {
            self.bit(true, &a.region_id)
        } else {
            0
        };
        key | region
    }

    /// The values of entering `n` with the token set `held`, by wounds on arrival.
    fn arrive(&self, zone: &Zone, n: NodeIndex, boss: NodeIndex, held: u32) -> [Value; W] {
        let node = zone.node(n);
        let mut after = [Value {
            win: 1.0,
            wounds: 0.0,
        }; W];
        if n != boss {
            after = self.leave(zone, n, held);
        }
        let pass = rules::encounter_kind(node).map(|kind| {
            let modifier = rules::encounter_modifier(kind, self.level, &rules::STARTING_SCORES);
            roll::pass_chance(modifier, rules::encounter_dc(zone.tier, kind))
        });
        let mut out = [Value::default(); W];
        for (w, slot) in out.iter_mut().enumerate() {
            let w = if node.kind == NodeKind::RestCamp {
                0
            } else {
                w
            };
            *slot = match pass {
                None => after[w],
                Some(p) => {
                    // Fought until won, or until the last wound.
                    let mut v = Value::default();
                    let mut reach = 1.0;
                    for (lost, a) in after.iter().enumerate().skip(w) {
                        let taken = (lost - w) as f64;
                        v.win += reach * p * a.win;
                        v.wounds += reach * p * (taken + a.wounds);
                        reach *= 1.0 - p;
                    }
                    v.wounds += reach * (W - w) as f64;
                    v
                }
            };
        }
        out
    }

    /// The values of leaving the cleared room `n` with the token set `held`, by wounds: the
    /// policy's choice among the exits that turn out open.
    fn leave(&self, zone: &Zone, n: NodeIndex, held: u32) -> [Value; W] {
        // Locks see the key this room granted when it was cleared (moving to itself crosses
        // no region), and only the regions left before.
        let held_here = held | self.moved(zone, n, n);
        // One option per room led to, in menu order: passages to the same room share their
        // frozen d20, so they are open together with the best of their chances.
        let mut options: Vec<(NodeIndex, f64, [Value; W])> = Vec::new();
        for e in zone.exits(n) {
            let t = zone.target(e);
            let q = self.open_chance(&zone.graph[e].lock, held_here);
            if let Some(o) = options.iter_mut().find(|o| o.0 == t) {
                o.1 = o.1.max(q);
            } else {
                options.push((t, q, self.values_at(t, held | self.moved(zone, n, t))));
            }
        }
        options.retain(|o| o.1 > 0.0);
        let mut out = [Value::default(); W];
        let mut ranked: Vec<(f64, Value)> = Vec::with_capacity(options.len());
        for (w, slot) in out.iter_mut().enumerate() {
            ranked.clear();
            ranked.extend(options.iter().map(|o| (o.1, o.2[w])));
            // Stable: equal values keep menu order, so the first in the menu is taken.
            crate::text::sort_by(&mut ranked, |a, b| {
                if self.prefers(a.1, b.1) {
                    std::cmp::Ordering::Less
                } else if self.prefers(b.1, a.1) {
                    std::cmp::Ordering::Greater
                } else {
                    std::cmp::Ordering::Equal
                }
            });
            let mut none_better_open = 1.0;
            for (q, o) in &ranked {
                slot.win += none_better_open * q * o.win;
                slot.wounds += none_better_open * q * o.wounds;
                none_better_open *= 1.0 - q;
            }
        }
        out
    }

    /// Chance that `lock` is open for this character holding the token set `held`.
    fn open_chance(&self, lock: &Lock, held: u32) -> f64 {
        let m = |a: Ability| roll::modifier(rules::STARTING_SCORES[a.index()]);
        match lock {
            Lock::None => 1.0,
            Lock::PerceptionCheck { dc } => roll::pass_chance(m(Ability::Wis), *dc),
            Lock::StatCheck { ability, dc } => roll::pass_chance(m(*ability), *dc),
            Lock::LevelMin { min_level } => f64::from(u8::from(self.level >= *min_level)),
            Lock::KeyRequired { key_id } => {
                let bit = self.bit(false, &normalize_key(key_id));
                f64::from(u8::from(bit != 0 && held & bit != 0))
            }
            Lock::RegionClear { region_id } => {
                let bit = self.bit(true, region_id);
                f64::from(u8::from(bit != 0 && held & bit != 0))
            }
            Lock::Invalid { .. } => 0.0,
        }
    }
}

/// The rooms a run can enter (from `entry`, never past `boss`) in topological order, or
/// `None` when a loop lies among them.
fn order_from(zone: &Zone, entry: NodeIndex, boss: NodeIndex) -> Option<Vec<NodeIndex>> {
    let g = &zone.graph;
    // Reachable rooms (the analysis module's search, kept here so no module depends on
    // another in both directions).
    let mut seen = vec![false; g.node_count()];
    seen[entry.index()] = true;
    let mut stack = vec![entry];
    while let Some(n) = stack.pop() {
        if n == boss {
            continue;
        }
        for t in g.neighbors_directed(n, Outgoing) {
            if !seen[t.index()] {
                seen[t.index()] = true;
                stack.push(t);
            }
        }
    }
    let mut indeg = vec![0usize; g.node_count()];
    for e in g.edge_references() {
        if seen[e.source().index()] && e.source() != boss {
            indeg[e.target().index()] += 1;
        }
    }
    if indeg[entry.index()] != 0 {
        return None;
    }
    let mut order = vec![entry];
    let mut head = 0;
    while let Some(&n) = order.get(head) {
        head += 1;
        if n == boss {
            continue;
        }
        for t in g.neighbors_directed(n, Outgoing) {
            indeg[t.index()] -= 1;
            if indeg[t.index()] == 0 {
                order.push(t);
            }
        }
    }
    let reachable = seen.iter().filter(|&&s| s).count();
    (order.len() == reachable).then_some(order)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::{EdgeFile, LockKind, NodeFile, ZoneFile};

    /// A tier-`tier` zone of levels 1–4 from `name:kind` rooms (the first the entry, `boss`
    /// the boss) and passages `a>b`, `a>b?15` (Perception DC 15), `a>b#k` (key `k`),
    /// `a>b^3` (level 3); a room `name:kind+k` grants key `k`.
    fn zone(tier: u8, rooms: &str, passages: &str) -> Zone {
        let nodes = rooms
            .split_whitespace()
            .map(|r| {
                let (name, rest) = r.split_once(':').expect("name:kind");
                let (kind, key) = rest
                    .split_once('+')
                    .map_or((rest, None), |(k, g)| (k, Some(g)));
                let kind: NodeKind =
                    serde_json::from_value(serde_json::json!(kind)).expect("a room kind");
                let mut n = NodeFile::plain(name, kind, name, 0, 0);
                n.content.grants_key = key.map(str::to_string);
                n
            })
            .collect();
        let edges = passages
            .split_whitespace()
            .map(|p| {
                let (from, rest) = p.split_once('>').expect("a>b");
                let cut = rest.find(['?', '#', '^']).unwrap_or(rest.len());
                let (to, lock) = rest.split_at(cut);
                let mut e = EdgeFile::open(from, to);
                e.hint = "a hint".into();
                if let Some(dc) = lock.strip_prefix('?') {
                    e.lock_kind = LockKind::PerceptionCheck;
                    e.lock_data
                        .insert("dc".into(), dc.parse::<u32>().expect("dc").into());
                } else if let Some(key) = lock.strip_prefix('#') {
                    e.lock_kind = LockKind::KeyRequired;
                    e.lock_data.insert("key_id".into(), key.into());
                } else if let Some(level) = lock.strip_prefix('^') {
                    e.lock_kind = LockKind::LevelMin;
                    e.lock_data.insert(
                        "min_level".into(),
                        level.parse::<u32>().expect("level").into(),
                    );
                }
                e
            })
            .collect();
        let file = ZoneFile {
            schema: None,
            format: crate::format::FORMAT_VERSION,
            zone_id: "t".into(),
            name: "Test".into(),
            tier,
            min_level: 1,
            max_level: 4,
            regions: Vec::new(),
            allow_loops: true,
            nodes: Some(nodes),
            edges: Some(edges),
            room_kinds: None,
            keys: Default::default(),
            harvests: Default::default(),
        };
        let (zone, diags) = crate::zone::build(&file);
        assert!(diags.is_empty(), "{diags:?}");
        zone
    }

    fn solve(zone: &Zone, level: u32, policy: Policy) -> Value {
        Model::new(zone, level, policy).expect("modelled").start()
    }

    fn close(got: f64, want: f64) {
        assert!((got - want).abs() < 1e-12, "got {got}, want {want}");
    }

    // Tier 1, level 1, the standard array: a trap is won on 9+ (0.6), an elite on 10+ (0.55),
    // the boss on 11+ (0.5); a Perception DC 15 opens on 15+ (0.3).
    //
    // The boss alone, from 0, 1, 2 wounds: wins 0.875, 0.75, 0.5; wounds 0.875, 0.75, 0.5.

    #[test]
    fn a_straight_line_with_one_trap() {
        let z = zone(1, "e:entry t:trap b:boss", "e>t t>b");
        let v = solve(&z, 1, Policy::Best);
        // 0.6·0.875 + 0.4·0.6·0.75 + 0.4²·0.6·0.5
        close(v.win, 0.753);
        // 0.6·(0 + 0.875) + 0.24·(1 + 0.75) + 0.096·(2 + 0.5) + 0.4³·3
        close(v.wounds, 1.377);
        assert_eq!(solve(&z, 1, Policy::Worst), v);
    }

    #[test]
    fn the_best_open_option_is_taken_at_a_fork() {
        // Through the trap 0.753; through the elite
        // 0.55·0.875 + 0.45·0.55·0.75 + 0.45²·0.55·0.5 = 0.7225625.
        let z = zone(
            1,
            "e:entry f:fork t:trap l:elite b:boss",
            "e>f f>l f>t t>b l>b",
        );
        close(solve(&z, 1, Policy::Best).win, 0.753);
        close(solve(&z, 1, Policy::Worst).win, 0.7225625);
        // Behind a Perception DC 15, the trap is open 30 % of the time.
        let z = zone(
            1,
            "e:entry f:fork t:trap l:elite b:boss",
            "e>f f>l f>t?15 t>b l>b",
        );
        close(
            solve(&z, 1, Policy::Best).win,
            0.3 * 0.753 + 0.7 * 0.7225625,
        );
        close(solve(&z, 1, Policy::Worst).win, 0.7225625);
        // A fork whose only way on is locked: a Perception DC 15 or nothing.
        let z = zone(1, "e:entry f:fork b:boss", "e>f f>b?15");
        close(solve(&z, 1, Policy::Best).win, 0.3 * 0.875);
    }

    #[test]
    fn a_rest_camp_heals_before_the_boss() {
        let z = zone(1, "e:entry t:trap r:rest_camp b:boss", "e>t t>r r>b");
        let v = solve(&z, 1, Policy::Best);
        // The trap is survived with probability 1 − 0.4³; then the boss from 0 wounds.
        close(v.win, (1.0 - 0.064) * 0.875);
        // The trap's wounds (1.377 − the boss's share above) plus the boss's from 0.
        close(v.wounds, 0.24 + 0.192 + 0.192 + 0.936 * 0.875);
    }

    #[test]
    fn keys_granted_on_the_way_open_key_locks() {
        // Fetching the key skips the trap: the boss alone, 0.875; without it, 0.753.
        let z = zone(
            1,
            "e:entry k:exploration+rune g:fork t:trap b:boss",
            "e>g e>k k>g g>b#rune g>t t>b",
        );
        close(solve(&z, 1, Policy::Best).win, 0.875);
        close(solve(&z, 1, Policy::Worst).win, 0.753);
    }

    #[test]
    fn levels_open_level_locks_and_strengthen_the_boss() {
        // Level 4: the boss is won on 9+ (0.6): 1 − 0.4³ = 0.936. Level 1: the lock is shut.
        let z = zone(1, "e:entry b:boss", "e>b^4");
        close(solve(&z, 1, Policy::Best).win, 0.0);
        close(solve(&z, 4, Policy::Best).win, 0.936);
        let d = difficulty(&z).expect("modelled");
        assert_eq!((d.min_level.level, d.max_level.level), (1, 4));
        assert_eq!(d.min_level.win_chance, 0.0);
        assert_eq!(d.max_level.win_chance, 0.936);
        assert_eq!(d.max_level.expected_wounds, 0.624);
    }

    #[test]
    fn loops_and_missing_bosses_are_not_modelled() {
        let z = zone(1, "e:entry a:exploration c:merge b:boss", "e>a a>c c>a c>b");
        assert!(Model::new(&z, 1, Policy::Best).is_none());
        assert!(difficulty(&z).is_none());
        let z = zone(1, "e:entry a:exploration", "e>a");
        assert!(difficulty(&z).is_none());
    }
}
