//! From gogobee's declarations to zone files: constants resolved, each zone's definition,
//! regions and graph put together, and every construct that cannot be read reported where it
//! is written.

use std::collections::{BTreeMap, BTreeSet};

use zonegraph_core::format::{
    ContentFile, EdgeFile, FORMAT_VERSION, LockKind, NodeFile, NodeKind, RegionFile, ZoneFile,
};

use super::postgame;
use super::syntax::{Binding, Elem, Expr, ExprKind, File, Func, Pos, Stmt};
use super::{ImportError, Imported};

/// How many constants a name may lead through (`A = B`, `B = "x"`) before giving up.
const MAX_CONST_CHAIN: usize = 16;

/// What the forms the importer reads are, for the diagnostics that meet another.
const GRAPH_FORMS: &str = "a graph func is read when it is made of `name := []ZoneNode{…}`, \
     `[]ZoneEdge{…}`, `[]ZoneNodeKind{…}`, `pgZoneSpec{…}`, literal or `func(…) T { return … }` \
     statements and `return BuildGraph(…)`, `return BuildLinearGraph(…)` or \
     `return buildPostgameZoneGraph(…)`";

/// How deep a local func may call another before giving up.
const MAX_EXPANSION: usize = 16;

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

/// The constants of every file, by name (the first declaration wins; Go allows one), and
/// inside a graph func its local literals (`r1 := "region"`), which shadow them.
#[derive(Clone)]
struct Consts<'a> {
    by_name: BTreeMap<&'a str, (&'a str, &'a Binding)>,
    locals: BTreeMap<&'a str, &'a Expr>,
}

impl<'a> Consts<'a> {
    fn new(parsed: &'a Parsed<'a>) -> Self {
        let mut by_name = BTreeMap::new();
        for (file, f) in &parsed.files {
            for c in &f.consts {
                by_name.entry(c.name.as_str()).or_insert((*file, c));
            }
        }
        Consts {
            by_name,
            locals: BTreeMap::new(),
        }
    }

    /// These constants with `locals` in scope.
    fn with_locals(&self, locals: BTreeMap<&'a str, &'a Expr>) -> Self {
        Consts {
            by_name: self.by_name.clone(),
            locals,
        }
    }

    /// Whether `e` is a literal (or names one): what a local may be bound to.
    fn is_literal(&self, e: &Expr) -> bool {
        self.literal(e).is_ok_and(|l| {
            matches!(
                &l.kind,
                ExprKind::Str(_) | ExprKind::Int(_) | ExprKind::Float(_) | ExprKind::Neg(_)
            ) || matches!(&l.kind, ExprKind::Name(n) if n == "true" || n == "false")
        })
    }

    /// The literal a name stands for, following constants; errors say why not.
    fn literal<'e>(&'e self, e: &'e Expr) -> Result<&'e Expr, String> {
        let mut e = e;
        for _ in 0..MAX_CONST_CHAIN {
            let ExprKind::Name(name) = &e.kind else {
                return Ok(e);
            };
            if matches!(name.as_str(), "true" | "false" | "nil") {
                return Ok(e);
            }
            if let Some(local) = self.locals.get(name.as_str()) {
                e = local;
                continue;
            }
            let Some((file, c)) = self.by_name.get(name.as_str()) else {
                return Err(format!(
                    "{name} is not a constant declared in the sources read"
                ));
            };
            if matches!(&c.value, Some(Expr { kind: ExprKind::Name(v), .. }) if v == "iota") {
                return Err(format!(
                    "constant {name} ({file}:{}) is set by iota, which the importer does not count",
                    c.at.line
                ));
            }
            let Some(v) = &c.value else {
                return Err(format!(
                    "constant {name} ({file}:{}) has no value the importer reads (iota or an \
                     implied repetition)",
                    c.at.line
                ));
            };
            e = v;
        }
        Err("a chain of constants too long to follow".into())
    }

    /// Whether `name` is a constant declared with type `ZoneID`.
    fn is_zone_id(&self, name: &str) -> bool {
        self.by_name
            .get(name)
            .is_some_and(|(_, c)| c.ty.as_deref() == Some("ZoneID"))
    }

    fn string(&self, e: &Expr) -> Result<String, String> {
        match &self.literal(e)?.kind {
            ExprKind::Str(s) => Ok(s.clone()),
            // A conversion such as `ZoneID("x")`.
            ExprKind::Call { fun, args }
                if args.len() == 1
                    && matches!(
                        fun.as_str(),
                        "ZoneID" | "ZoneNodeKind" | "ZoneEdgeLockKind" | "string"
                    ) =>
            {
                self.string(&args[0])
            }
            _ => Err(format!("{} is not a string", quoted(e))),
        }
    }

