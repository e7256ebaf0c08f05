//! The domain model: a zone as a petgraph directed graph of rooms and passages.
//!
//! [`build`] turns a [`ZoneFile`] into a [`Zone`] and reports the structural findings that
//! stop an element from entering the graph (`duplicate_node`, `unknown_node`,
//! `bad_lock_data`, `no_nodes`). The graph it returns is always sound — every edge joins two
//! nodes that exist — even when the zone is not valid; semantic checks live in
//! [`crate::validate`].

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Mutex, OnceLock};

use petgraph::Direction;
use petgraph::graph::{DiGraph, EdgeIndex, NodeIndex};
use serde::{Deserialize, Serialize};

use crate::diagnostic::{Code, Diagnostic};
use crate::format::{ContentFile, EdgeFile, LockKind, NodeFile, NodeKind, RegionFile, ZoneFile};

/// A room's globally unique id (`crypt_valdris.side_chapel`).
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct NodeId(pub String);

impl NodeId {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for NodeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<&str> for NodeId {
    fn from(s: &str) -> Self {
        NodeId(s.to_string())
    }
}

/// One of the six abilities. Parsed case-insensitively from `str`/`dex`/….
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Ability {
    Str,
    Dex,
    Con,
    Int,
    Wis,
    Cha,
}

impl Ability {
    pub const ALL: [Ability; 6] = [
        Ability::Str,
        Ability::Dex,
        Ability::Con,
        Ability::Int,
        Ability::Wis,
        Ability::Cha,
    ];

    /// Case-insensitive, trimmed: `"STR"`, `" wis "`.
    pub fn parse(s: &str) -> Option<Ability> {
        match s.trim().to_ascii_lowercase().as_str() {
            "str" => Some(Ability::Str),
            "dex" => Some(Ability::Dex),
            "con" => Some(Ability::Con),
            "int" => Some(Ability::Int),
            "wis" => Some(Ability::Wis),
            "cha" => Some(Ability::Cha),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Ability::Str => "str",
            Ability::Dex => "dex",
            Ability::Con => "con",
            Ability::Int => "int",
            Ability::Wis => "wis",
            Ability::Cha => "cha",
        }
    }

    /// "Strength", "Wisdom", … for player-facing text.
    pub fn name(self) -> &'static str {
        match self {
            Ability::Str => "Strength",
            Ability::Dex => "Dexterity",
            Ability::Con => "Constitution",
            Ability::Int => "Intelligence",
            Ability::Wis => "Wisdom",
            Ability::Cha => "Charisma",
        }
    }

    /// Position in a `[str, dex, con, int, wis, cha]` score array.
    pub fn index(self) -> usize {
        self as usize
    }
}

/// Smallest and largest DC a lock may have.
pub const DC_RANGE: std::ops::RangeInclusive<u32> = 1..=30;

/// A passage's lock with its data, parsed and typed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Lock {
    None,
    /// d20 + WIS modifier ≥ dc.
    PerceptionCheck {
        dc: u32,
    },
    /// Key id, normalised (trimmed, lowercase).
    KeyRequired {
        key_id: String,
    },
    LevelMin {
        min_level: u32,
    },
    RegionClear {
        region_id: String,
    },
    /// d20 + the ability's modifier ≥ dc.
    StatCheck {
        ability: Ability,
        dc: u32,
    },
    /// The lock data was unusable (reported as `bad_lock_data`); it never opens.
    Invalid {
        lock_kind: LockKind,
    },
}

impl Lock {
    pub fn kind(&self) -> LockKind {
        match self {
            Lock::None => LockKind::None,
            Lock::PerceptionCheck { .. } => LockKind::PerceptionCheck,
            Lock::KeyRequired { .. } => LockKind::KeyRequired,
            Lock::LevelMin { .. } => LockKind::LevelMin,
            Lock::RegionClear { .. } => LockKind::RegionClear,
            Lock::StatCheck { .. } => LockKind::StatCheck,
            Lock::Invalid { lock_kind } => *lock_kind,
        }
    }

    pub fn is_locked(&self) -> bool {
        !matches!(self, Lock::None)
    }
}

