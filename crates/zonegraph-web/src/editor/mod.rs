//! The zone editor's model: a zone file being edited, every change an [`Edit`] that
//! [`Editor::apply`] makes or refuses whole, with undo and redo of each. Pure (no browser):
//! tested natively; the designer page draws it and turns pointer and keyboard actions into
//! edits. Checking is the core's (`zone::build`, `validate::check_zone`), on the file as it
//! stands after every edit; the file written out is the core's canonical form
//! (`format::to_pretty_json`), as `zones/*.json` are. What the editor page's controls decide
//! without a browser is here too: where "Add room" puts a room, what deleting the selection
//! takes, a new region, a lock's form fields, room lists, the findings' count, publishing's
//! URL and answer.
//!
//! Beside the edits: `ids` (which ids are allowed, proposed ids), `form` (what the page's
//! forms and lists show) and `publish` (the server's URLs, the plan and its answers in words).

mod form;
mod ids;
mod publish;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;

use zonegraph_core::diagnostic::{self, Diagnostic};
use zonegraph_core::format::{self, EdgeFile, LockKind, NodeFile, NodeKind, RegionFile, ZoneFile};
use zonegraph_core::validate;
use zonegraph_core::zone;

pub use form::{
    findings_words, form_decimal, form_number, lock_data_caption, lock_fields, room_names,
};
pub use ids::{copy_edit, id_follows_name, propose_zone_id, room_id_problem, zone_id_problem};
pub use publish::{
    PublishPlan, figure_lines, impact_lines, plan_words, publish_plan, publish_url, publish_words,
    review_lines, review_url, served_list, served_version, unpublish_words, zone_url,
};

/// Most edits kept for undo (each keeps the file as it was).
pub const UNDO_LIMIT: usize = 200;

/// One change to the zone file.
#[derive(Clone, Debug, PartialEq)]
pub enum Edit {
    /// Adds a room (its id must be new).
    AddRoom(NodeFile),
    /// Places room `id` at a position hint (`pos_x`, `pos_y`).
    MoveRoom { id: String, x: i32, y: i32 },
    /// Moves rooms `ids` (a multi-selection) by `dx` columns and `dy` rows, as one edit; a
    /// room without a position hint starts from (0, 0).
    MoveRooms { ids: Vec<String>, dx: i32, dy: i32 },
    /// Replaces room `id`'s fields: label, kind, region, entry and boss flags, content,
    /// position. The id stays (passages name it).
    SetRoom { id: String, room: NodeFile },
    /// Removes room `id` and every passage into or out of it.
    DeleteRoom { id: String },
    /// Removes rooms `ids` (a multi-selection) and every passage into or out of any of
    /// them, as one edit (one undo restores them all); refused whole if one is missing.
    DeleteRooms { ids: Vec<String> },
    /// Adds a passage between two rooms that exist.
    Connect(EdgeFile),
    /// Replaces passage `index` (its lock kind and data, hint, weight, ends).
    SetPassage { index: usize, edge: EdgeFile },
    /// Removes passage `index`.
    DeletePassage { index: usize },
    /// Sets the zone's id, name, tier, level range and whether loops are allowed. A new
    /// zone id must be a valid one ([`zone_id_problem`]); rooms named `<old id>.<suffix>`
    /// become `<new id>.<suffix>` (their passages follow), as one edit.
    SetMeta {
        zone_id: String,
        name: String,
        tier: u8,
        min_level: u32,
        max_level: u32,
        allow_loops: bool,
    },
    /// Renames room `from` to `to`: every passage end follows, as one edit. Refused when
    /// `to` is taken or not a valid room id ([`room_id_problem`]).
    RenameRoom { from: String, to: String },
    /// Replaces the zone's regions (rooms keep their `region_id`; the core's checks say
    /// which name no region).
    SetRegions(Vec<RegionFile>),
}