    fn int(&self, e: &Expr) -> Result<i64, String> {
        let lit = self.literal(e)?;
        if let ExprKind::Call { fun, args } = &lit.kind
            && args.len() == 1
            && matches!(fun.as_str(), "ZoneTier" | "int")
        {
            return self.int(&args[0]);
        }
        let (neg, inner) = match &lit.kind {
            ExprKind::Neg(inner) => (true, self.literal(inner)?),
            _ => (false, lit),
        };
        let ExprKind::Int(text) = &inner.kind else {
            return Err(format!("{} is not an integer", quoted(e)));
        };
        let v = parse_int(text).ok_or_else(|| format!("{text} is not an integer"))?;
        Ok(if neg { -v } else { v })
    }

    fn float(&self, e: &Expr) -> Result<f64, String> {
        let lit = self.literal(e)?;
        let (neg, inner) = match &lit.kind {
            ExprKind::Neg(inner) => (true, self.literal(inner)?),
            _ => (false, lit),
        };
        let v = match &inner.kind {
            ExprKind::Float(text) => text
                .replace('_', "")
                .parse::<f64>()
                .map_err(|_| format!("{text} is not a decimal number"))?,
            ExprKind::Int(text) => {
                parse_int(text).ok_or_else(|| format!("{text} is not an integer"))? as f64
            }
            _ => return Err(format!("{} is not a number", quoted(e))),
        };
        Ok(if neg { -v } else { v })
    }

    fn bool(&self, e: &Expr) -> Result<bool, String> {
        match &self.literal(e)?.kind {
            ExprKind::Name(n) if n == "true" => Ok(true),
            ExprKind::Name(n) if n == "false" => Ok(false),
            _ => Err(format!("{} is not true or false", quoted(e))),
        }
    }

    /// A lock's data value as JSON.
    fn json(&self, e: &Expr) -> Result<serde_json::Value, String> {
        let lit = self.literal(e)?;
        Ok(match &lit.kind {
            ExprKind::Str(s) => s.clone().into(),
            ExprKind::Name(n) if n == "true" || n == "false" => (n == "true").into(),
            ExprKind::Int(_) => self.int(e)?.into(),
            ExprKind::Neg(inner) if matches!(inner.kind, ExprKind::Int(_)) => self.int(e)?.into(),
            ExprKind::Float(_) | ExprKind::Neg(_) => serde_json::Number::from_f64(self.float(e)?)
                .map(serde_json::Value::Number)
                .ok_or_else(|| format!("{} is not a finite number", quoted(e)))?,
            _ => return Err(format!("{} is not a string, number or bool", quoted(e))),
        })
    }
}

impl postgame::Values for Consts<'_> {
    fn string(&self, e: &Expr) -> Result<String, String> {
        Consts::string(self, e)
    }

    fn float(&self, e: &Expr) -> Result<f64, String> {
        Consts::float(self, e)
    }

    fn node_kind(&self, e: &Expr) -> Result<Option<NodeKind>, String> {
        let s = Consts::string(self, e)?;
        if s.is_empty() {
            return Ok(None);
        }
        node_kind(&s)
            .map(Some)
            .ok_or_else(|| format!("room kind {s:?}{} is not one of zonegraph's", named(e)))
    }

    fn lock_kind(&self, e: &Expr) -> Result<Option<LockKind>, String> {
        let s = Consts::string(self, e)?;
        if s.is_empty() {
            return Ok(None);
        }
        lock_kind(&s)
            .map(Some)
            .ok_or_else(|| format!("lock kind {s:?}{} is not one of zonegraph's", named(e)))
    }

    fn lock_data(&self, e: &Expr) -> Result<BTreeMap<String, serde_json::Value>, String> {
        lock_data(e, self)
    }
}

/// Go's integer literal syntaxes (`12`, `0x1F`, `0o17`, `017`, `0b101`, `1_000`).
fn parse_int(text: &str) -> Option<i64> {
    let t = text.replace('_', "");
    let lower = t.to_ascii_lowercase();
    if let Some(h) = lower.strip_prefix("0x") {
        i64::from_str_radix(h, 16).ok()
    } else if let Some(o) = lower.strip_prefix("0o") {
        i64::from_str_radix(o, 8).ok()
    } else if let Some(b) = lower.strip_prefix("0b") {
        i64::from_str_radix(b, 2).ok()
    } else if lower.len() > 1 && lower.starts_with('0') {
        i64::from_str_radix(&lower[1..], 8).ok()
    } else {
        lower.parse().ok()
    }
}

/// An expression as a diagnostic quotes it.
fn quoted(e: &Expr) -> String {
    match &e.kind {
        ExprKind::Str(s) => format!("{s:?}"),
        ExprKind::Int(s) | ExprKind::Float(s) | ExprKind::Name(s) => s.clone(),
        ExprKind::Char(c) => format!("{c:?}"),
        ExprKind::Neg(inner) => format!("-{}", quoted(inner)),
        ExprKind::Call { fun, .. } => format!("{fun}(…)"),
        ExprKind::Composite { ty, .. } => format!("{}{{…}}", ty.as_deref().unwrap_or("")),
        ExprKind::Func { result, .. } => format!("func(…) {result} {{…}}"),
        ExprKind::Unread(s) => format!("`{s}`"),
    }
}

