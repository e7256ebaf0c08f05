//! The zone file format, version 1: serde types that mirror `zones/*.json` one to one.
//!
//! This module is a stability boundary. Field names follow the columns of the server's
//! `zone_node` / `zone_edge` tables so a file maps 1:1 onto them. The domain model lives in
//! [`crate::zone`]; a change here is a change of the file format and must be versioned.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The only format version this build reads and writes.
pub const FORMAT_VERSION: u32 = 1;

/// Whether a file named `name` (a file name, not a path) is a zone file: it ends in `.json`
/// and is not a JSON Schema (`*.schema.json`, such as the zone format's own schema kept beside
/// the zones). Every reader of a zones folder picks its files with this.
pub fn is_zone_file_name(name: &str) -> bool {
    name.ends_with(".json") && !name.ends_with(".schema.json")
}

/// Why `id` cannot be a zone's id, or `None` when it can: a zone is served from, published
/// to and imported into the file `<zone_id>.json`, so its id is a file name's stem: letters,
/// digits, `_`, `-` and `.`, not starting with `.` (no hidden file, no `..`), at most 128
/// characters, and not ending in `.schema` (the folder's JSON Schema is never a zone).
pub fn zone_id_problem(id: &str) -> Option<&'static str> {
    if id.is_empty() {
        Some("a zone id cannot be empty")
    } else if id.len() > 128 {
        Some("a zone id has at most 128 characters")
    } else if id.starts_with('.') {
        Some("a zone id cannot start with a dot")
    } else if id.to_ascii_lowercase().ends_with(".schema") {
        Some("a zone id cannot end in .schema")
    } else if !id
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
    {
        Some("use only letters, digits, _, - and .")
    } else {
        None
    }
}

/// A whole zone file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ZoneFile {
    /// Optional JSON Schema reference for editors (`"zone.schema.json"`); ignored otherwise.
    #[serde(rename = "$schema", default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    /// File format version; must be 1.
    pub format: u32,
    /// Zone identifier, e.g. `crypt_valdris`; node ids are `<zone_id>.<suffix>`.
    pub zone_id: String,
    /// Human-readable zone name shown to players.
    pub name: String,
    /// Difficulty tier, 1 to 6.
    pub tier: u8,
    /// Lowest character level that may enter.
    pub min_level: u32,
    /// Highest character level the zone is designed for.
    pub max_level: u32,
    /// Regions of a multi-region zone; empty for a single-region zone.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub regions: Vec<RegionFile>,
    /// Loop-back edges (cycles) are an error unless the zone opts in.
    #[serde(default, skip_serializing_if = "is_false")]
    pub allow_loops: bool,
    /// Rooms of a hand-authored graph (with `edges`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodes: Option<Vec<NodeFile>>,
    /// Passages of a hand-authored graph (with `nodes`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edges: Option<Vec<EdgeFile>>,
    /// A legacy linear zone: room kinds in order, compiled into a chain `<zone_id>.r1`….
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub room_kinds: Option<Vec<NodeKind>>,
    /// What players read for a key id (`"tidewarden_sigil": "Tidewarden Sigil"`): the keys
    /// rooms grant and locks ask for. A key without one reads as its id, words capitalised.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub keys: BTreeMap<String, String>,
    /// What players read for a room's `harvest_ref` (`"glowcap_mushrooms": "Glowcap
    /// Mushrooms"`); as for `keys`, an id without one reads as its words capitalised.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub harvests: BTreeMap<String, String>,
}

/// One region of a multi-region zone.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct RegionFile {
    pub region_id: String,
    pub name: String,
    /// Order of the region along the zone (1 = first).
    pub order: u32,
}

