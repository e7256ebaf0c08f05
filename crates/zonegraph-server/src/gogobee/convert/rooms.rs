//! The rooms and passages given to `BuildGraph`: each `ZoneNode` with its content, each
//! `ZoneEdge` with its lock.

use std::collections::BTreeMap;

use zonegraph_core::format::{ContentFile, EdgeFile, LockKind, NodeFile, NodeKind};

use super::super::syntax::{Elem, Expr, ExprKind};
use super::expr::{composite, fields, lock_kind, named, node_kind, quoted};
use super::{At, Consts, Errors};

pub(super) fn nodes(
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

pub(super) fn edges(
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

pub(super) fn lock_data(
    e: &Expr,
    consts: &Consts,
) -> Result<BTreeMap<String, serde_json::Value>, String> {
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