/// An expression inside a quotation: what was written, for one not read.
fn shown(e: &Expr) -> String {
    match &e.kind {
        ExprKind::Unread(s) => s.clone(),
        _ => quoted(e),
    }
}

/// ` (Name)` when `e` is a constant's name, for a message about its value.
fn named(e: &Expr) -> String {
    match &e.kind {
        ExprKind::Name(n) => format!(" ({n})"),
        _ => String::new(),
    }
}

/// gogobee's kind names, which are this format's.
fn node_kind(name: &str) -> Option<NodeKind> {
    NodeKind::ALL.into_iter().find(|k| k.as_str() == name)
}

fn lock_kind(name: &str) -> Option<LockKind> {
    LockKind::ALL.into_iter().find(|k| k.as_str() == name)
}

/// The fields of a struct literal, by name; a positional element or a repeated field is an
/// error (reported at `at`).
fn fields<'e>(
    elems: &'e [Elem],
    what: &str,
    at: At,
    zone: Option<&str>,
    errors: &mut Errors,
) -> Option<Vec<(&'e str, &'e Expr)>> {
    let mut out: Vec<(&str, &Expr)> = Vec::new();
    for el in elems {
        match el.key.as_ref().map(|k| &k.kind) {
            Some(ExprKind::Name(k)) if !k.contains('.') => {
                if out.iter().any(|(seen, _)| seen == k) {
                    errors.push(
                        At {
                            pos: el.value.at,
                            ..at
                        },
                        zone,
                        format!("{what} sets {k} twice"),
                    );
                    return None;
                }
                out.push((k.as_str(), &el.value));
            }
            _ => {
                errors.push(
                    At { pos: el.value.at, ..at },
                    zone,
                    format!("{what} has an element without a field name; only `Field: value` elements are read"),
                );
                return None;
            }
        }
    }
    Some(out)
}

/// The elements of a composite literal of type `ty` (or of an elided type when `elided`).
fn composite<'e>(e: &'e Expr, ty: &str, elided: bool) -> Option<&'e [Elem]> {
    match &e.kind {
        ExprKind::Composite { ty: t, elems }
            if t.as_deref() == Some(ty) || (elided && t.is_none()) =>
        {
            Some(elems)
        }
        _ => None,
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

/// The room kinds gogobee compiled a zone without a graph func into (`compileLegacyZoneGraph`):
/// `MaxRooms` rooms (at least 6), entry, explorations, a trap halfway through them, more
/// explorations, an elite and the boss.
pub fn legacy_kinds(max_rooms: i64) -> Vec<NodeKind> {
    let total = usize::try_from(max_rooms).unwrap_or(0).max(6);
    let explorations = total - 4;
    let before = (explorations / 2).max(1);
    let after = explorations - before;
    let mut kinds = vec![NodeKind::Entry];
    kinds.extend(std::iter::repeat_n(NodeKind::Exploration, before));
    kinds.push(NodeKind::Trap);
    kinds.extend(std::iter::repeat_n(NodeKind::Exploration, after));
    kinds.extend([NodeKind::Elite, NodeKind::Boss]);
    kinds
}

/// `func zoneX() ZoneDefinition { return ZoneDefinition{…} }`: the zone id and what the
/// format needs; other fields (faction, enemies, loot, …) are not part of a zone graph.
fn definition<'a>(
    func: &'a Func,
    at: At<'a>,
    consts: &Consts,
    errors: &mut Errors,
) -> Option<(String, Definition<'a>)> {
    let lit = match &func.body[..] {
        [Stmt::Return(e, _)] => composite(e, "ZoneDefinition", false),
        _ => None,
    };
    let Some(elems) = lit else {
        errors.push(
            at,
            None,
            format!(
                "cannot read zone definition func {}: its body is not `return ZoneDefinition{{…}}`",
                func.name
            ),
        );
        return None;
    };
    let lit_at = match &func.body[0] {
        Stmt::Return(e, _) => At { pos: e.at, ..at },
        _ => at,
    };
    let what = format!("ZoneDefinition in {}", func.name);
    let fields = fields(elems, &what, lit_at, None, errors)?;
    let get = |name: &str| fields.iter().find(|(k, _)| *k == name).map(|(_, v)| *v);
    let Some(id_expr) = get("ID") else {
        errors.push(lit_at, None, format!("{what} sets no ID"));
        return None;
    };
    let id = match consts.string(id_expr) {
        Ok(id) => id,
        Err(e) => {
            errors.push(
                At {
                    pos: id_expr.at,
                    ..at
                },
                None,
                format!("cannot read the ID of {what}: {e}"),
            );
            return None;
        }
    };
    let zone = Some(id.as_str());
    let mut ok = true;
    let mut need = |field: &str| -> Option<&Expr> {
        let v = get(field);
        if v.is_none() {
            errors.push(lit_at, zone, format!("zone {id} sets no {field}"));
            ok = false;
        }
        v
    };
    let (display, tier, min, max) = (
        need("Display"),
        need("Tier"),
        need("LevelMin"),
        need("LevelMax"),
    );
    let mut read = |field: &str, e: Option<&Expr>, f: &dyn Fn(&Expr) -> Result<i64, String>| {
        let e = e?;
        match f(e) {
            Ok(v) => Some(v),
            Err(msg) => {
                errors.push(
                    At { pos: e.at, ..at },
                    zone,
                    format!("cannot read {field} of zone {id}: {msg}"),
                );
                None
            }
        }
    };
    let tier = read("Tier", tier, &|e| consts.int(e));
    let min = read("LevelMin", min, &|e| consts.int(e));
    let max = read("LevelMax", max, &|e| consts.int(e));
    let max_rooms = read("MaxRooms", get("MaxRooms"), &|e| consts.int(e)).unwrap_or(0);
    let name = display.and_then(|e| match consts.string(e) {
        Ok(s) => Some(s),
        Err(msg) => {
            errors.push(
                At { pos: e.at, ..at },
                zone,
                format!("cannot read Display of zone {id}: {msg}"),
            );
            None
        }
    });
    let (Some(name), Some(tier), Some(min), Some(max), true) = (name, tier, min, max, ok) else {
        return None;
    };
    let Some(tier) = u8::try_from(tier).ok().filter(|t| (1..=6).contains(t)) else {
        errors.push(
            lit_at,
            zone,
            format!("zone {id} has tier {tier}, outside zonegraph's 1–6"),
        );
        return None;
    };
    let (Ok(min_level), Ok(max_level)) = (u32::try_from(min), u32::try_from(max)) else {
        errors.push(
            lit_at,
            zone,
            format!("zone {id} has a negative level ({min}–{max})"),
        );
        return None;
    };
    Some((
        id,
        Definition {
            at: lit_at,
            name,
            tier,
            min_level,
            max_level,
            max_rooms,
        },
    ))
}

