//! Semantic validation and design lints: every finding at once, each with a stable code.
//!
//! [`crate::zone::build`] reports what keeps an element out of the graph (`no_nodes`,
//! `duplicate_node` within a zone, `unknown_node`, `bad_lock_data`). [`validate`] checks
//! everything else that needs only the one zone; [`check_sources`] reads, builds, validates
//! and analyses many zone files together and adds the checks across zones (`duplicate_node`
//! between zones, `key_never_granted`).
//!
//! Nothing here panics on any input, recurses over the graph, or does worse than linear work
//! in rooms + passages.

use std::collections::{HashMap, HashSet};

use petgraph::Direction::{Incoming, Outgoing};
use petgraph::graph::NodeIndex;
use petgraph::visit::EdgeRef;
use serde::Serialize;

use crate::analysis::{self, Stats};
use crate::diagnostic::{self, Code, Diagnostic};
use crate::format::{NodeKind, ParseError};
use crate::roll;
use crate::text;
use crate::zone::{self, Lock, Zone};

/// Best ability modifier the DC lints assume (score 20).
///
/// The lints assume characters with ability scores 10 to 20, i.e. modifiers `0..=+5`, rolling
/// a d20 with no automatic success on 20 or failure on 1 (as [`roll::pass_chance`]). So a DC
/// above 20 + 5 = 25 is `impossible_dc` (nobody passes) and a DC of 1 + 0 = 1 or less is
/// `trivial_dc` (everybody passes).
pub const BEST_MODIFIER: i32 = 5;
/// Worst ability modifier the DC lints assume (score 10). See [`BEST_MODIFIER`].
pub const WORST_MODIFIER: i32 = 0;
/// A secret room should pay for the Perception roll that finds it: at least this loot bias.
pub const MIN_SECRET_LOOT_BIAS: f64 = 1.5;
/// Rooms named in a `cycle` message before it is abbreviated.
const MAX_CYCLE_ROOMS_SHOWN: usize = 8;

/// One zone file after checking: the `--json` shape
/// `{"file","zone_id","diagnostics":[…],"stats":{…}}`, plus `parse_error` when the file could
/// not be read at all.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CheckedZone {
    pub file: String,
    /// `None` when the file could not be parsed.
    pub zone_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parse_error: Option<ParseError>,
    /// Sorted with [`diagnostic::sort`].
    pub diagnostics: Vec<Diagnostic>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stats: Option<Stats>,
}

impl CheckedZone {
    /// A parse error or any error diagnostic.
    pub fn has_errors(&self) -> bool {
        self.parse_error.is_some() || self.diagnostics.iter().any(Diagnostic::is_error)
    }

    pub fn has_warnings(&self) -> bool {
        self.diagnostics.iter().any(|d| !d.is_error())
    }
}

/// What [`check_sources_with`] computes besides the findings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CheckOptions {
    /// Also run [`analysis::stats`] (`--stats`, the viewer). Costs about as much as validation.
    pub stats: bool,
}

impl Default for CheckOptions {
    fn default() -> Self {
        CheckOptions { stats: true }
    }
}

/// Reads, builds, validates and analyses zone files checked together, given as
/// `(file name, text)` in the caller's order; the result has one entry per source, in order.
///
/// Adds the checks across all of them: a room id used in two zones is `duplicate_node` (on
/// the later zone), and a key that no room of any of them grants is `key_never_granted`.
pub fn check_sources(sources: &[(String, String)]) -> Vec<CheckedZone> {
    check_sources_with(sources, CheckOptions::default())
}

/// [`check_sources`], with or without the analysis.
pub fn check_sources_with(sources: &[(String, String)], options: CheckOptions) -> Vec<CheckedZone> {
    let mut checked = Vec::with_capacity(sources.len());
    let mut zones: Vec<Option<Zone>> = Vec::with_capacity(sources.len());
    for (file, text) in sources {
        match zone::load(text) {
            Ok((zone, mut diags)) => {
                diags.extend(validate(&zone));
                checked.push(CheckedZone {
                    file: file.clone(),
                    zone_id: Some(zone.id.clone()),
                    parse_error: None,
                    diagnostics: diags,
                    stats: options.stats.then(|| analysis::stats(&zone)),
                });
                zones.push(Some(zone));
            }
            Err(e) => {
                checked.push(CheckedZone {
                    file: file.clone(),
                    zone_id: None,
                    parse_error: Some(e),
                    diagnostics: Vec::new(),
                    stats: None,
                });
                zones.push(None);
            }
        }
    }
    let built: Vec<(usize, &Zone)> = zones
        .iter()
        .enumerate()
        .filter_map(|(i, z)| z.as_ref().map(|z| (i, z)))
        .collect();
    let names: Vec<&str> = sources.iter().map(|(f, _)| f.as_str()).collect();
    for (i, found) in cross_zone(&built, &names) {
        checked[i].diagnostics.push(found);
    }
    for c in &mut checked {
        diagnostic::sort(&mut c.diagnostics);
    }
    checked
}

