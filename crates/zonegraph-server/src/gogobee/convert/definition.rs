//! A zone's `ZoneDefinition` func, read: its id, name, tier, levels and room count.

use super::super::syntax::{Expr, Func, Stmt};
use super::expr::{composite, fields};
use super::{At, Consts, Definition, Errors};

/// `func zoneX() ZoneDefinition { return ZoneDefinition{…} }`: the zone id and what the
/// format needs; other fields (faction, enemies, loot, …) are not part of a zone graph.
pub(super) fn definition<'a>(
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
