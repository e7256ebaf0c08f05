//! From gogobee's declarations to zone files: constants resolved, each zone's definition,
//! regions and graph put together, and every construct that cannot be read reported where it
//! is written. This module holds the top-level `convert` and what its parts share.

mod consts;
mod definition;
mod expr;
mod graph;
mod linear;
mod regions;
mod rooms;
#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, BTreeSet};

use zonegraph_core::format::{FORMAT_VERSION, NodeFile, NodeKind, RegionFile, ZoneFile};

use super::postgame;
use super::syntax::{ExprKind, File, Pos, Stmt};
use super::{ImportError, Imported};
use consts::Consts;
use definition::definition;
use expr::composite;
use graph::graph_func;
pub use linear::legacy_kinds;
use regions::region_list;

/// The parsed files, by name, in the order given.
pub struct Parsed<'a> {
    pub files: Vec<(&'a str, File)>,
    /// Files that could not be lexed: they may hold graphs.
    pub unreadable: Vec<(String, Pos)>,
}

/// A place to report at.
#[derive(Clone, Copy)]
struct At<'a> {
    file: &'a str,
    pos: Pos,
}

/// A zone's definition, read.
struct Definition<'a> {
    at: At<'a>,
    name: String,
    tier: u8,
    min_level: u32,
    max_level: u32,
    max_rooms: i64,
}

/// A graph func's result, read.
enum Graph {
    Nodes(Vec<NodeFile>, Vec<zonegraph_core::format::EdgeFile>),
    Linear(Vec<NodeKind>),
}

struct GraphFunc<'a> {
    func: &'a str,
    at: At<'a>,
    /// `None` when something in it could not be read (reported).
    graph: Option<Graph>,
}

/// Collected errors, each with the zone it stops (if known).
#[derive(Default)]
struct Errors(Vec<ImportError>);

impl Errors {
    fn push(&mut self, at: At, zone: Option<&str>, message: String) {
        self.0.push(ImportError {
            file: at.file.to_string(),
            line: at.pos.line,
            column: at.pos.col,
            zone: zone.map(str::to_string),
            message,
        });
    }
}