/// Everything that one already-built zone can tell on its own: [`validate`] plus
/// `key_never_granted` against the keys this zone grants. Sorted.
pub fn check_zone(zone: &Zone) -> Vec<Diagnostic> {
    let mut diags = validate(zone);
    diags.extend(cross_zone(&[(0, zone)], &[""]).into_iter().map(|(_, d)| d));
    diagnostic::sort(&mut diags);
    diags
}

/// Findings across zones, as (position in `zones`'s first field, diagnostic).
fn cross_zone(zones: &[(usize, &Zone)], files: &[&str]) -> Vec<(usize, Diagnostic)> {
    let mut out = Vec::new();
    // First zone (in the given order) that uses each room id.
    let mut owner: HashMap<&str, usize> = HashMap::new();
    // First zone that has each zone id: a zone given twice is one finding, not one per room.
    let mut zone_owner: HashMap<&str, usize> = HashMap::new();
    let mut granted: HashSet<&str> = HashSet::new();
    let file_of = |i: usize| match files.get(i).copied().unwrap_or("") {
        "" => String::new(),
        f => format!(" ({f})"),
    };
    for &(i, zone) in zones {
        let same_zone = match zone_owner.get(zone.id.as_str()) {
            Some(&first) => {
                out.push((
                    i,
                    Diagnostic::new(
                        Code::DuplicateNode,
                        format!(
                            "zone {} is defined twice{}, so all its room ids are used twice; \
                             check each zone once and give every zone its own zone_id",
                            zone.id,
                            match files.get(first).copied().unwrap_or("") {
                                "" => String::new(),
                                f => format!(" (first in {f})"),
                            }
                        ),
                    ),
                ));
                Some(first)
            }
            None => {
                zone_owner.insert(zone.id.as_str(), i);
                None
            }
        };
        for n in zone.graph.node_weights() {
            if let Some(key) = n.content.grants_key.as_deref() {
                granted.insert(key);
            }
            match owner.get(n.id.as_str()) {
                Some(&first) if first != i && Some(first) != same_zone => {
                    let other_zone = zones
                        .iter()
                        .find(|(j, _)| *j == first)
                        .map_or("?", |(_, z)| z.id.as_str());
                    out.push((
                        i,
                        Diagnostic::new(
                            Code::DuplicateNode,
                            format!(
                                "room id {} is also used in zone {other_zone}{}; room ids must be \
                                 unique across all zones, so rename one (convention \
                                 <zone_id>.<suffix>)",
                                n.id,
                                file_of(first)
                            ),
                        )
                        .at_node(n.id.0.clone()),
                    ));
                }
                Some(_) => {}
                None => {
                    owner.insert(n.id.as_str(), i);
                }
            }
        }
    }
    for &(i, zone) in zones {
        let g = &zone.graph;
        for e in g.edge_references() {
            if let Lock::KeyRequired { key_id } = &e.weight().lock
                && !granted.contains(key_id.as_str())
            {
                let (from, to) = (&g[e.source()].id, &g[e.target()].id);
                out.push((
                    i,
                    Diagnostic::new(
                        Code::KeyNeverGranted,
                        format!(
                            "passage {from} → {to} needs key {key_id}, which no room of the zones \
                             checked together grants; add \"grants_key\": \"{key_id}\" to a room's \
                             content or fix the key id"
                        ),
                    )
                    .at_edge(from.0.clone(), to.0.clone()),
                ));
            }
        }
    }
    out
}

