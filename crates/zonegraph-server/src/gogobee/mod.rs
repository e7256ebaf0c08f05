//! gogobee, the game whose zones and players zonegraph takes over. Its database: `takeover`
//! (its XP curve and hit points against ours) and `carry` (its characters carried over as
//! first sheets, their progress written back). Its sources, the rest of this module: reads
//! gogobee's Go zone sources into zone files, pure, text in → zones and errors out
//! (`zonegraph import gogobee` is the shell around it).
//!
//! What is read, from every file given (the caller leaves out `_test.go` files):
//! - constants (`const Name Type = literal`, alone or in a group), which every value below
//!   may name: the `ZoneID`s, the `ZoneTier`s, the `NodeKind…` and `Lock…` kinds;
//! - `func zoneX() ZoneDefinition { return ZoneDefinition{…} }`: `ID`, `Display` (the name),
//!   `Tier`, `LevelMin`, `LevelMax` and `MaxRooms`; its other fields (faction, roster, boss,
//!   loot, hook) are not part of a zone graph;
//! - regions: `var … = map[ZoneID][]ExpeditionRegion{Zone: {{ID:, Name:, Order:}, …}}` and the
//!   statement `regionsByZone[Zone] = []ExpeditionRegion{…}` in any function;
//! - `func zoneXGraph() ZoneGraph` made of `name := []ZoneNode{…}`, `[]ZoneEdge{…}` or
//!   `[]ZoneNodeKind{…}` statements and `return BuildGraph(zone, nodes, edges)` or
//!   `return BuildLinearGraph(zone, kinds)`, the literals given by name or inline. Node fields
//!   `NodeID`, `Kind`, `Label`, `RegionID`, `IsEntry`, `IsBoss`, `PosX`, `PosY`, `Content`
//!   (`ZoneNodeContent{EncounterOverride, HarvestRef, LootBias, Narration, AllowSelfLoop}`);
//!   edge fields `From`, `To`, `Lock`, `LockData` (`map[string]any{…}`), `Hint`, `Weight`;
//! - a Tier-6 graph func returning `buildPostgameZoneGraph(pgZoneSpec{…})`, its locks given
//!   inline or by local funcs (`stat := func(s string, dc int, hint string) pgLock { return
//!   pgLock{…} }`, each call replaced by the value it returns): the graph gogobee's helper
//!   builds, by its port in `postgame`.
//!
//! gogobee's own defaults are kept: a zero `Weight` is 1 and an empty `Lock` is none
//! (`BuildGraph`), a zero `LootBias` is unset (1.0), a missing `PosX`/`PosY` is 0 when any
//! room of the zone has a hint (no hints at all: automatic layout). Node ids are gogobee's, so
//! a migrated run finds its room. A zone with a definition and no graph func is what gogobee
//! compiled it into (`compileLegacyZoneGraph`): `room_kinds` of `MaxRooms` (at least 6) rooms,
//! entry, explorations, a trap halfway, explorations, an elite, the boss, ids `<zone>.r1…`,
//! the ids gogobee's linear runs index.
//!
//! Nothing is guessed: a construct of another form where a value is needed (a helper
//! function, a loop, an expression, a constant whose value is not a literal) is an
//! [`ImportError`] at its file and line, and its zone is not produced. A zone without a graph
//! func becomes linear only when no graph func or file that was not read could be its graph.

pub mod carry;
mod convert;
mod lex;
mod postgame;
mod syntax;
pub mod takeover;

use serde::Serialize;
use zonegraph_core::ZoneFile;

pub use convert::legacy_kinds;

/// What cannot be read, where (1-based line and column, in characters), and the zone it
/// keeps from being produced when that is known.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ImportError {
    pub file: String,
    pub line: u32,
    pub column: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub zone: Option<String>,
    pub message: String,
}

/// Every zone read, sorted by id, and every error, sorted by place.
#[derive(Clone, Debug, PartialEq)]
pub struct Imported {
    pub zones: Vec<ZoneFile>,
    pub errors: Vec<ImportError>,
}

/// Reads gogobee's zones from Go sources given as `(file name, text)`.
pub fn import(sources: &[(String, String)]) -> Imported {
    let mut sorted: Vec<&(String, String)> = sources.iter().collect();
    sorted.sort_by(|a, b| a.0.cmp(&b.0));
    let mut files = Vec::new();
    let mut unreadable = Vec::new();
    let mut lex_errors = Vec::new();
    for (name, text) in sorted {
        let read = lex::lex(text)
            .map_err(|e| {
                let at = syntax::Pos {
                    line: e.line,
                    col: e.col,
                };
                (at, e.message)
            })
            .and_then(|tokens| match syntax::too_deep(&tokens) {
                Some(at) => Err((
                    at,
                    format!("brackets nested deeper than {} levels", syntax::MAX_NESTING),
                )),
                None => Ok(tokens),
            });
        match read {
            Ok(tokens) => files.push((name.as_str(), syntax::parse_file(&tokens))),
            Err((pos, message)) => {
                lex_errors.push(ImportError {
                    file: name.clone(),
                    line: pos.line,
                    column: pos.col,
                    zone: None,
                    message: format!("cannot read this file as Go: {message}"),
                });
                unreadable.push((name.clone(), pos));
            }
        }
    }
    let mut out = convert::convert(&convert::Parsed { files, unreadable });
    out.errors.extend(lex_errors);
    out.errors.sort_by(|a, b| {
        (&a.file, a.line, a.column, &a.message).cmp(&(&b.file, b.line, b.column, &b.message))
    });
    out
}
