//! The zone editor's model: a zone file being edited, every change an [`Edit`] that
//! [`Editor::apply`] makes or refuses whole, with undo and redo of each. Pure (no browser):
//! tested natively; the designer page draws it and turns pointer and keyboard actions into
//! edits. Checking is the core's (`zone::build`, `validate::check_zone`), on the file as it
//! stands after every edit; the file written out is the core's canonical form
//! (`format::to_pretty_json`), as `zones/*.json` are. What the editor page's controls decide
//! without a browser is here too: where "Add room" puts a room, what deleting the selection
//! takes, a new region, a lock's form fields, room lists, the findings' count, publishing's
//! URL and answer.

use std::collections::BTreeMap;

use zonegraph_core::diagnostic::{self, Diagnostic};
use zonegraph_core::format::{self, EdgeFile, LockKind, NodeFile, NodeKind, RegionFile, ZoneFile};
use zonegraph_core::impact::{self, Impact};
use zonegraph_core::validate;
use zonegraph_core::zone;

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

/// What `POST /api/zones` answered, in words for the editor: the status and the body.
pub fn publish_words(status: u16, body: &str) -> String {
    let json: serde_json::Value = serde_json::from_str(body).unwrap_or_default();
    match status {
        200 => format!(
            "Published {} as {}: the server now serves {} zones{}.",
            json["published"].as_str().unwrap_or("the zone"),
            json["file"].as_str().unwrap_or("a file"),
            json["zones"].as_u64().unwrap_or(0),
            if json["replaced"] == true {
                " (runs already on the old version keep it)"
            } else {
                ""
            }
        ),
        422 => {
            let findings: Vec<String> = json["zones"]
                .as_array()
                .into_iter()
                .flatten()
                .flat_map(|z| {
                    let file = z["file"].as_str().unwrap_or("?").to_string();
                    let parse = z["parse_error"]["message"]
                        .as_str()
                        .map(|m| format!("{file}: {m}"));
                    let errors = z["diagnostics"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter(|d| d["severity"] == "error")
                        .map(move |d| format!("{file}: {}", d["message"].as_str().unwrap_or("")));
                    parse.into_iter().chain(errors.collect::<Vec<_>>())
                })
                .collect();
            let mut words = format!(
                "Not published: {}.",
                json["error"].as_str().unwrap_or("the server refused it")
            );
            for f in findings.iter().take(5) {
                words.push(' ');
                words.push_str(f);
                words.push('.');
            }
            words
        }
        401 => "Not published: the server did not take that token. Ask its operator for a \
                publish token (zonegraph token new --scope publish)."
            .into(),
        _ => format!(
            "Not published: the server answered {status}{}.",
            json["error"]
                .as_str()
                .map(|e| format!(" ({e})"))
                .unwrap_or_default()
        ),
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

/// The fields of a passage's lock data, as its form shows them: the keys its lock kind
/// starts with ([`default_lock_data`]), then any others the file has, each with the file's
/// value, else the kind's default.
pub fn lock_fields(edge: &EdgeFile) -> Vec<(String, serde_json::Value)> {
    let defaults = default_lock_data(edge.lock_kind);
    let mut keys: Vec<String> = defaults.keys().cloned().collect();
    keys.extend(
        edge.lock_data
            .keys()
            .filter(|k| !keys.contains(k))
            .cloned()
            .collect::<Vec<_>>(),
    );
    keys.into_iter()
        .map(|k| {
            let value = edge
                .lock_data
                .get(&k)
                .or_else(|| defaults.get(&k))
                .cloned()
                .unwrap_or_default();
            (k, value)
        })
        .collect()
}

/// A lock data key in words, for its form field.
pub fn lock_data_caption(key: &str) -> String {
    match key {
        "dc" => "Difficulty (DC)".into(),
        "key_id" => "Key id".into(),
        "min_level" => "Lowest level".into(),
        "region_id" => "Region to clear".into(),
        "stat" => "Ability".into(),
        k => format!("Lock data: {k}"),
    }
}

/// A whole number typed into a form field, held between `lo` and `hi`; `None` when it is
/// no number.
pub fn form_number(text: &str, lo: i64, hi: i64) -> Option<i64> {
    text.trim().parse::<i64>().ok().map(|v| v.clamp(lo, hi))
}

/// A decimal number field's value ("0.5", ".5", "2"), or `None` when it is not a finite
/// number. Read by serde_json's number parser, which the page has anyway (`str::parse::<f64>`
/// would bring its own, KBs of WebAssembly).
pub fn form_decimal(text: &str) -> Option<f64> {
    let t = text.trim();
    let t = if t.starts_with('.') {
        format!("0{t}")
    } else {
        t.to_string()
    };
    serde_json::from_str::<f64>(&t)
        .ok()
        .filter(|v| v.is_finite())
}

/// Every room of the file as (id, what a list shows for it), in file order: "Label (id)",
/// or the id of a room without a label.
pub fn room_names(f: &ZoneFile) -> Vec<(String, String)> {
    rooms(f)
        .iter()
        .map(|n| {
            let name = if n.label.is_empty() {
                n.node_id.clone()
            } else {
                format!("{} ({})", n.label, n.node_id)
            };
            (n.node_id.clone(), name)
        })
        .collect()
}

/// The findings in a line: "2 errors, 1 warning", or that there are none.
pub fn findings_words(diagnostics: &[Diagnostic]) -> String {
    if diagnostics.is_empty() {
        return "No findings: the zone is clean.".to_string();
    }
    let errors = diagnostics.iter().filter(|d| d.is_error()).count();
    let warnings = diagnostics.len() - errors;
    let plural = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
    format!(
        "{}, {}",
        plural(errors, "error"),
        plural(warnings, "warning")
    )
}

/// Where the editor publishes a zone to the server at `server`: its `POST /api/zones`.
pub fn publish_url(server: &str) -> String {
    format!("{}/api/zones", server.trim_end_matches('/'))
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

/// Why `id` cannot be a zone's id, or `None` when it can: the server's rule for a name of
/// its file (`<zone_id>.json`): letters, digits, `_`, `-` and `.`, not starting with `.`,
/// at most 128 characters, and not ending in `.schema`.
pub fn zone_id_problem(id: &str) -> Option<String> {
    if id.is_empty() {
        return Some("a zone id cannot be empty".into());
    }
    if id.len() > 128 {
        return Some("a zone id has at most 128 characters".into());
    }
    if id.starts_with('.') {
        return Some("a zone id cannot start with a dot".into());
    }
    if id.to_ascii_lowercase().ends_with(".schema") {
        return Some("a zone id cannot end in .schema".into());
    }
    if !id
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
    {
        return Some("use only letters, digits, _, - and .".into());
    }
    None
}

/// Why `id` cannot be a room's id, or `None` when it can: not empty, at most 128
/// characters, no spaces or control characters (chat commands and maps name it).
pub fn room_id_problem(id: &str) -> Option<String> {
    if id.trim().is_empty() {
        return Some("a room id cannot be empty".into());
    }
    if id.len() > 128 {
        return Some("a room id has at most 128 characters".into());
    }
    if id.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Some("a room id has no spaces".into());
    }
    None
}

/// A zone id from `name`: its letters and digits lowercased, other runs as one `_`
/// (`"The Goblin Warren"` → `the_goblin_warren`; `zone` for a name without any), suffixed
/// `_2`, `_3` … when `taken` says it is.
pub fn propose_zone_id(name: &str, taken: impl Fn(&str) -> bool) -> String {
    let mut slug = String::new();
    for c in name.chars().flat_map(char::to_lowercase) {
        if c.is_ascii_alphanumeric() {
            slug.push(c);
        } else if !slug.is_empty() && !slug.ends_with('_') {
            slug.push('_');
        }
    }
    let mut slug = slug.trim_end_matches('_').to_string();
    slug.truncate(100);
    if slug.is_empty() {
        slug = "zone".into();
    }
    if !taken(&slug) {
        return slug;
    }
    (2..)
        .map(|n| format!("{slug}_{n}"))
        .find(|id| !taken(id))
        .unwrap_or_default()
}

/// Whether zone id `id` is still the one proposed from `name` (its slug, or the slug with a
/// `_N` suffix): then renaming the zone proposes a new id too.
pub fn id_follows_name(id: &str, name: &str) -> bool {
    let slug = propose_zone_id(name, |_| false);
    id == slug
        || id
            .strip_prefix(&slug)
            .and_then(|rest| rest.strip_prefix('_'))
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// The `SetMeta` edit that makes `file` a copy with its own zone id: proposed from its name
/// among `taken` and never the original's, its rooms renamed with it.
pub fn copy_edit(file: &ZoneFile, taken: impl Fn(&str) -> bool) -> Edit {
    let original = file.zone_id.clone();
    let zone_id = propose_zone_id(&format!("{} copy", file.name), |id| {
        id == original || taken(id)
    });
    Edit::SetMeta {
        zone_id,
        name: format!("{} (copy)", file.name),
        tier: file.tier,
        min_level: file.min_level,
        max_level: file.max_level,
        allow_loops: file.allow_loops,
    }
}

/// What Publish does with the work, from the server's zone of the same id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PublishPlan {
    /// The server serves no zone of this id: a new zone.
    New,
    /// The server serves version `seq` of this zone, which this editor opened from it:
    /// publishing replaces it (after the designer confirms the changes).
    Replaces { seq: u64 },
    /// The server serves a zone of this id this editor did not open from it: refused, with
    /// a free id to use instead.
    Collides { seq: u64, free: String },
}

/// The plan for publishing zone `zone_id`: `served_seq` is the server's current version of
/// that id (`None` when it serves none), `opened_from_server` the id of the zone this
/// editor opened from that server (if any), `served_ids` every zone id it serves.
pub fn publish_plan(
    zone_id: &str,
    served_seq: Option<u64>,
    opened_from_server: Option<&str>,
    served_ids: &[String],
) -> PublishPlan {
    match served_seq {
        None => PublishPlan::New,
        Some(seq) if opened_from_server == Some(zone_id) => PublishPlan::Replaces { seq },
        Some(seq) => PublishPlan::Collides {
            seq,
            free: propose_zone_id(zone_id, |id| served_ids.iter().any(|s| s == id)),
        },
    }
}

/// The Publish confirmation's words for a plan; for a replacement, the changes follow as
/// [`impact_lines`].
pub fn plan_words(zone_id: &str, plan: &PublishPlan) -> String {
    match plan {
        PublishPlan::New => format!("Publish {zone_id} as a new zone on this server?"),
        PublishPlan::Replaces { seq } => {
            format!("Publishing replaces version {seq} of {zone_id}:")
        }
        PublishPlan::Collides { seq, free } => format!(
            "Not published: the server already serves a zone {zone_id} (version {seq}) that this editor did not open from it. Change the zone id (for example to {free}), or open that zone with “Open from server” to edit it."
        ),
    }
}

/// What a change does, in the core's words ([`zonegraph_core::impact`]): the changes, the
/// figures that change ("routes: 3 -> 2"), the findings it brings or removes.
pub fn impact_lines(i: &Impact) -> Vec<String> {
    let mut out = impact::change_lines(i);
    out.extend(figure_lines(i, false));
    out.extend(impact::finding_lines(i));
    out
}

/// What the server's review (`POST /api/zones/{id}/review` with the file Publish would send)
/// answered, as lines for the Publish confirmation: its `words` (the players in the zone now,
/// its stored runs replayed on this version); when there is none, one line saying why
/// (publishing is still allowed).
pub fn review_lines(answer: Result<(u16, String), String>) -> Vec<String> {
    let why = match answer {
        Ok((200, body)) => {
            let json: serde_json::Value = serde_json::from_str(&body).unwrap_or_default();
            match json["words"].as_array() {
                Some(words) => {
                    return words
                        .iter()
                        .filter_map(|w| w.as_str().map(str::to_string))
                        .collect();
                }
                None => "its answer has no words".to_string(),
            }
        }
        Ok((status, body)) => {
            let json: serde_json::Value = serde_json::from_str(&body).unwrap_or_default();
            match json["error"].as_str() {
                Some(e) => format!("the server answered {status} ({e})"),
                None => format!("the server answered {status}"),
            }
        }
        Err(e) => e,
    };
    vec![format!(
        "No review of the players and stored runs: {why}. Publishing is still possible."
    )]
}

/// The URL of the server's review of a new version of zone `zone_id`.
pub fn review_url(server: &str, zone_id: &str) -> String {
    format!("{}/review", zone_url(server, zone_id))
}

/// The zone's figures before and after, one line each ("routes: 3 -> 2 (changed)"): the
/// changed ones, or `all` of them ("rooms: 8 (unchanged)").
pub fn figure_lines(i: &Impact, all: bool) -> Vec<String> {
    impact::figures(i)
        .into_iter()
        .filter_map(|f| {
            if f.changed() {
                Some(format!("{}: {} -> {}", f.name, f.before, f.after))
            } else {
                all.then(|| format!("{}: {} (unchanged)", f.name, f.before))
            }
        })
        .collect()
}

/// The server's current version of zone `zone_id` from its `GET /api/zones` answer, and
/// every zone id it serves.
pub fn served_version(list_body: &str, zone_id: &str) -> (Option<u64>, Vec<String>) {
    let json: serde_json::Value = serde_json::from_str(list_body).unwrap_or_default();
    let zones = json["zones"].as_array().cloned().unwrap_or_default();
    let ids = zones
        .iter()
        .filter_map(|z| z["zone_id"].as_str().map(str::to_string))
        .collect();
    let seq = zones
        .iter()
        .find(|z| z["zone_id"] == zone_id)
        .map(|z| z["version"]["seq"].as_u64().unwrap_or(0));
    (seq, ids)
}

/// The zones a server's `GET /api/zones` answer lists, as (id, "Name (id) · version N").
pub fn served_list(list_body: &str) -> Vec<(String, String)> {
    let json: serde_json::Value = serde_json::from_str(list_body).unwrap_or_default();
    json["zones"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|z| {
            let id = z["zone_id"].as_str()?.to_string();
            let name = z["name"].as_str().unwrap_or(&id).to_string();
            let seq = z["version"]["seq"]
                .as_u64()
                .map(|s| format!(" · version {s}"))
                .unwrap_or_default();
            Some((id.clone(), format!("{name} ({id}){seq}")))
        })
        .collect()
}

/// What `DELETE /api/zones/{id}` answered, in words for the editor.
pub fn unpublish_words(zone_id: &str, status: u16, body: &str) -> String {
    let json: serde_json::Value = serde_json::from_str(body).unwrap_or_default();
    let error = json["error"].as_str().unwrap_or("");
    match status {
        200 => format!(
            "Unpublished {zone_id}: the server now serves {} zones (runs already there go on to their end).",
            json["zones"].as_u64().unwrap_or(0)
        ),
        403 => format!(
            "Not unpublished: this token may not withdraw zones. Unpublishing needs an admin token (zonegraph token new --scope admin){}.",
            if error.is_empty() {
                String::new()
            } else {
                format!(" ({error})")
            }
        ),
        401 => "Not unpublished: the server did not take that token.".into(),
        404 => format!("Not unpublished: the server serves no zone {zone_id}."),
        _ => format!(
            "Not unpublished: the server answered {status}{}.",
            if error.is_empty() {
                String::new()
            } else {
                format!(" ({error})")
            }
        ),
    }
}

/// The URL of zone `zone_id` on the server at `server` (`GET` its file, `DELETE` withdraws).
/// A zone id the editor or a server accepts needs no escaping ([`zone_id_problem`]).
pub fn zone_url(server: &str, zone_id: &str) -> String {
    format!("{}/{zone_id}", publish_url(server))
}

#[cfg(test)]
mod tests {
    use super::*;
    use zonegraph_core::diagnostic::Severity;

    fn errors(e: &Editor) -> Vec<String> {
        e.diagnostics()
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .map(|d| d.code.as_str().to_string())
            .collect()
    }

    /// Applies `edit`, checks it changed the file, undoes it (the file as before), redoes
    /// it (the file as after).
    fn check_undoable(e: &mut Editor, edit: Edit) {
        let before = e.file().clone();
        e.apply(edit.clone()).expect("the edit is made");
        let after = e.file().clone();
        assert_ne!(before, after, "{edit:?} changed nothing");
        assert!(e.undo());
        assert_eq!(e.file(), &before, "undo of {edit:?}");
        assert!(e.redo());
        assert_eq!(e.file(), &after, "redo of {edit:?}");
    }

    /// A three-route zone built only by edits: entry → fork → (a | b | c) → boss.
    fn three_routes() -> Editor {
        let mut e = Editor::empty("z", "Three Routes");
        let fork = e.new_room_id(NodeKind::Fork);
        e.apply(Edit::AddRoom(room(&fork, NodeKind::Fork, "Fork", 0, 1)))
            .expect("fork");
        e.apply(Edit::Connect(passage("z.entry", &fork)))
            .expect("entry → fork");
        let boss = e.new_room_id(NodeKind::Boss);
        e.apply(Edit::AddRoom(room(&boss, NodeKind::Boss, "Boss", 0, 3)))
            .expect("boss");
        for (x, kind) in [
            (-1, NodeKind::Trap),
            (0, NodeKind::Elite),
            (1, NodeKind::Harvest),
        ] {
            let id = e.new_room_id(kind);
            e.apply(Edit::AddRoom(room(&id, kind, kind.as_str(), x, 2)))
                .expect("room");
            e.apply(Edit::Connect(passage(&fork, &id)))
                .expect("fork → room");
            e.apply(Edit::Connect(passage(&id, &boss)))
                .expect("room → boss");
        }
        e
    }

    #[test]
    fn a_three_route_zone_built_by_edits_goes_from_errors_to_clean() {
        let mut e = Editor::empty("z", "Three Routes");
        assert!(!errors(&e).is_empty(), "an entry alone has no boss");
        e = three_routes();
        assert_eq!(errors(&e), Vec::<String>::new(), "{:?}", e.diagnostics());
        // The file reads back as the same zone, in the canonical form.
        let json = e.to_json();
        assert!(json.ends_with("}\n"));
        assert_eq!(format::parse(&json).expect("parses"), *e.file());
        let checked = validate::check_sources(&[("z.json".into(), json)]);
        assert!(!checked[0].has_errors(), "{:?}", checked[0].diagnostics);
    }

    #[test]
    fn every_edit_is_undone_and_redone() {
        let mut e = three_routes();
        let id = e.new_room_id(NodeKind::Secret);
        check_undoable(
            &mut e,
            Edit::AddRoom(room(&id, NodeKind::Secret, "Hidden", 2, 2)),
        );
        check_undoable(
            &mut e,
            Edit::MoveRoom {
                id: id.clone(),
                x: 5,
                y: -3,
            },
        );
        let mut changed = e.file().nodes.as_ref().expect("nodes")[0].clone();
        changed.label = "The Way In".into();
        changed.region_id = "upper".into();
        changed.content.narration = "Cold air.".into();
        check_undoable(
            &mut e,
            Edit::SetRoom {
                id: "z.entry".into(),
                room: changed,
            },
        );
        check_undoable(&mut e, Edit::Connect(passage("z.fork_1", &id)));
        let last = e.file().edges.as_ref().expect("edges").len() - 1;
        let mut locked = passage("z.fork_1", &id);
        locked.lock_kind = LockKind::PerceptionCheck;
        locked.lock_data.insert("dc".into(), 12.into());
        locked.hint = "A draft.".into();
        locked.weight = 3;
        check_undoable(
            &mut e,
            Edit::SetPassage {
                index: last,
                edge: locked,
            },
        );
        check_undoable(&mut e, Edit::DeletePassage { index: last });
        check_undoable(&mut e, Edit::DeleteRoom { id: id.clone() });
        check_undoable(
            &mut e,
            Edit::SetMeta {
                zone_id: "z".into(),
                name: "Renamed".into(),
                tier: 2,
                min_level: 3,
                max_level: 7,
                allow_loops: true,
            },
        );
        check_undoable(
            &mut e,
            Edit::MoveRooms {
                ids: vec!["z.entry".into(), "z.fork_1".into(), "z.entry".into()],
                dx: 2,
                dy: -1,
            },
        );
        let moved = e.file().nodes.as_ref().expect("nodes");
        assert_eq!(
            (moved[0].pos_x, moved[0].pos_y),
            (Some(2), Some(-1)),
            "moved once"
        );
        check_undoable(
            &mut e,
            Edit::SetRegions(vec![RegionFile {
                region_id: "upper".into(),
                name: "Upper Halls".into(),
                order: 1,
            }]),
        );
    }

    #[test]
    fn deleting_a_room_takes_its_passages_and_undo_brings_both_back() {
        let mut e = three_routes();
        let before = e.file().clone();
        e.apply(Edit::DeleteRoom {
            id: "z.fork_1".into(),
        })
        .expect("deleted");
        let edges = e.file().edges.as_ref().expect("edges");
        assert!(
            edges
                .iter()
                .all(|x| x.from_node != "z.fork_1" && x.to_node != "z.fork_1")
        );
        assert!(!errors(&e).is_empty(), "the boss is cut off");
        assert!(e.undo());
        assert_eq!(e.file(), &before);
        assert!(errors(&e).is_empty());
    }

    #[test]
    fn deleting_a_multi_selection_is_one_edit_and_one_undo_brings_all_back() {
        let mut e = three_routes();
        let before = e.file().clone();
        let ids: Vec<String> = before.nodes.as_ref().expect("nodes")[2..4]
            .iter()
            .map(|n| n.node_id.clone())
            .collect();
        e.apply(Edit::DeleteRooms { ids: ids.clone() })
            .expect("deleted");
        let after = e.file();
        let nodes = after.nodes.as_ref().expect("nodes");
        assert_eq!(nodes.len() + 2, before.nodes.as_ref().expect("nodes").len());
        assert!(nodes.iter().all(|n| !ids.contains(&n.node_id)));
        assert!(
            after
                .edges
                .as_ref()
                .expect("edges")
                .iter()
                .all(|x| !ids.contains(&x.from_node) && !ids.contains(&x.to_node)),
            "their passages went with them"
        );
        assert!(e.undo(), "one undo");
        assert_eq!(
            e.file(),
            &before,
            "one undo restores every room and passage"
        );
        let mut missing = ids;
        missing.push("z.nowhere".into());
        let kept = e.clone();
        assert_eq!(
            e.apply(Edit::DeleteRooms { ids: missing }),
            Err(Refused::NoRoom("z.nowhere".into()))
        );
        assert_eq!(e, kept, "refused whole");
    }

    #[test]
    fn a_refused_edit_changes_nothing_and_keeps_redo() {
        let mut e = three_routes();
        e.apply(Edit::MoveRoom {
            id: "z.entry".into(),
            x: 9,
            y: 9,
        })
        .expect("moved");
        assert!(e.undo());
        let before = e.clone();
        for (edit, why) in [
            (
                Edit::AddRoom(room("z.entry", NodeKind::Trap, "Again", 0, 0)),
                Refused::DuplicateRoom("z.entry".into()),
            ),
            (
                Edit::Connect(passage("z.entry", "z.nowhere")),
                Refused::NoRoom("z.nowhere".into()),
            ),
            (
                Edit::MoveRoom {
                    id: "z.nowhere".into(),
                    x: 0,
                    y: 0,
                },
                Refused::NoRoom("z.nowhere".into()),
            ),
            (Edit::DeletePassage { index: 99 }, Refused::NoPassage(99)),
            (
                Edit::SetPassage {
                    index: 99,
                    edge: passage("z.entry", "z.fork_1"),
                },
                Refused::NoPassage(99),
            ),
        ] {
            assert_eq!(e.apply(edit), Err(why));
            assert_eq!(e, before, "a refused edit left the editor as it was");
        }
        assert!(e.redo(), "redo survives a refused edit");
    }

    #[test]
    fn undo_and_redo_stop_at_the_ends_and_a_new_edit_clears_redo() {
        let mut e = Editor::empty("z", "Z");
        assert!(!e.undo() && !e.redo());
        e.apply(Edit::MoveRoom {
            id: "z.entry".into(),
            x: 1,
            y: 1,
        })
        .expect("moved");
        assert!(e.undo());
        assert!(e.can_redo());
        e.apply(Edit::MoveRoom {
            id: "z.entry".into(),
            x: 2,
            y: 2,
        })
        .expect("moved");
        assert!(!e.can_redo());
        for n in 0..UNDO_LIMIT + 10 {
            e.apply(Edit::MoveRoom {
                id: "z.entry".into(),
                x: n as i32,
                y: 0,
            })
            .expect("moved");
        }
        let mut undone = 0;
        while e.undo() {
            undone += 1;
        }
        assert_eq!(undone, UNDO_LIMIT);
    }

    #[test]
    fn new_room_ids_are_unique_and_name_the_kind() {
        let mut e = Editor::empty("z", "Z");
        let a = e.new_room_id(NodeKind::Trap);
        assert_eq!(a, "z.trap_1");
        e.apply(Edit::AddRoom(room(&a, NodeKind::Trap, "T", 0, 1)))
            .expect("added");
        assert_eq!(e.new_room_id(NodeKind::Trap), "z.trap_2");
        assert_eq!(e.new_room_id(NodeKind::RestCamp), "z.rest_camp_1");
    }

    #[test]
    fn publish_answers_read_as_words() {
        let ok = r#"{"published":"z","file":"z.json","replaced":true,"zones":8,"findings":{"zones":[]}}"#;
        assert_eq!(
            publish_words(200, ok),
            "Published z as z.json: the server now serves 8 zones (runs already on the old \
             version keep it)."
        );
        let refused = r#"{"error":"the zone files have errors with this one; nothing was changed",
            "zones":[{"file":"zones/z.json","zone_id":"z","diagnostics":[
              {"severity":"warning","code":"w","message":"a warning"},
              {"severity":"error","code":"e","message":"the boss cannot be reached"}]}]}"#;
        assert_eq!(
            publish_words(422, refused),
            "Not published: the zone files have errors with this one; nothing was changed. \
             zones/z.json: the boss cannot be reached."
        );
        assert!(publish_words(401, "{}").contains("publish token"));
        assert!(publish_words(500, "not json").contains("500"));
    }

    #[test]
    fn a_legacy_room_kinds_zone_opens_as_its_compiled_graph() {
        let text = r#"{"format":1,"zone_id":"old","name":"Old","tier":1,"min_level":1,
            "max_level":3,"room_kinds":["entry","trap","boss"]}"#;
        let mut e = Editor::open_text(text).expect("opens");
        assert!(e.file().room_kinds.is_none());
        let ids: Vec<&str> = rooms(e.file()).iter().map(|n| n.node_id.as_str()).collect();
        assert_eq!(ids, ["old.r1", "old.r2", "old.r3"]);
        assert_eq!(e.file().edges.as_ref().map(Vec::len), Some(2));
        assert_eq!(errors(&e), Vec::<String>::new(), "{:?}", e.diagnostics());
        // Ready to branch: a second way from the trap to the boss.
        let id = e.new_room_id(NodeKind::Harvest);
        e.apply(Edit::AddRoom(room(&id, NodeKind::Harvest, "Side", 1, 1)))
            .expect("added");
        e.apply(Edit::Connect(passage("old.r2", &id))).expect("in");
        e.apply(Edit::Connect(passage(&id, "old.r3"))).expect("out");
        assert_eq!(errors(&e), Vec::<String>::new(), "{:?}", e.diagnostics());
        assert!(Editor::open_text("{").is_err());
    }

    #[test]
    fn a_zone_without_hints_opens_with_every_room_placed_as_drawn() {
        let (_, text) = crate::zones::shipped("mossback_warren").expect("shipped");
        let e = Editor::open_text(text).expect("opens");
        assert!(
            rooms(e.file())
                .iter()
                .all(|n| n.pos_x.is_some() && n.pos_y.is_some())
        );
        let before = crate::doc::load("m", text).expect("loads");
        let after = crate::doc::generated("m", e.file());
        let cells = |l: &crate::doc::Loaded| -> Vec<(String, u32, u32)> {
            l.layout
                .nodes
                .iter()
                .map(|n| (n.id.clone(), n.col, n.row))
                .collect()
        };
        assert_eq!(cells(&before), cells(&after), "drawn where it was");
    }

    #[test]
    fn a_playtest_starts_from_the_chosen_room() {
        let e = three_routes();
        let file = playtest_file(e.file(), "z.trap_1");
        let entries: Vec<&str> = rooms(&file)
            .iter()
            .filter(|n| n.is_entry)
            .map(|n| n.node_id.as_str())
            .collect();
        assert_eq!(entries, ["z.trap_1"]);
        let (zone, _) = zone::build(&file);
        let mut p = crate::playtest::Playtest::new(zonegraph_core::engine::Character::default());
        p.command(&zone, "!zone enter z", "t");
        assert_eq!(
            p.run().map(|r| r.current_node.0.as_str()),
            Some("z.trap_1"),
            "{:?}",
            p.log
        );
    }

    #[test]
    fn drags_move_by_whole_cells() {
        assert_eq!(cells_moved(0.0, 1.0, 226.0), 0);
        assert_eq!(cells_moved(100.0, 1.0, 226.0), 0);
        assert_eq!(cells_moved(120.0, 1.0, 226.0), 1);
        assert_eq!(cells_moved(-460.0, 1.0, 226.0), -2);
        assert_eq!(cells_moved(113.0, 0.5, 226.0), 1);
        assert_eq!(cells_moved(50.0, 0.0, 226.0), 0);
        assert_eq!(cells_moved(f64::NAN, 1.0, 226.0), 0);
    }

    #[test]
    fn a_new_room_goes_below_the_selected_one_right_of_its_row() {
        let e = three_routes();
        let place = |near: Option<&str>| new_room_place(e.file(), near);
        // Row 2 holds the three routes (columns -1, 0, 1).
        assert_eq!(place(Some("z.fork_1")), (2, 2));
        assert_eq!(place(Some("z.boss_1")), (0, 4));
        assert_eq!(place(None), (0, 4));
        assert_eq!(place(Some("z.no_such_room")), (0, 4));
        let one = Editor::empty("z", "Z");
        assert_eq!(new_room_place(one.file(), Some("z.entry")), (0, 1));
    }

    #[test]
    fn deleting_the_selection_takes_its_rooms_else_its_passage() {
        let ids = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(delete_edit(ids(&[]), None), None);
        assert_eq!(
            delete_edit(ids(&[]), Some(3)),
            Some(Edit::DeletePassage { index: 3 })
        );
        assert_eq!(
            delete_edit(ids(&["a"]), Some(3)),
            Some(Edit::DeleteRoom { id: "a".into() })
        );
        assert_eq!(
            delete_edit(ids(&["a", "b"]), None),
            Some(Edit::DeleteRooms {
                ids: ids(&["a", "b"])
            })
        );
    }

    #[test]
    fn a_new_region_takes_the_next_number_and_a_free_id() {
        let first = new_region(&[]);
        assert_eq!(
            (first.region_id.as_str(), first.name.as_str(), first.order),
            ("region_1", "Region 1", 1)
        );
        let taken = RegionFile {
            region_id: "region_2".into(),
            name: "Crypt".into(),
            order: 1,
        };
        let next = new_region(&[taken]);
        assert_eq!(
            (next.region_id.as_str(), next.name.as_str(), next.order),
            ("region_3", "Region 2", 2)
        );
    }

    #[test]
    fn a_lock_form_shows_its_kinds_keys_then_the_files_others() {
        let mut edge = passage("a", "b");
        edge.lock_kind = LockKind::StatCheck;
        edge.lock_data.insert("dc".into(), 15.into());
        edge.lock_data.insert("note".into(), "x".into());
        let fields = lock_fields(&edge);
        let shown: Vec<(&str, String)> = fields
            .iter()
            .map(|(k, v)| (k.as_str(), v.to_string()))
            .collect();
        assert_eq!(
            shown,
            [
                ("dc", "15".to_string()),
                ("stat", "\"str\"".to_string()),
                ("note", "\"x\"".to_string())
            ]
        );
        let captions: Vec<String> = fields.iter().map(|(k, _)| lock_data_caption(k)).collect();
        assert_eq!(captions, ["Difficulty (DC)", "Ability", "Lock data: note"]);
        assert!(lock_fields(&passage("a", "b")).is_empty());
    }

    #[test]
    fn form_fields_read_whole_numbers_within_their_range() {
        assert_eq!(form_number(" 7 ", 1, 20), Some(7));
        assert_eq!(form_number("99", 1, 20), Some(20));
        assert_eq!(form_number("-5", 1, 20), Some(1));
        assert_eq!(form_number("2.5", 1, 20), None);
        assert_eq!(form_number("", 1, 20), None);
    }

    #[test]
    fn decimal_fields_read_as_str_parse_does() {
        for t in ["0.5", " 2 ", "1e2", "0", "12.25", "-3.5"] {
            assert_eq!(form_decimal(t), t.trim().parse::<f64>().ok(), "{t}");
        }
        assert_eq!(form_decimal(".5"), Some(0.5));
        for t in ["", "abc", "1.2.3", "NaN", "inf"] {
            assert_eq!(form_decimal(t), None, "{t}");
        }
    }

    #[test]
    fn room_lists_name_each_room_by_label_and_id() {
        let mut e = Editor::empty("z", "Z");
        e.apply(Edit::AddRoom(room("z.x", NodeKind::Trap, "", 0, 1)))
            .expect("room");
        assert_eq!(
            room_names(e.file()),
            [
                ("z.entry".to_string(), "Entry (z.entry)".to_string()),
                ("z.x".to_string(), "z.x".to_string())
            ]
        );
    }

    #[test]
    fn the_findings_are_counted_in_words() {
        use zonegraph_core::diagnostic::Code;
        let d = |code: Code| Diagnostic::new(code, "");
        assert_eq!(findings_words(&[]), "No findings: the zone is clean.");
        assert_eq!(
            findings_words(&[d(Code::BossCount), d(Code::DeadEnd), d(Code::MissingHint)]),
            "1 error, 2 warnings"
        );
        assert_eq!(
            findings_words(&[d(Code::BossCount), d(Code::EntryCount)]),
            "2 errors, 0 warnings"
        );
    }

    #[test]
    fn a_zone_is_published_to_the_servers_zones_route() {
        assert_eq!(
            publish_url("https://zones.example/"),
            "https://zones.example/api/zones"
        );
        assert_eq!(
            publish_url("http://127.0.0.1:8080"),
            "http://127.0.0.1:8080/api/zones"
        );
    }

    #[test]
    fn a_legacy_room_kinds_zone_refuses_edits() {
        let mut file = Editor::empty("z", "Z").file().clone();
        file.nodes = None;
        file.edges = None;
        file.room_kinds = Some(vec![NodeKind::Entry, NodeKind::Boss]);
        let mut e = Editor::new(file);
        assert_eq!(
            e.apply(Edit::MoveRoom {
                id: "z.entry".into(),
                x: 0,
                y: 0
            }),
            Err(Refused::Legacy)
        );
    }

    #[test]
    fn renaming_a_room_takes_its_passages_along_in_one_undo() {
        let mut e = three_routes();
        let before = e.file().clone();
        check_undoable(
            &mut e,
            Edit::RenameRoom {
                from: "z.elite_1".into(),
                to: "z.the_elite".into(),
            },
        );
        let f = e.file();
        let ends: Vec<(&str, &str)> = f
            .edges
            .iter()
            .flatten()
            .map(|p| (p.from_node.as_str(), p.to_node.as_str()))
            .filter(|(a, b)| a.contains("elite") || b.contains("elite"))
            .collect();
        assert_eq!(
            ends,
            vec![("z.fork_1", "z.the_elite"), ("z.the_elite", "z.boss_1")]
        );
        assert!(errors(&e).is_empty(), "{:?}", e.diagnostics());
        assert!(e.undo());
        assert_eq!(e.file(), &before);
        // Refused whole: a taken id, a bad id, a missing room.
        for (from, to, why) in [
            (
                "z.elite_1",
                "z.boss_1",
                Refused::DuplicateRoom("z.boss_1".into()),
            ),
            (
                "z.elite_1",
                "two words",
                Refused::BadId("two words".into(), "a room id has no spaces".into()),
            ),
            ("z.nope", "z.new", Refused::NoRoom("z.nope".into())),
        ] {
            assert_eq!(
                e.apply(Edit::RenameRoom {
                    from: from.into(),
                    to: to.into()
                }),
                Err(why)
            );
            assert_eq!(e.file(), &before);
        }
    }

    fn meta(f: &ZoneFile, zone_id: &str, name: &str) -> Edit {
        Edit::SetMeta {
            zone_id: zone_id.into(),
            name: name.into(),
            tier: f.tier,
            min_level: f.min_level,
            max_level: f.max_level,
            allow_loops: f.allow_loops,
        }
    }

    #[test]
    fn a_new_zone_id_renames_the_rooms_it_prefixes_in_one_edit() {
        let mut e = three_routes();
        let edit = meta(e.file(), "warren", "Warren");
        check_undoable(&mut e, edit);
        let f = e.file();
        assert_eq!(f.zone_id, "warren");
        assert!(
            f.nodes
                .iter()
                .flatten()
                .all(|n| n.node_id.starts_with("warren."))
        );
        assert!(
            f.edges
                .iter()
                .flatten()
                .all(|p| p.from_node.starts_with("warren.") && p.to_node.starts_with("warren."))
        );
        assert!(errors(&e).is_empty(), "{:?}", e.diagnostics());
        let edit = meta(e.file(), "bad id!", "Warren");
        assert!(matches!(e.apply(edit), Err(Refused::BadId(..))));
        assert_eq!(
            zone_id_problem(""),
            Some("a zone id cannot be empty".into())
        );
        assert_eq!(
            zone_id_problem(".x"),
            Some("a zone id cannot start with a dot".into())
        );
        assert_eq!(
            zone_id_problem("x.schema"),
            Some("a zone id cannot end in .schema".into())
        );
        assert_eq!(zone_id_problem("crypt-2.b_c"), None);
    }

    #[test]
    fn zone_ids_are_proposed_from_names_and_suffixed_when_taken() {
        let taken = ["goblin_warren", "goblin_warren_2"];
        let check = |name: &str, expect: &str| {
            assert_eq!(
                propose_zone_id(name, |id| taken.contains(&id)),
                expect,
                "{name:?}"
            );
        };
        check("The Crypt of Valdris", "the_crypt_of_valdris");
        check("Goblin Warren", "goblin_warren_3");
        check("  Ünïcode — zone!! ", "n_code_zone");
        check("!!!", "zone");
        assert!(id_follows_name("new_zone", "New zone"));
        assert!(id_follows_name("new_zone_4", "New zone"));
        assert!(!id_follows_name("crypt", "New zone"));
        assert!(!id_follows_name("new_zone_x", "New zone"));
    }

    #[test]
    fn a_copy_gets_its_own_id_never_the_originals() {
        let mut e = Editor::empty("crypt_valdris", "Crypt");
        let edit = copy_edit(e.file(), |id| id == "crypt_copy");
        e.apply(edit).expect("copied");
        assert_eq!(e.file().zone_id, "crypt_copy_2");
        assert_eq!(e.file().name, "Crypt (copy)");
        assert_eq!(rooms(e.file())[0].node_id, "crypt_copy_2.entry");
    }

    #[test]
    fn publishing_over_a_zone_not_opened_from_the_server_is_refused() {
        let served = vec!["crypt".to_string(), "crypt_2".to_string()];
        assert_eq!(publish_plan("new", None, None, &served), PublishPlan::New);
        assert_eq!(
            publish_plan("crypt", Some(3), Some("crypt"), &served),
            PublishPlan::Replaces { seq: 3 }
        );
        let collides = publish_plan("crypt", Some(3), None, &served);
        assert_eq!(
            collides,
            PublishPlan::Collides {
                seq: 3,
                free: "crypt_3".into()
            }
        );
        assert_eq!(
            publish_plan("crypt", Some(3), Some("other"), &served),
            collides
        );
        let words = plan_words("crypt", &collides);
        assert!(
            words.starts_with("Not published: the server already serves a zone crypt (version 3)"),
            "{words}"
        );
        assert!(words.contains("crypt_3"), "{words}");
    }

    #[test]
    fn the_publish_confirmation_words_the_changes() {
        let old = three_routes();
        let mut new = old.clone();
        new.apply(Edit::RenameRoom {
            from: "z.trap_1".into(),
            to: "z.pit".into(),
        })
        .expect("renamed");
        new.apply(Edit::DeletePassage { index: 0 })
            .expect("deleted");
        assert_eq!(
            plan_words("z", &PublishPlan::Replaces { seq: 2 }),
            "Publishing replaces version 2 of z:"
        );
        let lines = impact_lines(&impact::impact(old.file(), new.file()));
        assert_eq!(
            lines[..2],
            [
                "room renamed: z.trap_1 -> z.pit",
                "passage removed: z.entry -> z.fork_1",
            ]
        );
        // The figures that change, then the findings the change brings.
        assert!(lines.contains(&"routes: 3 -> 0".to_string()), "{lines:#?}");
        assert!(
            lines.iter().any(|l| l.starts_with("new finding: ")),
            "{lines:#?}"
        );
        assert_eq!(
            impact_lines(&impact::impact(old.file(), old.file())),
            ["no change"]
        );
        let all = figure_lines(&impact::impact(old.file(), new.file()), true);
        assert_eq!(all[0], "rooms: 6 (unchanged)");
        assert!(all.contains(&"routes: 3 -> 0".to_string()), "{all:#?}");
    }

    #[test]
    fn the_servers_review_reads_as_its_words_or_one_line_why_not() {
        let ok = r#"{"version":3,"impact":{},"players":{},"replay":{},"words":["No run is in version 3 now.","Version 3 has no ended runs to replay."]}"#;
        assert_eq!(
            review_lines(Ok((200, ok.into()))),
            [
                "No run is in version 3 now.",
                "Version 3 has no ended runs to replay."
            ]
        );
        assert_eq!(
            review_lines(Ok((404, r#"{"error":"no zone \"x\""}"#.into()))),
            [
                "No review of the players and stored runs: the server answered 404 (no zone \"x\"). Publishing is still possible."
            ]
        );
        assert_eq!(
            review_lines(Err(
                "http://h/api/zones/x/review could not be reached".into()
            )),
            [
                "No review of the players and stored runs: http://h/api/zones/x/review could not be reached. Publishing is still possible."
            ]
        );
        assert_eq!(
            review_url("http://h:1/", "x"),
            "http://h:1/api/zones/x/review"
        );
    }

    #[test]
    fn server_answers_read_as_lists_versions_and_words() {
        let list = r#"{"zones":[{"zone_id":"crypt","name":"Crypt","version":{"seq":4}},
            {"zone_id":"warren","name":"Warren","version":null}],"sequence":9}"#;
        assert_eq!(
            served_version(list, "crypt"),
            (Some(4), vec!["crypt".into(), "warren".into()])
        );
        assert_eq!(served_version(list, "nope").0, None);
        assert_eq!(
            served_list(list),
            vec![
                ("crypt".to_string(), "Crypt (crypt) · version 4".to_string()),
                ("warren".to_string(), "Warren (warren)".to_string()),
            ]
        );
        assert!(unpublish_words("crypt", 403, "{}").contains("needs an admin token"));
        assert!(
            unpublish_words("crypt", 200, r#"{"zones":2}"#)
                .starts_with("Unpublished crypt: the server now serves 2 zones")
        );
        assert_eq!(zone_url("http://h:1/", "a.b"), "http://h:1/api/zones/a.b");
    }
}