/// Semantic errors and design warnings of one zone, sorted. See the module docs for what is
/// reported elsewhere.
pub fn validate(zone: &Zone) -> Vec<Diagnostic> {
    let g = &zone.graph;
    let n = g.node_count();
    let mut out = Vec::new();
    let entries = zone.entries();
    let bosses = zone.bosses();

    // One pass over the passages: degrees, self-loops and the lock lints.
    let mut out_deg = vec![0usize; n];
    let mut in_from_others = vec![0usize; n];
    for e in g.edge_references() {
        let (a, b) = (e.source(), e.target());
        out_deg[a.index()] += 1;
        if a != b {
            in_from_others[b.index()] += 1;
        } else if !g[a].content.allow_self_loop {
            out.push(
                Diagnostic::new(
                    Code::SelfLoop,
                    format!(
                        "room {} has a passage to itself; remove it or set \
                         content.allow_self_loop to true",
                        g[a].id
                    ),
                )
                .at_edge(g[a].id.0.clone(), g[b].id.0.clone()),
            );
        }
        lint_lock(
            zone,
            g[a].id.as_str(),
            g[b].id.as_str(),
            e.weight(),
            &mut out,
        );
    }

    // One pass over the rooms.
    let known_regions: HashSet<&str> = zone.regions.iter().map(|r| r.id.as_str()).collect();
    for ix in g.node_indices() {
        let node = &g[ix];
        let id = node.id.as_str();
        for (flag, flag_name, kind) in [
            (node.is_entry, "is_entry", NodeKind::Entry),
            (node.is_boss, "is_boss", NodeKind::Boss),
        ] {
            if flag != (node.kind == kind) {
                let msg = if flag {
                    format!(
                        "room {id} has {flag_name} true but kind {}; set kind to {} or \
                         {flag_name} to false",
                        node.kind.as_str(),
                        kind.as_str()
                    )
                } else {
                    format!(
                        "room {id} has kind {} but {flag_name} is false; set {flag_name} to \
                         true or change the kind",
                        kind.as_str()
                    )
                };
                out.push(Diagnostic::new(Code::KindFlagMismatch, msg).at_node(id));
            }
        }
        if !node.region_id.is_empty() && !known_regions.contains(node.region_id.as_str()) {
            out.push(
                Diagnostic::new(
                    Code::UnknownRegion,
                    unknown_region_msg(zone, &node.region_id, &format!("room {id} is in region")),
                )
                .at_node(id),
            );
        }
        if node.kind == NodeKind::Secret && node.content.loot_bias < MIN_SECRET_LOOT_BIAS {
            out.push(
                Diagnostic::new(
                    Code::SecretLootBias,
                    format!(
                        "secret room {id} has loot_bias {}; secrets cost a Perception roll to \
                         find, so give them content.loot_bias {} or more",
                        text::decimal(node.content.loot_bias),
                        text::decimal(MIN_SECRET_LOOT_BIAS),
                    ),
                )
                .at_node(id),
            );
        }
        if !node.is_entry && in_from_others[ix.index()] == 0 {
            out.push(
                Diagnostic::new(
                    Code::OrphanNode,
                    format!(
                        "room {id} has no passage leading into it, so no run can reach it; add \
                         an edge to it or remove the room"
                    ),
                )
                .at_node(id),
            );
        }
        let bossy = node.is_boss || node.kind == NodeKind::Boss;
        if bossy && out_deg[ix.index()] > 0 {
            out.push(
                Diagnostic::new(
                    Code::BossHasExits,
                    format!(
                        "boss room {id} has {} exit(s), but a run ends at the boss; remove them",
                        out_deg[ix.index()]
                    ),
                )
                .at_node(id),
            );
        }
        if !bossy && node.kind != NodeKind::Secret && out_deg[ix.index()] == 0 {
            out.push(
                Diagnostic::new(
                    Code::DeadEnd,
                    format!(
                        "room {id} has no exits, so a run that enters it ends without the boss; \
                         add an exit or make it a secret room"
                    ),
                )
                .at_node(id),
            );
        }
    }

    // Counts: only meaningful when there are rooms (build reports no_nodes).
    if n > 0 {
        count_flags(
            zone,
            &entries,
            "entry",
            "is_entry",
            Code::EntryCount,
            &mut out,
        );
        count_flags(zone, &bosses, "boss", "is_boss", Code::BossCount, &mut out);
        too_few_forks(zone, &out_deg, &mut out);
    }

    if let [entry] = entries[..] {
        // A run ends at the boss, so the search does not go on past it (only `boss_has_exits`
        // is said about rooms behind a boss).
        let only_boss = match bosses[..] {
            [boss] => Some(boss),
            _ => None,
        };
        let reachable = analysis::reach(zone, entry, Outgoing, |from, _| Some(from) != only_boss);
        for &b in &bosses {
            if !reachable[b.index()] {
                out.push(
                    Diagnostic::new(
                        Code::BossUnreachable,
                        format!(
                            "boss room {} cannot be reached from entry {} by any passage; add a \
                             route to it",
                            g[b].id, g[entry].id
                        ),
                    )
                    .at_node(g[b].id.0.clone()),
                );
            }
        }
        if let [boss] = bosses[..]
            && reachable[boss.index()]
        {
            soft_locks(zone, &reachable, boss, &out_deg, &mut out);
        }
    }

    if !zone.allow_loops && analysis::topo_order(zone).is_none() {
        cycles(zone, &mut out);
    }

    diagnostic::sort(&mut out);
    out
}

