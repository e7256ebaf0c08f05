//! The player view: everything a player may know of a zone during a run, decided once.
//!
//! Every player-facing output is built from here: the fork menu and `!zone status` (through
//! [`crate::chat`]), the chat map ([`crate::map::MapView::of_run`]), the run-map link's JSON
//! and page, and the wasm `playerView`. The rules:
//! - every room of the zone is known except secret rooms not yet discovered (the lock into
//!   them passed, or visited);
//! - a room whose every way in is a Perception passage the run failed is *unknown*: it is on
//!   the map, but without id, label or kind ("something", as the fork menu says);
//! - passages between known or unknown rooms show their lock kind and hint, never lock data;
//! - a fork option shows what the chat said of it: a frozen roll ("Perception 11 vs DC 12")
//!   only after a refused `!zone go` revealed it;
//! - no content of rooms not reached, no run id.

use std::collections::BTreeSet;

use petgraph::graph::NodeIndex;
use serde::{Deserialize, Serialize};

use super::run::{Character, EncounterCheck, ForkOption, LockReason, Outcome, Run};
use crate::format::{EdgeFile, LockKind, NodeFile, NodeKind, ZoneFile};
use crate::narration;
use crate::rules::{self, EncounterKind};
use crate::zone::{NodeId, Zone};

/// Whether an exit was tested, and how it went.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExitState {
    /// No lock, or a lock the run passed at this fork.
    Open,
    /// A lock that failed at this fork.
    Locked,
    /// A lock not tested yet: locks are tested when the player reaches the fork.
    Unchecked,
}

/// An exit as the player may see it: a secret's id, label and kind stay hidden until the
/// lock into it was passed, and a failed Perception check hides what is there.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExitView {
    /// 1-based menu number.
    pub number: usize,
    /// `None` when hidden from the player.
    pub to_node: Option<NodeId>,
    /// `None` when hidden from the player ("something").
    pub label: Option<String>,
    /// `None` when hidden or locked.
    pub kind: Option<NodeKind>,
    pub state: ExitState,
    pub lock: LockKind,
    /// The edge's hint, or a generic teaser when the hint is empty; only for a lock that
    /// failed or was not tested yet.
    pub teaser: Option<String>,
    /// The frozen roll or requirement, once a refused `!zone go` has told the player.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revealed: Option<LockReason>,
}

/// What `!zone status` shows: the words of the chat's status line, as data.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Status {
    pub zone_id: String,
    pub zone_name: String,
    pub node: NodeId,
    pub label: String,
    /// `None` when the run names a room the zone does not have.
    pub kind: Option<NodeKind>,
    /// The current region's name, in a multi-region zone.
    pub region: Option<String>,
    /// Room X of "Room X of Y": rooms the run has reached.
    pub room_number: usize,
    /// Y: rooms on the longest entry-to-boss route through rooms the player may know.
    pub room_total: usize,
    pub phase: Phase,
    pub exits: Vec<ExitView>,
    /// When the pending fork was offered.
    pub fork_created_at: Option<i64>,
    /// Keys held: the character's and those granted in this run, sorted, each once. (A list,
    /// not a set: it then reads as `key_names` does, one reader less in the run page.)
    pub keys: Vec<String>,
    /// What players read for each of `keys`, in the same order (the zone's `keys` table,
    /// else the id's words).
    pub key_names: Vec<String>,
    /// The encounter that bars the way on (`!zone fight` or `!zone flee`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encounter: Option<EncounterView>,
    /// Wounds taken since the last rest camp; [`rules::MAX_WOUNDS`] end the run.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub wounds: u32,
    /// The last encounter check the chat showed, roll and DC.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_check: Option<EncounterCheck>,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// The encounter waiting in the current room, as the player knows it.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EncounterView {
    pub kind: EncounterKind,
    /// Checks already lost here.
    pub attempts: u32,
    /// Wounds that end the run ([`rules::MAX_WOUNDS`]).
    pub max_wounds: u32,
    /// The DC of its check under the built-in rules (the rules' table is public).
    pub dc: u32,
}

/// Where a run stands.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "phase", rename_all = "snake_case")]
pub enum Phase {
    /// In a room that `!zone advance` clears (after its encounter, if
    /// [`Status::encounter`] names one).
    InRoom,
    /// A fork waits for `!zone go N`.
    Fork,
    /// A fork with no open option: the run waits.
    Waiting,
    Over {
        outcome: Outcome,
    },
}