/// One room (`zone_node`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct NodeFile {
    /// Globally unique id, by convention `<zone_id>.<suffix>`.
    pub node_id: String,
    pub kind: NodeKind,
    /// Human-readable label ("Side Chapel").
    #[serde(default)]
    pub label: String,
    #[serde(default, skip_serializing_if = "is_false")]
    pub is_entry: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub is_boss: bool,
    /// Region of a multi-region zone; empty otherwise.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub region_id: String,
    /// Layout hint: column.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pos_x: Option<i32>,
    /// Layout hint: row.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pos_y: Option<i32>,
    #[serde(default, skip_serializing_if = "ContentFile::is_default")]
    pub content: ContentFile,
}

impl NodeFile {
    /// A room of `kind` labelled `label` at a position hint, with no region and no content
    /// (an entry or boss kind is flagged so). What the editor adds and `synth` generates.
    pub fn plain(id: &str, kind: NodeKind, label: &str, x: i32, y: i32) -> NodeFile {
        NodeFile {
            node_id: id.to_string(),
            kind,
            label: label.to_string(),
            is_entry: kind == NodeKind::Entry,
            is_boss: kind == NodeKind::Boss,
            region_id: String::new(),
            pos_x: Some(x),
            pos_y: Some(y),
            content: ContentFile::default(),
        }
    }
}

/// Per-room payload (`content_json`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ContentFile {
    /// Bestiary id; empty rolls from the zone roster.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub encounter_override: String,
    /// Harvest table id.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub harvest_ref: String,
    /// Multiplier for the end-of-room loot roll.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub loot_bias: f64,
    /// Bespoke entry text; replaces the generic flavour line.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub narration: String,
    /// Permits an edge from this room to itself.
    #[serde(default, skip_serializing_if = "is_false")]
    pub allow_self_loop: bool,
    /// Key id the player receives when this room is cleared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grants_key: Option<String>,
    /// The designer's own data for the host game (a music cue, a loot table id, a boss
    /// phase): any JSON object of at most 4096 bytes as compact JSON, which zonegraph never
    /// reads and passes on untouched (the host hook, the events, the API, the wasm module).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra: Option<serde_json::Map<String, serde_json::Value>>,
}

/// The most bytes a room's `content.extra` may take, written as compact JSON.
pub const MAX_EXTRA_BYTES: usize = 4096;

impl Default for ContentFile {
    fn default() -> Self {
        ContentFile {
            encounter_override: String::new(),
            harvest_ref: String::new(),
            loot_bias: 1.0,
            narration: String::new(),
            allow_self_loop: false,
            grants_key: None,
            extra: None,
        }
    }
}

impl ContentFile {
    fn is_default(&self) -> bool {
        *self == ContentFile::default()
    }
}

/// One passage (`zone_edge`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct EdgeFile {
    pub from_node: String,
    pub to_node: String,
    #[serde(default, skip_serializing_if = "LockKind::is_none")]
    pub lock_kind: LockKind,
    /// `{"dc":12}` | `{"key_id":"skull_key"}` | `{"min_level":5}` | `{"region_id":"…"}` |
    /// `{"stat":"str","dc":14}`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub lock_data: BTreeMap<String, serde_json::Value>,
    /// Player-visible hint, shown even while the lock holds.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub hint: String,
    /// Menu order at a fork: weight ascending, then `to_node` ascending.
    #[serde(default = "one_i32", skip_serializing_if = "is_one_i32")]
    pub weight: i32,
}

impl EdgeFile {
    /// An open passage from `from` to `to`, no hint, weight 1.
    pub fn open(from: &str, to: &str) -> EdgeFile {
        EdgeFile {
            from_node: from.to_string(),
            to_node: to.to_string(),
            lock_kind: LockKind::None,
            lock_data: Default::default(),
            hint: String::new(),
            weight: 1,
        }
    }
}

/// The ten room kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum NodeKind {
    Entry,
    Exploration,
    Trap,
    Elite,
    Boss,
    Harvest,
    RestCamp,
    Secret,
    /// Pure choice node: no encounter.
    Fork,
    /// Paths converge: no encounter.
    Merge,
}