/// A local func the graph func calls: `name := func(params) T { return value }`.
struct Template<'a> {
    params: &'a [String],
    value: &'a Expr,
}

/// The zone a graph func belongs to, and its graph when every statement of it was read.
fn graph_func<'a>(
    func: &'a Func,
    at: At,
    consts: &Consts<'a>,
    helpers: &Result<(), String>,
    errors: &mut Errors,
) -> (Option<String>, Option<Graph>) {
    let here = |pos: Pos| At { pos, ..at };
    let mut locals: BTreeMap<&str, &Expr> = BTreeMap::new();
    let mut literals: BTreeMap<&'a str, &'a Expr> = BTreeMap::new();
    let mut templates: BTreeMap<&str, Template> = BTreeMap::new();
    let mut failures: Vec<(Pos, String)> = Vec::new();
    let mut ret: Option<(&Expr, Pos)> = None;
    for stmt in &func.body {
        match stmt {
            Stmt::Define(name, e, pos) => {
                let known = ["[]ZoneNode", "[]ZoneEdge", "[]ZoneNodeKind", "pgZoneSpec"]
                    .iter()
                    .any(|ty| composite(e, ty, false).is_some());
                if known {
                    locals.insert(name, e);
                } else if let ExprKind::Func { params, body, .. } = &e.kind {
                    match (params, &body[..]) {
                        (Some(params), [Stmt::Return(value, _)]) => {
                            templates.insert(name, Template { params, value });
                        }
                        _ => failures.push((
                            *pos,
                            format!(
                                "cannot read `{name} := {}` in {}: a local func is read when its \
                                 parameters are named and its body is one `return` of a value",
                                quoted(e),
                                func.name
                            ),
                        )),
                    }
                } else if consts.with_locals(literals.clone()).is_literal(e) {
                    literals.insert(name, e);
                } else {
                    failures.push((
                        *pos,
                        format!(
                            "cannot read `{name} := {}` in {}: {GRAPH_FORMS}",
                            shown(e),
                            func.name
                        ),
                    ));
                }
            }
            Stmt::Return(e, pos) if ret.is_none() => ret = Some((e, *pos)),
            Stmt::Return(_, pos) => failures.push((
                *pos,
                format!("{} returns more than once; {GRAPH_FORMS}", func.name),
            )),
            Stmt::IndexAssign { at: pos, .. } => failures.push((
                *pos,
                format!("cannot read an assignment in {}: {GRAPH_FORMS}", func.name),
            )),
            Stmt::Other(text, pos) => failures.push((
                *pos,
                format!("cannot read `{text}` in {}: {GRAPH_FORMS}", func.name),
            )),
        }
    }
    let consts = &consts.with_locals(literals);
    let call = ret.and_then(|(e, pos)| match &e.kind {
        ExprKind::Call { fun, args } => Some((fun.as_str(), args.as_slice(), pos)),
        _ => None,
    });
    // The builder's arguments, each a literal given in the call or by name, with the calls of
    // local funcs in them expanded.
    let mut unexpanded = Vec::new();
    let args: Vec<Option<Expr>> = call.map_or_else(Vec::new, |(_, args, _)| {
        args.iter()
            .map(|e| {
                let e = match &e.kind {
                    ExprKind::Name(n) => locals.get(n.as_str()).copied()?,
                    _ => e,
                };
                Some(expand(e, &templates, 0, &mut unexpanded))
            })
            .collect()
    });
    // A call left unexpanded is reported there, once.
    let unexpanded_at: BTreeSet<Pos> = unexpanded.iter().map(|(p, _)| *p).collect();
    failures.extend(unexpanded);
    let arg = |k: usize| args.get(k).and_then(Option::as_ref);
    // Which zone: the builder's first argument (the spec's zoneID for a Tier-6 graph), or
    // else the one ZoneID constant it names.
    let mut zone = None;
    let mut spec = None;
    match call {
        Some(("BuildGraph" | "BuildLinearGraph", args, _)) if !args.is_empty() => {
            match consts.string(&args[0]) {
                Ok(z) => zone = Some(z),
                Err(msg) => failures.push((
                    args[0].at,
                    format!("cannot read the zone of {}: {msg}", func.name),
                )),
            }
        }
        Some((postgame::BUILDER, [given], pos)) => match arg(0) {
            Some(e) => {
                let read = postgame::read(e, consts);
                zone = read.zone;
                failures.extend(
                    read.errors
                        .into_iter()
                        .filter(|(p, _)| !unexpanded_at.contains(p)),
                );
                spec = read.spec;
                if let Err(changed) = helpers {
                    failures.push((
                        pos,
                        format!(
                            "cannot read the graph of {}: the helpers it is built by differ \
                             from the versions the importer ports ({changed})",
                            func.name
                        ),
                    ));
                }
            }
            None if failures.is_empty() => failures.push((
                given.at,
                format!(
                    "cannot read the spec given to {} in {}: it is a `pgZoneSpec{{…}}` literal \
                     or a name defined as one above",
                    postgame::BUILDER,
                    func.name
                ),
            )),
            None => {}
        },
        Some((fun, _, pos)) => failures.push((
            pos,
            format!(
                "cannot read the graph of {}: it is built by {fun}(…), a function the importer \
                 does not run; {GRAPH_FORMS}",
                func.name
            ),
        )),
        None => failures.push((
            ret.map_or(func.at, |(_, p)| p),
            match ret {
                Some((e, _)) => format!(
                    "cannot read `return {}` in {}: {GRAPH_FORMS}",
                    shown(e),
                    func.name
                ),
                None => format!("{} has no return statement; {GRAPH_FORMS}", func.name),
            },
        )),
    }
    if zone.is_none() {
        let named: BTreeSet<&str> = func
            .names
            .iter()
            .map(|(n, _)| n.as_str())
            .filter(|n| consts.is_zone_id(n))
            .collect();
        if let [one] = named.into_iter().collect::<Vec<_>>()[..] {
            zone = consts
                .string(&Expr {
                    kind: ExprKind::Name(one.to_string()),
                    at: func.at,
                })
                .ok();
        }
    }
    let mut graph = None;
    if failures.is_empty()
        && let Some((fun, args, pos)) = call
    {
        let z = zone.as_deref();
        graph = match (fun, args.len()) {
            ("BuildGraph", 3) => match (
                arg(1).and_then(|e| composite(e, "[]ZoneNode", false)),
                arg(2).and_then(|e| composite(e, "[]ZoneEdge", false)),
            ) {
                (Some(n), Some(e)) => {
                    let nodes = nodes(n, at, z, consts, errors);
                    let edges = edges(e, at, z, consts, errors);
                    nodes.zip(edges).map(|(n, e)| Graph::Nodes(n, e))
                }
                _ => {
                    failures.push((
                        pos,
                        format!(
                            "cannot read the nodes and edges given to BuildGraph in {}: each is \
                             a `[]ZoneNode{{…}}` / `[]ZoneEdge{{…}}` literal or a name defined \
                             as one above",
                            func.name
                        ),
                    ));
                    None
                }
            },
            ("BuildLinearGraph", 2) => {
                match arg(1).and_then(|e| composite(e, "[]ZoneNodeKind", false)) {
                    Some(seq) => linear(seq, at, z, consts, errors).map(Graph::Linear),
                    None => {
                        failures.push((
                            pos,
                            format!(
                                "cannot read the room kinds given to BuildLinearGraph in {}: they \
                             are a `[]ZoneNodeKind{{…}}` literal or a name defined as one above",
                                func.name
                            ),
                        ));
                        None
                    }
                }
            }
            (postgame::BUILDER, 1) => spec.as_ref().map(|s| {
                let (nodes, edges) = postgame::build(s);
                Graph::Nodes(nodes, edges)
            }),
            _ => {
                failures.push((
                    pos,
                    format!("{fun} in {} has {} arguments", func.name, args.len()),
                ));
                None
            }
        };
    }
    let zone_ref = zone.as_deref();
    for (pos, msg) in failures {
        errors.push(here(pos), zone_ref, msg);
    }
    (zone, graph)
}