/// How much a player may know of one room.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Knowledge {
    /// Not in the player's view at all: an undiscovered secret.
    Hidden,
    /// On the map as "something": every way in is a Perception passage the run failed.
    Unknown,
    /// Named, with its kind.
    Known,
}

/// What a player may know of every room, by node index.
pub fn knowledge(zone: &Zone, run: &Run) -> Vec<Knowledge> {
    let mut visited = BTreeSet::new();
    visited.extend(run.visited_nodes.iter().map(NodeId::as_str));
    visited.insert(run.current_node.as_str());
    zone.graph
        .node_indices()
        .map(|ix| knowledge_at(zone, run, ix, &|id| visited.contains(id.as_str())))
        .collect()
}

/// What the player of `run` may know of the room `ix`, `visited` saying which rooms the run
/// reached (so one room costs its ways in, not the zone).
pub(super) fn knowledge_at(
    zone: &Zone,
    run: &Run,
    ix: NodeIndex,
    visited: &dyn Fn(&NodeId) -> bool,
) -> Knowledge {
    let n = zone.node(ix);
    if visited(&n.id) {
        return Knowledge::Known;
    }
    if n.kind == NodeKind::Secret && !run.revealed_secrets.contains(&n.id) {
        return Knowledge::Hidden;
    }
    let ways_in = zone.entrances(ix);
    let all_missed = !ways_in.is_empty()
        && ways_in.iter().all(|&e| {
            let from = &zone.node(zone.source(e)).id;
            run.missed_passages.contains(&(from.clone(), n.id.clone()))
        });
    if all_missed {
        Knowledge::Unknown
    } else {
        Knowledge::Known
    }
}

/// Whether `run` reached room `id` (its current room included), by its list of rooms.
pub(super) fn reached(run: &Run, id: &NodeId) -> bool {
    run.current_node == *id || run.has_visited(id)
}

/// How much the player of `run` may know of the room `node`; [`Knowledge::Hidden`] for an id
/// the zone does not have.
pub fn knowledge_of(zone: &Zone, run: &Run, node: &str) -> Knowledge {
    match zone.node_index(node) {
        None => Knowledge::Hidden,
        Some(ix) => knowledge_at(zone, run, ix, &|id| reached(run, id)),
    }
}

/// Whether the room `node` is on the player's map at all (known or unknown).
pub fn visible_to_player(zone: &Zone, run: &Run, node: &str) -> bool {
    knowledge_of(zone, run, node) != Knowledge::Hidden
}

/// Y of "Room X of Y": rooms on the longest entry-to-boss route through rooms on the
/// player's map, and never less than the rooms already reached. A room is off the map only
/// when it is a secret the run neither found nor reached, so the total depends on the secrets
/// on the map alone, and the zone keeps it per such set ([`crate::paths::longest_on_map`]):
/// a step costs the run's rooms and found secrets, looked up, not the zone's size.
pub fn room_total(zone: &Zone, run: &Run) -> usize {
    let secrets = crate::paths::secret_rooms(zone);
    // The zone's secrets (kept in index order) the run found or reached, found from whichever
    // is shorter, the secrets or the run's rooms: no set nor sort.
    let shown: Vec<NodeIndex> = if secrets.len() <= run.visited_nodes.len() {
        secrets
            .iter()
            .copied()
            .filter(|&ix| {
                let id = &zone.node(ix).id;
                run.revealed_secrets.contains(id) || reached(run, id)
            })
            .collect()
    } else {
        let mut on_map = vec![false; secrets.len()];
        let ids = run.revealed_secrets.iter().chain(&run.visited_nodes);
        for id in ids.chain(std::iter::once(&run.current_node)) {
            if let Some(at) = zone
                .node_index(id.as_str())
                .and_then(|ix| secrets.binary_search(&ix).ok())
            {
                on_map[at] = true;
            }
        }
        secrets
            .iter()
            .zip(&on_map)
            .filter_map(|(&ix, &on)| on.then_some(ix))
            .collect()
    };
    crate::paths::longest_on_map(zone, &shown)
        .unwrap_or(0)
        .max(run.room_number())
}

/// Where `run` stands: over, at a fork, waiting at a fork none of whose ways opened, or in a
/// room.
pub fn phase(run: &Run) -> Phase {
    match (run.outcome, &run.pending_fork) {
        (Some(outcome), _) => Phase::Over { outcome },
        (None, Some(f)) if f.options.iter().any(|o| o.open) => Phase::Fork,
        (None, Some(_)) => Phase::Waiting,
        (None, None) => Phase::InRoom,
    }
}