impl NodeKind {
    pub const ALL: [NodeKind; 10] = [
        NodeKind::Entry,
        NodeKind::Exploration,
        NodeKind::Trap,
        NodeKind::Elite,
        NodeKind::Boss,
        NodeKind::Harvest,
        NodeKind::RestCamp,
        NodeKind::Secret,
        NodeKind::Fork,
        NodeKind::Merge,
    ];

    /// The snake_case name used in files and messages.
    pub fn as_str(self) -> &'static str {
        match self {
            NodeKind::Entry => "entry",
            NodeKind::Exploration => "exploration",
            NodeKind::Trap => "trap",
            NodeKind::Elite => "elite",
            NodeKind::Boss => "boss",
            NodeKind::Harvest => "harvest",
            NodeKind::RestCamp => "rest_camp",
            NodeKind::Secret => "secret",
            NodeKind::Fork => "fork",
            NodeKind::Merge => "merge",
        }
    }

    /// Fork and merge rooms have no encounter: arriving resolves their exits at once.
    pub fn is_passthrough(self) -> bool {
        matches!(self, NodeKind::Fork | NodeKind::Merge)
    }
}

/// The six lock kinds.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum LockKind {
    #[default]
    None,
    PerceptionCheck,
    KeyRequired,
    LevelMin,
    RegionClear,
    StatCheck,
}

impl LockKind {
    pub const ALL: [LockKind; 6] = [
        LockKind::None,
        LockKind::PerceptionCheck,
        LockKind::KeyRequired,
        LockKind::LevelMin,
        LockKind::RegionClear,
        LockKind::StatCheck,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            LockKind::None => "none",
            LockKind::PerceptionCheck => "perception_check",
            LockKind::KeyRequired => "key_required",
            LockKind::LevelMin => "level_min",
            LockKind::RegionClear => "region_clear",
            LockKind::StatCheck => "stat_check",
        }
    }

    fn is_none(&self) -> bool {
        *self == LockKind::None
    }
}

fn is_false(b: &bool) -> bool {
    !*b
}
fn one() -> f64 {
    1.0
}
#[allow(clippy::float_cmp)] // exact default value, not arithmetic
fn is_one(x: &f64) -> bool {
    *x == 1.0
}
fn one_i32() -> i32 {
    1
}
fn is_one_i32(x: &i32) -> bool {
    *x == 1
}

/// Why a zone file could not be read at all (before validation).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error, Serialize)]
#[error("{message}")]
pub struct ParseError {
    /// 1-based line of the problem, when known.
    pub line: Option<usize>,
    /// 1-based column of the problem, when known.
    pub column: Option<usize>,
    /// JSON path of the problem (`nodes[3].lable`), when known.
    pub path: Option<String>,
    /// What went wrong, lowercase, no trailing period.
    pub message: String,
}

impl ParseError {
    /// `line 4, column 7: message` or `at nodes[2].kind: message`.
    pub fn located(&self) -> String {
        let mut out = String::new();
        if let (Some(l), Some(c)) = (self.line, self.column) {
            out.push_str(&format!("line {l}, column {c}: "));
        }
        if let Some(p) = self
            .path
            .as_deref()
            .filter(|p| !p.is_empty() && *p != "." && *p != "?")
        {
            out.push_str(&format!("at {p}: "));
        }
        out.push_str(&self.message);
        out
    }
}