/// `e` with every call of a local func replaced by the value it returns, its parameters
/// bound to the call's arguments; a call that does not match its func is left as written,
/// with an error at it.
fn expand(
    e: &Expr,
    templates: &BTreeMap<&str, Template>,
    depth: usize,
    failures: &mut Vec<(Pos, String)>,
) -> Expr {
    let kind = match &e.kind {
        ExprKind::Call { fun, args } => {
            let args: Vec<Expr> = args
                .iter()
                .map(|a| expand(a, templates, depth, failures))
                .collect();
            if let Some(t) = templates.get(fun.as_str()) {
                if args.len() != t.params.len() {
                    let n = |k: usize| format!("{k} argument{}", if k == 1 { "" } else { "s" });
                    failures.push((
                        e.at,
                        format!(
                            "{fun} takes {} and is given {}",
                            n(t.params.len()),
                            args.len()
                        ),
                    ));
                } else if depth >= MAX_EXPANSION {
                    failures.push((
                        e.at,
                        format!("{fun} calls local funcs too deeply to follow"),
                    ));
                } else {
                    let bound: BTreeMap<&str, &Expr> =
                        t.params.iter().map(String::as_str).zip(&args).collect();
                    return expand(&bind(t.value, &bound), templates, depth + 1, failures);
                }
            }
            ExprKind::Call {
                fun: fun.clone(),
                args,
            }
        }
        ExprKind::Composite { ty, elems } => ExprKind::Composite {
            ty: ty.clone(),
            elems: elems
                .iter()
                .map(|el| Elem {
                    key: el.key.clone(),
                    value: expand(&el.value, templates, depth, failures),
                })
                .collect(),
        },
        _ => return e.clone(),
    };
    Expr { kind, at: e.at }
}