/// What `!zone status` reports.
pub fn status(zone: &Zone, run: &Run, character: &Character) -> Status {
    let node = zone.node_by_id(run.current_node.as_str());
    let phase = phase(run);
    let exits = if run.is_over() {
        Vec::new()
    } else {
        exit_views(zone, run)
    };
    let mut keys = character.keys.clone();
    keys.extend(run.keys_granted.iter().cloned());
    Status {
        zone_id: zone.id.clone(),
        zone_name: zone.name.clone(),
        node: run.current_node.clone(),
        label: node.map_or_else(
            || run.current_node.to_string(),
            |n| narration::room_label(n).to_string(),
        ),
        kind: node.map(|n| n.kind),
        region: node
            .filter(|n| !n.region_id.is_empty())
            .map(|n| zone.region_name(&n.region_id).to_string()),
        room_number: run.room_number(),
        room_total: room_total(zone, run),
        phase,
        exits,
        fork_created_at: run.pending_fork.as_ref().map(|f| f.created_at),
        key_names: key_names(zone, &keys),
        keys: keys.into_iter().collect(),
        encounter: super::pending_encounter(zone, run).map(|e| EncounterView {
            kind: e.kind,
            attempts: e.attempts,
            max_wounds: rules::MAX_WOUNDS,
            dc: rules::encounter_dc(zone.tier, e.kind),
        }),
        wounds: if run.is_over() { 0 } else { run.wounds },
        last_check: run.last_check.clone(),
    }
}

/// The exits of the current room as the player sees them: the pending fork's frozen results
/// when there is one, otherwise the untested locks.
pub fn exit_views(zone: &Zone, run: &Run) -> Vec<ExitView> {
    let known = |id: &NodeId| knowledge_of(zone, run, id.as_str()) == Knowledge::Known;
    if let Some(fork) = run
        .pending_fork
        .as_ref()
        .filter(|f| f.at == run.current_node)
    {
        return fork
            .options
            .iter()
            .enumerate()
            .map(|(i, o)| {
                let lock = o.check.lock_kind();
                let hint = zone
                    .node_index(fork.at.as_str())
                    .zip(zone.node_index(o.to_node.as_str()))
                    .and_then(|(a, b)| zone.graph.find_edge(a, b))
                    .map(|e| zone.graph[e].hint.clone())
                    .unwrap_or_default();
                let state = if o.open {
                    ExitState::Open
                } else {
                    ExitState::Locked
                };
                let mut v = exit_view(
                    zone,
                    i + 1,
                    &o.to_node,
                    known(&o.to_node),
                    lock,
                    state,
                    &hint,
                );
                v.revealed = o.revealed.then(|| o.check.reason(zone)).flatten();
                v
            })
            .collect();
    }
    let Some(at) = zone.node_index(run.current_node.as_str()) else {
        return Vec::new();
    };
    zone.exits(at)
        .into_iter()
        .enumerate()
        .map(|(i, e)| {
            let edge = &zone.graph[e];
            let to = &zone.node(zone.target(e)).id;
            let state = if edge.lock.is_locked() {
                ExitState::Unchecked
            } else {
                ExitState::Open
            };
            exit_view(
                zone,
                i + 1,
                to,
                known(to),
                edge.lock.kind(),
                state,
                &edge.hint,
            )
        })
        .collect()
}

fn exit_view(
    zone: &Zone,
    number: usize,
    to: &NodeId,
    known: bool,
    lock: LockKind,
    state: ExitState,
    hint: &str,
) -> ExitView {
    // Not noticed: a Perception lock that failed or was not rolled yet hides what is there.
    let unnoticed = lock == LockKind::PerceptionCheck && state != ExitState::Open;
    let shown = !unnoticed && known;
    let node = zone.node_by_id(to.as_str());
    let teaser = (state != ExitState::Open).then(|| {
        let hint = hint.trim();
        if hint.is_empty() {
            narration::generic_teaser(lock).to_string()
        } else {
            hint.to_string()
        }
    });
    ExitView {
        number,
        to_node: shown.then(|| to.clone()),
        label: node
            .filter(|_| shown)
            .map(|n| narration::room_label(n).to_string()),
        kind: node
            .filter(|_| shown && state == ExitState::Open)
            .map(|n| n.kind),
        state,
        lock,
        teaser,
        revealed: None,
    }
}

/// The label a refusal may name for a fork option: `None` when the menu calls it "something".
pub(super) fn option_label(zone: &Zone, run: &Run, option: &ForkOption) -> Option<String> {
    if option.check.lock_kind() == LockKind::PerceptionCheck && !option.open {
        return None;
    }
    if knowledge_of(zone, run, option.to_node.as_str()) != Knowledge::Known {
        return None;
    }
    zone.node_by_id(option.to_node.as_str())
        .map(|n| narration::room_label(n).to_string())
}