fn unknown_region_msg(zone: &Zone, region: &str, what: &str) -> String {
    if zone.regions.is_empty() {
        format!(
            "{what} {region}, but the zone has no regions; add {{\"region_id\": \"{region}\", …}} \
             to regions or clear region_id"
        )
    } else {
        let known: Vec<&str> = zone.regions.iter().map(|r| r.id.as_str()).collect();
        format!(
            "{what} {region}, which is not in the zone's regions ({}); fix the id or add the region",
            known.join(", ")
        )
    }
}

fn count_flags(
    zone: &Zone,
    found: &[NodeIndex],
    what: &str,
    flag: &str,
    code: Code,
    out: &mut Vec<Diagnostic>,
) {
    match found {
        [] => out.push(Diagnostic::new(
            code,
            format!(
                "zone {} has no {what} room; mark exactly one room with {flag} true (kind {what})",
                zone.id
            ),
        )),
        [_] => {}
        [first, rest @ ..] => {
            for &extra in rest {
                out.push(
                    Diagnostic::new(
                        code,
                        format!(
                            "room {} is a second {what} room (the first is {}); a zone has \
                             exactly one, so set {flag} to false on all but one",
                            zone.graph[extra].id, zone.graph[*first].id
                        ),
                    )
                    .at_node(zone.graph[extra].id.0.clone()),
                );
            }
        }
    }
}

/// An authoring guideline: at least one fork for tier 1, two for tier 2 and up, so a zone
/// offers real choices. Legacy linear zones are linear on purpose and exempt.
fn too_few_forks(zone: &Zone, out_deg: &[usize], out: &mut Vec<Diagnostic>) {
    if zone.legacy {
        return;
    }
    let want = if zone.tier <= 1 { 1 } else { 2 };
    let forks = out_deg.iter().filter(|&&d| d >= 2).count();
    if forks < want {
        out.push(Diagnostic::new(
            Code::TooFewForks,
            format!(
                "zone {} (tier {}) has {forks} fork(s) but should have at least {want}; give \
                 {} a second exit (a fork is a room with two or more exits)",
                zone.id,
                zone.tier,
                if want == 1 { "a room" } else { "rooms" }
            ),
        ));
    }
}

/// Lints of one passage's lock: hint, DC range, level range, region.
fn lint_lock(zone: &Zone, from: &str, to: &str, edge: &zone::Edge, out: &mut Vec<Diagnostic>) {
    let lock = &edge.lock;
    if !lock.is_locked() {
        return;
    }
    let at = |d: Diagnostic| d.at_edge(from, to);
    if edge.hint.trim().is_empty() {
        out.push(at(Diagnostic::new(
            Code::MissingHint,
            format!(
                "locked passage {from} → {to} ({}) has no hint; add one so players know \
                 something is there",
                lock.kind().as_str()
            ),
        )));
    }
    match lock {
        Lock::PerceptionCheck { dc } | Lock::StatCheck { dc, .. } => {
            let what = match lock {
                Lock::StatCheck { ability, .. } => format!("{} check", ability.name()),
                _ => "Perception check".to_string(),
            };
            if roll::pass_chance(BEST_MODIFIER, *dc) <= 0.0 {
                out.push(at(Diagnostic::new(
                    Code::ImpossibleDc,
                    format!(
                        "{what} DC {dc} on passage {from} → {to} cannot be passed: even a \
                         +{BEST_MODIFIER} modifier would need {} on a d20; lower the DC to {} or \
                         less",
                        i64::from(*dc) - i64::from(BEST_MODIFIER),
                        20 + BEST_MODIFIER
                    ),
                )));
            } else if roll::pass_chance(WORST_MODIFIER, *dc) >= 1.0 {
                out.push(at(Diagnostic::new(
                    Code::TrivialDc,
                    format!(
                        "{what} DC {dc} on passage {from} → {to} always passes, even with a \
                         +{WORST_MODIFIER} modifier; raise the DC above {} or remove the lock",
                        1 + WORST_MODIFIER
                    ),
                )));
            }
        }
        Lock::LevelMin { min_level } => {
            if *min_level > zone.max_level {
                out.push(at(Diagnostic::new(
                    Code::LevelAboveZone,
                    format!(
                        "level_min {min_level} on passage {from} → {to} is above the zone's \
                         max_level {}, so no character the zone is meant for passes; lower it or \
                         raise max_level",
                        zone.max_level
                    ),
                )));
            } else if *min_level <= zone.min_level {
                out.push(at(Diagnostic::new(
                    Code::TrivialDc,
                    format!(
                        "level_min {min_level} on passage {from} → {to} always passes: every \
                         character allowed in (min_level {}) meets it; raise it above {} or \
                         remove the lock",
                        zone.min_level, zone.min_level
                    ),
                )));
            }
        }
        Lock::RegionClear { region_id } => {
            if !zone.regions.iter().any(|r| r.id == *region_id) {
                out.push(at(Diagnostic::new(
                    Code::UnknownRegion,
                    unknown_region_msg(
                        zone,
                        region_id,
                        &format!("region_clear lock on passage {from} → {to} names region"),
                    ),
                )));
            }
        }
        Lock::None | Lock::KeyRequired { .. } | Lock::Invalid { .. } => {}
    }
}