/// `e` with the names in `bound` replaced by their values (the keys of a struct literal are
/// its field names, never replaced; those of a map literal are values).
fn bind(e: &Expr, bound: &BTreeMap<&str, &Expr>) -> Expr {
    let kind = match &e.kind {
        ExprKind::Name(n) => match bound.get(n.as_str()) {
            Some(v) => return (*v).clone(),
            None => e.kind.clone(),
        },
        ExprKind::Neg(inner) => ExprKind::Neg(Box::new(bind(inner, bound))),
        ExprKind::Call { fun, args } => ExprKind::Call {
            fun: fun.clone(),
            args: args.iter().map(|a| bind(a, bound)).collect(),
        },
        ExprKind::Composite { ty, elems } => {
            let map = ty.as_deref().is_some_and(|t| t.starts_with("map["));
            ExprKind::Composite {
                ty: ty.clone(),
                elems: elems
                    .iter()
                    .map(|el| Elem {
                        key: match &el.key {
                            Some(k) if map => Some(bind(k, bound)),
                            k => k.clone(),
                        },
                        value: bind(&el.value, bound),
                    })
                    .collect(),
            }
        }
        _ => e.kind.clone(),
    };
    Expr { kind, at: e.at }
}

fn nodes(
    elems: &[Elem],
    at: At,
    zone: Option<&str>,
    consts: &Consts,
    errors: &mut Errors,
) -> Option<Vec<NodeFile>> {
    let mut out = Vec::new();
    let mut ok = true;
    let mut any_pos = false;
    let mut positions = Vec::new();
    for el in elems {
        let here = At {
            pos: el.value.at,
            ..at
        };
        let Some(elems) = composite(&el.value, "ZoneNode", true) else {
            errors.push(
                here,
                zone,
                format!("cannot read {} as a ZoneNode{{…}}", quoted(&el.value)),
            );
            ok = false;
            continue;
        };
        let Some(f) = fields(elems, "a ZoneNode", here, zone, errors) else {
            ok = false;
            continue;
        };
        let mut n = NodeFile::plain("", NodeKind::Exploration, "", 0, 0);
        let (mut x, mut y) = (None, None);
        let (mut has_id, mut has_kind) = (false, false);
        for (k, v) in f {
            let vat = At { pos: v.at, ..at };
            has_id |= k == "NodeID";
            has_kind |= k == "Kind";
            let r: Result<(), String> = (|| {
                match k {
                    "NodeID" => n.node_id = consts.string(v)?,
                    "Kind" => {
                        let s = consts.string(v)?;
                        n.kind = node_kind(&s).ok_or_else(|| {
                            format!("room kind {s:?}{} is not one of zonegraph's", named(v))
                        })?;
                    }
                    "Label" => n.label = consts.string(v)?,
                    "RegionID" => n.region_id = consts.string(v)?,
                    "IsEntry" => n.is_entry = consts.bool(v)?,
                    "IsBoss" => n.is_boss = consts.bool(v)?,
                    "PosX" => x = Some(pos_hint(consts.int(v)?)?),
                    "PosY" => y = Some(pos_hint(consts.int(v)?)?),
                    "ZoneID" => {} // BuildGraph sets every node's zone to its own
                    "Content" => n.content = content(v, consts)?,
                    other => {
                        return Err(format!("ZoneNode has no field {other} the importer reads"));
                    }
                }
                Ok(())
            })();
            if let Err(msg) = r {
                errors.push(vat, zone, format!("cannot read {k} of a room: {msg}"));
                ok = false;
            }
        }
        if !has_id {
            errors.push(here, zone, "a ZoneNode sets no NodeID".into());
            ok = false;
        }
        if !has_kind {
            errors.push(here, zone, format!("room {} sets no Kind", n.node_id));
            ok = false;
        }
        any_pos |= x.is_some() || y.is_some();
        positions.push((x, y));
        out.push(n);
    }
    // Go's zero value: a room without PosX sits at 0, unless the zone gives no hints at all.
    if any_pos {
        for (n, (x, y)) in out.iter_mut().zip(positions) {
            n.pos_x = Some(x.unwrap_or(0));
            n.pos_y = Some(y.unwrap_or(0));
        }
    } else {
        for n in &mut out {
            (n.pos_x, n.pos_y) = (None, None);
        }
    }
    ok.then_some(out)
}