/// Normalises a key id for comparison: trimmed, ASCII letters lowercased (ids are names like
/// `skull_key`; ASCII-only case folding keeps the Unicode case tables out of the wasm builds).
pub fn normalize_key(key: &str) -> String {
    key.trim().to_ascii_lowercase()
}

/// A file's table of names, keyed as the zone looks them up; a blank name is left out (the
/// id's words stand in).
fn names(table: &BTreeMap<String, String>, key: fn(&str) -> String) -> BTreeMap<String, String> {
    // Inserted one by one: collecting into a map sorts first, and that sort alone is 4 KB of
    // the run page's wasm.
    let mut out = BTreeMap::new();
    for (id, name) in table {
        if !name.trim().is_empty() {
            out.insert(key(id), name.trim().to_string());
        }
    }
    out
}

/// `names[id]`, else the id's words capitalised: `tidewarden_sigil` reads "Tidewarden
/// Sigil".
fn display_name(names: &BTreeMap<String, String>, id: &str) -> String {
    if let Some(name) = names.get(id) {
        return name.clone();
    }
    let mut out = String::with_capacity(id.len());
    for word in id.split(['_', '-', ' ']).filter(|w| !w.is_empty()) {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(&crate::text::capitalise(word));
    }
    if out.is_empty() { id.to_string() } else { out }
}

/// Per-room payload.
#[derive(Clone, Debug, PartialEq, Default, Serialize)]
pub struct Content {
    pub encounter_override: String,
    pub harvest_ref: String,
    pub loot_bias: f64,
    pub narration: String,
    pub allow_self_loop: bool,
    /// Normalised key id (trimmed, lowercase).
    pub grants_key: Option<String>,
    /// The designer's data, untouched (see [`crate::format::ContentFile::extra`]).
    pub extra: Option<serde_json::Map<String, serde_json::Value>>,
}

/// A room.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Node {
    pub id: NodeId,
    pub kind: NodeKind,
    pub label: String,
    pub is_entry: bool,
    pub is_boss: bool,
    pub region_id: String,
    /// Layout hint `(pos_x, pos_y)`, when the file gives both.
    pub pos: Option<(i32, i32)>,
    pub content: Content,
}

impl Node {
    /// The label, or the node id when the label is empty.
    pub fn display_label(&self) -> &str {
        if self.label.trim().is_empty() {
            self.id.as_str()
        } else {
            &self.label
        }
    }
}

/// A passage.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Edge {
    pub lock: Lock,
    pub hint: String,
    pub weight: i32,
    /// Index of this edge in the file's `edges` array (for messages and round-trips).
    pub file_index: usize,
}

/// A region of a multi-region zone.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Region {
    pub id: String,
    pub name: String,
    pub order: u32,
}

/// A zone: metadata plus its graph. Node indices follow the file's order.
#[derive(Clone, Debug)]
pub struct Zone {
    pub id: String,
    pub name: String,
    pub tier: u8,
    pub min_level: u32,
    pub max_level: u32,
    pub regions: Vec<Region>,
    pub allow_loops: bool,
    /// Whether the zone was given as a legacy `room_kinds` list.
    pub legacy: bool,
    /// Players' names of keys, by normalised key id (the file's `keys`).
    pub key_names: BTreeMap<String, String>,
    /// Players' names of harvests, by `harvest_ref` (the file's `harvests`).
    pub harvest_names: BTreeMap<String, String>,
    pub graph: DiGraph<Node, Edge>,
    index: BTreeMap<NodeId, NodeIndex>,
    /// What runs ask of the zone again and again, worked out once ([`Figures`]).
    pub(crate) figures: Figures,
}

/// What every step of every run asks of a zone again, worked out once per zone (by
/// [`crate::paths`]): its topological order, its secret rooms, and the "Room X of Y" total of
/// each set of secrets a player's map shows. A run's step then costs the rooms it passes, not
/// the zone's size (a review replays thousands of runs). Computed on first use; a [`Zone`] is
/// not changed after [`build`], so what is kept stays true. A clone starts empty.
#[derive(Default)]
pub struct Figures {
    pub(crate) topo: OnceLock<Option<Vec<NodeIndex>>>,
    pub(crate) secrets: OnceLock<Vec<NodeIndex>>,
    /// (secret rooms on the map, in index order; the total): the most recent last.
    pub(crate) totals: Mutex<Vec<(Vec<NodeIndex>, Option<usize>)>>,
}