/// Why an edit was refused (the file is unchanged).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refused {
    /// No room with this id.
    NoRoom(String),
    /// A room with this id exists already.
    DuplicateRoom(String),
    /// No passage with this index.
    NoPassage(usize),
    /// The zone is given as a legacy `room_kinds` list: it has no rooms to edit yet.
    Legacy,
    /// Not a valid id: the id and why.
    BadId(String, String),
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refused::NoRoom(id) => write!(f, "there is no room {id:?}"),
            Refused::DuplicateRoom(id) => write!(f, "a room {id:?} exists already"),
            Refused::NoPassage(i) => write!(f, "there is no passage {i}"),
            Refused::Legacy => f.write_str("a room_kinds zone has no rooms to edit"),
            Refused::BadId(id, why) => write!(f, "{id:?} is not a valid id: {why}"),
        }
    }
}

/// A zone file under edit, with its undo and redo stacks.
#[derive(Clone, Debug, PartialEq)]
pub struct Editor {
    file: ZoneFile,
    undo: Vec<ZoneFile>,
    redo: Vec<ZoneFile>,
}

impl Editor {
    /// Edits `file`. A legacy `room_kinds` zone is refused every edit until opened as its
    /// compiled graph.
    pub fn new(file: ZoneFile) -> Editor {
        Editor {
            file,
            undo: Vec::new(),
            redo: Vec::new(),
        }
    }

    /// Edits `file` as the editor opens every zone: a legacy `room_kinds` zone as its
    /// compiled graph (rooms `<zone_id>.r1`…, ready to branch), any other as it is; when
    /// some room has no position hint, every room gets the cell the map draws it in (so
    /// moving one room moves only that room).
    pub fn open(file: ZoneFile) -> Editor {
        let mut file = if file.room_kinds.is_some() {
            let (zone, _) = zone::build(&file);
            let mut compiled = zone.to_file();
            compiled.schema = file.schema;
            compiled
        } else {
            file
        };
        let unhinted = rooms(&file)
            .iter()
            .any(|n| n.pos_x.is_none() || n.pos_y.is_none());
        if unhinted {
            let (zone, _) = zone::build(&file);
            // The layout's rooms come in file order (a room the build left out has none):
            // walked beside the file's, no map to build (a map collected is a sort, KBs of
            // wasm).
            let mut cells = zonegraph_core::layout::layout(&zone)
                .nodes
                .into_iter()
                .peekable();
            for n in file.nodes.iter_mut().flatten() {
                if let Some(c) = cells.next_if(|c| c.id == n.node_id) {
                    n.pos_x = Some(i32::try_from(c.col).unwrap_or(i32::MAX));
                    n.pos_y = Some(i32::try_from(c.row).unwrap_or(i32::MAX));
                }
            }
        }
        Editor::new(file)
    }

    /// Opens zone JSON text (a file, a paste, a share link), or says why it is not a zone.
    pub fn open_text(text: &str) -> Result<Editor, String> {
        format::parse(text)
            .map(Editor::open)
            .map_err(|e| e.to_string())
    }

    /// A new zone `zone_id` with only its entry room.
    pub fn empty(zone_id: &str, name: &str) -> Editor {
        let entry = room(&format!("{zone_id}.entry"), NodeKind::Entry, "Entry", 0, 0);
        Editor::new(ZoneFile {
            schema: None,
            format: 1,
            zone_id: zone_id.to_string(),
            name: name.to_string(),
            tier: 1,
            min_level: 1,
            max_level: 5,
            regions: Vec::new(),
            allow_loops: false,
            nodes: Some(vec![NodeFile {
                is_entry: true,
                ..entry
            }]),
            edges: Some(Vec::new()),
            room_kinds: None,
            keys: Default::default(),
            harvests: Default::default(),
        })
    }

    /// The file as it stands.
    pub fn file(&self) -> &ZoneFile {
        &self.file
    }

    pub fn can_undo(&self) -> bool {
        !self.undo.is_empty()
    }