fn pos_hint(v: i64) -> Result<i32, String> {
    i32::try_from(v).map_err(|_| format!("{v} is out of range"))
}

fn content(e: &Expr, consts: &Consts) -> Result<ContentFile, String> {
    let Some(elems) = composite(e, "ZoneNodeContent", true) else {
        return Err(format!(
            "{} is not a ZoneNodeContent{{…}} literal",
            quoted(e)
        ));
    };
    let mut c = ContentFile::default();
    for el in elems {
        let Some(ExprKind::Name(k)) = el.key.as_ref().map(|k| &k.kind) else {
            return Err("a ZoneNodeContent element has no field name".into());
        };
        let v = &el.value;
        let field = |r: Result<(), String>| r.map_err(|m| format!("{k}: {m}"));
        match k.as_str() {
            "EncounterOverride" => field(consts.string(v).map(|s| c.encounter_override = s))?,
            "HarvestRef" => field(consts.string(v).map(|s| c.harvest_ref = s))?,
            "Narration" => field(consts.string(v).map(|s| c.narration = s))?,
            "AllowSelfLoop" => field(consts.bool(v).map(|b| c.allow_self_loop = b))?,
            // Zero is Go's unset value: the end-of-room roll is not scaled.
            "LootBias" => field(
                consts
                    .float(v)
                    .map(|b| c.loot_bias = if b == 0.0 { 1.0 } else { b }),
            )?,
            other => {
                return Err(format!(
                    "ZoneNodeContent has no field {other} the importer reads"
                ));
            }
        }
    }
    Ok(c)
}

fn edges(
    elems: &[Elem],
    at: At,
    zone: Option<&str>,
    consts: &Consts,
    errors: &mut Errors,
) -> Option<Vec<EdgeFile>> {
    let mut out = Vec::new();
    let mut ok = true;
    for el in elems {
        let here = At {
            pos: el.value.at,
            ..at
        };
        let Some(elems) = composite(&el.value, "ZoneEdge", true) else {
            errors.push(
                here,
                zone,
                format!("cannot read {} as a ZoneEdge{{…}}", quoted(&el.value)),
            );
            ok = false;
            continue;
        };
        let Some(f) = fields(elems, "a ZoneEdge", here, zone, errors) else {
            ok = false;
            continue;
        };
        let mut e = EdgeFile::open("", "");
        let (mut has_from, mut has_to) = (false, false);
        for (k, v) in f {
            let vat = At { pos: v.at, ..at };
            has_from |= k == "From";
            has_to |= k == "To";
            let r: Result<(), String> = (|| {
                match k {
                    "From" => e.from_node = consts.string(v)?,
                    "To" => e.to_node = consts.string(v)?,
                    "Lock" => {
                        let s = consts.string(v)?;
                        // BuildGraph reads an empty lock as none.
                        e.lock_kind = if s.is_empty() {
                            LockKind::None
                        } else {
                            lock_kind(&s).ok_or_else(|| {
                                format!("lock kind {s:?}{} is not one of zonegraph's", named(v))
                            })?
                        };
                    }
                    "LockData" => e.lock_data = lock_data(v, consts)?,
                    "Hint" => e.hint = consts.string(v)?,
                    "Weight" => {
                        let w = consts.int(v)?;
                        let w = i32::try_from(w).map_err(|_| format!("{w} is out of range"))?;
                        // BuildGraph reads a zero weight as 1.
                        e.weight = if w == 0 { 1 } else { w };
                    }
                    other => {
                        return Err(format!("ZoneEdge has no field {other} the importer reads"));
                    }
                }
                Ok(())
            })();
            if let Err(msg) = r {
                errors.push(vat, zone, format!("cannot read {k} of a passage: {msg}"));
                ok = false;
            }
        }
        if !(has_from && has_to) {
            errors.push(here, zone, "a ZoneEdge needs both From and To".into());
            ok = false;
        }
        out.push(e);
    }
    ok.then_some(out)
}