impl Clone for Figures {
    fn clone(&self) -> Figures {
        Figures::default()
    }
}

impl std::fmt::Debug for Figures {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Figures")
    }
}

impl Zone {
    /// What players read for key `key_id`: its name in the file, else its words.
    pub fn key_name(&self, key_id: &str) -> String {
        display_name(&self.key_names, &normalize_key(key_id))
    }

    /// What players read for harvest `harvest_ref`: its name in the file, else its words.
    pub fn harvest_name(&self, harvest_ref: &str) -> String {
        display_name(&self.harvest_names, harvest_ref.trim())
    }

    /// Looks a room up by id.
    pub fn node_index(&self, id: &str) -> Option<NodeIndex> {
        self.index.get(&NodeId(id.to_string())).copied()
    }

    pub fn node(&self, ix: NodeIndex) -> &Node {
        &self.graph[ix]
    }

    /// Looks a room up by id.
    pub fn node_by_id(&self, id: &str) -> Option<&Node> {
        self.node_index(id).map(|ix| &self.graph[ix])
    }

    /// All node indices in file order.
    pub fn node_indices(&self) -> impl Iterator<Item = NodeIndex> + '_ {
        self.graph.node_indices()
    }

    /// Nodes flagged `is_entry`, in file order.
    pub fn entries(&self) -> Vec<NodeIndex> {
        self.graph
            .node_indices()
            .filter(|&i| self.graph[i].is_entry)
            .collect()
    }

    /// Nodes flagged `is_boss`, in file order.
    pub fn bosses(&self) -> Vec<NodeIndex> {
        self.graph
            .node_indices()
            .filter(|&i| self.graph[i].is_boss)
            .collect()
    }

    /// The entry, when there is exactly one.
    pub fn entry(&self) -> Option<NodeIndex> {
        match self.entries().as_slice() {
            [one] => Some(*one),
            _ => None,
        }
    }

    /// The boss, when there is exactly one.
    pub fn boss(&self) -> Option<NodeIndex> {
        match self.bosses().as_slice() {
            [one] => Some(*one),
            _ => None,
        }
    }

    /// Outgoing edges in menu order: weight ascending, then `to_node` ascending.
    pub fn exits(&self, from: NodeIndex) -> Vec<EdgeIndex> {
        let mut out: Vec<EdgeIndex> = self
            .graph
            .edges_directed(from, Direction::Outgoing)
            .map(|e| petgraph::visit::EdgeRef::id(&e))
            .collect();
        crate::text::sort_by(&mut out, |&a, &b| {
            let (ea, eb) = (&self.graph[a], &self.graph[b]);
            let ta = &self.graph[self.target(a)].id;
            let tb = &self.graph[self.target(b)].id;
            (ea.weight, ta, ea.file_index).cmp(&(eb.weight, tb, eb.file_index))
        });
        out
    }

    /// Incoming edges, in file order.
    pub fn entrances(&self, to: NodeIndex) -> Vec<EdgeIndex> {
        let mut out: Vec<EdgeIndex> = self
            .graph
            .edges_directed(to, Direction::Incoming)
            .map(|e| petgraph::visit::EdgeRef::id(&e))
            .collect();
        crate::text::sort_by_key(&mut out, |&e| self.graph[e].file_index);
        out
    }

    pub fn source(&self, e: EdgeIndex) -> NodeIndex {
        self.graph
            .edge_endpoints(e)
            .map(|(a, _)| a)
            .expect("edge index comes from this graph")
    }

    pub fn target(&self, e: EdgeIndex) -> NodeIndex {
        self.graph
            .edge_endpoints(e)
            .map(|(_, b)| b)
            .expect("edge index comes from this graph")
    }

    /// The region's display name, or its id when unknown.
    pub fn region_name<'a>(&'a self, region_id: &'a str) -> &'a str {
        self.regions
            .iter()
            .find(|r| r.id == region_id)
            .map(|r| r.name.as_str())
            .unwrap_or(region_id)
    }

    /// Converts back to the file format (canonical: nodes and edges, even for a legacy zone).
    pub fn to_file(&self) -> ZoneFile {
        let nodes = self
            .graph
            .node_indices()
            .map(|i| {
                let n = &self.graph[i];
                NodeFile {
                    node_id: n.id.0.clone(),
                    kind: n.kind,
                    label: n.label.clone(),
                    is_entry: n.is_entry,
                    is_boss: n.is_boss,
                    region_id: n.region_id.clone(),
                    pos_x: n.pos.map(|p| p.0),
                    pos_y: n.pos.map(|p| p.1),
                    content: ContentFile {
                        encounter_override: n.content.encounter_override.clone(),
                        harvest_ref: n.content.harvest_ref.clone(),
                        loot_bias: n.content.loot_bias,
                        narration: n.content.narration.clone(),
                        allow_self_loop: n.content.allow_self_loop,
                        grants_key: n.content.grants_key.clone(),
                        extra: n.content.extra.clone(),
                    },
                }
            })
            .collect();
        let mut edges: Vec<_> = self.graph.edge_indices().collect();
        crate::text::sort_by_key(&mut edges, |&e| self.graph[e].file_index);
        let edges = edges
            .into_iter()
            .map(|e| {
                let edge = &self.graph[e];
                EdgeFile {
                    from_node: self.graph[self.source(e)].id.0.clone(),
                    to_node: self.graph[self.target(e)].id.0.clone(),
                    lock_kind: edge.lock.kind(),
                    lock_data: lock_data(&edge.lock),
                    hint: edge.hint.clone(),
                    weight: edge.weight,
                }
            })
            .collect();
        ZoneFile {
            schema: None,
            format: crate::format::FORMAT_VERSION,
            zone_id: self.id.clone(),
            name: self.name.clone(),
            tier: self.tier,
            min_level: self.min_level,
            max_level: self.max_level,
            regions: self
                .regions
                .iter()
                .map(|r| RegionFile {
                    region_id: r.id.clone(),
                    name: r.name.clone(),
                    order: r.order,
                })
                .collect(),
            allow_loops: self.allow_loops,
            nodes: Some(nodes),
            edges: Some(edges),
            keys: self.key_names.clone(),
            harvests: self.harvest_names.clone(),
            room_kinds: None,
        }
    }
}