/// Reads every zone of the parsed files.
pub fn convert(parsed: &Parsed) -> Imported {
    let consts = Consts::new(parsed);
    let mut errors = Errors::default();
    let mut defs: BTreeMap<String, Vec<Definition>> = BTreeMap::new();
    let mut graphs: BTreeMap<String, Vec<GraphFunc>> = BTreeMap::new();
    // Graph funcs that could not be read and name no zone: any linear zone may be theirs.
    let mut unattributed: Vec<(String, At)> = Vec::new();
    let mut regions: BTreeMap<String, Vec<(At, RegionFile)>> = BTreeMap::new();

    let helpers = ported_helpers(parsed, &mut errors);
    for (file, f) in &parsed.files {
        for func in f.funcs.iter().filter(|g| !g.method && !g.params) {
            let at = At { file, pos: func.at };
            match func.result.as_str() {
                "ZoneDefinition" => {
                    if let Some((id, def)) = definition(func, at, &consts, &mut errors) {
                        defs.entry(id).or_default().push(def);
                    }
                }
                "ZoneGraph" => {
                    let (zone, graph) = graph_func(func, at, &consts, &helpers, &mut errors);
                    match zone {
                        Some(z) => graphs.entry(z).or_default().push(GraphFunc {
                            func: &func.name,
                            at,
                            graph,
                        }),
                        None => unattributed.push((func.name.clone(), at)),
                    }
                }
                _ => {}
            }
        }
        for func in &f.funcs {
            for stmt in &func.body {
                if let Stmt::IndexAssign { key, value, at, .. } = stmt
                    && let Some(list) = composite(value, "[]ExpeditionRegion", false)
                {
                    let at = At { file, pos: *at };
                    region_list(key, list, at, &consts, &mut regions, &mut errors);
                }
            }
        }
        for var in &f.vars {
            let Some(ExprKind::Composite {
                ty: Some(ty),
                elems,
            }) = var.value.as_ref().map(|v| &v.kind)
            else {
                continue;
            };
            if ty != "map[ZoneID][]ExpeditionRegion" {
                continue;
            }
            for el in elems {
                let at = At {
                    file,
                    pos: el.value.at,
                };
                let (Some(key), Some(list)) =
                    (&el.key, composite(&el.value, "[]ExpeditionRegion", true))
                else {
                    errors.push(
                        at,
                        None,
                        format!(
                            "cannot read this entry of {}: an entry is read as `Zone: {{{{…}}, …}}`",
                            var.name
                        ),
                    );
                    continue;
                };
                region_list(key, list, at, &consts, &mut regions, &mut errors);
            }
        }
    }

    let ids: BTreeSet<&String> = defs.keys().chain(graphs.keys()).collect();
    let mut zones = Vec::new();
    for id in ids {
        let zone = Some(id.as_str());
        let mut fail = false;
        let defs = defs.get(id).map(Vec::as_slice).unwrap_or_default();
        let graphs = graphs.get(id).map(Vec::as_slice).unwrap_or_default();
        for dup in defs.iter().skip(1) {
            errors.push(
                dup.at,
                zone,
                format!(
                    "zone {id} is defined twice (also at {}:{})",
                    defs[0].at.file, defs[0].at.pos.line
                ),
            );
            fail = true;
        }
        for dup in graphs.iter().skip(1) {
            errors.push(
                dup.at,
                zone,
                format!(
                    "zone {id} has two graph funcs, {} and {} ({}:{})",
                    graphs[0].func, dup.func, graphs[0].at.file, graphs[0].at.pos.line
                ),
            );
            fail = true;
        }
        let Some(def) = defs.first() else {
            if let Some(g) = graphs.first() {
                errors.push(
                    g.at,
                    zone,
                    format!(
                        "zone {id} has a graph ({}) but no ZoneDefinition, so its name, tier and \
                         levels are unknown",
                        g.func
                    ),
                );
            }
            continue;
        };
        let graph = match graphs.first() {
            Some(GraphFunc { graph: Some(g), .. }) => g,
            Some(GraphFunc { graph: None, .. }) => continue, // reported where it failed
            None => {
                // gogobee compiles a zone without a graph func into a linear graph; that is
                // only sure when no unread graph func or file could be this zone's.
                for (func, at) in &unattributed {
                    errors.push(
                        def.at,
                        zone,
                        format!(
                            "zone {id} has no graph func the importer read, and {func} \
                             ({}:{}) could not be read and may be its graph; it is not imported \
                             as a linear zone",
                            at.file, at.pos.line
                        ),
                    );
                    fail = true;
                }
                for (file, _) in &parsed.unreadable {
                    errors.push(
                        def.at,
                        zone,
                        format!(
                            "zone {id} has no graph func the importer read, and {file} could not \
                             be read and may hold its graph; it is not imported as a linear zone"
                        ),
                    );
                    fail = true;
                }
                &Graph::Linear(legacy_kinds(def.max_rooms))
            }
        };
        if fail {
            continue;
        }
        let mut file = ZoneFile {
            schema: None,
            format: FORMAT_VERSION,
            zone_id: id.clone(),
            name: def.name.clone(),
            tier: def.tier,
            min_level: def.min_level,
            max_level: def.max_level,
            regions: regions
                .get(id)
                .map(|r| r.iter().map(|(_, r)| r.clone()).collect())
                .unwrap_or_default(),
            allow_loops: false,
            nodes: None,
            edges: None,
            room_kinds: None,
            keys: Default::default(),
            harvests: Default::default(),
        };
        match graph {
            Graph::Nodes(nodes, edges) => {
                file.nodes = Some(nodes.clone());
                file.edges = Some(edges.clone());
            }
            Graph::Linear(kinds) => file.room_kinds = Some(kinds.clone()),
        }
        zones.push(file);
    }
    // A zone with an error anywhere (its regions, say) is not written.
    let failed: BTreeSet<&str> = errors.0.iter().filter_map(|e| e.zone.as_deref()).collect();
    zones.retain(|z| !failed.contains(z.zone_id.as_str()));
    let mut errors = errors.0;
    errors.sort_by(|a, b| {
        (&a.file, a.line, a.column, &a.message).cmp(&(&b.file, b.line, b.column, &b.message))
    });
    Imported { zones, errors }
}

/// gogobee's helpers that [`postgame::build`] ports, as the sources define them: an error
/// at each whose body is not the one ported, and what a graph built by them then says.
fn ported_helpers(parsed: &Parsed, errors: &mut Errors) -> Result<(), String> {
    let mut changed = Vec::new();
    for (file, f) in &parsed.files {
        for func in f.funcs.iter().filter(|g| !g.method) {
            let Some((name, ported)) = postgame::PORTED
                .iter()
                .find(|(n, d)| *n == func.name && *d != func.body_digest)
            else {
                continue;
            };
            errors.push(
                At { file, pos: func.at },
                None,
                format!(
                    "{name} is not the version the importer ports: its body (digest \
                     {:016x}) differs from the one zonegraph builds Tier-6 graphs as ({ported:016x}), \
                     so the graphs it builds are not read until the port follows it",
                    func.body_digest
                ),
            );
            changed.push(format!("{name} ({file}:{})", func.at.line));
        }
    }
    if changed.is_empty() {
        Ok(())
    } else {
        Err(changed.join(", "))
    }
}