    pub fn can_redo(&self) -> bool {
        !self.redo.is_empty()
    }

    /// Makes `edit`, or refuses it whole; a made edit can be undone and clears redo.
    pub fn apply(&mut self, edit: Edit) -> Result<(), Refused> {
        let mut next = self.file.clone();
        change(&mut next, edit)?;
        let before = std::mem::replace(&mut self.file, next);
        self.undo.push(before);
        if self.undo.len() > UNDO_LIMIT {
            self.undo.remove(0);
        }
        self.redo.clear();
        Ok(())
    }

    /// Takes back the last edit; false when there is none.
    pub fn undo(&mut self) -> bool {
        let Some(before) = self.undo.pop() else {
            return false;
        };
        self.redo.push(std::mem::replace(&mut self.file, before));
        true
    }

    /// Makes the last undone edit again; false when there is none.
    pub fn redo(&mut self) -> bool {
        let Some(after) = self.redo.pop() else {
            return false;
        };
        self.undo.push(std::mem::replace(&mut self.file, after));
        true
    }

    /// An id for a new room of `kind` that no room has: `<zone_id>.<kind>_<n>`.
    pub fn new_room_id(&self, kind: NodeKind) -> String {
        let taken = |id: &str| rooms(&self.file).iter().any(|n| n.node_id == id);
        (1..)
            .map(|n| format!("{}.{}_{n}", self.file.zone_id, kind.as_str()))
            .find(|id| !taken(id))
            .unwrap_or_default()
    }

    /// The core's findings on the file as it stands (building the graph, then validation
    /// and lints), sorted as `zonegraph check` sorts them.
    pub fn diagnostics(&self) -> Vec<Diagnostic> {
        let (zone, mut found) = zone::build(&self.file);
        found.extend(validate::check_zone(&zone));
        diagnostic::sort(&mut found);
        found
    }

    /// The file as `zones/*.json` hold it: the core's canonical JSON, ending with a newline.
    pub fn to_json(&self) -> String {
        format::to_pretty_json(&self.file)
    }
}

/// The zone's file name: `<zone_id>.json`, as in `zones/`.
pub fn file_name(file: &ZoneFile) -> String {
    format!("{}.json", file.zone_id)
}

/// A lock's data to start from when a passage is given lock `kind` (the designer then
/// edits it; the core's checks say what is missing).
pub fn default_lock_data(kind: LockKind) -> BTreeMap<String, serde_json::Value> {
    let pairs: &[(&str, serde_json::Value)] = match kind {
        LockKind::None => &[],
        LockKind::PerceptionCheck => &[("dc", serde_json::Value::from(12))],
        LockKind::KeyRequired => &[("key_id", serde_json::Value::from("key"))],
        LockKind::LevelMin => &[("min_level", serde_json::Value::from(2))],
        LockKind::RegionClear => &[("region_id", serde_json::Value::from(""))],
        LockKind::StatCheck => &[
            ("stat", serde_json::Value::from("str")),
            ("dc", serde_json::Value::from(12)),
        ],
    };
    // Inserted one by one: a map collected from an iterator sorts first (KBs of wasm).
    let mut data = BTreeMap::new();
    for (k, v) in pairs {
        data.insert(k.to_string(), v.clone());
    }
    data
}

/// The file a playtest from room `from` plays: the same zone with `from` as its only entry
/// (everything else as it stands), so the bot's words and rolls from there are the zone's.
pub fn playtest_file(file: &ZoneFile, from: &str) -> ZoneFile {
    let mut out = file.clone();
    for n in out.nodes.iter_mut().flatten() {
        n.is_entry = n.node_id == from;
    }
    out
}

/// Whole cells a drag of `px` screen pixels crosses, at map scale `scale`, for cells `cell`
/// drawing pixels apart (rounded to the nearest cell).
pub fn cells_moved(px: f64, scale: f64, cell: f64) -> i32 {
    let step = cell * scale;
    if step <= 0.0 || !px.is_finite() {
        return 0;
    }
    (px / step).round().clamp(-1000.0, 1000.0) as i32
}