/// The `lock_data` object of a typed lock (empty for `none` and invalid locks).
pub fn lock_data(lock: &Lock) -> BTreeMap<String, serde_json::Value> {
    let mut m = BTreeMap::new();
    match lock {
        Lock::None | Lock::Invalid { .. } => {}
        Lock::PerceptionCheck { dc } => {
            m.insert("dc".into(), (*dc).into());
        }
        Lock::KeyRequired { key_id } => {
            m.insert("key_id".into(), key_id.clone().into());
        }
        Lock::LevelMin { min_level } => {
            m.insert("min_level".into(), (*min_level).into());
        }
        Lock::RegionClear { region_id } => {
            m.insert("region_id".into(), region_id.clone().into());
        }
        Lock::StatCheck { ability, dc } => {
            m.insert("stat".into(), ability.as_str().into());
            m.insert("dc".into(), (*dc).into());
        }
    }
    m
}

/// Builds the graph of a zone file, with the structural findings. Never panics.
pub fn build(file: &ZoneFile) -> (Zone, Vec<Diagnostic>) {
    let (mut zone, diags) = build_shape(file);
    zone.key_names = names(&file.keys, normalize_key);
    zone.harvest_names = names(&file.harvests, |h| h.trim().to_string());
    (zone, diags)
}

