//! A zone's graph func, read: its local literals and funcs expanded, the builder it returns
//! and the zone it belongs to.

use std::collections::{BTreeMap, BTreeSet};

use super::super::postgame;
use super::super::syntax::{Elem, Expr, ExprKind, Func, Pos, Stmt};
use super::expr::{composite, quoted, shown};
use super::linear::linear;
use super::rooms::{edges, nodes};
use super::{At, Consts, Errors, Graph};

/// What the forms the importer reads are, for the diagnostics that meet another.
const GRAPH_FORMS: &str = "a graph func is read when it is made of `name := []ZoneNode{…}`, \
     `[]ZoneEdge{…}`, `[]ZoneNodeKind{…}`, `pgZoneSpec{…}`, literal or `func(…) T { return … }` \
     statements and `return BuildGraph(…)`, `return BuildLinearGraph(…)` or \
     `return buildPostgameZoneGraph(…)`";

/// How deep a local func may call another before giving up.
const MAX_EXPANSION: usize = 16;

/// A local func the graph func calls: `name := func(params) T { return value }`.
struct Template<'a> {
    params: &'a [String],
    value: &'a Expr,
}

/// The zone a graph func belongs to, and its graph when every statement of it was read.
pub(super) fn graph_func<'a>(
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
