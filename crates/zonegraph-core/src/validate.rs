//! Semantic validation and design lints: every finding at once, each with a stable code.
//!
//! [`crate::zone::build`] reports what keeps an element out of the graph (`no_nodes`,
//! `duplicate_node` within a zone, `unknown_node`, `bad_lock_data`). [`validate`] checks
//! everything else that needs only the one zone; [`check_sources`] reads, builds, validates
//! and analyses many zone files together and adds the checks across zones (`duplicate_node`
//! between zones, `key_never_granted`).
//!
//! One finding per cause: designers act on the first finding they read, so a defect is
//! reported once, where it is, and the rooms that only suffer from it are context (`related`),
//! not findings of their own. A room is *stuck* when the entry reaches it but no unlocked
//! route leads from it to the boss. A run that fails every lock follows only unlocked
//! passages, so from a stuck room it ends either stranded before locks or in a room without
//! exits; those are the causes:
//!
//! - `soft_lock`: once per place where such a run is stranded: a stuck room (or a loop of
//!   stuck rooms) with locked ways on whose unlocked exits, if any, lead only to dead ends
//!   (the fork whose every exit is locked, the fork whose open exits all lead nowhere), or a
//!   loop with no way out at all. The message names the locked passages out of it. A stuck
//!   room whose unlocked exits reach such a place is not one, even with locks of its own:
//!   fixing the place gives it an unlocked route too. The stuck rooms with an unlocked route
//!   into the place are its `related` rooms.
//! - `dead_end`: once per room without exits (neither boss nor secret); the stuck rooms with an
//!   unlocked route into it (a corridor that leads only there) are its `related` rooms, not
//!   findings. A corridor into a dead-end secret ends the run quietly and is no finding.
//! - `too_hard` / `too_easy`: once per zone without errors, soft locks or dead ends, from [`difficulty::Model`]:
//!   a `min_level` character beats the boss less than 25 % of the time on the best route, or a
//!   `max_level` character loses less than 1 % of the time on every route.
//! - `key_never_granted`: once per key id and zone, at the first passage it locks in file
//!   order, naming every passage it locks.
//!
//! `related` lists the first [`MAX_RELATED_ROOMS`] such rooms in file order.
//!
//! Nothing here panics on any input, recurses over the graph, or does worse than linear work
//! in rooms + passages.

use std::collections::{BTreeMap, HashMap, HashSet};

use petgraph::Direction::{Incoming, Outgoing};
use petgraph::graph::{EdgeIndex, NodeIndex};
use petgraph::visit::EdgeRef;
use serde::Serialize;

use crate::analysis::{self, Stats};
use crate::diagnostic::{self, Code, Diagnostic};
use crate::difficulty;
use crate::format::{NodeKind, ParseError};
use crate::paths;
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
/// Rooms a finding lists as context (`related`) at most: the first in file order. Bounds the
/// output and keeps the search linear in rooms + passages.
pub const MAX_RELATED_ROOMS: usize = 16;

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
        // One finding per missing key, naming its passages in file order.
        let mut locked_by: BTreeMap<&str, Vec<EdgeIndex>> = BTreeMap::new();
        for e in g.edge_references() {
            if let Lock::KeyRequired { key_id } = &e.weight().lock
                && !granted.contains(key_id.as_str())
            {
                locked_by.entry(key_id.as_str()).or_default().push(e.id());
            }
        }
        for (key_id, edges) in locked_by {
            let Some(&first) = edges.first() else {
                continue;
            };
            let (from, to) = (&g[zone.source(first)].id, &g[zone.target(first)].id);
            let what = if edges.len() == 1 {
                format!("passage {from} → {to} needs")
            } else {
                let named: Vec<String> = edges
                    .iter()
                    .map(|&e| format!("{} → {}", g[zone.source(e)].id, g[zone.target(e)].id))
                    .collect();
                format!("passages {} need", join_and(&named))
            };
            out.push((
                i,
                Diagnostic::new(
                    Code::KeyNeverGranted,
                    format!(
                        "{what} key {key_id}, which no room of the zones checked together grants; \
                         add \"grants_key\": \"{key_id}\" to a room's content or fix the key id"
                    ),
                )
                .at_edge(from.0.clone(), to.0.clone()),
            ));
        }
    }
    out
}