/// Rooms the entry reaches (under some lock outcomes) from which the boss cannot be reached
/// through unlocked passages. Linear: one reverse search from the boss over unlocked passages.
///
/// Rooms without exits are left to `dead_end` (or are dead-end secrets, which end the run
/// quietly), so one flaw gives one finding.
fn soft_locks(
    zone: &Zone,
    reachable: &[bool],
    boss: NodeIndex,
    out_deg: &[usize],
    out: &mut Vec<Diagnostic>,
) {
    let g = &zone.graph;
    let safe = analysis::reach(zone, boss, Incoming, |_, e| !e.lock.is_locked());
    for ix in g.node_indices() {
        let i = ix.index();
        if !reachable[i] || safe[i] || out_deg[i] == 0 {
            continue;
        }
        let id = &g[ix].id;
        let all_locked = g
            .edges_directed(ix, Outgoing)
            .all(|e| e.weight().lock.is_locked());
        let msg = if all_locked {
            format!(
                "every exit of room {id} is locked, so a run that fails the locks is stranded \
                 there; add an unlocked passage toward the boss"
            )
        } else {
            format!(
                "from room {id} the boss can be reached only through locked passages, so a \
                 failed check or a missing key strands the run; add an unlocked route toward \
                 the boss"
            )
        };
        out.push(Diagnostic::new(Code::SoftLock, msg).at_node(id.0.clone()));
    }
}

/// Loops (strongly connected components of two or more rooms), one finding each, naming the
/// rooms of a shortest loop through the component's first room in file order. Self-loops are
/// `self_loop`, not `cycle`.
fn cycles(zone: &Zone, out: &mut Vec<Diagnostic>) {
    let g = &zone.graph;
    let (comps, comp_of) = analysis::components(zone);
    let mut parent: Vec<Option<NodeIndex>> = vec![None; g.node_count()];
    for (c, comp) in comps.iter().enumerate() {
        if comp.len() < 2 {
            continue;
        }
        let Some(&start) = comp.iter().min() else {
            continue;
        };
        // Breadth-first inside the component until a passage leads back to `start`.
        let mut queue = std::collections::VecDeque::from([start]);
        parent[start.index()] = Some(start);
        let mut last = None;
        'search: while let Some(n) = queue.pop_front() {
            for t in g.neighbors_directed(n, Outgoing) {
                if comp_of[t.index()] != c {
                    continue;
                }
                if t == start && n != start {
                    last = Some(n);
                    break 'search;
                }
                if parent[t.index()].is_none() {
                    parent[t.index()] = Some(n);
                    queue.push_back(t);
                }
            }
        }
        let mut rooms = Vec::new();
        let mut cur = last;
        while let Some(n) = cur {
            rooms.push(n);
            if n == start {
                break;
            }
            cur = parent[n.index()];
        }
        rooms.reverse();
        let len = rooms.len();
        let mut names: Vec<&str> = rooms
            .iter()
            .take(MAX_CYCLE_ROOMS_SHOWN)
            .map(|&n| g[n].id.as_str())
            .collect();
        let shown = if len > MAX_CYCLE_ROOMS_SHOWN {
            names.push("…");
            format!("{} ({len} rooms)", names.join(" → "))
        } else {
            names.push(g[start].id.as_str());
            names.join(" → ")
        };
        out.push(
            Diagnostic::new(
                Code::Cycle,
                format!(
                    "rooms {shown} form a loop; remove a passage or set allow_loops to true at \
                     the top level"
                ),
            )
            .at_node(g[start].id.0.clone()),
        );
    }
}