fn lock_data(e: &Expr, consts: &Consts) -> Result<BTreeMap<String, serde_json::Value>, String> {
    if matches!(&e.kind, ExprKind::Name(n) if n == "nil") {
        return Ok(BTreeMap::new());
    }
    let Some(elems) = composite(e, "map[string]any", false)
        .or_else(|| composite(e, "map[string]interface{}", false))
    else {
        return Err(format!(
            "{} is not a map[string]any{{…}} literal",
            quoted(e)
        ));
    };
    let mut out = BTreeMap::new();
    for el in elems {
        let Some(key) = el.key.as_ref() else {
            return Err("a lock data element has no key".into());
        };
        let key = consts.string(key)?;
        let value = consts
            .json(&el.value)
            .map_err(|m| format!("{key:?}: {m}"))?;
        if out.insert(key.clone(), value).is_some() {
            return Err(format!("key {key:?} is given twice"));
        }
    }
    Ok(out)
}

fn linear(
    elems: &[Elem],
    at: At,
    zone: Option<&str>,
    consts: &Consts,
    errors: &mut Errors,
) -> Option<Vec<NodeKind>> {
    let mut out = Vec::new();
    let mut ok = true;
    for el in elems {
        let r = match (&el.key, consts.string(&el.value)) {
            (Some(_), _) => Err("an indexed element is not read".to_string()),
            (None, Ok(s)) => {
                node_kind(&s).ok_or_else(|| format!("room kind {s:?} is not one of zonegraph's"))
            }
            (None, Err(m)) => Err(m),
        };
        match r {
            Ok(k) => out.push(k),
            Err(msg) => {
                errors.push(
                    At {
                        pos: el.value.at,
                        ..at
                    },
                    zone,
                    format!("cannot read a room kind of BuildLinearGraph: {msg}"),
                );
                ok = false;
            }
        }
    }
    ok.then_some(out)
}

/// `Zone: {{ID: …, Name: …, Order: …}, …}`: a zone's regions in order.
fn region_list<'a>(
    key: &Expr,
    list: &[Elem],
    at: At<'a>,
    consts: &Consts,
    regions: &mut BTreeMap<String, Vec<(At<'a>, RegionFile)>>,
    errors: &mut Errors,
) {
    let zone = match consts.string(key) {
        Ok(z) => z,
        Err(msg) => {
            errors.push(
                At { pos: key.at, ..at },
                None,
                format!("cannot read which zone these regions belong to: {msg}"),
            );
            return;
        }
    };
    let z = Some(zone.as_str());
    let mut read = Vec::new();
    for el in list {
        let here = At {
            pos: el.value.at,
            ..at
        };
        let Some(elems) = composite(&el.value, "ExpeditionRegion", true) else {
            errors.push(
                here,
                z,
                format!(
                    "cannot read {} as an ExpeditionRegion{{…}}",
                    quoted(&el.value)
                ),
            );
            continue;
        };
        let Some(f) = fields(elems, "an ExpeditionRegion", here, z, errors) else {
            continue;
        };
        let get = |name: &str| f.iter().find(|(k, _)| *k == name).map(|(_, v)| *v);
        let r = (|| -> Result<RegionFile, String> {
            let id = get("ID").ok_or("it sets no ID")?;
            let name = get("Name").ok_or("it sets no Name")?;
            let order = get("Order").ok_or("it sets no Order")?;
            let order = consts.int(order)?;
            Ok(RegionFile {
                region_id: consts.string(id)?,
                name: consts.string(name)?,
                order: u32::try_from(order).map_err(|_| format!("Order {order} is negative"))?,
            })
        })();
        match r {
            Ok(r) => read.push((here, r)),
            Err(msg) => errors.push(
                here,
                z,
                format!("cannot read a region of zone {zone}: {msg}"),
            ),
        }
    }
    let list = regions.entry(zone.clone()).or_default();
    if let Some((first, _)) = list.first() {
        errors.push(
            at,
            z,
            format!(
                "the regions of zone {zone} are given twice (also at {}:{})",
                first.file, first.pos.line
            ),
        );
    }
    list.extend(read);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn legacy_zones_compile_as_gogobee_compiled_them() {
        use NodeKind::{Boss, Elite, Entry, Exploration as X, Trap};
        assert_eq!(legacy_kinds(0), vec![Entry, X, Trap, X, Elite, Boss]);
        assert_eq!(legacy_kinds(7), vec![Entry, X, Trap, X, X, Elite, Boss]);
        assert_eq!(legacy_kinds(8), vec![Entry, X, X, Trap, X, X, Elite, Boss]);
        assert_eq!(legacy_kinds(-3).len(), 6);
    }

    #[test]
    fn go_integer_literals() {
        for (text, v) in [
            ("12", 12),
            ("0x1F", 31),
            ("0o17", 15),
            ("017", 15),
            ("0b101", 5),
            ("1_000", 1000),
            ("0", 0),
        ] {
            assert_eq!(parse_int(text), Some(v), "{text}");
        }
        assert_eq!(parse_int("08"), None);
    }
}