/// `a`, `a and b`, `a, b and c`.
fn join_and(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
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
    let mut dead_ends = Vec::new();
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
        if let Some(extra) = &node.content.extra {
            let bytes = serde_json::to_string(extra).map_or(0, |s| s.len());
            if bytes > crate::format::MAX_EXTRA_BYTES {
                let msg = format!(
                    "room {id}'s content.extra is {bytes} bytes of JSON; at most {} are \
                     passed on: keep the host game's data there short, or a reference to it",
                    crate::format::MAX_EXTRA_BYTES
                );
                out.push(Diagnostic::new(Code::ExtraTooLarge, msg).at_node(id));
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
            dead_ends.push(ix);
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

    let mut strands = None;
    if let [entry] = entries[..] {
        // A run ends at the boss, so the search does not go on past it (only `boss_has_exits`
        // is said about rooms behind a boss).
        let only_boss = match bosses[..] {
            [boss] => Some(boss),
            _ => None,
        };
        let reachable = paths::reach(zone, entry, Outgoing, |from, _| Some(from) != only_boss);
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
            strands = stranding(zone, &reachable, boss);
        }
    }
    if let Some(st) = &strands {
        soft_locks(zone, st, &mut out);
    }
    for ix in dead_ends {
        let id = g[ix].id.as_str();
        let related = strands
            .as_ref()
            .and_then(|st| st.comp_of[ix.index()].map(|c| st.related_ids(zone, c)))
            .unwrap_or_default();
        out.push(
            Diagnostic::new(
                Code::DeadEnd,
                format!(
                    "room {id} has no exits, so a run that enters it ends without the boss; add \
                     an exit or make it a secret room"
                ),
            )
            .at_node(id)
            .with_related(related),
        );
    }

    if !zone.allow_loops && paths::topo_order(zone).is_none() {
        cycles(zone, &mut out);
    }

    // A broken or stranding zone's figures would only repeat its findings (one per cause).
    if !out
        .iter()
        .any(|d| d.is_error() || matches!(d.code, Code::SoftLock | Code::DeadEnd))
    {
        difficulty_lints(zone, &mut out);
    }

    diagnostic::sort(&mut out);
    out
}

/// `too_hard` and `too_easy`, from [`difficulty::Model`] (nothing when the zone is not
/// modelled).
fn difficulty_lints(zone: &Zone, out: &mut Vec<Diagnostic>) {
    use difficulty::{Model, Policy, round4};
    let pct = |p: f64| format!("{} %", crate::text::decimal((p * 1000.0).round() / 10.0));
    let below = |p: f64| {
        crate::text::decimal(p * 100.0)
            .trim_end_matches(".0")
            .to_string()
    };
    // The best route at min_level, the worst at max_level: two passes, not the four of both
    // figures at both levels.
    let Some(hard) = Model::new(zone, zone.min_level, Policy::Best) else {
        return;
    };
    let win = round4(hard.start().win);
    if win < difficulty::TOO_HARD_BELOW {
        out.push(Diagnostic::new(
            Code::TooHard,
            format!(
                "a level {} character beats the boss {} of the time on the best route (too_hard \
                 below {} %); lower the tier, ease the route or raise min_level",
                zone.min_level,
                pct(win),
                below(difficulty::TOO_HARD_BELOW)
            ),
        ));
    }
    let Some(easy) = Model::new(zone, zone.max_level, Policy::Worst) else {
        return;
    };
    let worst_loss = 1.0 - round4(easy.start().win);
    if worst_loss < difficulty::TOO_EASY_LOSS_BELOW {
        out.push(Diagnostic::new(
            Code::TooEasy,
            format!(
                "a level {} character loses {} of the time even on the worst route (too_easy \
                 below {} %), so no fork matters; raise the tier or lower max_level",
                zone.max_level,
                pct(worst_loss),
                below(difficulty::TOO_EASY_LOSS_BELOW)
            ),
        ));
    }
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

/// Where runs that fail every lock end up, for `soft_lock` and the context of `dead_end`.
///
/// A room is *stuck* when the entry reaches it (not past the boss) but no unlocked route leads
/// from it to the boss; unlocked passages from a stuck room lead only to stuck rooms. The
/// stuck rooms are grouped into components: rooms that lead into each other through unlocked
/// passages (one room each unless the zone has loops), in topological order.
#[derive(Debug)]
struct Strands {
    /// Each room's component, `None` for rooms that are not stuck.
    comp_of: Vec<Option<usize>>,
    /// Rooms of each component, in file order.
    comps: Vec<Vec<NodeIndex>>,
    /// Components where a run that fails every lock is stranded: some passage leaves them, and
    /// every unlocked one leads on only to rooms without exits (no other stranding place).
    stranded: Vec<bool>,
    /// Stuck rooms outside each component with an unlocked route into it: the first
    /// [`MAX_RELATED_ROOMS`] in file order.
    related: Vec<Vec<NodeIndex>>,
}

impl Strands {
    fn related_ids(&self, zone: &Zone, c: usize) -> Vec<String> {
        self.related[c]
            .iter()
            .map(|&r| zone.graph[r].id.0.clone())
            .collect()
    }
}

/// [`Strands`] of a zone whose one entry reaches its one boss, or `None` when no room is stuck
/// (the usual case, which costs one reverse search). Linear: one reverse search, one
/// component search, and two passes over the components, merging lists of at most
/// [`MAX_RELATED_ROOMS`] rooms per passage.
fn stranding(zone: &Zone, reachable: &[bool], boss: NodeIndex) -> Option<Strands> {
    let g = &zone.graph;
    let safe = paths::reach(zone, boss, Incoming, |_, e| !e.lock.is_locked());
    let stuck: Vec<bool> = (0..g.node_count())
        .map(|i| reachable[i] && !safe[i])
        .collect();
    if !stuck.contains(&true) {
        return None;
    }
    // Reverse topological order, iterative (see `analysis`); rooms that are not stuck are
    // components of their own, dropped here.
    let mut comps = paths::components_through(zone, &|e| {
        !e.weight().lock.is_locked() && stuck[e.source().index()]
    });
    comps.retain(|c| c.first().is_some_and(|r| stuck[r.index()]));
    comps.reverse();
    let mut comp_of = vec![None; g.node_count()];
    for (c, comp) in comps.iter_mut().enumerate() {
        text::sort(comp);
        for r in comp.iter() {
            comp_of[r.index()] = Some(c);
        }
    }

    // Later components first: whether a run from each can be stranded further on.
    let k = comps.len();
    let mut stranded = vec![false; k];
    let mut leads_to_strand = vec![false; k];
    for c in (0..k).rev() {
        let (mut exits, mut locked_out, mut open_out, mut further) = (false, false, false, false);
        for &r in &comps[c] {
            for e in g.edges_directed(r, Outgoing) {
                exits = true;
                let to = comp_of[e.target().index()];
                if to == Some(c) {
                    continue;
                }
                if e.weight().lock.is_locked() {
                    locked_out = true;
                } else if let Some(d) = to {
                    open_out = true;
                    further |= stranded[d] || leads_to_strand[d];
                }
            }
        }
        leads_to_strand[c] = further;
        stranded[c] = exits && !further && (locked_out || !open_out);
    }

    // Earlier components first: the stuck rooms that lead into each.
    let mut related: Vec<Vec<NodeIndex>> = vec![Vec::new(); k];
    for c in 0..k {
        let upstream = merge_first(&comps[c], &related[c]);
        for &r in &comps[c] {
            for e in g.edges_directed(r, Outgoing) {
                if e.weight().lock.is_locked() {
                    continue;
                }
                if let Some(d) = comp_of[e.target().index()]
                    && d != c
                {
                    related[d] = merge_first(&related[d], &upstream);
                }
            }
        }
    }
    Some(Strands {
        comp_of,
        comps,
        stranded,
        related,
    })
}

/// The first [`MAX_RELATED_ROOMS`] rooms of two lists in file order, without repeats.
fn merge_first(a: &[NodeIndex], b: &[NodeIndex]) -> Vec<NodeIndex> {
    let mut out = Vec::with_capacity(MAX_RELATED_ROOMS);
    let (mut i, mut j) = (0, 0);
    while out.len() < MAX_RELATED_ROOMS {
        let next = match (a.get(i), b.get(j)) {
            (Some(&x), Some(&y)) if x == y => {
                i += 1;
                j += 1;
                x
            }
            (Some(&x), Some(&y)) if x < y => {
                i += 1;
                x
            }
            (_, Some(&y)) => {
                j += 1;
                y
            }
            (Some(&x), None) => {
                i += 1;
                x
            }
            (None, None) => break,
        };
        out.push(next);
    }
    out
}

/// One `soft_lock` per stranding place, at its first room in file order, naming the locked
/// passages out of it, with the stuck rooms that lead into it as `related`.
fn soft_locks(zone: &Zone, st: &Strands, out: &mut Vec<Diagnostic>) {
    let g = &zone.graph;
    for (c, comp) in st.comps.iter().enumerate() {
        let Some(&first) = comp.first() else {
            continue;
        };
        if !st.stranded[c] {
            continue;
        }
        let mut locked: Vec<EdgeIndex> = Vec::new();
        let (mut open_out, mut all_locked) = (false, true);
        for &r in comp {
            for e in g.edges_directed(r, Outgoing) {
                let inside = st.comp_of[e.target().index()] == Some(c);
                if !e.weight().lock.is_locked() {
                    all_locked = false;
                    open_out |= !inside;
                } else if !inside {
                    locked.push(e.id());
                }
            }
        }
        // Edge indices are file order.
        text::sort(&mut locked);
        let passages: Vec<String> = locked
            .iter()
            .map(|&e| {
                format!(
                    "{} → {}: {}",
                    g[zone.source(e)].id,
                    g[zone.target(e)].id,
                    analysis::requirement(zone, &g[e].lock)
                )
            })
            .collect();
        let fails = if locked.len() == 1 {
            "the lock"
        } else {
            "the locks"
        };
        let id = &g[first].id;
        let rooms = || {
            let mut names: Vec<String> = comp
                .iter()
                .take(MAX_CYCLE_ROOMS_SHOWN)
                .map(|&r| g[r].id.0.clone())
                .collect();
            if comp.len() > MAX_CYCLE_ROOMS_SHOWN {
                names.push(format!("… ({} rooms)", comp.len()));
            }
            join_and(&names)
        };
        let msg = match (comp.len(), passages.is_empty(), open_out) {
            // Closed: no way on at all, locked or not.
            (1, true, _) => format!(
                "every exit of room {id} leads back into it, so a run that enters it never \
                 reaches the boss; add a passage toward the boss"
            ),
            (_, true, _) => format!(
                "rooms {} lead only into each other, so a run that enters them never reaches \
                 the boss; add a passage toward the boss",
                rooms()
            ),
            (1, false, false) => format!(
                "every {} room {id} is locked ({}), so a run that fails {fails} is stranded \
                 there; add an unlocked passage toward the boss",
                if all_locked { "exit of" } else { "way on from" },
                passages.join(", ")
            ),
            (1, false, true) => format!(
                "the only way{} on from room {id} {} locked ({}) and its unlocked exits lead \
                 only to dead ends, so a run that fails {fails} ends short of the boss; add an \
                 unlocked route toward the boss",
                if locked.len() == 1 { "" } else { "s" },
                if locked.len() == 1 { "is" } else { "are" },
                passages.join(", ")
            ),
            (_, false, _) => format!(
                "rooms {} lead only into each other{}, and their only way{} on {} locked ({}), so \
                 a run that fails {fails} is stranded there; add an unlocked route toward the boss",
                rooms(),
                if open_out { " and to dead ends" } else { "" },
                if locked.len() == 1 { "" } else { "s" },
                if locked.len() == 1 { "is" } else { "are" },
                passages.join(", ")
            ),
        };
        out.push(
            Diagnostic::new(Code::SoftLock, msg)
                .at_node(id.0.clone())
                .with_related(st.related_ids(zone, c)),
        );
    }
}

/// Loops (strongly connected components of two or more rooms), one finding each, naming the
/// rooms of a shortest loop through the component's first room in file order. Self-loops are
/// `self_loop`, not `cycle`.
fn cycles(zone: &Zone, out: &mut Vec<Diagnostic>) {
    let g = &zone.graph;
    let (comps, comp_of) = paths::components(zone);
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