/// [`build`] without the names of keys and harvests (players' words): the shape alone, what a
/// drawing needs (the run page's map lays out a player view this way and carries no more).
pub fn build_shape(file: &ZoneFile) -> (Zone, Vec<Diagnostic>) {
    let mut diags = Vec::new();
    let (nodes, edges, legacy) = match &file.room_kinds {
        Some(kinds) => {
            let (n, e) = compile_linear(&file.zone_id, kinds);
            (n, e, true)
        }
        None => (
            file.nodes.clone().unwrap_or_default(),
            file.edges.clone().unwrap_or_default(),
            false,
        ),
    };

    let mut graph: DiGraph<Node, Edge> = DiGraph::with_capacity(nodes.len(), edges.len());
    let mut index = BTreeMap::new();
    if nodes.is_empty() {
        diags.push(Diagnostic::new(
            Code::NoNodes,
            format!("zone {} has no rooms", file.zone_id),
        ));
    }
    for n in nodes {
        let id = NodeId(n.node_id.clone());
        if index.contains_key(&id) {
            diags.push(
                Diagnostic::new(
                    Code::DuplicateNode,
                    format!("room id {} is used more than once; ids must be unique", id),
                )
                .at_node(id.0.clone()),
            );
            continue;
        }
        let ix = graph.add_node(Node {
            id: id.clone(),
            kind: n.kind,
            label: n.label,
            is_entry: n.is_entry,
            is_boss: n.is_boss,
            region_id: n.region_id,
            pos: match (n.pos_x, n.pos_y) {
                (Some(x), Some(y)) => Some((x, y)),
                (Some(x), None) => Some((x, 0)),
                (None, Some(y)) => Some((0, y)),
                (None, None) => None,
            },
            content: Content {
                encounter_override: n.content.encounter_override,
                harvest_ref: n.content.harvest_ref,
                loot_bias: n.content.loot_bias,
                narration: n.content.narration,
                allow_self_loop: n.content.allow_self_loop,
                grants_key: n
                    .content
                    .grants_key
                    .map(|k| normalize_key(&k))
                    .filter(|k| !k.is_empty()),
                extra: n.content.extra,
            },
        });
        index.insert(id, ix);
    }

    for (i, e) in edges.into_iter().enumerate() {
        let from = index.get(&NodeId(e.from_node.clone())).copied();
        let to = index.get(&NodeId(e.to_node.clone())).copied();
        let mut missing = Vec::new();
        if from.is_none() {
            missing.push(format!("from_node {}", e.from_node));
        }
        if to.is_none() {
            missing.push(format!("to_node {}", e.to_node));
        }
        let (Some(from), Some(to)) = (from, to) else {
            diags.push(
                Diagnostic::new(
                    Code::UnknownNode,
                    format!(
                        "edges[{i}] names a room that does not exist: {}",
                        missing.join(", ")
                    ),
                )
                .at_edge(e.from_node.clone(), e.to_node.clone()),
            );
            continue;
        };
        let lock = match parse_lock(e.lock_kind, &e.lock_data) {
            Ok(lock) => lock,
            Err(msg) => {
                diags.push(
                    Diagnostic::new(Code::BadLockData, format!("edges[{i}] {msg}"))
                        .at_edge(e.from_node.clone(), e.to_node.clone()),
                );
                Lock::Invalid {
                    lock_kind: e.lock_kind,
                }
            }
        };
        graph.add_edge(
            from,
            to,
            Edge {
                lock,
                hint: e.hint,
                weight: e.weight,
                file_index: i,
            },
        );
    }

    let zone = Zone {
        id: file.zone_id.clone(),
        name: file.name.clone(),
        tier: file.tier,
        min_level: file.min_level,
        max_level: file.max_level,
        regions: file
            .regions
            .iter()
            .map(|r| Region {
                id: r.region_id.clone(),
                name: r.name.clone(),
                order: r.order,
            })
            .collect(),
        allow_loops: file.allow_loops,
        legacy,
        key_names: BTreeMap::new(),
        harvest_names: BTreeMap::new(),
        graph,
        index,
        figures: Figures::default(),
    };
    (zone, diags)
}