/// A room of `kind` labelled `label` at a position hint, with no content.
pub fn room(id: &str, kind: NodeKind, label: &str, x: i32, y: i32) -> NodeFile {
    NodeFile::plain(id, kind, label, x, y)
}

/// An open passage from `from` to `to`.
pub fn passage(from: &str, to: &str) -> EdgeFile {
    EdgeFile::open(from, to)
}

/// Where "Add room" puts a new room: one row below room `near` when there is one, right of
/// what that row holds already; else at the start of a row below every room.
pub fn new_room_place(file: &ZoneFile, near: Option<&str>) -> (i32, i32) {
    let nodes = rooms(file);
    match near.and_then(|id| nodes.iter().find(|n| n.node_id == id)) {
        Some(n) => {
            let y = n.pos_y.unwrap_or(0) + 1;
            let x = nodes
                .iter()
                .filter(|m| m.pos_y == Some(y))
                .filter_map(|m| m.pos_x)
                .max()
                .map_or(n.pos_x.unwrap_or(0), |x| x + 1);
            (x, y)
        }
        None => (
            0,
            nodes.iter().filter_map(|n| n.pos_y).max().unwrap_or(-1) + 1,
        ),
    }
}

/// The edit that deletes the selected rooms `ids` (with their passages), or, when no room
/// is selected, the selected passage; `None` when nothing is.
pub fn delete_edit(ids: Vec<String>, passage: Option<usize>) -> Option<Edit> {
    Some(match (ids.len(), passage) {
        (0, Some(index)) => Edit::DeletePassage { index },
        (0, None) => return None,
        (1, _) => Edit::DeleteRoom {
            id: ids.into_iter().next().unwrap_or_default(),
        },
        _ => Edit::DeleteRooms { ids },
    })
}

/// The region "Add region" appends to `regions`: numbered one past the last, with the
/// first id `region_<n>` from that number on that no region has.
pub fn new_region(regions: &[RegionFile]) -> RegionFile {
    let n = regions.len() + 1;
    let taken = |id: &str| regions.iter().any(|r| r.region_id == id);
    let id = (n..)
        .map(|k| format!("region_{k}"))
        .find(|id| !taken(id))
        .unwrap_or_default();
    RegionFile {
        region_id: id,
        name: format!("Region {n}"),
        order: n as u32,
    }
}

fn rooms(file: &ZoneFile) -> &[NodeFile] {
    file.nodes.as_deref().unwrap_or_default()
}