/// Everything a player may know of a zone during a run: what the run-map link serves, what
/// the chat map draws, and what the wasm `playerView` returns.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlayerView {
    pub zone_id: String,
    pub zone_name: String,
    pub tier: u8,
    /// Regions of the rooms on the map, in the zone's order.
    pub regions: Vec<RegionView>,
    /// Rooms on the player's map, in the zone file's order; undiscovered secrets are absent.
    pub rooms: Vec<RoomView>,
    /// Passages between rooms on the map, in the zone file's order.
    pub passages: Vec<PassageView>,
    /// `!zone status` as data; the chat module words it.
    pub status: Status,
}

impl PlayerView {
    /// The key a room goes by on a map (selection, `data-node`, the laid-out graph's ids): its
    /// id, or `?N` (its index in the view) for an unknown room, which has no id.
    pub fn room_key(&self, i: usize) -> String {
        match self.rooms.get(i).and_then(|r| r.id.as_ref()) {
            Some(id) => id.to_string(),
            None => format!("?{i}"),
        }
    }

    /// The index of the room that [`PlayerView::room_key`] called `key`.
    pub fn room_index(&self, key: &str) -> Option<usize> {
        self.rooms
            .iter()
            .position(|r| r.id.as_ref().is_some_and(|id| id.as_str() == key))
            .or_else(|| {
                let i: usize = key.strip_prefix('?')?.parse().ok()?;
                self.rooms.get(i).filter(|r| r.id.is_none()).map(|_| i)
            })
    }

    /// The view's rooms and passages as a zone of their own, for [`crate::layout::layout`]:
    /// node `i` is `rooms[i]` (id from [`PlayerView::room_key`], placeholder kind
    /// `exploration` for an unknown room) and passage `j` is `passages[j]` (`file_index`
    /// `j`), with no locks and no content. Only its shape is meant to be used, so rooms the
    /// view leaves out leave no trace on a map laid out from it: the layout hints are the
    /// view's, renumbered by rank among the view's own rooms (the order kept), so a room left
    /// out leaves no empty row or column where it stood.
    pub fn graph(&self) -> Zone {
        let rank = |values: Vec<i32>| {
            let mut values = values;
            crate::text::sort_dedup(&mut values);
            move |v: i32| {
                values
                    .binary_search(&v)
                    .ok()
                    .and_then(|i| i32::try_from(i).ok())
            }
        };
        let xs = rank(
            self.rooms
                .iter()
                .filter_map(|r| r.pos.map(|p| p.0))
                .collect(),
        );
        let ys = rank(
            self.rooms
                .iter()
                .filter_map(|r| r.pos.map(|p| p.1))
                .collect(),
        );
        let nodes = self
            .rooms
            .iter()
            .enumerate()
            .map(|(i, r)| NodeFile {
                node_id: self.room_key(i),
                kind: r.kind.unwrap_or(NodeKind::Exploration),
                label: String::new(),
                is_entry: r.is_entry,
                is_boss: r.is_boss,
                region_id: String::new(),
                pos_x: r.pos.and_then(|p| xs(p.0)),
                pos_y: r.pos.and_then(|p| ys(p.1)),
                content: Default::default(),
            })
            .collect();
        let edges = self
            .passages
            .iter()
            .map(|p| EdgeFile {
                from_node: self.room_key(p.from),
                to_node: self.room_key(p.to),
                lock_kind: LockKind::None,
                lock_data: Default::default(),
                hint: String::new(),
                weight: 1,
            })
            .collect();
        let file = ZoneFile {
            schema: None,
            format: crate::format::FORMAT_VERSION,
            zone_id: self.zone_id.clone(),
            name: self.zone_name.clone(),
            tier: self.tier,
            min_level: 1,
            max_level: 1,
            regions: Vec::new(),
            // A zone with loops lays out the same; the flag only matters to validation.
            allow_loops: true,
            nodes: Some(nodes),
            edges: Some(edges),
            room_kinds: None,
            keys: Default::default(),
            harvests: Default::default(),
        };
        crate::zone::build_shape(&file).0
    }
}

/// A region as the player may know it.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RegionView {
    pub region_id: String,
    pub name: String,
}