/// Parses zone file text. Unknown fields, wrong types and malformed JSON are errors that name
/// the line, column and JSON path.
pub fn parse(text: &str) -> Result<ZoneFile, ParseError> {
    let file: ZoneFile = serde_json::from_str(text).map_err(|e| {
        let (line, column) = if e.line() > 0 {
            (Some(e.line()), Some(e.column()))
        } else {
            (None, None)
        };
        let message = strip_location(&e.to_string());
        let stop = if e.classify() == serde_json::error::Category::Eof {
            Stop::Eof
        } else if message.starts_with("unknown variant") {
            Stop::Variant
        } else {
            Stop::Value
        };
        ParseError {
            line,
            column,
            path: json_path_at(text, e.line(), e.column(), stop),
            message,
        }
    })?;
    if file.format != FORMAT_VERSION {
        return Err(ParseError {
            line: None,
            column: None,
            path: Some("format".into()),
            message: format!(
                "unsupported format {} (this zonegraph reads format {FORMAT_VERSION})",
                file.format
            ),
        });
    }
    match (&file.nodes, &file.edges, &file.room_kinds) {
        (Some(_), Some(_), None) | (None, None, Some(_)) => Ok(file),
        (_, _, Some(_)) => Err(shape_error(
            "give either nodes and edges, or room_kinds, not both",
        )),
        _ => Err(shape_error(
            "a zone needs both nodes and edges (or room_kinds for a linear zone)",
        )),
    }
}

/// What serde_json was reading when it stopped.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Stop {
    /// A value, or the key of a member.
    Value,
    /// The end of the input.
    Eof,
    /// An enum's variant name: a string, or the key of an object written for the enum
    /// (`{"variant": …}`), which names no member.
    Variant,
}

/// The JSON path (`nodes[3].lable`) of the value being read at 1-based `line` and byte
/// `column`, where serde_json stopped: a small scan of the text instead of tracking the path
/// through every `Deserialize` impl (which, in wasm, would duplicate all of them), giving
/// the path `serde_path_to_error` would. At the end of the input the path names only a member
/// whose value was left unfinished.
fn json_path_at(text: &str, line: usize, column: usize, stop: Stop) -> Option<String> {
    let eof = stop == Stop::Eof;
    let line_start = match line {
        0 | 1 => 0,
        _ => text.match_indices('\n').nth(line - 2)?.0 + 1,
    };
    let mut end = (line_start + column).min(text.len());
    // A wrong-type error on an object or array stops just inside it: the path is the
    // container's own, not its first element's.
    let before = text.get(..end)?.trim_end();
    if !eof && before.ends_with(['{', '[']) {
        end = before.len() - 1;
    }
    /// An open container: its current member (key, or element index and whether one began)
    /// and whether that member's value is complete.
    enum Frame {
        Object(Option<String>, bool),
        Array(usize, bool, bool),
    }
    // A value begins in the innermost container.
    fn begin(stack: &mut [Frame]) {
        if let Some(Frame::Array(_, started, _)) = stack.last_mut() {
            *started = true;
        }
    }
    fn finish(stack: &mut [Frame]) {
        match stack.last_mut() {
            Some(Frame::Object(_, done) | Frame::Array(_, _, done)) => *done = true,
            None => {}
        }
    }
    let mut stack: Vec<Frame> = Vec::new();
    let bytes = &text.as_bytes()[..end];
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'{' => {
                begin(&mut stack);
                stack.push(Frame::Object(None, false));
            }
            b'[' => {
                begin(&mut stack);
                stack.push(Frame::Array(0, false, false));
            }
            b'}' | b']' => {
                stack.pop();
                finish(&mut stack);
            }
            b',' => match stack.last_mut() {
                Some(Frame::Array(n, started, done)) => {
                    (*n, *started, *done) = (*n + 1, false, false)
                }
                Some(Frame::Object(key, done)) => (*key, *done) = (None, false),
                None => {}
            },
            b'"' => {
                let start = i + 1;
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                if let Some(Frame::Object(key @ None, _)) = stack.last_mut() {
                    // Raw key text: zone keys are plain ASCII names.
                    *key = Some(text[start..i.min(bytes.len())].to_string());
                } else {
                    begin(&mut stack);
                    finish(&mut stack);
                }
            }
            b'-' | b'0'..=b'9' | b't' | b'f' | b'n' => {
                begin(&mut stack);
                finish(&mut stack);
            }
            _ => {}
        }
        i += 1;
    }
    // A variant named by an object's key ends the path at the enum, before that key.
    if stop == Stop::Variant && matches!(stack.last(), Some(Frame::Object(Some(_), false))) {
        stack.pop();
    }
    let mut path = String::new();
    for frame in &stack {
        match frame {
            Frame::Object(Some(key), done) if !(eof && *done) => {
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(key);
            }
            Frame::Array(n, started, done) if !eof || (*started && !*done) => {
                path.push_str(&format!("[{n}]"));
            }
            _ => break,
        }
    }
    Some(path).filter(|p| !p.is_empty())
}