/// Legacy linear zones, compiled into the chain they always were: ids `<zone>.r1`…`.rN` (the
/// ids a legacy run's room index maps to), first room forced to entry, last to boss, `pos_x` =
/// index, unconditional edges.
fn compile_linear(zone_id: &str, kinds: &[NodeKind]) -> (Vec<NodeFile>, Vec<EdgeFile>) {
    let n = kinds.len();
    let nodes: Vec<NodeFile> = kinds
        .iter()
        .enumerate()
        .map(|(i, &k)| {
            let kind = if i == 0 {
                NodeKind::Entry
            } else if i + 1 == n {
                NodeKind::Boss
            } else {
                k
            };
            NodeFile {
                node_id: legacy_node_id(zone_id, i),
                kind,
                label: String::new(),
                is_entry: i == 0,
                is_boss: i + 1 == n && n > 1,
                region_id: String::new(),
                pos_x: Some(i32::try_from(i).unwrap_or(i32::MAX)),
                pos_y: Some(0),
                content: ContentFile::default(),
            }
        })
        .collect();
    let edges = (1..n)
        .map(|i| EdgeFile {
            from_node: legacy_node_id(zone_id, i - 1),
            to_node: legacy_node_id(zone_id, i),
            lock_kind: LockKind::None,
            lock_data: BTreeMap::new(),
            hint: String::new(),
            weight: 1,
        })
        .collect();
    (nodes, edges)
}

/// The id of room `index` (0-based) of a legacy linear zone: `<zone>.r<index+1>`.
pub fn legacy_node_id(zone_id: &str, index: usize) -> String {
    format!("{zone_id}.r{}", index + 1)
}

/// Parses and types a lock's data; the error says which field is wrong and how.
pub fn parse_lock(
    kind: LockKind,
    data: &BTreeMap<String, serde_json::Value>,
) -> Result<Lock, String> {
    let expected: &[&str] = match kind {
        LockKind::None => &[],
        LockKind::PerceptionCheck => &["dc"],
        LockKind::KeyRequired => &["key_id"],
        LockKind::LevelMin => &["min_level"],
        LockKind::RegionClear => &["region_id"],
        LockKind::StatCheck => &["stat", "dc"],
    };
    if let Some(extra) = data.keys().find(|k| !expected.contains(&k.as_str())) {
        return Err(format!(
            "lock {} does not take lock_data.{extra} (expected {})",
            kind.as_str(),
            if expected.is_empty() {
                "no lock_data".to_string()
            } else {
                expected.join(", ")
            }
        ));
    }
    let field = |name: &str| {
        data.get(name)
            .ok_or_else(|| format!("lock {} needs lock_data.{name}", kind.as_str()))
    };
    let dc = || -> Result<u32, String> {
        let v = field("dc")?;
        let dc = v
            .as_u64()
            .ok_or_else(|| format!("lock_data.dc must be a whole number, got {v}"))?;
        u32::try_from(dc)
            .ok()
            .filter(|d| DC_RANGE.contains(d))
            .ok_or_else(|| {
                format!(
                    "lock_data.dc {dc} is outside {}..={}",
                    DC_RANGE.start(),
                    DC_RANGE.end()
                )
            })
    };
    let text = |name: &str| -> Result<String, String> {
        let v = field(name)?;
        v.as_str()
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .ok_or_else(|| format!("lock_data.{name} must be a non-empty string, got {v}"))
    };
    Ok(match kind {
        LockKind::None => Lock::None,
        LockKind::PerceptionCheck => Lock::PerceptionCheck { dc: dc()? },
        LockKind::KeyRequired => Lock::KeyRequired {
            key_id: normalize_key(&text("key_id")?),
        },
        LockKind::LevelMin => {
            let v = field("min_level")?;
            let level = v
                .as_u64()
                .and_then(|l| u32::try_from(l).ok())
                .filter(|&l| l >= 1)
                .ok_or_else(|| {
                    format!("lock_data.min_level must be a whole number of at least 1, got {v}")
                })?;
            Lock::LevelMin { min_level: level }
        }
        LockKind::RegionClear => Lock::RegionClear {
            region_id: text("region_id")?,
        },
        LockKind::StatCheck => {
            let stat = text("stat")?;
            let ability = Ability::parse(&stat).ok_or_else(|| {
                format!("lock_data.stat {stat:?} is not one of str, dex, con, int, wis, cha")
            })?;
            Lock::StatCheck { ability, dc: dc()? }
        }
    })
}

/// Parses zone text and builds it: the file-level error, or the zone with its structural
/// findings.
pub fn load(text: &str) -> Result<(Zone, Vec<Diagnostic>), crate::format::ParseError> {
    let file = crate::format::parse(text)?;
    Ok(build(&file))
}