/// A room on the player's map.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RoomView {
    /// `None` for an unknown room.
    pub id: Option<NodeId>,
    /// `None` for an unknown room ("something").
    pub label: Option<String>,
    /// `None` for an unknown room.
    pub kind: Option<NodeKind>,
    /// `""` in a single-region zone, and for an unknown room.
    pub region_id: String,
    pub is_entry: bool,
    pub is_boss: bool,
    /// The designer's layout hint `(pos_x, pos_y)`: column and row.
    pub pos: Option<(i32, i32)>,
    /// Position in the visited path (1-based), when the run reached the room.
    pub visit: Option<usize>,
    pub current: bool,
    /// Its menu number when the pending fork names it as an option.
    pub option: Option<usize>,
}

/// A passage on the player's map: its lock kind and hint, never the lock's data.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PassageView {
    /// Indices into [`PlayerView::rooms`].
    pub from: usize,
    pub to: usize,
    pub lock: LockKind,
    pub hint: String,
    /// The run walked it.
    pub walked: bool,
    /// Its menu number at the pending fork, when the menu names where it leads.
    pub option: Option<usize>,
}

/// The player view of `run` through `zone` for its `character`.
pub fn player_view(zone: &Zone, run: &Run, character: &Character) -> PlayerView {
    let k = knowledge(zone, run);
    let status = status(zone, run, character);
    let mut visit_of = std::collections::BTreeMap::new();
    for (i, id) in run.visited_nodes.iter().enumerate() {
        visit_of.entry(id.as_str()).or_insert(i + 1);
    }
    let mut walked = BTreeSet::new();
    for pair in run.visited_nodes.windows(2) {
        walked.insert((pair[0].as_str(), pair[1].as_str()));
    }
    let option_of = |id: &NodeId| {
        status
            .exits
            .iter()
            .find(|x| x.to_node.as_ref() == Some(id))
            .map(|x| x.number)
            .filter(|_| run.pending_fork.is_some())
    };
    let mut index_of = vec![None; zone.graph.node_count()];
    let mut rooms = Vec::new();
    let mut regions_seen = BTreeSet::new();
    for ix in zone.graph.node_indices() {
        let n = zone.node(ix);
        let here = k.get(ix.index()).copied().unwrap_or(Knowledge::Hidden);
        if here == Knowledge::Hidden {
            continue;
        }
        index_of[ix.index()] = Some(rooms.len());
        let known = here == Knowledge::Known;
        if known && !n.region_id.is_empty() {
            regions_seen.insert(n.region_id.clone());
        }
        rooms.push(RoomView {
            id: known.then(|| n.id.clone()),
            label: known.then(|| narration::room_label(n).to_string()),
            kind: known.then_some(n.kind),
            region_id: if known {
                n.region_id.clone()
            } else {
                String::new()
            },
            is_entry: known && n.is_entry,
            is_boss: known && n.is_boss,
            pos: n.pos,
            visit: visit_of.get(n.id.as_str()).copied(),
            current: n.id == run.current_node,
            option: if known { option_of(&n.id) } else { None },
        });
    }
    let passages = zone
        .graph
        .edge_indices()
        .filter_map(|e| {
            let (a, b) = (zone.source(e), zone.target(e));
            let (from, to) = (index_of[a.index()]?, index_of[b.index()]?);
            let edge = &zone.graph[e];
            let (fa, tb) = (zone.node(a), zone.node(b));
            let at_fork = run.pending_fork.as_ref().is_some_and(|f| f.at == fa.id);
            Some(PassageView {
                from,
                to,
                lock: edge.lock.kind(),
                hint: edge.hint.clone(),
                walked: walked.contains(&(fa.id.as_str(), tb.id.as_str())),
                option: if at_fork { option_of(&tb.id) } else { None },
            })
        })
        .collect();
    let regions = zone
        .regions
        .iter()
        .filter(|r| regions_seen.contains(&r.id))
        .map(|r| RegionView {
            region_id: r.id.clone(),
            name: r.name.clone(),
        })
        .collect();
    PlayerView {
        zone_id: zone.id.clone(),
        zone_name: zone.name.clone(),
        tier: zone.tier,
        regions,
        rooms,
        passages,
        status,
    }
}

/// What players read for `keys`, in order; two keys that read the same are told apart by
/// their ids ("Skull Key (skull key), Skull Key (skull_key)").
fn key_names(zone: &Zone, keys: &BTreeSet<String>) -> Vec<String> {
    let names: Vec<String> = keys.iter().map(|k| zone.key_name(k)).collect();
    names
        .iter()
        .zip(keys)
        .map(|(name, id)| {
            if names.iter().filter(|n| *n == name).count() > 1 {
                format!("{name} ({id})")
            } else {
                name.clone()
            }
        })
        .collect()
}