fn shape_error(message: &str) -> ParseError {
    ParseError {
        line: None,
        column: None,
        path: None,
        message: message.into(),
    }
}

/// serde_json appends " at line L column C"; we report those separately.
fn strip_location(msg: &str) -> String {
    match msg.rfind(" at line ") {
        Some(i) => msg[..i].to_string(),
        None => msg.to_string(),
    }
}

/// Serialises a zone file as pretty JSON with a trailing newline (the canonical form).
pub fn to_pretty_json(file: &ZoneFile) -> String {
    let mut s = serde_json::to_string_pretty(file).unwrap_or_default();
    s.push('\n');
    s
}

/// The JSON Schema of the zone file format.
#[cfg(feature = "schema")]
pub fn json_schema() -> String {
    let schema = schemars::schema_for!(ZoneFile);
    let mut s = serde_json::to_string_pretty(&schema).unwrap_or_default();
    s.push('\n');
    s
}

#[cfg(test)]
mod path_tests;

#[cfg(test)]
mod tests {
    use super::*;

    fn path_of(text: &str) -> Option<String> {
        parse(text).err().and_then(|e| e.path)
    }

    #[test]
    fn zone_files_are_json_but_not_schemas() {
        assert!(is_zone_file_name("crypt_valdris.json"));
        assert!(is_zone_file_name("a.b.json"));
        assert!(!is_zone_file_name("zone.schema.json"));
        assert!(!is_zone_file_name("README.md"));
        assert!(!is_zone_file_name("zone.json.bak"));
        assert!(!is_zone_file_name("zone.JSON"));
    }

    #[test]
    fn parse_errors_carry_the_json_path() {
        let zone = r#"{"format":1,"zone_id":"z","name":"Z","tier":1,"min_level":1,"max_level":3,
"nodes":[{"node_id":"z.a","kind":"entry","is_entry":true},{"node_id":"z.b","kind":"boss","is_boss":true,"content":{"loot_bias":"x"}}],
"edges":[{"from_node":"z.a","to_node":"z.b"}]}"#;
        assert_eq!(path_of(zone), Some("nodes[1].content.loot_bias".into()));
        let zone = zone.replace(r#""loot_bias":"x""#, r#""loot_bias":2"#);
        assert_eq!(path_of(&zone), None);
        let missing = zone.replace(r#"{"node_id":"z.b","#, "{");
        assert_eq!(path_of(&missing), Some("nodes[1]".into()));
        let escaped = zone.replace(r#""name":"Z""#, r#""name":"a \" , [ { \\","tier":"x""#);
        assert_eq!(path_of(&escaped), Some("tier".into()));
        assert_eq!(path_of("\"x\""), None);
        assert_eq!(
            path_of(r#"{"format": 1, "zone_id": "#),
            Some("zone_id".into())
        );
        assert_eq!(
            path_of(r#"{"format": 1, "nodes": [{"kind": "#),
            Some("nodes[0].kind".into())
        );
        assert_eq!(
            path_of(r#"{"format": 1, "nodes": [{"node_id": "a", "kind": "entry"}"#),
            Some("nodes".into())
        );
        assert_eq!(path_of(r#"{"format": 1, "nodes": []"#), None);
        let wrong_shape = zone.replace(
            r#""content":{"loot_bias":2}"#,
            r#""content":{"loot_bias":[]}"#,
        );
        assert_eq!(
            path_of(&wrong_shape),
            Some("nodes[1].content.loot_bias".into())
        );
    }
}