/// Applies `edit` to `file` in place, or says why not (then `file` may be half changed: the
/// caller works on a copy).
fn change(file: &mut ZoneFile, edit: Edit) -> Result<(), Refused> {
    if file.room_kinds.is_some() && file.nodes.is_none() {
        return Err(Refused::Legacy);
    }
    match edit {
        Edit::SetMeta {
            zone_id,
            name,
            tier,
            min_level,
            max_level,
            allow_loops,
        } => {
            if zone_id != file.zone_id {
                if let Some(why) = zone_id_problem(&zone_id) {
                    return Err(Refused::BadId(zone_id, why));
                }
                let prefix = format!("{}.", file.zone_id);
                let renames: Vec<(String, String)> = rooms(file)
                    .iter()
                    .filter_map(|n| {
                        let rest = n.node_id.strip_prefix(&prefix)?;
                        Some((n.node_id.clone(), format!("{zone_id}.{rest}")))
                    })
                    .collect();
                for (from, to) in renames {
                    rename_room(file, &from, &to)?;
                }
                file.zone_id = zone_id;
            }
            file.name = name;
            file.tier = tier;
            file.min_level = min_level;
            file.max_level = max_level;
            file.allow_loops = allow_loops;
            return Ok(());
        }
        Edit::SetRegions(regions) => {
            file.regions = regions;
            return Ok(());
        }
        Edit::RenameRoom { from, to } => return rename_room(file, &from, &to),
        _ => {}
    }
    let nodes = file.nodes.get_or_insert_with(Vec::new);
    let edges = file.edges.get_or_insert_with(Vec::new);
    let find = |nodes: &[NodeFile], id: &str| {
        nodes
            .iter()
            .position(|n| n.node_id == id)
            .ok_or_else(|| Refused::NoRoom(id.to_string()))
    };
    match edit {
        Edit::AddRoom(node) => {
            if nodes.iter().any(|n| n.node_id == node.node_id) {
                return Err(Refused::DuplicateRoom(node.node_id));
            }
            nodes.push(node);
        }
        Edit::MoveRoom { id, x, y } => {
            let i = find(nodes, &id)?;
            nodes[i].pos_x = Some(x);
            nodes[i].pos_y = Some(y);
        }
        Edit::MoveRooms { ids, dx, dy } => {
            let mut ids = ids;
            zonegraph_core::text::sort_dedup(&mut ids);
            let found: Vec<usize> = ids
                .iter()
                .map(|id| find(nodes, id))
                .collect::<Result<_, _>>()?;
            for i in found {
                let n = &mut nodes[i];
                n.pos_x = Some(n.pos_x.unwrap_or(0).saturating_add(dx));
                n.pos_y = Some(n.pos_y.unwrap_or(0).saturating_add(dy));
            }
        }
        Edit::SetRoom { id, room } => {
            let i = find(nodes, &id)?;
            nodes[i] = NodeFile {
                node_id: id,
                ..room
            };
        }
        Edit::DeleteRoom { id } => {
            let i = find(nodes, &id)?;
            nodes.remove(i);
            edges.retain(|e| e.from_node != id && e.to_node != id);
        }
        Edit::DeleteRooms { ids } => {
            let mut ids = ids;
            zonegraph_core::text::sort_dedup(&mut ids);
            for id in &ids {
                find(nodes, id)?;
            }
            nodes.retain(|n| !ids.contains(&n.node_id));
            edges.retain(|e| !ids.contains(&e.from_node) && !ids.contains(&e.to_node));
        }
        Edit::Connect(edge) => {
            find(nodes, &edge.from_node)?;
            find(nodes, &edge.to_node)?;
            edges.push(edge);
        }
        Edit::SetPassage { index, edge } => {
            find(nodes, &edge.from_node)?;
            find(nodes, &edge.to_node)?;
            let slot = edges.get_mut(index).ok_or(Refused::NoPassage(index))?;
            *slot = edge;
        }
        Edit::DeletePassage { index } => {
            if index >= edges.len() {
                return Err(Refused::NoPassage(index));
            }
            edges.remove(index);
        }
        Edit::SetMeta { .. } | Edit::SetRegions(_) | Edit::RenameRoom { .. } => {}
    }
    Ok(())
}

/// Renames room `from` to `to` in `file`, with every passage end naming it (nothing else in
/// the format names a room), or says why not.
fn rename_room(file: &mut ZoneFile, from: &str, to: &str) -> Result<(), Refused> {
    if from == to {
        return Ok(());
    }
    if let Some(why) = room_id_problem(to) {
        return Err(Refused::BadId(to.to_string(), why));
    }
    if rooms(file).iter().any(|n| n.node_id == to) {
        return Err(Refused::DuplicateRoom(to.to_string()));
    }
    let room = file
        .nodes
        .iter_mut()
        .flatten()
        .find(|n| n.node_id == from)
        .ok_or_else(|| Refused::NoRoom(from.to_string()))?;
    room.node_id = to.to_string();
    for e in file.edges.iter_mut().flatten() {
        if e.from_node == from {
            e.from_node = to.to_string();
        }
        if e.to_node == from {
            e.to_node = to.to_string();
        }
    }
    Ok(())
}
